//! Every importer on the fixtures in `tests/fixtures` (one tiny graph in
//! each input format, CRLF and malformed variants): expected counts and
//! edges, import → export → import round trips, and the error each kind of
//! bad input gives (variant, file name, line number).
use std::io::Write;
use std::path::{Path, PathBuf};

use plexus_graph::export::{export, ExportFormat};
use plexus_graph::import::{CsvOptions, IdType};
use plexus_graph::{
    import_file, ExternalId, Format, Graph, GraphError, IdKind, ImportOptions, NoProgress,
};

// ---------------------------------------------------------------- helpers

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

type Arc = (ExternalId, ExternalId, Option<f64>);

fn sorted(mut v: Vec<Arc>) -> Vec<Arc> {
    v.sort_by(|a, b| {
        (&a.0, &a.1)
            .cmp(&(&b.0, &b.1))
            .then(a.2.unwrap_or(0.0).total_cmp(&b.2.unwrap_or(0.0)))
    });
    v
}

/// Every stored arc of `g` in external ids, sorted.
fn arcs(g: &Graph) -> Vec<Arc> {
    let ids = g.ids();
    sorted(
        g.arcs()
            .map(|(u, v, w)| (ids.external(u), ids.external(v), w))
            .collect(),
    )
}

/// Every in-arc (read from the CSC) of `g` as `(src, dst, w)` in external ids, sorted.
fn in_arcs(g: &Graph) -> Vec<Arc> {
    let ids = g.ids();
    let mut v = Vec::new();
    for d in 0..g.num_vertices() as u32 {
        let ws = g.in_weights(d);
        for (i, &s) in g.in_neighbors(d).iter().enumerate() {
            v.push((ids.external(s), ids.external(d), ws.map(|w| w[i])));
        }
    }
    sorted(v)
}

/// The external ids of all vertices, sorted.
fn vertices(g: &Graph) -> Vec<ExternalId> {
    let mut v: Vec<ExternalId> = (0..g.num_vertices() as u32)
        .map(|x| g.ids().external(x))
        .collect();
    v.sort();
    v
}

fn ints(xs: &[i64]) -> Vec<ExternalId> {
    xs.iter().map(|&x| ExternalId::Int(x)).collect()
}

fn strs(xs: &[&str]) -> Vec<ExternalId> {
    xs.iter().map(|x| ExternalId::Str(x.to_string())).collect()
}

/// The arcs a list of edges gives, directed or undirected (u ≠ v both ways,
/// a self-loop once), with or without the weights.
fn expected(edges: &[Edge], directed: bool, weighted: bool) -> Vec<Arc> {
    let mut v = Vec::new();
    for (s, d, w) in edges {
        let w = weighted.then_some(*w);
        if !directed && s != d {
            v.push((d.clone(), s.clone(), w));
        }
        v.push((s.clone(), d.clone(), w));
    }
    sorted(v)
}

type Edge = (ExternalId, ExternalId, f64);

fn i(x: i64) -> ExternalId {
    ExternalId::Int(x)
}

fn s(x: &str) -> ExternalId {
    ExternalId::Str(x.to_string())
}

/// The tiny fixture graph (see `tests/fixtures/README.md`).
fn tiny() -> Vec<Edge> {
    vec![
        (i(1), i(2), 0.5),
        (i(2), i(3), 2.0),
        (i(3), i(1), 1.25),
        (i(3), i(5), 3.0),
        (i(5), i(5), 4.0),
        (i(8), i(1), 1.0),
    ]
}

/// The tiny graph with string ids (1 2 3 5 8 → alice bob carol dave erin).
fn tiny_str() -> Vec<Edge> {
    vec![
        (s("alice"), s("bob"), 0.5),
        (s("bob"), s("carol"), 2.0),
        (s("carol"), s("alice"), 1.25),
        (s("carol"), s("dave"), 3.0),
        (s("dave"), s("dave"), 4.0),
        (s("erin"), s("alice"), 1.0),
    ]
}

/// The first five edges of the tiny graph: the Matrix Market fixtures.
fn tiny_mtx() -> Vec<Edge> {
    tiny().into_iter().take(5).collect()
}

fn import(name: &str, opts: &ImportOptions) -> Graph {
    let path = fixture(name);
    import_file(&path, opts, &NoProgress).unwrap_or_else(|e| panic!("importing {name}: {e}"))
}

fn import_err(path: &Path, opts: &ImportOptions) -> GraphError {
    match import_file(path, opts, &NoProgress) {
        Ok(g) => panic!(
            "importing {} should fail but gave {} vertices and {} edges",
            path.display(),
            g.num_vertices(),
            g.num_edges()
        ),
        Err(e) => e,
    }
}

fn fixture_err(name: &str, opts: &ImportOptions) -> GraphError {
    import_err(&fixture(name), opts)
}

fn directed() -> ImportOptions {
    ImportOptions {
        directed: Some(true),
        ..Default::default()
    }
}

fn undirected() -> ImportOptions {
    ImportOptions {
        directed: Some(false),
        ..Default::default()
    }
}

fn weighted() -> ImportOptions {
    ImportOptions {
        weighted: true,
        ..Default::default()
    }
}

fn csv(f: impl FnOnce(&mut CsvOptions)) -> ImportOptions {
    let mut o = ImportOptions::default();
    f(&mut o.csv);
    o
}

/// Asserts `e` is a `Parse` error at `line` of the file named `file`, and
/// that its message names both and contains `needle`.
#[track_caller]
fn assert_parse(e: &GraphError, file: &str, line: u64, needle: &str) {
    let msg = e.to_string();
    match e {
        GraphError::Parse { path, line: l, .. } => {
            assert!(
                path.ends_with(file),
                "error names {} instead of {file}: {msg}",
                path.display()
            );
            assert_eq!(*l, line, "wrong line in: {msg}");
        }
        other => panic!("expected a parse error in {file} at line {line}, got {other:?}"),
    }
    assert!(
        msg.contains(&format!("{file}:{line}: ")),
        "message does not say '{file}:{line}:': {msg}"
    );
    assert!(
        msg.contains(needle),
        "message does not contain '{needle}': {msg}"
    );
    assert!(
        !msg.contains('\n') && !msg.contains('\r'),
        "message is not one line: {msg:?}"
    );
}

/// Asserts `e` is a `BadInput` error about the file named `file`, and that
/// its message names it and contains `needle`.
#[track_caller]
fn assert_bad_input(e: &GraphError, file: &str, needle: &str) {
    let msg = e.to_string();
    match e {
        GraphError::BadInput { path, .. } => {
            assert!(
                path.ends_with(file),
                "error names {} instead of {file}: {msg}",
                path.display()
            )
        }
        other => panic!("expected a bad-input error about {file}, got {other:?}"),
    }
    assert!(msg.contains(file), "message does not name {file}: {msg}");
    assert!(
        msg.contains(needle),
        "message does not contain '{needle}': {msg}"
    );
    assert!(!msg.contains('\n'), "message is not one line: {msg:?}");
}

#[track_caller]
fn assert_tiny_directed(g: &Graph, weighted: bool) {
    assert!(g.is_directed());
    assert_eq!(g.is_weighted(), weighted);
    assert_eq!(g.num_edges(), 6);
    assert_eq!(g.num_arcs(), 6);
    assert_eq!(g.meta().self_loops, 1);
    assert_eq!(arcs(g), expected(&tiny(), true, weighted));
    assert_eq!(
        in_arcs(g),
        arcs(g),
        "the CSC holds the same arcs as the CSR"
    );
}

// ---------------------------------------------------------------- edge lists

#[test]
fn plain_edge_list_with_comments_and_blank_lines_imports_the_tiny_graph() {
    let g = import("tiny.el", &ImportOptions::default());
    assert_eq!(vertices(&g), ints(&[1, 2, 3, 5, 8]));
    assert_tiny_directed(&g, false);
    assert_eq!(
        g.ids().kind(),
        IdKind::Int,
        "ids 1 2 3 5 8 are not the identity"
    );
}

#[test]
fn wel_extension_makes_the_edge_list_weighted() {
    let g = import("tiny.wel", &ImportOptions::default());
    assert_tiny_directed(&g, true);
    assert!(!g.meta().integral_weights);
}

#[test]
fn weighted_option_reads_the_third_column_of_an_el_file() {
    let g = import("extra_columns.el", &weighted());
    let want: Vec<_> = tiny().into_iter().map(|(a, b, _)| (a, b, 1.0)).collect();
    assert_eq!(arcs(&g), expected(&want, true, true));
    assert!(g.meta().integral_weights);
}

#[test]
fn extra_columns_of_a_konect_file_are_ignored() {
    let g = import("extra_columns.el", &ImportOptions::default());
    assert_tiny_directed(&g, false);
}

#[test]
fn gzip_and_zstd_edge_lists_import_like_the_plain_file() {
    for name in ["tiny.el.gz", "tiny.el.zst"] {
        let g = import(name, &ImportOptions::default());
        assert_tiny_directed(&g, false);
    }
    let g = import("tiny.wel.gz", &ImportOptions::default());
    assert_tiny_directed(&g, true);
}

#[test]
fn crlf_edge_lists_import_like_lf_ones() {
    assert_tiny_directed(&import("tiny_crlf.el", &ImportOptions::default()), false);
    assert_tiny_directed(&import("tiny_crlf.wel", &ImportOptions::default()), true);
}

#[test]
fn undirected_edge_list_stores_both_arcs_and_the_loop_once() {
    let g = import("tiny.wel", &undirected());
    assert!(!g.is_directed());
    assert_eq!(g.num_edges(), 6);
    assert_eq!(g.num_arcs(), 11);
    assert_eq!(g.meta().self_loops, 1);
    assert_eq!(arcs(&g), expected(&tiny(), false, true));
    assert_eq!(in_arcs(&g), arcs(&g));
}

#[test]
fn negative_weights_are_accepted_and_stored() {
    let g = import("negative_weight.wel", &ImportOptions::default());
    assert_eq!(
        arcs(&g),
        expected(
            &[(i(1), i(2), -2.5), (i(2), i(3), -1.0), (i(3), i(1), 0.0)],
            true,
            true
        )
    );
}

#[test]
fn format_option_overrides_the_file_name() {
    // A CSV file read as a whitespace edge list fails on its header line...
    let e = import_err(
        &fixture("tiny_int.csv"),
        &ImportOptions {
            format: Some(Format::EdgeList),
            ..Default::default()
        },
    );
    assert_parse(&e, "tiny_int.csv", 1, "src,dst,weight");
    // ...and an edge list named .e is read as one when told so.
    let g = import(
        "tiny.e",
        &ImportOptions {
            format: Some(Format::EdgeList),
            weighted: true,
            ..Default::default()
        },
    );
    assert_tiny_directed(&g, true);
}

// ---------------------------------------------------------------- Matrix Market

#[test]
fn general_pattern_matrix_market_is_directed_with_isolated_vertices() {
    let g = import("tiny_general_pattern.mtx", &ImportOptions::default());
    assert!(g.is_directed());
    assert!(!g.is_weighted());
    assert_eq!(vertices(&g), ints(&[1, 2, 3, 4, 5, 6]));
    assert_eq!(g.num_edges(), 5);
    assert_eq!(arcs(&g), expected(&tiny_mtx(), true, false));
    assert_eq!(in_arcs(&g), arcs(&g));
}

#[test]
fn general_real_matrix_market_carries_weights() {
    let g = import("tiny_general_real.mtx", &ImportOptions::default());
    assert!(g.is_directed() && g.is_weighted());
    assert_eq!(g.num_vertices(), 6);
    assert_eq!(arcs(&g), expected(&tiny_mtx(), true, true));
}

#[test]
fn symmetric_matrix_market_is_undirected() {
    for (name, weighted) in [
        ("tiny_symmetric_pattern.mtx", false),
        ("tiny_symmetric_real.mtx", true),
    ] {
        let g = import(name, &ImportOptions::default());
        assert!(!g.is_directed(), "{name}");
        assert_eq!(g.is_weighted(), weighted, "{name}");
        assert_eq!(vertices(&g), ints(&[1, 2, 3, 4, 5, 6]), "{name}");
        assert_eq!(g.num_edges(), 5, "{name}");
        assert_eq!(g.num_arcs(), 9, "{name}");
        assert_eq!(g.meta().self_loops, 1, "{name}");
        assert_eq!(arcs(&g), expected(&tiny_mtx(), false, weighted), "{name}");
    }
}

#[test]
fn integer_matrix_market_weights_are_integral() {
    let g = import("tiny_symmetric_integer.mtx", &ImportOptions::default());
    assert!(g.is_weighted() && g.meta().integral_weights);
    let want = [
        (i(2), i(1), 1.0),
        (i(3), i(2), 2.0),
        (i(3), i(1), 3.0),
        (i(5), i(3), 4.0),
        (i(5), i(5), 5.0),
    ];
    assert_eq!(arcs(&g), expected(&want, false, true));
}

#[test]
fn directed_option_overrides_matrix_market_symmetric() {
    let g = import("tiny_symmetric_pattern.mtx", &directed());
    assert!(g.is_directed());
    assert_eq!(g.num_arcs(), 5);
    let want = [
        (i(2), i(1), 0.0),
        (i(3), i(2), 0.0),
        (i(3), i(1), 0.0),
        (i(5), i(3), 0.0),
        (i(5), i(5), 0.0),
    ];
    assert_eq!(arcs(&g), expected(&want, true, false));
}

#[test]
fn crlf_matrix_market_imports_like_lf() {
    let g = import("tiny_crlf.mtx", &ImportOptions::default());
    assert_eq!(g.num_vertices(), 6);
    assert_eq!(arcs(&g), expected(&tiny_mtx(), true, true));
}

// ---------------------------------------------------------------- CSV

#[test]
fn csv_with_integer_ids_uses_the_first_two_columns() {
    let g = import("tiny_int.csv", &ImportOptions::default());
    assert_eq!(vertices(&g), ints(&[1, 2, 3, 5, 8]));
    assert_tiny_directed(&g, false);
}

#[test]
fn csv_weight_column_by_name_or_index_makes_it_weighted() {
    for col in ["weight", "2"] {
        let g = import("tiny_int.csv", &csv(|c| c.weight_col = Some(col.into())));
        assert_tiny_directed(&g, true);
    }
}

#[test]
fn crlf_csv_imports_like_lf() {
    let g = import(
        "tiny_crlf.csv",
        &csv(|c| c.weight_col = Some("weight".into())),
    );
    assert_tiny_directed(&g, true);
}

#[test]
fn csv_node_table_adds_isolated_vertices() {
    let g = import(
        "tiny_int.csv",
        &csv(|c| c.nodes = Some(fixture("tiny_int_nodes.csv"))),
    );
    assert_eq!(vertices(&g), ints(&[1, 2, 3, 5, 8, 9]));
    assert_eq!(arcs(&g), expected(&tiny(), true, false));
}

#[test]
fn csv_with_another_delimiter_and_named_columns_imports() {
    let g = import(
        "tiny_semicolon.csv",
        &csv(|c| {
            c.delimiter = b';';
            c.src_col = Some("a".into());
            c.dst_col = Some("b".into());
        }),
    );
    assert_tiny_directed(&g, false);
}

#[test]
fn csv_with_string_ids_and_a_node_table_imports() {
    let g = import(
        "tiny_str.csv",
        &csv(|c| {
            c.ids = IdType::Str;
            c.src_col = Some("from".into());
            c.dst_col = Some("to".into());
            c.weight_col = Some("cost".into());
            c.nodes = Some(fixture("tiny_str_nodes.csv"));
            c.node_col = Some("id".into());
        }),
    );
    assert_eq!(g.ids().kind(), IdKind::Str);
    assert_eq!(
        vertices(&g),
        strs(&["alice", "bob", "carol", "dave", "erin", "zed"])
    );
    assert!(g.is_directed() && g.is_weighted());
    assert_eq!(g.meta().self_loops, 1);
    assert_eq!(arcs(&g), expected(&tiny_str(), true, true));
    assert_eq!(in_arcs(&g), arcs(&g));
    // Natural order of string ids is ascending by string.
    assert_eq!(g.ids().lookup_str("alice"), Some(0));
    assert_eq!(g.ids().lookup_str("zed"), Some(5));
}

#[test]
fn csv_string_ids_by_column_index_without_node_table_imports() {
    let g = import(
        "tiny_str.csv",
        &ImportOptions {
            directed: Some(false),
            csv: CsvOptions {
                ids: IdType::Str,
                src_col: Some("1".into()),
                dst_col: Some("2".into()),
                ..Default::default()
            },
            ..Default::default()
        },
    );
    assert_eq!(
        vertices(&g),
        strs(&["alice", "bob", "carol", "dave", "erin"])
    );
    assert_eq!(arcs(&g), expected(&tiny_str(), false, false));
}

// ---------------------------------------------------------------- Graphalytics

#[test]
fn graphalytics_properties_give_directedness_weights_and_isolated_vertices() {
    for name in [
        "tiny.properties",
        "tiny.e",
        "tiny_crlf.properties",
        "tiny_crlf.e",
    ] {
        let g = import(name, &ImportOptions::default());
        assert_eq!(vertices(&g), ints(&[1, 2, 3, 5, 8, 9]), "{name}");
        assert_tiny_directed(&g, true);
    }
}

#[test]
fn undirected_graphalytics_properties_give_an_undirected_graph() {
    let g = import("tinyu.properties", &ImportOptions::default());
    assert!(!g.is_directed() && !g.is_weighted());
    assert_eq!(vertices(&g), ints(&[1, 2, 3, 5, 8, 9]));
    assert_eq!(g.num_edges(), 6);
    assert_eq!(arcs(&g), expected(&tiny(), false, false));
}

#[test]
fn directed_option_overrides_graphalytics_properties() {
    let g = import("tinyu.e", &directed());
    assert!(g.is_directed());
    assert_eq!(arcs(&g), expected(&tiny(), true, false));
}

#[test]
fn graphalytics_properties_are_parsed_with_the_dataset_name() {
    let p =
        plexus_graph::import::graphalytics::read_properties(&fixture("tiny.properties")).unwrap();
    assert_eq!(p.name, "tiny");
    assert!(p.directed().unwrap() && p.weighted());
    assert_eq!(p.get("bfs.source-vertex"), Some("1"));
    assert_eq!(p.get("meta.vertices"), Some("6"));
}

// ---------------------------------------------------------------- round trips

/// Exports `g` in `format` to a temporary directory and imports the result
/// with the options a user would give; returns the re-imported graph.
fn round_trip(g: &Graph, format: ExportFormat) -> Graph {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(match format {
        ExportFormat::EdgeList => "out.el",
        ExportFormat::Csv => "out.csv",
        ExportFormat::Graphalytics => "out.e",
    });
    let files = export(g, &out, format).unwrap();
    for f in &files {
        assert!(f.is_file(), "{} was not written", f.display());
    }
    let mut written: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let want: Vec<&str> = match format {
        ExportFormat::EdgeList => vec!["out.el"],
        ExportFormat::Csv => vec!["out.csv"],
        ExportFormat::Graphalytics => vec!["out.e", "out.properties", "out.v"],
    };
    assert_eq!(
        written, want,
        "export leaves exactly its outputs (no temporary files)"
    );
    let opts = match format {
        ExportFormat::EdgeList => ImportOptions {
            directed: Some(g.is_directed()),
            weighted: g.is_weighted(),
            ..Default::default()
        },
        ExportFormat::Csv => ImportOptions {
            directed: Some(g.is_directed()),
            csv: CsvOptions {
                weight_col: g.is_weighted().then(|| "weight".to_string()),
                ids: if g.ids().kind() == IdKind::Str {
                    IdType::Str
                } else {
                    IdType::Int
                },
                ..Default::default()
            },
            ..Default::default()
        },
        // Directedness and weights come from the .properties file.
        ExportFormat::Graphalytics => ImportOptions::default(),
    };
    let path = if format == ExportFormat::Graphalytics {
        dir.path().join("out.properties")
    } else {
        out
    };
    import_file(&path, &opts, &NoProgress)
        .unwrap_or_else(|e| panic!("re-importing {format:?}: {e}"))
}

/// Vertices with at least one arc, sorted external ids.
fn non_isolated(g: &Graph) -> Vec<ExternalId> {
    let mut v: Vec<ExternalId> = (0..g.num_vertices() as u32)
        .filter(|&v| g.out_degree(v) + g.in_degree(v) > 0)
        .map(|v| g.ids().external(v))
        .collect();
    v.sort();
    v
}

#[track_caller]
fn assert_same_graph(a: &Graph, b: &Graph, keeps_isolated: bool, what: &str) {
    assert_eq!(a.is_directed(), b.is_directed(), "{what}: directedness");
    assert_eq!(a.is_weighted(), b.is_weighted(), "{what}: weights");
    assert_eq!(
        a.meta().self_loops,
        b.meta().self_loops,
        "{what}: self-loops"
    );
    assert_eq!(a.num_edges(), b.num_edges(), "{what}: edges");
    assert_eq!(arcs(a), arcs(b), "{what}: arcs");
    assert_eq!(in_arcs(a), in_arcs(b), "{what}: in-arcs");
    if keeps_isolated {
        assert_eq!(vertices(a), vertices(b), "{what}: vertices");
    } else {
        assert_eq!(non_isolated(a), vertices(b), "{what}: vertices");
    }
}

fn round_trip_sources() -> Vec<(&'static str, Graph)> {
    vec![
        (
            "directed weighted edge list",
            import("tiny.wel", &ImportOptions::default()),
        ),
        (
            "undirected weighted edge list",
            import("tiny.wel", &undirected()),
        ),
        (
            "directed graphalytics with an isolated vertex",
            import("tiny.properties", &ImportOptions::default()),
        ),
        (
            "undirected graphalytics with an isolated vertex",
            import("tinyu.properties", &ImportOptions::default()),
        ),
        (
            "symmetric real matrix market",
            import("tiny_symmetric_real.mtx", &ImportOptions::default()),
        ),
        (
            "negative weights",
            import("negative_weight.wel", &ImportOptions::default()),
        ),
        ("multigraph with kept duplicates", {
            let (_dir, p) = write_temp("multi.wel", "1 2 1.5\n1 2 0.25\n2 1 7\n3 3 1\n3 3 2\n");
            import_file(&p, &undirected(), &NoProgress).unwrap()
        }),
        (
            "reordered graph",
            import(
                "tiny.wel",
                &ImportOptions {
                    order: plexus_graph::VertexOrder::Degree.into(),
                    ..Default::default()
                },
            ),
        ),
    ]
}

/// Writes `text` to a file named `name` in a fresh temporary directory
/// (removed when the returned guard drops).
fn write_temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

#[test]
fn edge_list_round_trip_keeps_arcs_weights_and_directedness() {
    for (what, g) in round_trip_sources() {
        let h = round_trip(&g, ExportFormat::EdgeList);
        assert_same_graph(&g, &h, false, what);
    }
}

#[test]
fn csv_round_trip_keeps_arcs_weights_and_directedness() {
    for (what, g) in round_trip_sources() {
        let h = round_trip(&g, ExportFormat::Csv);
        assert_same_graph(&g, &h, false, what);
    }
}

#[test]
fn csv_round_trip_keeps_string_ids() {
    let g = import(
        "tiny_str.csv",
        &csv(|c| {
            c.ids = IdType::Str;
            c.src_col = Some("from".into());
            c.dst_col = Some("to".into());
            c.weight_col = Some("cost".into());
        }),
    );
    let h = round_trip(&g, ExportFormat::Csv);
    assert_eq!(h.ids().kind(), IdKind::Str);
    assert_same_graph(&g, &h, false, "string ids");
}

#[test]
fn csv_quoted_string_ids_import_with_commas_and_quotes() {
    let g = import("quoted_ids.csv", &csv(|c| c.ids = IdType::Str));
    assert_eq!(vertices(&g), strs(&["bob", "o\"neil", "smith, john"]));
    let want = [
        (s("smith, john"), s("bob"), 0.0),
        (s("bob"), s("o\"neil"), 0.0),
    ];
    assert_eq!(arcs(&g), expected(&want, true, false));
}

#[test]
fn csv_round_trip_keeps_string_ids_with_commas_and_quotes() {
    let g = import("quoted_ids.csv", &csv(|c| c.ids = IdType::Str));
    let h = round_trip(&g, ExportFormat::Csv);
    assert_same_graph(&g, &h, false, "quoted string ids");
}

#[test]
fn graphalytics_round_trip_keeps_isolated_vertices() {
    for (what, g) in round_trip_sources() {
        let h = round_trip(&g, ExportFormat::Graphalytics);
        assert_same_graph(&g, &h, true, what);
    }
}

#[test]
fn negative_and_64_bit_ids_import_and_round_trip() {
    let (_dir, p) = write_temp("wide.wel", "-5 3 1\n3 10000000000 2\n-5 -5 3\n");
    let g = import_file(&p, &ImportOptions::default(), &NoProgress).unwrap();
    assert_eq!(vertices(&g), ints(&[-5, 3, 10_000_000_000]));
    let want = [
        (i(-5), i(3), 1.0),
        (i(3), i(10_000_000_000), 2.0),
        (i(-5), i(-5), 3.0),
    ];
    assert_eq!(arcs(&g), expected(&want, true, true));
    assert_eq!(g.ids().lookup_int(10_000_000_000), Some(2));
    for format in [
        ExportFormat::EdgeList,
        ExportFormat::Csv,
        ExportFormat::Graphalytics,
    ] {
        let h = round_trip(&g, format);
        assert_same_graph(&g, &h, true, &format!("{format:?}"));
    }
}

#[test]
fn sparse_large_ids_keep_their_values() {
    // Ids that fit 32 bits but are too sparse for a dense lookup table.
    let (_dir, p) = write_temp("sparse.el", "4000000000 3\n3 7\n7 4000000000\n");
    let g = import_file(&p, &undirected(), &NoProgress).unwrap();
    assert_eq!(vertices(&g), ints(&[3, 7, 4_000_000_000]));
    let want = [
        (i(4_000_000_000), i(3), 0.0),
        (i(3), i(7), 0.0),
        (i(7), i(4_000_000_000), 0.0),
    ];
    assert_eq!(arcs(&g), expected(&want, false, false));
}

#[test]
fn graphalytics_export_of_string_ids_fails_or_round_trips() {
    let g = import(
        "tiny_str.csv",
        &csv(|c| {
            c.ids = IdType::Str;
            c.src_col = Some("from".into());
            c.dst_col = Some("to".into());
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.e");
    if export(&g, &out, ExportFormat::Graphalytics).is_ok() {
        let back = import_file(
            &dir.path().join("s.properties"),
            &ImportOptions::default(),
            &NoProgress,
        );
        assert!(
            back.is_ok(),
            "exported files do not import: {}",
            back.unwrap_err()
        );
    }
}

#[test]
fn edge_list_export_writes_each_undirected_edge_once() {
    let g = import("tiny.el", &undirected());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("u.el");
    export(&g, &out, ExportFormat::EdgeList).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 6, "{text}");
}

#[test]
fn export_to_a_missing_directory_fails_with_the_path_and_leaves_nothing() {
    let g = import("tiny.el", &ImportOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no-such-dir").join("g.el");
    let e = export(&g, &out, ExportFormat::EdgeList).unwrap_err();
    assert!(matches!(e, GraphError::BadInput { .. }), "{e:?}");
    assert!(e.to_string().contains("g.el"), "{e}");
    assert!(e.to_string().contains("does not exist"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn export_onto_a_directory_fails_and_removes_its_temporary_file() {
    let g = import("tiny.el", &ImportOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("taken");
    std::fs::create_dir(&out).unwrap();
    let e = export(&g, &out, ExportFormat::Csv).unwrap_err();
    assert!(e.to_string().contains("taken"), "{e}");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["taken".to_string()]);
}

// ---------------------------------------------------------------- bad input: edge lists

#[test]
fn line_with_one_token_is_a_parse_error_at_its_line() {
    let e = fixture_err("bad_one_token.el", &ImportOptions::default());
    assert_parse(&e, "bad_one_token.el", 3, "found only '3'");
}

#[test]
fn non_numeric_vertex_id_is_a_parse_error_at_its_line() {
    let e = fixture_err("bad_non_numeric.el", &ImportOptions::default());
    assert_parse(&e, "bad_non_numeric.el", 2, "'x'");
    let e = fixture_err("bad_float_id.el", &ImportOptions::default());
    assert_parse(&e, "bad_float_id.el", 3, "'1.5'");
}

#[test]
fn non_numeric_vertex_id_in_a_gzip_file_is_reported_at_its_line() {
    let e = fixture_err("bad_non_numeric.el.gz", &ImportOptions::default());
    assert_parse(&e, "bad_non_numeric.el.gz", 2, "'x'");
}

#[test]
fn crlf_file_errors_count_lines_and_do_not_show_the_carriage_return() {
    let e = fixture_err("bad_crlf.el", &ImportOptions::default());
    assert_parse(&e, "bad_crlf.el", 3, "found 'x'");
}

#[test]
fn weight_column_missing_on_some_lines_is_a_parse_error_at_the_first() {
    let e = fixture_err("bad_missing_weight.wel", &ImportOptions::default());
    assert_parse(&e, "bad_missing_weight.wel", 3, "missing weight");
    // The same file read with --weighted under another name.
    let (_dir, p) = write_temp("w.el", "1 2 0.5\n2 3\n");
    let e = import_err(&p, &weighted());
    assert_parse(&e, "w.el", 2, "missing weight");
}

#[test]
fn nan_and_infinite_weights_are_parse_errors() {
    let e = fixture_err("bad_nan_weight.wel", &ImportOptions::default());
    assert_parse(&e, "bad_nan_weight.wel", 2, "not a finite number");
    let e = fixture_err("bad_inf_weight.wel", &ImportOptions::default());
    assert_parse(&e, "bad_inf_weight.wel", 3, "not a finite number");
    let e = fixture_err("bad_neg_inf_weight.wel", &ImportOptions::default());
    assert_parse(&e, "bad_neg_inf_weight.wel", 2, "not a finite number");
}

#[test]
fn empty_edge_list_is_bad_input() {
    let e = fixture_err("empty.el", &ImportOptions::default());
    assert_bad_input(&e, "empty.el", "no edges");
    let e = fixture_err("comments_only.el", &ImportOptions::default());
    assert_bad_input(&e, "comments_only.el", "no edges");
}

#[test]
fn truncated_gzip_is_reported_with_the_file_name() {
    let e = fixture_err("truncated.el.gz", &ImportOptions::default());
    assert_bad_input(&e, "truncated.el.gz", "truncated or corrupt gzip");
}

#[test]
fn every_truncation_of_a_compressed_file_is_an_error_never_a_smaller_graph() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["tiny.el.gz", "tiny.el.zst"] {
        let full = std::fs::read(fixture(name)).unwrap();
        let cut = dir.path().join(format!("cut-{name}"));
        for k in 0..full.len() {
            std::fs::write(&cut, &full[..k]).unwrap();
            match import_file(&cut, &ImportOptions::default(), &NoProgress) {
                Ok(g) => panic!(
                    "{name} cut to {k} of {} bytes imported {} edges",
                    full.len(),
                    g.num_edges()
                ),
                Err(e) => assert!(
                    matches!(e, GraphError::BadInput { .. }),
                    "{name} cut to {k}: {e:?}"
                ),
            }
        }
    }
}

#[test]
fn compression_is_told_by_the_content_not_the_name() {
    // A .gz name on plain text is plain text.
    let (_dir, p) = write_temp("plain.el.gz", "1 2\n2 3\n");
    let g = import_file(&p, &ImportOptions::default(), &NoProgress).unwrap();
    assert_eq!(g.num_edges(), 2);
}

#[test]
fn missing_file_is_reported_with_its_name() {
    let e = fixture_err("no-such-file.el", &ImportOptions::default());
    assert_bad_input(&e, "no-such-file.el", "no such file");
    let e = import_err(&fixture(""), &ImportOptions::default());
    assert!(
        matches!(e, GraphError::BadInput { .. }),
        "a directory: {e:?}"
    );
    assert!(e.to_string().contains("directory"), "{e}");
}

#[test]
fn bad_token_deep_in_a_multi_block_file_is_reported_at_its_absolute_line() {
    // More than one 4 MiB parse block, plain and gzip-compressed.
    let lines = 700_000u64;
    let bad = 650_001u64;
    let mut text = Vec::with_capacity(12 << 20);
    for k in 1..=lines {
        if k == bad {
            text.extend_from_slice(b"17 oops\n");
        } else {
            writeln!(text, "{k} {}", k + 1).unwrap();
        }
    }
    assert!(text.len() > 8 << 20);
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("big.el");
    std::fs::write(&plain, &text).unwrap();
    let e = import_err(&plain, &ImportOptions::default());
    assert_parse(&e, "big.el", bad, "'oops'");
    let gz = dir.path().join("big.el.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&text).unwrap();
    enc.finish().unwrap();
    let e = import_err(&gz, &ImportOptions::default());
    assert_parse(&e, "big.el.gz", bad, "'oops'");
}

// ---------------------------------------------------------------- bad input: Matrix Market

#[test]
fn matrix_market_id_beyond_the_declared_size_is_a_parse_error() {
    let e = fixture_err("bad_id_beyond.mtx", &ImportOptions::default());
    assert_parse(
        &e,
        "bad_id_beyond.mtx",
        6,
        "outside the declared range 1..=4",
    );
    let e = fixture_err("bad_col_beyond.mtx", &ImportOptions::default());
    assert_parse(&e, "bad_col_beyond.mtx", 4, "vertex id 4");
    let e = fixture_err("bad_zero_index.mtx", &ImportOptions::default());
    assert_parse(&e, "bad_zero_index.mtx", 4, "vertex id 0");
}

#[test]
fn matrix_market_entry_count_mismatch_is_bad_input() {
    let e = fixture_err("bad_count.mtx", &ImportOptions::default());
    assert_bad_input(&e, "bad_count.mtx", "declares 4 entries but the file has 3");
}

#[test]
fn unsupported_matrix_market_header_is_a_parse_error_on_line_one() {
    let e = fixture_err("bad_field.mtx", &ImportOptions::default());
    assert_parse(&e, "bad_field.mtx", 1, "field 'complex' is not supported");
    let e = fixture_err("bad_array.mtx", &ImportOptions::default());
    assert_parse(&e, "bad_array.mtx", 1, "'array'");
    let e = fixture_err("bad_symmetry.mtx", &ImportOptions::default());
    assert_parse(&e, "bad_symmetry.mtx", 1, "symmetry 'hermitian'");
    let e = fixture_err(
        "tiny.wel",
        &ImportOptions {
            format: Some(Format::MatrixMarket),
            ..Default::default()
        },
    );
    assert_parse(&e, "tiny.wel", 1, "%%MatrixMarket");
}

#[test]
fn matrix_market_missing_value_or_bad_size_line_is_a_parse_error() {
    let e = fixture_err("bad_missing_value.mtx", &ImportOptions::default());
    assert_parse(&e, "bad_missing_value.mtx", 4, "missing weight");
    let e = fixture_err("bad_size_line.mtx", &ImportOptions::default());
    assert_parse(&e, "bad_size_line.mtx", 2, "rows cols entries");
}

#[test]
fn empty_matrix_market_file_is_bad_input() {
    let (_dir, p) = write_temp("empty.mtx", "");
    let e = import_err(&p, &ImportOptions::default());
    assert_bad_input(&e, "empty.mtx", "empty file");
}

// ---------------------------------------------------------------- bad input: CSV

#[test]
fn csv_missing_column_is_bad_input_naming_the_column() {
    let e = fixture_err("bad_one_column.csv", &ImportOptions::default());
    assert_bad_input(&e, "bad_one_column.csv", "no column 1 for the destination");
    let e = fixture_err("tiny_int.csv", &csv(|c| c.weight_col = Some("cost".into())));
    assert_bad_input(&e, "tiny_int.csv", "no column 'cost' for the weight");
}

#[test]
fn csv_short_row_is_a_parse_error_at_its_line() {
    let e = fixture_err("bad_short_row.csv", &ImportOptions::default());
    assert_parse(&e, "bad_short_row.csv", 3, "missing destination");
}

#[test]
fn csv_non_numeric_id_is_a_parse_error_at_its_line_when_ids_are_int() {
    let e = fixture_err("bad_non_numeric.csv", &csv(|c| c.ids = IdType::Int));
    assert_parse(&e, "bad_non_numeric.csv", 3, "'x'");
}

#[test]
fn csv_nan_or_missing_weight_is_a_parse_error_at_its_line() {
    let w = |c: &mut CsvOptions| c.weight_col = Some("weight".into());
    let e = fixture_err("bad_nan_weight.csv", &csv(w));
    assert_parse(&e, "bad_nan_weight.csv", 3, "not a finite number");
    let e = fixture_err("bad_missing_weight.csv", &csv(w));
    assert_parse(&e, "bad_missing_weight.csv", 3, "missing weight");
}

#[test]
fn empty_csv_is_bad_input() {
    let e = fixture_err("empty.csv", &ImportOptions::default());
    assert_bad_input(&e, "empty.csv", "empty file");
}

#[test]
fn missing_csv_node_table_is_bad_input_naming_it() {
    let e = fixture_err(
        "tiny_int.csv",
        &csv(|c| c.nodes = Some(fixture("no-such-nodes.csv"))),
    );
    assert!(
        matches!(&e, GraphError::BadInput { path, .. } if path.ends_with("no-such-nodes.csv")),
        "{e:?}"
    );
    assert!(e.to_string().contains("no-such-nodes.csv"), "{e}");
}

// ---------------------------------------------------------------- bad input: Graphalytics

#[test]
fn graphalytics_edge_endpoint_not_in_the_vertex_file_is_bad_input() {
    let e = fixture_err("bad_endpoint.e", &ImportOptions::default());
    assert_bad_input(&e, "bad_endpoint.e", "vertex 4");
    assert!(
        e.to_string().contains("bad_endpoint.v"),
        "names the vertex file: {e}"
    );
}

#[test]
fn graphalytics_without_a_vertex_file_is_bad_input() {
    let e = fixture_err("missing_v.e", &ImportOptions::default());
    assert_bad_input(&e, "missing_v.e", "missing_v.v");
}

#[test]
fn graphalytics_vertex_file_errors_name_the_vertex_file() {
    let e = fixture_err("bad_duplicate_vertex.e", &ImportOptions::default());
    assert_bad_input(&e, "bad_duplicate_vertex.v", "more than once");
    let e = fixture_err("bad_vertex_token.e", &ImportOptions::default());
    assert_parse(&e, "bad_vertex_token.v", 2, "'x'");
}

#[test]
fn properties_file_without_graph_keys_is_bad_input() {
    let e = fixture_err("bad_not_graphalytics.properties", &ImportOptions::default());
    assert_bad_input(
        &e,
        "bad_not_graphalytics.properties",
        "not a Graphalytics properties file",
    );
}
