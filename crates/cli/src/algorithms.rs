//! `plexus algorithms`: the registry of algorithms, their parameters and
//! executors, as a table or as JSON (`--json`), for people and for scripts
//! such as the benchmark harness.
use clap::Args;
use plexus_engine::registry::{self, ALGORITHMS, PARAMS};
use serde_json::{json, Value};

#[derive(Args, Debug, Clone)]
pub struct AlgorithmsArgs {
    /// Print the registry as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The registry as JSON: every algorithm with its parameters (name, kind,
/// rule), executors, result columns and what `--verify` checks.
pub fn registry_json() -> Value {
    let algorithms: Vec<Value> = ALGORITHMS
        .iter()
        .map(|e| {
            let params: Vec<Value> = e
                .params
                .iter()
                .filter_map(|p| registry::param(p))
                .map(|p| json!({"name": p.name, "kind": p.kind, "rule": p.rule}))
                .collect();
            json!({
                "name": e.name,
                "about": e.about,
                "params": params,
                "executors": e.executors.iter().map(|x| x.name()).collect::<Vec<_>>(),
                "columns": e.columns,
                "needs_weights": e.needs_weights,
                "graphalytics": e.graphalytics,
                "batch": e.batch,
                "bench_graphs": e.bench_graphs,
                "verifies": e.verifies,
            })
        })
        .collect();
    json!({ "algorithms": algorithms, "params": PARAMS })
}

/// Prints the registry.
pub fn run(a: &AlgorithmsArgs) -> anyhow::Result<()> {
    if a.json {
        println!("{}", registry_json());
        return Ok(());
    }
    println!(
        "{:<12} {:<14} {:<40} about",
        "algorithm", "executors", "options"
    );
    for e in ALGORITHMS {
        let opts: Vec<String> = e.params.iter().map(|p| format!("--{p}")).collect();
        let execs: Vec<&str> = e.executors.iter().map(|x| x.name()).collect();
        println!(
            "{:<12} {:<14} {:<40} {}",
            e.name,
            execs.join(","),
            if opts.is_empty() {
                "-".to_string()
            } else {
                opts.join(" ")
            },
            e.about
        );
    }
    println!();
    println!("options:");
    for p in PARAMS {
        println!("  --{:<11} {}", p.name, p.rule);
    }
    Ok(())
}
