//! The fast path against the in-memory kernel (distances and parents
//! exactly, and the verifier) on 1–4 ranks, and the refusal of malformed
//! frontiers.
use std::time::Duration;

use plexus_engine::algo::sssp::{self, Config};
use plexus_graph::{BuildOptions, Graph, VertexId};

use crate::comm::run_threads;
use crate::error::RunError;
use crate::DistExecutor;

use crate::testutil::rng;

/// The PageRank tests' graphs (weights 0–4 in halves, zero weights and
/// duplicates included, unreachable parts), graphs with zero-weight ties
/// and chains, and one with a weight of +∞ (an absent arc) and no zero
/// weights: with both, the engine's tight-edge parents would give the
/// vertex behind the +∞ arc a parent (`inf + ... == inf`), in memory and
/// in the driver alike, which the verifier refuses.
fn graphs() -> Vec<Graph> {
    let mut out = crate::pagerank::tests::graphs();
    let mut next = rng(0x0dd_ba11_cafe_f00d);
    for (directed, zeros) in [(true, true), (false, true), (true, false)] {
        let n = 400;
        let mut edges: Vec<(VertexId, VertexId, f64)> = (0..1200)
            .map(|_| {
                let w = [0.0, 0.0, 1.0, 0.5, 3.0, 1e9][next(6) as usize];
                let w = if zeros || w != 0.0 { w } else { 2.0 };
                (next(300) as VertexId, next(300) as VertexId, w)
            })
            .collect();
        if zeros {
            // A chain of zero weights behind one arc: its vertices tie
            // with 300, so parents need the tight-edge BFS.
            edges.push((5, 300, 1.0));
            edges.extend((301..340).map(|v| (v - 1, v, 0.0)));
        }
        // An unreachable vertex behind a +∞ arc (with the zero-weight ties
        // too: the tight-edge BFS must not claim it).
        edges.push((0, 350, f64::INFINITY));
        out.push(
            Graph::from_weighted_edges(
                n,
                &edges,
                &BuildOptions {
                    directed,
                    ..BuildOptions::default()
                },
            )
            .expect("valid test graph"),
        );
    }
    out
}

#[test]
fn distances_and_parents_equal_the_in_memory_kernel_on_1_to_4_ranks() {
    let mut next = rng(7);
    for (i, g) in graphs().iter().enumerate() {
        let n = g.num_vertices() as u64;
        let sources = [0, next(n) as VertexId];
        for (s, delta) in sources.into_iter().zip([None, Some(0.75)]) {
            let cfg = Config { source: s, delta };
            let want = sssp::run(g, &cfg).expect("in-memory sssp");
            for ranks in 1..=4 {
                let got = run_threads(ranks, Duration::from_secs(60), |comm| {
                    let exec = DistExecutor::new(&comm, g).expect("executor");
                    let o = super::run(&exec, &cfg).expect("no fault");
                    let rounds = exec
                        .steps()
                        .iter()
                        .filter(|s| s.mode == super::MODE)
                        .count();
                    (o, rounds, exec.bytes())
                })
                .expect("threads");
                for (r, res) in got.into_iter().enumerate() {
                    let (o, rounds, (sent, _)) = res.expect("rank ran");
                    let at = format!("graph {i}, source {s}, on {ranks} ranks, rank {r}");
                    assert_eq!(o.dist, want.dist, "{at}: distances");
                    assert_eq!(o.parent, want.parent, "{at}: parents");
                    assert_eq!(o.iterations, rounds, "{at}");
                    sssp::verify(g, &cfg, &o).expect("verifier");
                    if ranks == 1 {
                        assert_eq!(sent, 0);
                    }
                }
            }
        }
    }
}

#[test]
fn graphs_and_parameters_the_driver_refuses_are_refused() {
    let unweighted = Graph::from_edges(3, &[(0, 1), (1, 2)], &BuildOptions::directed())
        .expect("valid test graph");
    let negative =
        Graph::from_weighted_edges(3, &[(0, 1, 1.0), (1, 2, -1.0)], &BuildOptions::directed())
            .expect("valid test graph");
    let cases = [
        (&unweighted, Config::default()),
        (&negative, Config::default()),
        (
            &negative,
            Config {
                source: 3,
                delta: None,
            },
        ),
        (
            &negative,
            Config {
                source: 0,
                delta: Some(0.0),
            },
        ),
    ];
    for (g, cfg) in cases {
        let got = run_threads(2, Duration::from_secs(60), |comm| {
            let exec = DistExecutor::new(&comm, g).expect("executor");
            matches!(super::run(&exec, &cfg), Err(RunError::Algo(_)))
        })
        .expect("threads");
        assert!(got.into_iter().all(|r| r.expect("rank ran")));
    }
}

#[test]
fn malformed_frontiers_are_refused() {
    // Stand in for a peer's malformed message: a bin, then whole pairs of a
    // vertex the sender masters and a finite, non-negative distance.
    let msg = |bin: u64, pairs: &[(u32, f64)]| {
        let mut b = bin.to_le_bytes().to_vec();
        for (u, d) in pairs {
            b.extend_from_slice(&u.to_le_bytes());
            b.extend_from_slice(&d.to_le_bytes());
        }
        b
    };
    let ok = |b: &[u8]| super::decode(b, 10..20).is_some();
    assert_eq!(
        super::decode(&msg(4, &[(12, 1.5)]), 10..20),
        Some((4, vec![(12, 1.5)]))
    );
    assert!(ok(&msg(u64::MAX, &[])));
    assert!(!ok(&msg(4, &[(20, 1.5)])));
    assert!(!ok(&msg(4, &[(9, 1.5)])));
    assert!(!ok(&msg(4, &[(12, -1.0)])));
    assert!(!ok(&msg(4, &[(12, f64::NAN)])));
    assert!(!ok(&msg(4, &[(12, f64::INFINITY)])));
    assert!(!ok(&msg(4, &[(12, 1.5)])[..19]));
    assert!(!ok(&[1, 2, 3]));
}
