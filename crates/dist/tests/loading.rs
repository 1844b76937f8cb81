//! Loading without the whole graph: the view gathered from the ranks'
//! shares equals the view read from the whole graph, the executor built
//! from slices or from part files gives the in-memory kernels' results on
//! 1–4 ranks, and ranks on different graphs or partitions refuse to start.
use std::time::Duration;

use plexus_dist::comm::{run_threads, Comm};
use plexus_dist::file;
use plexus_dist::part::{Cuts, Part};
use plexus_dist::view::DistView;
use plexus_dist::{DistError, DistExecutor};
use plexus_engine::algo::{bfs, pagerank, sssp, wcc};
use plexus_engine::conformance::check;
use plexus_engine::registry::{ExecutorKind, ALGORITHMS};
use plexus_graph::{BuildOptions, DuplicatePolicy, Graph, VertexId, VertexOrder};

const T: Duration = Duration::from_secs(60);

/// Random graphs of every kind (directed or not, weighted or not, with an
/// invalid weight or not, duplicates kept, degree-ordered or not).
fn graphs() -> Vec<Graph> {
    let mut x = 0x51_7cc1_b727_220au64;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    (0..16)
        .map(|i| {
            let n = 1 + next(400) as usize;
            let mut edges: Vec<(VertexId, VertexId, f64)> = (0..next(2000))
                .map(|_| {
                    let u = next(n as u64) as VertexId;
                    let v = next(n as u64) as VertexId;
                    (u, v, next(9) as f64 * 0.25)
                })
                .collect();
            if i % 8 == 1 && !edges.is_empty() {
                edges[0].2 = -1.0;
            }
            let opts = BuildOptions {
                directed: i % 2 == 0,
                duplicates: DuplicatePolicy::Keep,
                order: if i % 3 == 0 {
                    VertexOrder::Degree.into()
                } else {
                    VertexOrder::None.into()
                },
                ..BuildOptions::default()
            };
            if i % 4 < 2 {
                Graph::from_weighted_edges(n, &edges, &opts)
            } else {
                let pairs: Vec<_> = edges.iter().map(|e| (e.0, e.1)).collect();
                Graph::from_edges(n, &pairs, &opts)
            }
            .expect("valid test graph")
        })
        .collect()
}

#[test]
fn the_gathered_view_and_cuts_equal_those_read_from_the_whole_graph() {
    for (i, g) in graphs().iter().enumerate() {
        let whole = DistView::of(g).unwrap();
        for p in 1..=4 {
            let want = Cuts::balanced(&whole.total_degrees(), p);
            let got = run_threads(p, T, |c| DistView::gather(&c, g).unwrap()).unwrap();
            for (r, res) in got.into_iter().enumerate() {
                let (view, cuts) = res.unwrap();
                assert_eq!(view, whole, "graph {i}, {p} ranks, rank {r}");
                assert_eq!(cuts, want, "graph {i}, {p} ranks, rank {r}");
            }
        }
    }
}

#[test]
fn an_executor_built_from_slices_holds_the_parts_built_from_the_whole_graph() {
    for g in graphs() {
        let whole = DistView::of(&g).unwrap();
        for p in 1..=4 {
            let cuts = Cuts::balanced(&whole.total_degrees(), p);
            let got = run_threads(p, T, |c| {
                let exec = DistExecutor::new(&c, &g).unwrap();
                exec.part().clone() == Part::build(&g, cuts.clone(), c.rank())
            })
            .unwrap();
            assert!(got.into_iter().all(|r| r.unwrap()), "{p} ranks");
        }
    }
}

/// Writes the parts of `g` into `p` files under a fresh directory.
fn partition(g: &Graph, p: usize, tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("plexus-parts-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let view = DistView::of(g).unwrap();
    let cuts = Cuts::balanced(&view.total_degrees(), p);
    for r in 0..p {
        let part = Part::from_slices(g, cuts.clone(), r);
        let ids = (r == 0).then(|| g.ids());
        file::write(&file::path(&dir, r), "g", &view, &part, ids).unwrap();
    }
    dir
}

#[test]
fn every_driver_on_parts_read_from_files_agrees_with_its_kernel() {
    // Graphs with an invalid weight are left out: sssp refuses them.
    for (i, g) in graphs()
        .iter()
        .enumerate()
        .step_by(3)
        .filter(|(i, _)| i % 8 != 1)
    {
        for p in 1..=4 {
            let dir = partition(g, p, &format!("conf{i}-{p}"));
            let out = run_threads(p, T, |c| {
                let f = file::read(&file::path(&dir, c.rank())).map_err(|e| e.to_string())?;
                assert_eq!(f.ids.is_some(), c.rank() == 0);
                let exec =
                    DistExecutor::from_part(&c, f.view, f.part).map_err(|e| e.to_string())?;
                for e in ALGORITHMS.iter().filter(|e| e.runs_on(ExecutorKind::Scan)) {
                    check(e.algorithm, g, &exec, 7).map_err(|m| format!("{}: {m}", e.name))?;
                }
                exec.fault().map_or(Ok(()), |f| Err(f.to_string()))
            })
            .unwrap();
            for (r, res) in out.into_iter().enumerate() {
                if let Err(m) = res.unwrap() {
                    panic!("graph {i}, {p} ranks, rank {r}: {m}");
                }
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[test]
fn results_from_slices_and_from_files_are_equal_on_1_to_4_ranks() {
    let g = &graphs()[0];
    let run = |exec: &DistExecutor<'_, _>| {
        let b = bfs::run_on(exec, &bfs::Config::default()).unwrap().depth;
        let w = wcc::run_on(exec, &wcc::Config::default())
            .unwrap()
            .component;
        let s = sssp::run_on(
            exec,
            &sssp::Config {
                source: 0,
                delta: None,
            },
        )
        .unwrap()
        .dist;
        let pr = pagerank::run_on(exec, &pagerank::Config::default())
            .unwrap()
            .rank;
        (b, w, s, pr)
    };
    for p in 1..=4 {
        let dir = partition(g, p, &format!("eq{p}"));
        let out = run_threads(p, T, |c| {
            let a = run(&DistExecutor::new(&c, g).unwrap());
            let f = file::read(&file::path(&dir, c.rank())).unwrap();
            let b = run(&DistExecutor::from_part(&c, f.view, f.part).unwrap());
            a == b
        })
        .unwrap();
        assert!(out.into_iter().all(|r| r.unwrap()), "{p} ranks");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn ranks_on_different_graphs_or_partitions_refuse_to_start() {
    let gs = graphs();
    let (a, b) = (&gs[0], &gs[2]);
    let out = run_threads(2, T, |c| {
        let g = if c.rank() == 0 { a } else { b };
        DistExecutor::new(&c, g).map(|_| ())
    })
    .unwrap();
    for r in out {
        assert!(matches!(r.unwrap(), Err(DistError::Mismatch { .. })));
    }
    // Parts of one graph cut for 2 ranks, run on 3: refused.
    let dir = partition(a, 2, "wrongp");
    let out = run_threads(3, T, |c| {
        let f = file::read(&file::path(&dir, c.rank().min(1))).unwrap();
        DistExecutor::from_part(&c, f.view, f.part).map(|_| ())
    })
    .unwrap();
    for r in out {
        let e = r.unwrap().unwrap_err().to_string();
        assert!(
            e.contains("part") || e.contains("lost") || e.contains("differs"),
            "{e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
