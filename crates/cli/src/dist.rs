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
use plexus_dist::view::DistView;
use plexus_dist::{DistError, DistExecutor};
use plexus_engine::algo;
use plexus_engine::program::{Executor, GraphView, Vertices};
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
    /// --executor dist: read each rank's part from DIR/rank-R.plxp (written by `plexus
    /// partition`) instead of the shared store; each host needs only its own rank's file.
    #[arg(long, value_name = "DIR")]
    pub parts: Option<std::path::PathBuf>,
}

/// Refuses `--ranks` and `--parts` without `--executor dist`.
pub fn check_flags(a: &RunArgs) -> anyhow::Result<()> {
    if a.executor != ExecutorKind::Dist && (a.dist.ranks.is_some() || a.dist.parts.is_some()) {
        bail!("--ranks and --parts apply to --executor dist only");
    }
    Ok(())
}

/// Where the ranks read the graph: the shared store (every rank maps it
/// and reads its slices), or one part file per rank.
enum Input {
    Store(Box<Graph>),
    Parts(std::path::PathBuf),
}

/// How long a thread rank waits for another before it names it lost.
const THREAD_TIMEOUT: Duration = Duration::from_secs(600);

/// What one rank reports.
struct RankRun {
    outcome: Outcome,
    /// Every rank's statistics (JSON), gathered on every rank.
    ranks: Vec<Value>,
    /// Rank 0 reading a part file: the graph whose ids name the results
    /// (from the store, the stored graph names them).
    names: Option<Graph>,
    /// Vertices and arcs.
    counts: (u64, u64),
    /// Seconds building the executor (view, cuts, part).
    setup_seconds: f64,
}

/// Runs `a` on the distributed executor.
pub fn run(ctx: &Ctx, a: &RunArgs) -> anyhow::Result<()> {
    let entry = crate::run::driver_entry(a, "dist")?;
    if a.verify && a.dist.parts.is_some() {
        bail!(
            "--verify checks the result against the stored graph; it does not apply with --parts"
        );
    }
    if let Some(out) = &a.out {
        crate::out::check(out, &["csv", "parquet"])?;
    }
    let t = Instant::now();
    let input = match &a.dist.parts {
        Some(dir) => Input::Parts(dir.clone()),
        None => {
            let g = crate::live::open_latest(&ctx.data, &a.graph)?;
            if g.num_vertices() == 0 {
                bail!("graph '{}' has no vertices", a.graph);
            }
            Input::Store(Box::new(g))
        }
    };
    let open = t.elapsed().as_secs_f64();
    #[cfg(feature = "mpi")]
    if plexus_dist::mpi::launched_by_mpirun() {
        if a.dist.ranks.is_some() {
            bail!("--ranks is for thread ranks; under mpirun the rank count is -np");
        }
        let (_universe, comm) = plexus_dist::mpi::init()?;
        let done = rank_run(&comm, &input, entry.algorithm, a).and_then(|r| {
            if comm.rank() == 0 {
                report(a, &input, entry.name, open, comm.size(), "mpi", r)?;
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
    let ranks = match (a.dist.ranks, &input) {
        (Some(r), _) => r as usize,
        (None, Input::Parts(dir)) => plexus_dist::file::peek(&plexus_dist::file::path(dir, 0))?.1,
        (None, Input::Store(_)) => 2,
    };
    let mut results = run_threads(ranks, THREAD_TIMEOUT, |comm| {
        rank_run(&comm, &input, entry.algorithm, a)
    })?;
    // A rank that fails ends its thread, and the others then fail with
    // `Lost` naming it: those are echoes, the cause is another error.
    let echo = |e: &anyhow::Error| {
        matches!(
            e.downcast_ref::<DistError>(),
            Some(DistError::Lost { .. } | DistError::Timeout { .. })
        )
    };
    let failures: Vec<(usize, Option<&anyhow::Error>)> = results
        .iter()
        .enumerate()
        .filter_map(|(r, res)| match res {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some((r, Some(e))),
            Err(_) => Some((r, None)),
        })
        .collect();
    let cause = failures
        .iter()
        .find(|(_, e)| !e.is_some_and(echo))
        .or(failures.first());
    match cause {
        Some((r, None)) => bail!("rank {r} panicked"),
        Some((_, Some(e))) if e.downcast_ref::<DistError>().is_some() => bail!("{e:#}"),
        Some((r, Some(e))) => bail!("rank {r}: {e:#}"),
        None => {}
    }
    let Some(Ok(Ok(first))) = results.drain(..1).next() else {
        bail!("no rank 0");
    };
    report(a, &input, entry.name, open, ranks, "threads", first)
}

/// This rank's executor over `input`, the source vertex, and (rank 0) the
/// graph to name results by; collective.
fn setup<'c, C: Comm>(
    comm: &'c C,
    input: &Input,
    a: &RunArgs,
) -> anyhow::Result<(DistExecutor<'c, C>, VertexId, Option<Graph>)> {
    match input {
        Input::Store(g) => {
            let source = match &a.source {
                Some(s) => g.ids().lookup_str(s).with_context(|| {
                    format!("unknown source vertex '{s}' in graph '{}'", a.graph)
                })?,
                None => 0,
            };
            let exec = DistExecutor::new(comm, g)?;
            Ok((exec, source, None))
        }
        Input::Parts(dir) => {
            let path = plexus_dist::file::path(dir, comm.rank());
            let f = plexus_dist::file::read(&path)?;
            if f.graph != a.graph {
                bail!(
                    "{} holds a part of graph '{}', not '{}'",
                    path.display(),
                    f.graph,
                    a.graph
                );
            }
            let names = match f.ids {
                Some(ids) => Some(names_graph(&f.view, ids)?),
                None => None,
            };
            // Rank 0 holds the ids: it resolves the source for every rank.
            let mine = match (&names, &a.source) {
                (Some(g), Some(s)) => match g.ids().lookup_str(s) {
                    Some(v) => Ok(v),
                    None => Err(format!(
                        "unknown source vertex '{s}' in graph '{}'",
                        a.graph
                    )),
                },
                _ => Ok(0),
            };
            let exec = DistExecutor::from_part(comm, f.view, f.part)?;
            let source = share_source(comm, mine)?;
            Ok((exec, source, names))
        }
    }
}

/// Rank 0's source vertex (or its refusal), on every rank.
fn share_source<C: Comm>(comm: &C, mine: Result<VertexId, String>) -> anyhow::Result<VertexId> {
    let bytes = match (comm.rank(), &mine) {
        (0, Ok(v)) => [&[1u8][..], &v.to_le_bytes()].concat(),
        (0, Err(m)) => [&[0u8][..], m.as_bytes()].concat(),
        _ => Vec::new(),
    };
    let all = comm.all_gather(&bytes)?;
    match all.first().map(Vec::as_slice) {
        Some([1, a, b, c, d]) => Ok(u32::from_le_bytes([*a, *b, *c, *d])),
        Some([0, m @ ..]) => bail!("{}", String::from_utf8_lossy(m)),
        _ => bail!("rank 0 sent no source vertex"),
    }
}

/// A graph without edges that names the vertices of `view` as the stored
/// graph does (external ids, natural order): what rank 0 writes results
/// with when it read a part file instead of the store.
fn names_graph(view: &DistView, ids: plexus_graph::IdMap) -> anyhow::Result<Graph> {
    use plexus_graph::{Adjacency, GraphParts, Section};
    let n = view.num_vertices();
    let out = Adjacency::new(
        Section::owned(vec![0u64; n + 1]),
        Section::owned(Vec::new()),
        None,
    )
    .map_err(anyhow::Error::msg)?;
    let permutation = view.natural_ids().map(|old_of_new| {
        let mut new_of_old = vec![0 as VertexId; n];
        for (new, &old) in old_of_new.iter().enumerate() {
            if let Some(x) = new_of_old.get_mut(old as usize) {
                *x = new as VertexId;
            }
        }
        (
            Section::owned(old_of_new.to_vec()),
            Section::owned(new_of_old),
        )
    });
    Ok(Graph::from_parts(GraphParts {
        directed: false,
        out,
        inc: None,
        ids,
        permutation,
        order: plexus_graph::VertexOrder::None,
        base_version: 0,
    })?)
}

/// One rank's run: executor, driver, statistics gathered from every rank.
fn rank_run<C: Comm>(
    comm: &C,
    input: &Input,
    algorithm: Algorithm,
    a: &RunArgs,
) -> anyhow::Result<RankRun> {
    let t = Instant::now();
    let (exec, source, names) = setup(comm, input, a)?;
    if matches!(algorithm, Algorithm::PageRank | Algorithm::Ppr) {
        // PageRank's tiles are part of the set-up, not of its run.
        exec.pull_tiles();
    }
    let setup_seconds = t.elapsed().as_secs_f64();
    let check = match input {
        Input::Store(g) if a.verify && comm.rank() == 0 => Some(g.as_ref()),
        _ => None,
    };
    // Untimed runs until every rank has warmed up for --warmup seconds
    // (one collective vote per run, so all ranks run as many).
    let mut warmup_runs = 0u32;
    if a.warmup > 0.0 {
        let started = Instant::now();
        loop {
            drop(execute(&exec, algorithm, a, source, None)?);
            warmup_runs += 1;
            let more = started.elapsed().as_secs_f64() < a.warmup;
            if comm.all_reduce_or(&[u64::from(more)])?.first() != Some(&1) {
                break;
            }
        }
    }
    let (mut runs, mut last) = (Vec::new(), None);
    let (mut steps0, mut bytes0) = (0, (0, 0));
    for i in 0..a.repeat.max(1) {
        drop(last.take());
        steps0 = exec.steps().len();
        bytes0 = exec.bytes();
        let t = Instant::now();
        let check = check.filter(|_| i + 1 == a.repeat.max(1));
        let (o, verifying) = execute(&exec, algorithm, a, source, check)?;
        runs.push(t.elapsed().as_secs_f64() - verifying);
        last = Some(o);
        if let Some(f) = exec.fault() {
            return Err(f.into());
        }
    }
    let mut outcome = last.context("no run")?;
    outcome.compute_seconds = crate::run::median(&runs);
    let (sent, received) = exec.bytes();
    let (sent, received) = (sent - bytes0.0, received - bytes0.1);
    let steps = exec.steps().split_off(steps0);
    let mine = json!({
        "rank": comm.rank(),
        "masters": exec.part().masters().len(),
        "edge_entries": exec.part().num_entries(),
        "edge_bytes": exec.part().bytes(),
        "setup_seconds": setup_seconds,
        "bytes_sent": sent,
        "bytes_received": received,
        "compute_seconds": outcome.compute_seconds,
        "compute_seconds_runs": runs,
        "warmup_runs": warmup_runs,
        "supersteps": steps,
    });
    let all = comm.all_gather(serde_json::to_string(&mine)?.as_bytes())?;
    let ranks = all
        .iter()
        .map(|b| serde_json::from_slice(b))
        .collect::<Result<Vec<Value>, _>>()?;
    let view = exec.dist_view();
    Ok(RankRun {
        outcome,
        ranks,
        names,
        counts: (view.num_vertices() as u64, view.num_arcs()),
        setup_seconds,
    })
}

/// A run's summary, iteration count and verdict, filled by [`execute`].
#[derive(Default)]
struct Facts {
    s: Map<String, Value>,
    iterations: Option<usize>,
    verified: Option<Result<(), String>>,
    /// Seconds in the verifier (not the algorithm's time).
    verify_seconds: f64,
}

impl Facts {
    fn verdict(&mut self, check: impl FnOnce() -> Result<(), plexus_engine::VerifyError>) {
        let t = Instant::now();
        self.verified = Some(check().map_err(|e| e.to_string()));
        self.verify_seconds += t.elapsed().as_secs_f64();
    }
}

/// Runs the algorithm's driver on `exec` (for wcc, pagerank, ppr and
/// sssp, the executor's fast paths, [`plexus_dist::wcc`],
/// [`plexus_dist::pagerank`], [`plexus_dist::sssp`]): the summary, per-vertex columns
/// and iteration count; with `check` (rank 0 of a run on the stored
/// graph, `--verify`), also the algorithm's verifier on that graph, and
/// the seconds it took.
fn execute<C: Comm>(
    exec: &DistExecutor<'_, C>,
    algorithm: Algorithm,
    a: &RunArgs,
    source: VertexId,
    check: Option<&Graph>,
) -> anyhow::Result<(Outcome, f64)> {
    let mut f = Facts::default();
    let columns = match traversal(exec, algorithm, a, source, check, &mut f)? {
        Some(c) => c,
        None => labelling(exec, algorithm, a, check, &mut f)?,
    };
    let o = Outcome {
        columns,
        summary: f.s,
        iterations: f.iterations,
        verified: f.verified,
        compute_seconds: 0.0,
    };
    Ok((o, f.verify_seconds))
}

type Columns = Vec<(&'static str, Column)>;

/// bfs, nhop, sssp, pagerank, ppr, wcc and scc; `None` for the others.
fn traversal<C: Comm>(
    exec: &DistExecutor<'_, C>,
    algorithm: Algorithm,
    a: &RunArgs,
    source: VertexId,
    check: Option<&Graph>,
    f: &mut Facts,
) -> anyhow::Result<Option<Columns>> {
    Ok(Some(match algorithm {
        Algorithm::Bfs => {
            let cfg = algo::bfs::Config {
                source,
                ..Default::default()
            };
            let o = algo::bfs::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::bfs::verify(g, &cfg, &o));
            }
            let reached = o.depth.iter().filter(|&&d| d != u32::MAX).count();
            f.s.insert("reached".into(), json!(reached));
            f.iterations = Some(o.iterations);
            vec![
                ("depth", Column::Depth(o.depth)),
                ("parent", Column::Vertex(o.parent)),
            ]
        }
        Algorithm::Nhop => {
            let cfg = algo::nhop::Config {
                source,
                hops: a.hops.unwrap_or(algo::nhop::DEFAULT_HOPS),
            };
            let o = algo::nhop::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::nhop::verify(g, &cfg, &o));
            }
            f.s.insert("hops".into(), json!(cfg.hops));
            f.s.insert("reached".into(), json!(o.reached));
            vec![("depth", Column::Depth(o.depth))]
        }
        Algorithm::Sssp => {
            let cfg = algo::sssp::Config {
                source,
                delta: a.delta,
            };
            // The executor's delta-stepping, then the driver's parents.
            let o = plexus_dist::sssp::run(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::sssp::verify(g, &cfg, &o));
            }
            let reached = o.dist.iter().filter(|d| d.is_finite()).count();
            f.s.insert("reached".into(), json!(reached));
            f.iterations = Some(o.iterations);
            vec![
                ("distance", Column::Float(o.dist)),
                ("parent", Column::Vertex(o.parent)),
            ]
        }
        Algorithm::PageRank | Algorithm::Ppr => {
            let n = exec.view().num_vertices();
            let cfg = crate::run::driver_pagerank_config(
                a,
                algorithm == Algorithm::Ppr,
                n,
                source,
                "dist",
            )?;
            // The executor's fused pull (the driver's arithmetic).
            let o = plexus_dist::pagerank::run(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::pagerank::verify(g, &cfg, &o));
            }
            f.s.insert("converged".into(), json!(o.converged));
            f.s.insert("change".into(), json!(o.change));
            f.iterations = Some(o.iterations);
            vec![("rank", Column::Float(o.rank))]
        }
        Algorithm::Wcc => {
            // The executor's union-find (labels as the driver's).
            let cfg = algo::wcc::Config::default();
            let o = plexus_dist::wcc::run(exec)?;
            if let Some(g) = check {
                f.verdict(|| algo::wcc::verify(g, &cfg, &o));
            }
            f.s.insert("components".into(), json!(o.count));
            vec![("component", Column::Vertex(o.component))]
        }
        Algorithm::Scc => {
            let cfg = algo::scc::Config::default();
            let o = algo::scc::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::scc::verify(g, &cfg, &o));
            }
            f.s.insert("components".into(), json!(o.count));
            vec![("component", Column::Vertex(o.component))]
        }
        _ => return Ok(None),
    }))
}

/// cdlp, coloring, mis, kcore and betweenness.
fn labelling<E: Executor>(
    exec: &E,
    algorithm: Algorithm,
    a: &RunArgs,
    check: Option<&Graph>,
    f: &mut Facts,
) -> anyhow::Result<Columns> {
    Ok(match algorithm {
        Algorithm::Cdlp => {
            let cfg = algo::cdlp::Config {
                iterations: a.iterations.unwrap_or(algo::cdlp::DEFAULT_ITERATIONS),
            };
            let o = algo::cdlp::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::cdlp::verify(g, &cfg, &o));
            }
            let mut labels = o.label.clone();
            labels.sort_unstable();
            labels.dedup();
            f.s.insert("communities".into(), json!(labels.len()));
            f.iterations = Some(o.iterations);
            vec![("label", Column::Natural(o.label))]
        }
        Algorithm::Coloring => {
            let cfg = algo::coloring::Config {
                seed: a.seed.unwrap_or(algo::coloring::DEFAULT_SEED),
            };
            let o = algo::coloring::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::coloring::verify(g, &cfg, &o));
            }
            f.s.insert("colors".into(), json!(o.num_colors));
            let colors = o.color.iter().map(|&c| u64::from(c)).collect();
            vec![("color", Column::Int(colors))]
        }
        Algorithm::Mis => {
            let cfg = algo::mis::Config {
                seed: a.seed.unwrap_or(algo::mis::DEFAULT_SEED),
            };
            let o = algo::mis::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::mis::verify(g, &cfg, &o));
            }
            f.s.insert("size".into(), json!(o.size));
            vec![("in_set", Column::Bool(o.in_set))]
        }
        Algorithm::Kcore => {
            let cfg = algo::kcore::Config { k: a.k };
            let o = algo::kcore::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::kcore::verify(g, &cfg, &o));
            }
            f.s.insert("max_core".into(), json!(o.max_core));
            let core = o.core.iter().map(|&c| u64::from(c)).collect();
            vec![("core", Column::Int(core))]
        }
        Algorithm::Betweenness => {
            let cfg = algo::betweenness::Config {
                samples: a.samples,
                seed: a.seed.unwrap_or(algo::betweenness::DEFAULT_SEED),
                ..Default::default()
            };
            let o = algo::betweenness::run_on(exec, &cfg)?;
            if let Some(g) = check {
                f.verdict(|| algo::betweenness::verify(g, &cfg, &o));
            }
            f.s.insert("sources_used".into(), json!(o.sources_used));
            vec![("betweenness", Column::Float(o.centrality))]
        }
        _ => bail!("--executor dist does not run this algorithm"),
    })
}

/// Rank 0's output: the summary (text or JSON) and `--out`.
fn report(
    a: &RunArgs,
    input: &Input,
    name: &str,
    open: f64,
    ranks: usize,
    transport: &str,
    r: RankRun,
) -> anyhow::Result<()> {
    let (n, m) = r.counts;
    let load = open + r.setup_seconds;
    let o = &r.outcome;
    if let Some(path) = &a.out {
        let names = match input {
            Input::Store(g) => Some(g.as_ref()),
            Input::Parts(_) => r.names.as_ref(),
        };
        let Some(g) = names else {
            bail!("rank 0 holds no vertex ids to write {}", path.display());
        };
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
        obj.insert("vertices".into(), json!(n));
        obj.insert("arcs".into(), json!(m));
        obj.insert("load_seconds".into(), json!(load));
        obj.insert(
            "input".into(),
            json!(if a.dist.parts.is_some() {
                "parts"
            } else {
                "store"
            }),
        );
        obj.insert("compute_seconds".into(), json!(o.compute_seconds));
        obj.insert("iterations".into(), json!(o.iterations));
        obj.extend(o.summary.clone());
        if let Some(v) = &o.verified {
            obj.insert("verified".into(), json!(v.is_ok()));
            if let Err(e) = v {
                obj.insert("verify_error".into(), json!(e));
            }
        }
        obj.insert("per_rank".into(), Value::Array(r.ranks));
        println!("{}", serde_json::to_string_pretty(&Value::Object(obj))?);
        return verdict(a, name, o);
    }
    use std::fmt::Write as _;
    let mut text = format!(
        "{name} on '{}' distributed ({} vertices, {} arcs, {ranks} ranks over {transport}): load {}, compute {}{}",
        a.graph,
        thousands(n),
        thousands(m),
        secs(load),
        if a.repeat > 1 {
            format!("{} (median of {})", secs(o.compute_seconds), a.repeat)
        } else {
            secs(o.compute_seconds)
        },
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
    match &o.verified {
        Some(Ok(())) => text.push_str("\n  verified: yes"),
        Some(Err(e)) => {
            let _ = write!(text, "\n  verified: NO ({e})");
        }
        None => {}
    }
    println!("{text}");
    verdict(a, name, o)
}

/// Exit status 2 when `--verify` found the result wrong.
fn verdict(a: &RunArgs, name: &str, o: &Outcome) -> anyhow::Result<()> {
    if let Some(Err(e)) = &o.verified {
        bail!("{name} on '{}': {e}", a.graph);
    }
    Ok(())
}
