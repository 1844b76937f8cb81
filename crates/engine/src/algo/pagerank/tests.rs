use super::reference::single_precision_slack;
use super::*;
use crate::algo::testgraphs::{graphs, THREADS};
use crate::with_threads;
use plexus_graph::BuildOptions;
use proptest::prelude::*;

#[test]
fn the_push_is_held_to_more_progress_once_its_state_leaves_the_cache() {
    let ring = |n: u32| {
        let edges: Vec<(u32, u32)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
        Graph::from_edges(n as usize, &edges, &BuildOptions::directed()).expect("valid edges")
    };
    let small = ring(1000);
    assert_eq!(
        push_window(&small),
        pagerank_push::Window {
            edges: 1000 / 16,
            keep: 0.8
        }
    );
    let n = (PUSH_STATE_IN_CACHE / PUSH_STATE_BYTES + 1) as u32;
    assert_eq!(
        push_window(&ring(n)),
        pagerank_push::Window {
            edges: n as u64 / 64,
            keep: 0.9
        }
    );
}

#[test]
fn personalized_default_tolerance_is_networkx_s_up_to_1e_4_in_l1() {
    assert_eq!(personalized_default_tolerance(6), DEFAULT_TOLERANCE);
    assert_eq!(personalized_default_tolerance(100), DEFAULT_TOLERANCE);
    assert_eq!(personalized_default_tolerance(0), DEFAULT_TOLERANCE);
    let big = 2_395_511;
    assert!((personalized_default_tolerance(big) * big as f64 - 1e-4).abs() < 1e-18);
}

/// The LDBC Graphalytics `example-directed` graph (external ids 1..=10
/// map to internal 0..=9) and its published PR output (d = 0.85, 2 iterations).
#[test]
fn graphalytics_example_directed_matches_the_published_output() {
    let pairs: Vec<(u32, u32)> = crate::algo::testgraphs::GRAPHALYTICS_EXAMPLE_DIRECTED
        .iter()
        .map(|&(u, v)| (u - 1, v - 1))
        .collect();
    let g = Graph::from_edges(10, &pairs, &BuildOptions::directed()).unwrap();
    let cfg = Config {
        iterations: Some(2),
        ..Config::default()
    };
    let out = run(&g, &cfg).unwrap();
    let want = [
        0.1477629166666667,
        0.04753375,
        0.1550469444444444,
        0.1597573611111111,
        0.14624,
        0.04753375,
        0.04753375,
        0.1135740277777778,
        0.04753375,
        0.08748375000000001,
    ];
    assert_eq!(out.iterations, 2);
    for (v, (&a, &b)) in out.rank.iter().zip(&want).enumerate() {
        assert!((a - b).abs() <= 1e-4 * b, "vertex {v}: {a} vs {b}");
    }
    verify(&g, &cfg, &out).unwrap();
}

#[test]
fn a_symmetric_cycle_has_uniform_rank_and_converges_at_once() {
    let g = Graph::from_edges(
        4,
        &[(0, 1), (1, 2), (2, 3), (3, 0)],
        &BuildOptions::directed(),
    )
    .unwrap();
    let out = run(&g, &Config::default()).unwrap();
    assert_eq!(out.iterations, 1);
    assert!(out.converged);
    assert!(out.rank.iter().all(|&r| (r - 0.25).abs() < 1e-15));
}

#[test]
fn personalized_rank_concentrates_on_the_source() {
    // 0 → 1, 2 isolated; dangling 1 hands its mass back to the source 0.
    let g = Graph::from_edges(3, &[(0, 1)], &BuildOptions::directed()).unwrap();
    let cfg = Config {
        tolerance: 1e-14,
        max_iterations: 1000,
        ..Config::default()
    };
    let out = run_personalized(&g, &cfg, 0).unwrap();
    // Fixed point: x0 = 0.15 + 0.85·x1, x1 = 0.85·x0, x2 = 0.
    let x0 = 0.15 / (1.0 - 0.85 * 0.85);
    assert!((out.rank[0] - x0).abs() < 1e-12);
    assert!((out.rank[1] - 0.85 * x0).abs() < 1e-12);
    assert!(out.rank[2].abs() < 1e-12);
    verify(&g, &cfg.clone(), &out).unwrap_err();
    verify(
        &g,
        &Config {
            personalization: Some(vec![0]),
            ..cfg
        },
        &out,
    )
    .unwrap();
}

#[test]
fn bad_parameters_are_rejected() {
    let g = Graph::from_edges(2, &[(0, 1)], &BuildOptions::directed()).unwrap();
    let bad = |c: Config| run(&g, &c).unwrap_err();
    assert!(matches!(
        bad(Config {
            damping: 1.0,
            ..Config::default()
        }),
        AlgoError::InvalidParameter(_)
    ));
    assert!(matches!(
        bad(Config {
            tolerance: f64::NAN,
            ..Config::default()
        }),
        AlgoError::InvalidParameter(_)
    ));
    assert_eq!(
        bad(Config {
            personalization: Some(vec![5]),
            ..Config::default()
        }),
        AlgoError::NoSuchVertex(5)
    );
    assert!(matches!(
        bad(Config {
            personalization: Some(vec![]),
            ..Config::default()
        }),
        AlgoError::InvalidParameter(_)
    ));
}

#[test]
fn verifier_rejects_corrupted_outputs() {
    let g = Graph::from_edges(
        4,
        &[(0, 1), (1, 2), (2, 0), (3, 0)],
        &BuildOptions::directed(),
    )
    .unwrap();
    let cfg = Config::default();
    let good = run(&g, &cfg).unwrap();
    verify(&g, &cfg, &good).unwrap();
    let mut bad = good.clone();
    bad.rank.swap(0, 3);
    assert!(verify(&g, &cfg, &bad)
        .unwrap_err()
        .0
        .contains("fixed point"));
    let mut bad = good.clone();
    bad.rank[2] += 0.01;
    assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("sum"));
    let mut bad = good;
    bad.rank[1] = -bad.rank[1];
    assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("vertex 1"));
}

/// A 60 × 60 grid and a configuration stopping at `|V|·1e-9`.
fn grid_and_tight_config() -> (Graph, Config) {
    let g = plexus_graph::generate::generate(
        plexus_graph::generate::Generator::Grid2d {
            width: 60,
            height: 60,
        },
        &Default::default(),
    )
    .unwrap();
    let cfg = Config {
        tolerance: 1e-9,
        max_iterations: 1000,
        ..Config::default()
    };
    (g, cfg)
}

#[test]
fn gauss_seidel_reaches_the_same_fixed_point_in_fewer_sweeps_on_a_grid() {
    let (g, base) = grid_and_tight_config();
    let jacobi = run(&g, &base).unwrap();
    let gs_cfg = Config {
        method: Method::GaussSeidel,
        ..base.clone()
    };
    let gs = run(&g, &gs_cfg).unwrap();
    verify(&g, &base, &jacobi).unwrap();
    verify(&g, &gs_cfg, &gs).unwrap();
    assert!(jacobi.converged && gs.converged);
    assert!(
        gs.iterations < jacobi.iterations,
        "{} sweeps vs {} iterations",
        gs.iterations,
        jacobi.iterations
    );
    // Each is within `residual/(1 - d) ≤ d·change/(1 - d)` of the fixed point in L1.
    let d = base.damping;
    let within = |o: &Output| d * o.change / (1.0 - d);
    let l1: f64 = gs
        .rank
        .iter()
        .zip(&jacobi.rank)
        .map(|(a, b)| (a - b).abs())
        .sum();
    assert!(l1 <= within(&gs) + within(&jacobi), "{l1}");
}

#[test]
fn preferred_precision_is_single_only_where_rounding_is_far_below_the_tolerance() {
    let (g, tight) = grid_and_tight_config();
    let n = g.num_vertices() as f64;
    // 3,600 vertices: NetworkX's default tolerance is an L1 target of
    // 3.6e-3, far above f32 rounding (3.4e-7 at d = 0.85).
    let loose = Config {
        tolerance: DEFAULT_TOLERANCE,
        ..tight.clone()
    };
    assert_eq!(Precision::preferred(&g, &loose), Precision::Single);
    // Just below and just above 100 times the rounding bound.
    let bound = loose.damping * f64::from(f32::EPSILON) / 2.0 / (1.0 - loose.damping);
    let at = |l1: f64| Config {
        tolerance: l1 / n,
        ..loose.clone()
    };
    assert_eq!(
        Precision::preferred(&g, &at(0.99 * SINGLE_TOLERANCE_MARGIN * bound)),
        Precision::Double
    );
    assert_eq!(
        Precision::preferred(&g, &at(1.01 * SINGLE_TOLERANCE_MARGIN * bound)),
        Precision::Single
    );
    // A damping near 1 magnifies rounding: 0.999 needs an L1 target of 1.2e-2.
    let heavy = Config {
        damping: 0.999,
        ..loose.clone()
    };
    assert_eq!(Precision::preferred(&g, &heavy), Precision::Double);
    assert_eq!(Precision::preferred(&g, &tight), Precision::Double);
    let fixed = Config {
        iterations: Some(20),
        ..loose.clone()
    };
    assert_eq!(Precision::preferred(&g, &fixed), Precision::Double);
    // The push itself is f64; the precision is that of the Jacobi
    // iterations that take over from it.
    let pushed = Config {
        method: Method::Push,
        personalization: Some(vec![0]),
        ..loose.clone()
    };
    assert_eq!(Precision::preferred(&g, &pushed), Precision::Single);
    // What it picks stays within the tolerance's guarantee of the exact ranks.
    for method in [
        Method::Jacobi,
        Method::Chebyshev,
        Method::GaussSeidel,
        Method::Push,
    ] {
        let cfg = Config {
            method,
            precision: Precision::Single,
            ..loose.clone()
        };
        let out = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &out).unwrap();
        let want = exact(&g, &loose);
        let err: f64 = out.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
        let d = cfg.damping;
        assert!(
            err <= (d * out.change + 2.0 * bound) / (1.0 - d),
            "{method:?}: {err} after a change of {}",
            out.change
        );
    }
}

#[test]
fn chebyshev_needs_fewer_iterations_on_a_grid_and_replays_exactly() {
    let (g, base) = grid_and_tight_config();
    let cfg = Config {
        method: Method::Chebyshev,
        ..base.clone()
    };
    let jacobi = run(&g, &base).unwrap();
    let cheb = run(&g, &cfg).unwrap();
    verify(&g, &cfg, &cheb).unwrap();
    assert!(cheb.converged);
    assert!(
        cheb.iterations * 2 < jacobi.iterations,
        "{} against {}",
        cheb.iterations,
        jacobi.iterations
    );
    let want = exact(&g, &base);
    let err: f64 = cheb
        .rank
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .sum();
    let d = base.damping;
    assert!(err <= d * cheb.change / (1.0 - d) + 1e-12, "{err}");
    // Without foresight the last `y` is recomputed by the replay pass:
    // the same ranks, bit for bit, and the same change.
    use std::sync::atomic::Ordering::Relaxed;
    let replays = REPLAYS.load(Relaxed);
    NO_FORESIGHT.store(true, Relaxed);
    let replayed = with_threads(2, || run(&g, &cfg)).unwrap().unwrap();
    NO_FORESIGHT.store(false, Relaxed);
    assert!(REPLAYS.load(Relaxed) > replays);
    assert_eq!(replayed.iterations, cheb.iterations);
    assert_eq!(replayed.change.to_bits(), cheb.change.to_bits());
    assert!(replayed
        .rank
        .iter()
        .zip(&cheb.rank)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    // A fixed count ends on the recurrence's plain step too.
    let fixed = Config {
        iterations: Some(12),
        ..cfg.clone()
    };
    let out = run(&g, &fixed).unwrap();
    assert_eq!(out.iterations, 12);
    verify(&g, &fixed, &out).unwrap();
    let want = reference(&g, &fixed).unwrap();
    assert!(out
        .rank
        .iter()
        .zip(&want.rank)
        .all(|(a, b)| (a - b).abs() < 1e-15));
}

#[test]
fn chebyshev_is_refused_for_personalised_rank() {
    let g = Graph::from_edges(3, &[(0, 1), (1, 2)], &BuildOptions::undirected()).unwrap();
    let cfg = Config {
        method: Method::Chebyshev,
        ..Config::default()
    };
    let ppr = Config {
        personalization: Some(vec![0]),
        ..cfg.clone()
    };
    let e = run(&g, &ppr).unwrap_err().to_string();
    assert!(e.contains("personalised"), "{e}");
    assert_eq!("chebyshev".parse::<Method>(), Ok(Method::Chebyshev));
    assert!(run(&g, &cfg).is_ok());
}

#[test]
fn the_schedule_engages_on_slow_jacobi_and_gives_up_when_the_recurrence_falls_behind() {
    let d = 0.85;
    // Jacobi passes shrinking by 0.8 (> 1.1 × 0.557): engaged after pass 2.
    let mut s = ChebSchedule::new(d);
    let mut change = 1.0;
    for pass in 1..=2 {
        assert_eq!(s.next_omega(), 1.0);
        s.observe(pass, change);
        change *= 0.8;
    }
    assert!(s.engaged);
    assert!(s.next_omega() > 1.0);
    // A recurrence that converges stays engaged ...
    let mut good = s;
    let mut c = change;
    for pass in 4..=10 {
        c *= 0.55;
        good.observe(pass, c);
        assert!(good.engaged && !good.abandoned);
        good.next_omega();
    }
    // ... one that stalls is given up for good (cnr-2000's changes:
    // engaged after pass 5, given up after pass 9).
    let mut bad = ChebSchedule::new(d);
    for (pass, c) in [0.816, 0.369, 0.192, 0.107, 0.0685].into_iter().enumerate() {
        assert!(!bad.engaged);
        bad.next_omega();
        bad.observe(pass + 1, c);
    }
    assert!(bad.engaged);
    for (pass, c) in [(6, 0.0457), (7, 0.0323), (8, 0.0261)] {
        bad.next_omega();
        bad.observe(pass, c);
        assert!(bad.engaged);
    }
    bad.next_omega();
    let c = 0.0222;
    bad.observe(9, c);
    assert!(bad.abandoned && !bad.engaged);
    assert_eq!(bad.next_omega(), 1.0);
    bad.observe(7, c * 0.5);
    assert!(!bad.engaged);
    // A fast-mixing graph (Kronecker: 0.15 to 0.42) never engages.
    let mut fast = ChebSchedule::new(d);
    for (pass, c) in [1.3, 0.2, 0.026, 0.0059, 0.0013, 0.00039]
        .into_iter()
        .enumerate()
    {
        fast.observe(pass + 1, c);
    }
    assert!(!fast.engaged);
}

#[test]
fn chebyshev_on_a_directed_graph_with_a_complex_spectrum_still_converges() {
    // A directed 40-cycle with a chord: `P` has eigenvalues all around
    // the unit circle, where the recurrence diverges.
    let mut edges: Vec<(u32, u32)> = (0..40).map(|v| (v, (v + 1) % 40)).collect();
    edges.push((0, 20));
    edges.push((7, 3));
    let g = Graph::from_edges(40, &edges, &BuildOptions::directed()).unwrap();
    let cfg = Config {
        method: Method::Chebyshev,
        tolerance: 1e-12,
        max_iterations: 1000,
        ..Config::default()
    };
    let out = run(&g, &cfg).unwrap();
    assert!(out.converged);
    verify(&g, &cfg, &out).unwrap();
    let want = exact(&g, &cfg);
    let err: f64 = out.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
    assert!(
        err <= cfg.damping * out.change / (1.0 - cfg.damping) + 1e-12,
        "{err}"
    );
}

/// A generated graph with edge factor 8.
fn generated(kind: plexus_graph::generate::Generator, scale: u32, seed: u64) -> Graph {
    plexus_graph::generate::generate(
        kind,
        &plexus_graph::generate::GenOptions {
            scale,
            edge_factor: 8,
            seed,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn single_precision_verifies_and_stays_close_to_double() {
    let g = generated(plexus_graph::generate::Generator::Rmat, 10, 3);
    let double = Config {
        tolerance: 1e-6 / g.num_vertices() as f64,
        ..Config::default()
    };
    let single = Config {
        precision: Precision::Single,
        ..double.clone()
    };
    let a = run(&g, &double).unwrap();
    let b = run(&g, &single).unwrap();
    verify(&g, &single, &b).unwrap();
    let l1: f64 = a.rank.iter().zip(&b.rank).map(|(x, y)| (x - y).abs()).sum();
    assert!(l1 < 1e-5, "{l1}");
}

#[test]
fn the_vertex_program_equals_the_fused_kernel_bit_for_bit() {
    let g = generated(plexus_graph::generate::Generator::Rmat, 9, 5);
    // The Kronecker graph (undirected) has isolated vertices: the
    // elimination runs there; R-MAT has sinks, so it does not.
    let kron = generated(plexus_graph::generate::Generator::Kron, 9, 5);
    assert!(Isolated::of(&kron, &Config::default()).is_some());
    assert!(Isolated::of(&g, &Config::default()).is_none());
    for (g, personalization) in [
        (&g, None),
        (&g, Some(vec![3])),
        (&kron, None),
        (&kron, Some(vec![3])),
    ] {
        let cfg = Config {
            personalization,
            ..Config::default()
        };
        assert_fused_equals_program(g, &cfg);
    }
}

/// The fused kernel and the vertex program on the in-memory executor
/// give the same iterations, change and ranks, bit for bit.
fn assert_fused_equals_program(g: &Graph, cfg: &Config) {
    let fused = run(g, cfg).unwrap();
    verify(g, cfg, &fused).unwrap();
    let program = run_on(&crate::program::InMemory::new(g), cfg).unwrap();
    assert_eq!(fused.iterations, program.iterations);
    assert_eq!(fused.change.to_bits(), program.change.to_bits());
    assert!(fused
        .rank
        .iter()
        .zip(&program.rank)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn chebyshev_by_tolerance_on_undirected_graphs_starts_from_the_degrees() {
    use plexus_graph::generate::Generator;
    let grid = generated(
        Generator::Grid2d {
            width: 40,
            height: 30,
        },
        0,
        1,
    );
    let directed = generated(Generator::Rmat, 9, 2);
    let cheb = Config {
        method: Method::Chebyshev,
        tolerance: 1e-9,
        ..Config::default()
    };
    let uniform_start = |g: &Graph, cfg: &Config| {
        let teleport = prepare(g, cfg).unwrap();
        let x0 = start_vector(g, cfg, &teleport, None);
        let n = g.num_vertices();
        (0..n).all(|u| x0(u) == 1.0 / n as f64)
    };
    // The degree vector: a probability vector, larger at larger degree.
    let teleport = prepare(&grid, &cheb).unwrap();
    let x0 = start_vector(&grid, &cheb, &teleport, None);
    let sum: f64 = (0..grid.num_vertices()).map(&x0).sum();
    assert!((sum - 1.0).abs() < 1e-12, "{sum}");
    assert!(x0(0) < x0(41), "a corner below an inner vertex");
    // Uniform for fixed iteration counts, other methods, directed graphs.
    for cfg in [
        Config {
            iterations: Some(5),
            ..cheb.clone()
        },
        Config {
            method: Method::Jacobi,
            ..cheb.clone()
        },
    ] {
        assert!(uniform_start(&grid, &cfg));
    }
    assert!(uniform_start(&directed, &cheb));
    // Fewer iterations than from the uniform vector, same guarantee.
    let from_degrees = run(&grid, &cheb).unwrap();
    verify(&grid, &cheb, &from_degrees).unwrap();
    let n = grid.num_vertices();
    let uniform = vec![1.0 / n as f64; n];
    let from_uniform =
        fused::<f64, false, true, JACOBI_BLOCK>(&grid, &cheb, &teleport, None, Some(&uniform));
    verify(&grid, &cheb, &from_uniform).unwrap();
    assert!(
        from_degrees.iterations < from_uniform.iterations,
        "{} against {}",
        from_degrees.iterations,
        from_uniform.iterations
    );
}

#[test]
fn short_in_lists_sum_exactly_as_the_lists() {
    // A grid: every in-list is short. A directed graph of short lists
    // with 3 % of its vertices over SHORT (their sums go on in a loop
    // after the fixed reads), with sinks, isolated vertices and
    // duplicate arcs. A graph whose first block of vertices has no
    // in-edges at all.
    let grid = plexus_graph::generate::generate(
        plexus_graph::generate::Generator::Grid2d {
            width: 37,
            height: 29,
        },
        &plexus_graph::generate::GenOptions::default(),
    )
    .unwrap();
    let n: VertexId = 1000;
    let mut edges: Vec<(VertexId, VertexId)> = (0..n - 40)
        .flat_map(|u| [(u, (u * 7 + 1) % (n - 40)), (u, (u * 13 + 5) % (n - 40))])
        .collect();
    for hub in 0..30 {
        edges.extend((0..12).map(|k| ((hub * 31 + k * 17) % n, hub)));
    }
    edges.push((5, 6));
    edges.push((5, 6));
    let short = Graph::from_edges(n as usize, &edges, &BuildOptions::directed()).unwrap();
    let late: Vec<(VertexId, VertexId)> = (0..300u32)
        .flat_map(|k| [(k, 1100 + k), (1100 + k, 1100 + (k * 7 + 3) % 300)])
        .collect();
    let late = Graph::from_edges(1400, &late, &BuildOptions::directed()).unwrap();
    assert!(late.inc().range(0).is_empty() && late.inc().range(1023).is_empty());
    for g in [&grid, &short, &late] {
        assert!(short_in_lists(g));
        for personalization in [None, Some(vec![3, 9])] {
            let cfg = Config {
                personalization,
                tolerance: 1e-9,
                ..Config::default()
            };
            assert_fused_equals_program(g, &cfg);
        }
    }
    // Kronecker lists are long.
    let kron = generated(plexus_graph::generate::Generator::Kron, 9, 5);
    assert!(!short_in_lists(&kron));
}

#[test]
fn isolated_vertices_are_solved_exactly_in_fewer_iterations() {
    // A complete digraph on 0..=3 (it mixes fast, so the isolated
    // vertices' loop sets plain Jacobi's pace) and six isolated
    // vertices; and the same with personalisation.
    let mut edges: Vec<(VertexId, VertexId)> = (0..4)
        .flat_map(|u| (0..4).filter(move |&v| v != u).map(move |v| (u, v)))
        .collect();
    let g = Graph::from_edges(10, &edges, &BuildOptions::directed()).unwrap();
    for personalization in [None, Some(vec![0, 6])] {
        let cfg = Config {
            tolerance: 1e-12,
            personalization,
            ..Config::default()
        };
        let teleport = prepare(&g, &cfg).unwrap();
        let iso = Isolated::of(&g, &cfg).expect("isolated vertices with teleport mass");
        let eliminated = run(&g, &cfg).unwrap();
        let plain = fused::<f64, false, false, JACOBI_BLOCK>(&g, &cfg, &teleport, None, None);
        verify(&g, &cfg, &eliminated).unwrap();
        verify(&g, &cfg, &plain).unwrap();
        assert!(eliminated.converged && plain.converged);
        assert!(
            eliminated.iterations < plain.iterations,
            "{} vs {}",
            eliminated.iterations,
            plain.iterations
        );
        let l1: f64 = eliminated
            .rank
            .iter()
            .zip(&plain.rank)
            .map(|(a, b)| (a - b).abs())
            .sum();
        assert!(l1 < 1e-10, "{l1}");
        // The isolated vertices hold c·t(v), c = (1 - d) + d·D.
        let c =
            (1.0 - cfg.damping) + cfg.damping * (4..10).map(|v| eliminated.rank[v]).sum::<f64>();
        for v in 4..10u32 {
            let want = c * teleport.at(v);
            assert!(
                (eliminated.rank[v as usize] - want).abs() < 1e-9,
                "vertex {v}"
            );
        }
        // Every executor and the reference take the same path.
        let program = run_on(&crate::program::InMemory::new(&g), &cfg).unwrap();
        assert_eq!(program.iterations, eliminated.iterations);
        assert!(program
            .rank
            .iter()
            .zip(&eliminated.rank)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(
            reference(&g, &cfg).unwrap().iterations,
            eliminated.iterations
        );
        assert_ne!(iso.step(cfg.damping, 0.1, 0.5), Step::plain(0.1));
    }
    // A fixed iteration count (Graphalytics) and Gauss–Seidel keep plain sweeps.
    let fixed = Config {
        iterations: Some(5),
        ..Config::default()
    };
    assert!(Isolated::of(&g, &fixed).is_none());
    let gs = Config {
        method: Method::GaussSeidel,
        ..Config::default()
    };
    assert!(Isolated::of(&g, &gs).is_none());
    // Teleport only on isolated vertices: nothing to eliminate against.
    let only = Config {
        personalization: Some(vec![7]),
        ..Config::default()
    };
    assert!(Isolated::of(&g, &only).is_none());
    let out = run(&g, &only).unwrap();
    verify(&g, &only, &out).unwrap();
    // A sink (dangling with an in-edge) keeps plain sweeps too.
    edges.push((0, 5));
    let sink = Graph::from_edges(10, &edges, &BuildOptions::directed()).unwrap();
    assert!(Isolated::of(&sink, &Config::default()).is_none());
}

#[test]
fn the_verifier_rejects_a_false_claim_of_change() {
    let g = Graph::from_edges(
        4,
        &[(0, 1), (1, 2), (2, 0), (3, 0)],
        &BuildOptions::directed(),
    )
    .unwrap();
    let cfg = Config {
        iterations: Some(3),
        method: Method::GaussSeidel,
        ..Config::default()
    };
    let mut out = run(&g, &cfg).unwrap();
    verify(&g, &cfg, &out).unwrap();
    out.change = 0.0;
    let e = verify(&g, &cfg, &out).unwrap_err().0;
    assert!(e.contains("fixed point") || e.contains("sum"), "{e}");
    out.change = f64::NAN;
    assert!(verify(&g, &cfg, &out).unwrap_err().0.contains("change"));
}

/// The exact ranks, to rounding: 400 Jacobi iterations (`0.85^400 ≈ 4e-29`).
fn exact(g: &Graph, cfg: &Config) -> Vec<f64> {
    let cfg = Config {
        iterations: Some(400),
        method: Method::Jacobi,
        precision: Precision::Double,
        ..cfg.clone()
    };
    reference(g, &cfg).unwrap().rank
}

#[test]
fn push_from_a_corner_of_a_grid_stays_local_and_verifies() {
    // A 100 × 100 grid from a corner: the mass stays near the source,
    // so the push finishes alone, well inside its budget.
    let w = 100;
    let g = generated(
        plexus_graph::generate::Generator::Grid2d {
            width: w,
            height: w,
        },
        0,
        1,
    );
    let cfg = Config {
        tolerance: 1e-8,
        personalization: Some(vec![0]),
        method: Method::Push,
        ..Config::default()
    };
    let out = run(&g, &cfg).unwrap();
    verify(&g, &cfg, &out).unwrap();
    assert!(out.converged);
    // Push alone: the ranks miss exactly the residual mass change/(1 - d).
    let missing = 1.0 - out.rank.iter().sum::<f64>();
    assert!(
        (missing - out.change / (1.0 - cfg.damping)).abs() < 1e-12,
        "{missing}"
    );
    assert!(out.change < (1.0 - cfg.damping) * (w * w) as f64 * cfg.tolerance);
    let want = exact(&g, &cfg);
    let err: f64 = out.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
    assert!(err <= out.change / (1.0 - cfg.damping) + 1e-12, "{err}");
    // Far corners were never reached by any push.
    assert_eq!(out.rank[(w * w - 1) as usize], 0.0);
    // A false claim of a small change is caught.
    let mut bad = out.clone();
    bad.change /= 100.0;
    assert!(verify(&g, &cfg, &bad).is_err());
}

#[test]
fn push_with_fixed_iterations_is_refused() {
    let g = Graph::from_edges(3, &[(0, 1), (1, 2)], &BuildOptions::directed()).unwrap();
    let cfg = Config {
        iterations: Some(5),
        personalization: Some(vec![0]),
        method: Method::Push,
        ..Config::default()
    };
    let e = run(&g, &cfg).unwrap_err().to_string();
    assert!(e.contains("push") && e.contains("iterations"), "{e}");
    assert_eq!("push".parse::<Method>(), Ok(Method::Push));
}

/// `run` at every thread count of `THREADS` gives `first`'s ranks, bit
/// for bit.
fn same_bits_at_every_thread_count(
    g: &Graph,
    cfg: &Config,
    first: &Output,
) -> Result<(), TestCaseError> {
    for t in THREADS {
        let got = with_threads(t, || run(g, cfg)).unwrap().unwrap();
        let same = got
            .rank
            .iter()
            .zip(&first.rank)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        prop_assert!(same, "{} threads differ from 1 thread", t);
    }
    Ok(())
}

fn methods() -> impl Strategy<Value = (Method, Precision)> {
    prop_oneof![
        Just((Method::Jacobi, Precision::Double)),
        Just((Method::GaussSeidel, Precision::Double)),
        Just((Method::Jacobi, Precision::Single)),
        Just((Method::GaussSeidel, Precision::Single)),
        Just((Method::Chebyshev, Precision::Double)),
        Just((Method::Chebyshev, Precision::Single)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn run_matches_reference_and_is_identical_at_any_thread_count(
        spec in graphs(),
        fixed in proptest::option::of(0usize..6),
        source in proptest::option::of(0usize..1000),
        (method, precision) in methods(),
    ) {
        let g = spec.build();
        let single = precision == Precision::Single;
        let cfg = Config {
            iterations: fixed,
            tolerance: if single { 1e-6 } else { 1e-10 },
            personalization: source.map(|s| vec![(s % g.num_vertices()) as VertexId]),
            method,
            precision,
            ..Config::default()
        };
        if method == Method::Chebyshev && cfg.personalization.is_some() {
            prop_assert!(run(&g, &cfg).is_err() && reference(&g, &cfg).is_err());
            return Ok(());
        }
        let want = reference(&g, &cfg).unwrap();
        verify(&g, &cfg, &want).unwrap();
        let first = with_threads(1, || run(&g, &cfg)).unwrap().unwrap();
        prop_assert_eq!(first.iterations, want.iterations);
        prop_assert_eq!(first.converged, want.converged);
        let close = if single { 1e-7 } else { 1e-12 };
        for (a, b) in first.rank.iter().zip(&want.rank) {
            prop_assert!((a - b).abs() <= close, "{} vs {}", a, b);
        }
        if let Err(e) = verify(&g, &cfg, &first) {
            return Err(TestCaseError::fail(e.to_string()));
        }
        same_bits_at_every_thread_count(&g, &cfg, &first)?;
    }

    /// Stored tiles change how a pass gathers, not what it computes:
    /// the ranks of the CSC gather up to f64 rounding, the same
    /// iterations, and the same bits at any thread count.
    #[test]
    fn tiles_give_the_ranks_of_the_csc_gather(
        spec in graphs(),
        source in proptest::option::of(0usize..1000),
        (method, precision) in methods(),
        shift in 0u32..5,
        block in 1usize..40,
    ) {
        let g = spec.build();
        let cfg = Config {
            tolerance: 1e-10,
            personalization: source.map(|s| vec![(s % g.num_vertices()) as VertexId]),
            method,
            precision,
            ..Config::default()
        };
        let Ok(want) = run(&g, &cfg) else { return Ok(()) };
        let tiled = g.clone().with_tiles(shift, block);
        let first = with_threads(1, || run(&tiled, &cfg)).unwrap().unwrap();
        prop_assert_eq!(first.iterations, want.iterations);
        for (a, b) in first.rank.iter().zip(&want.rank) {
            prop_assert!((a - b).abs() <= 1e-12, "{} vs {}", a, b);
        }
        if let Err(e) = verify(&tiled, &cfg, &first) {
            return Err(TestCaseError::fail(e.to_string()));
        }
        same_bits_at_every_thread_count(&tiled, &cfg, &first)?;
    }

    #[test]
    fn push_is_within_its_reported_change_of_the_exact_ranks(
        spec in graphs(),
        sources in proptest::collection::vec(0usize..1000, 0..3),
        tolerance in prop_oneof![Just(1e-3), Just(1e-6), Just(1e-12)],
        single in any::<bool>(),
    ) {
        let g = spec.build();
        let n = g.num_vertices();
        let personalization = (!sources.is_empty())
            .then(|| sources.iter().map(|&s| (s % n) as VertexId).collect());
        // f32 contributions in the Jacobi iterations that take over from
        // the push when it stops early, for tolerances above their rounding.
        let single = single && tolerance >= 1e-6;
        let cfg = Config {
            tolerance,
            max_iterations: 1000,
            personalization,
            method: Method::Push,
            precision: if single { Precision::Single } else { Precision::Double },
            ..Config::default()
        };
        let first = with_threads(1, || run(&g, &cfg)).unwrap().unwrap();
        if let Err(e) = verify(&g, &cfg, &first) {
            return Err(TestCaseError::fail(e.to_string()));
        }
        prop_assert!(first.converged);
        // ‖x - π‖₁ ≤ ‖F(x) - x‖₁ / (1 - d) ≤ change / (1 - d).
        let want = exact(&g, &cfg);
        let err: f64 = first.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
        let rounding = if single { single_precision_slack(cfg.damping) } else { 0.0 };
        prop_assert!(err <= first.change / (1.0 - cfg.damping) + rounding + 1e-12, "error {} change {}", err, first.change);
        same_bits_at_every_thread_count(&g, &cfg, &first)?;
    }
}

/// An observer that asks to stop once `.1` supersteps have started.
struct StopAfter(std::sync::atomic::AtomicU64, u64);

impl crate::progress::Observer for StopAfter {
    fn superstep(&self, _active: u64) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn cancel_requested(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed) >= self.1
    }
}

#[test]
fn a_stop_request_ends_the_iteration_with_cancelled() {
    let edges: Vec<(u32, u32)> = (0..500u32).map(|v| (v, (v * 7 + 1) % 500)).collect();
    let g = Graph::from_edges(500, &edges, &BuildOptions::directed()).expect("valid edges");
    for method in [Method::Jacobi, Method::GaussSeidel] {
        let cfg = Config {
            iterations: Some(1000),
            method,
            ..Default::default()
        };
        let stop = std::sync::Arc::new(StopAfter(Default::default(), 3));
        let r = crate::progress::observe(stop.clone(), || run(&g, &cfg));
        assert_eq!(r, Err(AlgoError::Cancelled), "{method:?}");
        assert_eq!(stop.0.load(std::sync::atomic::Ordering::Relaxed), 3);
        assert_eq!(run(&g, &cfg).expect("no observer").iterations, 1000);
    }
}
