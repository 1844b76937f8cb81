//! PageRank and personalised PageRank by power iteration.
//!
//! **Returns** [`Output`]: `rank[v] ≥ 0` with `Σ rank = 1`, the number of
//! iterations run, and whether the tolerance test passed.
//!
//! **Definition.** With teleport vector `t` (uniform `1/|V|`, or uniform over
//! the personalisation sources) and damping `d`, every iteration computes
//!
//! ```text
//! PR'(v) = (1 - d)·t(v) + d·( Σ_{u→v} PR(u) / outdeg(u) + t(v)·Σ_{dangling u} PR(u) )
//! ```
//!
//! from `PR_0 = 1/|V|` (uniform, also when personalised, as NetworkX does).
//! Dangling vertices (out-degree 0) hand their mass to `t`, so `Σ PR = 1`
//! holds exactly in exact arithmetic and no final normalisation is needed.
//! Multi-edges count with multiplicity (in `outdeg` and in the sum), a
//! self-loop is an ordinary out-edge, undirected graphs use out-degree =
//! degree; weights are ignored. This is NetworkX's `pagerank(G, weight=None)`
//! (with `personalization={s: 1 for s in sources}` and its default
//! `dangling=None`, i.e. dangling mass follows the personalisation) and
//! LDBC Graphalytics PR when [`Config::iterations`] fixes the count.
//!
//! **Stopping.** With `iterations: Some(k)`, exactly `k` iterations
//! (Graphalytics). Otherwise, as NetworkX: stop after the first iteration
//! whose change `Σ_v |PR'(v) - PR(v)| < |V|·tolerance`, or after
//! `max_iterations` (then `converged = false`; NetworkX raises instead).
//!
//! **Methods.** [`Method::Jacobi`] (the default) is the iteration above,
//! exactly as NetworkX runs it, except that when stopping by tolerance on a
//! graph with isolated vertices each iteration first solves those exactly
//! ([`Isolated`]: same fixed point and stopping rule, 8 instead of 11
//! iterations on Kronecker scale 22). [`Method::GaussSeidel`] sweeps the vertices
//! in fixed blocks of [`GS_BLOCK`] ids and, within a block, uses the values
//! already computed in this sweep for lower ids of the same block (values
//! from other blocks are the previous sweep's, so the result does not depend
//! on the thread count). It converges to the same fixed point in about half
//! the iterations on graphs whose ids have locality (road networks), as
//! GAPBS's `pr` does. Either way `Σ |F(x) - x| ≤ d · change` for the
//! returned `x` and the last sweep's L1 change, which [`verify`] checks.
//! [`Method::Push`] (for personalised PageRank stopping by tolerance;
//! `plexus run ppr`'s default) is a forward push from the sources
//! ([`crate::algo::pagerank_push`]) that stops once its L1 distance to the
//! exact ranks, which it knows exactly, is below `|V|·tolerance` (Jacobi
//! at the same tolerance stopped 1–4 times that far away on cnr-2000 and
//! email-Enron), and hands over to Jacobi from its state when it stops
//! making progress first (half the graph's edges read, or a window of
//! edges that cut its residual too little ([`push_window`]): on small-world
//! graphs, where the mass spreads everywhere). Its results are not NetworkX's iterates and do not
//! depend on the thread count.
//! [`Method::Chebyshev`] (`plexus run pagerank`'s default for global
//! PageRank by tolerance on graphs without isolated vertices,
//! [`Method::preferred`]) accelerates the Jacobi step with the Chebyshev
//! recurrence where the iteration's spectrum allows it, with the same
//! stopping rule and guarantee (USA-road-FLA 16 iterations instead of 38).
//! A sweep does not conserve mass exactly: Gauss–Seidel ranks sum to 1
//! within `d · change / (1 - d)` (they are not renormalised).
//!
//! **Precision.** [`Precision::Double`] (default) keeps contributions
//! `PR(u)/outdeg(u)` in f64. [`Precision::Single`] stores them in f32 (sums
//! and ranks stay f64): half the bytes of the randomly read array, the
//! layout GAPBS uses, at a relative error of about 6e-8 per contribution,
//! so the L1 change cannot fall much below about 1e-7 (choose
//! `|V| · tolerance ≥ 1e-6`). [`Precision::preferred`] (what `plexus run`
//! uses when no precision is named) picks f32 when the tolerance is far
//! above that rounding.
//!
//! **Execution.** The algorithm is a dense-only [`VertexProgram`] (pull
//! along in-edges, every vertex active), as Gemini runs PageRank: a vertex
//! step computes each vertex's contribution, the dense signal sums the
//! contributions of `v`'s in-neighbours in CSC order, the dense slot applies
//! the formula; [`run_on`] drives it on any [`Executor`] (Jacobi, double).
//! On one machine in memory, [`run`] uses a fused kernel with the same
//! arithmetic: one pass per iteration computes the new rank, the change,
//! the next contribution and the next dangling mass together. Sums over
//! vertices use fixed blocks, so results are bit-identical for any number
//! of threads (and the Jacobi/double kernel equals [`run_on`] bit for bit).
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::algo::pagerank_push;
use crate::driver::{drive, Driver};
use crate::error::{AlgoError, VerifyError};
use crate::program::{
    deterministic_sum, trace_enabled, AtomicF64, Executor, GraphView, InEdges, Modes,
    VertexProgram, Vertices,
};
use crate::subset::VertexSubset;

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
const JACOBI_BLOCK: usize = 1024;
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
    /// the bytes (kron22, 8 iterations: 2.9–3.5 s against 4.0–4.2 s in
    /// f64, bench/RESULTS.md "Session 23"). Fixed iteration counts keep f64
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
#[derive(Clone, Debug)]
enum Teleport {
    Uniform(f64),
    Sources { member: Vec<bool>, share: f64 },
}

impl Teleport {
    #[inline]
    fn at(&self, v: VertexId) -> f64 {
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
fn prepare<G: GraphView + ?Sized>(g: &G, cfg: &Config) -> Result<Teleport, AlgoError> {
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

/// The PageRank vertex program: one synchronous power iteration per superstep.
#[derive(Debug)]
pub struct Program {
    damping: f64,
    teleport: Teleport,
    /// `PR(u)` of the previous iteration.
    rank: Vec<AtomicF64>,
    /// `PR(u) / outdeg(u)`, 0 for dangling vertices.
    contrib: Vec<AtomicF64>,
    /// The new ranks being computed.
    next: Vec<AtomicF64>,
    /// The iteration's substitution ([`Step`]), set before each superstep.
    step: Step,
}

impl VertexProgram for Program {
    /// A partial sum of contributions.
    type Msg = f64;
    const MODES: Modes = Modes::DenseOnly;

    fn combine(&self, a: f64, b: f64) -> f64 {
        a + b
    }

    // PageRank is dense-only (MODES); the sparse pair is never called.
    fn sparse_signal(&self, _src: VertexId) -> Option<f64> {
        None
    }

    fn sparse_slot(&self, _dst: VertexId, _msg: f64) -> bool {
        false
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<f64> {
        // Every vertex is active in PageRank; sum in CSC order so the result
        // is the same on any thread.
        Some(
            edges
                .sources()
                .iter()
                .map(|&u| self.contrib[u as usize].load())
                .sum(),
        )
    }

    fn dense_slot(&self, v: VertexId, sum: f64) -> bool {
        let t = self.teleport.at(v);
        self.next[v as usize].store(self.step.update(self.damping, sum, t));
        true
    }
}

/// Runs PageRank (personalised when `cfg.personalization` is set) in
/// parallel on the current rayon pool, with the fused in-memory kernel.
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let teleport = prepare(g, cfg)?;
    match cfg.method {
        Method::Push => return push(g, cfg, &teleport),
        Method::Chebyshev => return chebyshev(g, cfg, &teleport),
        Method::Jacobi | Method::GaussSeidel => {}
    }
    let isolated = Isolated::with_teleport(g, cfg, &teleport);
    Ok(match cfg.method {
        Method::Jacobi => {
            fused_in_precision::<false, false, JACOBI_BLOCK>(g, cfg, &teleport, isolated, None)
        }
        Method::GaussSeidel => {
            fused_in_precision::<true, false, GS_BLOCK>(g, cfg, &teleport, None, None)
        }
        Method::Push | Method::Chebyshev => unreachable!("handled above"),
    })
}

/// [`fused`] with the contributions `cfg.precision` names.
fn fused_in_precision<const GS: bool, const CHEB: bool, const BLOCK: usize>(
    g: &Graph,
    cfg: &Config,
    teleport: &Teleport,
    isolated: Option<Isolated>,
    initial: Option<&[f64]>,
) -> Output {
    match cfg.precision {
        Precision::Double => fused::<f64, GS, CHEB, BLOCK>(g, cfg, teleport, isolated, initial),
        Precision::Single => fused::<f32, GS, CHEB, BLOCK>(g, cfg, teleport, isolated, initial),
    }
}

/// Whether [`Method::Chebyshev`] applies to `g` with `cfg`, and why not.
fn chebyshev_applies(cfg: &Config) -> Result<(), AlgoError> {
    if cfg.personalization.is_some() {
        return Err(AlgoError::InvalidParameter(
            "the chebyshev method computes global PageRank; personalised PageRank needs push, jacobi or gauss-seidel".into(),
        ));
    }
    Ok(())
}

/// [`Method::Chebyshev`]: the fused kernel with the three-term recurrence,
/// then, in the rare case that the returned `F(x)` has a negative entry
/// (the recurrence's iterates overshoot; `F` of a near-fixed point is
/// positive because every vertex keeps its teleport share `(1 - d)/|V|`),
/// plain Jacobi iterations from it until none is left.
fn chebyshev(g: &Graph, cfg: &Config, teleport: &Teleport) -> Result<Output, AlgoError> {
    chebyshev_applies(cfg)?;
    let mut out = fused_in_precision::<false, true, JACOBI_BLOCK>(g, cfg, teleport, None, None);
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    while out.iterations < limit && out.rank.iter().any(|&r| r < 0.0) {
        let one = Config {
            iterations: Some(1),
            ..cfg.clone()
        };
        let next = fused_in_precision::<false, false, JACOBI_BLOCK>(
            g,
            &one,
            teleport,
            None,
            Some(&out.rank),
        );
        out = Output {
            iterations: out.iterations + 1,
            converged: next.change < g.num_vertices() as f64 * cfg.tolerance,
            ..next
        };
    }
    Ok(out)
}

/// Edges the push stage may read, per edge of the graph, before the power
/// iteration takes over (its sequential scattered updates cost several
/// pull edges each; see [`crate::algo::pagerank_push`]).
const PUSH_BUDGET_PER_EDGE: f64 = 0.5;
/// The push's state per vertex: residual, weight and estimate, f64 each.
const PUSH_STATE_BYTES: usize = 24;
/// Up to this much push state (about a core's L2), a scattered push edge
/// stays in cache and costs a few pull edges; beyond it, dozens.
const PUSH_STATE_IN_CACHE: usize = 1 << 20;

/// How much progress the push must make to go on ([`pagerank_push::Window`]):
/// per window of `|E|/w` edges read, its residual must fall to `keep` times
/// what it was, where a pull iteration would cut it by `d = 0.85` for `|E|`
/// edges. The two settle the break-even `keep ≈ 0.85^(c/w)` for a push edge
/// that costs `c` pull edges on two threads:
/// - state in cache (email-Enron, `c` about 4): `w = 16`, `keep = 0.8`, a
///   margin under `0.85^(4/16) ≈ 0.96`, as measured in session 20;
/// - state beyond it (Kronecker scale 22, `c` about 46 once the pull passes
///   ran over tiles: 16 ns a push edge against 0.35 ns a pull edge):
///   `w = 64`, `keep = 0.9` (`0.85^(46/64) ≈ 0.89`). The push from kron22's
///   hub then hands over after 4 M edges instead of 16 M: the whole run
///   took 1.29 s → 0.66 s, kron22-degree's 0.67 → 0.39 s, with the f32
///   Jacobi (bench/NOTES.md, session 32).
///
/// On kron22 half the graph's edges of pushes cut the residual only from 1
/// to 0.67 and cost more than the four Jacobi iterations they saved
/// (session 20).
fn push_window(g: &Graph) -> pagerank_push::Window {
    let arcs = g.out().num_edges();
    if g.num_vertices().saturating_mul(PUSH_STATE_BYTES) <= PUSH_STATE_IN_CACHE {
        pagerank_push::Window {
            edges: arcs / 16,
            keep: 0.8,
        }
    } else {
        pagerank_push::Window {
            edges: arcs / 64,
            keep: 0.9,
        }
    }
}

/// [`Method::Push`]: forward push until the ranks are within
/// `|V|·tolerance` of the exact ones in L1 (`Σ r`), or until the push has read
/// half as many edges as the graph has, or a window of edges ([`push_window`])
/// cut its residual too little; then Jacobi (in `cfg.precision`) from the
/// push's state `p + r`, a probability vector, with the usual stopping
/// rule. `iterations` counts the push's threshold rounds plus the Jacobi
/// iterations; `change` is `(1 - d)·Σ r` when the push finished, the exact
/// L1 change one more power iteration would make.
fn push(g: &Graph, cfg: &Config, teleport: &Teleport) -> Result<Output, AlgoError> {
    if cfg.iterations.is_some() {
        return Err(AlgoError::InvalidParameter(
            "the push method stops by tolerance; a fixed number of iterations needs jacobi or gauss-seidel".into(),
        ));
    }
    let n = g.num_vertices();
    if n == 0 {
        return Ok(fused::<f64, false, false, JACOBI_BLOCK>(
            g, cfg, teleport, None, None,
        ));
    }
    // The sources in id order, each once (`prepare` checked them).
    let sources: Vec<VertexId> = match &cfg.personalization {
        None => (0..n as VertexId).collect(),
        Some(listed) => {
            let mut s = listed.clone();
            s.sort_unstable();
            s.dedup();
            s
        }
    };
    let d = cfg.damping;
    let budget = (g.out().num_edges() as f64 * PUSH_BUDGET_PER_EDGE) as u64;
    let epsilon = n as f64 * cfg.tolerance;
    let pushed = pagerank_push::run(
        g,
        d,
        &sources,
        epsilon,
        budget,
        Some(push_window(g)),
        cfg.max_iterations,
    );
    if trace_enabled() {
        eprintln!(
            "plexus-trace pagerank push {} rounds, {} edges read, residual {:e}",
            pushed.rounds, pushed.edges_read, pushed.residual_sum
        );
    }
    if pushed.reached || pushed.rounds >= cfg.max_iterations {
        let change = (1.0 - d) * pushed.residual_sum;
        return Ok(Output {
            rank: pushed.rank,
            iterations: pushed.rounds,
            converged: pushed.reached,
            change,
        });
    }
    // `p + r` sums to 1: the power iteration's start, `Σ r` from the ranks.
    let start: Vec<f64> = pushed
        .rank
        .iter()
        .zip(&pushed.residual)
        .map(|(p, r)| p + r)
        .collect();
    let rest = Config {
        max_iterations: cfg.max_iterations - pushed.rounds,
        ..cfg.clone()
    };
    let isolated = Isolated::with_teleport(g, cfg, teleport);
    let mut out = fused_in_precision::<false, false, JACOBI_BLOCK>(
        g,
        &rest,
        teleport,
        isolated,
        Some(&start),
    );
    out.iterations += pushed.rounds;
    Ok(out)
}

/// Personalised PageRank from one source: [`run`] with
/// `personalization = Some(vec![source])` and the other fields of `cfg`.
pub fn run_personalized(g: &Graph, cfg: &Config, source: VertexId) -> Result<Output, AlgoError> {
    let cfg = Config {
        personalization: Some(vec![source]),
        ..cfg.clone()
    };
    run(g, &cfg)
}

/// A stored contribution `PR(u)/outdeg(u)`: f64, or f32 for [`Precision::Single`].
trait Contribution: Copy + Send + Sync + Into<f64> + 'static {
    const ZERO: Self;
    fn from_f64(x: f64) -> Self;
    /// Exact (both widths convert to f64 without rounding).
    #[inline]
    fn to_f64(self) -> f64 {
        self.into()
    }
}

impl Contribution for f64 {
    const ZERO: Self = 0.0;
    #[inline]
    fn from_f64(x: f64) -> Self {
        x
    }
}

impl Contribution for f32 {
    const ZERO: Self = 0.0;
    #[inline]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

/// The contribution of a vertex of out-degree `deg` with rank `rank` (0 when dangling).
#[inline]
fn contribution<C: Contribution>(rank: f64, deg: usize) -> C {
    if deg == 0 {
        C::ZERO
    } else {
        // Through i64: a single conversion instruction (degrees < 2^63).
        C::from_f64(rank / deg as i64 as f64)
    }
}

/// Isolated vertices (no in-edge, no out-edge, not even a self-loop),
/// solved exactly between Jacobi iterations.
///
/// An isolated vertex `v` receives nothing along edges, so at the fixed
/// point `PR(v) = c·t(v)` with `c = (1 - d) + d·D`, `D` being the dangling
/// mass, to which `v` itself belongs. Plain Jacobi reaches that through the
/// loop `D → c → D`, which shrinks an error only by `d·T_I` per iteration
/// (`T_I = Σ_{v isolated} t(v)`): on a Kronecker graph, where 43 % of the
/// vertices are isolated, that loop and not the graph sets the iteration
/// count (11 iterations instead of 8 on scale 22 at an L1 change of 1e-4).
/// So when [`Isolated::of`] applies (every dangling vertex is isolated, as
/// in any undirected graph), each iteration first replaces the
/// iterate `x` by `x̃` ([`Step`]): the isolated vertices get the `c` that is
/// consistent with the dangling mass of the others and with `Σ x̃ = 1`, and
/// the other vertices are rescaled by `scale` to keep that sum. The
/// iteration is then `x' = F(x̃)`, so its L1 change `Σ |F(x̃) - x̃|` is the
/// residual of `x̃`, the stopping rule means what it means for NetworkX,
/// `Σ |F(x') - x'| ≤ d · change` still holds, the ranks still sum to 1,
/// and the fixed point is the same; only the path to it differs. Without
/// other dangling vertices `c = (1 - d)/(1 - d·T_I)` is exact from the
/// first iteration, the other vertices' total is exact from the second,
/// and what remains is plain Jacobi among them.
///
/// Public so that other executors of PageRank (the job manager's lanes)
/// follow the engine operation for operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Isolated {
    /// `T_I`, in `(0, 1)`.
    teleport: f64,
}

/// The substitution `x → x̃` of one iteration: `x̃(v) = scale·x(v)` for a
/// vertex with edges, `iso·t(v)` for an isolated one; `dangling = Σ x̃`
/// over dangling vertices (isolated ones included). [`Step::plain`] is
/// plain Jacobi: `x̃ = x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    scale: f64,
    iso: f64,
    dangling: f64,
    eliminated: bool,
}

impl Step {
    /// Plain Jacobi (`x̃ = x`), `dangling` being `Σ x` over dangling vertices.
    pub fn plain(dangling: f64) -> Step {
        Step {
            scale: 1.0,
            iso: 0.0,
            dangling,
            eliminated: false,
        }
    }

    /// `F(x̃)(v) = d·(scale·sum + dangling·t(v)) + (1 - d)·t(v)`, `sum`
    /// being `Σ_{u→v} x(u)/outdeg(u)` of the unsubstituted `x`. With
    /// [`Step::plain`] exactly `F(x)(v)` (`1.0·sum` is `sum`).
    #[inline]
    pub fn update(&self, d: f64, sum: f64, t: f64) -> f64 {
        d * (self.scale * sum + self.dangling * t) + (1.0 - d) * t
    }

    /// `x̃(v)` for a vertex with rank `x` and teleport `t`, `lone` telling
    /// whether it is isolated (`t` is only read when it is). With
    /// [`Step::plain`] exactly `x`.
    #[inline]
    pub fn prior(&self, lone: bool, x: f64, t: f64) -> f64 {
        if self.eliminated && lone {
            self.iso * t
        } else {
            self.scale * x
        }
    }
}

impl Isolated {
    /// The elimination for a PageRank run with `cfg` on `g`, or `None` for
    /// plain iteration: it applies to Jacobi stopping by tolerance (a fixed
    /// iteration count keeps NetworkX's and Graphalytics's exact iterates)
    /// when every dangling vertex is isolated and some teleport mass lies
    /// on isolated vertices and some on the others. `None` also for a
    /// configuration [`run`] would refuse.
    pub fn of<G: GraphView + ?Sized>(g: &G, cfg: &Config) -> Option<Isolated> {
        let teleport = prepare(g, cfg).ok()?;
        Isolated::with_teleport(g, cfg, &teleport)
    }

    fn with_teleport<G: GraphView + ?Sized>(
        g: &G,
        cfg: &Config,
        teleport: &Teleport,
    ) -> Option<Isolated> {
        if cfg.iterations.is_some() || cfg.method != Method::Jacobi {
            return None;
        }
        let n = g.num_vertices();
        // A dangling vertex with in-edges couples the isolated vertices'
        // rank to the rest's distribution (through `D`), and the
        // substitution can then slow the iteration down (measured on small
        // digraphs); without one, `D` is exact after the first iteration.
        let sink = (0..n as VertexId)
            .into_par_iter()
            .any(|v| g.out_degree(v) == 0 && g.in_degree(v) != 0);
        if sink {
            return None;
        }
        let lone = |v: VertexId| Isolated::is_isolated(g, v);
        let on_isolated = deterministic_sum(n, |v| if lone(v) { teleport.at(v) } else { 0.0 });
        let on_others = deterministic_sum(n, |v| if lone(v) { 0.0 } else { teleport.at(v) });
        (on_isolated > 0.0 && on_others > 0.0).then_some(Isolated {
            teleport: on_isolated,
        })
    }

    /// Whether `v` has neither in- nor out-edges.
    #[inline]
    pub fn is_isolated<G: GraphView + ?Sized>(g: &G, v: VertexId) -> bool {
        g.out_degree(v) == 0 && g.in_degree(v) == 0
    }

    /// The substitution for an iterate whose vertices with edges hold
    /// `mass` in total, `dangling` of it on dangling vertices. Solves
    /// `c = (1 - d) + d·(scale·dangling + c·T_I)` and
    /// `scale·mass + c·T_I = 1` for `c` (`iso`) and `scale`.
    pub fn step(self, d: f64, dangling: f64, mass: f64) -> Step {
        if mass.is_nan() || mass <= 0.0 {
            // Not reached (a vertex with edges and teleport mass keeps at
            // least (1 - d)·t); plain Jacobi would still be right.
            return Step::plain(dangling);
        }
        let t = self.teleport;
        let ratio = dangling / mass;
        let iso = ((1.0 - d) + d * ratio) / ((1.0 - d * t) + d * ratio * t);
        let scale = (1.0 - iso * t) / mass;
        Step {
            scale,
            iso,
            dangling: scale * dangling + iso * t,
            eliminated: true,
        }
    }
}

/// Tests: a Chebyshev pass never keeps `y` ahead of time, so that a run
/// stopping by tolerance always ends in the replay pass (results are the
/// same either way, so tests running at the same time are not disturbed).
#[cfg(test)]
static NO_FORESIGHT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Tests: replay passes run.
#[cfg(test)]
static REPLAYS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether the tests switched off the Chebyshev passes' foresight.
#[inline]
fn no_foresight() -> bool {
    #[cfg(test)]
    {
        NO_FORESIGHT.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// When [`Method::Chebyshev`] uses its recurrence, and with which `ω`.
///
/// Passes start as Jacobi (`ω = 1`). The recurrence engages after the
/// first pass (from the second on) whose change is more than `1.1 × ρ`
/// times the last one (`ρ = d / (1 + √(1 - d²))`, its rate on a spectrum in
/// `[-d, d]`), and it is given up for good, back to Jacobi from the
/// current iterate, if after `j` of its passes the change is above
/// `1.5 × c·r^j` (`c` and `r` the change and its shrink ratio when it
/// engaged): on a directed graph whose spectrum is far from real
/// (cnr-2000) the recurrence diverges, and this stops it after 3 passes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChebSchedule {
    d: f64,
    rate: f64,
    engaged: bool,
    abandoned: bool,
    steps: usize,
    omega: f64,
    last_change: f64,
    ratio: f64,
    engaged_change: f64,
    engaged_ratio: f64,
}

impl ChebSchedule {
    fn new(d: f64) -> ChebSchedule {
        ChebSchedule {
            d,
            rate: d / (1.0 + (1.0 - d * d).sqrt()),
            engaged: false,
            abandoned: false,
            steps: 0,
            omega: 1.0,
            last_change: f64::INFINITY,
            ratio: 1.0,
            engaged_change: 0.0,
            engaged_ratio: 0.0,
        }
    }

    /// `ω` for the next pass (1: a Jacobi pass).
    fn next_omega(&mut self) -> f64 {
        let d2 = self.d * self.d;
        self.omega = match (self.engaged, self.steps) {
            (false, _) => 1.0,
            (true, 0) => 1.0 / (1.0 - d2 / 2.0),
            (true, _) => 1.0 / (1.0 - d2 * self.omega / 4.0),
        };
        self.omega
    }

    /// The change one pass ahead, extrapolated from the last two.
    fn predicted(&self) -> f64 {
        self.last_change * self.ratio
    }

    /// Records the change of pass number `passes` (counted from 1), which
    /// did not stop the run.
    fn observe(&mut self, passes: usize, change: f64) {
        self.ratio = change / self.last_change;
        if self.engaged {
            self.steps += 1;
            let expected = self.engaged_change * self.engaged_ratio.powi(self.steps as i32);
            if change > 1.5 * expected || change.is_nan() {
                self.engaged = false;
                self.abandoned = true;
            }
        } else if !self.abandoned && passes >= 2 && self.ratio > 1.1 * self.rate {
            self.engaged = true;
            self.engaged_change = change;
            self.engaged_ratio = self.ratio;
        }
        self.last_change = change;
    }
}

/// How many in-edges ahead the fused kernel prefetches a contribution.
const PREFETCH_AHEAD: usize = 32;

/// Whether the in-list loop prefetches contributions [`PREFETCH_AHEAD`]
/// in-edges ahead: not when the `n` contributions take at most half of a
/// core's L2 (256 KiB when its size is unknown), where every read hits L2
/// and the prefetch is six instructions an edge for nothing (email-Enron
/// 4.65–4.74 against 4.53–4.58 ms a run, soc-Slashdot0902 12.7–14.0
/// against 12.0–12.2 ms; bench/RESULTS.md, session 35). Never changes a
/// result.
fn prefetch_contributions<C>(n: usize) -> bool {
    let l2 = plexus_graph::caches::l2_bytes().unwrap_or(512 << 10);
    (n as u64).saturating_mul(std::mem::size_of::<C>() as u64) > l2 / 2
}

/// In-list positions per vertex read without a branch on graphs of short
/// in-lists ([`short_in_lists`]).
const SHORT: usize = 4;

/// Whether nearly every vertex has at most [`SHORT`] in-edges (a road
/// network: 99.8 % of USA-road-FLA's vertices): at most one vertex in 20
/// has more. The fused kernel then reads each vertex's first `SHORT`
/// positions of its in-list in CSC without a branch (positions past the
/// list's end are redirected to entry `n` of the contributions, which
/// holds +0, so the sum is the in-order sum of the list) and goes on with
/// a loop only past them, a well-predicted branch when rare. On a graph of
/// short lists the loop's mispredicted exit costs more than the edges
/// (measured on USA-road-FLA, one thread: a loop over the lists 7.2–8.3 ms
/// per iteration, fixed reads from a padded per-run table of the first 4
/// in-neighbours 2.7 ms, a single loop over all arcs 2.4 ms). Reading the
/// CSC in place replaced that table (16 bytes per vertex built in every
/// run, about 5 ms of the road graph's 14 ms of set-up, and streamed in
/// every pass in place of the lists' 10).
fn short_in_lists(g: &Graph) -> bool {
    let n = g.num_vertices();
    let inc = g.inc();
    if n == 0 || inc.neighbor_array().is_empty() {
        return false;
    }
    let longer = (0..n as VertexId)
        .into_par_iter()
        .with_min_len(1 << 12)
        .filter(|&v| inc.degree(v) > SHORT)
        .count();
    longer * 20 <= n
}

/// The iterate a run starts from, as a function of the vertex: `initial`
/// when given (a probability vector; the push method hands over its
/// state); else, for [`Method::Chebyshev`] stopping by tolerance on an
/// undirected graph, `(1 - d)/|V| + d·deg(v)/arcs`, which is `F` of the
/// random walk's stationary distribution `deg/arcs` and sums to 1; else the
/// uniform vector, as NetworkX (so fixed iteration counts give NetworkX's
/// and Graphalytics's iterates, and Jacobi those of the vertex program and
/// the job manager's lanes). On an undirected graph PageRank leans towards
/// the degrees, and the degree start is about half as far from the fixed
/// point in L1 as the uniform one (USA-road-FLA 0.12 against 0.25,
/// email-Enron 0.33 against 0.82), which saves 3–4 of 16–17 Chebyshev
/// iterations there at an L1 change of 1e-4 (kron22: 7 instead of 8). The
/// fixed point and the stopping rule are the same from any start.
fn start_vector<'a>(
    g: &'a Graph,
    cfg: &Config,
    teleport: &Teleport,
    initial: Option<&'a [f64]>,
) -> impl Fn(usize) -> f64 + Sync + 'a {
    let n = g.num_vertices();
    let uniform = 1.0 / n as f64;
    let arcs = g.num_arcs();
    let by_degree = initial.is_none()
        && cfg.method == Method::Chebyshev
        && cfg.iterations.is_none()
        && !g.is_directed()
        && matches!(teleport, Teleport::Uniform(_))
        && arcs > 0;
    let d = cfg.damping;
    let (base, per_arc) = ((1.0 - d) * uniform, d / arcs as f64);
    let out_offsets = g.out().offsets();
    move |u: usize| match initial {
        Some(x) => x[u],
        None if by_degree => base + per_arc * (out_offsets[u + 1] - out_offsets[u]) as f64,
        None => uniform,
    }
}

/// The fused in-memory kernel: per iteration one parallel pass over blocks
/// of `BLOCK` vertices that, for each vertex `u` in id order, sums the
/// contributions of its in-neighbours (CSC order), applies the formula,
/// adds `|PR'(u) - PR(u)|` to the block's change and writes `u`'s next
/// contribution (or adds its rank to the block's dangling mass). Block
/// partial sums are added in block order, so the result does not depend on
/// the number of threads. `GS`: within a block, in-neighbours of lower id
/// read this sweep's contribution. `isolated`: Jacobi with the isolated
/// vertices eliminated ([`Isolated`]). `CHEB` ([`Method::Chebyshev`], not
/// with `GS` or `isolated`): the pass computes `y = F(x_k)` as Jacobi does,
/// keeps it, and moves to `x_{k+1} = x_{k-1} + ω_k·(y - x_{k-1})`
/// (`ω_0 = 1`, `ω_1 = 1/(1 - d²/2)`, `ω_k = 1/(1 - d²·ω_{k-1}/4)`: the
/// Chebyshev recurrence for a spectrum in `[-d, d]`); the change is the
/// residual `Σ |y - x_k|` and the result the last `y`.
fn fused<C: Contribution, const GS: bool, const CHEB: bool, const BLOCK: usize>(
    g: &Graph,
    cfg: &Config,
    teleport: &Teleport,
    isolated: Option<Isolated>,
    initial: Option<&[f64]>,
) -> Output {
    let n = g.num_vertices();
    if n == 0 {
        return Output {
            rank: Vec::new(),
            iterations: 0,
            converged: true,
            change: 0.0,
        };
    }
    let setup = trace_enabled().then(std::time::Instant::now);
    let d = cfg.damping;
    let in_offsets = g.inc().offsets();
    let sources = g.inc().neighbor_array();
    let out_offsets = g.out().offsets();
    let x0 = start_vector(g, cfg, teleport, initial);
    let mut rank = crate::hugepages::from_fn(n, &x0);
    // The contributions are read in random order: on huge pages, a TLB
    // miss does not add a page walk to every cache miss. Entry `n` stays
    // +0: short in-lists read it past their end.
    let mut old: Vec<C> = crate::hugepages::from_fn(n + 1, |u| {
        if u < n {
            contribution(x0(u), g.out_degree(u as VertexId))
        } else {
            C::ZERO
        }
    });
    let mut new: Vec<C> = crate::hugepages::filled(n + 1, C::ZERO);
    // Jacobi-style passes gather over the stored tiles when the graph has
    // them (Gauss–Seidel reads this sweep's values within a block, in CSC
    // order, which the tiles do not keep).
    let tiles = if GS { None } else { g.tiles() };
    // Not for Gauss–Seidel: there each fixed read chooses between this
    // sweep's and the last sweep's values, and fixed reads measured slower
    // than the loop (USA-road-FLA, f32: 8.1 against 6.9 ms per sweep).
    let short = !GS && tiles.is_none() && short_in_lists(g);
    let x0 = |u: VertexId| x0(u as usize);
    let prefetch = prefetch_contributions::<C>(n);
    let mut dangling = deterministic_sum(n, |u| if g.out_degree(u) == 0 { x0(u) } else { 0.0 });
    // With the elimination: the mass on vertices with edges, and its
    // dangling part (unused by plain iteration, so not summed for it).
    let has_edges = |u: VertexId| !Isolated::is_isolated(g, u);
    let (mut rest_mass, mut rest_dangling) = (0.0, 0.0);
    if isolated.is_some() {
        rest_mass = deterministic_sum(n, |u| if has_edges(u) { x0(u) } else { 0.0 });
        rest_dangling = deterministic_sum(n, |u| {
            if g.out_degree(u) == 0 && has_edges(u) {
                x0(u)
            } else {
                0.0
            }
        });
    }
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    // Chebyshev: `x_{k-1}` (overwritten by `x_{k+1}` in the pass, then
    // swapped with `rank`) and the last plain step `y = F(x_k)`.
    let (mut older, mut plain): (Vec<f64>, Vec<f64>) = if CHEB {
        (
            crate::hugepages::from_fn(n, |u| x0(u as VertexId)),
            crate::hugepages::filled(n, 0.0),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    // Chebyshev starts as Jacobi (`ω = 1`) and engages the recurrence once
    // the change shrinks by less than the recurrence would shrink it.
    let mut schedule = ChebSchedule::new(d);
    // An engaged pass keeps `y` in `plain` only when it may be the last
    // (the change one pass ahead, extrapolated, within 3× the target); if
    // the run stops after a pass that did not, `replay` recomputes that
    // pass's `y` from the same state (`last_step`), writing nothing else.
    let (mut keep_plain, mut replay) = (false, false);
    let mut last_step = Step::plain(0.0);
    let (mut iterations, mut converged, mut change) = (0, false, 0.0);
    if let Some(t) = setup {
        eprintln!(
            "plexus-trace pagerank setup {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    while iterations < limit || replay {
        crate::progress::superstep(n as u64);
        let started = trace_enabled().then(std::time::Instant::now);
        let prev: &[C] = &old;
        let step = match (replay, isolated) {
            (true, _) => last_step,
            (false, Some(iso)) => iso.step(d, rest_dangling, rest_mass),
            (false, None) => Step::plain(dangling),
        };
        if CHEB && !replay {
            schedule.next_omega();
            let target = n as f64 * cfg.tolerance;
            keep_plain = schedule.engaged
                && (iterations + 1 == limit
                    || (cfg.iterations.is_none()
                        && schedule.predicted() < 3.0 * target
                        && !no_foresight()));
        }
        // One block of vertices `lo..lo + ranks.len()`: its new ranks and
        // contributions from `tiled` (the block's in-sums, when the graph
        // has tiles) or from its in-lists; returns the block's change,
        // dangling mass and (with the elimination) rest mass and dangling.
        let sweep = |lo: usize,
                     ranks: &mut [f64],
                     next: &mut [C],
                     older: &mut [f64],
                     plain: &mut [f64],
                     tiled: Option<&[f64]>|
         -> [f64; 4] {
            // Local copies of what the loop reads and never writes: the
            // closure holds references, and for all the compiler knows
            // the loop's stores could change what they point to, so it
            // reloaded them per vertex (`valgrind --tool=callgrind`,
            // USA-road-FLA at one thread: 1.685 G instructions in this
            // kernel before, 1.453 G after).
            let (step, d, n, prev) = (step, d, n, prev);
            let uniform = match teleport {
                Teleport::Uniform(t) => Some(*t),
                Teleport::Sources { .. } => None,
            };
            let len = ranks.len();
            // The block's slices of the topology, hoisted out of the loop.
            let in_offs = &in_offsets[lo..=lo + len];
            let out_offs = &out_offsets[lo..=lo + len];
            if GS {
                // `next` starts as the previous sweep's values of the
                // block; entry `i` is overwritten when vertex `lo + i` is
                // done, so reading `next` for any in-block neighbour
                // gives this sweep's value for lower ids and the last
                // sweep's for the others (a well-predicted branch).
                next.copy_from_slice(&prev[lo..lo + len]);
            }
            let (mut block_change, mut block_dangling) = (0.0f64, 0.0f64);
            let (mut block_rest_mass, mut block_rest_dangling) = (0.0f64, 0.0f64);
            // The block's in-edges, contiguous; `j` walks them across
            // vertex boundaries so the prefetch runs ahead uniformly.
            let first = in_offs[0] as usize;
            let block_sources = &sources[first..in_offs[len] as usize];
            // A block without in-edges takes the loop (which then reads
            // nothing), so `last` is a position of the block's edges.
            let short = short && !block_sources.is_empty();
            let last = block_sources.len().saturating_sub(1);
            let mut j = 0;
            for i in 0..len {
                let u = lo + i;
                let mut sum = 0.0f64;
                let stop = in_offs[i + 1] as usize - first;
                let no_in_edges = j == stop;
                if let Some(t) = tiled {
                    // The sum in CSC order, up to f64 rounding.
                    sum = t[i];
                    j = stop;
                } else if short {
                    // The first SHORT positions without a branch (the
                    // block has in-edges: see `last`); a position past
                    // the list adds entry `n`, +0, which leaves the sum
                    // as the in-order sum of the list's first entries.
                    for k in 0..SHORT {
                        if let Some(&w) = block_sources.get(j + PREFETCH_AHEAD + k) {
                            crate::prefetch::prefetch(prev, w as usize);
                        }
                    }
                    let length = stop - j;
                    for k in 0..SHORT {
                        let w = block_sources[(j + k).min(last)] as usize;
                        // Past the list, entry `n` (+0), by a select
                        // the compiler keeps (a plain `if`, or a mask
                        // of the value, became a branch around the
                        // loads, mispredicted as often as the loop's
                        // exit: 13 against 9.7 ms per iteration on
                        // USA-road-FLA).
                        let v = std::hint::select_unpredictable(k < length, w, n);
                        sum += prev[v].to_f64();
                    }
                    j = (j + SHORT).min(stop);
                }
                while j < stop {
                    if prefetch {
                        if let Some(&w) = block_sources.get(j + PREFETCH_AHEAD) {
                            crate::prefetch::prefetch(prev, w as usize);
                        }
                    }
                    let v = block_sources[j] as usize;
                    let x = if GS && v.wrapping_sub(lo) < len {
                        next[v - lo]
                    } else {
                        prev[v]
                    };
                    sum += x.to_f64();
                    j += 1;
                }
                let t = uniform.unwrap_or_else(|| teleport.at(u as VertexId));
                // `y = F(x̃)(u)`; with `scale = 1` exactly F(x)(u).
                let mut y = step.update(d, sum, t);
                let deg = (out_offs[i + 1] - out_offs[i]) as usize;
                let lone = deg == 0 && no_in_edges;
                block_change += (y - step.prior(lone, ranks[i], t)).abs();
                if CHEB {
                    if replay {
                        plain[i] = y;
                        continue;
                    }
                    // `ranks` keeps `x_k`; `older` goes from `x_{k-1}`
                    // to `x_{k+1}` (`y` itself while `ω = 1`).
                    if schedule.engaged {
                        if keep_plain {
                            plain[i] = y;
                        }
                        let before = older[i];
                        y = before + schedule.omega * (y - before);
                    }
                    older[i] = y;
                } else {
                    ranks[i] = y;
                }
                if deg == 0 {
                    block_dangling += y;
                    if !lone {
                        block_rest_dangling += y;
                    }
                }
                if !lone {
                    block_rest_mass += y;
                }
                next[i] = contribution(y, deg);
            }
            [
                block_change,
                block_dangling,
                block_rest_mass,
                block_rest_dangling,
            ]
        };
        let partials: Vec<[f64; 4]> = if let Some(t) = tiles {
            // The tiles' blocks: each block's sums are used while they are
            // in L2, as soon as its gather ends (bench/NOTES.md, session 31).
            let pieces = crate::tiled::split_by_blocks(t, &mut rank)
                .into_iter()
                .zip(crate::tiled::split_by_blocks(t, &mut new[..n]))
                .zip(crate::tiled::split_by_blocks(t, &mut older))
                .zip(crate::tiled::split_by_blocks(t, &mut plain))
                .collect();
            crate::tiled::map_blocks(
                t,
                &prev[..n],
                pieces,
                |b, (((ranks, next), older), plain), sums| {
                    sweep(b.lo as usize, ranks, next, older, plain, Some(sums))
                },
            )
        } else {
            // Chebyshev's vectors by block, or empty pieces without them.
            let cheb_blocks = if CHEB {
                rayon::iter::Either::Left(
                    older.par_chunks_mut(BLOCK).zip(plain.par_chunks_mut(BLOCK)),
                )
            } else {
                rayon::iter::Either::Right(
                    (0..n.div_ceil(BLOCK))
                        .into_par_iter()
                        .map(|_| (<&mut [f64]>::default(), <&mut [f64]>::default())),
                )
            };
            rank.par_chunks_mut(BLOCK)
                .zip(new[..n].par_chunks_mut(BLOCK))
                .zip(cheb_blocks)
                .enumerate()
                // Tasks of at most STEAL_GRAIN vertices (one block each):
                // the blocks holding hubs must not share a task with a
                // quarter of the graph (edge_map::STEAL_GRAIN).
                .with_max_len((crate::edge_map::STEAL_GRAIN / BLOCK).max(1))
                .map(|(b, ((ranks, next), (older, plain)))| {
                    sweep(b * BLOCK, ranks, next, older, plain, None)
                })
                .collect()
        };
        if replay {
            #[cfg(test)]
            REPLAYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // The same arithmetic as the pass it repeats: the same change.
            rank = std::mem::take(&mut plain);
            break;
        }
        change = partials.iter().map(|p| p[0]).sum();
        dangling = partials.iter().map(|p| p[1]).sum();
        rest_mass = partials.iter().map(|p| p[2]).sum();
        rest_dangling = partials.iter().map(|p| p[3]).sum();
        std::mem::swap(&mut old, &mut new);
        if CHEB {
            std::mem::swap(&mut rank, &mut older);
        }
        if let Some(t) = started {
            eprintln!(
                "plexus-trace pagerank iteration {} change {change:e} {:.3} ms",
                iterations + 1,
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        iterations += 1;
        converged = change < n as f64 * cfg.tolerance;
        if converged && cfg.iterations.is_none() {
            if CHEB && schedule.engaged && !keep_plain {
                // Back to `x_k` and its contributions, to recompute `y`.
                std::mem::swap(&mut old, &mut new);
                std::mem::swap(&mut rank, &mut older);
                last_step = step;
                replay = true;
                continue;
            }
            break;
        }
        if CHEB {
            schedule.observe(iterations, change);
        }
    }
    // The last plain step `y`: after a Jacobi step (`ω = 1`) it is `rank`.
    if CHEB && keep_plain && !replay {
        rank = std::mem::take(&mut plain);
    }
    Output {
        rank,
        iterations,
        converged,
        change,
    }
}

/// Runs PageRank as the vertex program on any executor through
/// [`PageRankDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, PageRankDriver::new(exec.view(), cfg)?)
}

/// PageRank (global or personalised) as a step machine that any executor
/// runs: Jacobi iteration in f64 (`cfg.method` and `cfg.precision` are not
/// used), one dense superstep per iteration, with the contributions, the
/// dangling mass, the isolated-vertex elimination ([`Isolated`]) and the
/// L1 change as vertex steps between supersteps: the same arithmetic as
/// [`run`]'s Jacobi kernel in double precision, so the ranks agree with it
/// up to the order of the executor's sums (within `1e-12` per rank on the
/// conformance graphs; bit for bit on the in-memory executor).
#[derive(Debug)]
pub struct PageRankDriver {
    p: Program,
    isolated: Option<Isolated>,
    tolerance: f64,
    fixed: Option<usize>,
    limit: usize,
    iterations: usize,
    converged: bool,
    change: f64,
    /// A superstep ran whose new ranks are not yet taken.
    pending: bool,
}

impl PageRankDriver {
    /// PageRank with `cfg` over a graph seen through `view`.
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let teleport = prepare(view, cfg)?;
        let isolated = Isolated::with_teleport(view, cfg, &teleport);
        let n = view.num_vertices();
        let start = if n == 0 { 0.0 } else { 1.0 / n as f64 };
        Ok(PageRankDriver {
            p: Program {
                damping: cfg.damping,
                teleport,
                rank: (0..n).map(|_| AtomicF64::new(start)).collect(),
                contrib: (0..n).map(|_| AtomicF64::new(0.0)).collect(),
                next: (0..n).map(|_| AtomicF64::new(0.0)).collect(),
                step: Step::plain(0.0),
            },
            isolated,
            tolerance: cfg.tolerance,
            fixed: cfg.iterations,
            limit: cfg.iterations.unwrap_or(cfg.max_iterations),
            iterations: 0,
            converged: n == 0,
            change: 0.0,
            pending: false,
        })
    }

    /// Takes the ranks of the superstep just run: the change, then the swap.
    fn take_step<V: Vertices>(&mut self, ops: &V) {
        let (p, g) = (&self.p, ops.view());
        self.change = ops.vertex_sum(|v| {
            let lone = Isolated::is_isolated(g, v);
            let prior = p
                .step
                .prior(lone, p.rank[v as usize].load(), p.teleport.at(v));
            (p.next[v as usize].load() - prior).abs()
        });
        std::mem::swap(&mut self.p.rank, &mut self.p.next);
        self.iterations += 1;
        self.converged = self.change < g.num_vertices() as f64 * self.tolerance;
        self.pending = false;
    }

    /// The vertex steps before an iteration: contributions and the step's
    /// substitution (dangling mass, isolated-vertex elimination).
    fn prepare_step<V: Vertices>(&mut self, ops: &V) {
        let (p, g) = (&self.p, ops.view());
        let n = g.num_vertices();
        ops.process_vertices(&VertexSubset::all(n), |u| {
            let c = contribution::<f64>(p.rank[u as usize].load(), g.out_degree(u));
            p.contrib[u as usize].store(c);
            false
        });
        let step = match self.isolated {
            None => Step::plain(ops.vertex_sum(|u| {
                if g.out_degree(u) == 0 {
                    p.rank[u as usize].load()
                } else {
                    0.0
                }
            })),
            Some(iso) => {
                let rest = |u: VertexId, dangling_only: bool| {
                    let counts =
                        !Isolated::is_isolated(g, u) && (!dangling_only || g.out_degree(u) == 0);
                    if counts {
                        p.rank[u as usize].load()
                    } else {
                        0.0
                    }
                };
                let mass = ops.vertex_sum(|u| rest(u, false));
                iso.step(p.damping, ops.vertex_sum(|u| rest(u, true)), mass)
            }
        };
        self.p.step = step;
    }
}

impl Driver for PageRankDriver {
    type Program = Program;
    type Output = Output;

    fn program(&self) -> &Program {
        &self.p
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = ops.view().num_vertices();
        if n == 0 {
            return None;
        }
        if self.pending {
            self.take_step(ops);
            if self.converged && self.fixed.is_none() {
                return None;
            }
        }
        if self.iterations >= self.limit {
            return None;
        }
        self.prepare_step(ops);
        self.pending = true;
        Some(VertexSubset::all(n))
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, _next: VertexSubset) {}

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        Output {
            rank: self
                .p
                .rank
                .into_par_iter()
                .map(AtomicF64::into_inner)
                .collect(),
            iterations: self.iterations,
            converged: self.converged,
            change: self.change,
        }
    }

    fn state_bytes(&self) -> u64 {
        24 * self.p.rank.len() as u64
    }
}

/// One Jacobi iteration, sequentially, in f64: returns `F(x)`.
fn iterate(g: &Graph, damping: f64, teleport: &Teleport, x: &[f64]) -> Vec<f64> {
    let n = g.num_vertices();
    let dangling: f64 = (0..n as VertexId)
        .filter(|&u| g.out_degree(u) == 0)
        .map(|u| x[u as usize])
        .sum();
    (0..n as VertexId)
        .map(|v| {
            let sum: f64 = g
                .in_neighbors(v)
                .iter()
                .map(|&u| x[u as usize] / g.out_degree(u) as f64)
                .sum();
            let t = teleport.at(v);
            damping * (sum + dangling * t) + (1.0 - damping) * t
        })
        .collect()
}

/// Plain sequential iteration with the same definition, method, precision
/// and stopping rule as [`run`]: one loop over the vertices per iteration.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let teleport = prepare(g, cfg)?;
    if cfg.method == Method::Chebyshev {
        chebyshev_applies(cfg)?;
    }
    Ok(match cfg.precision {
        Precision::Double => reference_with::<f64>(g, cfg, &teleport),
        Precision::Single => reference_with::<f32>(g, cfg, &teleport),
    })
}

fn reference_with<C: Contribution>(g: &Graph, cfg: &Config, teleport: &Teleport) -> Output {
    let n = g.num_vertices();
    if n == 0 {
        return Output {
            rank: Vec::new(),
            iterations: 0,
            converged: true,
            change: 0.0,
        };
    }
    let d = cfg.damping;
    let isolated = Isolated::with_teleport(g, cfg, teleport);
    let lone = |u: usize| Isolated::is_isolated(g, u as VertexId);
    let mut x: Vec<f64> = (0..n).map(start_vector(g, cfg, teleport, None)).collect();
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    let (mut iterations, mut converged, mut change) = (0, false, 0.0);
    // Chebyshev: `x_{k-1}`, the last plain step, and the recurrence's state.
    let cheb = cfg.method == Method::Chebyshev;
    let mut older = x.clone();
    let mut plain = x.clone();
    let mut schedule = ChebSchedule::new(d);
    while iterations < limit {
        let omega = schedule.next_omega();
        let engaged = cheb && schedule.engaged;
        let contrib: Vec<C> = (0..n)
            .map(|u| contribution(x[u], g.out_degree(u as VertexId)))
            .collect();
        let mut fresh = contrib.clone();
        let dangling_of = |u: usize| g.out_degree(u as VertexId) == 0;
        let step = match isolated {
            None => Step::plain((0..n).filter(|&u| dangling_of(u)).map(|u| x[u]).sum()),
            Some(iso) => {
                let mass: f64 = (0..n).filter(|&u| !lone(u)).map(|u| x[u]).sum();
                let rest: f64 = (0..n)
                    .filter(|&u| !lone(u) && dangling_of(u))
                    .map(|u| x[u])
                    .sum();
                iso.step(d, rest, mass)
            }
        };
        let mut y = vec![0.0; n];
        for u in 0..n {
            let block = u - u % GS_BLOCK;
            let sum: f64 = g
                .in_neighbors(u as VertexId)
                .iter()
                .map(|&v| {
                    let v = v as usize;
                    let gauss_seidel = cfg.method == Method::GaussSeidel;
                    if gauss_seidel && v >= block && v < u {
                        fresh[v].to_f64()
                    } else {
                        contrib[v].to_f64()
                    }
                })
                .sum();
            let t = teleport.at(u as VertexId);
            y[u] = step.update(d, sum, t);
            fresh[u] = contribution(y[u], g.out_degree(u as VertexId));
        }
        change = (0..n)
            .map(|u| (y[u] - step.prior(lone(u), x[u], teleport.at(u as VertexId))).abs())
            .sum();
        if cheb {
            let z: Vec<f64> = if engaged {
                (0..n)
                    .map(|u| older[u] + omega * (y[u] - older[u]))
                    .collect()
            } else {
                y.clone()
            };
            older = std::mem::replace(&mut x, z);
            plain = y;
        } else {
            x = y;
        }
        iterations += 1;
        converged = change < n as f64 * cfg.tolerance;
        if converged && cfg.iterations.is_none() {
            break;
        }
        if cheb {
            schedule.observe(iterations, change);
        }
    }
    if cheb {
        x = plain;
    }
    Output {
        rank: x,
        iterations,
        converged,
        change,
    }
}

/// What f32 contributions may move ranks by in L1 at damping `d`, with a
/// margin ([`verify`]'s allowance for [`Precision::Single`]).
fn single_precision_slack(d: f64) -> f64 {
    4.0 * f64::from(f32::EPSILON) / (1.0 - d)
}

/// Checks that `out.rank` is a probability vector and a fixed point of the
/// iteration `F` (one Jacobi step, f64) within what the run guarantees:
///
/// * for Jacobi and Gauss–Seidel, `Σ |F(x) - x| ≤ d · change`, `change`
///   being the last iteration's L1 change (`F` is a `d`-contraction in L1,
///   and a Gauss–Seidel sweep's residual is bounded by `d` times its change,
///   whatever mixture of old and new values it read); for push,
///   `Σ |F(x) - x| ≤ change` (equal when the push finished alone);
/// * when it converged, `change < |V|·tolerance`;
/// * for Jacobi, also `≤ 2(1 + d)·d^k` after `k` iterations from any start
///   (`≤ 2d` when isolated vertices are eliminated, see [`Isolated`]);
/// * the ranks sum to 1: exactly for Jacobi, within `d·change/(1 - d)` for
///   Gauss–Seidel (from `Σ F(x) - Σ x = (1 - d)(1 - Σ x)`), within
///   `change/(1 - d)` for push (its residual mass is not in the ranks).
///
/// With [`Precision::Single`] the sums allow for f32 rounding of the
/// contributions (about `4·2⁻²³/(1 - d)` in L1).
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let teleport =
        prepare(g, cfg).map_err(|e| VerifyError::new(format!("bad configuration: {e}")))?;
    let n = g.num_vertices();
    if out.rank.len() != n {
        return Err(VerifyError::new(format!(
            "{} ranks for {n} vertices",
            out.rank.len()
        )));
    }
    if n == 0 {
        return Ok(());
    }
    if let Some(v) = out.rank.iter().position(|&r| !(r >= 0.0 && r.is_finite())) {
        return Err(VerifyError::new(format!(
            "vertex {v} has rank {}",
            out.rank[v]
        )));
    }
    let d = cfg.damping;
    let mut slack = 1e-9 + n as f64 * 1e-14;
    if cfg.precision == Precision::Single {
        slack += single_precision_slack(d);
    }
    if !(out.change >= 0.0 && out.change.is_finite()) {
        return Err(VerifyError::new(format!(
            "the reported last change {} is not a finite number >= 0",
            out.change
        )));
    }
    // Jacobi conserves mass exactly; a Gauss–Seidel sweep does not, but
    // `Σ F(x) - Σ x = (1 - d)(1 - Σ x)`, so `|1 - Σ x| ≤ d·change / (1 - d)`.
    let mut sum_slack = slack;
    if cfg.method == Method::GaussSeidel && out.iterations > 0 {
        sum_slack += d * out.change / (1.0 - d);
    }
    // A push result holds `1 - Σ r = 1 - change / (1 - d)`.
    if cfg.method == Method::Push {
        sum_slack += out.change / (1.0 - d);
    }
    let sum: f64 = out.rank.iter().sum();
    if (sum - 1.0).abs() > sum_slack {
        return Err(VerifyError::new(format!(
            "ranks sum to {sum}, not 1 (allowed deviation {sum_slack:e})"
        )));
    }
    if out.converged && out.iterations > 0 && out.change >= n as f64 * cfg.tolerance {
        return Err(VerifyError::new(format!(
            "reported converged, but the last change {:e} is not below |V|·tolerance = {:e}",
            out.change,
            n as f64 * cfg.tolerance
        )));
    }
    let mut bound = if out.iterations == 0 {
        f64::INFINITY
    } else if cfg.method == Method::Push {
        // `F(p) - p = (1 - d)·r` exactly when the push finished; `d·change`
        // when the power iteration took over.
        out.change
    } else {
        d * out.change
    };
    // Plain Jacobi from the uniform start: an error shrinks by `d` per
    // iteration. With the isolated vertices eliminated each iterate is
    // `F` of a probability vector, which only bounds the residual by `2d`.
    if cfg.method == Method::Jacobi {
        let k = out.iterations.min(i32::MAX as usize) as i32;
        bound = bound.min(match Isolated::with_teleport(g, cfg, &teleport) {
            None => 2.0 * (1.0 + d) * d.powi(k),
            Some(_) => 2.0 * d,
        });
    }
    bound += slack;
    let y = iterate(g, d, &teleport, &out.rank);
    let residual: f64 = y.iter().zip(&out.rank).map(|(a, b)| (a - b).abs()).sum();
    if residual > bound {
        let (v, _) = y
            .iter()
            .zip(&out.rank)
            .map(|(a, b)| (a - b).abs())
            .enumerate()
            .fold(
                (0, -1.0),
                |best, (v, e)| if e > best.1 { (v, e) } else { best },
            );
        return Err(VerifyError::new(format!(
            "not a fixed point: one more iteration moves the ranks by {residual:e} in total (allowed {bound:e}); \
             vertex {v} moves from {} to {}",
            out.rank[v], y[v]
        )));
    }
    Ok(())
}

/// Largest difference per rank between [`PageRankDriver`] on any executor
/// and [`run`]'s Jacobi kernel in double precision after the same
/// iterations: the sums differ only in the order an executor adds them.
pub const DRIVER_RANK_BOUND: f64 = 1e-12;

/// The conformance check of [`PageRankDriver`] on `exec` (see
/// [`crate::conformance`]): global or personalised (by `seed`), a fixed
/// iteration count or a tolerance, against [`run`]'s Jacobi kernel in
/// double precision: within [`DRIVER_RANK_BOUND`] per rank after the same
/// iterations, and passing [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let n = g.num_vertices().max(1) as u64;
    let cfg = Config {
        method: Method::Jacobi,
        precision: Precision::Double,
        iterations: (seed & 1 == 0).then_some(1 + (seed >> 4) as usize % 20),
        personalization: (seed & 2 == 0).then(|| vec![((seed >> 8) % n) as VertexId]),
        tolerance: 1e-9,
        ..Config::default()
    };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    if got.iterations != fast.iterations {
        // Only a change within rounding of the stopping rule may differ.
        let edge = (got.change - n as f64 * cfg.tolerance).abs() < 1e-12;
        if !edge {
            return Err(format!(
                "iterations {} against the kernel's {}",
                got.iterations, fast.iterations
            ));
        }
        return Ok(());
    }
    crate::conformance::close("rank", &got.rank, &fast.rank, DRIVER_RANK_BOUND)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::{graphs, THREADS};
    use crate::with_threads;
    use plexus_graph::BuildOptions;
    use proptest::prelude::*;

    #[test]
    fn the_push_is_held_to_more_progress_once_its_state_leaves_the_cache() {
        let ring = |n: u32| {
            let edges: Vec<(u32, u32)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
            Graph::from_edges(n as usize, &edges, &BuildOptions::directed()).expect("valid edges")
        };
        let small = ring(1000);
        assert_eq!(
            push_window(&small),
            pagerank_push::Window {
                edges: 1000 / 16,
                keep: 0.8
            }
        );
        let n = (PUSH_STATE_IN_CACHE / PUSH_STATE_BYTES + 1) as u32;
        assert_eq!(
            push_window(&ring(n)),
            pagerank_push::Window {
                edges: n as u64 / 64,
                keep: 0.9
            }
        );
    }

    #[test]
    fn personalized_default_tolerance_is_networkx_s_up_to_1e_4_in_l1() {
        assert_eq!(personalized_default_tolerance(6), DEFAULT_TOLERANCE);
        assert_eq!(personalized_default_tolerance(100), DEFAULT_TOLERANCE);
        assert_eq!(personalized_default_tolerance(0), DEFAULT_TOLERANCE);
        let big = 2_395_511;
        assert!((personalized_default_tolerance(big) * big as f64 - 1e-4).abs() < 1e-18);
    }

    /// The LDBC Graphalytics `example-directed` graph (external ids 1..=10
    /// map to internal 0..=9) and its published PR output (d = 0.85, 2 iterations).
    #[test]
    fn graphalytics_example_directed_matches_the_published_output() {
        let pairs: Vec<(u32, u32)> = crate::algo::testgraphs::GRAPHALYTICS_EXAMPLE_DIRECTED
            .iter()
            .map(|&(u, v)| (u - 1, v - 1))
            .collect();
        let g = Graph::from_edges(10, &pairs, &BuildOptions::directed()).unwrap();
        let cfg = Config {
            iterations: Some(2),
            ..Config::default()
        };
        let out = run(&g, &cfg).unwrap();
        let want = [
            0.1477629166666667,
            0.04753375,
            0.1550469444444444,
            0.1597573611111111,
            0.14624,
            0.04753375,
            0.04753375,
            0.1135740277777778,
            0.04753375,
            0.08748375000000001,
        ];
        assert_eq!(out.iterations, 2);
        for (v, (&a, &b)) in out.rank.iter().zip(&want).enumerate() {
            assert!((a - b).abs() <= 1e-4 * b, "vertex {v}: {a} vs {b}");
        }
        verify(&g, &cfg, &out).unwrap();
    }

    #[test]
    fn a_symmetric_cycle_has_uniform_rank_and_converges_at_once() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 2), (2, 3), (3, 0)],
            &BuildOptions::directed(),
        )
        .unwrap();
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.iterations, 1);
        assert!(out.converged);
        assert!(out.rank.iter().all(|&r| (r - 0.25).abs() < 1e-15));
    }

    #[test]
    fn personalized_rank_concentrates_on_the_source() {
        // 0 → 1, 2 isolated; dangling 1 hands its mass back to the source 0.
        let g = Graph::from_edges(3, &[(0, 1)], &BuildOptions::directed()).unwrap();
        let cfg = Config {
            tolerance: 1e-14,
            max_iterations: 1000,
            ..Config::default()
        };
        let out = run_personalized(&g, &cfg, 0).unwrap();
        // Fixed point: x0 = 0.15 + 0.85·x1, x1 = 0.85·x0, x2 = 0.
        let x0 = 0.15 / (1.0 - 0.85 * 0.85);
        assert!((out.rank[0] - x0).abs() < 1e-12);
        assert!((out.rank[1] - 0.85 * x0).abs() < 1e-12);
        assert!(out.rank[2].abs() < 1e-12);
        verify(&g, &cfg.clone(), &out).unwrap_err();
        verify(
            &g,
            &Config {
                personalization: Some(vec![0]),
                ..cfg
            },
            &out,
        )
        .unwrap();
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let g = Graph::from_edges(2, &[(0, 1)], &BuildOptions::directed()).unwrap();
        let bad = |c: Config| run(&g, &c).unwrap_err();
        assert!(matches!(
            bad(Config {
                damping: 1.0,
                ..Config::default()
            }),
            AlgoError::InvalidParameter(_)
        ));
        assert!(matches!(
            bad(Config {
                tolerance: f64::NAN,
                ..Config::default()
            }),
            AlgoError::InvalidParameter(_)
        ));
        assert_eq!(
            bad(Config {
                personalization: Some(vec![5]),
                ..Config::default()
            }),
            AlgoError::NoSuchVertex(5)
        );
        assert!(matches!(
            bad(Config {
                personalization: Some(vec![]),
                ..Config::default()
            }),
            AlgoError::InvalidParameter(_)
        ));
    }

    #[test]
    fn verifier_rejects_corrupted_outputs() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 2), (2, 0), (3, 0)],
            &BuildOptions::directed(),
        )
        .unwrap();
        let cfg = Config::default();
        let good = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &good).unwrap();
        let mut bad = good.clone();
        bad.rank.swap(0, 3);
        assert!(verify(&g, &cfg, &bad)
            .unwrap_err()
            .0
            .contains("fixed point"));
        let mut bad = good.clone();
        bad.rank[2] += 0.01;
        assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("sum"));
        let mut bad = good;
        bad.rank[1] = -bad.rank[1];
        assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("vertex 1"));
    }

    /// A 60 × 60 grid and a configuration stopping at `|V|·1e-9`.
    fn grid_and_tight_config() -> (Graph, Config) {
        let g = plexus_graph::generate::generate(
            plexus_graph::generate::Generator::Grid2d {
                width: 60,
                height: 60,
            },
            &Default::default(),
        )
        .unwrap();
        let cfg = Config {
            tolerance: 1e-9,
            max_iterations: 1000,
            ..Config::default()
        };
        (g, cfg)
    }

    #[test]
    fn gauss_seidel_reaches_the_same_fixed_point_in_fewer_sweeps_on_a_grid() {
        let (g, base) = grid_and_tight_config();
        let jacobi = run(&g, &base).unwrap();
        let gs_cfg = Config {
            method: Method::GaussSeidel,
            ..base.clone()
        };
        let gs = run(&g, &gs_cfg).unwrap();
        verify(&g, &base, &jacobi).unwrap();
        verify(&g, &gs_cfg, &gs).unwrap();
        assert!(jacobi.converged && gs.converged);
        assert!(
            gs.iterations < jacobi.iterations,
            "{} sweeps vs {} iterations",
            gs.iterations,
            jacobi.iterations
        );
        // Each is within `residual/(1 - d) ≤ d·change/(1 - d)` of the fixed point in L1.
        let d = base.damping;
        let within = |o: &Output| d * o.change / (1.0 - d);
        let l1: f64 = gs
            .rank
            .iter()
            .zip(&jacobi.rank)
            .map(|(a, b)| (a - b).abs())
            .sum();
        assert!(l1 <= within(&gs) + within(&jacobi), "{l1}");
    }

    #[test]
    fn preferred_precision_is_single_only_where_rounding_is_far_below_the_tolerance() {
        let (g, tight) = grid_and_tight_config();
        let n = g.num_vertices() as f64;
        // 3,600 vertices: NetworkX's default tolerance is an L1 target of
        // 3.6e-3, far above f32 rounding (3.4e-7 at d = 0.85).
        let loose = Config {
            tolerance: DEFAULT_TOLERANCE,
            ..tight.clone()
        };
        assert_eq!(Precision::preferred(&g, &loose), Precision::Single);
        // Just below and just above 100 times the rounding bound.
        let bound = loose.damping * f64::from(f32::EPSILON) / 2.0 / (1.0 - loose.damping);
        let at = |l1: f64| Config {
            tolerance: l1 / n,
            ..loose.clone()
        };
        assert_eq!(
            Precision::preferred(&g, &at(0.99 * SINGLE_TOLERANCE_MARGIN * bound)),
            Precision::Double
        );
        assert_eq!(
            Precision::preferred(&g, &at(1.01 * SINGLE_TOLERANCE_MARGIN * bound)),
            Precision::Single
        );
        // A damping near 1 magnifies rounding: 0.999 needs an L1 target of 1.2e-2.
        let heavy = Config {
            damping: 0.999,
            ..loose.clone()
        };
        assert_eq!(Precision::preferred(&g, &heavy), Precision::Double);
        assert_eq!(Precision::preferred(&g, &tight), Precision::Double);
        let fixed = Config {
            iterations: Some(20),
            ..loose.clone()
        };
        assert_eq!(Precision::preferred(&g, &fixed), Precision::Double);
        // The push itself is f64; the precision is that of the Jacobi
        // iterations that take over from it.
        let pushed = Config {
            method: Method::Push,
            personalization: Some(vec![0]),
            ..loose.clone()
        };
        assert_eq!(Precision::preferred(&g, &pushed), Precision::Single);
        // What it picks stays within the tolerance's guarantee of the exact ranks.
        for method in [
            Method::Jacobi,
            Method::Chebyshev,
            Method::GaussSeidel,
            Method::Push,
        ] {
            let cfg = Config {
                method,
                precision: Precision::Single,
                ..loose.clone()
            };
            let out = run(&g, &cfg).unwrap();
            verify(&g, &cfg, &out).unwrap();
            let want = exact(&g, &loose);
            let err: f64 = out.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
            let d = cfg.damping;
            assert!(
                err <= (d * out.change + 2.0 * bound) / (1.0 - d),
                "{method:?}: {err} after a change of {}",
                out.change
            );
        }
    }

    #[test]
    fn chebyshev_needs_fewer_iterations_on_a_grid_and_replays_exactly() {
        let (g, base) = grid_and_tight_config();
        let cfg = Config {
            method: Method::Chebyshev,
            ..base.clone()
        };
        let jacobi = run(&g, &base).unwrap();
        let cheb = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &cheb).unwrap();
        assert!(cheb.converged);
        assert!(
            cheb.iterations * 2 < jacobi.iterations,
            "{} against {}",
            cheb.iterations,
            jacobi.iterations
        );
        let want = exact(&g, &base);
        let err: f64 = cheb
            .rank
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .sum();
        let d = base.damping;
        assert!(err <= d * cheb.change / (1.0 - d) + 1e-12, "{err}");
        // Without foresight the last `y` is recomputed by the replay pass:
        // the same ranks, bit for bit, and the same change.
        use std::sync::atomic::Ordering::Relaxed;
        let replays = REPLAYS.load(Relaxed);
        NO_FORESIGHT.store(true, Relaxed);
        let replayed = with_threads(2, || run(&g, &cfg)).unwrap().unwrap();
        NO_FORESIGHT.store(false, Relaxed);
        assert!(REPLAYS.load(Relaxed) > replays);
        assert_eq!(replayed.iterations, cheb.iterations);
        assert_eq!(replayed.change.to_bits(), cheb.change.to_bits());
        assert!(replayed
            .rank
            .iter()
            .zip(&cheb.rank)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        // A fixed count ends on the recurrence's plain step too.
        let fixed = Config {
            iterations: Some(12),
            ..cfg.clone()
        };
        let out = run(&g, &fixed).unwrap();
        assert_eq!(out.iterations, 12);
        verify(&g, &fixed, &out).unwrap();
        let want = reference(&g, &fixed).unwrap();
        assert!(out
            .rank
            .iter()
            .zip(&want.rank)
            .all(|(a, b)| (a - b).abs() < 1e-15));
    }

    #[test]
    fn chebyshev_is_refused_for_personalised_rank() {
        let g = Graph::from_edges(3, &[(0, 1), (1, 2)], &BuildOptions::undirected()).unwrap();
        let cfg = Config {
            method: Method::Chebyshev,
            ..Config::default()
        };
        let ppr = Config {
            personalization: Some(vec![0]),
            ..cfg.clone()
        };
        let e = run(&g, &ppr).unwrap_err().to_string();
        assert!(e.contains("personalised"), "{e}");
        assert_eq!("chebyshev".parse::<Method>(), Ok(Method::Chebyshev));
        assert!(run(&g, &cfg).is_ok());
    }

    #[test]
    fn the_schedule_engages_on_slow_jacobi_and_gives_up_when_the_recurrence_falls_behind() {
        let d = 0.85;
        // Jacobi passes shrinking by 0.8 (> 1.1 × 0.557): engaged after pass 2.
        let mut s = ChebSchedule::new(d);
        let mut change = 1.0;
        for pass in 1..=2 {
            assert_eq!(s.next_omega(), 1.0);
            s.observe(pass, change);
            change *= 0.8;
        }
        assert!(s.engaged);
        assert!(s.next_omega() > 1.0);
        // A recurrence that converges stays engaged ...
        let mut good = s;
        let mut c = change;
        for pass in 4..=10 {
            c *= 0.55;
            good.observe(pass, c);
            assert!(good.engaged && !good.abandoned);
            good.next_omega();
        }
        // ... one that stalls is given up for good (cnr-2000's changes:
        // engaged after pass 5, given up after pass 9).
        let mut bad = ChebSchedule::new(d);
        for (pass, c) in [0.816, 0.369, 0.192, 0.107, 0.0685].into_iter().enumerate() {
            assert!(!bad.engaged);
            bad.next_omega();
            bad.observe(pass + 1, c);
        }
        assert!(bad.engaged);
        for (pass, c) in [(6, 0.0457), (7, 0.0323), (8, 0.0261)] {
            bad.next_omega();
            bad.observe(pass, c);
            assert!(bad.engaged);
        }
        bad.next_omega();
        let c = 0.0222;
        bad.observe(9, c);
        assert!(bad.abandoned && !bad.engaged);
        assert_eq!(bad.next_omega(), 1.0);
        bad.observe(7, c * 0.5);
        assert!(!bad.engaged);
        // A fast-mixing graph (Kronecker: 0.15 to 0.42) never engages.
        let mut fast = ChebSchedule::new(d);
        for (pass, c) in [1.3, 0.2, 0.026, 0.0059, 0.0013, 0.00039]
            .into_iter()
            .enumerate()
        {
            fast.observe(pass + 1, c);
        }
        assert!(!fast.engaged);
    }

    #[test]
    fn chebyshev_on_a_directed_graph_with_a_complex_spectrum_still_converges() {
        // A directed 40-cycle with a chord: `P` has eigenvalues all around
        // the unit circle, where the recurrence diverges.
        let mut edges: Vec<(u32, u32)> = (0..40).map(|v| (v, (v + 1) % 40)).collect();
        edges.push((0, 20));
        edges.push((7, 3));
        let g = Graph::from_edges(40, &edges, &BuildOptions::directed()).unwrap();
        let cfg = Config {
            method: Method::Chebyshev,
            tolerance: 1e-12,
            max_iterations: 1000,
            ..Config::default()
        };
        let out = run(&g, &cfg).unwrap();
        assert!(out.converged);
        verify(&g, &cfg, &out).unwrap();
        let want = exact(&g, &cfg);
        let err: f64 = out.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
        assert!(
            err <= cfg.damping * out.change / (1.0 - cfg.damping) + 1e-12,
            "{err}"
        );
    }

    /// A generated graph with edge factor 8.
    fn generated(kind: plexus_graph::generate::Generator, scale: u32, seed: u64) -> Graph {
        plexus_graph::generate::generate(
            kind,
            &plexus_graph::generate::GenOptions {
                scale,
                edge_factor: 8,
                seed,
                ..Default::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn single_precision_verifies_and_stays_close_to_double() {
        let g = generated(plexus_graph::generate::Generator::Rmat, 10, 3);
        let double = Config {
            tolerance: 1e-6 / g.num_vertices() as f64,
            ..Config::default()
        };
        let single = Config {
            precision: Precision::Single,
            ..double.clone()
        };
        let a = run(&g, &double).unwrap();
        let b = run(&g, &single).unwrap();
        verify(&g, &single, &b).unwrap();
        let l1: f64 = a.rank.iter().zip(&b.rank).map(|(x, y)| (x - y).abs()).sum();
        assert!(l1 < 1e-5, "{l1}");
    }

    #[test]
    fn the_vertex_program_equals_the_fused_kernel_bit_for_bit() {
        let g = generated(plexus_graph::generate::Generator::Rmat, 9, 5);
        // The Kronecker graph (undirected) has isolated vertices: the
        // elimination runs there; R-MAT has sinks, so it does not.
        let kron = generated(plexus_graph::generate::Generator::Kron, 9, 5);
        assert!(Isolated::of(&kron, &Config::default()).is_some());
        assert!(Isolated::of(&g, &Config::default()).is_none());
        for (g, personalization) in [
            (&g, None),
            (&g, Some(vec![3])),
            (&kron, None),
            (&kron, Some(vec![3])),
        ] {
            let cfg = Config {
                personalization,
                ..Config::default()
            };
            assert_fused_equals_program(g, &cfg);
        }
    }

    /// The fused kernel and the vertex program on the in-memory executor
    /// give the same iterations, change and ranks, bit for bit.
    fn assert_fused_equals_program(g: &Graph, cfg: &Config) {
        let fused = run(g, cfg).unwrap();
        verify(g, cfg, &fused).unwrap();
        let program = run_on(&crate::program::InMemory::new(g), cfg).unwrap();
        assert_eq!(fused.iterations, program.iterations);
        assert_eq!(fused.change.to_bits(), program.change.to_bits());
        assert!(fused
            .rank
            .iter()
            .zip(&program.rank)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn chebyshev_by_tolerance_on_undirected_graphs_starts_from_the_degrees() {
        use plexus_graph::generate::Generator;
        let grid = generated(
            Generator::Grid2d {
                width: 40,
                height: 30,
            },
            0,
            1,
        );
        let directed = generated(Generator::Rmat, 9, 2);
        let cheb = Config {
            method: Method::Chebyshev,
            tolerance: 1e-9,
            ..Config::default()
        };
        let uniform_start = |g: &Graph, cfg: &Config| {
            let teleport = prepare(g, cfg).unwrap();
            let x0 = start_vector(g, cfg, &teleport, None);
            let n = g.num_vertices();
            (0..n).all(|u| x0(u) == 1.0 / n as f64)
        };
        // The degree vector: a probability vector, larger at larger degree.
        let teleport = prepare(&grid, &cheb).unwrap();
        let x0 = start_vector(&grid, &cheb, &teleport, None);
        let sum: f64 = (0..grid.num_vertices()).map(&x0).sum();
        assert!((sum - 1.0).abs() < 1e-12, "{sum}");
        assert!(x0(0) < x0(41), "a corner below an inner vertex");
        // Uniform for fixed iteration counts, other methods, directed graphs.
        for cfg in [
            Config {
                iterations: Some(5),
                ..cheb.clone()
            },
            Config {
                method: Method::Jacobi,
                ..cheb.clone()
            },
        ] {
            assert!(uniform_start(&grid, &cfg));
        }
        assert!(uniform_start(&directed, &cheb));
        // Fewer iterations than from the uniform vector, same guarantee.
        let from_degrees = run(&grid, &cheb).unwrap();
        verify(&grid, &cheb, &from_degrees).unwrap();
        let n = grid.num_vertices();
        let uniform = vec![1.0 / n as f64; n];
        let from_uniform =
            fused::<f64, false, true, JACOBI_BLOCK>(&grid, &cheb, &teleport, None, Some(&uniform));
        verify(&grid, &cheb, &from_uniform).unwrap();
        assert!(
            from_degrees.iterations < from_uniform.iterations,
            "{} against {}",
            from_degrees.iterations,
            from_uniform.iterations
        );
    }

    #[test]
    fn short_in_lists_sum_exactly_as_the_lists() {
        // A grid: every in-list is short. A directed graph of short lists
        // with 3 % of its vertices over SHORT (their sums go on in a loop
        // after the fixed reads), with sinks, isolated vertices and
        // duplicate arcs. A graph whose first block of vertices has no
        // in-edges at all.
        let grid = plexus_graph::generate::generate(
            plexus_graph::generate::Generator::Grid2d {
                width: 37,
                height: 29,
            },
            &plexus_graph::generate::GenOptions::default(),
        )
        .unwrap();
        let n: VertexId = 1000;
        let mut edges: Vec<(VertexId, VertexId)> = (0..n - 40)
            .flat_map(|u| [(u, (u * 7 + 1) % (n - 40)), (u, (u * 13 + 5) % (n - 40))])
            .collect();
        for hub in 0..30 {
            edges.extend((0..12).map(|k| ((hub * 31 + k * 17) % n, hub)));
        }
        edges.push((5, 6));
        edges.push((5, 6));
        let short = Graph::from_edges(n as usize, &edges, &BuildOptions::directed()).unwrap();
        let late: Vec<(VertexId, VertexId)> = (0..300u32)
            .flat_map(|k| [(k, 1100 + k), (1100 + k, 1100 + (k * 7 + 3) % 300)])
            .collect();
        let late = Graph::from_edges(1400, &late, &BuildOptions::directed()).unwrap();
        assert!(late.inc().range(0).is_empty() && late.inc().range(1023).is_empty());
        for g in [&grid, &short, &late] {
            assert!(short_in_lists(g));
            for personalization in [None, Some(vec![3, 9])] {
                let cfg = Config {
                    personalization,
                    tolerance: 1e-9,
                    ..Config::default()
                };
                assert_fused_equals_program(g, &cfg);
            }
        }
        // Kronecker lists are long.
        let kron = generated(plexus_graph::generate::Generator::Kron, 9, 5);
        assert!(!short_in_lists(&kron));
    }

    #[test]
    fn isolated_vertices_are_solved_exactly_in_fewer_iterations() {
        // A complete digraph on 0..=3 (it mixes fast, so the isolated
        // vertices' loop sets plain Jacobi's pace) and six isolated
        // vertices; and the same with personalisation.
        let mut edges: Vec<(VertexId, VertexId)> = (0..4)
            .flat_map(|u| (0..4).filter(move |&v| v != u).map(move |v| (u, v)))
            .collect();
        let g = Graph::from_edges(10, &edges, &BuildOptions::directed()).unwrap();
        for personalization in [None, Some(vec![0, 6])] {
            let cfg = Config {
                tolerance: 1e-12,
                personalization,
                ..Config::default()
            };
            let teleport = prepare(&g, &cfg).unwrap();
            let iso = Isolated::of(&g, &cfg).expect("isolated vertices with teleport mass");
            let eliminated = run(&g, &cfg).unwrap();
            let plain = fused::<f64, false, false, JACOBI_BLOCK>(&g, &cfg, &teleport, None, None);
            verify(&g, &cfg, &eliminated).unwrap();
            verify(&g, &cfg, &plain).unwrap();
            assert!(eliminated.converged && plain.converged);
            assert!(
                eliminated.iterations < plain.iterations,
                "{} vs {}",
                eliminated.iterations,
                plain.iterations
            );
            let l1: f64 = eliminated
                .rank
                .iter()
                .zip(&plain.rank)
                .map(|(a, b)| (a - b).abs())
                .sum();
            assert!(l1 < 1e-10, "{l1}");
            // The isolated vertices hold c·t(v), c = (1 - d) + d·D.
            let c = (1.0 - cfg.damping)
                + cfg.damping * (4..10).map(|v| eliminated.rank[v]).sum::<f64>();
            for v in 4..10u32 {
                let want = c * teleport.at(v);
                assert!(
                    (eliminated.rank[v as usize] - want).abs() < 1e-9,
                    "vertex {v}"
                );
            }
            // Every executor and the reference take the same path.
            let program = run_on(&crate::program::InMemory::new(&g), &cfg).unwrap();
            assert_eq!(program.iterations, eliminated.iterations);
            assert!(program
                .rank
                .iter()
                .zip(&eliminated.rank)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
            assert_eq!(
                reference(&g, &cfg).unwrap().iterations,
                eliminated.iterations
            );
            assert_ne!(iso.step(cfg.damping, 0.1, 0.5), Step::plain(0.1));
        }
        // A fixed iteration count (Graphalytics) and Gauss–Seidel keep plain sweeps.
        let fixed = Config {
            iterations: Some(5),
            ..Config::default()
        };
        assert!(Isolated::of(&g, &fixed).is_none());
        let gs = Config {
            method: Method::GaussSeidel,
            ..Config::default()
        };
        assert!(Isolated::of(&g, &gs).is_none());
        // Teleport only on isolated vertices: nothing to eliminate against.
        let only = Config {
            personalization: Some(vec![7]),
            ..Config::default()
        };
        assert!(Isolated::of(&g, &only).is_none());
        let out = run(&g, &only).unwrap();
        verify(&g, &only, &out).unwrap();
        // A sink (dangling with an in-edge) keeps plain sweeps too.
        edges.push((0, 5));
        let sink = Graph::from_edges(10, &edges, &BuildOptions::directed()).unwrap();
        assert!(Isolated::of(&sink, &Config::default()).is_none());
    }

    #[test]
    fn the_verifier_rejects_a_false_claim_of_change() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 2), (2, 0), (3, 0)],
            &BuildOptions::directed(),
        )
        .unwrap();
        let cfg = Config {
            iterations: Some(3),
            method: Method::GaussSeidel,
            ..Config::default()
        };
        let mut out = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &out).unwrap();
        out.change = 0.0;
        let e = verify(&g, &cfg, &out).unwrap_err().0;
        assert!(e.contains("fixed point") || e.contains("sum"), "{e}");
        out.change = f64::NAN;
        assert!(verify(&g, &cfg, &out).unwrap_err().0.contains("change"));
    }

    /// The exact ranks, to rounding: 400 Jacobi iterations (`0.85^400 ≈ 4e-29`).
    fn exact(g: &Graph, cfg: &Config) -> Vec<f64> {
        let cfg = Config {
            iterations: Some(400),
            method: Method::Jacobi,
            precision: Precision::Double,
            ..cfg.clone()
        };
        reference(g, &cfg).unwrap().rank
    }

    #[test]
    fn push_from_a_corner_of_a_grid_stays_local_and_verifies() {
        // A 100 × 100 grid from a corner: the mass stays near the source,
        // so the push finishes alone, well inside its budget.
        let w = 100;
        let g = generated(
            plexus_graph::generate::Generator::Grid2d {
                width: w,
                height: w,
            },
            0,
            1,
        );
        let cfg = Config {
            tolerance: 1e-8,
            personalization: Some(vec![0]),
            method: Method::Push,
            ..Config::default()
        };
        let out = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &out).unwrap();
        assert!(out.converged);
        // Push alone: the ranks miss exactly the residual mass change/(1 - d).
        let missing = 1.0 - out.rank.iter().sum::<f64>();
        assert!(
            (missing - out.change / (1.0 - cfg.damping)).abs() < 1e-12,
            "{missing}"
        );
        assert!(out.change < (1.0 - cfg.damping) * (w * w) as f64 * cfg.tolerance);
        let want = exact(&g, &cfg);
        let err: f64 = out.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
        assert!(err <= out.change / (1.0 - cfg.damping) + 1e-12, "{err}");
        // Far corners were never reached by any push.
        assert_eq!(out.rank[(w * w - 1) as usize], 0.0);
        // A false claim of a small change is caught.
        let mut bad = out.clone();
        bad.change /= 100.0;
        assert!(verify(&g, &cfg, &bad).is_err());
    }

    #[test]
    fn push_with_fixed_iterations_is_refused() {
        let g = Graph::from_edges(3, &[(0, 1), (1, 2)], &BuildOptions::directed()).unwrap();
        let cfg = Config {
            iterations: Some(5),
            personalization: Some(vec![0]),
            method: Method::Push,
            ..Config::default()
        };
        let e = run(&g, &cfg).unwrap_err().to_string();
        assert!(e.contains("push") && e.contains("iterations"), "{e}");
        assert_eq!("push".parse::<Method>(), Ok(Method::Push));
    }

    /// `run` at every thread count of `THREADS` gives `first`'s ranks, bit
    /// for bit.
    fn same_bits_at_every_thread_count(
        g: &Graph,
        cfg: &Config,
        first: &Output,
    ) -> Result<(), TestCaseError> {
        for t in THREADS {
            let got = with_threads(t, || run(g, cfg)).unwrap().unwrap();
            let same = got
                .rank
                .iter()
                .zip(&first.rank)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            prop_assert!(same, "{} threads differ from 1 thread", t);
        }
        Ok(())
    }

    fn methods() -> impl Strategy<Value = (Method, Precision)> {
        prop_oneof![
            Just((Method::Jacobi, Precision::Double)),
            Just((Method::GaussSeidel, Precision::Double)),
            Just((Method::Jacobi, Precision::Single)),
            Just((Method::GaussSeidel, Precision::Single)),
            Just((Method::Chebyshev, Precision::Double)),
            Just((Method::Chebyshev, Precision::Single)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_reference_and_is_identical_at_any_thread_count(
            spec in graphs(),
            fixed in proptest::option::of(0usize..6),
            source in proptest::option::of(0usize..1000),
            (method, precision) in methods(),
        ) {
            let g = spec.build();
            let single = precision == Precision::Single;
            let cfg = Config {
                iterations: fixed,
                tolerance: if single { 1e-6 } else { 1e-10 },
                personalization: source.map(|s| vec![(s % g.num_vertices()) as VertexId]),
                method,
                precision,
                ..Config::default()
            };
            if method == Method::Chebyshev && cfg.personalization.is_some() {
                prop_assert!(run(&g, &cfg).is_err() && reference(&g, &cfg).is_err());
                return Ok(());
            }
            let want = reference(&g, &cfg).unwrap();
            verify(&g, &cfg, &want).unwrap();
            let first = with_threads(1, || run(&g, &cfg)).unwrap().unwrap();
            prop_assert_eq!(first.iterations, want.iterations);
            prop_assert_eq!(first.converged, want.converged);
            let close = if single { 1e-7 } else { 1e-12 };
            for (a, b) in first.rank.iter().zip(&want.rank) {
                prop_assert!((a - b).abs() <= close, "{} vs {}", a, b);
            }
            if let Err(e) = verify(&g, &cfg, &first) {
                return Err(TestCaseError::fail(e.to_string()));
            }
            same_bits_at_every_thread_count(&g, &cfg, &first)?;
        }

        /// Stored tiles change how a pass gathers, not what it computes:
        /// the ranks of the CSC gather up to f64 rounding, the same
        /// iterations, and the same bits at any thread count.
        #[test]
        fn tiles_give_the_ranks_of_the_csc_gather(
            spec in graphs(),
            source in proptest::option::of(0usize..1000),
            (method, precision) in methods(),
            shift in 0u32..5,
            block in 1usize..40,
        ) {
            let g = spec.build();
            let cfg = Config {
                tolerance: 1e-10,
                personalization: source.map(|s| vec![(s % g.num_vertices()) as VertexId]),
                method,
                precision,
                ..Config::default()
            };
            let Ok(want) = run(&g, &cfg) else { return Ok(()) };
            let tiled = g.clone().with_tiles(shift, block);
            let first = with_threads(1, || run(&tiled, &cfg)).unwrap().unwrap();
            prop_assert_eq!(first.iterations, want.iterations);
            for (a, b) in first.rank.iter().zip(&want.rank) {
                prop_assert!((a - b).abs() <= 1e-12, "{} vs {}", a, b);
            }
            if let Err(e) = verify(&tiled, &cfg, &first) {
                return Err(TestCaseError::fail(e.to_string()));
            }
            same_bits_at_every_thread_count(&tiled, &cfg, &first)?;
        }

        #[test]
        fn push_is_within_its_reported_change_of_the_exact_ranks(
            spec in graphs(),
            sources in proptest::collection::vec(0usize..1000, 0..3),
            tolerance in prop_oneof![Just(1e-3), Just(1e-6), Just(1e-12)],
            single in any::<bool>(),
        ) {
            let g = spec.build();
            let n = g.num_vertices();
            let personalization = (!sources.is_empty())
                .then(|| sources.iter().map(|&s| (s % n) as VertexId).collect());
            // f32 contributions in the Jacobi iterations that take over from
            // the push when it stops early, for tolerances above their rounding.
            let single = single && tolerance >= 1e-6;
            let cfg = Config {
                tolerance,
                max_iterations: 1000,
                personalization,
                method: Method::Push,
                precision: if single { Precision::Single } else { Precision::Double },
                ..Config::default()
            };
            let first = with_threads(1, || run(&g, &cfg)).unwrap().unwrap();
            if let Err(e) = verify(&g, &cfg, &first) {
                return Err(TestCaseError::fail(e.to_string()));
            }
            prop_assert!(first.converged);
            // ‖x - π‖₁ ≤ ‖F(x) - x‖₁ / (1 - d) ≤ change / (1 - d).
            let want = exact(&g, &cfg);
            let err: f64 = first.rank.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
            let rounding = if single { single_precision_slack(cfg.damping) } else { 0.0 };
            prop_assert!(err <= first.change / (1.0 - cfg.damping) + rounding + 1e-12, "error {} change {}", err, first.change);
            same_bits_at_every_thread_count(&g, &cfg, &first)?;
        }
    }
}
