//! The out-of-core direction rule: a superstep takes the direction that
//! moves fewer bytes (`plexus_ooc::cost`), and the result stays the
//! in-memory executor's.
use plexus_engine::algo::{bfs, wcc};
use plexus_graph::{BuildOptions, DataDir, Graph, Provenance};
use plexus_ooc::{IoMode, OocExecutor, OocOptions, StepStats};
use rand::{Rng, SeedableRng};

/// A graph where Ligra's rule pulls at BFS level 2 but a pull reads far
/// more pages than a push: source 0 reaches 200 vertices (1..=200), each
/// with 25 edges into a middle layer (201..=400), while 3,000 unvisited
/// vertices (1000..3999) hold long lists among themselves (reached later
/// through one edge 201–1000).
fn lopsided() -> Graph {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(49);
    let mut edges = Vec::new();
    for v in 1..=200u32 {
        edges.push((0, v));
        for k in 0..25u32 {
            edges.push((v, 201 + (v * 7 + k * 13) % 200));
        }
    }
    edges.push((201, 1000));
    for _ in 0..40_000 {
        edges.push((rng.gen_range(1000..4000), rng.gen_range(1000..4000)));
    }
    Graph::from_edges(4000, &edges, &BuildOptions::undirected()).unwrap()
}

fn open(g: &Graph, tmp: &tempfile::TempDir, io: IoMode) -> OocExecutor {
    open_tuned(g, tmp, io, None)
}

/// `open` with buffer sizes `(read, log, interval bytes)` that override the
/// budget's plan.
fn open_tuned(
    g: &Graph,
    tmp: &tempfile::TempDir,
    io: IoMode,
    tuning: Option<(u64, u64, u64)>,
) -> OocExecutor {
    let dir = DataDir::new(tmp.path())
        .save("g", g, &Provenance::default(), false)
        .unwrap();
    let opts = OocOptions {
        memory: 64 << 20,
        io,
        tuning,
        ..Default::default()
    };
    OocExecutor::open(&dir.join("graph.plx"), &opts).unwrap()
}

/// Every step the rule decided took the cheaper direction it estimated
/// (a tie goes to Ligra's rule).
fn assert_cheaper_side(steps: &[StepStats]) {
    for (i, s) in steps.iter().enumerate() {
        let Some(e) = s.estimate else { continue };
        if e.pull_bytes == Some(e.push_bytes()) {
            continue;
        }
        let pull_cheaper = e.pull_bytes.is_some_and(|p| p < e.push_bytes());
        let want = if pull_cheaper { "dense" } else { "sparse" };
        assert_eq!(s.mode, want, "step {i}: {e:?}");
    }
}

#[test]
fn bfs_pushes_where_ligra_pulls_because_the_pull_would_read_more_pages() {
    let g = lopsided();
    let tmp = tempfile::tempdir().unwrap();
    let exec = open(&g, &tmp, IoMode::Active);
    let cfg = bfs::Config::default();
    let got = bfs::run_on(&exec, &cfg).unwrap();
    assert!(exec.take_fault().is_none());
    assert_eq!(got.depth, bfs::run(&g, &cfg).unwrap().depth);
    bfs::verify(&g, &cfg, &got).unwrap();
    let rule = exec.report();
    assert_cheaper_side(&rule.supersteps);
    // Level 2 (frontier 1..=200): Ligra's work exceeds |E| / 20 ...
    let work: u64 = (1..=200u32).map(|v| 1 + g.out_degree(v) as u64).sum();
    assert!(work > g.num_arcs() / 20, "{work} vs {}", g.num_arcs() / 20);
    // ... but the pull would read the long lists of the 3,000 unvisited
    // vertices, and the push reads a few pages.
    let s = &rule.supersteps[1];
    let e = s.estimate.unwrap();
    assert_eq!(s.mode, "sparse", "{e:?}");
    assert!(
        e.push_bytes() * 4 < e.pull_bytes.unwrap_or(u64::MAX),
        "{e:?}"
    );
    assert_eq!(
        s.bytes, e.frontier_bytes,
        "a push reads its frontier's pages"
    );
    // Ligra's rule (an explicit threshold) reads more, with the same depths.
    let tmp2 = tempfile::tempdir().unwrap();
    let ligra = open(&g, &tmp2, IoMode::Active);
    let cfg2 = bfs::Config {
        threshold: Some(g.num_arcs() / 20),
        ..Default::default()
    };
    let old = bfs::run_on(&ligra, &cfg2).unwrap();
    assert_eq!(old.depth, got.depth);
    let old = ligra.report();
    assert_eq!(old.supersteps[1].mode, "dense");
    assert!(old.supersteps.iter().all(|s| s.estimate.is_none()));
    assert!(
        rule.bytes_read * 2 < old.bytes_read,
        "rule {} bytes, Ligra {}",
        rule.bytes_read,
        old.bytes_read
    );
}

#[test]
fn a_frontier_of_every_vertex_pulls_and_full_io_keeps_ligras_rule() {
    let g = lopsided();
    let tmp = tempfile::tempdir().unwrap();
    // Log buffers of one page per interval: a push's messages spill.
    let exec = open_tuned(&g, &tmp, IoMode::Active, Some((64 << 12, 4096, 64 << 12)));
    let got = wcc::run_on(&exec, &wcc::Config::default()).unwrap();
    assert_eq!(
        got.component,
        wcc::run(&g, &wcc::Config::default()).unwrap().component
    );
    let r = exec.report();
    assert_cheaper_side(&r.supersteps);
    // Every vertex starts active: a push reads every page and logs every
    // edge, a pull reads every page.
    let e = r.supersteps[0].estimate.unwrap();
    assert!(
        e.log_bytes > 0 && e.pull_bytes == Some(e.frontier_bytes),
        "{e:?}"
    );
    assert_eq!(r.supersteps[0].mode, "dense");
    let tmp2 = tempfile::tempdir().unwrap();
    let full = open(&g, &tmp2, IoMode::Full);
    let cfg = bfs::Config::default();
    assert_eq!(
        bfs::run_on(&full, &cfg).unwrap().depth,
        bfs::run(&g, &cfg).unwrap().depth
    );
    let r = full.report();
    assert!(r.supersteps.iter().all(|s| s.estimate.is_none()));
    assert_eq!(r.supersteps[1].mode, "dense");
}
