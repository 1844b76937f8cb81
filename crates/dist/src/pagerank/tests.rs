//! The fast path against the driver (bit for bit, on the same ranks) and
//! the in-memory kernel (bit for bit on one rank, within the driver's
//! bound on several), and the refusal of malformed messages.
use std::time::Duration;

use plexus_engine::algo::pagerank::{self, Config, Method, Precision, DRIVER_RANK_BOUND};
use plexus_graph::{BuildOptions, DuplicatePolicy, Graph, VertexId, VertexOrder};

use crate::comm::run_threads;
use crate::error::RunError;
use crate::DistExecutor;

use crate::testutil::rng;

/// Random graphs of every kind (directed or not, duplicates kept or
/// dropped, degree order or not), some with isolated vertices and sinks,
/// and two of 3,000 vertices with hubs (several blocks per rank).
pub(crate) fn graphs() -> Vec<Graph> {
    let mut next = rng(0x51a7_e0ff_3c3a_9b15);
    let mut out = Vec::new();
    for i in 0..24 {
        let n = 1 + next(70) as usize;
        // Half the graphs leave the top third of the ids isolated.
        let span = if i % 2 == 0 { n } else { (2 * n / 3).max(1) } as u64;
        let edges: Vec<(VertexId, VertexId, f64)> = (0..next(150))
            .map(|_| {
                let w = next(9) as f64 * 0.5;
                (next(span) as VertexId, next(span) as VertexId, w)
            })
            .collect();
        out.push(build(n, &edges, i % 3 != 0, i));
    }
    for i in 0..2 {
        let n = 3000;
        let edges: Vec<(VertexId, VertexId, f64)> = (0..12_000)
            .map(|k| {
                let u = if k % 5 == 0 {
                    7
                } else {
                    next(2500) as VertexId
                };
                (u, next(2500) as VertexId, 1.0 + next(20) as f64)
            })
            .collect();
        out.push(build(n, &edges, i == 0, i));
    }
    out
}

fn build(n: usize, edges: &[(VertexId, VertexId, f64)], directed: bool, i: usize) -> Graph {
    let opts = BuildOptions {
        directed,
        duplicates: if i.is_multiple_of(2) {
            DuplicatePolicy::Keep
        } else {
            DuplicatePolicy::Drop
        },
        order: if i % 4 == 1 {
            VertexOrder::Degree.into()
        } else {
            VertexOrder::None.into()
        },
        ..BuildOptions::default()
    };
    Graph::from_weighted_edges(n, edges, &opts).expect("valid test graph")
}

/// Fixed iterations, tolerance (the isolated-vertex elimination where it
/// applies), personalised, and a cap reached before convergence.
fn configs(n: usize) -> Vec<Config> {
    let jacobi = Config {
        method: Method::Jacobi,
        precision: Precision::Double,
        ..Config::default()
    };
    vec![
        Config {
            iterations: Some(20),
            tolerance: 1e-300,
            ..jacobi.clone()
        },
        Config {
            tolerance: 1e-9,
            ..jacobi.clone()
        },
        Config {
            personalization: Some(vec![0, (n / 2) as VertexId]),
            tolerance: 1e-9,
            ..jacobi.clone()
        },
        Config {
            damping: 0.5,
            max_iterations: 3,
            tolerance: 0.0,
            ..jacobi
        },
    ]
}

#[test]
fn the_fast_path_equals_the_driver_bit_for_bit_and_the_kernel_within_its_bound() {
    for (i, g) in graphs().iter().enumerate() {
        for cfg in configs(g.num_vertices()) {
            let want = pagerank::run(g, &cfg).expect("in-memory pagerank");
            for ranks in 1..=4 {
                let got = run_threads(ranks, Duration::from_secs(60), |comm| {
                    let exec = DistExecutor::new(&comm, g).expect("executor");
                    let fast = super::run(&exec, &cfg).expect("no fault");
                    let steps = exec.steps();
                    assert!(steps.iter().all(|s| s.mode == super::MODE));
                    assert_eq!(steps.len(), fast.iterations);
                    let driver = pagerank::run_on(&exec, &cfg).expect("driver");
                    assert!(exec.fault().is_none());
                    (fast, driver, exec.bytes())
                })
                .expect("threads");
                for (r, res) in got.into_iter().enumerate() {
                    let (fast, driver, (sent, _)) = res.expect("rank ran");
                    let at = format!("graph {i} on {ranks} ranks, rank {r}, {cfg:?}");
                    assert_eq!(fast, driver, "{at}: fast path against the driver");
                    assert_eq!(fast.iterations, want.iterations, "{at}");
                    assert_eq!(fast.converged, want.converged, "{at}");
                    if ranks == 1 {
                        assert_eq!(fast, want, "{at}: one rank against the kernel");
                        assert_eq!(sent, 0);
                    }
                    for (v, (a, b)) in fast.rank.iter().zip(&want.rank).enumerate() {
                        assert!(
                            (a - b).abs() <= DRIVER_RANK_BOUND,
                            "{at}: vertex {v}: {a} {b}"
                        );
                    }
                    pagerank::verify(g, &cfg, &fast).expect("verifier");
                }
            }
        }
    }
}

#[test]
fn parameters_the_driver_refuses_are_refused() {
    let g = &graphs()[0];
    let bad = [
        Config {
            damping: 1.0,
            ..Config::default()
        },
        Config {
            personalization: Some(vec![g.num_vertices() as VertexId]),
            ..Config::default()
        },
    ];
    for cfg in bad {
        let got = run_threads(2, Duration::from_secs(60), |comm| {
            let exec = DistExecutor::new(&comm, g).expect("executor");
            matches!(super::run(&exec, &cfg), Err(RunError::Algo(_)))
        })
        .expect("threads");
        assert!(got.into_iter().all(|r| r.expect("rank ran")));
    }
}

#[test]
fn malformed_partial_sums_and_keys_are_refused() {
    // Stand in for a peer's malformed messages: exactly `count` finite,
    // non-negative f64s; keys strictly ascending inside the range.
    let f = |xs: &[f64]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    assert!(super::valid_values(&f(&[0.0, 0.5]), 2));
    assert!(!super::valid_values(&f(&[0.0, 0.5]), 3));
    assert!(!super::valid_values(&f(&[0.0, 0.5])[..15], 2));
    assert!(!super::valid_values(&f(&[f64::NAN]), 1));
    assert!(!super::valid_values(&f(&[-1.0]), 1));
    assert!(!super::valid_values(&f(&[f64::INFINITY]), 1));
    let k = |xs: &[u32]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    assert!(super::valid_keys(&k(&[3, 5, 9]), 3..10));
    assert!(!super::valid_keys(&k(&[3, 5, 10]), 3..10));
    assert!(!super::valid_keys(&k(&[2, 5]), 3..10));
    assert!(!super::valid_keys(&k(&[5, 5]), 3..10));
    assert!(!super::valid_keys(&k(&[5, 4]), 3..10));
    assert!(!super::valid_keys(&k(&[5])[..3], 3..10));
}

#[test]
fn the_tiled_gather_agrees_with_the_driver_and_the_kernel_within_the_bound() {
    let cfgs = |n: usize| {
        let fixed = Config {
            iterations: Some(15),
            tolerance: 1e-300,
            ..Config::default()
        };
        vec![
            fixed.clone(),
            Config {
                personalization: Some(vec![(n / 3) as VertexId]),
                ..fixed
            },
        ]
    };
    for (i, g) in graphs().iter().enumerate() {
        for cfg in cfgs(g.num_vertices()) {
            let want = pagerank::run(g, &cfg).expect("in-memory pagerank");
            for ranks in 1..=4 {
                let got = run_threads(ranks, Duration::from_secs(60), |comm| {
                    let exec = DistExecutor::new(&comm, g)
                        .expect("executor")
                        .with_tiles(2, 16);
                    assert!(exec.pull_tiles().is_some());
                    let fast = super::run(&exec, &cfg).expect("no fault");
                    let driver = pagerank::run_on(&exec, &cfg).expect("driver");
                    (fast, driver)
                })
                .expect("threads");
                for (r, res) in got.into_iter().enumerate() {
                    let (fast, driver) = res.expect("rank ran");
                    let at = format!("graph {i} on {ranks} ranks, rank {r}, {cfg:?}");
                    assert_eq!(fast.iterations, want.iterations, "{at}");
                    for (v, ((a, b), c)) in fast
                        .rank
                        .iter()
                        .zip(&want.rank)
                        .zip(&driver.rank)
                        .enumerate()
                    {
                        assert!(
                            (a - b).abs() <= DRIVER_RANK_BOUND,
                            "{at}: vertex {v}: {a} {b}"
                        );
                        assert!(
                            (a - c).abs() <= DRIVER_RANK_BOUND,
                            "{at}: vertex {v}: {a} {c}"
                        );
                    }
                    pagerank::verify(g, &cfg, &fast).expect("verifier");
                }
            }
        }
    }
}
