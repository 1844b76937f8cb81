//! `plexus simulate JOBS.toml --machine MACHINE.toml`: replays a job stream
//! through the scheduler's policies on a modelled machine (the simulator in
//! `plexus_jobs::sched::sim`, with the profiles of the stream's graphs) and
//! reports throughput and QoS per policy.
//!
//! MACHINE.toml:
//!
//! ```toml
//! [machine]
//! nodes = 2                      # NUMA nodes (sockets)
//! cores_per_node = 8
//! bandwidth_gbs_per_node = 40.0  # STREAM triad of one node, GB/s
//! remote_factor = 1.5            # optional (default 1.5)
//! oversubscription_penalty = 0.05 # optional (default: calibrated value)
//! resize_seconds = 0.001         # optional: stall of a resized unit (default 1 ms)
//! cpus = [[0, 1], [2, 3]]        # optional: CPU ids per node (`plexus batch --machine`)
//! description = "..."            # optional
//! ```
use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context};
use clap::Args;
use plexus_jobs::sched::model::Machine;
use plexus_jobs::sched::{simulate as run_sim, Policy, SimJob};
use plexus_jobs::{Algorithm, Catalog};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::batch::{open_graphs, parse_jobs};
use crate::graph_cmds::Ctx;

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// The job stream (TOML, as for `plexus batch`; `plexus mix` writes one).
    pub jobs: PathBuf,
    /// The machine model (TOML with a `[machine]` table).
    #[arg(long)]
    pub machine: PathBuf,
    /// Policies to replay, comma-separated (fifo, all, congra and its
    /// variants congra-fixed, congra-nola, congra-nobypass, congra-plain, …;
    /// see `plexus batch --help`).
    #[arg(long, value_delimiter = ',', default_values_t = Policy::ALL.map(|p| p.name().to_string()))]
    pub policies: Vec<String>,
    /// Print one JSON object (`policies` keyed by name).
    #[arg(long)]
    pub json: bool,
    /// Include each policy's decisions (text: printed; JSON: `decisions`).
    #[arg(long)]
    pub explain: bool,
    /// Do not profile missing or stale profiles; use the default cost model.
    #[arg(long)]
    pub no_profile: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineFile {
    machine: toml::Spanned<MachineEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineEntry {
    nodes: usize,
    cores_per_node: usize,
    bandwidth_gbs_per_node: f64,
    remote_factor: Option<f64>,
    oversubscription_penalty: Option<f64>,
    resize_seconds: Option<f64>,
    /// The CPU ids of each node (for `plexus batch --machine`, which pins
    /// units to them); the simulator ignores them.
    cpus: Option<Vec<Vec<usize>>>,
    #[allow(dead_code)]
    description: Option<String>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses a MACHINE.toml; errors name the file and line.
pub fn parse_machine(path: &str, text: &str) -> anyhow::Result<Machine> {
    let f: MachineFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        anyhow!("{path}:{line}: {}", e.message().trim().replace('\n', " "))
    })?;
    let line = line_of(text, f.machine.span().start);
    let e = f.machine.get_ref();
    let fail = |msg: String| anyhow!("{path}:{line}: {msg}");
    if e.nodes == 0 || e.nodes > 1024 {
        return Err(fail(format!("nodes must be 1–1024, got {}", e.nodes)));
    }
    if e.cores_per_node == 0 || e.cores_per_node > 4096 {
        return Err(fail(format!(
            "cores_per_node must be 1–4096, got {}",
            e.cores_per_node
        )));
    }
    if !(e.bandwidth_gbs_per_node > 0.0 && e.bandwidth_gbs_per_node.is_finite()) {
        return Err(fail(format!(
            "bandwidth_gbs_per_node must be a positive number, got {}",
            e.bandwidth_gbs_per_node
        )));
    }
    let mut m = Machine::model(e.nodes, e.cores_per_node, e.bandwidth_gbs_per_node);
    if let Some(r) = e.remote_factor {
        if !(r >= 1.0 && r.is_finite()) {
            return Err(fail(format!(
                "remote_factor must be a number >= 1, got {r}"
            )));
        }
        m.remote_factor = r;
    }
    if let Some(p) = e.oversubscription_penalty {
        if !(p >= 0.0 && p.is_finite()) {
            return Err(fail(format!(
                "oversubscription_penalty must be a number >= 0, got {p}"
            )));
        }
        m.oversubscription_penalty = p;
    }
    if let Some(r) = e.resize_seconds {
        if !(r >= 0.0 && r.is_finite()) {
            return Err(fail(format!(
                "resize_seconds must be a number >= 0, got {r}"
            )));
        }
        m.resize_seconds = r;
    }
    if let Some(cpus) = &e.cpus {
        if cpus.len() != e.nodes {
            return Err(fail(format!(
                "cpus must list one CPU list per node ({} nodes), got {}",
                e.nodes,
                cpus.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for (n, list) in cpus.iter().enumerate() {
            if list.len() != e.cores_per_node {
                return Err(fail(format!(
                    "cpus of node {n} must list cores_per_node = {} CPUs, got {}",
                    e.cores_per_node,
                    list.len()
                )));
            }
            if let Some(c) = list.iter().find(|&&c| !seen.insert(c)) {
                return Err(fail(format!("CPU {c} is listed twice in cpus")));
            }
        }
        m.cpus = cpus.clone();
    }
    Ok(m)
}

pub fn simulate(ctx: &Ctx, a: SimulateArgs) -> anyhow::Result<()> {
    let mpath = a.machine.display().to_string();
    let mtext =
        std::fs::read_to_string(&a.machine).with_context(|| format!("cannot read {mpath}"))?;
    let machine = parse_machine(&mpath, &mtext)?;
    let policies: Vec<Policy> = a
        .policies
        .iter()
        .map(|p| p.parse::<Policy>().map_err(|e| anyhow!("--policies: {e}")))
        .collect::<anyhow::Result<_>>()?;
    if policies.is_empty() {
        bail!("--policies: name at least one policy");
    }
    let path = a.jobs.display().to_string();
    let text = std::fs::read_to_string(&a.jobs).with_context(|| format!("cannot read {path}"))?;
    let mut planned = parse_jobs(&path, &text)?;
    let catalog = Catalog::new();
    let snaps = open_graphs(ctx, &path, &mut planned, &catalog)?;
    let mut profiles = HashMap::new();
    for p in &planned {
        if !profiles.contains_key(&p.graph) {
            let prof = crate::profile::ensure_profile(
                ctx,
                &p.graph,
                &snaps[&p.graph],
                a.no_profile,
                None,
            )?;
            profiles.insert(p.graph.clone(), prof);
        }
    }
    let jobs: Vec<SimJob> = planned
        .iter()
        .map(|p| SimJob {
            name: p.spec.name.clone(),
            arrival: p.at,
            cost: crate::profile::cost_of(
                profiles[&p.graph].as_ref(),
                &snaps[&p.graph],
                &p.spec.algorithm,
            ),
            group: (!matches!(p.spec.algorithm, Algorithm::Sssp { .. }))
                .then(|| format!("{}@{}", p.spec.algorithm.name(), p.graph)),
        })
        .collect();
    let mut out = serde_json::Map::new();
    let mut reports = Vec::new();
    for &policy in &policies {
        let r = run_sim(&machine, policy, &jobs);
        let mut v = json!({
            "throughput_jobs_per_hour": r.throughput_jobs_per_hour,
            "makespan_seconds": r.makespan_seconds,
            "qos_p50": r.qos_p50,
            "qos_p95": r.qos_p95,
            "jobs": r.jobs,
        });
        if a.explain {
            v["decisions"] = json!(r.decisions);
        }
        out.insert(policy.name().to_string(), v);
        reports.push(r);
    }
    let profile_source: Value = profiles
        .iter()
        .map(|(g, p)| {
            (
                g.clone(),
                json!(p
                    .as_ref()
                    .map_or("default cost model".to_string(), |p| format!(
                        "profile {} ({} threads measured; {})",
                        p.graph_version, p.max_threads, p.counter_source
                    ))),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    if a.json {
        let v = json!({
            "jobs_file": path,
            "machine_file": mpath,
            "machine": machine,
            "jobs": planned.len(),
            "profiles": profile_source,
            "policies": Value::Object(out),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "simulated {} jobs on {} node(s) × {} cores, {:.1} GB/s per node (remote factor {}, oversubscription penalty {}, resize stall {} s)",
        planned.len(),
        machine.nodes,
        machine.cores_per_node,
        machine.bandwidth_gbs_per_node,
        machine.remote_factor,
        machine.oversubscription_penalty,
        machine.resize_seconds
    );
    println!(
        "{:<16} {:>14} {:>12} {:>9} {:>9}",
        "policy", "jobs/hour", "makespan s", "QoS p50", "QoS p95"
    );
    let f = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.2}"));
    for r in &reports {
        println!(
            "{:<16} {:>14.0} {:>12.3} {:>9} {:>9}",
            r.policy,
            r.throughput_jobs_per_hour,
            r.makespan_seconds,
            f(r.qos_p50),
            f(r.qos_p95)
        );
    }
    if a.explain {
        for r in &reports {
            println!("decisions ({}):", r.policy);
            for d in &r.decisions {
                println!("  {d}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_errors_name_the_line() {
        let e = parse_machine("M.toml", "[machine]\nnodes = 2\ncores_per_node = 8\n")
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("M.toml:1:"), "{e}");
        let e = parse_machine(
            "M.toml",
            "# x\n[machine]\nnodes = 0\ncores_per_node = 8\nbandwidth_gbs_per_node = 1\n",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.starts_with("M.toml:2:") && e.contains("nodes"), "{e}");
        let e = parse_machine(
            "M.toml",
            "[machine]\nnodes = 1\ncores_per_node = 8\nbandwidth_gbs_per_node = 1\nbogus = 3\n",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.starts_with("M.toml:5:") || e.starts_with("M.toml:1:"),
            "{e}"
        );
        let m = parse_machine(
            "M.toml",
            "[machine]\nnodes = 2\ncores_per_node = 8\nbandwidth_gbs_per_node = 40\nremote_factor = 1.4\n",
        )
        .unwrap();
        assert_eq!((m.nodes, m.cores(), m.remote_factor), (2, 16, 1.4));
    }
}
