//! Drivers' per-vertex arrays in the executor's state files: the same
//! results as on the heap, no file left behind (a failure included), and a
//! budget plan that counts a resident window of them.
use plexus_engine::algo::{bfs, pagerank};
use plexus_engine::error::AlgoError;
use plexus_graph::{BuildOptions, DataDir, Graph, Provenance};
use plexus_ooc::{OocExecutor, OocOptions};
use rand::{Rng, SeedableRng};

fn graph(n: u32, m: usize, directed: bool) -> Graph {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(u64::from(n));
    let edges: Vec<(u32, u32)> = (0..m)
        .map(|_| (rng.gen_range(0..n), rng.gen_range(0..n)))
        .collect();
    let opts = match directed {
        true => BuildOptions::directed(),
        false => BuildOptions::undirected(),
    };
    Graph::from_edges(n as usize, &edges, &opts).unwrap()
}

fn open(dir: &std::path::Path, file_state: bool) -> OocExecutor {
    let opts = OocOptions {
        tuning: Some((4 * 4096, 256, 2048)),
        file_state,
        ..Default::default()
    };
    OocExecutor::open(&dir.join("graph.plx"), &opts).unwrap()
}

#[test]
fn file_backed_bfs_and_pagerank_equal_the_heap_runs_and_leave_no_file() {
    for directed in [false, true] {
        let g = graph(20_000, 80_000, directed);
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path())
            .save("g", &g, &Provenance::default(), false)
            .unwrap();
        let (files, heap) = (open(&dir, true), open(&dir, false));
        let cfg = bfs::Config {
            source: 3,
            ..Default::default()
        };
        let a = bfs::run_on(&files, &cfg).unwrap();
        let b = bfs::run_on(&heap, &cfg).unwrap();
        assert_eq!(a.depth, b.depth);
        assert_eq!(a.depth, bfs::run(&g, &cfg).unwrap().depth);
        bfs::verify(&g, &cfg, &a).unwrap();
        let pr = pagerank::Config {
            iterations: Some(8),
            ..Default::default()
        };
        let x = pagerank::run_on(&files, &pr).unwrap();
        let y = pagerank::run_on(&heap, &pr).unwrap();
        // Same executor, same order of sums: bit for bit.
        assert_eq!(x.rank, y.rank);
        assert!(files.take_fault().is_none() && heap.take_fault().is_none());
        // Two arrays each for BFS and PageRank, in files; none for the heap run.
        let n = g.num_vertices() as u64;
        assert!(files.report().state_file_bytes >= 2 * 4 * n + 2 * 8 * n);
        assert_eq!(heap.report().state_file_bytes, 0);
        // The files were unlinked when made: the log directory holds none.
        let left: Vec<_> = std::fs::read_dir(files.log_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("state-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

#[test]
fn a_state_file_that_cannot_be_made_fails_the_run_and_leaves_nothing() {
    let g = graph(5_000, 20_000, false);
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("g", &g, &Provenance::default(), false)
        .unwrap();
    let exec = open(&dir, true);
    // The directory the state files go in disappears under the executor.
    std::fs::remove_dir_all(exec.log_dir()).unwrap();
    let err = bfs::run_on(&exec, &bfs::Config::default()).unwrap_err();
    assert!(matches!(err, AlgoError::StateStorage(_)), "{err}");
    assert!(err.to_string().contains("bfs-parent"), "{err}");
    drop(exec);
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".ooc-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_plan_counts_a_window_of_file_backed_state_and_refuses_below_its_minimum() {
    let n = 1u64 << 22;
    // BFS: 8 bytes a vertex on the heap and two windows, against 24 a
    // vertex when its arrays are on the heap.
    let backed = plexus_ooc::state_bytes("bfs", n, true);
    assert_eq!(backed, 8 * n + 2 * plexus_ooc::state::STATE_WINDOW);
    assert_eq!(plexus_ooc::state_bytes("bfs", n, false), 24 * n);
    assert!(
        plexus_ooc::state_bytes("pagerank", n, true)
            < plexus_ooc::state_bytes("pagerank", n, false)
    );
    // Small arrays count whole, not a window.
    assert_eq!(plexus_ooc::state_bytes("bfs", 1000, true), 8000 + 2 * 4000);
    // The refusal names a minimum that fits, with the state counted.
    let g = graph(50_000, 200_000, true);
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("g", &g, &Provenance::default(), false)
        .unwrap();
    let file = dir.join("graph.plx");
    let state = plexus_ooc::state_bytes("bfs", 50_000, true);
    let at = |memory| OocOptions {
        memory,
        state_bytes: state,
        ..Default::default()
    };
    let Err(plexus_ooc::OocError::BudgetTooSmall { minimum, .. }) =
        OocExecutor::open(&file, &at(1))
    else {
        panic!("a 1-byte budget was taken");
    };
    assert!(minimum > state, "{minimum} <= {state}");
    let exec = OocExecutor::open(&file, &at(minimum)).unwrap();
    assert!(exec.plan().total_bytes() <= minimum);
    assert!(OocExecutor::open(&file, &at(minimum - 4097)).is_err());
}
