//! The out-of-core executor held to the engine's conformance check: every
//! driver it runs gives the in-memory kernel's result by the algorithm's
//! rule (exact where exact; PageRank within 1e-12 per rank), on random
//! graphs stored to disk, with buffers so small that runs cross many
//! intervals, page batches, list pieces and log flushes.
use plexus_engine::conformance::check;
use plexus_engine::registry::Algorithm;
use plexus_graph::{BuildOptions, DataDir, DuplicatePolicy, Graph, Provenance, VertexOrder};
use plexus_ooc::{IoMode, OocExecutor, OocOptions};
use proptest::prelude::*;

/// The nine algorithms the executor runs.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::Bfs,
    Algorithm::Sssp,
    Algorithm::PageRank,
    Algorithm::Ppr,
    Algorithm::Wcc,
    Algorithm::Cdlp,
    Algorithm::Coloring,
    Algorithm::Mis,
    Algorithm::Kcore,
];

/// A random graph's recipe, printed on failure.
#[derive(Clone, Debug)]
struct Spec {
    n: usize,
    edges: Vec<(u32, u32, f64)>,
    directed: bool,
    weighted: bool,
    dedup: bool,
    reorder: bool,
}

impl Spec {
    fn build(&self) -> Graph {
        let opts = BuildOptions {
            directed: self.directed,
            duplicates: if self.dedup {
                DuplicatePolicy::Drop
            } else {
                DuplicatePolicy::Keep
            },
            order: if self.reorder {
                VertexOrder::Degree.into()
            } else {
                VertexOrder::None.into()
            },
            ..BuildOptions::default()
        };
        if self.weighted {
            Graph::from_weighted_edges(self.n, &self.edges, &opts).unwrap()
        } else {
            let pairs: Vec<(u32, u32)> = self.edges.iter().map(|e| (e.0, e.1)).collect();
            Graph::from_edges(self.n, &pairs, &opts).unwrap()
        }
    }
}

fn specs(max_n: usize, max_edges: usize) -> impl Strategy<Value = Spec> {
    (
        1..=max_n,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(move |(n, directed, weighted, dedup, reorder)| {
            let edge = (0..n as u32, 0..n as u32, 0u32..=20)
                .prop_map(|(u, v, w)| (u, v, f64::from(w) * 0.5));
            proptest::collection::vec(edge, 0..=max_edges).prop_map(move |edges| Spec {
                n,
                edges,
                directed,
                weighted,
                dedup,
                reorder,
            })
        })
}

/// Runs every algorithm's check on `g` stored, out of core, with tiny
/// buffers (`read` bytes of read buffer, `log` bytes per log buffer,
/// `interval` bytes of adjacency per interval).
fn check_all(g: &Graph, seed: u64, io: IoMode, tuning: (u64, u64, u64)) -> Result<(), String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = DataDir::new(tmp.path());
    let dir = data
        .save("g", g, &Provenance::default(), false)
        .map_err(|e| e.to_string())?;
    let opts = OocOptions {
        io,
        tuning: Some(tuning),
        ..Default::default()
    };
    let exec = OocExecutor::open(&dir.join("graph.plx"), &opts).map_err(|e| e.to_string())?;
    for a in ALGORITHMS {
        if a == Algorithm::Sssp && !g.is_weighted() {
            continue;
        }
        check(a, g, &exec, seed).map_err(|e| format!("{a:?} ({io:?}): {e}"))?;
        if let Some(e) = exec.take_fault() {
            return Err(format!("{a:?}: fault {e}"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn every_driver_agrees_with_its_kernel_out_of_core_on_small_graphs(
        spec in specs(40, 120),
        seed in any::<u64>(),
        full in any::<bool>(),
        read_pages in 2u64..6,
        log in 16u64..256,
        interval in 1u64..64,
    ) {
        let io = if full { IoMode::Full } else { IoMode::Active };
        let tuning = (read_pages * 4096, log, interval);
        check_all(&spec.build(), seed, io, tuning).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Graphs whose lists span many pages, so a step reads several runs and
    /// batches, and a hub's list is read in pieces.
    #[test]
    fn every_driver_agrees_with_its_kernel_out_of_core_on_graphs_of_many_pages(
        spec in specs(3000, 12_000),
        hub_degree in 0usize..5000,
        seed in any::<u64>(),
        full in any::<bool>(),
    ) {
        let mut spec = spec;
        let n = spec.n as u32;
        for i in 0..hub_degree {
            spec.edges.push((0, (i as u32 * 7 + 1) % n, (i % 9) as f64));
        }
        let io = if full { IoMode::Full } else { IoMode::Active };
        check_all(&spec.build(), seed, io, (3 * 4096, 512, 2048)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn active_io_reads_fewer_pages_than_full_io_for_a_bfs_on_a_long_path() {
    // A directed path of 20,000 vertices: each BFS level reads one page in
    // active mode, every page in full mode.
    let n = 20_000u32;
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    let g = Graph::from_edges(n as usize, &edges, &BuildOptions::directed()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("path", &g, &Provenance::default(), false)
        .unwrap();
    let mut pages = vec![];
    for io in [IoMode::Active, IoMode::Full] {
        let opts = OocOptions {
            io,
            tuning: Some((16 * 4096, 4096, 16 * 4096)),
            ..Default::default()
        };
        let exec = OocExecutor::open(&dir.join("graph.plx"), &opts).unwrap();
        let cfg = plexus_engine::algo::bfs::Config {
            source: 0,
            ..Default::default()
        };
        // The first 300 levels only, by a fixed hop count: nhop's driver.
        let out = plexus_engine::algo::nhop::run_on(
            &exec,
            &plexus_engine::algo::nhop::Config {
                source: cfg.source,
                hops: 300,
            },
        )
        .unwrap();
        assert_eq!(out.reached, 301);
        pages.push(exec.report().pages_read);
    }
    // 300 levels: about one page each in active mode (a level's list may
    // straddle two), every page of the out-lists in full mode.
    assert!(pages[0] <= 600, "active read {} pages", pages[0]);
    assert!(pages[1] >= 300 * 19, "full read {} pages", pages[1]);
}

#[test]
fn a_budget_too_small_is_refused_naming_the_minimum_that_fits() {
    let edges: Vec<(u32, u32)> = (0..5000u32).map(|v| (v, (v * 13 + 1) % 5000)).collect();
    let g = Graph::from_edges(5000, &edges, &BuildOptions::undirected()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("g", &g, &Provenance::default(), false)
        .unwrap();
    let file = dir.join("graph.plx");
    let opts = OocOptions {
        memory: 1000,
        ..Default::default()
    };
    let err = OocExecutor::open(&file, &opts).unwrap_err();
    let plexus_ooc::OocError::BudgetTooSmall { minimum, .. } = err else {
        panic!("expected a refusal, got {err}");
    };
    assert!(err_line(&OocExecutor::open(&file, &opts).unwrap_err()).contains("at least"));
    // The minimum fits, a byte less does not.
    let fits = OocOptions {
        memory: minimum,
        ..Default::default()
    };
    assert!(OocExecutor::open(&file, &fits).is_ok());
    let short = OocOptions {
        memory: minimum - 4097,
        ..Default::default()
    };
    assert!(OocExecutor::open(&file, &short).is_err());
    // No log directory is left behind by either.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".ooc-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn err_line(e: &plexus_ooc::OocError) -> String {
    e.to_string()
}

#[test]
fn a_pushed_bfs_spills_its_logs_and_reads_back_every_byte() {
    use plexus_engine::algo::bfs;
    use plexus_engine::edge_map::Direction;
    let n = 3000u32;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(49);
    let edges: Vec<(u32, u32)> = (0..12_000)
        .map(|_| (rng.gen_range(0..n), rng.gen_range(0..n)))
        .collect();
    let g = Graph::from_edges(n as usize, &edges, &BuildOptions::undirected()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("g", &g, &Provenance::default(), false)
        .unwrap();
    let opts = OocOptions {
        tuning: Some((2 * 4096, 64, 1024)),
        ..Default::default()
    };
    let exec = OocExecutor::open(&dir.join("graph.plx"), &opts).unwrap();
    let cfg = bfs::Config {
        source: 5,
        direction: Direction::Push,
        ..Default::default()
    };
    let got = bfs::run_on(&exec, &cfg).unwrap();
    assert_eq!(got.depth, bfs::run(&g, &cfg).unwrap().depth);
    bfs::verify(&g, &cfg, &got).unwrap();
    let r = exec.report();
    assert!(r.intervals > 10, "{} intervals", r.intervals);
    assert!(r.log_bytes_written > 0, "{r:?}");
    assert_eq!(r.log_bytes_written, r.log_bytes_read);
    assert!(r.messages_combined > 0);
    assert!(r.supersteps.iter().all(|s| s.mode == "sparse"));
    // The logs are emptied after each superstep and removed with the executor.
    let logs = exec.log_dir().to_path_buf();
    drop(exec);
    assert!(!logs.exists());
}

#[test]
fn buffered_reads_without_direct_io_give_the_same_results() {
    // What a file system that refuses O_DIRECT gets: buffered reads.
    let tmp = tempfile::tempdir().unwrap();
    let spec = Spec {
        n: 500,
        edges: (0..3000u32)
            .map(|i| ((i * 7) % 500, (i * 13 + 5) % 500, f64::from(i % 7)))
            .collect(),
        directed: true,
        weighted: true,
        dedup: false,
        reorder: true,
    };
    let g = spec.build();
    let dir = DataDir::new(tmp.path())
        .save("g", &g, &Provenance::default(), false)
        .unwrap();
    let opts = OocOptions {
        tuning: Some((2 * 4096, 128, 512)),
        direct: false,
        ..Default::default()
    };
    let exec = OocExecutor::open(&dir.join("graph.plx"), &opts).unwrap();
    assert!(!exec.graph().direct_io());
    for a in ALGORITHMS {
        check(a, &g, &exec, 7).unwrap();
    }
    assert!(exec.take_fault().is_none());
}
