//! The job manager end to end: every mode gives the single-job engine's
//! results (bit-identical for discrete algorithms; PageRank ranks too in
//! lanes, and within rounding from a damping series), on random graphs and
//! random job mixes; faults, cancellation, deadlines and refusals touch
//! only their own job.
use std::sync::Arc;
use std::time::Duration;

use plexus_engine::algo::{bfs, cdlp, pagerank, sssp, wcc};
use plexus_graph::{BuildOptions, Graph, VertexId};
use plexus_jobs::{
    Algorithm, Catalog, ExecMode, Fault, JobError, JobHandle, JobManager, JobSpec, JobState,
    ManagerConfig, Snapshot, Values,
};
use proptest::prelude::*;

fn manager(mode: ExecMode) -> JobManager {
    manager_with(mode, false)
}

/// A shared-mode manager that runs PageRank in lanes (bit-identical to
/// the engine), not as a damping series.
fn lanes_manager() -> JobManager {
    manager_cfg(ManagerConfig {
        pagerank_series: false,
        ..Default::default()
    })
}

fn manager_with(mode: ExecMode, fuse_sssp: bool) -> JobManager {
    manager_cfg(ManagerConfig {
        mode,
        fuse_sssp,
        ..Default::default()
    })
}

/// A manager of `cfg` with 2 threads and small chunks (so that even tiny
/// graphs have many).
fn manager_cfg(cfg: ManagerConfig) -> JobManager {
    JobManager::new(ManagerConfig {
        threads: 2,
        llc_bytes: Some(64 << 10),
        ..cfg
    })
    .expect("manager")
}

/// A random weighted graph with integer weights 1..=9.
fn random_graph(n: usize, edges: &[(u32, u32, u8)], directed: bool) -> Graph {
    let triples: Vec<(VertexId, VertexId, f64)> = edges
        .iter()
        .map(|&(a, b, w)| (a % n as u32, b % n as u32, f64::from(w % 9 + 1)))
        .collect();
    let opts = if directed {
        BuildOptions::directed()
    } else {
        BuildOptions::undirected()
    };
    Graph::from_weighted_edges(n, &triples, &opts).expect("graph")
}

/// Checks a finished job's values against the engine run alone.
/// How close PageRank ranks must be to the engine's.
#[derive(Clone, Copy, PartialEq)]
enum Ranks {
    /// Bit for bit (lanes, and every mode but shared).
    Exact,
    /// Within rounding (a damping series): L1 distance at most 1e-12 in
    /// double, 1e-6 in single (f32 contributions); iterations and
    /// `converged` equal.
    Close,
}

/// The engine's result for `alg`, with PageRank ranks within rounding
/// (shared mode runs uniform-teleport PageRank jobs as a damping series).
fn check(g: &Graph, alg: &Algorithm, values: &Values) {
    check_ranks(g, alg, values, Ranks::Close)
}

/// The engine's result for `alg`, PageRank ranks bit for bit.
fn check_exact(g: &Graph, alg: &Algorithm, values: &Values) {
    check_ranks(g, alg, values, Ranks::Exact)
}

fn check_ranks(g: &Graph, alg: &Algorithm, values: &Values, ranks: Ranks) {
    let ext = |s: &str| g.ids().lookup_str(s).expect("vertex");
    match (alg, values) {
        (
            Algorithm::Bfs { source },
            Values::Bfs {
                depth,
                parent,
                iterations,
            },
        ) => {
            let cfg = bfs::Config {
                source: ext(source),
                ..Default::default()
            };
            let want = bfs::run(g, &cfg).unwrap();
            assert_eq!(depth, &want.depth, "bfs depths from {source}");
            assert_eq!(*iterations, want.iterations);
            let out = bfs::Output {
                depth: depth.clone(),
                parent: parent.clone(),
                iterations: *iterations,
            };
            bfs::verify(g, &cfg, &out).unwrap();
        }
        (Algorithm::Sssp { source, delta }, Values::Sssp { dist, .. }) => {
            let cfg = sssp::Config {
                source: ext(source),
                delta: *delta,
            };
            let want = sssp::run(g, &cfg).unwrap();
            let bits = |d: &[f64]| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(dist), bits(&want.dist), "sssp distances from {source}");
            let parent = values.sssp_parents(g).expect("sssp values");
            assert_eq!(parent, want.parent, "sssp parents from {source}");
        }
        (
            Algorithm::PageRank {
                damping,
                iterations,
                tolerance,
                max_iterations,
                personalization,
                precision,
            },
            Values::PageRank {
                rank,
                iterations: it,
                converged,
            },
        ) => {
            let cfg = pagerank::Config {
                damping: *damping,
                iterations: *iterations,
                tolerance: *tolerance,
                max_iterations: *max_iterations,
                personalization: personalization
                    .as_ref()
                    .map(|p| p.iter().map(|s| ext(s)).collect()),
                precision: *precision,
                ..Default::default()
            };
            let want = pagerank::run(g, &cfg).unwrap();
            assert_eq!(*it, want.iterations);
            assert_eq!(*converged, want.converged);
            assert_eq!(rank.len(), want.rank.len());
            let exact = rank
                .iter()
                .zip(&want.rank)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            if ranks == Ranks::Exact {
                assert!(
                    exact,
                    "ranks differ from the engine's: {rank:?} vs {:?}",
                    want.rank
                );
            } else if !exact {
                let l1: f64 = rank
                    .iter()
                    .zip(&want.rank)
                    .map(|(a, b)| (a - b).abs())
                    .sum();
                let bound = match precision {
                    pagerank::Precision::Double => 1e-12,
                    pagerank::Precision::Single => 1e-6,
                };
                assert!(l1 <= bound, "ranks {l1:e} from the engine's (L1)");
            }
        }
        (Algorithm::Wcc, Values::Wcc { component, count }) => {
            let want = wcc::run(g, &wcc::Config::default()).unwrap();
            assert_eq!(component, &want.component);
            assert_eq!(*count, want.count);
        }
        (Algorithm::Cdlp { iterations }, Values::Cdlp { label, .. }) => {
            let want = cdlp::run(
                g,
                &cdlp::Config {
                    iterations: *iterations,
                },
            )
            .unwrap();
            assert_eq!(label, &want.label);
        }
        (a, v) => panic!("algorithm {a:?} gave {v:?}"),
    }
}

fn run_all(mgr: JobManager, snap: &Arc<Snapshot>, algs: &[Algorithm]) -> Vec<JobHandle> {
    let hs: Vec<JobHandle> = algs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            mgr.submit(Arc::clone(snap), JobSpec::new(format!("j{i}"), a.clone()))
                .expect("submit")
        })
        .collect();
    mgr.wait_all();
    hs
}

fn algorithm(kind: u8, root: u32, damping: u8, n: usize) -> Algorithm {
    let source = (root as usize % n).to_string();
    match kind % 6 {
        0 => Algorithm::Bfs { source },
        1 => Algorithm::Sssp {
            source,
            delta: None,
        },
        // Odd dampings store f32 contributions: their lanes form a group
        // of their own, bit-identical to the engine's Single precision.
        2 => Algorithm::PageRank {
            damping: 0.1 + f64::from(damping % 76) / 100.0,
            iterations: None,
            tolerance: pagerank::DEFAULT_TOLERANCE,
            max_iterations: pagerank::DEFAULT_MAX_ITERATIONS,
            personalization: None,
            precision: if damping % 2 == 1 {
                pagerank::Precision::Single
            } else {
                pagerank::Precision::Double
            },
        },
        3 => Algorithm::PageRank {
            damping: 0.85,
            iterations: Some(1 + damping as usize % 7),
            tolerance: 1e-6,
            max_iterations: 100,
            personalization: Some(vec![source]),
            precision: pagerank::Precision::Double,
        },
        4 => Algorithm::Wcc,
        _ => Algorithm::Cdlp {
            iterations: 1 + damping as usize % 10,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn every_mode_gives_the_engines_results_on_random_graphs_and_mixes(
        n in 1usize..300,
        directed in any::<bool>(),
        edges in prop::collection::vec((any::<u32>(), any::<u32>(), any::<u8>()), 0..1200),
        jobs in prop::collection::vec((any::<u8>(), any::<u32>(), any::<u8>()), 1..12),
    ) {
        let g = random_graph(n, &edges, directed);
        let snap = Catalog::new().publish("g", g);
        let algs: Vec<Algorithm> = jobs.iter().map(|&(k, r, d)| algorithm(k, r, d, n)).collect();
        let configs = [
            (ExecMode::Shared, false),
            (ExecMode::Shared, true),
            (ExecMode::Independent, false),
            (ExecMode::Sequential, false),
        ];
        for (mode, fuse_sssp) in configs {
            for (h, a) in run_all(manager_with(mode, fuse_sssp), &snap, &algs).iter().zip(&algs) {
                let out = h.take_result().unwrap_or_else(|e| panic!("{mode} {a:?}: {e}"));
                let ranks = if mode == ExecMode::Shared { Ranks::Close } else { Ranks::Exact };
                check_ranks(snap.graph(), a, out.values(), ranks);
            }
        }
        // PageRank in lanes only: bit for bit.
        let lanes = manager_cfg(ManagerConfig { pagerank_series: false, ..Default::default() });
        for (h, a) in run_all(lanes, &snap, &algs).iter().zip(&algs) {
            let out = h.take_result().unwrap_or_else(|e| panic!("lanes {a:?}: {e}"));
            check_exact(snap.graph(), a, out.values());
        }
        // SSSP in the chunk scan (the engine's vertex program) instead of
        // the engine's kernel.
        let in_scan = manager_cfg(ManagerConfig { sssp_in_scan: true, ..Default::default() });
        for (h, a) in run_all(in_scan, &snap, &algs).iter().zip(&algs) {
            let out = h.take_result().unwrap_or_else(|e| panic!("sssp_in_scan {a:?}: {e}"));
            check(snap.graph(), a, out.values());
        }
    }
}

/// A Kronecker-like graph big enough for several chunks and both directions.
fn medium_graph(directed: bool) -> Graph {
    let mut edges = Vec::new();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let n = 5000u32;
    for _ in 0..40_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = (x % u64::from(n)) as u32;
        let b = ((x >> 20) % u64::from(n / 8 + 1) * ((x >> 40) % 8 + 1)) as u32 % n;
        edges.push((a, b, (x >> 50) as u8));
    }
    random_graph(n as usize, &edges, directed)
}

#[test]
fn many_fused_jobs_at_different_supersteps_match_the_engine() {
    for directed in [true, false] {
        let snap = Catalog::new().publish("m", medium_graph(directed));
        let mgr = manager_with(ExecMode::Shared, directed);
        let mut algs = Vec::new();
        for i in 0..40u32 {
            algs.push(algorithm((i % 6) as u8, i * 97, (i * 13) as u8, 5000));
        }
        let mut hs = Vec::new();
        for (i, a) in algs.iter().enumerate() {
            hs.push(
                mgr.submit(Arc::clone(&snap), JobSpec::new(format!("j{i}"), a.clone()))
                    .unwrap(),
            );
            // Later jobs arrive while earlier ones run: they join at a boundary.
            if i % 10 == 9 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        mgr.wait_all();
        for (h, a) in hs.iter().zip(&algs) {
            check(snap.graph(), a, h.take_result().unwrap().values());
        }
        let st = mgr.stats();
        assert!(st.topology_bytes_read > 0 && st.passes > 0 && st.chunks > 1);
    }
}

#[test]
fn shared_mode_reads_less_topology_than_sequential() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    let algs: Vec<Algorithm> = (0..8)
        .map(|i| Algorithm::pagerank(0.5 + 0.05 * f64::from(i)))
        .collect();
    let bytes = |mode| {
        let mgr = manager(mode);
        {
            // Together, so that shared mode runs one series (jobs arriving
            // after it started would run in lanes, a second scan run).
            let _hold = mgr.hold_admission();
            for a in &algs {
                mgr.submit(Arc::clone(&snap), JobSpec::new("pr", a.clone()))
                    .unwrap();
            }
        }
        mgr.wait_all();
        mgr.stats().topology_bytes_read
    };
    let (s, m) = (bytes(ExecMode::Sequential), bytes(ExecMode::Shared));
    assert!(m * 4 < s, "shared read {m} bytes, sequential {s}");
}

#[test]
fn an_injected_panic_fails_only_its_own_job_even_inside_a_fused_group() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    for mode in [
        ExecMode::Shared,
        ExecMode::Independent,
        ExecMode::Sequential,
    ] {
        let mgr = manager(mode);
        let mut hs = Vec::new();
        for i in 0..6u32 {
            let mut spec = JobSpec::new(
                format!("bfs{i}"),
                Algorithm::Bfs {
                    source: (i * 7).to_string(),
                },
            );
            if i == 2 {
                spec.fault = Some(Fault::PanicAtSuperstep(2));
            }
            hs.push(mgr.submit(Arc::clone(&snap), spec).unwrap());
            let mut pr = JobSpec::new(format!("pr{i}"), Algorithm::pagerank(0.85));
            if i == 4 {
                pr.fault = Some(Fault::PanicAtSuperstep(3));
            }
            hs.push(mgr.submit(Arc::clone(&snap), pr).unwrap());
        }
        mgr.wait_all();
        for (k, h) in hs.iter().enumerate() {
            let st = h.status();
            if k == 4 || k == 9 {
                assert_eq!(st.state, JobState::Failed, "{mode} job {k}");
                assert!(st.error.unwrap().contains("injected fault"));
            } else {
                assert_eq!(st.state, JobState::Done, "{mode} job {k}: {:?}", st.error);
                let bfs_or_pr = if k % 2 == 0 {
                    Algorithm::Bfs {
                        source: (k as u32 / 2 * 7).to_string(),
                    }
                } else {
                    Algorithm::pagerank(0.85)
                };
                check(snap.graph(), &bfs_or_pr, h.take_result().unwrap().values());
            }
        }
    }
}

#[test]
fn cancelling_a_running_job_releases_it_and_leaves_the_others_alone() {
    let snap = Catalog::new().publish("m", medium_graph(false));
    let mgr = manager(ExecMode::Shared);
    let long = Algorithm::PageRank {
        damping: 0.85,
        iterations: Some(100_000),
        tolerance: 0.0,
        max_iterations: 100_000,
        personalization: None,
        precision: pagerank::Precision::Double,
    };
    let victim = mgr
        .submit(Arc::clone(&snap), JobSpec::new("long", long))
        .unwrap();
    let other = mgr
        .submit(
            Arc::clone(&snap),
            JobSpec::new("pr", Algorithm::pagerank(0.6)),
        )
        .unwrap();
    let bfs = mgr
        .submit(
            Arc::clone(&snap),
            JobSpec::new("bfs", Algorithm::Bfs { source: "3".into() }),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(victim.status().state, JobState::Running);
    victim.cancel();
    assert_eq!(
        victim.wait(Some(Duration::from_secs(20))),
        JobState::Cancelled
    );
    assert_eq!(victim.take_result().unwrap_err(), JobError::Cancelled);
    assert_eq!(victim.status().state_bytes, 0);
    mgr.wait_all();
    check(
        snap.graph(),
        &Algorithm::pagerank(0.6),
        other.take_result().unwrap().values(),
    );
    check(
        snap.graph(),
        &Algorithm::Bfs { source: "3".into() },
        bfs.take_result().unwrap().values(),
    );
}

#[test]
fn identical_pagerank_jobs_share_a_lane_and_each_gets_the_result() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    let mgr = lanes_manager();
    let pr = Algorithm::pagerank(0.7);
    let submit = |name: &str, a: &Algorithm| {
        mgr.submit(Arc::clone(&snap), JobSpec::new(name, a.clone()))
            .unwrap()
    };
    // The first job of the lane is cancelled at once: a twin takes its place.
    let first = submit("first", &pr);
    first.cancel();
    let twins: Vec<JobHandle> = (0..3).map(|i| submit(&format!("t{i}"), &pr)).collect();
    let other = submit("other", &Algorithm::pagerank(0.8));
    // A twin arriving while the lane runs gets the same (whole) result.
    std::thread::sleep(Duration::from_millis(5));
    let late = submit("late", &pr);
    mgr.wait_all();
    assert_eq!(first.take_result().unwrap_err(), JobError::Cancelled);
    let want = pagerank::run(
        snap.graph(),
        &pagerank::Config {
            damping: 0.7,
            ..Default::default()
        },
    )
    .unwrap();
    for h in twins.iter().chain([&late]) {
        match h.take_result().unwrap().values() {
            Values::PageRank {
                rank,
                iterations,
                converged,
            } => {
                assert_eq!(rank, &want.rank);
                assert_eq!((*iterations, *converged), (want.iterations, want.converged));
            }
            v => panic!("not pagerank: {v:?}"),
        }
    }
    check_exact(
        snap.graph(),
        &Algorithm::pagerank(0.8),
        other.take_result().unwrap().values(),
    );
}

#[test]
fn jobs_submitted_under_an_admission_hold_start_together() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    let mgr = manager(ExecMode::Shared);
    let pr = |d: f64| Algorithm::PageRank {
        damping: d,
        iterations: Some(20),
        tolerance: 0.0,
        max_iterations: 20,
        personalization: None,
        precision: pagerank::Precision::Double,
    };
    let hs: Vec<JobHandle> = {
        let _hold = mgr.hold_admission();
        let hs = (0..4)
            .map(|i| {
                let h = mgr
                    .submit(
                        Arc::clone(&snap),
                        JobSpec::new(format!("pr{i}"), pr(0.5 + 0.1 * f64::from(i))),
                    )
                    .unwrap();
                std::thread::sleep(Duration::from_millis(2));
                h
            })
            .collect();
        // Nothing starts while the hold lives.
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(mgr.stats().passes, 0);
        hs
    };
    mgr.wait_all();
    // One set of four lanes: 20 passes, not one more per late joiner.
    assert_eq!(mgr.stats().passes, 20);
    for (i, h) in hs.iter().enumerate() {
        check(
            snap.graph(),
            &pr(0.5 + 0.1 * i as f64),
            h.take_result().unwrap().values(),
        );
    }
}

/// A weighted path `0 → 1 → … → n−1` with unit weights: SSSP with Δ = 1
/// takes one superstep per vertex.
fn long_path(n: u32) -> Graph {
    let edges: Vec<(u32, u32, u8)> = (0..n - 1).map(|v| (v, v + 1, 0)).collect();
    random_graph(n as usize, &edges, true)
}

#[test]
fn cancelling_an_sssp_job_stops_the_engine_kernel_mid_run() {
    let snap = Catalog::new().publish("path", long_path(200_000));
    for mode in [ExecMode::Shared, ExecMode::Sequential] {
        let mgr = manager(mode);
        let h = mgr
            .submit(
                Arc::clone(&snap),
                JobSpec::new(
                    "sssp",
                    Algorithm::Sssp {
                        source: "0".into(),
                        delta: Some(1.0),
                    },
                ),
            )
            .unwrap();
        // The kernel reports its supersteps to the job while it runs.
        let t = std::time::Instant::now();
        while h.status().superstep < 10 {
            assert!(t.elapsed() < Duration::from_secs(60), "{mode}: no progress");
            std::thread::sleep(Duration::from_millis(1));
        }
        h.cancel();
        assert_eq!(h.wait(Some(Duration::from_secs(60))), JobState::Cancelled);
        assert_eq!(h.take_result().unwrap_err(), JobError::Cancelled);
        let steps = h.status().superstep;
        assert!(steps < 199_000, "{mode}: ran {steps} supersteps");
        mgr.wait_all();
    }
}

#[test]
fn a_deadline_stops_a_job_with_a_clear_error() {
    let snap = Catalog::new().publish("m", medium_graph(false));
    for mode in [ExecMode::Shared, ExecMode::Independent] {
        let mgr = manager(mode);
        let mut spec = JobSpec::new(
            "slow",
            Algorithm::PageRank {
                damping: 0.85,
                iterations: Some(1_000_000),
                tolerance: 0.0,
                max_iterations: 1,
                personalization: None,
                precision: pagerank::Precision::Double,
            },
        );
        spec.deadline = Some(Duration::from_millis(30));
        let h = mgr.submit(Arc::clone(&snap), spec).unwrap();
        assert_eq!(h.wait(Some(Duration::from_secs(20))), JobState::Failed);
        assert!(h.status().error.unwrap().contains("deadline"), "{mode}");
    }
}

#[test]
fn bad_parameters_fail_at_submission_and_alone() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    let mgr = manager(ExecMode::Shared);
    let bad_root = mgr
        .submit(
            Arc::clone(&snap),
            JobSpec::new(
                "b",
                Algorithm::Bfs {
                    source: "nope".into(),
                },
            ),
        )
        .unwrap();
    let bad_damping = mgr
        .submit(
            Arc::clone(&snap),
            JobSpec::new("p", Algorithm::pagerank(1.5)),
        )
        .unwrap();
    let good = mgr
        .submit(Arc::clone(&snap), JobSpec::new("w", Algorithm::Wcc))
        .unwrap();
    mgr.wait_all();
    assert_eq!(bad_root.status().state, JobState::Failed);
    assert!(bad_root
        .status()
        .error
        .unwrap()
        .contains("unknown source vertex 'nope'"));
    assert!(bad_damping.status().error.unwrap().contains("damping"));
    check(
        snap.graph(),
        &Algorithm::Wcc,
        good.take_result().unwrap().values(),
    );
    let unweighted = Catalog::new().publish(
        "u",
        Graph::from_edges(3, &[(0, 1)], &BuildOptions::directed()).unwrap(),
    );
    let s = mgr
        .submit(
            unweighted,
            JobSpec::new(
                "s",
                Algorithm::Sssp {
                    source: "0".into(),
                    delta: None,
                },
            ),
        )
        .unwrap();
    assert!(s.status().error.unwrap().contains("weights"));
}

#[test]
fn a_job_that_can_never_fit_is_refused_with_needed_and_available_bytes() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    let mgr = JobManager::new(ManagerConfig {
        memory_limit_bytes: Some(1000),
        llc_bytes: Some(1 << 20),
        ..Default::default()
    })
    .unwrap();
    match mgr.submit(snap, JobSpec::new("pr", Algorithm::pagerank(0.85))) {
        Err(JobError::WontFit {
            needed, available, ..
        }) => {
            assert_eq!(available, 1000);
            assert!(needed >= 24 * 5000);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn results_are_written_in_external_ids_and_snapshots_stay_pinned() {
    // External ids 10, 20, 30 (a reordered int map via import is not needed:
    // the identity map is the common case; string ids are checked in the CLI tests).
    let catalog = Catalog::new();
    let v1 = catalog.publish(
        "g",
        Graph::from_edges(3, &[(0, 1), (1, 2)], &BuildOptions::directed()).unwrap(),
    );
    let mgr = manager(ExecMode::Shared);
    let h = mgr
        .submit(
            Arc::clone(&v1),
            JobSpec::new("b", Algorithm::Bfs { source: "0".into() }),
        )
        .unwrap();
    // A new version published after submission is not seen by the job.
    let v2 = catalog.publish(
        "g",
        Graph::from_edges(4, &[(0, 3)], &BuildOptions::directed()).unwrap(),
    );
    let h2 = mgr
        .submit(
            v2,
            JobSpec::new("b2", Algorithm::Bfs { source: "0".into() }),
        )
        .unwrap();
    mgr.wait_all();
    let out = h.take_result().unwrap();
    assert_eq!(out.snapshot().id().0, 1);
    let mut csv = Vec::new();
    out.write_csv(&mut csv).unwrap();
    assert_eq!(
        String::from_utf8(csv).unwrap(),
        "id,depth,parent\n0,0,0\n1,1,0\n2,2,1\n"
    );
    let s2 = h2.status();
    assert_eq!(s2.snapshot, "g@v2");
    match h2.take_result().unwrap().values() {
        Values::Bfs { depth, .. } => assert_eq!(depth, &vec![0, u32::MAX, u32::MAX, 1]),
        v => panic!("{v:?}"),
    }
}

#[test]
fn the_state_peak_counts_results_made_while_their_group_still_holds_its_rows() {
    let g = medium_graph(false);
    let n = g.num_vertices() as u64;
    let snap = Catalog::new().publish("m", g);
    let mgr = lanes_manager();
    // Four variants with one iteration count end in the same superstep: the
    // lanes copy four rank vectors out while the rows (24 bytes per vertex
    // and lane) are still allocated.
    let algs: Vec<Algorithm> = [0.5, 0.6, 0.7, 0.8]
        .iter()
        .map(|&d| Algorithm::PageRank {
            damping: d,
            iterations: Some(5),
            tolerance: pagerank::DEFAULT_TOLERANCE,
            max_iterations: 100,
            personalization: None,
            precision: pagerank::Precision::Double,
        })
        .collect();
    let hs: Vec<JobHandle> = {
        let _hold = mgr.hold_admission();
        algs.iter()
            .enumerate()
            .map(|(i, a)| {
                mgr.submit(Arc::clone(&snap), JobSpec::new(format!("p{i}"), a.clone()))
                    .expect("submit")
            })
            .collect()
    };
    mgr.wait_all();
    let stats = mgr.stats();
    assert!(
        stats.peak_job_state_bytes >= 4 * (24 + 8) * n,
        "peak {} < rows + results {}",
        stats.peak_job_state_bytes,
        4 * 32 * n
    );
    for (h, a) in hs.iter().zip(&algs) {
        check_exact(snap.graph(), a, h.take_result().unwrap().values());
    }
}

/// PageRank jobs of the two precisions in one shared batch: each precision
/// forms its own lanes (f32 rows for Single), both scanned in the same 20
/// passes, and every job's ranks equal the engine's run alone in its
/// precision bit for bit.
#[test]
fn pagerank_precisions_fuse_apart_and_match_the_engine_bit_for_bit() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    let mgr = lanes_manager();
    let pr = |i: u32| Algorithm::PageRank {
        damping: 0.4 + 0.05 * f64::from(i),
        iterations: Some(20),
        tolerance: 0.0,
        max_iterations: 20,
        personalization: None,
        precision: if i % 2 == 1 {
            pagerank::Precision::Single
        } else {
            pagerank::Precision::Double
        },
    };
    let hs: Vec<JobHandle> = {
        let _hold = mgr.hold_admission();
        (0..10)
            .map(|i| {
                mgr.submit(Arc::clone(&snap), JobSpec::new(format!("pr{i}"), pr(i)))
                    .unwrap()
            })
            .collect()
    };
    mgr.wait_all();
    assert_eq!(mgr.stats().passes, 20);
    for (i, h) in (0u32..).zip(&hs) {
        check_exact(snap.graph(), &pr(i), h.take_result().unwrap().values());
    }
    // The two precisions' ranks differ (f32 rounding), so neither group
    // stood in for the other.
    let single = pagerank::run(
        snap.graph(),
        &pagerank::Config {
            damping: 0.45,
            iterations: Some(20),
            precision: pagerank::Precision::Single,
            ..Default::default()
        },
    )
    .unwrap();
    let double = pagerank::run(
        snap.graph(),
        &pagerank::Config {
            damping: 0.45,
            iterations: Some(20),
            ..Default::default()
        },
    )
    .unwrap();
    assert_ne!(single.rank, double.rank);
}

/// PageRank jobs that arrive together and differ in damping, precision and
/// stopping rule run as damping series (one per precision): every job's
/// ranks equal the engine's within rounding, with the engine's iteration
/// count and `converged`, dampings 0 and 0.99 included. A job that arrives
/// once the series runs starts a series of its own (within rounding too); a
/// tolerance-stopped job on a graph with isolated vertices (the engine
/// eliminates those) runs in lanes and matches bit for bit.
#[test]
fn damping_series_match_the_engine_and_late_jobs_start_their_own() {
    let base = medium_graph(true);
    // The same arcs plus 100 isolated vertices, undirected.
    let edges: Vec<(u32, u32, u8)> = (0..base.num_vertices() as VertexId)
        .flat_map(|u| base.out_neighbors(u).iter().map(move |&v| (u, v, 1)))
        .collect();
    let with_isolated = random_graph(base.num_vertices() + 100, &edges, false);
    for (g, isolated) in [(base, false), (with_isolated, true)] {
        let snap = Catalog::new().publish("m", g);
        let mgr = manager(ExecMode::Shared);
        let pr = |i: u32| Algorithm::PageRank {
            damping: [0.0, 0.3, 0.5, 0.85, 0.99, 0.7][i as usize % 6],
            iterations: i.is_multiple_of(3).then_some(5 + i as usize),
            tolerance: if i.is_multiple_of(3) { 0.0 } else { 1e-9 },
            max_iterations: 60,
            personalization: None,
            precision: if i % 2 == 1 {
                pagerank::Precision::Single
            } else {
                pagerank::Precision::Double
            },
        };
        // A long job keeps the series running while the late one arrives.
        let long = Algorithm::PageRank {
            damping: 0.6,
            iterations: Some(400),
            tolerance: 0.0,
            max_iterations: 400,
            personalization: None,
            precision: pagerank::Precision::Double,
        };
        let (hs, long_h) = {
            let _hold = mgr.hold_admission();
            let hs: Vec<JobHandle> = (0..12)
                .map(|i| {
                    mgr.submit(Arc::clone(&snap), JobSpec::new(format!("pr{i}"), pr(i)))
                        .unwrap()
                })
                .collect();
            let long_h = mgr
                .submit(Arc::clone(&snap), JobSpec::new("long", long.clone()))
                .unwrap();
            (hs, long_h)
        };
        while long_h.status().superstep < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let late = pr(3);
        let late_h = mgr
            .submit(Arc::clone(&snap), JobSpec::new("late", late.clone()))
            .unwrap();
        mgr.wait_all();
        let mut rounded = 0;
        for (i, h) in (0u32..).zip(&hs) {
            let a = pr(i);
            let values = h.take_result().unwrap();
            if let (
                Values::PageRank { rank, .. },
                Algorithm::PageRank {
                    damping,
                    iterations,
                    tolerance,
                    max_iterations,
                    precision,
                    ..
                },
            ) = (values.values(), &a)
            {
                let cfg = pagerank::Config {
                    damping: *damping,
                    iterations: *iterations,
                    tolerance: *tolerance,
                    max_iterations: *max_iterations,
                    precision: *precision,
                    ..Default::default()
                };
                let want = pagerank::run(snap.graph(), &cfg).unwrap();
                rounded += usize::from(*damping > 0.0 && rank != &want.rank);
            }
            // Tolerance-stopped jobs on the graph with isolated vertices
            // run in lanes: exact.
            let exact = isolated && !i.is_multiple_of(3);
            check_ranks(
                snap.graph(),
                &a,
                values.values(),
                if exact { Ranks::Exact } else { Ranks::Close },
            );
        }
        // The series sum in another order than the engine: some ranks
        // differ in the last bits (in lanes none would).
        assert!(rounded > 0, "no job ran in a series");
        check(snap.graph(), &long, long_h.take_result().unwrap().values());
        check(snap.graph(), &late, late_h.take_result().unwrap().values());
    }
}

/// CDLP jobs stop at a fixed point: a count of a billion (hours if run)
/// finishes after a few supersteps with the engine's labels, beside a job
/// of three iterations in the same group.
#[test]
fn cdlp_jobs_stop_at_a_fixed_point() {
    // Two 4-cliques.
    let pairs: Vec<(u32, u32)> = (0..8u32)
        .flat_map(|u| {
            (0..8)
                .filter(move |&v| v != u && v / 4 == u / 4)
                .map(move |v| (u, v))
        })
        .collect();
    let g = Graph::from_edges(8, &pairs, &BuildOptions::undirected()).unwrap();
    let snap = Catalog::new().publish("cliques", g);
    let algs = [
        Algorithm::Cdlp { iterations: 3 },
        Algorithm::Cdlp {
            iterations: 1_000_000_000,
        },
    ];
    let mgr = JobManager::new(ManagerConfig {
        threads: 2,
        ..Default::default()
    })
    .expect("manager");
    let hs = run_all(mgr, &snap, &algs);
    for (h, a) in hs.iter().zip(&algs) {
        assert!(h.status().superstep <= 4, "{:?}", h.status());
        let out = h.take_result().unwrap();
        check(snap.graph(), a, out.values());
        match out.values() {
            Values::Cdlp { label, iterations } => {
                assert_eq!(label, &vec![0, 0, 0, 0, 4, 4, 4, 4]);
                assert_eq!(
                    Algorithm::Cdlp {
                        iterations: *iterations
                    },
                    *a
                );
            }
            v => panic!("{v:?}"),
        }
    }
}

/// With a cache too small for two tasks' gathered state, PageRank and CDLP
/// visit the chunks in runs of their own (more topology read), and the
/// results are the same as when they share every chunk.
#[test]
fn tasks_whose_state_outgrows_the_cache_scan_apart_with_equal_results() {
    let snap = Catalog::new().publish("m", medium_graph(true));
    let algs = vec![
        Algorithm::pagerank(0.85),
        Algorithm::pagerank(0.5),
        Algorithm::Cdlp { iterations: 6 },
        Algorithm::Bfs { source: "7".into() },
    ];
    let mut read = Vec::new();
    for llc in [16u64 << 10, 1 << 30] {
        let mgr = JobManager::new(ManagerConfig {
            threads: 2,
            llc_bytes: Some(llc),
            ..Default::default()
        })
        .expect("manager");
        let hs: Vec<JobHandle> = {
            let _hold = mgr.hold_admission();
            algs.iter()
                .enumerate()
                .map(|(i, a)| {
                    mgr.submit(Arc::clone(&snap), JobSpec::new(format!("j{i}"), a.clone()))
                        .unwrap()
                })
                .collect()
        };
        mgr.wait_all();
        for (h, a) in hs.iter().zip(&algs) {
            check(snap.graph(), a, h.take_result().unwrap().values());
        }
        read.push(mgr.stats().topology_bytes_read);
    }
    assert!(
        read[0] > read[1],
        "apart {} vs together {}",
        read[0],
        read[1]
    );
}

#[test]
fn a_version_is_released_once_no_job_or_result_holds_it() {
    for mode in [
        ExecMode::Shared,
        ExecMode::Sequential,
        ExecMode::Independent,
    ] {
        let cat = Catalog::new();
        let ring = |n: u32| {
            let e: Vec<(u32, u32)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
            Graph::from_edges(n as usize, &e, &BuildOptions::undirected()).unwrap()
        };
        let v1 = cat.publish("g", ring(500));
        let v1_bytes = v1.graph().topology_bytes();
        let weak = Arc::downgrade(&v1);
        let mgr = manager(mode);
        let hs: Vec<JobHandle> = [Algorithm::Wcc, Algorithm::pagerank(0.85)]
            .into_iter()
            .map(|a| mgr.submit(Arc::clone(&v1), JobSpec::new("j", a)).unwrap())
            .collect();
        drop(v1);
        for h in &hs {
            h.wait(None);
        }
        let out = hs[0].take_result().unwrap();
        drop(hs);
        assert!(
            weak.upgrade().is_some(),
            "{mode:?}: a result taken refers to its version"
        );
        drop(out);
        // Version 2 is published and a job runs on it.
        let v2 = cat.publish("g", ring(600));
        let h = mgr
            .submit(Arc::clone(&v2), JobSpec::new("k", Algorithm::Wcc))
            .unwrap();
        h.wait(None);
        assert!(weak.upgrade().is_none(), "{mode:?}: version 1 is released");
        assert_eq!(
            mgr.statuses().len(),
            1,
            "{mode:?}: forgotten jobs are left out"
        );
        assert_eq!(
            mgr.stats().topology_bytes,
            v1_bytes + v2.graph().topology_bytes(),
            "{mode:?}: every version jobs ran on still counts once"
        );
    }
}

/// An idle manager with a gather waits for a burst to pause before it
/// admits it, so jobs submitted a little apart start as one wave (one
/// damping series: the passes are one job's supersteps); a steady stream
/// is admitted after `max` at the latest; without a gather a lone job
/// starts at once.
#[test]
fn gather_admits_a_burst_as_one_wave() {
    use plexus_jobs::Gather;
    let snap = Catalog::new().publish("m", medium_graph(false));
    let pr = |d: f64| Algorithm::PageRank {
        damping: d,
        iterations: Some(12),
        tolerance: 0.0,
        max_iterations: 12,
        personalization: None,
        precision: pagerank::Precision::Double,
    };
    let queued = |h: &JobHandle| {
        let s = h.status();
        s.latency_seconds.unwrap() - s.run_seconds.unwrap()
    };
    let gathered = manager_cfg(ManagerConfig {
        gather: Some(Gather {
            quiet: Duration::from_millis(300),
            max: Duration::from_secs(20),
        }),
        ..Default::default()
    });
    let a = gathered
        .submit(Arc::clone(&snap), JobSpec::new("a", pr(0.85)))
        .unwrap();
    std::thread::sleep(Duration::from_millis(60));
    let b = gathered
        .submit(Arc::clone(&snap), JobSpec::new("b", pr(0.8)))
        .unwrap();
    gathered.wait_all();
    check(snap.graph(), &pr(0.85), a.take_result().unwrap().values());
    check(snap.graph(), &pr(0.8), b.take_result().unwrap().values());
    assert!(
        queued(&a) >= 0.3,
        "a waited for the burst to pause: {}",
        queued(&a)
    );
    assert_eq!(
        gathered.stats().passes,
        a.status().superstep,
        "both jobs ran in the same passes"
    );

    // A lone job waits at most `max`, however long `quiet` is.
    let capped = manager_cfg(ManagerConfig {
        gather: Some(Gather {
            quiet: Duration::from_secs(60),
            max: Duration::from_millis(50),
        }),
        ..Default::default()
    });
    let c = capped
        .submit(Arc::clone(&snap), JobSpec::new("c", pr(0.85)))
        .unwrap();
    assert_eq!(c.wait(Some(Duration::from_secs(30))), JobState::Done);
    assert!(queued(&c) >= 0.05 && queued(&c) < 30.0, "{}", queued(&c));

    // Without a gather the first job starts at once and a later one
    // joins at a boundary: more passes than one job's supersteps.
    let plain = manager(ExecMode::Shared);
    let d = plain
        .submit(Arc::clone(&snap), JobSpec::new("d", pr(0.85)))
        .unwrap();
    while d.status().superstep < 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let e = plain
        .submit(Arc::clone(&snap), JobSpec::new("e", pr(0.8)))
        .unwrap();
    plain.wait_all();
    check(snap.graph(), &pr(0.8), e.take_result().unwrap().values());
    assert!(plain.stats().passes > d.status().superstep);
}
