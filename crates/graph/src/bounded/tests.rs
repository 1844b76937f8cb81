//! The bounded build writes the same bytes as the in-memory one.
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::entry::{generate_tuned, import_tuned};
use super::{Tuning, MIN_BUDGET};
use crate::builder::{DuplicatePolicy, LoopPolicy};
use crate::generate::{GenOptions, Generator};
use crate::graph::VertexOrder;
use crate::import::{import_file, ImportOptions, NoProgress};
use crate::order::OrderChoice;
use crate::store::write_graph_file;

const BIG: u64 = 1 << 30;

/// The store files of `text` imported in memory and bounded, as bytes.
fn both(
    text: &str,
    name: &str,
    opts: &ImportOptions,
    budget: u64,
    tuning: Tuning,
) -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(name);
    std::fs::write(&input, text).unwrap();
    let mem = dir.path().join("mem.plx");
    let g = import_file(&input, opts, &NoProgress).unwrap();
    write_graph_file(&mem, &g).unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let out = dir.path().join("bounded.plx");
    let built = import_tuned(&input, opts, budget, &scratch, &out, &NoProgress, tuning).unwrap();
    assert_eq!(built.vertices, g.num_vertices() as u64);
    assert_eq!(built.edges, g.num_edges());
    assert_eq!(built.degrees.max, g.degree_summary().max);
    assert_eq!(
        std::fs::read_dir(&scratch).unwrap().count(),
        0,
        "scratch files are removed"
    );
    (std::fs::read(&mem).unwrap(), std::fs::read(&out).unwrap())
}

/// The error of a bounded import of `input` into `dir` (which must fail).
fn refusal(input: &Path, opts: &ImportOptions, budget: u64, dir: &Path) -> String {
    let out = dir.join("o.plx");
    let e = import_tuned(
        input,
        opts,
        budget,
        dir,
        &out,
        &NoProgress,
        Tuning::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(!out.exists(), "no output after: {e}");
    e
}

fn same(a: &[u8], b: &[u8]) {
    assert_eq!(a.len(), b.len(), "file lengths");
    if let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) {
        panic!("the files differ first at byte {i} of {}", a.len());
    }
}

fn opts(directed: bool, weighted: bool) -> ImportOptions {
    ImportOptions {
        directed: Some(directed),
        weighted,
        ..Default::default()
    }
}

#[test]
fn a_small_graph_is_byte_identical_both_ways() {
    let text = "# comment\n5 7 2.5\n7 5 1\n5 5 3\n10 7 -1\n5 7 0.5\n12 10 4\n";
    for directed in [true, false] {
        for order in [VertexOrder::None, VertexOrder::Degree] {
            let mut o = opts(directed, true);
            o.order = OrderChoice::Exactly(order);
            let tuning = Tuning {
                run_arcs: Some(2),
                fan_in: Some(2),
            };
            let (a, b) = both(text, "g.el", &o, BIG, tuning);
            same(&a, &b);
        }
    }
}

#[test]
fn ids_zero_to_n_store_no_id_sections_either_way() {
    // Every id of 0..8 occurs: the identity map, unless degree order
    // renames the vertices (then integer ids).
    let text = "0 1\n1 2\n2 3\n3 0\n4 5\n5 6\n6 7\n7 4\n0 7\n2 2\n";
    for order in [VertexOrder::None, VertexOrder::Degree] {
        for directed in [true, false] {
            let mut o = opts(directed, false);
            o.order = OrderChoice::Exactly(order);
            let tuning = Tuning {
                run_arcs: Some(3),
                fan_in: Some(2),
            };
            let (a, b) = both(text, "g.el", &o, BIG, tuning);
            same(&a, &b);
        }
    }
}

#[test]
fn a_budget_too_small_is_refused_naming_the_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.el");
    std::fs::write(&input, "0 1\n1 4000000\n").unwrap();
    let d = dir.path();
    let run = |budget, o: &ImportOptions| refusal(&input, o, budget, d);
    let e = run(1 << 20, &opts(true, false));
    assert!(e.contains("at least 80 MiB"), "{e}");
    // A table of 4 million ids does not fit 81 MiB.
    let e = run(MIN_BUDGET + (1 << 20), &opts(true, false));
    assert!(
        e.contains("ids up to 4000000") && e.contains("it needs at least 96 MiB"),
        "{e}"
    );
    let mut rcm = opts(true, false);
    rcm.order = OrderChoice::Exactly(VertexOrder::Rcm);
    assert!(run(BIG, &rcm).contains("--order rcm"));
    std::fs::write(&input, "0 1\n-3 1\n").unwrap();
    assert!(run(BIG, &opts(true, false)).contains("vertex id -3"));
    // A Matrix Market size line whose vertices cannot fit is refused
    // before any entry is read; a wrong entry count after.
    let mtx = dir.path().join("g");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate pattern general\n9000000 9000000 1\n1 2\n",
    )
    .unwrap();
    let mtx_err = |budget| refusal(&mtx, &opts(true, false), budget, d);
    let e = mtx_err(MIN_BUDGET + (1 << 20));
    assert!(e.contains("declares 9000000 vertices"), "{e}");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n",
    )
    .unwrap();
    let e = mtx_err(BIG);
    assert!(e.contains("declares 2 entries but the file has 1"), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".scratch"))
        .collect();
    assert!(left.is_empty(), "scratch left: {left:?}");
}

#[test]
fn matrix_market_files_are_byte_identical_both_ways() {
    let cases = [
        // Isolated vertices 4 and 6, a duplicate, a loop.
        "%%MatrixMarket matrix coordinate pattern general\n% c\n6 5 5\n1 2\n2 3\n3 1\n5 5\n1 2\n",
        "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n2 1 0.5\n3 2 2.25\n4 1 7\n",
        "%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 3 4\n3 2 9\n",
    ];
    for (i, text) in cases.iter().enumerate() {
        for directed in [None, Some(true), Some(false)] {
            let o = ImportOptions {
                directed,
                ..Default::default()
            };
            for name in ["g.mtx", "g"] {
                let (a, b) = both(
                    text,
                    name,
                    &o,
                    BIG,
                    Tuning {
                        run_arcs: Some(2),
                        fan_in: Some(2),
                    },
                );
                assert_eq!(a.len(), b.len(), "case {i} directed {directed:?} {name}");
                same(&a, &b);
            }
        }
    }
}

#[test]
fn csv_tables_are_byte_identical_both_ways() {
    use crate::import::{CsvOptions, IdType};
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes.csv");
    std::fs::write(&nodes, "id,name\n3,x\n900,y\n17,z\n").unwrap();
    let weighted = CsvOptions {
        weight_col: Some("w".into()),
        ..Default::default()
    };
    let with_nodes = CsvOptions {
        nodes: Some(nodes.clone()),
        ..Default::default()
    };
    let by_name = CsvOptions {
        src_col: Some("to".into()),
        dst_col: Some("from".into()),
        delimiter: b';',
        ..Default::default()
    };
    let cases: Vec<(&str, CsvOptions)> = vec![
        ("src,dst\n1,2\n2,3\n3,1\n3,3\n1,2\n", CsvOptions::default()),
        ("1,2\n2,30\n30,1\n", CsvOptions::default()),
        ("src,dst,w\n1,2,0.5\n2,3,2\n5,1,1e3\n", weighted),
        ("a,b\n1,2\n2,3\n", with_nodes),
        ("from;to\n4;7\n7;9\n9;4\n", by_name),
    ];
    for (i, (text, csv)) in cases.into_iter().enumerate() {
        for directed in [true, false] {
            let o = ImportOptions {
                directed: Some(directed),
                csv: csv.clone(),
                ..Default::default()
            };
            let tuning = Tuning {
                run_arcs: Some(2),
                fan_in: Some(2),
            };
            let (a, b) = both(text, "g.csv", &o, BIG, tuning);
            assert_eq!(a.len(), b.len(), "case {i} directed {directed}");
            same(&a, &b);
        }
    }
    // String ids: named, auto-detected in the edges (the integers before
    // the first string become their decimal text, as in memory) or in the
    // node table.
    let strings = CsvOptions {
        ids: IdType::Str,
        ..Default::default()
    };
    let names = dir.path().join("names.csv");
    std::fs::write(&names, "id\n007\nzed\n12\n").unwrap();
    let auto_nodes = CsvOptions {
        nodes: Some(names.clone()),
        ..Default::default()
    };
    let string_nodes = CsvOptions {
        nodes: Some(names),
        ids: IdType::Str,
        ..Default::default()
    };
    let cases: Vec<(&str, CsvOptions)> = vec![
        (
            "src,dst\nbob,amy\namy,cy\ncy,bob\n\u{e9}t\u{e9},amy\n",
            strings.clone(),
        ),
        ("src,dst\n+5,007\n5,x\n007,5\ny,7\n", CsvOptions::default()),
        ("src,dst\n+5,007\n5,x\n007,5\n", strings),
        ("src,dst\n1,2\n012,3\n", auto_nodes),
        ("src,dst\n1,2\n012,3\n", string_nodes),
    ];
    for (i, (text, csv)) in cases.into_iter().enumerate() {
        let o = ImportOptions {
            csv,
            ..Default::default()
        };
        let tuning = Tuning {
            run_arcs: Some(3),
            fan_in: Some(2),
        };
        let (a, b) = both(text, "s.csv", &o, BIG, tuning);
        assert_eq!(a.len(), b.len(), "string case {i}");
        same(&a, &b);
    }
    // Names that outgrow the budget are refused, naming the line.
    let input = dir.path().join("big.csv");
    let mut text = String::from("src,dst\n");
    for i in 0..40_000 {
        text.push_str(&format!("{}{i},b\n", "n".repeat(500)));
    }
    std::fs::write(&input, text).unwrap();
    let e = refusal(
        &input,
        &ImportOptions::default(),
        MIN_BUDGET + (16 << 20),
        dir.path(),
    );
    assert!(e.contains("vertex names read so far take"), "{e}");
}

/// The bounded and in-memory stores of the Graphalytics graph `input`.
fn both_files(input: &Path, opts: &ImportOptions) -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let mem = dir.path().join("mem.plx");
    write_graph_file(&mem, &import_file(input, opts, &NoProgress).unwrap()).unwrap();
    let out = dir.path().join("bounded.plx");
    let tuning = Tuning {
        run_arcs: Some(3),
        fan_in: Some(2),
    };
    import_tuned(input, opts, BIG, dir.path(), &out, &NoProgress, tuning).unwrap();
    (std::fs::read(&mem).unwrap(), std::fs::read(&out).unwrap())
}

#[test]
fn graphalytics_pairs_are_byte_identical_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Isolated vertex 40, sparse ids, weights, undirected by its properties.
    std::fs::write(d.join("g.v"), "# ids\n10\n20\n30\n40\n7\n").unwrap();
    std::fs::write(d.join("g.e"), "10 20 0.5\n20 30 1.5\n7 10 2\n30 7 4\n").unwrap();
    std::fs::write(
        d.join("g.properties"),
        "graph.g.vertex-file = g.v\ngraph.g.edge-file = g.e\ngraph.g.directed = false\ngraph.g.edge-properties.names = weight\n",
    )
    .unwrap();
    for input in [d.join("g.properties"), d.join("g.e")] {
        for directed in [None, Some(true)] {
            let o = ImportOptions {
                directed,
                ..Default::default()
            };
            let (a, b) = both_files(&input, &o);
            same(&a, &b);
        }
    }
    let shared =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/graphalytics");
    if shared.is_dir() {
        for g in ["example-directed", "example-undirected"] {
            let (a, b) = both_files(
                &shared.join(format!("{g}.properties")),
                &ImportOptions::default(),
            );
            same(&a, &b);
        }
    } else {
        eprintln!(
            "skipping the shared Graphalytics examples: {} is absent",
            shared.display()
        );
    }
    // A vertex listed twice, an endpoint not listed.
    std::fs::write(d.join("h.v"), "1\n2\n1\n").unwrap();
    std::fs::write(d.join("h.e"), "1 2\n").unwrap();
    let e = refusal(&d.join("h.e"), &ImportOptions::default(), BIG, d);
    assert!(e.contains("lists a vertex id more than once"), "{e}");
    std::fs::write(d.join("h.v"), "1\n2\n").unwrap();
    std::fs::write(d.join("h.e"), "1 2\n2 3\n").unwrap();
    let e = refusal(&d.join("h.e"), &ImportOptions::default(), BIG, d);
    assert!(
        e.contains("vertex 3 appears in an edge but is not listed"),
        "{e}"
    );
}

fn graph_text(edges: &[(u32, u32, u8)], spread: u32, weighted: bool) -> String {
    let weights = [1.0, 2.5, -1.0, 0.0, 3.0, 1e9, 0.25];
    let mut s = String::new();
    for &(u, v, w) in edges {
        let (u, v) = (u * spread + 3, v * spread + 3);
        if weighted {
            s.push_str(&format!(
                "{u} {v} {}\n",
                weights[w as usize % weights.len()]
            ));
        } else {
            s.push_str(&format!("{u} {v}\n"));
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_graphs_are_byte_identical_both_ways(
        edges in proptest::collection::vec((0u32..30, 0u32..30, 0u8..7), 1..150),
        spread in 1u32..4,
        directed: bool,
        weighted: bool,
        drop_loops: bool,
        dups in 0usize..4,
        order in 0usize..3,
        run_arcs in 1usize..40,
        fan_in in 2usize..5,
    ) {
        let mut o = opts(directed, weighted);
        o.self_loops = if drop_loops { LoopPolicy::Drop } else { LoopPolicy::Keep };
        o.duplicates = [DuplicatePolicy::Keep, DuplicatePolicy::Drop, DuplicatePolicy::Min, DuplicatePolicy::Sum][dups];
        o.order = [OrderChoice::Auto, OrderChoice::Exactly(VertexOrder::None), OrderChoice::Exactly(VertexOrder::Degree)][order];
        let tuning = Tuning { run_arcs: Some(run_arcs), fan_in: Some(fan_in) };
        let (a, b) = both(&graph_text(&edges, spread, weighted), "g.el", &o, BIG, tuning);
        prop_assert_eq!(a.len(), b.len());
        prop_assert!(a == b, "files differ");
    }
}

/// The generator's graph, in memory and bounded.
fn generated_both(kind: Generator, o: &GenOptions, tuning: Tuning) -> (Vec<u8>, Vec<u8>, PathBuf) {
    let dir = tempfile::tempdir().unwrap().keep();
    let mem = dir.join("mem.plx");
    let g = crate::generate::generate(kind, o).unwrap();
    write_graph_file(&mem, &g).unwrap();
    drop(g);
    let out = dir.join("bounded.plx");
    generate_tuned(kind, o, BIG, &dir, &out, tuning).unwrap();
    (
        std::fs::read(&mem).unwrap(),
        std::fs::read(&out).unwrap(),
        dir,
    )
}

fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn small_generated_graphs_are_byte_identical_both_ways() {
    for (kind, weighted) in [
        (Generator::Kron, false),
        (Generator::Rmat, true),
        (Generator::Uniform, true),
        (
            Generator::Grid2d {
                width: 7,
                height: 5,
            },
            true,
        ),
    ] {
        let o = GenOptions {
            scale: 9,
            edge_factor: 4,
            max_weight: weighted.then_some(255),
            order: OrderChoice::Exactly(VertexOrder::Degree),
            ..Default::default()
        };
        let tuning = Tuning {
            run_arcs: Some(500),
            fan_in: Some(3),
        };
        let (a, b, dir) = generated_both(kind, &o, tuning);
        same(&a, &b);
        remove(&dir);
    }
}

/// Large enough for tiles (n = 2^18, over 8 arcs a vertex) and for auto's
/// degree order; directed (tiles of the CSC) and undirected (of the CSR).
#[test]
fn graphs_with_tiles_are_byte_identical_both_ways() {
    for kind in [Generator::Kron, Generator::Rmat] {
        let o = GenOptions {
            scale: 18,
            edge_factor: 12,
            order: OrderChoice::Auto,
            ..Default::default()
        };
        let tuning = Tuning {
            run_arcs: Some(1 << 20),
            fan_in: Some(4),
        };
        let (a, b, dir) = generated_both(kind, &o, tuning);
        let h = crate::store::read_header(&dir.join("bounded.plx")).unwrap();
        assert!(
            h.sections
                .iter()
                .any(|s| s.kind == crate::store::SectionKind::TileTable),
            "{kind:?} has tiles"
        );
        assert_eq!(h.meta.order, VertexOrder::Degree, "{kind:?}");
        same(&a, &b);
        remove(&dir);
    }
}
