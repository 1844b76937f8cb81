//! `plexus run ALGO GRAPH`: runs one algorithm of the library on a stored
//! graph, prints a summary (or JSON), optionally verifies the result and
//! writes per-vertex results in external ids.
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use plexus_engine::algo;
use plexus_engine::registry::{self, Algorithm, Entry, ExecutorKind};
use plexus_graph::{Graph, VertexId};
use plexus_jobs::scan::ScanExecutor;
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
    /// ooc (the driver out of core, reading the stored graph by pages under --memory).
    #[arg(long, default_value = "memory", value_parser = parse_executor)]
    pub executor: ExecutorKind,
    #[command(flatten)]
    pub ooc: crate::ooc::OocArgs,
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
            verify: true,
            out: None,
            json: false,
            repeat: 1,
            warmup: 0.0,
        }
    }
}

/// A per-vertex result column.
pub enum Column {
    /// Counts/depths; `u32::MAX` is "none" (printed as `inf`, or i64::MAX for Graphalytics BFS).
    Depth(Vec<u32>),
    /// A vertex (internal id) per vertex, `u32::MAX` = none; printed as an external id.
    Vertex(Vec<u32>),
    /// A natural id per vertex (CDLP labels); printed as an external id.
    Natural(Vec<u32>),
    /// Plain integers.
    Int(Vec<u64>),
    /// Floats (`inf` for infinity).
    Float(Vec<f64>),
    /// Booleans (`1`/`0`).
    Bool(Vec<bool>),
}

/// What an algorithm run produced.
pub struct Outcome {
    pub columns: Vec<(&'static str, Column)>,
    pub summary: Map<String, Value>,
    pub iterations: Option<usize>,
    pub verified: Option<Result<(), String>>,
    /// Seconds spent in the algorithm itself (verification excluded).
    pub compute_seconds: f64,
}

/// The median of `xs` (mean of the middle two when even); 0 when empty.
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs `f`, adding its wall time to `acc`.
fn timed<R>(acc: &mut f64, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    *acc += t.elapsed().as_secs_f64();
    r
}

/// Parameters after resolving names and ids.
pub struct Params {
    /// The algorithm's registry entry.
    pub entry: &'static Entry,
    /// Its name.
    pub algorithm: &'static str,
    pub graphalytics: bool,
    pub source: VertexId,
    pub args: RunArgs,
}

/// The options of `a` that were given, by their registry names.
fn given_options(a: &RunArgs) -> [(&'static str, bool); 12] {
    [
        ("source", a.source.is_some()),
        ("damping", a.damping.is_some()),
        ("iterations", a.iterations.is_some()),
        ("tolerance", a.tolerance.is_some()),
        ("method", a.method.is_some()),
        ("precision", a.precision.is_some()),
        ("seed", a.seed.is_some()),
        ("samples", a.samples.is_some()),
        ("hops", a.hops.is_some()),
        ("k", a.k.is_some()),
        ("delta", a.delta.is_some()),
        ("semantics", a.semantics.is_some()),
    ]
}

/// Refuses options `entry` does not take and executors that do not run it.
pub(crate) fn check_options(entry: &Entry, a: &RunArgs) -> anyhow::Result<()> {
    for (opt, given) in given_options(a) {
        if !given || entry.takes(opt) {
            continue;
        }
        let hint = match (entry.algorithm, opt) {
            (Algorithm::PageRank, "source") => "; personalised PageRank is `ppr`".to_string(),
            _ if entry.params.is_empty() => format!("; {} takes no options", entry.name),
            _ => {
                let takes: Vec<String> = entry.params.iter().map(|p| format!("--{p}")).collect();
                format!(" (it takes {})", takes.join(", "))
            }
        };
        bail!("{} takes no --{opt}{hint}", entry.name);
    }
    if !entry.runs_on(a.executor) {
        bail!(
            "{} runs only on the {} executor",
            entry.name,
            entry.executors[0].name()
        );
    }
    if a.executor == ExecutorKind::Scan && (a.method.is_some() || a.precision.is_some()) {
        bail!(
            "--executor scan runs {}'s driver (Jacobi iteration in double precision); \
             --method and --precision choose among the memory executor's kernels",
            entry.name
        );
    }
    Ok(())
}

/// Resolves the algorithm name, semantics and source vertex.
pub fn resolve(g: &Graph, a: &RunArgs) -> anyhow::Result<Params> {
    let Some((entry, by_ga_name)) = registry::find(&a.algorithm) else {
        let names: Vec<&str> = registry::ALGORITHMS.iter().map(|e| e.name).collect();
        bail!(
            "unknown algorithm '{}' (expected one of: {}; `plexus algorithms` lists them)",
            a.algorithm,
            names.join(", ")
        );
    };
    check_options(entry, a)?;
    let graphalytics = by_ga_name || a.semantics.as_deref() == Some("graphalytics");
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
    if let Some(d) = a.damping {
        if !(0.0..1.0).contains(&d) {
            bail!("--damping must be in [0, 1), got {d}");
        }
    }
    if let Some(t) = a.tolerance {
        if !(t > 0.0 && t.is_finite()) {
            bail!("--tolerance must be a positive number, got {t}");
        }
    }
    if let Some(k) = a.samples {
        if k == 0 || k > g.num_vertices() {
            bail!(
                "--samples must be between 1 and the number of vertices ({}), got {k}",
                g.num_vertices()
            );
        }
    }
    if let Some(k) = a.k {
        if k as usize > g.num_vertices() {
            bail!(
                "--k must be at most the number of vertices ({}), got {k}",
                g.num_vertices()
            );
        }
    }
    if let Some(d) = a.delta {
        if !(d > 0.0 && d.is_finite()) {
            bail!("--delta must be a positive number, got {d}");
        }
    }
    Ok(Params {
        entry,
        algorithm: entry.name,
        graphalytics,
        source,
        args: a.clone(),
    })
}

fn verdict(r: Result<(), plexus_engine::VerifyError>) -> Result<(), String> {
    r.map_err(|e| e.to_string())
}

fn top10(g: &Graph, vals: &[f64]) -> Value {
    // The ten largest (ties by id) without sorting every vertex.
    let by_value = |a: &usize, b: &usize| vals[*b].total_cmp(&vals[*a]).then(a.cmp(b));
    let mut idx: Vec<usize> = (0..vals.len()).collect();
    if idx.len() > 10 {
        idx.select_nth_unstable_by(10, by_value);
        idx.truncate(10);
    }
    idx.sort_by(by_value);
    Value::Array(
        idx.iter()
            .take(10)
            .map(|&v| json!({"id": g.ids().external_string(v as u32), "value": vals[v]}))
            .collect(),
    )
}

fn label_stats(labels: &[u32]) -> (usize, Value) {
    let mut sizes = std::collections::HashMap::<u32, u64>::new();
    for &l in labels {
        *sizes.entry(l).or_default() += 1;
    }
    let mut by_size: std::collections::BTreeMap<u64, u64> = Default::default();
    for s in sizes.values() {
        *by_size.entry(*s).or_default() += 1;
    }
    let hist: Vec<Value> = by_size
        .iter()
        .rev()
        .take(10)
        .map(|(s, c)| json!({"size": s, "count": c}))
        .collect();
    (sizes.len(), Value::Array(hist))
}

fn depth_stats(d: &[u32]) -> (u64, u32) {
    let reached = d.iter().filter(|&&x| x != u32::MAX).count() as u64;
    (
        reached,
        d.iter()
            .copied()
            .filter(|&x| x != u32::MAX)
            .max()
            .unwrap_or(0),
    )
}

/// Where an algorithm runs: the in-memory kernels, or its driver on the
/// shared-scan executor.
enum Exec<'g> {
    Memory,
    Scan(ScanExecutor<'g>),
}

/// `algo::$m::run` in memory, `algo::$m::run_on` on the scan executor.
macro_rules! on_executor {
    ($ex:expr, $g:expr, $m:ident, $cfg:expr) => {
        match $ex {
            Exec::Memory => algo::$m::run($g, $cfg),
            Exec::Scan(s) => algo::$m::run_on(s, $cfg),
        }
    };
}

/// One run of an algorithm: its graph, parameters and what it produced so far.
struct Run<'a> {
    g: &'a Graph,
    p: &'a Params,
    verify: bool,
    ex: Exec<'a>,
    s: Map<String, Value>,
    iterations: Option<usize>,
    verified: Option<Result<(), String>>,
    compute: f64,
}

/// Per-vertex result columns.
type Columns = Vec<(&'static str, Column)>;

/// Runs the algorithm (on the current rayon pool) on the executor
/// `p.args.executor`.
pub fn execute(g: &Graph, p: &Params, verify: bool) -> anyhow::Result<Outcome> {
    let ex = match p.args.executor {
        ExecutorKind::Scan => Exec::Scan(ScanExecutor::for_machine(g)),
        _ => Exec::Memory,
    };
    let mut r = Run {
        g,
        p,
        verify,
        ex,
        s: Map::new(),
        iterations: None,
        verified: None,
        compute: 0.0,
    };
    let columns = match p.entry.algorithm {
        Algorithm::Bfs => r.bfs()?,
        Algorithm::Nhop => r.nhop()?,
        Algorithm::Sssp => r.sssp()?,
        Algorithm::PageRank | Algorithm::Ppr => r.pagerank()?,
        Algorithm::Wcc | Algorithm::Scc => r.components()?,
        Algorithm::Cdlp => r.cdlp()?,
        Algorithm::Betweenness => r.betweenness()?,
        Algorithm::Triangles => r.triangles()?,
        Algorithm::Lcc => r.lcc()?,
        Algorithm::Kcore => r.kcore()?,
        Algorithm::Coloring => r.coloring()?,
        Algorithm::Mis => r.mis()?,
        _ => bail!("{} has no runner in this build", p.algorithm),
    };
    Ok(Outcome {
        columns,
        summary: r.s,
        iterations: r.iterations,
        verified: r.verified,
        compute_seconds: r.compute,
    })
}

impl Run<'_> {
    /// Whether the run goes through the shared-scan executor.
    fn on_scan(&self) -> bool {
        matches!(self.ex, Exec::Scan(_))
    }

    fn bfs(&mut self) -> anyhow::Result<Columns> {
        let (g, p, verify) = (self.g, self.p, self.verify);
        let cols: Columns = {
            let cfg = algo::bfs::Config {
                source: p.source,
                ..Default::default()
            };
            let o = timed(&mut self.compute, || on_executor!(&self.ex, g, bfs, &cfg))?;
            if verify {
                self.verified = Some(verdict(algo::bfs::verify(g, &cfg, &o)));
            }
            let (reached, maxd) = depth_stats(&o.depth);
            self.s.insert("reached".into(), json!(reached));
            self.s.insert("max_depth".into(), json!(maxd));
            self.iterations = Some(o.iterations);
            vec![
                ("depth", Column::Depth(o.depth)),
                ("parent", Column::Vertex(o.parent)),
            ]
        };
        Ok(cols)
    }

    fn nhop(&mut self) -> anyhow::Result<Columns> {
        let (g, p, a, verify) = (self.g, self.p, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::nhop::Config {
                source: p.source,
                hops: a.hops.unwrap_or(algo::nhop::DEFAULT_HOPS),
            };
            let o = timed(&mut self.compute, || on_executor!(&self.ex, g, nhop, &cfg))?;
            if verify {
                self.verified = Some(verdict(algo::nhop::verify(g, &cfg, &o)));
            }
            self.s.insert("hops".into(), json!(cfg.hops));
            self.s.insert("reached".into(), json!(o.reached));
            vec![("depth", Column::Depth(o.depth))]
        };
        Ok(cols)
    }

    fn sssp(&mut self) -> anyhow::Result<Columns> {
        let (g, p, a, verify) = (self.g, self.p, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::sssp::Config {
                source: p.source,
                delta: a.delta,
            };
            // The kernel is the distances (as GAPBS's); parents are derived
            // from them only when verifying or writing them, timed apart.
            // The driver on another executor finds both.
            let (d, mut parent) = match &self.ex {
                Exec::Memory => (
                    timed(&mut self.compute, || algo::sssp::distances(g, &cfg))?,
                    Vec::new(),
                ),
                Exec::Scan(x) => {
                    let o = timed(&mut self.compute, || algo::sssp::run_on(x, &cfg))?;
                    let d = algo::sssp::Distances {
                        dist: o.dist,
                        iterations: o.iterations,
                    };
                    (d, o.parent)
                }
            };
            if parent.is_empty() && (verify || a.out.is_some()) {
                let t = Instant::now();
                parent = algo::sssp::parents_of(g, &cfg, &d.dist);
                self.s
                    .insert("parents_seconds".into(), json!(t.elapsed().as_secs_f64()));
            }
            let o = algo::sssp::Output {
                dist: d.dist,
                parent,
                iterations: d.iterations,
            };
            if verify {
                self.verified = Some(verdict(algo::sssp::verify(g, &cfg, &o)));
            }
            let reached = o.dist.iter().filter(|d| d.is_finite()).count();
            let maxd = o
                .dist
                .iter()
                .copied()
                .filter(|d| d.is_finite())
                .fold(0.0, f64::max);
            self.s.insert("reached".into(), json!(reached));
            self.s.insert("max_distance".into(), json!(maxd));
            self.iterations = Some(o.iterations);
            let mut cols = vec![("distance", Column::Float(o.dist))];
            if !o.parent.is_empty() {
                cols.push(("parent", Column::Vertex(o.parent)));
            }
            cols
        };
        Ok(cols)
    }

    fn pagerank(&mut self) -> anyhow::Result<Columns> {
        let (g, p, a, verify) = (self.g, self.p, &self.p.args, self.verify);
        let cols: Columns = {
            let mut cfg = algo::pagerank::Config::default();
            if let Some(d) = a.damping {
                cfg.damping = d;
            }
            match a.tolerance {
                Some(t) => cfg.tolerance = t,
                None if p.algorithm == "ppr" => {
                    cfg.tolerance = algo::pagerank::personalized_default_tolerance(g.num_vertices())
                }
                None => {}
            }
            if let Some(m) = a.method {
                cfg.method = m;
            }
            if let Some(pr) = a.precision {
                cfg.precision = pr;
            }
            cfg.iterations = a
                .iterations
                .or(if p.graphalytics { Some(10) } else { None });
            if let Exec::Scan(_) = self.ex {
                // The driver: Jacobi in double precision (check_options
                // refused other choices).
                cfg.method = algo::pagerank::Method::Jacobi;
                cfg.precision = algo::pagerank::Precision::Double;
            } else if p.algorithm == "pagerank" && a.method.is_none() {
                // Chebyshev where it applies (undirected, no isolated
                // vertices, stopping by tolerance), else Jacobi.
                cfg.method = algo::pagerank::Method::preferred(g, &cfg);
            }
            if p.algorithm == "ppr" {
                // Forward push by default when stopping by tolerance: the
                // mass of one source's ranks stays near it on most graphs.
                if a.method.is_none() && cfg.iterations.is_none() && !self.on_scan() {
                    cfg.method = algo::pagerank::Method::Push;
                }
                cfg.personalization = Some(vec![p.source]);
                self.s
                    .insert("source".into(), json!(g.ids().external_string(p.source)));
            }
            if a.precision.is_none() && !self.on_scan() {
                // f32 contributions where their rounding is far below the
                // tolerance asked for.
                cfg.precision = algo::pagerank::Precision::preferred(g, &cfg);
            }
            let o = timed(&mut self.compute, || {
                on_executor!(&self.ex, g, pagerank, &cfg)
            })?;
            if verify {
                self.verified = Some(verdict(algo::pagerank::verify(g, &cfg, &o)));
            }
            self.iterations = Some(o.iterations);
            self.s.insert("converged".into(), json!(o.converged));
            self.s.insert("change".into(), json!(o.change));
            self.s.insert(
                "method".into(),
                json!(match cfg.method {
                    algo::pagerank::Method::Jacobi => "jacobi",
                    algo::pagerank::Method::GaussSeidel => "gauss-seidel",
                    algo::pagerank::Method::Push => "push",
                    algo::pagerank::Method::Chebyshev => "chebyshev",
                }),
            );
            self.s.insert(
                "precision".into(),
                json!(match cfg.precision {
                    algo::pagerank::Precision::Double => "double",
                    algo::pagerank::Precision::Single => "single",
                }),
            );
            self.s.insert("top".into(), top10(g, &o.rank));
            vec![("rank", Column::Float(o.rank))]
        };
        Ok(cols)
    }

    fn components(&mut self) -> anyhow::Result<Columns> {
        let (g, p, verify) = (self.g, self.p, self.verify);
        let cols: Columns = {
            let (comp, count, v) = if p.algorithm == "wcc" {
                let cfg = algo::wcc::Config::default();
                let o = timed(&mut self.compute, || on_executor!(&self.ex, g, wcc, &cfg))?;
                let v = verify.then(|| verdict(algo::wcc::verify(g, &cfg, &o)));
                (o.component, o.count, v)
            } else {
                let cfg = algo::scc::Config::default();
                let o = timed(&mut self.compute, || on_executor!(&self.ex, g, scc, &cfg))?;
                let v = verify.then(|| verdict(algo::scc::verify(g, &cfg, &o)));
                (o.component, o.count as u64, v)
            };
            self.verified = v;
            let (_, hist) = label_stats(&comp);
            self.s.insert("components".into(), json!(count));
            self.s.insert("size_histogram".into(), hist);
            vec![("component", Column::Vertex(comp))]
        };
        Ok(cols)
    }

    fn cdlp(&mut self) -> anyhow::Result<Columns> {
        let (g, a, verify) = (self.g, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::cdlp::Config {
                iterations: a.iterations.unwrap_or(algo::cdlp::DEFAULT_ITERATIONS),
            };
            let o = timed(&mut self.compute, || on_executor!(&self.ex, g, cdlp, &cfg))?;
            if verify {
                self.verified = Some(verdict(algo::cdlp::verify(g, &cfg, &o)));
            }
            let (count, hist) = label_stats(&o.label);
            self.iterations = Some(o.iterations);
            self.s.insert("communities".into(), json!(count));
            self.s.insert("size_histogram".into(), hist);
            vec![("label", Column::Natural(o.label))]
        };
        Ok(cols)
    }

    fn betweenness(&mut self) -> anyhow::Result<Columns> {
        let (g, a, verify) = (self.g, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::betweenness::Config {
                samples: a.samples,
                seed: a.seed.unwrap_or(algo::betweenness::DEFAULT_SEED),
                ..Default::default()
            };
            let o = timed(&mut self.compute, || {
                on_executor!(&self.ex, g, betweenness, &cfg)
            })?;
            if verify {
                self.verified = Some(verdict(algo::betweenness::verify(g, &cfg, &o)));
            }
            self.s.insert("sources".into(), json!(o.sources_used));
            self.s.insert("top".into(), top10(g, &o.centrality));
            vec![("betweenness", Column::Float(o.centrality))]
        };
        Ok(cols)
    }

    fn triangles(&mut self) -> anyhow::Result<Columns> {
        let (g, a, verify) = (self.g, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::triangles::Config::default();
            // The kernel is the total (as GAPBS's tc); per-vertex counts
            // are computed only to write or verify them, timed apart, and
            // must then agree with the total.
            let count = timed(&mut self.compute, || algo::triangles::total(g, &cfg))?;
            self.s.insert("triangles".into(), json!(count));
            if verify || a.out.is_some() {
                let t = Instant::now();
                let o = algo::triangles::run(g, &cfg)?;
                self.s.insert(
                    "per_vertex_seconds".into(),
                    json!(t.elapsed().as_secs_f64()),
                );
                if verify {
                    let v = algo::triangles::verify(g, &cfg, &o).map_err(|e| e.to_string());
                    self.verified = Some(v.and_then(|()| {
                        if o.total == count {
                            Ok(())
                        } else {
                            Err(format!(
                                "the total count {count} differs from the per-vertex count {}",
                                o.total
                            ))
                        }
                    }));
                }
                vec![("triangles", Column::Int(o.per_vertex))]
            } else {
                vec![]
            }
        };
        Ok(cols)
    }

    fn lcc(&mut self) -> anyhow::Result<Columns> {
        let (g, p, verify) = (self.g, self.p, self.verify);
        let cols: Columns = {
            let semantics = if p.graphalytics {
                algo::lcc::Semantics::Graphalytics
            } else {
                algo::lcc::Semantics::NetworkX
            };
            let cfg = algo::lcc::Config { semantics };
            let o = timed(&mut self.compute, || algo::lcc::run(g, &cfg))?;
            if verify {
                self.verified = Some(verdict(algo::lcc::verify(g, &cfg, &o)));
            }
            self.s.insert("average".into(), json!(o.average));
            self.s.insert("top".into(), top10(g, &o.coefficient));
            vec![("lcc", Column::Float(o.coefficient))]
        };
        Ok(cols)
    }

    fn kcore(&mut self) -> anyhow::Result<Columns> {
        let (g, a, verify) = (self.g, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::kcore::Config { k: a.k };
            let o = timed(&mut self.compute, || on_executor!(&self.ex, g, kcore, &cfg))?;
            if verify {
                self.verified = Some(verdict(algo::kcore::verify(g, &cfg, &o)));
            }
            self.s.insert("max_core".into(), json!(o.max_core));
            let (_, hist) = label_stats(&o.core);
            self.s.insert("core_histogram".into(), hist);
            let mut cols = vec![(
                "core",
                Column::Int(o.core.iter().map(|&c| c as u64).collect()),
            )];
            if let Some(m) = o.in_k_core {
                self.s.insert(
                    "k_core_size".into(),
                    json!(m.iter().filter(|&&b| b).count()),
                );
                cols.push(("in_k_core", Column::Bool(m)));
            }
            cols
        };
        Ok(cols)
    }

    fn coloring(&mut self) -> anyhow::Result<Columns> {
        let (g, a, verify) = (self.g, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::coloring::Config {
                seed: a.seed.unwrap_or(algo::coloring::DEFAULT_SEED),
            };
            let o = timed(&mut self.compute, || {
                on_executor!(&self.ex, g, coloring, &cfg)
            })?;
            if verify {
                self.verified = Some(verdict(algo::coloring::verify(g, &cfg, &o)));
            }
            self.s.insert("colors".into(), json!(o.num_colors));
            vec![(
                "color",
                Column::Int(o.color.iter().map(|&c| c as u64).collect()),
            )]
        };
        Ok(cols)
    }

    fn mis(&mut self) -> anyhow::Result<Columns> {
        let (g, a, verify) = (self.g, &self.p.args, self.verify);
        let cols: Columns = {
            let cfg = algo::mis::Config {
                seed: a.seed.unwrap_or(algo::mis::DEFAULT_SEED),
            };
            let o = timed(&mut self.compute, || on_executor!(&self.ex, g, mis, &cfg))?;
            if verify {
                self.verified = Some(verdict(algo::mis::verify(g, &cfg, &o)));
            }
            self.s.insert("size".into(), json!(o.size));
            vec![("in_set", Column::Bool(o.in_set))]
        };
        Ok(cols)
    }
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
    if a.executor == ExecutorKind::Ooc {
        return crate::ooc::run(ctx, &a);
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
