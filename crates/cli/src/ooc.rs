//! `plexus run ALGO GRAPH --executor ooc --memory SIZE [--io active|full]`:
//! the algorithm's driver on the out-of-core executor (`plexus-ooc`), which
//! reads the stored graph by page ranges instead of mapping it. Kept apart
//! from `run.rs` (which loads the graph in memory): `run::run` hands over
//! to [`run`] when `--executor ooc` is given.
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use plexus_engine::algo;
use plexus_engine::program::GraphView;
use plexus_engine::registry::{Algorithm, ExecutorKind};
use plexus_graph::store::GRAPH_FILE;
use plexus_graph::{Graph, IdMap, VertexId};
use plexus_jobs::request::{Column, Outcome};
use plexus_ooc::{IoMode, OocExecutor, OocOptions};
use serde_json::{json, Map, Value};

use crate::fmt::{secs, thousands};
use crate::graph_cmds::Ctx;
use crate::run::RunArgs;

mod batch;
pub use batch::batch;

/// The options of the out-of-core executor.
#[derive(Args, Debug, Clone, Default)]
pub struct OocArgs {
    /// --executor ooc: the memory budget (bytes, or with a K, M, G or T suffix), counting the
    /// per-vertex arrays, the algorithm's state, the read buffer and the message logs; a budget
    /// too small for one interval is refused, naming the least that fits.
    #[arg(long, value_parser = parse_memory)]
    pub memory: Option<u64>,
    /// --executor ooc: which pages a superstep reads: active (only those holding the lists it
    /// needs; default) or full (every page, every superstep: the GraphChi-style baseline).
    #[arg(long, value_parser = ["active", "full"])]
    pub io: Option<String>,
}

pub(crate) fn parse_memory(s: &str) -> Result<u64, String> {
    plexus_ooc::parse_size(s).map_err(|e| e.to_string())
}

/// Refuses `--memory` and `--io` without `--executor ooc`.
pub fn check_flags(a: &RunArgs) -> anyhow::Result<()> {
    if a.executor != ExecutorKind::Ooc && (a.ooc.memory.is_some() || a.ooc.io.is_some()) {
        bail!("--memory and --io apply to --executor ooc only");
    }
    Ok(())
}

/// The process's peak resident memory (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The stored file of graph `name`, refused when it does not exist or has
/// committed transactions not yet compacted into it.
pub(crate) fn graph_file(ctx: &Ctx, name: &str) -> anyhow::Result<std::path::PathBuf> {
    let dir = ctx.data.graph_dir(name);
    let file = dir.join(GRAPH_FILE);
    if !file.exists() {
        bail!(
            "no graph named '{name}' in {} (see `plexus list`)",
            ctx.data.root().display()
        );
    }
    if std::fs::metadata(dir.join("wal.log")).is_ok_and(|m| m.len() > 16) {
        bail!(
            "graph '{name}' has committed transactions in wal.log; --executor ooc reads the base \
             file only: run `plexus compact {name}` first"
        );
    }
    Ok(file)
}

/// Runs `a` on the out-of-core executor.
pub fn run(ctx: &Ctx, a: &RunArgs) -> anyhow::Result<()> {
    let entry = crate::run::driver_entry(a, "ooc")?;
    if a.repeat > 1 || a.warmup > 0.0 {
        bail!("--executor ooc does not take --repeat or --warmup yet");
    }
    let Some(memory) = a.ooc.memory else {
        bail!("--executor ooc needs --memory SIZE (for example --memory 256M)");
    };
    let file = graph_file(ctx, &a.graph)?;
    if let Some(out) = &a.out {
        crate::out::check(out, &["csv", "parquet"])?;
    }
    let io = match a.ooc.io.as_deref() {
        Some("full") => IoMode::Full,
        _ => IoMode::Active,
    };
    let t = Instant::now();
    let head = plexus_graph::store::read_header(&file)?;
    let n = head.num_vertices;
    let opts = OocOptions {
        memory,
        io,
        state_bytes: plexus_ooc::state_bytes(entry.name, n, true),
        weights: entry.algorithm == Algorithm::Sssp,
        ..Default::default()
    };
    let exec = OocExecutor::open(&file, &opts)?;
    if exec.graph().num_vertices() == 0 {
        bail!("graph '{}' has no vertices", a.graph);
    }
    let source = match &a.source {
        Some(s) => exec
            .graph()
            .ids()?
            .lookup_str(s)
            .with_context(|| format!("unknown source vertex '{s}' in graph '{}'", a.graph))?,
        None => 0,
    };
    if entry.algorithm == Algorithm::Sssp {
        exec.graph().prepare_weight_stats()?;
    }
    // --verify checks the result with the engine's verifier over the mapped
    // store (opened in O(1); its pages are read only by the check).
    let mapped = a
        .verify
        .then(|| crate::live::open_latest(&ctx.data, &a.graph))
        .transpose()?;
    let load = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut s = Map::new();
    let done = crate::run::with_progress(entry.name, ctx.quiet, || {
        execute(&exec, entry.algorithm, a, source, &mut s, mapped.as_ref())
    })?;
    let compute = t.elapsed().as_secs_f64();
    if let Some(e) = exec.take_fault() {
        return Err(e).context(format!("{} on '{}' out of core", entry.name, a.graph));
    }
    if let Some(out) = &a.out {
        // The output names vertices by external id: the store's id
        // sections, read through a mapping.
        let g = match mapped.as_ref() {
            Some(g) => g,
            None => &crate::live::open_latest(&ctx.data, &a.graph)?,
        };
        let o = Outcome {
            columns: done.columns,
            summary: Map::new(),
            iterations: done.iterations,
            verified: None,
            compute_seconds: compute,
        };
        crate::run::write_csv(g, &o, out, false)?;
    }
    let verified = done.verified.clone();
    report(
        a,
        entry.name,
        &exec,
        (load, compute),
        done.iterations,
        verified.as_ref(),
        s,
    )?;
    if let Some(Err(e)) = verified {
        bail!("{} on '{}': {e}", entry.name, a.graph);
    }
    Ok(())
}

/// What a run produced: its iteration count, per-vertex columns (internal
/// ids, as the in-memory executor's) and, with `--verify`, the verdict.
struct Done {
    iterations: Option<usize>,
    columns: Vec<(&'static str, Column)>,
    verified: Option<Result<(), String>>,
}

impl Done {
    fn new(
        iterations: Option<usize>,
        columns: Vec<(&'static str, Column)>,
        verified: Option<Result<(), plexus_engine::VerifyError>>,
    ) -> Self {
        Done {
            iterations,
            columns,
            verified: verified.map(|r| r.map_err(|e| e.to_string())),
        }
    }
}

/// Runs the algorithm's driver on `exec`; fills the summary `s`, and
/// verifies the result on `check` (the mapped store) when given.
fn execute(
    exec: &OocExecutor,
    algorithm: Algorithm,
    a: &RunArgs,
    source: VertexId,
    s: &mut Map<String, Value>,
    check: Option<&Graph>,
) -> anyhow::Result<Done> {
    Ok(match algorithm {
        Algorithm::Bfs => {
            let cfg = algo::bfs::Config {
                source,
                ..Default::default()
            };
            let o = algo::bfs::run_on(exec, &cfg)?;
            let reached = o.depth.iter().filter(|&&d| d != u32::MAX).count();
            let maxd = o.depth.iter().filter(|&&d| d != u32::MAX).max();
            s.insert("reached".into(), json!(reached));
            s.insert("max_depth".into(), json!(maxd.copied().unwrap_or(0)));
            let v = check.map(|g| algo::bfs::verify(g, &cfg, &o));
            let cols = vec![
                ("depth", Column::Depth(o.depth)),
                ("parent", Column::Vertex(o.parent)),
            ];
            Done::new(Some(o.iterations), cols, v)
        }
        Algorithm::Sssp => {
            let cfg = algo::sssp::Config {
                source,
                delta: a.delta,
            };
            let o = algo::sssp::run_on(exec, &cfg)?;
            let fin = o.dist.iter().copied().filter(|d| d.is_finite());
            s.insert("reached".into(), json!(fin.clone().count()));
            s.insert("max_distance".into(), json!(fin.fold(0.0, f64::max)));
            let v = check.map(|g| algo::sssp::verify(g, &cfg, &o));
            let cols = vec![
                ("distance", Column::Float(o.dist)),
                ("parent", Column::Vertex(o.parent)),
            ];
            Done::new(Some(o.iterations), cols, v)
        }
        Algorithm::PageRank | Algorithm::Ppr => pagerank(exec, algorithm, a, source, s, check)?,
        Algorithm::Wcc => {
            let cfg = algo::wcc::Config::default();
            let o = algo::wcc::run_on(exec, &cfg)?;
            s.insert("components".into(), json!(o.count));
            let v = check.map(|g| algo::wcc::verify(g, &cfg, &o));
            Done::new(None, vec![("component", Column::Vertex(o.component))], v)
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
            let v = check.map(|g| algo::cdlp::verify(g, &cfg, &o));
            Done::new(
                Some(o.iterations),
                vec![("label", Column::Natural(o.label))],
                v,
            )
        }
        _ => others(exec, algorithm, a, s, check)?,
    })
}

/// Colouring, MIS and k-core (see [`execute`]).
fn others(
    exec: &OocExecutor,
    algorithm: Algorithm,
    a: &RunArgs,
    s: &mut Map<String, Value>,
    check: Option<&Graph>,
) -> anyhow::Result<Done> {
    let ints = |x: &[u32]| Column::Int(x.iter().map(|&c| u64::from(c)).collect());
    Ok(match algorithm {
        Algorithm::Coloring => {
            let cfg = algo::coloring::Config {
                seed: a.seed.unwrap_or(algo::coloring::DEFAULT_SEED),
            };
            let o = algo::coloring::run_on(exec, &cfg)?;
            s.insert("colors".into(), json!(o.num_colors));
            let v = check.map(|g| algo::coloring::verify(g, &cfg, &o));
            Done::new(None, vec![("color", ints(&o.color))], v)
        }
        Algorithm::Mis => {
            let cfg = algo::mis::Config {
                seed: a.seed.unwrap_or(algo::mis::DEFAULT_SEED),
            };
            let o = algo::mis::run_on(exec, &cfg)?;
            s.insert("size".into(), json!(o.size));
            let v = check.map(|g| algo::mis::verify(g, &cfg, &o));
            Done::new(None, vec![("in_set", Column::Bool(o.in_set))], v)
        }
        Algorithm::Kcore => {
            let cfg = algo::kcore::Config { k: a.k };
            let o = algo::kcore::run_on(exec, &cfg)?;
            s.insert("max_core".into(), json!(o.max_core));
            let v = check.map(|g| algo::kcore::verify(g, &cfg, &o));
            let mut cols = vec![("core", ints(&o.core))];
            if let Some(m) = o.in_k_core {
                s.insert(
                    "k_core_size".into(),
                    json!(m.iter().filter(|&&b| b).count()),
                );
                cols.push(("in_k_core", Column::Bool(m)));
            }
            Done::new(None, cols, v)
        }
        _ => bail!("--executor ooc does not run this algorithm"),
    })
}

/// PageRank or personalised PageRank: the driver's Jacobi iteration in
/// double precision.
fn pagerank(
    exec: &OocExecutor,
    algorithm: Algorithm,
    a: &RunArgs,
    source: VertexId,
    s: &mut Map<String, Value>,
    check: Option<&Graph>,
) -> anyhow::Result<Done> {
    let n = exec.graph().num_vertices();
    let cfg = crate::run::driver_pagerank_config(a, algorithm == Algorithm::Ppr, n, source, "ooc")?;
    let o = algo::pagerank::run_on(exec, &cfg)?;
    s.insert("converged".into(), json!(o.converged));
    s.insert("change".into(), json!(o.change));
    // The ten highest ranks (ties by id), without an O(n) index.
    let by = |x: &usize, y: &usize| o.rank[*y].total_cmp(&o.rank[*x]).then(x.cmp(y));
    let mut idx: Vec<usize> = Vec::with_capacity(11);
    for v in 0..o.rank.len() {
        if idx.len() == 10 && by(&v, &idx[9]).is_ge() {
            continue;
        }
        let at = idx.partition_point(|u| by(u, &v).is_lt());
        idx.insert(at, v);
        idx.truncate(10);
    }
    let ids: IdMap = exec.graph().ids()?;
    let top: Vec<Value> = idx
        .iter()
        .map(|&v| json!({"id": ids.external_string(v as u32), "value": o.rank[v]}))
        .collect();
    s.insert("top".into(), Value::Array(top));
    let v = check.map(|g| algo::pagerank::verify(g, &cfg, &o));
    Ok(Done::new(
        Some(o.iterations),
        vec![("rank", Column::Float(o.rank))],
        v,
    ))
}

/// Prints the summary and the executor's counters (on standard error when
/// `--out -` writes the result to standard output).
fn report(
    a: &RunArgs,
    name: &str,
    exec: &OocExecutor,
    (load, compute): (f64, f64),
    iterations: Option<usize>,
    verified: Option<&Result<(), String>>,
    summary: Map<String, Value>,
) -> anyhow::Result<()> {
    let g = exec.graph();
    let r = exec.report();
    let peak = peak_rss_bytes();
    if a.json {
        let mut obj = Map::new();
        obj.insert("algorithm".into(), json!(name));
        obj.insert("executor".into(), json!("ooc"));
        obj.insert("graph".into(), json!(a.graph));
        obj.insert("threads".into(), json!(rayon::current_num_threads()));
        obj.insert("vertices".into(), json!(g.num_vertices()));
        obj.insert("arcs".into(), json!(g.num_arcs()));
        obj.insert("load_seconds".into(), json!(load));
        obj.insert("compute_seconds".into(), json!(compute));
        obj.insert("iterations".into(), json!(iterations));
        obj.extend(summary);
        obj.insert("peak_rss_bytes".into(), json!(peak));
        if let Some(v) = verified {
            obj.insert("verified".into(), json!(v.is_ok()));
            if let Err(e) = v {
                obj.insert("verify_error".into(), json!(e));
            }
        }
        if let Some(out) = &a.out {
            obj.insert("out".into(), json!(out.display().to_string()));
        }
        obj.insert("ooc".into(), serde_json::to_value(&r)?);
        let text = serde_json::to_string_pretty(&Value::Object(obj))?;
        print_summary(a, &text);
        return Ok(());
    }
    use std::fmt::Write as _;
    let mut text = format!(
        "{name} on '{}' out of core ({} vertices, {} arcs, --memory {}, --io {}): load {}, compute {}{}",
        a.graph,
        thousands(g.num_vertices() as u64),
        thousands(g.num_arcs()),
        plexus_ooc::human_bytes(r.memory),
        a.ooc.io.as_deref().unwrap_or("active"),
        secs(load),
        secs(compute),
        iterations
            .map(|i| format!(", {i} iterations"))
            .unwrap_or_default()
    );
    for (k, v) in &summary {
        let _ = write!(text, "\n  {k}: {}", crate::run::summarize(v));
    }
    let _ = write!(
        text,
        "\n  read: {} in {} pages, {} preads, {} of I/O ({} intervals, {} supersteps)\
         \n  logs: {} written, {} read back\n  peak resident: {}",
        plexus_ooc::human_bytes(r.bytes_read),
        thousands(r.pages_read),
        thousands(r.reads),
        secs(r.io_seconds),
        r.intervals,
        r.supersteps.len(),
        plexus_ooc::human_bytes(r.log_bytes_written),
        plexus_ooc::human_bytes(r.log_bytes_read),
        peak.map_or_else(|| "unknown".into(), plexus_ooc::human_bytes),
    );
    match verified {
        Some(Ok(())) => text.push_str("\n  verified: yes"),
        Some(Err(e)) => {
            let _ = write!(text, "\n  verified: NO ({e})");
        }
        None => {}
    }
    if let Some(out) = &a.out {
        let _ = write!(text, "\n  wrote {}", out.display());
    }
    print_summary(a, &text);
    Ok(())
}

/// Prints the summary: on standard error when `--out -` holds standard
/// output.
fn print_summary(a: &RunArgs, text: &str) {
    if a.out.as_deref().is_some_and(crate::out::is_stdout) {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}
