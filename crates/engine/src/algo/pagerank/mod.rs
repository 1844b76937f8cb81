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

mod chebyshev;
mod config;
mod isolated;
mod kernel;
mod program;
mod push;
mod reference;

use self::chebyshev::*;
use self::kernel::*;
use self::push::*;

use self::config::*;
pub use self::config::{
    personalized_default_tolerance, prepare, Config, Method, Output, Precision, Teleport,
    DEFAULT_DAMPING, DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE, GS_BLOCK, SINGLE_TOLERANCE_MARGIN,
};
pub use self::isolated::{Isolated, Step};
pub use self::kernel::{contribution, prefetch_contributions, Contribution, PREFETCH_AHEAD};
pub use self::program::{run_on, PageRankDriver, Program};
pub use self::reference::{check_on, reference, verify, DRIVER_RANK_BOUND};

/// Runs PageRank (personalised when `cfg.personalization` is set) in
/// parallel on the current rayon pool, with the fused in-memory kernel.
///
/// A progress observer's stop request (`progress::cancel_requested`, read
/// once per iteration) ends the run with [`AlgoError::Cancelled`].
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let o = run_uncancelled(g, cfg)?;
    if crate::progress::cancel_requested() {
        return Err(AlgoError::Cancelled);
    }
    Ok(o)
}

/// [`run`] without the final look at a stop request (kernels stop
/// iterating early when one came).
fn run_uncancelled(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
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

/// Personalised PageRank from one source: [`run`] with
/// `personalization = Some(vec![source])` and the other fields of `cfg`.
pub fn run_personalized(g: &Graph, cfg: &Config, source: VertexId) -> Result<Output, AlgoError> {
    let cfg = Config {
        personalization: Some(vec![source]),
        ..cfg.clone()
    };
    run(g, &cfg)
}

#[cfg(test)]
mod tests;
