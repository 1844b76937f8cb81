//! Personalised PageRank by forward push (Andersen, Chung & Lang, "Local
//! graph partitioning using PageRank vectors", FOCS 2006), the first stage
//! of [`pagerank::Method::Push`](super::pagerank::Method::Push).
//!
//! **State.** An estimate `p` and a residual `r ≥ 0`, from `p = 0`, `r = t`
//! (the teleport vector). Pushing a vertex `u` moves `(1 - d)·r(u)` into
//! `p(u)` and spreads `d·r(u)` along its out-edges (`d·r(u)/outdeg(u)` per
//! edge, multi-edges with multiplicity, a self-loop back to `u`), or, for a
//! dangling `u`, over the teleport vector, as the power iteration does.
//!
//! **Invariant.** With `R = (1 - d)(I - d·M)⁻¹` (`M` the column-stochastic
//! walk matrix, dangling columns equal to `t`), the exact ranks are
//! `π = p + R·r` at every moment: a push takes `r(u)·(I - d·M)·e_u` out of
//! the residual and puts `(1 - d)·r(u)·e_u` into `p`. Two facts follow:
//! * `Σ |π - p| = Σ r` (R keeps the sum of a non-negative vector), so the
//!   L1 error of `p` is known exactly while the kernel runs;
//! * `F(p) - p = (1 - d)·r` for one power-iteration step `F`, so one more
//!   NetworkX iteration would change `p` by exactly `(1 - d)·Σ r` in L1.
//!
//! **Order.** Rounds of falling thresholds `θ`: a round pushes, first in
//! first out, every vertex whose residual per out-edge `r(u)/max(outdeg, 1)`
//! is at least `θ`, including vertices that cross `θ` during the round; the
//! next round divides `θ` by [`THETA_STEP`]. Only vertices that ever held
//! residual are scanned between rounds. Pushes are ordered and sequential,
//! so the result depends on no thread count. The work is what the mass
//! needs, not `|E|` per iteration: from a page of a web graph or a point of
//! a road network the mass stays near the source, and distant vertices with
//! tiny residuals are never pushed.
//!
//! **Budget.** On small-world graphs the mass spreads over everything and a
//! parallel pull iteration does the same work faster. So the kernel stops
//! early once it has read more out-edges than `budget`, or once a window of
//! edges did not cut the residual enough ([`Window`]); the caller then
//! continues from `p + r` with the power iteration.
use std::collections::VecDeque;

use plexus_graph::{Graph, VertexId};

/// The progress the push must make to go on: after every `edges` out-edges
/// read, its residual must have fallen to at most `keep` times what it was
/// when those edges began. The caller picks both from what a pull
/// iteration costs against a push edge (`pagerank::push_window`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Window {
    pub edges: u64,
    pub keep: f64,
}

/// Threshold divisor between rounds (2, 4 and 16 pushed the same number of
/// edges within 2 % on the harness's graphs; 4 keeps the rounds few).
const THETA_STEP: f64 = 4.0;

/// What [`run`] returns.
pub(crate) struct Pushed {
    /// The estimate `p`.
    pub rank: Vec<f64>,
    /// The residual `r`, per vertex; empty when `reached` (then only its
    /// sum is needed), except in this crate's unit tests.
    pub residual: Vec<f64>,
    /// `Σ r`, summed afresh at the end (the running total drifts by rounding).
    pub residual_sum: f64,
    /// Threshold rounds begun.
    pub rounds: usize,
    /// Out-edges read (a dangling push counts one per source it spreads to).
    pub edges_read: u64,
    /// Whether `Σ r < epsilon` was reached (otherwise the budget, a window
    /// without enough progress or `max_rounds` stopped the kernel).
    pub reached: bool,
}

/// Forward push from the teleport vector uniform over `sources` (distinct
/// internal ids, non-empty), damping `d`, until `Σ r < epsilon`, or more
/// than `budget` out-edges have been read, or `max_rounds` rounds have run,
/// or (with `window: Some(w)`) a stretch of `w.edges` edges read left the residual
/// above `w.keep` times what it was before it.
pub(crate) fn run(
    g: &Graph,
    d: f64,
    sources: &[VertexId],
    epsilon: f64,
    budget: u64,
    window: Option<Window>,
    max_rounds: usize,
) -> Pushed {
    let n = g.num_vertices();
    let offsets = g.out().offsets();
    let targets = g.out().neighbor_array();
    let share = 1.0 / sources.len() as f64;
    // Per vertex: the residual and `max(outdeg, 1)`, side by side so that
    // an offer reads both from one line. The second is negated while the
    // vertex is queued, and 0 until the vertex first holds residual (then
    // it joins `touched`, the only vertices scanned between rounds).
    // Zeroed by the allocator (an array of zeros is, a tuple is not): a
    // local push touches only the pages it uses.
    let mut cell: Vec<[f64; 2]> = vec![[0.0; 2]; n];
    let mut rank = vec![0.0f64; n];
    let mut touched: Vec<VertexId> = Vec::new();
    let mut queue: VecDeque<VertexId> = VecDeque::new();
    let weight = |v: VertexId| (offsets[v as usize + 1] - offsets[v as usize]).max(1) as f64;
    for &s in sources {
        cell[s as usize] = [share, weight(s)];
        touched.push(s);
    }
    let mut total = 1.0f64;
    let mut theta = 1.0f64;
    let (mut rounds, mut edges_read) = (0usize, 0u64);
    // The current window: where it ends and the residual when it began.
    let (step, keep) = window.map_or((u64::MAX, 1.0), |w| (w.edges.max(1), w.keep));
    let (mut window_end, mut window_total) = (step, total);
    'rounds: while rounds < max_rounds && total >= epsilon && edges_read <= budget {
        rounds += 1;
        // Queue the vertices at the threshold, and drop from `touched` the
        // ones holding nothing (pushed since, and not offered again): an
        // offer puts them back.
        touched.retain(|&v| {
            let c = &mut cell[v as usize];
            if c[0] == 0.0 {
                c[1] = 0.0;
                return false;
            }
            if c[0] >= theta * c[1] {
                c[1] = -c[1];
                queue.push_back(v);
            }
            true
        });
        while let Some(u) = queue.pop_front() {
            let c = &mut cell[u as usize];
            c[1] = -c[1];
            let ru = c[0];
            if ru < theta * c[1] {
                continue;
            }
            c[0] = 0.0;
            rank[u as usize] += (1.0 - d) * ru;
            total -= (1.0 - d) * ru;
            let (lo, hi) = (
                offsets[u as usize] as usize,
                offsets[u as usize + 1] as usize,
            );
            let mut offer = |v: VertexId, m: f64| {
                let c = &mut cell[v as usize];
                if c[1] == 0.0 {
                    c[1] = weight(v);
                    touched.push(v);
                }
                c[0] += m;
                if c[1] > 0.0 && c[0] >= theta * c[1] {
                    c[1] = -c[1];
                    queue.push_back(v);
                }
            };
            if lo == hi {
                let m = d * ru * share;
                for &s in sources {
                    offer(s, m);
                }
                // Spreading over the sources costs an offer each: counted,
                // so that global PageRank (every vertex a source) on a graph
                // with many dangling vertices hands over to the power
                // iteration instead of taking `|V|` per dangling push.
                edges_read += sources.len() as u64;
            } else {
                let m = d * ru / (hi - lo) as f64;
                for &v in &targets[lo..hi] {
                    offer(v, m);
                }
                edges_read += (hi - lo) as u64;
            }
            if total < epsilon || edges_read > budget {
                break 'rounds;
            }
            if edges_read >= window_end {
                if total > keep * window_total {
                    break 'rounds;
                }
                window_total = total;
                window_end = edges_read.saturating_add(step);
            }
        }
        theta /= THETA_STEP;
    }
    let residual_sum: f64 = touched.iter().map(|&v| cell[v as usize][0]).sum();
    let reached = residual_sum < epsilon;
    // Only a hand-over needs the residual vector (and the unit tests, which
    // check the invariant on it); a local push stays local.
    let residual = if reached && !cfg!(test) {
        Vec::new()
    } else {
        cell.iter().map(|c| c[0]).collect()
    };
    Pushed {
        rank,
        residual,
        residual_sum,
        rounds,
        edges_read,
        reached,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::graphs;
    use proptest::prelude::*;

    /// One power-iteration step `F(x)` (dangling mass to the sources), sequentially.
    fn step(g: &Graph, d: f64, sources: &[VertexId], x: &[f64]) -> Vec<f64> {
        let n = g.num_vertices();
        let share = 1.0 / sources.len() as f64;
        let mut y = vec![0.0; n];
        let mut dangling = 0.0;
        for u in 0..n as VertexId {
            let out = g.out().neighbors(u);
            if out.is_empty() {
                dangling += x[u as usize];
            }
            for &v in out {
                y[v as usize] += d * x[u as usize] / out.len() as f64;
            }
        }
        for &s in sources {
            y[s as usize] += ((1.0 - d) + d * dangling) * share;
        }
        y
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The invariant the stopping rule rests on: `F(p) - p = (1 - d)·r`
        /// vertex by vertex, and `Σ p + Σ r = 1`, whenever the push stops.
        #[test]
        fn one_power_step_moves_p_by_exactly_the_pushed_residual(
            spec in graphs(),
            picks in proptest::collection::btree_set(0usize..1000, 1..4),
            epsilon in prop_oneof![Just(1e-1), Just(1e-4), Just(1e-9)],
            budget in prop_oneof![Just(0u64), Just(10), Just(u64::MAX)],
        ) {
            let g = spec.build();
            let n = g.num_vertices();
            let mut sources: Vec<VertexId> = picks.iter().map(|&s| (s % n) as VertexId).collect();
            sources.sort_unstable();
            sources.dedup();
            let d = 0.85;
            let out = run(&g, d, &sources, epsilon, budget, None, 100);
            let total: f64 = out.rank.iter().sum::<f64>() + out.residual_sum;
            prop_assert!((total - 1.0).abs() < 1e-12, "mass {}", total);
            prop_assert!(out.residual.iter().all(|&r| r >= 0.0));
            prop_assert!((out.residual_sum - out.residual.iter().sum::<f64>()).abs() < 1e-12);
            if budget == u64::MAX {
                prop_assert!(out.reached && out.residual_sum < epsilon);
            }
            let y = step(&g, d, &sources, &out.rank);
            for (v, ((&yv, &p), &r)) in y.iter().zip(&out.rank).zip(&out.residual).enumerate() {
                prop_assert!((yv - p - (1.0 - d) * r).abs() < 1e-12,
                    "vertex {}: F(p) - p = {}, (1 - d) r = {}", v, yv - p, (1.0 - d) * r);
            }
        }
    }
}
