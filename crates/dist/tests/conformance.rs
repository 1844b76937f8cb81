//! The engine's conformance check (`plexus_engine::conformance::check`) on
//! the distributed executor: every driver, on random small graphs
//! (directed or not, weighted or not, duplicate arcs kept or dropped,
//! degree-ordered or not), on 1–4 thread ranks. Each rank checks its own
//! copy of the result against the in-memory kernel.
use std::time::Duration;

use plexus_dist::comm::run_threads;
use plexus_dist::DistExecutor;
use plexus_engine::conformance::check;
use plexus_engine::registry::{ExecutorKind, ALGORITHMS};
use plexus_graph::{BuildOptions, DuplicatePolicy, Graph, VertexId, VertexOrder};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Spec {
    n: usize,
    edges: Vec<(VertexId, VertexId, f64)>,
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
        let g = if self.weighted {
            Graph::from_weighted_edges(self.n, &self.edges, &opts)
        } else {
            let pairs: Vec<(VertexId, VertexId)> = self.edges.iter().map(|e| (e.0, e.1)).collect();
            Graph::from_edges(self.n, &pairs, &opts)
        };
        g.expect("test graph specs are valid")
    }
}

fn specs(max_n: usize, max_edges: usize, weighted: bool) -> impl Strategy<Value = Spec> {
    (1..=max_n, any::<bool>(), any::<bool>(), any::<bool>()).prop_flat_map(
        move |(n, directed, dedup, reorder)| {
            let edge = (0..n as VertexId, 0..n as VertexId, 0u32..=20)
                .prop_map(|(u, v, w)| (u, v, f64::from(w) * 0.5));
            proptest::collection::vec(edge, 0..=max_edges).prop_map(move |edges| Spec {
                n,
                edges,
                directed,
                weighted,
                dedup,
                reorder,
            })
        },
    )
}

/// Every driver on `ranks` thread ranks over `g`; the first failure, named.
fn check_all(g: &Graph, seed: u64, ranks: usize) -> Result<(), String> {
    let out = run_threads(ranks, Duration::from_secs(60), |comm| {
        let exec = DistExecutor::new(&comm, g).map_err(|e| e.to_string())?;
        for e in ALGORITHMS.iter().filter(|e| e.runs_on(ExecutorKind::Scan)) {
            let r = check(e.algorithm, g, &exec, seed);
            if let Some(f) = exec.fault() {
                return Err(format!("{}: transport fault {f}", e.name));
            }
            r.map_err(|m| format!("{} on {ranks} ranks: {m}", e.name))?;
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    for (r, res) in out.into_iter().enumerate() {
        match res {
            Ok(Ok(())) => {}
            Ok(Err(m)) => return Err(format!("rank {r}: {m}")),
            Err(_) => return Err(format!("rank {r} panicked")),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn every_driver_agrees_with_its_kernel_on_1_to_4_ranks(
        spec in specs(30, 90, false),
        seed in any::<u64>(),
        ranks in 1usize..=4,
    ) {
        check_all(&spec.build(), seed, ranks).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn every_driver_agrees_on_weighted_graphs(
        spec in specs(30, 90, true),
        seed in any::<u64>(),
        ranks in 1usize..=4,
    ) {
        check_all(&spec.build(), seed, ranks).map_err(TestCaseError::fail)?;
    }
}

/// Each rank count on the same fixed graphs, larger than the random ones
/// (several 64-vertex words per rank, hubs), directed and undirected.
#[test]
fn every_driver_on_every_rank_count_over_fixed_graphs() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for (i, directed) in [true, false, true].into_iter().enumerate() {
        let n = 300;
        let edges: Vec<(VertexId, VertexId, f64)> = (0..1200)
            .map(|k| {
                let u = if k % 7 == 0 {
                    3
                } else {
                    (next() % n) as VertexId
                };
                let v = (next() % n) as VertexId;
                (u, v, (next() % 9) as f64 * 0.5)
            })
            .collect();
        let spec = Spec {
            n: n as usize,
            edges,
            directed,
            weighted: i == 2,
            dedup: i == 1,
            reorder: i == 2,
        };
        let g = spec.build();
        for ranks in 1..=4 {
            if let Err(m) = check_all(&g, 11 + i as u64, ranks) {
                panic!("graph {i}: {m}");
            }
        }
    }
}

/// The checks above do run: every listed algorithm has a driver here, and
/// on 3 ranks the run uses both modes and sends bytes.
#[test]
fn the_check_covers_the_issue_list_and_both_modes() {
    let names: Vec<&str> = ALGORITHMS
        .iter()
        .filter(|e| e.runs_on(ExecutorKind::Scan))
        .map(|e| e.name)
        .collect();
    for a in [
        "bfs",
        "sssp",
        "pagerank",
        "ppr",
        "wcc",
        "cdlp",
        "kcore",
        "coloring",
        "mis",
        "betweenness",
    ] {
        assert!(names.contains(&a), "{a} not among {names:?}");
    }
    let spec = Spec {
        n: 200,
        edges: (0..800u32)
            .map(|k| ((k * 7919) % 200, (k * 104_729 + 13) % 200, 1.0))
            .collect(),
        directed: true,
        weighted: false,
        dedup: false,
        reorder: false,
    };
    let g = spec.build();
    let out = run_threads(3, Duration::from_secs(60), |comm| {
        let exec = DistExecutor::new(&comm, &g).unwrap();
        for e in ALGORITHMS.iter().filter(|e| e.runs_on(ExecutorKind::Scan)) {
            check(e.algorithm, &g, &exec, 5).unwrap();
        }
        let steps = exec.steps();
        let sparse = steps.iter().filter(|s| s.mode == "sparse").count();
        let dense = steps.iter().filter(|s| s.mode == "dense").count();
        (sparse, dense, exec.bytes())
    })
    .unwrap();
    for r in out {
        let (sparse, dense, (sent, received)) = r.unwrap();
        assert!(sparse > 10 && dense > 10, "{sparse} sparse, {dense} dense");
        assert!(sent > 0 && received > 0);
    }
}
