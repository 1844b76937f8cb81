//! [`Method::Push`]: forward push from the sources, handing over to the power
//! iteration when it stops paying (its windows of progress).
use super::*;

/// Edges the push stage may read, per edge of the graph, before the power
/// iteration takes over (its sequential scattered updates cost several
/// pull edges each; see [`crate::algo::pagerank_push`]).
pub(super) const PUSH_BUDGET_PER_EDGE: f64 = 0.5;
/// The push's state per vertex: residual, weight and estimate, f64 each.
pub(super) const PUSH_STATE_BYTES: usize = 24;
/// Up to this much push state (about a core's L2), a scattered push edge
/// stays in cache and costs a few pull edges; beyond it, dozens.
pub(super) const PUSH_STATE_IN_CACHE: usize = 1 << 20;

/// How much progress the push must make to go on ([`pagerank_push::Window`]):
/// per window of `|E|/w` edges read, its residual must fall to `keep` times
/// what it was, where a pull iteration would cut it by `d = 0.85` for `|E|`
/// edges. The two settle the break-even `keep ≈ 0.85^(c/w)` for a push edge
/// that costs `c` pull edges on two threads:
/// - state in cache (email-Enron, `c` about 4): `w = 16`, `keep = 0.8`, a
///   margin under `0.85^(4/16) ≈ 0.96`;
/// - state beyond it (Kronecker scale 22, `c` about 46 once the pull passes
///   ran over tiles: 16 ns a push edge against 0.35 ns a pull edge):
///   `w = 64`, `keep = 0.9` (`0.85^(46/64) ≈ 0.89`).
///
/// A push that stops paying hands over early: its later edges cost more
/// than the Jacobi iterations they save.
pub(super) fn push_window(g: &Graph) -> pagerank_push::Window {
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
pub(super) fn push(g: &Graph, cfg: &Config, teleport: &Teleport) -> Result<Output, AlgoError> {
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
