//! `plexus run ALGO GRAPH`: runs one algorithm of the library on a stored
//! graph, prints a summary (or JSON), optionally verifies the result and
//! writes per-vertex results in external ids.
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use plexus_engine::algo;
use plexus_engine::registry::ExecutorKind;
use plexus_graph::Graph;
pub use plexus_jobs::request::{self, Column, Outcome, Resolved, RunRequest};
use serde_json::{json, Map, Value};

use crate::fmt::{secs, thousands};
use crate::graph_cmds::Ctx;

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Algorithm (`plexus algorithms` lists them with their options), or a Graphalytics name
    /// (BFS, PR, WCC, CDLP, LCC, SSSP) for its semantics.
    pub algorithm: String,
    /// Name of the stored graph.
    pub graph: String,
    /// Source vertex (external id) for bfs, sssp, ppr, nhop (default: the first vertex).
    #[arg(long)]
    pub source: Option<String>,
    /// PageRank damping factor, in [0, 1).
    #[arg(long, allow_hyphen_values = true)]
    pub damping: Option<f64>,
    /// Fixed number of iterations (pagerank, ppr, cdlp).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Convergence tolerance (pagerank, ppr), NetworkX's rule: stop when Σ|Δ| < n·tol.
    /// Default 1e-6 (NetworkX's); for ppr at most 1e-4/n, so its ranks end within 1e-4 in L1.
    #[arg(long, allow_hyphen_values = true)]
    pub tolerance: Option<f64>,
    /// PageRank iteration: jacobi (pagerank's default, NetworkX's), gauss-seidel (blockwise;
    /// same fixed point in about half the sweeps on graphs with id locality; GAPBS's pr), or
    /// push (ppr's default when stopping by tolerance: forward push from the source, then
    /// jacobi if the mass spreads over the graph; stops within n·tol of the exact ranks in L1).
    #[arg(long)]
    pub method: Option<algo::pagerank::Method>,
    /// PageRank contributions: double or single (f32, half the memory traffic; choose
    /// n·tolerance ≥ 1e-6). Default: single when stopping by a tolerance whose n·tolerance is
    /// at least 100 times the most f32 rounding moves the ranks (3.4e-5 at damping 0.85),
    /// else double.
    #[arg(long)]
    pub precision: Option<algo::pagerank::Precision>,
    /// Seed for coloring, mis and sampled betweenness.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Betweenness: number of sampled sources, drawn uniformly (by --seed) among the
    /// vertices with out-degree > 0, as GAPBS does; at least that many is exact
    /// (default: all, exact).
    #[arg(long)]
    pub samples: Option<usize>,
    /// nhop: number of hops.
    #[arg(long)]
    pub hops: Option<u32>,
    /// kcore: also report membership of the k-core.
    #[arg(long)]
    pub k: Option<u32>,
    /// SSSP bucket width (delta-stepping); default 4 × mean weight ÷ mean out-degree.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: Option<f64>,
    /// networkx (default) or graphalytics (LDBC Graphalytics definitions and output conventions).
    #[arg(long, value_parser = ["networkx", "graphalytics"])]
    pub semantics: Option<String>,
    /// Executor: memory (the fast in-memory kernels), scan (the algorithm's driver through
    /// the shared-scan executor, one job; pagerank and ppr run Jacobi in double precision) or
    /// ooc (the driver out of core, reading the stored graph by pages under --memory) or dist
    /// (the driver on --ranks thread ranks, or on the MPI ranks under mpirun).
    #[arg(long, default_value = "memory", value_parser = parse_executor)]
    pub executor: ExecutorKind,
    #[command(flatten)]
    pub ooc: crate::ooc::OocArgs,
    #[command(flatten)]
    pub dist: crate::dist::DistArgs,
    /// Check the result's defining property and print the outcome (exit 2 if it fails).
    #[arg(long)]
    pub verify: bool,
    /// Write per-vertex results (external ids) to FILE.csv or FILE.parquet.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Run the algorithm this many times on the loaded graph and report the
    /// median compute time (all runs listed with --json); --verify and --out
    /// use the last run, outside the timing.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Before the timed runs, run the algorithm untimed until this many
    /// seconds have passed (at least once when > 0): on some virtual
    /// machines a process's first ~0.1 s of computation runs 2-2.5x
    /// slower, which a benchmark should not count.
    #[arg(long, default_value_t = 0.0, value_parser = parse_warmup)]
    pub warmup: f64,
}

/// An executor name of the registry.
fn parse_executor(s: &str) -> Result<ExecutorKind, String> {
    ExecutorKind::parse(s).ok_or_else(|| {
        let names: Vec<&str> = ExecutorKind::ALL.iter().map(|e| e.name()).collect();
        format!(
            "unknown executor '{s}' (expected one of: {})",
            names.join(", ")
        )
    })
}

/// A warm-up duration in seconds: finite and non-negative.
fn parse_warmup(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("'{s}' is not a number of seconds >= 0")),
    }
}

impl RunArgs {
    /// Defaults for `algorithm` on `graph`, as the demo runs it (sampled
    /// betweenness so it stays quick).
    pub fn for_demo(algorithm: &str, graph: &str) -> Self {
        RunArgs {
            algorithm: algorithm.to_string(),
            graph: graph.to_string(),
            source: None,
            damping: None,
            iterations: None,
            tolerance: None,
            method: None,
            precision: None,
            seed: None,
            samples: (algorithm == "betweenness").then_some(16),
            hops: None,
            k: None,
            delta: None,
            semantics: None,
            executor: ExecutorKind::Memory,
            ooc: Default::default(),
            dist: Default::default(),
            verify: true,
            out: None,
            json: false,
            repeat: 1,
            warmup: 0.0,
        }
    }
}

/// The median of `xs` (mean of the middle two when even); 0 when empty.
/// The registry entry of `a.algorithm` for an executor that runs the
/// algorithm's driver (`ooc`, `dist`): the CLI's option checks, and the
/// networkx semantics only. `executor` names the executor in refusals.
pub(crate) fn driver_entry(
    a: &RunArgs,
    executor: &str,
) -> anyhow::Result<&'static plexus_engine::registry::Entry> {
    let Some((entry, by_ga_name)) = plexus_engine::registry::find(&a.algorithm) else {
        bail!(
            "unknown algorithm '{}' (`plexus algorithms` lists them)",
            a.algorithm
        );
    };
    check_options(entry, a)?;
    if by_ga_name || a.semantics.as_deref() == Some("graphalytics") {
        bail!("--executor {executor} runs the networkx semantics only");
    }
    Ok(entry)
}

/// PageRank's configuration for an executor that runs the algorithm's
/// driver (`ooc`, `dist`): Jacobi in double precision, the CLI's damping
/// and tolerance rules (personalised from `source` when `ppr`), on a graph
/// of `n` vertices. `executor` names the executor in refusals.
pub(crate) fn driver_pagerank_config(
    a: &RunArgs,
    ppr: bool,
    n: usize,
    source: plexus_graph::VertexId,
    executor: &str,
) -> anyhow::Result<algo::pagerank::Config> {
    if a.method.is_some() || a.precision.is_some() {
        bail!("--executor {executor} runs PageRank's driver (Jacobi in double precision); it takes no --method or --precision");
    }
    let mut cfg = algo::pagerank::Config::default();
    if let Some(d) = a.damping {
        if !(0.0..1.0).contains(&d) {
            bail!("--damping must be in [0, 1), got {d}");
        }
        cfg.damping = d;
    }
    match a.tolerance {
        Some(t) => cfg.tolerance = t,
        None if ppr => cfg.tolerance = algo::pagerank::personalized_default_tolerance(n),
        None => {}
    }
    cfg.iterations = a.iterations;
    cfg.method = algo::pagerank::Method::Jacobi;
    cfg.precision = algo::pagerank::Precision::Double;
    if ppr {
        cfg.personalization = Some(vec![source]);
    }
    Ok(cfg)
}

/// The median of `xs` (0 when empty).
pub(crate) fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl RunArgs {
    /// The library's request for these options.
    pub fn request(&self) -> RunRequest {
        RunRequest {
            algorithm: self.algorithm.clone(),
            graph: self.graph.clone(),
            source: self.source.clone(),
            damping: self.damping,
            iterations: self.iterations,
            tolerance: self.tolerance,
            method: self.method,
            precision: self.precision,
            seed: self.seed,
            samples: self.samples,
            hops: self.hops,
            k: self.k,
            delta: self.delta,
            semantics: self.semantics.clone(),
            executor: self.executor,
            per_vertex: self.out.is_some(),
        }
    }
}

/// Checks the options against the algorithm and graph (the library's
/// rules, parameters written as `--NAME`).
pub fn resolve(g: &Graph, a: &RunArgs) -> anyhow::Result<Resolved> {
    request::resolve(g, &a.request()).map_err(|e| anyhow::anyhow!(e.message("--")))
}

/// Refuses options `entry` does not take and executors that do not run it
/// (the library's rules, parameters written as `--NAME`).
pub(crate) fn check_options(
    entry: &'static plexus_engine::registry::Entry,
    a: &RunArgs,
) -> anyhow::Result<()> {
    request::check_options(entry, &a.request()).map_err(|e| anyhow::anyhow!(e.message("--")))
}

/// Runs the algorithm (on the current rayon pool).
pub fn execute(g: &Graph, p: &Resolved, verify: bool) -> anyhow::Result<Outcome> {
    request::execute(g, p, verify).map_err(|e| anyhow::anyhow!(e.message("--")))
}

/// Writes one cell.
fn cell(g: &Graph, c: &Column, v: usize, graphalytics: bool) -> String {
    match c {
        Column::Depth(d) => match d[v] {
            u32::MAX if graphalytics => i64::MAX.to_string(),
            u32::MAX => "inf".into(),
            x => x.to_string(),
        },
        Column::Vertex(x) => match x[v] {
            u32::MAX => String::new(),
            u => g.ids().external_string(u),
        },
        Column::Natural(x) => g.ids().external_string(g.from_natural(x[v])),
        Column::Int(x) => x[v].to_string(),
        Column::Float(x) => {
            if x[v].is_infinite() {
                if x[v] > 0.0 {
                    "inf".into()
                } else {
                    "-inf".into()
                }
            } else {
                format!("{:e}", x[v])
            }
        }
        Column::Bool(x) => (x[v] as u8).to_string(),
    }
}

/// Writes the per-vertex CSV through a temporary file.
pub fn write_csv(
    g: &Graph,
    o: &Outcome,
    path: &std::path::Path,
    graphalytics: bool,
) -> anyhow::Result<()> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext == "parquet" {
        return write_parquet(g, o, path, graphalytics);
    }
    plexus_graph::export::write_atomically(path, |w| {
        let mut wr = csv::Writer::from_writer(w);
        let mut header = vec!["id"];
        header.extend(o.columns.iter().map(|(n, _)| *n));
        wr.write_record(&header)?;
        let mut row: Vec<String> = Vec::with_capacity(header.len());
        for v in 0..g.num_vertices() {
            row.clear();
            row.push(g.ids().external_string(v as u32));
            for (_, c) in &o.columns {
                row.push(cell(g, c, v, graphalytics));
            }
            wr.write_record(&row)?;
        }
        wr.flush()?;
        Ok(())
    })?;
    Ok(())
}

/// An external-id column (Int64 for integer ids, Utf8 for string ids) with
/// nulls where `pick` gives `None`.
fn id_array(g: &Graph, pick: impl Fn(usize) -> Option<u32>) -> arrow_array::ArrayRef {
    use std::sync::Arc;
    let n = g.num_vertices();
    match g.ids().kind() {
        plexus_graph::IdKind::Str => Arc::new(arrow_array::StringArray::from_iter(
            (0..n).map(|v| pick(v).map(|u| g.ids().external_string(u))),
        )),
        _ => Arc::new(arrow_array::Int64Array::from_iter((0..n).map(|v| {
            pick(v).map(|u| match g.ids().external(u) {
                plexus_graph::ExternalId::Int(i) => i,
                plexus_graph::ExternalId::Str(_) => 0,
            })
        }))),
    }
}

/// Writes the per-vertex results as Parquet (zstd), through a temporary file.
/// "None" values (unreachable depth, no parent) are nulls, except BFS depth
/// under Graphalytics semantics, which keeps its i64::MAX convention.
pub fn write_parquet(
    g: &Graph,
    o: &Outcome,
    path: &std::path::Path,
    graphalytics: bool,
) -> anyhow::Result<()> {
    use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, UInt64Array};
    use std::sync::Arc;
    let path = &crate::out::resolve(path)?;
    let mut cols: Vec<(String, ArrayRef)> = vec![("id".into(), id_array(g, |v| Some(v as u32)))];
    for (name, c) in &o.columns {
        let arr: ArrayRef = match c {
            Column::Depth(d) => Arc::new(Int64Array::from_iter(d.iter().map(|&x| match x {
                u32::MAX if graphalytics => Some(i64::MAX),
                u32::MAX => None,
                x => Some(x as i64),
            }))),
            Column::Vertex(x) => id_array(g, |v| (x[v] != u32::MAX).then_some(x[v])),
            Column::Natural(x) => id_array(g, |v| Some(g.from_natural(x[v]))),
            Column::Int(x) => Arc::new(UInt64Array::from(x.clone())),
            Column::Float(x) => Arc::new(Float64Array::from(x.clone())),
            Column::Bool(x) => Arc::new(BooleanArray::from(x.clone())),
        };
        cols.push((name.to_string(), arr));
    }
    let batch = RecordBatch::try_from_iter(cols).context("building the result table")?;
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .build();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> anyhow::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props))?;
        w.write(&batch)?;
        let file = w.into_inner()?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(format!("writing {}", path.display())));
    }
    Ok(())
}

pub fn run(ctx: &Ctx, a: RunArgs) -> anyhow::Result<()> {
    crate::ooc::check_flags(&a)?;
    crate::dist::check_flags(&a)?;
    if a.executor == ExecutorKind::Ooc {
        return crate::ooc::run(ctx, &a);
    }
    if a.executor == ExecutorKind::Dist {
        return crate::dist::run(ctx, &a);
    }
    if let Some(out) = &a.out {
        crate::out::check(out, &["csv", "parquet"])?;
    }
    let t = Instant::now();
    let g = crate::live::open_latest(&ctx.data, &a.graph)?;
    let load = t.elapsed().as_secs_f64();
    let p = resolve(&g, &a)?;
    let mut warmup_runs = 0u32;
    if a.warmup > 0.0 {
        let started = Instant::now();
        while warmup_runs == 0 || started.elapsed().as_secs_f64() < a.warmup {
            drop(with_progress(p.algorithm, ctx.quiet, || {
                execute(&g, &p, false)
            })?);
            warmup_runs += 1;
        }
    }
    let mut runs = Vec::with_capacity(a.repeat as usize);
    let mut last = None;
    for i in 0..a.repeat {
        // Drop the previous result first so runs do not hold two at once.
        drop(last.take());
        let verify = a.verify && i + 1 == a.repeat;
        let o = with_progress(p.algorithm, ctx.quiet, || execute(&g, &p, verify))?;
        runs.push(o.compute_seconds);
        last = Some(o);
    }
    let o = last.ok_or_else(|| anyhow::anyhow!("--repeat must be at least 1"))?;
    let compute = median(&runs);
    let verified = o.verified.clone();
    if let Some(out) = &a.out {
        write_csv(&g, &o, out, p.graphalytics)?;
    }
    let mut obj = Map::new();
    obj.insert("algorithm".into(), json!(p.algorithm));
    obj.insert("executor".into(), json!(a.executor.name()));
    obj.insert("graph".into(), json!(a.graph));
    obj.insert(
        "semantics".into(),
        json!(if p.graphalytics {
            "graphalytics"
        } else {
            "networkx"
        }),
    );
    obj.insert("threads".into(), json!(rayon::current_num_threads()));
    obj.insert("vertices".into(), json!(g.num_vertices()));
    obj.insert("edges".into(), json!(g.num_edges()));
    obj.insert("load_seconds".into(), json!(load));
    obj.insert("compute_seconds".into(), json!(compute));
    if runs.len() > 1 {
        obj.insert("compute_seconds_runs".into(), json!(runs));
    }
    if warmup_runs > 0 {
        obj.insert("warmup_runs".into(), json!(warmup_runs));
    }
    obj.insert("iterations".into(), json!(o.iterations));
    obj.extend(o.summary.clone());
    if let Some(v) = &verified {
        obj.insert("verified".into(), json!(v.is_ok()));
        if let Err(e) = v {
            obj.insert("verify_error".into(), json!(e));
        }
    }
    if let Some(out) = &a.out {
        obj.insert("out".into(), json!(out.display().to_string()));
    }
    // With `--out -` the CSV owns standard output: the summary goes to stderr.
    let to_stderr = a.out.as_deref().is_some_and(crate::out::is_stdout);
    let mut text = String::new();
    if a.json {
        text = serde_json::to_string_pretty(&Value::Object(obj))?;
    } else {
        use std::fmt::Write as _;
        let _ = write!(
            text,
            "{} on '{}' ({} vertices, {} edges, {} threads): load {}, compute {}{}",
            p.algorithm,
            a.graph,
            thousands(g.num_vertices() as u64),
            thousands(g.num_edges()),
            rayon::current_num_threads(),
            secs(load),
            if runs.len() > 1 {
                format!(
                    "{} (median of {}, min {}, max {})",
                    secs(compute),
                    runs.len(),
                    secs(runs.iter().cloned().fold(f64::INFINITY, f64::min)),
                    secs(runs.iter().cloned().fold(0.0, f64::max))
                )
            } else {
                secs(compute)
            },
            o.iterations
                .map(|i| format!(", {i} iterations"))
                .unwrap_or_default()
        );
        for (k, v) in &o.summary {
            let _ = write!(text, "\n  {k}: {}", summarize(v));
        }
        if let Some(v) = &verified {
            match v {
                Ok(()) => text.push_str("\n  verified: yes"),
                Err(e) => {
                    let _ = write!(text, "\n  verified: NO ({e})");
                }
            }
        }
        if let Some(out) = &a.out {
            let _ = write!(text, "\n  wrote {}", out.display());
        }
    }
    if to_stderr {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
    if let Some(Err(e)) = verified {
        bail!("{} on '{}': {e}", p.algorithm, a.graph);
    }
    Ok(())
}

/// Runs `f`, showing live progress on stderr (superstep, active vertices,
/// elapsed time) once it has run for more than a second, when stderr is a
/// terminal and not `quiet`.
pub fn with_progress<R: Send>(name: &str, quiet: bool, f: impl FnOnce() -> R + Send) -> R {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, Ordering};
    if quiet || !std::io::stderr().is_terminal() {
        return f();
    }
    plexus_engine::progress::GLOBAL.reset();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let start = Instant::now();
            let bar = indicatif::ProgressBar::new_spinner();
            let mut shown = false;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(100));
                let el = start.elapsed().as_secs_f64();
                if el < 1.0 {
                    continue;
                }
                shown = true;
                let (steps, active) = plexus_engine::progress::GLOBAL.read();
                let detail = if steps > 0 {
                    format!("superstep {steps}, {} active vertices, ", thousands(active))
                } else {
                    String::new()
                };
                bar.set_message(format!("{name}: {detail}{el:.1} s"));
                bar.tick();
            }
            if shown {
                bar.finish_and_clear();
            }
        });
        let r = f();
        done.store(true, Ordering::Relaxed);
        r
    })
}

/// A short rendering of a summary value.
pub fn summarize(v: &Value) -> String {
    match v {
        Value::Array(items) => items
            .iter()
            .map(
                |i| match (i.get("id"), i.get("value"), i.get("size"), i.get("count")) {
                    (Some(id), Some(val), _, _) => format!(
                        "{} ({:.4e})",
                        id.as_str().unwrap_or("?"),
                        val.as_f64().unwrap_or(0.0)
                    ),
                    (_, _, Some(s), Some(c)) => format!("{c}×{s}"),
                    _ => i.to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}
