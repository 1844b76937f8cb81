//! `plexus run ALGO GRAPH --executor dist [--ranks N]`: the algorithm's
//! driver on the distributed executor (`plexus-dist`). Without MPI the
//! ranks are `--ranks N` threads of this process; in a build with the `mpi`
//! feature started by `mpirun -np N plexus run ...`, each process is one
//! rank. Rank 0 prints the summary and writes `--out` (external ids);
//! `--json` adds, per rank and superstep, the mode, the bytes sent and
//! received, and compute versus communication time. Kept apart from
//! `run.rs`, like `ooc.rs`: `run::run` hands over to [`run`].
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use plexus_dist::comm::{run_threads, Comm};
use plexus_dist::DistExecutor;
use plexus_engine::algo;
use plexus_engine::program::Executor;
use plexus_engine::registry::{Algorithm, ExecutorKind};
use plexus_graph::{Graph, VertexId};
use plexus_jobs::request::{Column, Outcome};
use serde_json::{json, Map, Value};

use crate::fmt::{secs, thousands};
use crate::graph_cmds::Ctx;
use crate::run::RunArgs;

/// The options of the distributed executor.
#[derive(Args, Debug, Clone, Default)]
pub struct DistArgs {
    /// --executor dist: the number of ranks, run as threads of this process (default 2);
    /// under mpirun the MPI world's size is the rank count and --ranks is refused.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub ranks: Option<u32>,
}

/// Refuses `--ranks` without `--executor dist`.
pub fn check_flags(a: &RunArgs) -> anyhow::Result<()> {
    if a.executor != ExecutorKind::Dist && a.dist.ranks.is_some() {
        bail!("--ranks applies to --executor dist only");
    }
    Ok(())
}

/// How long a thread rank waits for another before it names it lost.
const THREAD_TIMEOUT: Duration = Duration::from_secs(600);

/// What one rank reports.
struct RankRun {
    outcome: Outcome,
    /// Every rank's statistics (JSON), gathered on every rank.
    ranks: Vec<Value>,
}

/// Runs `a` on the distributed executor.
pub fn run(ctx: &Ctx, a: &RunArgs) -> anyhow::Result<()> {
    let entry = crate::run::driver_entry(a, "dist")?;
    if a.verify || a.repeat > 1 || a.warmup > 0.0 {
        bail!("--executor dist does not take --verify, --repeat or --warmup yet");
    }
    if let Some(out) = &a.out {
        crate::out::check(out, &["csv", "parquet"])?;
    }
    let t = Instant::now();
    let g = crate::live::open_latest(&ctx.data, &a.graph)?;
    if g.num_vertices() == 0 {
        bail!("graph '{}' has no vertices", a.graph);
    }
    let source = match &a.source {
        Some(s) => g
            .ids()
            .lookup_str(s)
            .with_context(|| format!("unknown source vertex '{s}' in graph '{}'", a.graph))?,
        None => 0,
    };
    let load = t.elapsed().as_secs_f64();
    #[cfg(feature = "mpi")]
    if plexus_dist::mpi::launched_by_mpirun() {
        if a.dist.ranks.is_some() {
            bail!("--ranks is for thread ranks; under mpirun the rank count is -np");
        }
        let (_universe, comm) = plexus_dist::mpi::init()?;
        let done = rank_run(&comm, &g, entry.algorithm, a, source).and_then(|r| {
            if comm.rank() == 0 {
                report(ctx, a, entry.name, &g, load, comm.size(), "mpi", r)?;
            }
            Ok(())
        });
        if let Err(e) = done {
            // The other ranks may wait in a collective: end them all.
            eprintln!("plexus: rank {}: {e:#}", comm.rank());
            plexus_dist::mpi::abort(1);
        }
        return Ok(());
    }
    let ranks = a.dist.ranks.unwrap_or(2) as usize;
    let mut results = run_threads(ranks, THREAD_TIMEOUT, |comm| {
        rank_run(&comm, &g, entry.algorithm, a, source)
            .with_context(|| format!("rank {}", comm.rank()))
    })?;
    // The first failure is the cause; later ones are its echoes.
    for (r, res) in results.iter().enumerate() {
        match res {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => bail!("{e:#}"),
            Err(_) => bail!("rank {r} panicked"),
        }
    }
    let Some(Ok(Ok(first))) = results.drain(..1).next() else {
        bail!("no rank 0");
    };
    report(ctx, a, entry.name, &g, load, ranks, "threads", first)
}

/// One rank's run: executor, driver, statistics gathered from every rank.
fn rank_run<C: Comm>(
    comm: &C,
    g: &Graph,
    algorithm: Algorithm,
    a: &RunArgs,
    source: VertexId,
) -> anyhow::Result<RankRun> {
    let exec = DistExecutor::new(comm, g)?;
    let t = Instant::now();
    let mut outcome = execute(&exec, algorithm, a, source)?;
    outcome.compute_seconds = t.elapsed().as_secs_f64();
    if let Some(f) = exec.fault() {
        return Err(f.into());
    }
    let (sent, received) = exec.bytes();
    let mine = json!({
        "rank": comm.rank(),
        "masters": exec.part().masters().len(),
        "edge_entries": exec.part().num_entries(),
        "edge_bytes": exec.part().bytes(),
        "bytes_sent": sent,
        "bytes_received": received,
        "compute_seconds": outcome.compute_seconds,
        "supersteps": exec.steps(),
    });
    let all = comm.all_gather(serde_json::to_string(&mine)?.as_bytes())?;
    let ranks = all
        .iter()
        .map(|b| serde_json::from_slice(b))
        .collect::<Result<Vec<Value>, _>>()?;
    Ok(RankRun { outcome, ranks })
}

/// Runs the algorithm's driver on `exec`: the summary, per-vertex columns
/// and iteration count.
fn execute<E: Executor>(
    exec: &E,
    algorithm: Algorithm,
    a: &RunArgs,
    source: VertexId,
) -> anyhow::Result<Outcome> {
    let mut s = Map::new();
    let mut iterations = None;
    let columns: Vec<(&'static str, Column)> = match algorithm {
        Algorithm::Bfs => {
            let cfg = algo::bfs::Config {
                source,
                ..Default::default()
            };
            let o = algo::bfs::run_on(exec, &cfg)?;
            s.insert(
                "reached".into(),
                json!(o.depth.iter().filter(|&&d| d != u32::MAX).count()),
            );
            iterations = Some(o.iterations);
            vec![
                ("depth", Column::Depth(o.depth)),
                ("parent", Column::Vertex(o.parent)),
            ]
        }
        Algorithm::Sssp => {
            let cfg = algo::sssp::Config {
                source,
                delta: a.delta,
            };
            let o = algo::sssp::run_on(exec, &cfg)?;
            let reached = o.dist.iter().filter(|d| d.is_finite()).count();
            s.insert("reached".into(), json!(reached));
            iterations = Some(o.iterations);
            vec![
                ("distance", Column::Float(o.dist)),
                ("parent", Column::Vertex(o.parent)),
            ]
        }
        Algorithm::PageRank | Algorithm::Ppr => {
            let o = pagerank(exec, algorithm, a, source)?;
            s.insert("converged".into(), json!(o.converged));
            s.insert("change".into(), json!(o.change));
            iterations = Some(o.iterations);
            vec![("rank", Column::Float(o.rank))]
        }
        Algorithm::Wcc => {
            let o = algo::wcc::run_on(exec, &algo::wcc::Config::default())?;
            s.insert("components".into(), json!(o.count));
            vec![("component", Column::Vertex(o.component))]
        }
        Algorithm::Cdlp => {
            let cfg = algo::cdlp::Config {
                iterations: a.iterations.unwrap_or(algo::cdlp::DEFAULT_ITERATIONS),
            };
            let o = algo::cdlp::run_on(exec, &cfg)?;
            let mut labels = o.label.clone();
            labels.sort_unstable();
            labels.dedup();
            s.insert("communities".into(), json!(labels.len()));
            iterations = Some(o.iterations);
            vec![("label", Column::Natural(o.label))]
        }
        Algorithm::Coloring => {
            let cfg = algo::coloring::Config {
                seed: a.seed.unwrap_or(algo::coloring::DEFAULT_SEED),
            };
            let o = algo::coloring::run_on(exec, &cfg)?;
            s.insert("colors".into(), json!(o.num_colors));
            vec![(
                "color",
                Column::Int(o.color.iter().map(|&c| u64::from(c)).collect()),
            )]
        }
        Algorithm::Mis => {
            let cfg = algo::mis::Config {
                seed: a.seed.unwrap_or(algo::mis::DEFAULT_SEED),
            };
            let o = algo::mis::run_on(exec, &cfg)?;
            s.insert("size".into(), json!(o.size));
            vec![("in_set", Column::Bool(o.in_set))]
        }
        Algorithm::Kcore => {
            let o = algo::kcore::run_on(exec, &algo::kcore::Config { k: a.k })?;
            s.insert("max_core".into(), json!(o.max_core));
            vec![(
                "core",
                Column::Int(o.core.iter().map(|&c| u64::from(c)).collect()),
            )]
        }
        Algorithm::Betweenness => {
            let cfg = algo::betweenness::Config {
                samples: a.samples,
                seed: a.seed.unwrap_or(algo::betweenness::DEFAULT_SEED),
                ..Default::default()
            };
            let o = algo::betweenness::run_on(exec, &cfg)?;
            s.insert("sources_used".into(), json!(o.sources_used));
            vec![("betweenness", Column::Float(o.centrality))]
        }
        _ => bail!("--executor dist does not run this algorithm"),
    };
    Ok(Outcome {
        columns,
        summary: s,
        iterations,
        verified: None,
        compute_seconds: 0.0,
    })
}

/// PageRank or personalised PageRank: the driver's Jacobi iteration in
/// double precision.
fn pagerank<E: Executor>(
    exec: &E,
    algorithm: Algorithm,
    a: &RunArgs,
    source: VertexId,
) -> anyhow::Result<algo::pagerank::Output> {
    let n = exec.view().num_vertices();
    let cfg =
        crate::run::driver_pagerank_config(a, algorithm == Algorithm::Ppr, n, source, "dist")?;
    Ok(algo::pagerank::run_on(exec, &cfg)?)
}

/// Rank 0's output: the summary (text or JSON) and `--out`.
#[allow(clippy::too_many_arguments)]
fn report(
    _ctx: &Ctx,
    a: &RunArgs,
    name: &str,
    g: &Graph,
    load: f64,
    ranks: usize,
    transport: &str,
    r: RankRun,
) -> anyhow::Result<()> {
    let o = &r.outcome;
    if let Some(path) = &a.out {
        crate::run::write_csv(g, o, path, false)?;
    }
    let sum = |k: &str| -> u64 { r.ranks.iter().filter_map(|x| x[k].as_u64()).sum() };
    if a.json {
        let mut obj = Map::new();
        obj.insert("algorithm".into(), json!(name));
        obj.insert("executor".into(), json!("dist"));
        obj.insert("transport".into(), json!(transport));
        obj.insert("ranks".into(), json!(ranks));
        obj.insert("graph".into(), json!(a.graph));
        obj.insert("threads".into(), json!(rayon::current_num_threads()));
        obj.insert("vertices".into(), json!(g.num_vertices()));
        obj.insert("arcs".into(), json!(g.num_arcs()));
        obj.insert("load_seconds".into(), json!(load));
        obj.insert("compute_seconds".into(), json!(o.compute_seconds));
        obj.insert("iterations".into(), json!(o.iterations));
        obj.extend(o.summary.clone());
        obj.insert("per_rank".into(), Value::Array(r.ranks));
        println!("{}", serde_json::to_string_pretty(&Value::Object(obj))?);
        return Ok(());
    }
    use std::fmt::Write as _;
    let mut text = format!(
        "{name} on '{}' distributed ({} vertices, {} arcs, {ranks} ranks over {transport}): load {}, compute {}{}",
        a.graph,
        thousands(g.num_vertices() as u64),
        thousands(g.num_arcs()),
        secs(load),
        secs(o.compute_seconds),
        o.iterations
            .map(|i| format!(", {i} iterations"))
            .unwrap_or_default()
    );
    for (k, v) in &o.summary {
        let _ = write!(text, "\n  {k}: {}", crate::run::summarize(v));
    }
    let steps = r
        .ranks
        .first()
        .and_then(|x| x["supersteps"].as_array())
        .map_or(0, Vec::len);
    let _ = write!(
        text,
        "\n  messages: {} bytes sent by all ranks in {steps} supersteps",
        thousands(sum("bytes_sent"))
    );
    println!("{text}");
    Ok(())
}
