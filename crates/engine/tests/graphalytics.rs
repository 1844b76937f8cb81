//! LDBC Graphalytics conformance: the six Graphalytics algorithms on the
//! example graphs in `../shared/conformance/graphalytics`, imported through
//! the real `.properties` importer, compared with the reference outputs by
//! the specification's rules (BFS and CDLP exact, WCC by equivalence, PR,
//! LCC and SSSP within relative 1e-4). Skips with a message when the
//! directory is absent.
use std::collections::HashMap;
use std::path::PathBuf;

use plexus_engine::algo;
use plexus_graph::import::graphalytics::{import, Properties};
use plexus_graph::{Graph, ImportOptions, NoProgress};

fn dir() -> Option<PathBuf> {
    let d =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/graphalytics");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!(
            "skipping Graphalytics conformance: {} not found",
            d.display()
        );
        None
    }
}

fn load(name: &str) -> Option<(Graph, Properties, PathBuf)> {
    let d = dir()?;
    let (g, props) = import(
        &d.join(format!("{name}.properties")),
        &ImportOptions::default(),
        &NoProgress,
    )
    .unwrap_or_else(|e| panic!("importing {name}: {e}"));
    Some((g, props.expect("properties were given"), d))
}

/// Reads a reference output: external id → value text.
fn reference(d: &std::path::Path, name: &str, algo: &str) -> HashMap<i64, String> {
    let text = std::fs::read_to_string(d.join(format!("{name}-{algo}"))).expect("reference output");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split_whitespace();
            let id: i64 = it.next().and_then(|x| x.parse().ok()).expect("id");
            (id, it.next().expect("value").to_string())
        })
        .collect()
}

fn ext(g: &Graph, v: u32) -> i64 {
    match g.ids().external(v) {
        plexus_graph::ExternalId::Int(i) => i,
        other => panic!("unexpected id {other}"),
    }
}

fn parse_float(s: &str) -> f64 {
    match s {
        "Infinity" | "inf" | "+inf" => f64::INFINITY,
        _ => s.parse().expect("float"),
    }
}

fn close(a: f64, b: f64) -> bool {
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= 1e-4 * b.abs().max(a.abs()) || (a - b).abs() < 1e-12
}

fn source(g: &Graph, p: &Properties, key: &str) -> u32 {
    let s = p.get(key).unwrap_or_else(|| panic!("{key} missing"));
    g.ids().resolve(s).expect("source vertex exists")
}

fn check_all(name: &str) {
    let Some((g, p, d)) = load(name) else { return };
    assert_eq!(
        g.num_vertices().to_string(),
        p.get("meta.vertices").unwrap_or("?"),
        "{name}: vertex count"
    );
    assert_eq!(
        g.num_edges().to_string(),
        p.get("meta.edges").unwrap_or("?"),
        "{name}: edge count"
    );

    // BFS: exact, unreachable = i64::MAX.
    let cfg = algo::bfs::Config {
        source: source(&g, &p, "bfs.source-vertex"),
        ..Default::default()
    };
    let out = algo::bfs::run(&g, &cfg).expect("bfs");
    let want = reference(&d, name, "BFS");
    for v in 0..g.num_vertices() as u32 {
        let got = if out.depth[v as usize] == u32::MAX {
            i64::MAX
        } else {
            out.depth[v as usize] as i64
        };
        assert_eq!(
            got.to_string(),
            want[&ext(&g, v)],
            "{name} BFS vertex {}",
            ext(&g, v)
        );
    }

    // PR: fixed iterations, relative 1e-4.
    let cfg = algo::pagerank::Config {
        damping: p
            .get("pr.damping-factor")
            .and_then(|x| x.parse().ok())
            .expect("damping"),
        iterations: p.get("pr.num-iterations").and_then(|x| x.parse().ok()),
        ..Default::default()
    };
    let out = algo::pagerank::run(&g, &cfg).expect("pagerank");
    let want = reference(&d, name, "PR");
    for v in 0..g.num_vertices() as u32 {
        let w = parse_float(&want[&ext(&g, v)]);
        assert!(
            close(out.rank[v as usize], w),
            "{name} PR vertex {}: got {} want {w}",
            ext(&g, v),
            out.rank[v as usize]
        );
    }

    // WCC: equivalence of partitions.
    let out = algo::wcc::run(&g, &Default::default()).expect("wcc");
    let want = reference(&d, name, "WCC");
    let mut map_a = HashMap::new();
    let mut map_b = HashMap::new();
    for v in 0..g.num_vertices() as u32 {
        let (a, b) = (out.component[v as usize], want[&ext(&g, v)].clone());
        assert_eq!(
            *map_a.entry(a).or_insert(b.clone()),
            b,
            "{name} WCC vertex {}",
            ext(&g, v)
        );
        assert_eq!(
            *map_b.entry(b).or_insert(a),
            a,
            "{name} WCC vertex {}",
            ext(&g, v)
        );
    }

    // CDLP: exact labels (external ids).
    let cfg = algo::cdlp::Config {
        iterations: p
            .get("cdlp.max-iterations")
            .and_then(|x| x.parse().ok())
            .expect("cdlp iterations"),
    };
    let out = algo::cdlp::run(&g, &cfg).expect("cdlp");
    let want = reference(&d, name, "CDLP");
    for v in 0..g.num_vertices() as u32 {
        let label = ext(&g, g.from_natural(out.label[v as usize]));
        assert_eq!(
            label.to_string(),
            want[&ext(&g, v)],
            "{name} CDLP vertex {}",
            ext(&g, v)
        );
    }

    // LCC: Graphalytics semantics, relative 1e-4.
    let cfg = algo::lcc::Config {
        semantics: algo::lcc::Semantics::Graphalytics,
    };
    let out = algo::lcc::run(&g, &cfg).expect("lcc");
    let want = reference(&d, name, "LCC");
    for v in 0..g.num_vertices() as u32 {
        let w = parse_float(&want[&ext(&g, v)]);
        assert!(
            close(out.coefficient[v as usize], w),
            "{name} LCC vertex {}: got {} want {w}",
            ext(&g, v),
            out.coefficient[v as usize]
        );
    }

    // SSSP: weights from the edge file, relative 1e-4, unreachable = infinity.
    let cfg = algo::sssp::Config {
        source: source(&g, &p, "sssp.source-vertex"),
        delta: None,
    };
    let out = algo::sssp::run(&g, &cfg).expect("sssp");
    let want = reference(&d, name, "SSSP");
    for v in 0..g.num_vertices() as u32 {
        let w = parse_float(&want[&ext(&g, v)]);
        assert!(
            close(out.dist[v as usize], w),
            "{name} SSSP vertex {}: got {} want {w}",
            ext(&g, v),
            out.dist[v as usize]
        );
    }
}

#[test]
fn the_directed_example_matches_the_graphalytics_reference_outputs() {
    check_all("example-directed");
}

#[test]
fn the_undirected_example_matches_the_graphalytics_reference_outputs() {
    check_all("example-undirected");
}
