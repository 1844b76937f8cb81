use super::*;
use crate::algo::testgraphs::{weighted_graphs, THREADS};
use crate::program::InMemory;
use crate::with_threads;
use plexus_graph::BuildOptions;
use proptest::prelude::*;

fn cfg(source: VertexId) -> Config {
    Config {
        source,
        delta: None,
    }
}

#[test]
fn an_observer_sees_the_supersteps_and_can_stop_the_kernel() {
    use crate::progress::{observe, Observer};
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;
    // A weighted path 0 -> 1 -> ... -> 99 (unit weights, Δ = 1): one
    // superstep per vertex.
    let edges: Vec<(VertexId, VertexId, f64)> = (0..99).map(|v| (v, v + 1, 1.0)).collect();
    let g = Graph::from_weighted_edges(100, &edges, &BuildOptions::directed()).unwrap();
    struct StopAfter(AtomicU64, u64);
    impl Observer for StopAfter {
        fn superstep(&self, _active: u64) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        fn cancel_requested(&self) -> bool {
            self.0.load(Ordering::Relaxed) >= self.1
        }
    }
    let c = Config {
        source: 0,
        delta: Some(1.0),
    };
    let all = Arc::new(StopAfter(AtomicU64::new(0), u64::MAX));
    let d = observe(all.clone(), || distances(&g, &c)).unwrap();
    assert_eq!(all.0.load(Ordering::Relaxed), d.iterations as u64);
    assert!(d.iterations >= 99);
    let stop = Arc::new(StopAfter(AtomicU64::new(0), 5));
    assert_eq!(
        observe(stop.clone(), || run(&g, &c)),
        Err(AlgoError::Cancelled)
    );
    assert_eq!(stop.0.load(Ordering::Relaxed), 5);
    // No observer installed any more: the kernel runs to the end.
    assert_eq!(run(&g, &c).unwrap().dist[99], 99.0);
}

/// The LDBC Graphalytics `example-directed` graph (ids shifted down by one)
/// and its published SSSP output from vertex 1 (internal 0).
#[test]
fn graphalytics_example_directed_matches_the_published_output() {
    let e = [
        (1, 3, 0.5),
        (1, 5, 0.3),
        (2, 4, 0.1),
        (2, 5, 0.3),
        (2, 10, 0.12),
        (3, 1, 0.53),
        (3, 5, 0.62),
        (3, 8, 0.21),
        (3, 10, 0.52),
        (5, 3, 0.69),
        (5, 4, 0.53),
        (5, 8, 0.1),
        (6, 3, 0.23),
        (6, 4, 0.39),
        (7, 4, 0.83),
        (8, 1, 0.39),
        (9, 4, 0.69),
    ];
    let t: Vec<(u32, u32, f64)> = e.iter().map(|&(u, v, w)| (u - 1, v - 1, w)).collect();
    let g = Graph::from_weighted_edges(10, &t, &BuildOptions::directed()).unwrap();
    let out = run(&g, &cfg(0)).unwrap();
    let inf = f64::INFINITY;
    let want = [0.0, inf, 0.5, 0.83, 0.3, inf, inf, 0.4, inf, 1.02];
    for (v, (&a, &b)) in out.dist.iter().zip(&want).enumerate() {
        assert!(
            a == b || (a - b).abs() <= 1e-4 * b,
            "vertex {v}: {a} vs {b}"
        );
    }
    assert_eq!(out.parent[3], 4);
    verify(&g, &cfg(0), &out).unwrap();
}

#[test]
fn unweighted_and_negative_inputs_are_errors() {
    let g = Graph::from_edges(2, &[(0, 1)], &BuildOptions::directed()).unwrap();
    assert!(
        matches!(run(&g, &cfg(0)), Err(AlgoError::UnsupportedGraph(m)) if m.contains("--weighted"))
    );
    let g = Graph::from_weighted_edges(3, &[(0, 1, 1.0), (2, 1, -2.0)], &BuildOptions::directed())
        .unwrap();
    assert_eq!(
        run(&g, &cfg(0)),
        Err(AlgoError::NegativeWeight {
            algorithm: "sssp",
            src: 2,
            dst: 1,
            weight: -2.0
        })
    );
    let g = Graph::from_weighted_edges(2, &[(0, 1, 1.0)], &BuildOptions::directed()).unwrap();
    assert_eq!(run(&g, &cfg(2)), Err(AlgoError::NoSuchVertex(2)));
    let bad_delta = Config {
        source: 0,
        delta: Some(0.0),
    };
    assert!(matches!(
        run(&g, &bad_delta),
        Err(AlgoError::InvalidParameter(_))
    ));
}

/// A directed path `0 → 1 → …` with these weights.
#[test]
fn a_power_of_two_width_buckets_integer_distances_by_a_shift_exactly() {
    let g = path(&[1.0, 2.0]);
    let shifts = [1.0, 2.0, 256.0, 4_294_967_296.0];
    for delta in shifts.into_iter().chain([3.0, 0.5, 255.5, 1e-300, 1e300]) {
        let wide = Tentative::<u32>::new(&g, 0, delta);
        let narrow = Tentative::<u16>::new(&g, 0, delta);
        assert_eq!(wide.shift.is_some(), shifts.contains(&delta), "{delta}");
        for d in [
            0u32,
            1,
            2,
            255,
            256,
            257,
            65_534,
            65_535,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ] {
            assert_eq!(wide.bucket(d), bucket(d.to_f64(), delta), "{d} / {delta}");
            if let Ok(d) = u16::try_from(d) {
                assert_eq!(narrow.bucket(d), bucket(d.to_f64(), delta), "{d} / {delta}");
            }
        }
        assert_eq!(
            Tentative::<f64>::new(&g, 0, delta).bucket(300.0),
            bucket(300.0, delta)
        );
    }
}

fn path(ws: &[f64]) -> Graph {
    let edges: Vec<(VertexId, VertexId, f64)> = ws
        .iter()
        .enumerate()
        .map(|(i, &w)| (i as VertexId, i as VertexId + 1, w))
        .collect();
    Graph::from_weighted_edges(ws.len() + 1, &edges, &BuildOptions::directed()).unwrap()
}

#[test]
fn the_u32_word_holds_paths_up_to_its_bound_and_f64_takes_the_rest() {
    // The longest path is u32::MAX − 1: the u32 word, exact.
    let top = f64::from(u32::MAX - 1);
    let g = path(&[2e9, top - 2e9]);
    assert!(fits_u32(&g));
    // Past it, or with a fraction: f64, exact all the same.
    let over = path(&[2e9, 2.5e9]);
    assert!(!fits_u32(&over));
    let half = path(&[1.5, 2.0]);
    assert!(!fits_u32(&half));
    for (g, want) in [
        (&g, vec![0.0, 2e9, top]),
        (&over, vec![0.0, 2e9, 4.5e9]),
        (&half, vec![0.0, 1.5, 3.5]),
    ] {
        for t in THREADS {
            let got = with_threads(t, || run(g, &cfg(0))).unwrap().unwrap();
            assert_eq!(got.dist, want);
            assert_eq!(got.parent, vec![0, 0, 1]);
        }
    }
    // A sum past the word saturates to "unreached", never wraps.
    assert_eq!(<u32 as Word>::offer(u32::MAX - 1, 5.0), u32::MAX);
    assert_eq!(<u32 as Word>::offer(u32::MAX, 0.0).to_f64(), f64::INFINITY);
    assert_eq!(<u32 as Word>::offer(7, 5.0), 12);
}

#[test]
fn zero_weight_cycles_and_tiny_deltas_are_fine() {
    let t = [
        (0, 1, 0.0),
        (1, 2, 0.0),
        (2, 1, 0.0),
        (2, 3, 2.5),
        (0, 3, 3.0),
    ];
    let g = Graph::from_weighted_edges(4, &t, &BuildOptions::directed()).unwrap();
    for delta in [None, Some(1e-300), Some(1e300)] {
        let c = Config { source: 0, delta };
        let out = run(&g, &c).unwrap();
        assert_eq!(out.dist, vec![0.0, 0.0, 0.0, 2.5]);
        verify(&g, &c, &out).unwrap();
    }
}

#[test]
fn buckets_past_u64_are_still_relaxed_by_every_kernel() {
    // With Δ = 1e-300 every positive distance saturates the bucket
    // index; the team once took that bucket for "no bucket" and left
    // vertex 1's out-edges unrelaxed.
    let g = path(&[1.0, 1.0, 1.0]);
    for t in THREADS {
        let team = with_threads(t, || delta_stepping_team::<f64>(&g, 0, 1e-300));
        let plain = with_threads(t, || delta_stepping_in_memory::<f64>(&g, 0, 1e-300));
        for got in [team, plain] {
            assert_eq!(got.unwrap().unwrap().unwrap().0, vec![0.0, 1.0, 2.0, 3.0]);
        }
    }
}

#[test]
fn verifier_rejects_corrupted_outputs() {
    let t = [
        (0, 1, 1.0),
        (1, 2, 1.0),
        (0, 2, 5.0),
        (2, 3, 0.0),
        (3, 2, 0.0),
    ];
    let g = Graph::from_weighted_edges(5, &t, &BuildOptions::directed()).unwrap();
    let c = cfg(0);
    let good = run(&g, &c).unwrap();
    verify(&g, &c, &good).unwrap();
    let mut bad = good.clone();
    bad.dist[2] = 3.0;
    assert!(verify(&g, &c, &bad).unwrap_err().0.contains("1 -> 2"));
    let mut bad = good.clone();
    bad.dist[1] = 0.5;
    assert!(verify(&g, &c, &bad).unwrap_err().0.contains("1 -> 2"));
    // Too-small distances held up by a parent cycle of zero-weight edges.
    let mut bad = good.clone();
    bad.dist[2] = 0.0;
    bad.dist[3] = 0.0;
    bad.parent[2] = 3;
    bad.parent[3] = 2;
    assert!(verify(&g, &c, &bad).unwrap_err().0.contains("cycle"));
    let mut bad = good;
    bad.parent[4] = 0;
    assert!(verify(&g, &c, &bad)
        .unwrap_err()
        .0
        .contains("unreached vertex 4"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn run_matches_dijkstra_and_passes_verify(
        spec in weighted_graphs(),
        s in 0usize..1000,
        delta in proptest::option::of(0.25f64..20.0),
    ) {
        let g = spec.build();
        let c = Config { source: (s % g.num_vertices()) as VertexId, delta };
        let want = reference(&g, &c).unwrap();
        verify(&g, &c, &want).unwrap();
        let generic = distances_on(&InMemory::new(&g), &c).unwrap();
        prop_assert_eq!(&generic.dist, &want.dist);
        for t in THREADS {
            let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
            prop_assert_eq!(&got.dist, &want.dist);
            prop_assert_eq!(&got.parent, &want.parent);
            if let Err(e) = verify(&g, &c, &got) {
                return Err(TestCaseError::fail(e.to_string()));
            }
            // Both in-memory paths, whichever `run` took (another
            // test may hold the team right): each in its own pool.
            let delta = prepare(&g, &c).unwrap();
            let team = with_threads(t, || delta_stepping_team::<f64>(&g, c.source, delta)).unwrap().unwrap();
            prop_assert_eq!(&team.expect("f64 never overflows").0, &want.dist);
            let plain = with_threads(t, || delta_stepping_in_memory::<f64>(&g, c.source, delta)).unwrap().unwrap();
            prop_assert_eq!(&plain.expect("f64 never overflows").0, &want.dist);
        }
    }

    #[test]
    fn integer_weights_take_the_u32_and_u16_words_and_match_dijkstra(
        spec in weighted_graphs(),
        s in 0usize..1000,
        // Powers of two too: integer words then bucket by a shift.
        delta in proptest::option::of(prop_oneof![
            0.25f64..20.0,
            (0u32..5).prop_map(|s| f64::from(1u32 << s)),
        ]),
    ) {
        // Doubled, the generator's halves are integers 0..=20.
        let mut spec = spec;
        for e in &mut spec.edges {
            e.2 *= 2.0;
        }
        let g = spec.build();
        prop_assert!(fits_u32(&g));
        let c = Config { source: (s % g.num_vertices()) as VertexId, delta };
        let want = reference(&g, &c).unwrap();
        let delta = prepare(&g, &c).unwrap();
        for t in THREADS {
            let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
            prop_assert_eq!(&got.dist, &want.dist);
            prop_assert_eq!(&got.parent, &want.parent);
            let team = with_threads(t, || delta_stepping_team::<u32>(&g, c.source, delta)).unwrap().unwrap();
            prop_assert_eq!(&team.expect("fits u32").0, &want.dist);
            let plain = with_threads(t, || delta_stepping_in_memory::<u32>(&g, c.source, delta)).unwrap().unwrap();
            prop_assert_eq!(&plain.expect("fits u32").0, &want.dist);
            // At most 39 edges of weight ≤ 40 per path: u16 always fits.
            prop_assert!(try_u16(&g));
            let team = with_threads(t, || delta_stepping_team::<u16>(&g, c.source, delta)).unwrap().unwrap();
            prop_assert_eq!(&team.expect("fits u16").0, &want.dist);
            let plain = with_threads(t, || delta_stepping_in_memory::<u16>(&g, c.source, delta)).unwrap().unwrap();
            prop_assert_eq!(&plain.expect("fits u16").0, &want.dist);
        }
    }
}

#[test]
fn the_team_moves_its_bucket_window_and_matches_dijkstra() {
    // Δ so small that the path's buckets run far past one window of
    // BIN_WINDOW buckets, with side edges that file vertices far ahead.
    let mut edges: Vec<(VertexId, VertexId, f64)> = (0..299).map(|v| (v, v + 1, 1.0)).collect();
    edges.extend((0..290).step_by(7).map(|v| (v, v + 9, 8.5)));
    let g = Graph::from_weighted_edges(300, &edges, &BuildOptions::directed()).unwrap();
    let c = Config {
        source: 0,
        delta: Some(0.01),
    };
    let want = reference(&g, &c).unwrap();
    // The same graph with doubled (integer) weights, for the u32 word.
    let doubled: Vec<_> = edges.iter().map(|&(u, v, w)| (u, v, 2.0 * w)).collect();
    let g2 = Graph::from_weighted_edges(300, &doubled, &BuildOptions::directed()).unwrap();
    assert!(fits_u32(&g2) && !fits_u32(&g));
    let want2: Vec<f64> = want.dist.iter().map(|d| 2.0 * d).collect();
    for t in [1, 2, 3] {
        let (dist, rounds) = with_threads(t, || delta_stepping_team::<f64>(&g, 0, 0.01))
            .unwrap()
            .unwrap()
            .expect("f64 never overflows");
        assert_eq!(dist, want.dist, "{t} threads");
        assert!(rounds >= 299 / 9, "{t} threads: {rounds} rounds");
        let (dist, rounds) = with_threads(t, || delta_stepping_team::<u32>(&g2, 0, 0.02))
            .unwrap()
            .unwrap()
            .expect("fits u32");
        assert_eq!(dist, want2, "{t} threads, u32");
        assert!(rounds >= 299 / 9, "{t} threads, u32: {rounds} rounds");
        let (dist, _) = with_threads(t, || delta_stepping_team::<u16>(&g2, 0, 0.02))
            .unwrap()
            .unwrap()
            .expect("fits u16");
        assert_eq!(dist, want2, "{t} threads, u16");
    }
}

#[test]
fn the_u16_word_holds_distances_below_65535_and_overflows_are_redone_in_u32() {
    // 65,534, the word's largest distance: u16, exact.
    let top = path(&[30_000.0, 35_534.0]);
    assert!(try_u16(&top));
    // One more: the u16 kernels see the overflow (a sum of 65,535).
    let over = path(&[30_000.0, 35_535.0]);
    assert!(!try_u16(&over));
    for t in THREADS {
        for (g, fits) in [(&top, true), (&over, false)] {
            let team = with_threads(t, || delta_stepping_team::<u16>(g, 0, 1000.0))
                .unwrap()
                .unwrap();
            let plain = with_threads(t, || delta_stepping_in_memory::<u16>(g, 0, 1000.0))
                .unwrap()
                .unwrap();
            assert_eq!(team.is_some(), fits, "{t} threads, team");
            assert_eq!(plain.is_some(), fits, "{t} threads, rounds");
        }
        let got = with_threads(t, || run(&top, &cfg(0))).unwrap().unwrap();
        assert_eq!(got.dist, vec![0.0, 30_000.0, 65_534.0]);
        let got = with_threads(t, || run(&over, &cfg(0))).unwrap().unwrap();
        assert_eq!(got.dist, vec![0.0, 30_000.0, 65_535.0]);
    }
    // A graph where u16 is likely (weights ≤ 255, mean degree ≥ 4) but
    // the far end lies 334 hops of 255 away: the u16 run stops at the
    // first overflow, and `run` gives u32's exact distances.
    let n = 1000;
    let mut edges = Vec::new();
    for v in 0..n as VertexId {
        for step in 1..=3 {
            if v + step < n as VertexId {
                edges.push((v, v + step, 255.0));
            }
        }
    }
    let far = Graph::from_weighted_edges(n, &edges, &BuildOptions::undirected()).unwrap();
    assert!(try_u16(&far) && fits_u32(&far));
    let c = cfg(0);
    let want = reference(&far, &c).unwrap();
    assert!(want.dist[n - 1] > 65_535.0);
    let delta = prepare(&far, &c).unwrap();
    for t in THREADS {
        let team = with_threads(t, || delta_stepping_team::<u16>(&far, 0, delta))
            .unwrap()
            .unwrap();
        assert!(team.is_none(), "{t} threads");
        let plain = with_threads(t, || delta_stepping_in_memory::<u16>(&far, 0, delta))
            .unwrap()
            .unwrap();
        assert!(plain.is_none(), "{t} threads");
        let got = with_threads(t, || run(&far, &c)).unwrap().unwrap();
        assert_eq!(got.dist, want.dist, "{t} threads");
        assert_eq!(got.parent, want.parent, "{t} threads");
    }
}

/// Parents across a zero-weight tie (`1 → 2` of weight 0 leaves 2 without
/// an in-neighbour of lower distance, so the tight-edge BFS runs) on a
/// graph where a `+∞` arc leads to an unreachable vertex: `d + ∞ == ∞`
/// must not make that arc tight.
#[test]
fn an_infinite_arc_does_not_give_an_unreachable_vertex_a_parent() {
    let inf = f64::INFINITY;
    let e = [(0, 1, 1.0), (1, 2, 0.0), (0, 3, inf), (2, 3, inf)];
    let g = Graph::from_weighted_edges(4, &e, &BuildOptions::directed()).unwrap();
    let want = [0.0, 1.0, 1.0, inf];
    for out in [
        run(&g, &cfg(0)).unwrap(),
        run_on(&InMemory::new(&g), &cfg(0)).unwrap(),
    ] {
        assert_eq!(out.dist, want);
        assert_eq!(out.parent[3], NO_PARENT);
        assert_eq!(out.parent[2], 1);
        verify(&g, &cfg(0), &out).unwrap();
    }
}
