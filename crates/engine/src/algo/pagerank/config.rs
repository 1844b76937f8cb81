//! PageRank's parameters (`Config`, `Method`, `Precision`, the defaults), its
//! result (`Output`) and the teleport vector the parameters give.
use super::*;

/// Default damping factor `d`.
pub const DEFAULT_DAMPING: f64 = 0.85;
/// Default tolerance: stop when the L1 change is below `|V| · tolerance` (NetworkX's default).
pub const DEFAULT_TOLERANCE: f64 = 1e-6;
/// Personalised PageRank's default tolerance on a graph of `n` vertices:
/// [`DEFAULT_TOLERANCE`], but at most `1e-4 / n`, so that the ranks end
/// within 1e-4 of the exact ones in L1. NetworkX's rule alone (`n · 1e-6`)
/// allows an L1 error of 1 or more from a million vertices on, which the
/// forward push meets with all-zero ranks (one source's ranks sum to 1).
pub fn personalized_default_tolerance(n: usize) -> f64 {
    DEFAULT_TOLERANCE.min(1e-4 / n.max(1) as f64)
}
/// Default cap on iterations when stopping by tolerance (NetworkX's default).
pub const DEFAULT_MAX_ITERATIONS: usize = 100;
/// Vertices per block of the fused kernel's Jacobi sweep (and of its sums).
pub(super) const JACOBI_BLOCK: usize = 1024;
/// Vertices per block of a Gauss–Seidel sweep: within a block, values of
/// this sweep are used; across blocks, the previous sweep's.
pub const GS_BLOCK: usize = 4096;

/// How an iteration uses the values it has already computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Every vertex reads the previous iteration's values (NetworkX, Graphalytics).
    #[default]
    Jacobi,
    /// Blockwise Gauss–Seidel: within a block of [`GS_BLOCK`] ids, lower
    /// ids' values of this sweep (GAPBS's `pr`); same fixed point.
    GaussSeidel,
    /// Forward push from the teleport vector ([`crate::algo::pagerank_push`]),
    /// for personalised PageRank stopping by tolerance: it stops once the
    /// L1 distance to the exact ranks, known exactly, is below
    /// `|V| · tolerance`, and does work only where the mass is.
    Push,
    /// Chebyshev semi-iteration on the Jacobi step, for global PageRank.
    /// On an undirected graph the iteration matrix `d·P` has a real
    /// spectrum in `[-d, d]`, and the three-term recurrence shrinks the
    /// error by about `d / (1 + √(1 - d²))` (0.56 at `d = 0.85`) per
    /// iteration instead of up to `d`. It runs plain Jacobi iterations
    /// until one leaves more than 1.1 times that rate of the change (on a
    /// fast-mixing graph, such as a Kronecker graph, it never does, and the
    /// run is Jacobi's), then engages the recurrence; on a directed graph,
    /// whose spectrum may be complex, it gives the recurrence up for
    /// Jacobi when it falls behind ([`ChebSchedule`]). Same stopping rule
    /// and guarantee as Jacobi: it returns `F(x)` for the first iterate `x`
    /// whose residual `Σ |F(x) - x|` (the reported change) is below
    /// `|V|·tolerance`. On an undirected graph it starts from the degree
    /// vector (see `start_vector`). Iterations at an L1 change of 1e-4:
    /// USA-road-FLA 12 (16 from the uniform vector; Jacobi 38), email-Enron
    /// 14 (17; 35), soc-Slashdot0902 16 (Jacobi 29), cnr-2000 28 (35: three
    /// passes of the recurrence, then Jacobi).
    /// Refused with personalisation (ranks that are 0 at the fixed point
    /// could end negative). Isolated vertices are not eliminated ([`Isolated`]).
    Chebyshev,
}

impl Method {
    /// The method for `cfg` on `g` when the user names none:
    /// [`Method::Chebyshev`] for global PageRank stopping by tolerance on a
    /// graph without isolated vertices (USA-road-FLA 16 iterations instead
    /// of 38; on a fast-mixing graph it stays Jacobi, see [`Method::Chebyshev`]),
    /// else [`Method::Jacobi`] (which solves isolated vertices exactly,
    /// [`Isolated`]). The result meets the same stopping rule either way.
    pub fn preferred(g: &Graph, cfg: &Config) -> Method {
        let chebyshev = cfg.iterations.is_none()
            && chebyshev_applies(cfg).is_ok()
            && !(0..g.num_vertices() as VertexId)
                .into_par_iter()
                .any(|v| Isolated::is_isolated(g, v));
        if chebyshev {
            Method::Chebyshev
        } else {
            Method::Jacobi
        }
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "jacobi" => Ok(Method::Jacobi),
            "gauss-seidel" | "gs" => Ok(Method::GaussSeidel),
            "push" => Ok(Method::Push),
            "chebyshev" => Ok(Method::Chebyshev),
            _ => Err(format!(
                "unknown PageRank method '{s}' (expected jacobi, gauss-seidel, push or chebyshev)"
            )),
        }
    }
}

/// How contributions `PR(u)/outdeg(u)` are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// f64 ([`Config`]'s default).
    #[default]
    Double,
    /// f32 contributions, f64 sums and ranks (GAPBS's layout is all f32).
    Single,
}

/// The smallest `|V| · tolerance` (an L1 change) for which
/// [`Precision::preferred`] picks f32 contributions, as a multiple of the
/// most they can move the fixed point: rounding each contribution to f32
/// (relative error `≤ 2⁻²⁴`) perturbs an iteration by at most `d · 2⁻²⁴` in
/// L1, and so the fixed point by at most `d · 2⁻²⁴ / (1 − d)` (3.4e-7 at
/// `d = 0.85`).
pub const SINGLE_TOLERANCE_MARGIN: f64 = 100.0;

impl Precision {
    /// The precision for `cfg` on `g` when the user names none: f32
    /// contributions when the run stops by tolerance and its L1 target
    /// `|V| · tolerance` is at least [`SINGLE_TOLERANCE_MARGIN`] times the
    /// most f32 rounding can move the result (so at `d = 0.85`, from an L1
    /// target of 3.4e-5: NetworkX's default tolerance on any graph of 34
    /// vertices or more); else f64. The randomly read array is then half
    /// the bytes. Fixed iteration counts keep f64
    /// (NetworkX's and Graphalytics's iterates). For [`Method::Push`] it is
    /// the precision of the Jacobi iterations that take over when the push
    /// stops early; the push itself is f64.
    pub fn preferred(g: &Graph, cfg: &Config) -> Precision {
        let d = cfg.damping;
        let rounding = d * f64::from(f32::EPSILON) / 2.0 / (1.0 - d);
        let target = g.num_vertices() as f64 * cfg.tolerance;
        if cfg.iterations.is_none() && target >= SINGLE_TOLERANCE_MARGIN * rounding {
            Precision::Single
        } else {
            Precision::Double
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "double" | "f64" => Ok(Precision::Double),
            "single" | "f32" => Ok(Precision::Single),
            _ => Err(format!(
                "unknown precision '{s}' (expected double or single)"
            )),
        }
    }
}

/// PageRank parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Damping factor `d`, in `[0, 1)`. Default [`DEFAULT_DAMPING`].
    pub damping: f64,
    /// A fixed number of iterations (Graphalytics semantics), or `None` to
    /// stop by tolerance. Default `None`.
    pub iterations: Option<usize>,
    /// Stop when `Σ |ΔPR| < |V| · tolerance`; `≥ 0`. Default [`DEFAULT_TOLERANCE`].
    pub tolerance: f64,
    /// Most iterations when stopping by tolerance. Default [`DEFAULT_MAX_ITERATIONS`].
    pub max_iterations: usize,
    /// Personalised PageRank: teleport and dangling mass go uniformly to
    /// these vertices (internal ids; duplicates count once). `None`: all vertices.
    pub personalization: Option<Vec<VertexId>>,
    /// Jacobi (default) or blockwise Gauss–Seidel sweeps.
    pub method: Method,
    /// Storage of contributions; default f64.
    pub precision: Precision,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            damping: DEFAULT_DAMPING,
            iterations: None,
            tolerance: DEFAULT_TOLERANCE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            personalization: None,
            method: Method::Jacobi,
            precision: Precision::Double,
        }
    }
}

/// PageRank result, indexed by internal id.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The rank of each vertex; non-negative, summing to 1.
    pub rank: Vec<f64>,
    /// Iterations run.
    pub iterations: usize,
    /// Whether the last iteration changed the ranks by less than `|V| · tolerance` (L1).
    pub converged: bool,
    /// `Σ_v |PR'(v) - PR(v)|` of the last iteration (0 when none ran).
    pub change: f64,
}

/// The teleport vector: uniform, or uniform over a set of sources.
/// Public so that other executors' PageRank (the distributed fast path)
/// use the engine's vector.
#[derive(Clone, Debug)]
pub enum Teleport {
    /// Every vertex gets this share (`1/|V|`).
    Uniform(f64),
    /// The vertices with `member[v]` get `share` (1 over their count), the
    /// others 0.
    Sources {
        /// Whether each vertex is a source.
        member: Vec<bool>,
        /// `1 / #sources`.
        share: f64,
    },
}

impl Teleport {
    /// `t(v)`: the teleport probability of `v` (`v < |V|`).
    #[inline]
    pub fn at(&self, v: VertexId) -> f64 {
        match self {
            Teleport::Uniform(x) => *x,
            Teleport::Sources { member, share } => {
                if member[v as usize] {
                    *share
                } else {
                    0.0
                }
            }
        }
    }
}

/// Checks the parameters and builds the teleport vector.
pub fn prepare<G: GraphView + ?Sized>(g: &G, cfg: &Config) -> Result<Teleport, AlgoError> {
    if !(0.0..1.0).contains(&cfg.damping) {
        return Err(AlgoError::InvalidParameter(format!(
            "damping must be in [0, 1), got {}",
            cfg.damping
        )));
    }
    if !(cfg.tolerance >= 0.0 && cfg.tolerance.is_finite()) {
        return Err(AlgoError::InvalidParameter(format!(
            "tolerance must be a finite number >= 0, got {}",
            cfg.tolerance
        )));
    }
    let n = g.num_vertices();
    match &cfg.personalization {
        None => Ok(Teleport::Uniform(if n == 0 { 0.0 } else { 1.0 / n as f64 })),
        Some(sources) => {
            if sources.is_empty() {
                return Err(AlgoError::InvalidParameter(
                    "personalized PageRank needs at least one source vertex".into(),
                ));
            }
            let mut member = vec![false; n];
            let mut k = 0usize;
            for &s in sources {
                let slot = member
                    .get_mut(s as usize)
                    .ok_or(AlgoError::NoSuchVertex(u64::from(s)))?;
                if !*slot {
                    *slot = true;
                    k += 1;
                }
            }
            Ok(Teleport::Sources {
                member,
                share: 1.0 / k as f64,
            })
        }
    }
}
