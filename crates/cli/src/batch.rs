//! `plexus batch JOBS.toml`: runs a job mix through the job manager one
//! after another (S), side by side (C) or through the shared scan (M), with
//! a live display, per-job summaries and the run's figures (throughput,
//! latency percentiles, peak RSS, topology bytes read).
//!
//! JOBS.toml:
//!
//! ```toml
//! graph = "kron16"            # default graph of the jobs
//!
//! [[job]]
//! name = "pr-1"               # optional
//! algorithm = "pagerank"      # bfs, sssp, pagerank, ppr, wcc, cdlp
//! damping = 0.63
//! iterations = 20
//! precision = "single"        # optional: f32 contributions (default double)
//! at = 0.5                    # submitted 0.5 s after the start (default 0)
//!
//! [[job]]
//! algorithm = "bfs"
//! source = 17                 # external id (integer or string)
//! deadline_seconds = 10
//! ```
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use plexus_engine::algo::{cdlp, pagerank};
use plexus_jobs::manager::ManagerStats;
use plexus_jobs::sched::model::Machine;
use plexus_jobs::sched::{percentile, Cost, Policy, Runner, RunnerConfig};
use plexus_jobs::{
    Algorithm, Catalog, ExecMode, JobHandle, JobManager, JobSpec, JobState, JobStatus,
    ManagerConfig, Snapshot,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::graph_cmds::Ctx;

#[derive(Args, Debug)]
pub struct BatchArgs {
    /// The job mix (TOML; `plexus mix` writes one).
    pub jobs: PathBuf,
    /// sequential (S): one job after another; independent (C): all at once,
    /// each its own traversal; shared (M): one shared scan, fused lanes.
    #[arg(long, default_value = "shared")]
    pub mode: ExecMode,
    /// Print the run as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Last-level cache size to size chunks with (bytes, or with K/M/G);
    /// default: detected (sysfs, checked by a pointer chase).
    #[arg(long)]
    pub llc: Option<String>,
    /// Memory the jobs' state may use (bytes, or with K/M/G); default: MemAvailable.
    #[arg(long)]
    pub memory_limit: Option<String>,
    /// In shared mode, do not fuse jobs of one algorithm into lanes.
    #[arg(long)]
    pub no_fuse: bool,
    /// In shared mode, also fuse SSSP jobs into lanes (off by default:
    /// measured slower on Kronecker graphs).
    #[arg(long)]
    pub fuse_sssp: bool,
    /// Run each SSSP job in the chunk scan (the engine's vertex program, one
    /// pass per bucket) instead of the engine's delta-stepping kernel.
    #[arg(long)]
    pub sssp_in_scan: bool,
    /// In shared mode, run PageRank jobs in lanes (ranks bit-identical to
    /// `plexus run`) instead of one damping series for the jobs that
    /// arrive together (ranks equal within rounding, one gather per edge
    /// for all of them).
    #[arg(long)]
    pub pagerank_lanes: bool,
    /// Write each finished job's per-vertex result to DIR/NAME.csv (external ids).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Schedule the stream by a policy instead of one manager in --mode:
    /// fifo (one job at a time, all cores), all (every job on arrival with
    /// all cores), congra (CongraPlus: bandwidth-aware admission, iterative
    /// ascent of threads, scan groups, NUMA pinning, look-ahead, short-job
    /// bypass, re-allocation of running units' threads) or a variant without
    /// some of these: congra-nola, congra-nobypass, congra-plain (neither),
    /// each also with -fixed (threads fixed for a unit's life, as in the
    /// paper; e.g. congra-fixed). With --scheduler, --mode is ignored:
    /// each launched unit runs in a manager of its own (sequential for one
    /// job, shared for a scan group). Needs profiles (`plexus profile`;
    /// made on first use).
    #[arg(long)]
    pub scheduler: Option<Policy>,
    /// With --scheduler: print the schedule's decisions with their reasons
    /// (and add them to --json as `decisions`).
    #[arg(long)]
    pub explain: bool,
    /// With --scheduler: do not profile missing or stale profiles; use the
    /// default cost model (docs/scheduler.md).
    #[arg(long)]
    pub no_profile: bool,
    /// memory: the job manager (--mode S, C or M) over the graph in memory;
    /// ooc: one shared out-of-core pass per superstep for all jobs, over
    /// the stored graph under --memory (GraphM's order on PartitionedVC's
    /// executor; docs/cli.md).
    #[arg(long, default_value = "memory", value_parser = ["memory", "ooc"])]
    pub executor: String,
    #[command(flatten)]
    pub ooc: crate::ooc::OocArgs,
    /// With --scheduler: schedule on this machine model (MACHINE.toml, as
    /// for `plexus simulate`) instead of the NUMA nodes in /sys, pinning
    /// each node's units to its `cpus` (default: the CPUs this process may
    /// use, in order). Splitting one node's CPUs into several "nodes"
    /// exercises placement and migration on a one-node machine.
    #[arg(long)]
    pub machine: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobsFile {
    graph: Option<String>,
    #[serde(default)]
    job: Vec<toml::Spanned<JobEntry>>,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum IdValue {
    Int(i64),
    Str(String),
}

impl IdValue {
    fn text(&self) -> String {
        match self {
            IdValue::Int(x) => x.to_string(),
            IdValue::Str(s) => s.clone(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobEntry {
    algorithm: String,
    name: Option<String>,
    graph: Option<String>,
    source: Option<IdValue>,
    damping: Option<f64>,
    iterations: Option<usize>,
    tolerance: Option<f64>,
    max_iterations: Option<usize>,
    personalization: Option<Vec<IdValue>>,
    precision: Option<String>,
    delta: Option<f64>,
    deadline_seconds: Option<f64>,
    at: Option<f64>,
}

/// One job of the file, checked.
pub(crate) struct Planned {
    pub(crate) spec: JobSpec,
    pub(crate) graph: String,
    pub(crate) at: f64,
    /// A ppr job that names no tolerance: [`open_graphs`] sets it from the
    /// graph's size, as `plexus run ppr` does.
    pub(crate) ppr_default_tolerance: bool,
}

/// Opens every graph `planned` names, once, as one snapshot all its jobs
/// share, and settles the defaults that depend on the graph: a ppr job
/// without a tolerance gets `pagerank::personalized_default_tolerance`.
/// Errors name `path` and the graph.
pub(crate) fn open_graphs(
    ctx: &Ctx,
    path: &str,
    planned: &mut [Planned],
    catalog: &Catalog,
) -> anyhow::Result<HashMap<String, Arc<Snapshot>>> {
    let mut snaps: HashMap<String, Arc<Snapshot>> = HashMap::new();
    for p in planned.iter_mut() {
        if !snaps.contains_key(&p.graph) {
            let g = crate::live::open_latest(&ctx.data, &p.graph)
                .with_context(|| format!("{path}: cannot open graph '{}'", p.graph))?;
            // Weight statistics (SSSP's checks and default Δ) are computed
            // once per opened graph; do it now, with the loading, not inside
            // the first SSSP submission.
            let _ = g.weight_stats();
            snaps.insert(p.graph.clone(), catalog.publish(&p.graph, g));
        }
        if p.ppr_default_tolerance {
            let n = snaps[&p.graph].graph().num_vertices();
            if let Algorithm::PageRank { tolerance, .. } = &mut p.spec.algorithm {
                *tolerance = pagerank::personalized_default_tolerance(n);
            }
        }
    }
    Ok(snaps)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses `text` (the contents of `path`) into jobs; errors name the line.
pub(crate) fn parse_jobs(path: &str, text: &str) -> anyhow::Result<Vec<Planned>> {
    let file: JobsFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        let msg = e.message().trim().replace('\n', " ");
        anyhow!("{path}:{line}: {msg}")
    })?;
    if file.job.is_empty() {
        bail!("{path}: no [[job]] tables");
    }
    let mut out = Vec::with_capacity(file.job.len());
    for (i, sp) in file.job.iter().enumerate() {
        let line = line_of(text, sp.span().start);
        let e = sp.get_ref();
        let fail = |msg: String| anyhow!("{path}:{line}: {msg}");
        let alg = e.algorithm.as_str();
        let name = e.name.clone().unwrap_or_else(|| format!("{alg}-{}", i + 1));
        let graph = e
            .graph
            .clone()
            .or_else(|| file.graph.clone())
            .ok_or_else(|| fail("no graph: set `graph` at the top or in the job".into()))?;
        // Fields that apply to each algorithm (its registry parameters, and
        // PageRank's extra job fields); anything else is a mistake.
        let entry = match plexus_engine::registry::find(alg) {
            Some((entry, _)) if entry.batch => entry,
            _ => {
                let names: Vec<&str> = plexus_engine::registry::ALGORITHMS
                    .iter()
                    .filter(|e| e.batch)
                    .map(|e| e.name)
                    .collect();
                return Err(fail(format!(
                    "unknown algorithm '{alg}' for a job (expected one of: {})",
                    names.join(", ")
                )));
            }
        };
        let pagerank_extra = matches!(entry.name, "pagerank" | "ppr");
        let allowed = |field: &str| match field {
            "max_iterations" | "personalization" => pagerank_extra,
            // Jobs run with the default method and tolerance rules.
            "method" | "semantics" | "seed" | "samples" | "hops" | "k" => false,
            f => entry.takes(f),
        };
        let given = [
            ("source", e.source.is_some()),
            ("damping", e.damping.is_some()),
            ("iterations", e.iterations.is_some()),
            ("tolerance", e.tolerance.is_some()),
            ("max_iterations", e.max_iterations.is_some()),
            ("personalization", e.personalization.is_some()),
            ("precision", e.precision.is_some()),
            ("delta", e.delta.is_some()),
        ];
        if let Some((field, _)) = given.iter().find(|(f, g)| *g && !allowed(f)) {
            return Err(fail(format!("'{field}' does not apply to {alg}")));
        }
        let source = || {
            e.source
                .as_ref()
                .map(IdValue::text)
                .ok_or_else(|| fail(format!("{alg} needs a source vertex (`source = ...`)")))
        };
        let precision = match &e.precision {
            None => pagerank::Precision::Double,
            Some(p) => p.parse::<pagerank::Precision>().map_err(fail)?,
        };
        let pr = |personalization: Option<Vec<String>>| Algorithm::PageRank {
            damping: e.damping.unwrap_or(pagerank::DEFAULT_DAMPING),
            iterations: e.iterations,
            tolerance: e.tolerance.unwrap_or(pagerank::DEFAULT_TOLERANCE),
            max_iterations: e.max_iterations.unwrap_or(pagerank::DEFAULT_MAX_ITERATIONS),
            personalization,
            precision,
        };
        let listed = e
            .personalization
            .as_ref()
            .map(|p| p.iter().map(IdValue::text).collect::<Vec<_>>());
        let algorithm = match entry.name {
            "bfs" => Algorithm::Bfs { source: source()? },
            "sssp" => Algorithm::Sssp {
                source: source()?,
                delta: e.delta,
            },
            "pagerank" => pr(listed),
            "ppr" => {
                let mut p = vec![source()?];
                p.extend(listed.unwrap_or_default());
                pr(Some(p))
            }
            "wcc" => Algorithm::Wcc,
            _ => Algorithm::Cdlp {
                iterations: e.iterations.unwrap_or(cdlp::DEFAULT_ITERATIONS),
            },
        };
        let at = e.at.unwrap_or(0.0);
        if !(at >= 0.0 && at.is_finite()) {
            return Err(fail(format!(
                "'at' must be a number of seconds >= 0, got {at}"
            )));
        }
        let deadline = match e.deadline_seconds {
            None => None,
            Some(d) if d > 0.0 && d.is_finite() => Some(Duration::from_secs_f64(d)),
            Some(d) => {
                return Err(fail(format!(
                    "'deadline_seconds' must be a positive number, got {d}"
                )))
            }
        };
        let mut spec = JobSpec::new(name, algorithm);
        spec.deadline = deadline;
        out.push(Planned {
            spec,
            graph,
            at,
            ppr_default_tolerance: alg == "ppr" && e.tolerance.is_none(),
        });
    }
    Ok(out)
}

/// Parses `123`, `64K`, `32M`, `1G` (binary multiples) as bytes.
fn parse_bytes(what: &str, s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok((x * mult as f64) as u64),
        _ => bail!("{what} must be a positive size such as 32M, got '{s}'"),
    }
}

/// The live display: one line per job, refreshed in place on a terminal;
/// plain lines on state changes otherwise.
struct Display {
    multi: Option<MultiProgress>,
    bars: HashMap<u64, ProgressBar>,
    last: HashMap<u64, JobState>,
    quiet: bool,
}

impl Display {
    fn new(quiet: bool) -> Self {
        let tty = !quiet && std::io::stderr().is_terminal();
        Display {
            multi: tty.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())),
            bars: HashMap::new(),
            last: HashMap::new(),
            quiet,
        }
    }

    fn line(s: &JobStatus) -> String {
        let state = format!("{:?}", s.state).to_lowercase();
        let tail = match s.state {
            JobState::Running => format!(
                "superstep {:>3}  active {:>10} vertices {:>12} edges",
                s.superstep, s.active_vertices, s.active_edges
            ),
            JobState::Done | JobState::Cancelled => {
                format!("{:.3} s", s.latency_seconds.unwrap_or(0.0))
            }
            JobState::Failed => s.error.clone().unwrap_or_default(),
            JobState::Queued => String::new(),
        };
        format!("#{:<3} {:<14} {:<9} {}", s.id, s.name, state, tail)
    }

    fn update(&mut self, statuses: &[JobStatus]) {
        if self.quiet {
            return;
        }
        for s in statuses {
            match &self.multi {
                Some(m) => {
                    let bar = self.bars.entry(s.id).or_insert_with(|| {
                        let b = m.add(ProgressBar::new_spinner());
                        b.set_style(
                            ProgressStyle::with_template("{msg}")
                                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                        );
                        b
                    });
                    bar.set_message(Self::line(s));
                    if s.state.is_terminal() && !bar.is_finished() {
                        bar.finish();
                    }
                }
                None => {
                    if self.last.get(&s.id) != Some(&s.state) {
                        self.last.insert(s.id, s.state);
                        if s.state != JobState::Queued {
                            eprintln!("{}", Self::line(s));
                        }
                    }
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(m) = &self.multi {
            let _ = m.clear();
        }
    }
}

pub fn batch(ctx: &Ctx, threads: usize, a: BatchArgs) -> anyhow::Result<()> {
    let path = a.jobs.display().to_string();
    let text = std::fs::read_to_string(&a.jobs).with_context(|| format!("cannot read {path}"))?;
    let mut planned = parse_jobs(&path, &text)?;
    if a.executor == "ooc" {
        return crate::ooc::batch(ctx, &a, &path, planned);
    }
    if a.ooc.memory.is_some() || a.ooc.io.is_some() {
        bail!("--memory and --io apply to --executor ooc only");
    }
    let llc = a
        .llc
        .as_deref()
        .map(|s| parse_bytes("--llc", s))
        .transpose()?;
    let memory = a
        .memory_limit
        .as_deref()
        .map(|s| parse_bytes("--memory-limit", s))
        .transpose()?;
    let catalog = Catalog::new();
    let snaps = open_graphs(ctx, &path, &mut planned, &catalog)?;
    if let Some(policy) = a.scheduler {
        return batch_scheduled(ctx, threads, &a, policy, &planned, &snaps, llc, memory);
    }
    if a.explain || a.no_profile || a.machine.is_some() {
        bail!("--explain, --no-profile and --machine apply with --scheduler");
    }
    let mgr = JobManager::new(ManagerConfig {
        mode: a.mode,
        threads,
        llc_bytes: llc,
        llc_cache: Some(crate::probe::llc_cache_path(ctx)),
        memory_limit_bytes: memory,
        fuse: !a.no_fuse,
        fuse_sssp: a.fuse_sssp,
        sssp_in_scan: a.sssp_in_scan,
        pagerank_series: !a.pagerank_lanes,
        cpus: None,
        // The whole queue is held and admitted at once (hold_admission).
        gather: None,
    })?;
    quiet_guarded_panics();
    plexus_jobs::memory::reset_peak_rss();

    let mut order: Vec<usize> = (0..planned.len()).collect();
    order.sort_by(|&x, &y| planned[x].at.total_cmp(&planned[y].at));
    let mut display = Display::new(ctx.quiet || a.json);
    let start = Instant::now();
    let mut handles: Vec<Option<JobHandle>> = vec![None; planned.len()];
    let mut refused: Vec<Option<String>> = vec![None; planned.len()];
    let mut collected: Vec<Option<Collected>> = vec![None; planned.len()];
    // Jobs due at the same time are submitted under one admission hold,
    // so the shared scan starts them together.
    let mut hold = None;
    for (pos, &i) in order.iter().enumerate() {
        let p = &planned[i];
        loop {
            let wait = p.at - start.elapsed().as_secs_f64();
            if wait <= 0.0 {
                break;
            }
            std::thread::sleep(Duration::from_secs_f64(wait.min(0.1)));
            display.update(&mgr.statuses());
            collect(&handles, &planned, a.out_dir.as_deref(), &mut collected)?;
        }
        if hold.is_none() {
            hold = Some(mgr.hold_admission());
        }
        match mgr.submit(Arc::clone(&snaps[&p.graph]), p.spec.clone()) {
            Ok(h) => handles[i] = Some(h),
            Err(e) => refused[i] = Some(e.to_string()),
        }
        if !order.get(pos + 1).is_some_and(|&j| planned[j].at == p.at) {
            hold = None;
        }
    }
    drop(hold);
    // Poll every 2 ms (the end of the batch, and so `wall_seconds`, is
    // seen within 2 ms; a 50 ms poll made every small batch last a multiple
    // of 50 ms), refreshing the display every 25th poll.
    for poll in 0u64.. {
        let st = mgr.statuses();
        let done = st.iter().all(|s| s.state.is_terminal());
        if done || poll % 25 == 0 {
            display.update(&st);
            collect(&handles, &planned, a.out_dir.as_deref(), &mut collected)?;
        }
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    mgr.wait_all();
    let wall = start.elapsed().as_secs_f64();
    collect(&handles, &planned, a.out_dir.as_deref(), &mut collected)?;
    display.update(&mgr.statuses());
    display.finish();
    let stats = mgr.stats();
    mgr.shutdown();
    let peak_rss = plexus_jobs::memory::peak_rss_bytes();

    let (jobs, latencies, failed) = job_reports(&planned, &handles, &refused, &collected);
    let done = latencies.len();
    let report = json!({
        "mode": a.mode,
        "scheduler": Value::Null,
        "jobs": jobs,
        "jobs_done": done,
        "jobs_failed": failed,
        "wall_seconds": wall,
        "throughput_jobs_per_hour": if wall > 0.0 { done as f64 * 3600.0 / wall } else { 0.0 },
        "latency_p50_seconds": percentile(&latencies, 50.0),
        "latency_p95_seconds": percentile(&latencies, 95.0),
        "peak_rss_bytes": peak_rss,
        "topology_bytes_read": stats.topology_bytes_read,
        "topology_bytes": stats.topology_bytes,
        "peak_job_state_bytes": stats.peak_job_state_bytes,
        "memory_model_bytes": stats.topology_bytes + stats.peak_job_state_bytes,
        "threads": mgr.threads(),
        "passes": stats.passes,
        "chunks": stats.chunks,
        "chunk_target_bytes": stats.chunk_target_bytes,
        "llc": stats.llc,
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, &stats, planned.len());
    }
    if failed > 0 {
        bail!(
            "{failed} of {} jobs did not finish (see their errors above)",
            planned.len()
        );
    }
    Ok(())
}

/// The machine of `batch --machine PATH`: the model, with each node's
/// CPUs checked against those this process may use (or, when the file
/// lists none, taken from them in order).
fn machine_to_run_on(path: &Path) -> anyhow::Result<Machine> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {name}"))?;
    let mut m = crate::simulate::parse_machine(&name, &text)?;
    let allowed = plexus_jobs::sched::numa::allowed_cpus()
        .unwrap_or_else(|| (0..plexus_jobs::sched::numa::process_cpu_count()).collect());
    if m.cpus.is_empty() {
        let need = m.nodes * m.cores_per_node;
        if allowed.len() < need {
            bail!(
                "{name}: {} nodes × {} cores need {need} CPUs, this process may use {} ({:?})",
                m.nodes,
                m.cores_per_node,
                allowed.len(),
                allowed
            );
        }
        m.cpus = allowed
            .chunks(m.cores_per_node)
            .take(m.nodes)
            .map(<[usize]>::to_vec)
            .collect();
    } else if let Some(c) = m.cpus.iter().flatten().find(|c| !allowed.contains(c)) {
        bail!("{name}: CPU {c} in cpus is not one this process may use ({allowed:?})");
    }
    Ok(m)
}

/// `batch --scheduler`: the stream runs through a [`Runner`] under `policy`;
/// jobs arrive at their `at`, the policy decides at every arrival and every
/// unit's end. Latency is the response time (arrival to end) and QoS is it
/// divided by the job's profiled time alone with every core.
#[allow(clippy::too_many_arguments)]
fn batch_scheduled(
    ctx: &Ctx,
    threads: usize,
    a: &BatchArgs,
    policy: Policy,
    planned: &[Planned],
    snaps: &HashMap<String, Arc<Snapshot>>,
    llc: Option<u64>,
    memory: Option<u64>,
) -> anyhow::Result<()> {
    let llc_info =
        plexus_jobs::cache::detect_llc_cached(llc, Some(&crate::probe::llc_cache_path(ctx)));
    let mut profiles = HashMap::new();
    for (name, snap) in snaps {
        let p =
            crate::profile::ensure_profile(ctx, name, snap, a.no_profile, Some(llc_info.bytes))?;
        profiles.insert(name.clone(), p);
    }
    let costs: Vec<Cost> = planned
        .iter()
        .map(|p| {
            crate::profile::cost_of(
                profiles[&p.graph].as_ref(),
                &snaps[&p.graph],
                &p.spec.algorithm,
            )
        })
        .collect();
    let machine = match &a.machine {
        Some(path) => machine_to_run_on(path)?,
        None => crate::profile::this_machine(ctx, threads),
    };
    let solo: Vec<f64> = costs
        .iter()
        .map(|c| c.seconds(machine.cores() as f64))
        .collect();
    quiet_guarded_panics();
    plexus_jobs::memory::reset_peak_rss();
    let mut order: Vec<usize> = (0..planned.len()).collect();
    order.sort_by(|&x, &y| planned[x].at.total_cmp(&planned[y].at));
    let mut display = Display::new(ctx.quiet || a.json);
    let mut runner = Runner::new(RunnerConfig {
        policy,
        machine: machine.clone(),
        llc_bytes: Some(llc_info.bytes),
        memory_limit_bytes: memory,
        fuse_sssp: a.fuse_sssp,
        pin: true,
    });
    let mut slot: Vec<Option<usize>> = vec![None; planned.len()];
    let mut collected: Vec<Option<Collected>> = vec![None; planned.len()];
    let mut next = 0usize;
    let wall = loop {
        let now = runner.elapsed();
        while next < order.len() && planned[order[next]].at <= now {
            let i = order[next];
            let p = &planned[i];
            slot[i] =
                Some(runner.arrive(Arc::clone(&snaps[&p.graph]), p.spec.clone(), costs[i], p.at));
            next += 1;
        }
        runner.tick()?;
        let handles: Vec<Option<JobHandle>> = slot
            .iter()
            .map(|s| s.and_then(|r| runner.handle(r).cloned()))
            .collect();
        display.update(&runner.statuses());
        collect(&handles, planned, a.out_dir.as_deref(), &mut collected)?;
        if next >= order.len() && runner.idle() {
            break runner.elapsed();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    display.finish();
    let peak_rss = plexus_jobs::memory::peak_rss_bytes();
    let rs = runner.stats();
    let stats = ManagerStats {
        topology_bytes_read: rs.topology_bytes_read,
        topology_bytes: snaps.values().map(|s| s.graph().topology_bytes()).sum(),
        job_state_bytes: 0,
        peak_job_state_bytes: rs.peak_unit_state_bytes,
        passes: rs.passes,
        task_chunks: 0,
        chunks: 0,
        chunk_target_bytes: 0,
        llc: llc_info,
    };
    let (jobs, latencies, qos, failed) =
        scheduled_job_reports(planned, &runner, &slot, &solo, &collected);
    let done = latencies.len();
    let mut report = json!({
        "mode": Value::Null,
        "scheduler": policy.name(),
        "machine": machine,
        "jobs": jobs,
        "jobs_done": done,
        "jobs_failed": failed,
        "wall_seconds": wall,
        "throughput_jobs_per_hour": if wall > 0.0 { done as f64 * 3600.0 / wall } else { 0.0 },
        "latency_p50_seconds": percentile(&latencies, 50.0),
        "latency_p95_seconds": percentile(&latencies, 95.0),
        "qos_p50": percentile(&qos, 50.0),
        "qos_p95": percentile(&qos, 95.0),
        "peak_rss_bytes": peak_rss,
        "topology_bytes_read": stats.topology_bytes_read,
        "topology_bytes": stats.topology_bytes,
        "peak_job_state_bytes": stats.peak_job_state_bytes,
        "memory_model_bytes": stats.topology_bytes + stats.peak_job_state_bytes,
        "threads": machine.cores(),
        "units": rs.units,
        "resizes": rs.resizes,
        "pools_rebuilt": rs.pools_rebuilt,
        "passes": stats.passes,
        "llc": stats.llc,
    });
    if a.explain {
        report["decisions"] = json!(runner.decisions());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if a.explain {
            println!("decisions ({}):", policy.name());
            for d in runner.decisions() {
                println!("  {d}");
            }
        }
        print_text(&report, &stats, planned.len());
    }
    if failed > 0 {
        bail!(
            "{failed} of {} jobs did not finish (see their errors above)",
            planned.len()
        );
    }
    Ok(())
}

/// Keeps the screen quiet about a panic inside a guarded kernel: it fails
/// its job, whose status carries the message.
fn quiet_guarded_panics() {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !plexus_jobs::scan::in_guarded_kernel() {
            prev(info);
        }
    }));
}

/// The report entries of a batch's jobs, the latencies of those done and
/// how many failed or were refused.
fn job_reports(
    planned: &[Planned],
    handles: &[Option<JobHandle>],
    refused: &[Option<String>],
    collected: &[Option<Collected>],
) -> (Vec<Value>, Vec<f64>, usize) {
    let mut jobs = Vec::new();
    let mut latencies = Vec::new();
    let mut failed = 0usize;
    for (i, p) in planned.iter().enumerate() {
        let mut j = json!({
            "name": p.spec.name,
            "algorithm": p.spec.algorithm.name(),
            "graph": p.graph,
            "submitted_at_seconds": p.at,
        });
        match (&handles[i], &refused[i]) {
            (Some(h), _) => {
                let s = h.status();
                j["id"] = json!(s.id);
                j["snapshot"] = json!(s.snapshot);
                j["state"] = json!(s.state);
                j["supersteps"] = json!(s.superstep);
                j["latency_seconds"] = json!(s.latency_seconds);
                j["run_seconds"] = json!(s.run_seconds);
                if add_outcome(&mut j, &s, collected[i].as_ref()) {
                    if let Some(l) = s.latency_seconds {
                        latencies.push(l);
                    }
                } else {
                    failed += 1;
                }
            }
            (None, Some(e)) => {
                failed += 1;
                mark_refused(&mut j, e);
            }
            (None, None) => {}
        }
        jobs.push(j);
    }
    (jobs, latencies, failed)
}

/// The report entries of a scheduled batch's jobs, the latencies
/// (response times) and QoS of those done and how many failed or were
/// refused.
fn scheduled_job_reports(
    planned: &[Planned],
    runner: &Runner,
    slot: &[Option<usize>],
    solo: &[f64],
    collected: &[Option<Collected>],
) -> (Vec<Value>, Vec<f64>, Vec<f64>, usize) {
    let mut jobs = Vec::new();
    let mut latencies = Vec::new();
    let mut qos = Vec::new();
    let mut failed = 0usize;
    for (i, p) in planned.iter().enumerate() {
        let mut j = json!({
            "name": p.spec.name,
            "algorithm": p.spec.algorithm.name(),
            "graph": p.graph,
            "submitted_at_seconds": p.at,
            "profiled_solo_seconds": solo[i],
        });
        let Some(r) = slot[i] else {
            jobs.push(j);
            continue;
        };
        j["launched_at_seconds"] = json!(runner.launched_at(r));
        match (runner.handle(r), runner.refused(r)) {
            (Some(h), _) => {
                let s = h.status();
                // Each unit has its own manager, whose ids start at 1: the
                // job's place in the file is the id that is unique here.
                j["id"] = json!(i + 1);
                j["snapshot"] = json!(s.snapshot);
                j["state"] = json!(s.state);
                j["supersteps"] = json!(s.superstep);
                j["run_seconds"] = json!(s.run_seconds);
                let response = runner.response_seconds(r);
                j["latency_seconds"] = json!(response);
                j["response_seconds"] = json!(response);
                if add_outcome(&mut j, &s, collected[i].as_ref()) {
                    if let Some(l) = response {
                        latencies.push(l);
                        let q = l / solo[i].max(1e-9);
                        qos.push(q);
                        j["qos"] = json!(q);
                    }
                } else {
                    failed += 1;
                }
            }
            (None, Some(e)) => {
                failed += 1;
                mark_refused(&mut j, e);
            }
            (None, None) => {}
        }
        jobs.push(j);
    }
    (jobs, latencies, qos, failed)
}

/// Adds a job's outcome to its report entry: the summary (and output file)
/// when it is done, its error otherwise. Returns whether it is done.
fn add_outcome(j: &mut Value, s: &JobStatus, collected: Option<&Collected>) -> bool {
    if s.state != JobState::Done {
        j["error"] = json!(s.error);
        return false;
    }
    if let Some(c) = collected {
        j["summary"] = c.summary.clone();
        if let Some(f) = &c.output {
            j["output"] = json!(f);
        }
    }
    true
}

/// Marks a job's report entry as refused at submission, with the reason.
fn mark_refused(j: &mut Value, reason: impl serde::Serialize) {
    j["state"] = json!("refused");
    j["error"] = json!(reason);
}

/// What the batch keeps of a finished job once its result is taken.
#[derive(Clone)]
struct Collected {
    summary: Value,
    output: Option<String>,
}

/// Takes the results of jobs that finished since the last call (results
/// held by the manager count as memory): the summary, and the CSV file
/// when `out_dir` is given.
fn collect(
    handles: &[Option<JobHandle>],
    planned: &[Planned],
    out_dir: Option<&std::path::Path>,
    collected: &mut [Option<Collected>],
) -> anyhow::Result<()> {
    for (i, h) in handles.iter().enumerate() {
        let Some(h) = h else { continue };
        if collected[i].is_some() || h.status().state != JobState::Done {
            continue;
        }
        let Ok(out) = h.take_result() else { continue };
        let output = match out_dir {
            Some(dir) => {
                let file =
                    crate::out::job_file(dir, planned.iter().map(|p| p.spec.name.as_str()), i);
                write_result(&file, &out)?;
                Some(file.display().to_string())
            }
            None => None,
        };
        collected[i] = Some(Collected {
            summary: out.summary(),
            output,
        });
    }
    Ok(())
}

/// Writes a job's result as CSV through a temporary file renamed on success
/// (`.NAME.csv.tmp-PID`, as every other write; those of dead processes are
/// removed first: `plexus_graph::export::write_atomically`).
fn write_result(path: &std::path::Path, out: &plexus_jobs::JobOutput) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    plexus_graph::export::write_atomically(path, |w| out.write_csv(w))
        .with_context(|| format!("cannot write {}", path.display()))
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

fn print_text(r: &Value, stats: &ManagerStats, n: usize) {
    println!(
        "{:<4} {:<16} {:<9} {:<9} {:>10} {:>10}  summary",
        "id", "name", "algorithm", "state", "latency s", "run s"
    );
    if let Some(jobs) = r["jobs"].as_array() {
        for j in jobs {
            let f = |k: &str| j[k].as_f64().map_or("-".into(), |x| format!("{x:.3}"));
            let detail = match j.get("summary") {
                Some(s) => s.to_string(),
                None => j["error"].as_str().unwrap_or("").to_string(),
            };
            println!(
                "{:<4} {:<16} {:<9} {:<9} {:>10} {:>10}  {}",
                j["id"].as_u64().map_or("-".into(), |x| x.to_string()),
                j["name"].as_str().unwrap_or(""),
                j["algorithm"].as_str().unwrap_or(""),
                j["state"].as_str().unwrap_or(""),
                f("latency_seconds"),
                f("run_seconds"),
                detail
            );
        }
    }
    let secs = |k: &str| r[k].as_f64().map_or("-".into(), |x| format!("{x:.3} s"));
    let label = match r["scheduler"].as_str() {
        Some(p) => format!("scheduler {p}"),
        None => format!("mode {}", r["mode"].as_str().unwrap_or("")),
    };
    println!(
        "{label}: {} of {n} jobs done in {} wall, {:.0} jobs/hour; latency p50 {}, p95 {}",
        r["jobs_done"],
        secs("wall_seconds"),
        r["throughput_jobs_per_hour"].as_f64().unwrap_or(0.0),
        secs("latency_p50_seconds"),
        secs("latency_p95_seconds"),
    );
    if let (Some(p50), Some(p95)) = (r["qos_p50"].as_f64(), r["qos_p95"].as_f64()) {
        println!("QoS (response ÷ profiled solo time): p50 {p50:.2}, p95 {p95:.2}");
    }
    // Under a scheduler the figures are summed over units, which have
    // chunk tables of their own: no single table to show.
    let chunks = if stats.chunks == 0 {
        String::new()
    } else {
        format!(
            " over {} chunks of ~{}",
            stats.chunks,
            mib(stats.chunk_target_bytes)
        )
    };
    println!(
        "memory: peak RSS {}, topology {} + peak job state {} = {}; topology read {} in {} passes{chunks} (LLC {} from {:?})",
        r["peak_rss_bytes"].as_u64().map_or("-".into(), mib),
        mib(stats.topology_bytes),
        mib(stats.peak_job_state_bytes),
        mib(stats.topology_bytes + stats.peak_job_state_bytes),
        mib(stats.topology_bytes_read),
        stats.passes,
        mib(stats.llc.bytes),
        stats.llc.source,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_bytes("x", "32M").unwrap(), 32 << 20);
        assert_eq!(parse_bytes("x", "1000").unwrap(), 1000);
        assert!(parse_bytes("x", "-1").is_err());
    }

    #[test]
    fn errors_name_the_line() {
        let text = "graph = \"g\"\n\n[[job]]\nalgorithm = \"bfs\"\nsource = 1\n\n[[job]]\nalgorithm = \"pagerank\"\ndampin = 0.5\n";
        let e = parse_jobs("J.toml", text).err().unwrap().to_string();
        assert!(e.starts_with("J.toml:9:"), "{e}");
        let text = "graph = \"g\"\n[[job]]\nalgorithm = \"bfs\"\n";
        let e = parse_jobs("J.toml", text).err().unwrap().to_string();
        assert!(
            e.starts_with("J.toml:2:") && e.contains("needs a source"),
            "{e}"
        );
        let text = "[[job]]\nalgorithm = \"bfs\"\nsource = 1\ndamping = 0.5\n";
        let e = parse_jobs("J.toml", text).err().unwrap().to_string();
        assert!(e.contains("no graph"), "{e}");
    }

    #[test]
    fn pagerank_precision_parses_and_is_checked() {
        let text = "graph = \"g\"\n[[job]]\nalgorithm = \"pagerank\"\nprecision = \"single\"\n[[job]]\nalgorithm = \"pr\"\n";
        let jobs = parse_jobs("J.toml", text).unwrap();
        let precision = |i: usize| match &jobs[i].spec.algorithm {
            Algorithm::PageRank { precision, .. } => *precision,
            a => panic!("{a:?}"),
        };
        assert_eq!(precision(0), pagerank::Precision::Single);
        assert_eq!(precision(1), pagerank::Precision::Double);
        let text = "graph = \"g\"\n[[job]]\nalgorithm = \"pagerank\"\nprecision = \"half\"\n";
        let e = parse_jobs("J.toml", text).err().unwrap().to_string();
        assert!(e.starts_with("J.toml:2:") && e.contains("precision"), "{e}");
        let text = "graph = \"g\"\n[[job]]\nalgorithm = \"wcc\"\nprecision = \"single\"\n";
        let e = parse_jobs("J.toml", text).err().unwrap().to_string();
        assert!(e.contains("'precision' does not apply to wcc"), "{e}");
    }
}
