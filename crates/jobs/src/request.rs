//! One algorithm run as a user asks for it: the algorithm by name, its
//! parameters as given (external ids, words), checked by the registry's
//! rules, then run on a graph; the result as typed per-vertex columns
//! (indexed by internal id) and a summary in external ids.
//!
//! The CLI's `run` and `demo`, the Python package and the server all go
//! through [`resolve`] and [`execute`], so a parameter is refused with the
//! same words everywhere (the CLI writes a parameter as `--NAME`, the
//! others as `NAME`: [`RequestError::message`]).
use std::time::Instant;

use plexus_engine::algo;
use plexus_engine::registry::{self, Algorithm, Entry, ExecutorKind};
use plexus_engine::AlgoError;
use plexus_graph::{Graph, VertexId};
use serde_json::{json, Map, Value};

use crate::scan::ScanExecutor;

/// What a user asks for: an algorithm and the parameters they gave.
/// `None` is "not given" (the algorithm's default); a parameter the
/// algorithm does not take is refused only when given.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// Registry name, or a Graphalytics name (BFS, PR, WCC, CDLP, LCC,
    /// SSSP) for its semantics.
    pub algorithm: String,
    /// The graph's name, for messages.
    pub graph: String,
    /// Source vertex, by external id.
    pub source: Option<String>,
    pub damping: Option<f64>,
    pub iterations: Option<usize>,
    pub tolerance: Option<f64>,
    pub method: Option<algo::pagerank::Method>,
    pub precision: Option<algo::pagerank::Precision>,
    pub seed: Option<u64>,
    pub samples: Option<usize>,
    pub hops: Option<u32>,
    pub k: Option<u32>,
    pub delta: Option<f64>,
    /// `networkx` (default) or `graphalytics`.
    pub semantics: Option<String>,
    /// Where it runs.
    pub executor: ExecutorKind,
    /// Also compute the per-vertex columns a kernel leaves out when only
    /// its summary is asked for (SSSP parents, per-vertex triangles),
    /// timed apart from the compute.
    pub per_vertex: bool,
}

impl RunRequest {
    /// A request for `algorithm` on `graph` with every parameter at its
    /// default, in memory.
    pub fn new(algorithm: &str, graph: &str) -> Self {
        RunRequest {
            algorithm: algorithm.to_string(),
            graph: graph.to_string(),
            source: None,
            damping: None,
            iterations: None,
            tolerance: None,
            method: None,
            precision: None,
            seed: None,
            samples: None,
            hops: None,
            k: None,
            delta: None,
            semantics: None,
            executor: ExecutorKind::Memory,
            per_vertex: false,
        }
    }

    /// The parameters given, by their registry names.
    pub fn given(&self) -> [(&'static str, bool); 12] {
        [
            ("source", self.source.is_some()),
            ("damping", self.damping.is_some()),
            ("iterations", self.iterations.is_some()),
            ("tolerance", self.tolerance.is_some()),
            ("method", self.method.is_some()),
            ("precision", self.precision.is_some()),
            ("seed", self.seed.is_some()),
            ("samples", self.samples.is_some()),
            ("hops", self.hops.is_some()),
            ("k", self.k.is_some()),
            ("delta", self.delta.is_some()),
            ("semantics", self.semantics.is_some()),
        ]
    }
}

/// A refused request or a failed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// No algorithm of that name.
    #[error("unknown algorithm '{0}' (expected one of: {names}; `plexus algorithms` lists them)", names = algorithm_names())]
    UnknownAlgorithm(String),
    /// A parameter the algorithm does not take.
    #[error("{}", .0.message("--"))]
    NotTaken(NotTaken),
    /// A parameter outside its range.
    #[error("--{param} {rule}")]
    Param {
        /// The parameter's registry name.
        param: &'static str,
        /// What is wrong, after the name (`must be in [0, 1), got 2`).
        rule: String,
    },
    /// A source vertex the graph does not have.
    #[error("unknown source vertex '{vertex}' in graph '{graph}'")]
    UnknownSource { vertex: String, graph: String },
    /// The algorithm does not run on the executor asked for.
    #[error("{0}")]
    Executor(String),
    /// The graph cannot run it (no vertices, no weights).
    #[error("graph '{0}' has no vertices")]
    EmptyGraph(String),
    /// This build has no runner for it.
    #[error("{0} has no runner in this build")]
    NoRunner(String),
    /// The algorithm failed or was cancelled.
    #[error(transparent)]
    Algo(#[from] AlgoError),
}

impl RequestError {
    /// The message with parameters written `{prefix}NAME`: `--` for the
    /// CLI, empty for Python and JSON requests.
    pub fn message(&self, prefix: &str) -> String {
        match self {
            RequestError::NotTaken(n) => n.message(prefix),
            RequestError::Param { param, rule } => format!("{prefix}{param} {rule}"),
            other => other.to_string(),
        }
    }

    /// The parameter the error is about, if it is about one.
    pub fn param(&self) -> Option<&'static str> {
        match self {
            RequestError::NotTaken(n) => Some(n.param),
            RequestError::Param { param, .. } => Some(param),
            RequestError::UnknownSource { .. } => Some("source"),
            _ => None,
        }
    }
}

/// A parameter given to an algorithm that does not take it.
#[derive(Debug, Clone)]
pub struct NotTaken {
    pub algorithm: &'static str,
    pub param: &'static str,
    /// The parameters it does take.
    pub takes: &'static [&'static str],
    /// A pointer to what was probably meant.
    pub hint: Option<&'static str>,
}

impl NotTaken {
    fn message(&self, prefix: &str) -> String {
        let (alg, opt) = (self.algorithm, self.param);
        let tail = match self.hint {
            Some(h) => format!("; {h}"),
            None if self.takes.is_empty() => format!("; {alg} takes no options"),
            None => {
                let takes: Vec<String> =
                    self.takes.iter().map(|p| format!("{prefix}{p}")).collect();
                format!(" (it takes {})", takes.join(", "))
            }
        };
        format!("{alg} takes no {prefix}{opt}{tail}")
    }
}

fn algorithm_names() -> String {
    let names: Vec<&str> = registry::ALGORITHMS.iter().map(|e| e.name).collect();
    names.join(", ")
}

/// A per-vertex result column, indexed by internal id.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Counts/depths; `u32::MAX` is "none" (printed as `inf`, or i64::MAX for Graphalytics BFS).
    Depth(Vec<u32>),
    /// A vertex (internal id) per vertex, `u32::MAX` = none; shown as an external id.
    Vertex(Vec<u32>),
    /// A natural id per vertex (CDLP labels); shown as an external id.
    Natural(Vec<u32>),
    /// Plain integers.
    Int(Vec<u64>),
    /// Floats (`inf` for infinity).
    Float(Vec<f64>),
    /// Booleans.
    Bool(Vec<bool>),
}

/// What an algorithm run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Per-vertex columns by name, in the registry's order.
    pub columns: Vec<(&'static str, Column)>,
    /// Summary fields in external ids (reached, components, top ranks, ...).
    pub summary: Map<String, Value>,
    /// Iterations or supersteps, where the algorithm counts them.
    pub iterations: Option<usize>,
    /// The verifier's verdict, when asked for.
    pub verified: Option<Result<(), String>>,
    /// Seconds spent in the algorithm itself (verification and derived
    /// per-vertex columns excluded).
    pub compute_seconds: f64,
}

/// Runs `f`, adding its wall time to `acc`.
fn timed<R>(acc: &mut f64, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    *acc += t.elapsed().as_secs_f64();
    r
}

/// A request checked against its algorithm and graph.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The algorithm's registry entry.
    pub entry: &'static Entry,
    /// Its name.
    pub algorithm: &'static str,
    /// LDBC Graphalytics semantics (asked for, or by a Graphalytics name).
    pub graphalytics: bool,
    /// The source vertex (internal id; 0 when not given).
    pub source: VertexId,
    /// The request as given.
    pub req: RunRequest,
}

/// Refuses parameters `entry` does not take and executors that do not run it.
pub fn check_options(entry: &'static Entry, a: &RunRequest) -> Result<(), RequestError> {
    for (opt, given) in a.given() {
        if !given || entry.takes(opt) {
            continue;
        }
        let hint = match (entry.algorithm, opt) {
            (Algorithm::PageRank, "source") => Some("personalised PageRank is `ppr`"),
            _ => None,
        };
        return Err(RequestError::NotTaken(NotTaken {
            algorithm: entry.name,
            param: opt,
            takes: entry.params,
            hint,
        }));
    }
    if !entry.runs_on(a.executor) {
        return Err(RequestError::Executor(format!(
            "{} runs only on the {} executor",
            entry.name,
            entry.executors[0].name()
        )));
    }
    if a.executor == ExecutorKind::Scan && (a.method.is_some() || a.precision.is_some()) {
        return Err(RequestError::Executor(format!(
            "--executor scan runs {}'s driver (Jacobi iteration in double precision); \
             --method and --precision choose among the memory executor's kernels",
            entry.name
        )));
    }
    Ok(())
}

fn param(param: &'static str, rule: String) -> RequestError {
    RequestError::Param { param, rule }
}

/// Checks `a` against its algorithm and `g`: the name, the parameters it
/// takes and their ranges, the source vertex.
pub fn resolve(g: &Graph, a: &RunRequest) -> Result<Resolved, RequestError> {
    let Some((entry, by_ga_name)) = registry::find(&a.algorithm) else {
        return Err(RequestError::UnknownAlgorithm(a.algorithm.clone()));
    };
    check_options(entry, a)?;
    if let Some(s) = a.semantics.as_deref() {
        if s != "networkx" && s != "graphalytics" {
            return Err(param(
                "semantics",
                format!("must be networkx or graphalytics, got '{s}'"),
            ));
        }
    }
    let graphalytics = by_ga_name || a.semantics.as_deref() == Some("graphalytics");
    if g.num_vertices() == 0 {
        return Err(RequestError::EmptyGraph(a.graph.clone()));
    }
    let source = match &a.source {
        Some(s) => g
            .ids()
            .lookup_str(s)
            .ok_or_else(|| RequestError::UnknownSource {
                vertex: s.clone(),
                graph: a.graph.clone(),
            })?,
        None => 0,
    };
    check_ranges(g, a)?;
    Ok(Resolved {
        entry,
        algorithm: entry.name,
        graphalytics,
        source,
        req: a.clone(),
    })
}

/// The numeric parameters' ranges.
fn check_ranges(g: &Graph, a: &RunRequest) -> Result<(), RequestError> {
    if let Some(d) = a.damping {
        if !(0.0..1.0).contains(&d) {
            return Err(param("damping", format!("must be in [0, 1), got {d}")));
        }
    }
    if let Some(t) = a.tolerance {
        if !(t > 0.0 && t.is_finite()) {
            return Err(param(
                "tolerance",
                format!("must be a positive number, got {t}"),
            ));
        }
    }
    if let Some(k) = a.samples {
        if k == 0 || k > g.num_vertices() {
            return Err(param(
                "samples",
                format!(
                    "must be between 1 and the number of vertices ({}), got {k}",
                    g.num_vertices()
                ),
            ));
        }
    }
    if let Some(k) = a.k {
        if k as usize > g.num_vertices() {
            return Err(param(
                "k",
                format!(
                    "must be at most the number of vertices ({}), got {k}",
                    g.num_vertices()
                ),
            ));
        }
    }
    if let Some(d) = a.delta {
        if !(d > 0.0 && d.is_finite()) {
            return Err(param(
                "delta",
                format!("must be a positive number, got {d}"),
            ));
        }
    }
    Ok(())
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
    p: &'a Resolved,
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
/// `p.req.executor`.
pub fn execute(g: &Graph, p: &Resolved, verify: bool) -> Result<Outcome, RequestError> {
    let ex = match p.req.executor {
        ExecutorKind::Scan => Exec::Scan(ScanExecutor::for_machine(g)),
        ExecutorKind::Memory => Exec::Memory,
        other => {
            return Err(RequestError::Executor(format!(
                "the {} executor does not run on an in-memory graph",
                other.name()
            )))
        }
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
        _ => return Err(RequestError::NoRunner(p.algorithm.to_string())),
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

    fn bfs(&mut self) -> Result<Columns, RequestError> {
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

    fn nhop(&mut self) -> Result<Columns, RequestError> {
        let (g, p, a, verify) = (self.g, self.p, &self.p.req, self.verify);
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

    fn sssp(&mut self) -> Result<Columns, RequestError> {
        let (g, p, a, verify) = (self.g, self.p, &self.p.req, self.verify);
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
            if parent.is_empty() && (verify || a.per_vertex) {
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

    fn pagerank(&mut self) -> Result<Columns, RequestError> {
        let (g, p, a, verify) = (self.g, self.p, &self.p.req, self.verify);
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

    fn components(&mut self) -> Result<Columns, RequestError> {
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

    fn cdlp(&mut self) -> Result<Columns, RequestError> {
        let (g, a, verify) = (self.g, &self.p.req, self.verify);
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

    fn betweenness(&mut self) -> Result<Columns, RequestError> {
        let (g, a, verify) = (self.g, &self.p.req, self.verify);
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

    fn triangles(&mut self) -> Result<Columns, RequestError> {
        let (g, a, verify) = (self.g, &self.p.req, self.verify);
        let cols: Columns = {
            let cfg = algo::triangles::Config::default();
            // The kernel is the total (as GAPBS's tc); per-vertex counts
            // are computed only to write or verify them, timed apart, and
            // must then agree with the total.
            let count = timed(&mut self.compute, || algo::triangles::total(g, &cfg))?;
            self.s.insert("triangles".into(), json!(count));
            if verify || a.per_vertex {
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

    fn lcc(&mut self) -> Result<Columns, RequestError> {
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

    fn kcore(&mut self) -> Result<Columns, RequestError> {
        let (g, a, verify) = (self.g, &self.p.req, self.verify);
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

    fn coloring(&mut self) -> Result<Columns, RequestError> {
        let (g, a, verify) = (self.g, &self.p.req, self.verify);
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

    fn mis(&mut self) -> Result<Columns, RequestError> {
        let (g, a, verify) = (self.g, &self.p.req, self.verify);
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
