//! Shared passes: a batch of jobs through one walk per superstep gives every
//! job the result of its solo out-of-core run (bit for bit: the same
//! visitors over the same plan) and of the in-memory executor (exact where
//! exact; PageRank within the drivers' bound), and reads fewer bytes than
//! the solo runs together.
use plexus_engine::algo::{bfs, cdlp, coloring, kcore, mis, pagerank, sssp, wcc};
use plexus_engine::driver::Driver;
use plexus_engine::program::{Executor, InMemory};
use plexus_graph::{BuildOptions, DataDir, DuplicatePolicy, Graph, Provenance, VertexOrder};
use plexus_ooc::shared::SharedJob;
use plexus_ooc::{IoMode, OocExecutor, OocOptions};
use proptest::prelude::*;

/// A job's result as numbers (integers exact, ranks as floats).
#[derive(Clone, Debug, PartialEq)]
enum Res {
    Ints(Vec<u64>),
    Floats(Vec<f64>),
}

/// The jobs of a batch.
#[derive(Clone, Copy, Debug)]
enum Alg {
    Bfs(u32),
    Sssp(u32),
    PageRank,
    Ppr(u32),
    Wcc,
    Cdlp,
    Coloring,
    Mis,
    Kcore,
}

fn ints<T: Copy + Into<u64>>(v: &[T]) -> Res {
    Res::Ints(v.iter().map(|&x| x.into()).collect())
}

fn pr_config(a: Alg) -> pagerank::Config {
    pagerank::Config {
        method: pagerank::Method::Jacobi,
        personalization: match a {
            Alg::Ppr(s) => Some(vec![s]),
            _ => None,
        },
        ..Default::default()
    }
}

/// Runs `a` alone on `e`.
fn solo<E: Executor>(a: Alg, e: &E) -> Res {
    match a {
        Alg::Bfs(s) => ints(
            &bfs::run_on(
                e,
                &bfs::Config {
                    source: s,
                    ..Default::default()
                },
            )
            .unwrap()
            .depth,
        ),
        Alg::Sssp(s) => Res::Floats(
            sssp::run_on(
                e,
                &sssp::Config {
                    source: s,
                    delta: None,
                },
            )
            .unwrap()
            .dist,
        ),
        Alg::PageRank | Alg::Ppr(_) => {
            Res::Floats(pagerank::run_on(e, &pr_config(a)).unwrap().rank)
        }
        Alg::Wcc => ints(&wcc::run_on(e, &wcc::Config::default()).unwrap().component),
        Alg::Cdlp => ints(
            &cdlp::run_on(e, &cdlp::Config { iterations: 5 })
                .unwrap()
                .label,
        ),
        Alg::Coloring => ints(
            &coloring::run_on(e, &coloring::Config { seed: 3 })
                .unwrap()
                .color,
        ),
        Alg::Mis => ints(&mis::run_on(e, &mis::Config { seed: 5 }).unwrap().in_set),
        Alg::Kcore => ints(&kcore::run_on(e, &kcore::Config { k: None }).unwrap().core),
    }
}

fn job<'a, D: Driver + 'a>(
    exec: &OocExecutor,
    d: D,
    f: impl FnOnce(D::Output) -> Res + Send + 'a,
) -> SharedJob<'a, Res> {
    SharedJob::new(exec, "job", d, f).unwrap()
}

/// `a` as a job of a shared batch on `exec`.
fn shared_job<'a>(a: Alg, exec: &OocExecutor) -> SharedJob<'a, Res> {
    let v = exec.graph() as &dyn plexus_engine::program::GraphView;
    match a {
        Alg::Bfs(s) => {
            let cfg = bfs::Config {
                source: s,
                ..Default::default()
            };
            job(exec, bfs::BfsDriver::new(v, &cfg).unwrap(), |o| {
                ints(&o.depth)
            })
        }
        Alg::Sssp(s) => {
            let cfg = sssp::Config {
                source: s,
                delta: None,
            };
            job(exec, sssp::SsspDriver::new(v, &cfg).unwrap(), |o| {
                Res::Floats(o.dist)
            })
        }
        Alg::PageRank | Alg::Ppr(_) => job(
            exec,
            pagerank::PageRankDriver::new(v, &pr_config(a)).unwrap(),
            |o| Res::Floats(o.rank),
        ),
        Alg::Wcc => job(
            exec,
            wcc::WccDriver::new(v, &wcc::Config::default()).unwrap(),
            |o| ints(&o.component),
        ),
        Alg::Cdlp => job(
            exec,
            cdlp::CdlpDriver::new(v, &cdlp::Config { iterations: 5 }).unwrap(),
            |o| ints(&o.label),
        ),
        Alg::Coloring => job(
            exec,
            coloring::ColoringDriver::new(v, &coloring::Config { seed: 3 }).unwrap(),
            |o| ints(&o.color),
        ),
        Alg::Mis => job(
            exec,
            mis::MisDriver::new(v, &mis::Config { seed: 5 }).unwrap(),
            |o| ints(&o.in_set),
        ),
        Alg::Kcore => job(
            exec,
            kcore::KcoreDriver::new(v, &kcore::Config { k: None }).unwrap(),
            |o| ints(&o.core),
        ),
    }
}

/// Whether two results agree by the contract's rules: integers exactly,
/// floats within `tol` (infinities equal).
fn agree(a: &Res, b: &Res, tol: f64) -> Result<(), String> {
    match (a, b) {
        (Res::Ints(x), Res::Ints(y)) if x == y => Ok(()),
        (Res::Floats(x), Res::Floats(y)) if x.len() == y.len() => {
            match x
                .iter()
                .zip(y)
                .position(|(p, q)| !(p == q || (p - q).abs() <= tol))
            {
                None => Ok(()),
                Some(v) => Err(format!("vertex {v}: {} vs {}", x[v], y[v])),
            }
        }
        _ => Err(format!("{a:?} vs {b:?}")),
    }
}

fn graph(n: usize, edges: &[(u32, u32, f64)], directed: bool, weighted: bool) -> Graph {
    let opts = BuildOptions {
        directed,
        duplicates: DuplicatePolicy::Drop,
        order: VertexOrder::None.into(),
        ..BuildOptions::default()
    };
    if weighted {
        Graph::from_weighted_edges(n, edges, &opts).unwrap()
    } else {
        let pairs: Vec<(u32, u32)> = edges.iter().map(|e| (e.0, e.1)).collect();
        Graph::from_edges(n, &pairs, &opts).unwrap()
    }
}

/// Runs `algs` shared on `g` and checks each against its solo run out of
/// core and in memory; returns (bytes read shared, bytes read solo summed).
fn check_batch(g: &Graph, algs: &[Alg], io: IoMode, tuning: (u64, u64, u64)) -> (u64, u64) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("g", g, &Provenance::default(), false)
        .unwrap();
    let file = dir.join("graph.plx");
    let opts = OocOptions {
        io,
        tuning: Some(tuning),
        ..Default::default()
    };
    let exec = OocExecutor::open_shared(&file, &opts, &vec![0; algs.len()]).unwrap();
    let jobs = algs.iter().map(|&a| shared_job(a, &exec)).collect();
    let (got, report) = exec.run_shared(jobs).unwrap();
    assert_eq!(got.len(), algs.len());
    assert_eq!(report.jobs.len(), algs.len());
    let mut solo_bytes = 0;
    for (a, got) in algs.iter().zip(&got) {
        let one = OocExecutor::open(
            &file,
            &OocOptions {
                weights: matches!(a, Alg::Sssp(_)),
                ..opts.clone()
            },
        )
        .unwrap();
        let alone = solo(*a, &one);
        assert!(one.take_fault().is_none());
        solo_bytes += one.report().bytes_read;
        agree(got, &alone, 0.0).unwrap_or_else(|e| panic!("{a:?} shared vs solo: {e}"));
        let mem = solo(*a, &InMemory::new(g));
        agree(got, &mem, pagerank::DRIVER_RANK_BOUND)
            .unwrap_or_else(|e| panic!("{a:?} shared vs in memory: {e}"));
    }
    let logs = exec.log_dir().to_path_buf();
    drop(exec);
    assert!(!logs.exists(), "log directory left behind");
    (report.bytes_read, solo_bytes)
}

fn every(n: u32, weighted: bool) -> Vec<Alg> {
    let mut v = vec![
        Alg::Bfs(0),
        Alg::Bfs(n / 2),
        Alg::PageRank,
        Alg::Ppr(n / 3),
        Alg::Wcc,
        Alg::Cdlp,
        Alg::Coloring,
        Alg::Mis,
        Alg::Kcore,
    ];
    if weighted {
        v.push(Alg::Sssp(1 % n));
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_job_of_a_shared_batch_gets_its_solo_result(
        n in 1usize..300,
        raw in proptest::collection::vec((0u32..1000, 0u32..1000, 0u32..=20), 0..1500),
        directed in any::<bool>(),
        weighted in any::<bool>(),
        full in any::<bool>(),
        read_pages in 2u64..6,
        interval in 64u64..2048,
    ) {
        let edges: Vec<(u32, u32, f64)> = raw
            .iter()
            .map(|&(u, v, w)| (u % n as u32, v % n as u32, f64::from(w) * 0.5))
            .collect();
        let g = graph(n, &edges, directed, weighted);
        let io = if full { IoMode::Full } else { IoMode::Active };
        let weighted = g.is_weighted();
        check_batch(&g, &every(n as u32, weighted), io, (read_pages * 4096, 256, interval));
    }
}

#[test]
fn a_shared_batch_reads_fewer_bytes_than_its_jobs_alone() {
    use rand::{Rng, SeedableRng};
    let n = 20_000u32;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    let edges: Vec<(u32, u32, f64)> = (0..120_000)
        .map(|_| (rng.gen_range(0..n), rng.gen_range(0..n), 1.0))
        .collect();
    let g = graph(n as usize, &edges, true, false);
    let algs = [
        Alg::PageRank,
        Alg::PageRank,
        Alg::Ppr(3),
        Alg::Bfs(1),
        Alg::Bfs(2),
        Alg::Bfs(3),
        Alg::Wcc,
    ];
    let (shared, solo) = check_batch(&g, &algs, IoMode::Active, (16 * 4096, 4096, 32 * 1024));
    assert!(shared > 0);
    assert!(
        (shared as f64) < 0.6 * solo as f64,
        "shared read {shared} bytes, the jobs alone {solo}"
    );
}

#[test]
fn a_shared_plan_splits_the_logs_across_jobs_and_refuses_too_small_a_budget() {
    let edges: Vec<(u32, u32, f64)> = (0..5000u32)
        .map(|i| (i % 1000, (i * 31 + 7) % 1000, 1.0))
        .collect();
    let g = graph(1000, &edges, true, false);
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("g", &g, &Provenance::default(), false)
        .unwrap();
    let file = dir.join("graph.plx");
    let opts = OocOptions {
        memory: 4 << 20,
        ..Default::default()
    };
    let one = OocExecutor::open_shared(&file, &opts, &[24_000]).unwrap();
    let four = OocExecutor::open_shared(&file, &opts, &[24_000; 4]).unwrap();
    assert!(four.plan().log_bytes * 4 <= one.plan().log_bytes);
    assert!(four.plan().fixed_bytes > one.plan().fixed_bytes);
    let tiny = OocOptions {
        memory: 200 << 10,
        ..Default::default()
    };
    let e = OocExecutor::open_shared(&file, &tiny, &[24_000; 8]).unwrap_err();
    assert!(e.to_string().contains("at least"), "{e}");
}

#[test]
fn a_job_that_joins_late_gets_its_solo_result() {
    let edges: Vec<(u32, u32, f64)> = (0..6000u32)
        .map(|i| (i % 1500, (i * 37 + 11) % 1500, 1.0))
        .collect();
    let g = graph(1500, &edges, true, false);
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path())
        .save("g", &g, &Provenance::default(), false)
        .unwrap();
    let file = dir.join("graph.plx");
    let opts = OocOptions {
        tuning: Some((4 * 4096, 512, 4096)),
        ..Default::default()
    };
    let exec = OocExecutor::open_shared(&file, &opts, &[0, 0, 0]).unwrap();
    let jobs = vec![
        shared_job(Alg::PageRank, &exec),
        shared_job(Alg::Bfs(3), &exec).joining_at(0.05),
        shared_job(Alg::Cdlp, &exec).joining_at(0.5),
    ];
    let (got, report) = exec.run_shared(jobs).unwrap();
    let alone = OocExecutor::open(&file, &opts).unwrap();
    for (a, got) in [Alg::PageRank, Alg::Bfs(3), Alg::Cdlp].iter().zip(&got) {
        agree(got, &solo(*a, &alone), 0.0).unwrap_or_else(|e| panic!("{a:?}: {e}"));
    }
    assert!(
        report.jobs[1].joined_seconds >= 0.05,
        "{:?}",
        report.jobs[1]
    );
    // Nothing ran between the others' end and the last job's time: the
    // batch waited for it.
    assert!(report.jobs[2].joined_seconds >= 0.5, "{:?}", report.jobs[2]);
    assert!(report.jobs[2].seconds >= report.jobs[2].joined_seconds);
}
