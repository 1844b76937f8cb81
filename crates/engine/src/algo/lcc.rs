//! Local clustering coefficient (LCC) of every vertex.
//!
//! **Returns** [`Output`]: `coefficient[v]` in `[0, 1]` (f64) and `average`,
//! the mean over *all* vertices, zeros included (NetworkX
//! `average_clustering` with `count_zeros=True`; 0 for the empty graph).
//!
//! **Semantics** ([`Semantics`]):
//! - [`Semantics::NetworkX`]: NetworkX `clustering(G)` on the undirected
//!   simple view (distinct neighbours in either direction, `v` itself
//!   excluded): `2·T(v) / (d(v)·(d(v) − 1))`, where `T(v)` is the number of
//!   triangles through `v`; 0 when `d(v) < 2`.
//! - [`Semantics::Graphalytics`]: LDBC Graphalytics LCC. `N(v)` is the set of
//!   in- and out-neighbours of `v` other than `v`; the coefficient is the
//!   number of distinct arcs `(u, w)` with `u, w ∈ N(v)`, `u ≠ w`, divided by
//!   `|N(v)|·(|N(v)| − 1)`; 0 when `|N(v)| ≤ 1`. On an undirected graph every
//!   edge is two arcs, so the two semantics agree.
//!
//! Self-loops never count (neither as neighbours nor as arcs); duplicate
//! edges count once; isolated and degree-1 vertices get 0; weights are
//! ignored.
//!
//! **Method.** Triangles of the simple view are enumerated once each by the
//! degree-ordered kernel of [`super::triangles`]; each corner of a triangle
//! gains the number of arcs (1 or 2 in Graphalytics semantics, always 2 in
//! NetworkX semantics) on the opposite side. Work is `O(m^{3/2})`.
//!
//! **Executor fit.** In-memory only (it needs neighbour-list intersections).

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::triangles::{per_vertex_counts, plain_lists, triangle_weights, SimpleView};
use crate::error::{AlgoError, VerifyError};

/// Graphs whose `Σ_v d(v)²` (simple view) is at most this are verified by
/// recomputing every coefficient from the plain definition.
pub const VERIFY_FULL_LIMIT: u64 = 50_000_000;

/// Absolute tolerance of the verifier's comparison.
pub const VERIFY_TOLERANCE: f64 = 1e-9;

/// The default semantics.
pub const DEFAULT_SEMANTICS: Semantics = Semantics::NetworkX;

/// Which definition of the coefficient to compute (see the module docs).
///
/// This enum would sit better in a shared module once other algorithms
/// (e.g. CDLP) offer the same NetworkX / Graphalytics choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Semantics {
    /// NetworkX `clustering`: undirected simple view.
    #[default]
    NetworkX,
    /// LDBC Graphalytics LCC: arcs among in ∪ out neighbours.
    Graphalytics,
}

/// Parameters of the LCC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Which definition to use; default [`DEFAULT_SEMANTICS`].
    pub semantics: Semantics,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            semantics: DEFAULT_SEMANTICS,
        }
    }
}

/// Clustering coefficients.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// Coefficient of each vertex, in `[0, 1]`, indexed by internal id.
    pub coefficient: Vec<f64>,
    /// Mean of `coefficient` over all vertices (0 for the empty graph).
    pub average: f64,
}

/// Computes the coefficients in parallel.
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let graphalytics = cfg.semantics == Semantics::Graphalytics && g.is_directed();
    let view = if graphalytics {
        SimpleView::with_directions(g)
    } else {
        SimpleView::new(g)
    };
    // Arcs between the other two corners: a popcount of the direction mask,
    // or 2 (both arcs) on the undirected view, where it is twice the
    // triangle count (counted without atomics).
    let closed = if graphalytics {
        triangle_weights(&view, |m| m.map_or(2, |m| u64::from(m.count_ones())))
    } else {
        let mut t = per_vertex_counts(&view);
        t.par_iter_mut().for_each(|x| *x *= 2);
        t
    };
    let coefficient: Vec<f64> = (0..g.num_vertices())
        .into_par_iter()
        .with_min_len(1024)
        .map(|v| ratio(closed[v], view.degree(v as VertexId) as u64))
        .collect();
    let average = mean(&coefficient);
    Ok(Output {
        coefficient,
        average,
    })
}

/// Computes the coefficients sequentially from the plain definition: for
/// each vertex, count the (ordered) pairs of distinct neighbours that are
/// joined, by looking each pair up.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let coefficient = plain_coefficients(g, cfg.semantics);
    let average = mean(&coefficient);
    Ok(Output {
        coefficient,
        average,
    })
}

/// Checks `out`: length, every value in `[0, 1]`, the average, and, when
/// `Σ d² ≤` [`VERIFY_FULL_LIMIT`], each value against the plain definition.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.coefficient.len() != n {
        return Err(VerifyError::new(format!(
            "coefficient has {} entries for {n} vertices",
            out.coefficient.len()
        )));
    }
    if let Some(v) = out
        .coefficient
        .iter()
        .position(|c| !(0.0..=1.0).contains(c))
    {
        return Err(VerifyError::new(format!(
            "vertex {v} has coefficient {}, outside [0, 1]",
            out.coefficient[v]
        )));
    }
    let avg = mean(&out.coefficient);
    if (avg - out.average).abs() > VERIFY_TOLERANCE {
        return Err(VerifyError::new(format!(
            "average is {} but the coefficients average {avg}",
            out.average
        )));
    }
    let sq: u64 = (0..n as VertexId)
        .map(|v| {
            let d = (g.out_degree(v) + g.in_degree(v)) as u64;
            d * d
        })
        .sum();
    if sq > VERIFY_FULL_LIMIT {
        return Ok(());
    }
    let want = plain_coefficients(g, cfg.semantics);
    for (v, (&got, &w)) in out.coefficient.iter().zip(&want).enumerate() {
        if (got - w).abs() > VERIFY_TOLERANCE {
            return Err(VerifyError::new(format!(
                "vertex {v} has coefficient {got}, but its neighbourhood gives {w}"
            )));
        }
    }
    Ok(())
}

/// `closed / (d·(d − 1))`, 0 when `d < 2`.
fn ratio(closed: u64, d: u64) -> f64 {
    if d < 2 {
        0.0
    } else {
        closed as f64 / (d * (d - 1)) as f64
    }
}

/// Mean of `xs`, summed in fixed blocks so the result does not depend on the
/// thread count; 0 for an empty slice.
fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let partial: Vec<f64> = xs.par_chunks(4096).map(|c| c.iter().sum::<f64>()).collect();
    partial.iter().sum::<f64>() / xs.len() as f64
}

/// The plain definition, vertex by vertex, with binary searches into sorted
/// neighbour lists.
fn plain_coefficients(g: &Graph, semantics: Semantics) -> Vec<f64> {
    let nbrs = plain_lists(g);
    // `joined(u, w)`: the number of ordered pairs among (u, w), (w, u) that
    // count. NetworkX: an undirected edge counts for both orders.
    let joined = |u: VertexId, w: VertexId| -> u64 {
        match semantics {
            Semantics::NetworkX => 2 * u64::from(nbrs[u as usize].binary_search(&w).is_ok()),
            Semantics::Graphalytics => {
                u64::from(g.out_neighbors(u).binary_search(&w).is_ok())
                    + u64::from(g.out_neighbors(w).binary_search(&u).is_ok())
            }
        }
    };
    nbrs.iter()
        .map(|nb| {
            let mut closed = 0u64;
            for (i, &u) in nb.iter().enumerate() {
                for &w in &nb[i + 1..] {
                    closed += joined(u, w);
                }
            }
            ratio(closed, nb.len() as u64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::with_threads;
    use proptest::prelude::*;

    const NX: Config = Config {
        semantics: Semantics::NetworkX,
    };
    const GA: Config = Config {
        semantics: Semantics::Graphalytics,
    };

    #[test]
    fn a_triangle_with_a_tail_matches_networkx() {
        // networkx: clustering(G) = {0: 1.0, 1: 1.0, 2: 1/3, 3: 0.0}.
        let g = graph(4, &[(0, 1), (1, 2), (2, 0), (2, 3)], false);
        let out = run(&g, &NX).unwrap();
        assert_eq!(out.coefficient[..2], [1.0, 1.0]);
        assert!((out.coefficient[2] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(out.coefficient[3], 0.0);
        assert!((out.average - (2.0 + 1.0 / 3.0) / 4.0).abs() < 1e-12);
        assert_eq!(run(&g, &GA).unwrap(), out);
        verify(&g, &NX, &out).unwrap();
    }

    #[test]
    fn graphalytics_counts_arcs_among_neighbours() {
        // N(0) = {1, 2}; arcs 1 -> 2 only: 1 / (2 · 1) = 0.5.
        // NetworkX view: 1 and 2 are adjacent, so 1.0.
        let g = graph(3, &[(0, 1), (2, 0), (1, 2)], true);
        assert_eq!(run(&g, &GA).unwrap().coefficient, vec![0.5, 0.5, 0.5]);
        assert_eq!(run(&g, &NX).unwrap().coefficient, vec![1.0, 1.0, 1.0]);
        // Both arcs between 1 and 2 make it 1.0.
        let g = graph(3, &[(0, 1), (2, 0), (1, 2), (2, 1), (1, 2), (0, 0)], true);
        assert_eq!(run(&g, &GA).unwrap().coefficient[0], 1.0);
    }

    #[test]
    fn the_empty_graph_averages_zero() {
        let g = graph(0, &[], true);
        let out = run(&g, &GA).unwrap();
        assert_eq!(out.average, 0.0);
        verify(&g, &GA, &out).unwrap();
    }

    #[test]
    fn verifier_rejects_wrong_values() {
        let g = graph(4, &[(0, 1), (1, 2), (2, 0), (2, 3)], false);
        let mut out = run(&g, &NX).unwrap();
        out.coefficient[3] = 1.5;
        let err = verify(&g, &NX, &out).unwrap_err();
        assert!(err.0.contains("vertex 3"), "{err}");
        out.coefficient[3] = 0.5;
        out.average = mean(&out.coefficient);
        let err = verify(&g, &NX, &out).unwrap_err();
        assert!(err.0.contains("vertex 3"), "{err}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn run_matches_reference_at_any_thread_count(spec in graphs(), ga in any::<bool>()) {
            let g = spec.build();
            let cfg = if ga { GA } else { NX };
            let want = reference(&g, &cfg).unwrap();
            for t in THREADS {
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                for (v, (a, b)) in got.coefficient.iter().zip(&want.coefficient).enumerate() {
                    prop_assert!((a - b).abs() < 1e-12, "vertex {} {} vs {}", v, a, b);
                }
                prop_assert!((got.average - want.average).abs() < 1e-12);
                prop_assert!(verify(&g, &cfg, &got).is_ok());
            }
        }
    }
}
