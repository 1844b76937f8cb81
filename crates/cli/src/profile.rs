//! `plexus profile GRAPH`: each job algorithm's time at 1..=cores threads
//! and bytes touched, stored as `profile.json` beside the graph (see
//! `plexus_jobs::sched::profile`), and the helpers `batch --scheduler` and
//! `simulate` use to find a job's cost: the stored profile when it is fresh;
//! otherwise a note on stderr and a new profile (or, with `--no-profile`,
//! the documented default model).
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Args;
use plexus_jobs::sched::model::{Cost, Machine, DEFAULT_BANDWIDTH_GBS};
use plexus_jobs::sched::numa::read_nodes;
use plexus_jobs::sched::profile::{
    default_cost, graph_version, load, profile_algorithms, profile_graph, save, GraphProfile,
    ProfileConfig, ProfileStatus, PROFILE_FILE,
};
use plexus_jobs::{Algorithm, Catalog, Snapshot};
use serde_json::json;

use crate::graph_cmds::Ctx;
use crate::probe::{Bandwidth, MACHINE_FILE};

/// Runs per thread count when a profile is made on first use.
pub const DEFAULT_RUNS: usize = 3;

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The stored graph.
    pub graph: String,
    /// Algorithms to profile, comma-separated (bfs, sssp, pagerank, wcc, cdlp).
    #[arg(long, value_delimiter = ',', default_values_t = profile_algorithms().into_iter().map(String::from))]
    pub algos: Vec<String>,
    /// Runs per thread count (the median is kept); BFS and SSSP use one root per run.
    #[arg(long, default_value_t = DEFAULT_RUNS as u64, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub runs: u64,
    /// Profile 1..=N threads (default: every core).
    #[arg(long)]
    pub max_threads: Option<usize>,
    /// Profile again even when the stored profile is up to date.
    #[arg(long)]
    pub force: bool,
    /// Print the profile as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The profile file of graph `name`.
pub fn profile_path(ctx: &Ctx, name: &str) -> PathBuf {
    ctx.data.graph_dir(name).join(PROFILE_FILE)
}

/// The graph version of stored graph `name`.
fn version_of(ctx: &Ctx, name: &str) -> anyhow::Result<String> {
    let file = ctx.data.graph_dir(name).join("graph.plx");
    Ok(graph_version(&file)?)
}

/// The CPUs this process may use (not the calling pool worker's pinned one).
fn cores() -> usize {
    plexus_jobs::sched::numa::process_cpu_count()
}

/// The machine's triad bandwidth from `machine.json` (`plexus probe`), GB/s.
pub fn measured_triad_gbs(ctx: &Ctx) -> Option<f64> {
    std::fs::read_to_string(ctx.data.root().join(MACHINE_FILE))
        .ok()
        .and_then(|t| serde_json::from_str::<Bandwidth>(&t).ok())
        .map(|b| b.triad_gbs)
        .filter(|b| *b > 0.0 && b.is_finite())
}

/// This machine: NUMA nodes from sysfs, bandwidth from `machine.json`
/// (`plexus probe`; the triad rate divided among the nodes) or
/// [`DEFAULT_BANDWIDTH_GBS`] per node with a note.
pub fn this_machine(ctx: &Ctx, threads: usize) -> Machine {
    let nodes = read_nodes(std::path::Path::new("/sys"));
    let path = ctx.data.root().join(MACHINE_FILE);
    let bw = measured_triad_gbs(ctx).map(|b| b / nodes.len() as f64);
    let bw = match bw {
        Some(b) if b > 0.0 && b.is_finite() => b,
        _ => {
            eprintln!(
                "note: no memory bandwidth measured ({} missing or unreadable); assuming {DEFAULT_BANDWIDTH_GBS} GB/s per node (run `plexus probe`)",
                path.display()
            );
            DEFAULT_BANDWIDTH_GBS
        }
    };
    let per_node = nodes.iter().map(Vec::len).min().unwrap_or(1);
    let mut m = Machine::model(nodes.len(), per_node, bw);
    if threads > 0 && nodes.len() == 1 {
        m.cores_per_node = threads;
    }
    m.cpus = nodes;
    m
}

/// The fresh profile of `name`, made now (and stored) when it is missing,
/// stale or corrupt, saying so on stderr; `None` with `no_profile` and no
/// fresh profile (the caller uses [`default_cost`]).
pub fn ensure_profile(
    ctx: &Ctx,
    name: &str,
    snap: &Arc<Snapshot>,
    no_profile: bool,
    llc: Option<u64>,
) -> anyhow::Result<Option<GraphProfile>> {
    let path = profile_path(ctx, name);
    let version = version_of(ctx, name)?;
    let why = match load(&path, &version) {
        ProfileStatus::Fresh(p) => return Ok(Some(p)),
        ProfileStatus::Missing => format!("no profile of graph '{name}'"),
        ProfileStatus::Stale { found, expected } => format!(
            "the profile of graph '{name}' is stale ({} is of {found}, the graph is {expected})",
            path.display()
        ),
        ProfileStatus::Corrupt(msg) => format!("corrupt profile {msg}"),
    };
    if no_profile {
        eprintln!("note: {why}; --no-profile: using the default cost model (docs/scheduler.md)");
        return Ok(None);
    }
    eprintln!("note: {why}; profiling it now (`plexus profile {name}`)");
    let p = profile_graph(
        snap,
        &version,
        &ProfileConfig {
            algorithms: profile_algorithms().into_iter().map(String::from).collect(),
            runs: DEFAULT_RUNS,
            max_threads: cores(),
            llc_bytes: llc,
            bandwidth_limit_gbs: measured_triad_gbs(ctx),
        },
        |_| {},
    )?;
    save(&path, &p).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(Some(p))
}

/// A job's cost from `profile`, or the default model.
pub fn cost_of(profile: Option<&GraphProfile>, snap: &Snapshot, alg: &Algorithm) -> Cost {
    profile
        .and_then(|p| p.cost_of(alg))
        .unwrap_or_else(|| default_cost(snap.graph(), alg))
}

pub fn profile(ctx: &Ctx, a: ProfileArgs) -> anyhow::Result<()> {
    for name in &a.algos {
        if !profile_algorithms().contains(&name.as_str()) {
            bail!(
                "unknown algorithm '{name}' in --algos (expected some of: {})",
                profile_algorithms().join(", ")
            );
        }
    }
    let g = crate::live::open_latest(&ctx.data, &a.graph)
        .with_context(|| format!("cannot open graph '{}'", a.graph))?;
    let _ = g.weight_stats();
    let snap = Catalog::new().publish(&a.graph, g);
    let path = profile_path(ctx, &a.graph);
    let version = version_of(ctx, &a.graph)?;
    let status = load(&path, &version);
    let reuse = match status {
        ProfileStatus::Fresh(p)
            if !a.force
                && a.algos.iter().all(|x| {
                    p.algorithms.contains_key(x) || (x == "sssp" && !snap.graph().is_weighted())
                }) =>
        {
            eprintln!(
                "profile of '{}' is up to date ({}); --force profiles again",
                a.graph,
                path.display()
            );
            Some(p)
        }
        ProfileStatus::Fresh(_) => None,
        ProfileStatus::Missing => None,
        ProfileStatus::Stale { found, expected } => {
            eprintln!(
                "note: {} is stale ({found}, the graph is {expected}); profiling again",
                path.display()
            );
            None
        }
        ProfileStatus::Corrupt(msg) => {
            eprintln!("warning: corrupt profile {msg}; rebuilding it");
            None
        }
    };
    let p = match reuse {
        Some(p) => p,
        None => {
            let quiet = ctx.quiet || a.json;
            let p = profile_graph(
                &snap,
                &version,
                &ProfileConfig {
                    algorithms: a.algos.clone(),
                    runs: a.runs as usize,
                    max_threads: a.max_threads.unwrap_or_else(cores).max(1),
                    llc_bytes: Some(
                        plexus_jobs::cache::detect_llc_cached(
                            None,
                            Some(&crate::probe::llc_cache_path(ctx)),
                        )
                        .bytes,
                    ),
                    bandwidth_limit_gbs: measured_triad_gbs(ctx),
                },
                |msg| {
                    if !quiet {
                        eprintln!("  {msg}");
                    }
                },
            )?;
            save(&path, &p).with_context(|| format!("cannot write {}", path.display()))?;
            p
        }
    };
    if a.json {
        let mut v = serde_json::to_value(&p)?;
        v["path"] = json!(path.display().to_string());
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "profile of '{}' (graph version {}), median of {} runs, bytes: {}",
        p.graph, p.graph_version, p.runs, p.counter_source
    );
    println!(
        "{:<9} {:>7} {:>10} {:>12} {:>12} {:>10}  representative",
        "algorithm", "threads", "seconds", "topology MB", "state MB", "GB/s"
    );
    for (name, ap) in &p.algorithms {
        for (i, s) in ap.seconds.iter().enumerate() {
            println!(
                "{:<9} {:>7} {:>10.4} {:>12.1} {:>12.1} {:>10.3}  {}",
                name,
                i + 1,
                s,
                ap.topology_bytes / 1e6,
                ap.state_bytes / 1e6,
                ap.bandwidth_gbs.get(i).copied().unwrap_or(0.0),
                if i == 0 {
                    ap.representative.as_str()
                } else {
                    ""
                }
            );
        }
    }
    println!("interference and fusion (model terms; docs/scheduler.md):");
    for (name, ap) in &p.algorithms {
        let corun = match ap.corun_seconds {
            Some(c) => format!("co-run {c:.4} s, slowdown σ {:.3}", ap.corun_slowdown),
            None => "co-run not measured (one core)".into(),
        };
        let lanes = match (ap.fused_seconds, ap.lanes) {
            (Some([two, four]), Some(l)) => format!(
                "2 fused {two:.4} s, 4 fused {four:.4} s: base {:.3} + {:.3} per further job",
                l.base, l.per_lane
            ),
            _ => "not fused".into(),
        };
        println!("  {name:<9} {corun}; {lanes}");
    }
    println!("stored in {}", path.display());
    Ok(())
}
