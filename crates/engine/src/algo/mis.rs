//! Maximal independent set (MIS).
//!
//! **Returns** [`Output`]: `in_set[v]` says whether `v` is in the set, `size`
//! how many are. No two vertices of the set are adjacent, and every vertex
//! outside it has a neighbour inside (maximal, not maximum).
//!
//! **Input.** On the *undirected simple view* of any graph (distinct in- and
//! out-neighbours other than `v`): direction and duplicate edges are
//! ignored, and self-loops are ignored (a vertex with a loop may be in the
//! set). Isolated vertices are always in the set. Weights are ignored.
//!
//! **Method.** Luby's algorithm ("A simple parallel algorithm for the
//! maximal independent set problem", STOC 1985) with priorities fixed once
//! per run, as analysed by Blelloch, Fineman & Shun ("Greedy sequential
//! maximal independent set and matching are parallel on average", SPAA
//! 2012): every vertex gets a pseudo-random priority from [`Config::seed`]
//! and its internal id (ties by id); each round, every undecided vertex whose
//! priority beats all its undecided neighbours joins the set, and their
//! neighbours leave. The result is the greedy (lexicographically first) MIS
//! in decreasing priority order, so it depends only on the seed and the
//! internal numbering, never on the thread count. Expected `O(log n)` rounds.
//!
//! **Executor fit.** Fits the vertex-program form: a dense pull ("is any
//! undecided neighbour higher?") followed by a sparse push from the joiners
//! that marks their neighbours out.

use std::sync::atomic::{AtomicU8, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::coloring::priority;
use super::triangles::{plain_lists, SimpleView};
use crate::error::{AlgoError, VerifyError};

/// Default seed of the priorities.
pub const DEFAULT_SEED: u64 = 0x5EED_0015_4EED;

const UNDECIDED: u8 = 0;
const IN: u8 = 1;
const OUT: u8 = 2;

/// Parameters of the MIS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Seed of the vertex priorities; default [`DEFAULT_SEED`].
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { seed: DEFAULT_SEED }
    }
}

/// A maximal independent set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Membership of each vertex, indexed by internal id.
    pub in_set: Vec<bool>,
    /// Number of vertices in the set.
    pub size: usize,
}

/// Computes the MIS in parallel (Luby rounds with fixed priorities).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let view = SimpleView::new(g);
    let n = g.num_vertices();
    let key = |v: VertexId| (priority(cfg.seed, v), v);
    let state: Vec<AtomicU8> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU8::new(UNDECIDED))
        .collect();
    let mut undecided: Vec<VertexId> = (0..n as VertexId).collect();
    while !undecided.is_empty() {
        // Read-only phase: local maxima among undecided vertices.
        let joiners: Vec<VertexId> = undecided
            .par_iter()
            .copied()
            .filter(|&v| {
                let kv = key(v);
                view.neighbors(v)
                    .iter()
                    .all(|&u| state[u as usize].load(Ordering::Relaxed) != UNDECIDED || key(u) < kv)
            })
            .collect();
        joiners
            .par_iter()
            .for_each(|&v| state[v as usize].store(IN, Ordering::Relaxed));
        // Joiners are pairwise non-adjacent, so these stores never hit one.
        joiners.par_iter().with_max_len(64).for_each(|&v| {
            for &u in view.neighbors(v) {
                state[u as usize].store(OUT, Ordering::Relaxed);
            }
        });
        undecided = undecided
            .par_iter()
            .copied()
            .filter(|&v| state[v as usize].load(Ordering::Relaxed) == UNDECIDED)
            .collect();
    }
    let in_set: Vec<bool> = state
        .into_par_iter()
        .map(|s| s.into_inner() == IN)
        .collect();
    let size = in_set.par_iter().filter(|&&b| b).count();
    Ok(Output { in_set, size })
}

/// Computes the MIS sequentially: greedy in decreasing priority order.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let adj = plain_lists(g);
    let n = adj.len();
    let mut order: Vec<VertexId> = (0..n as VertexId).collect();
    order.sort_unstable_by_key(|&v| std::cmp::Reverse((priority(cfg.seed, v), v)));
    let mut in_set = vec![false; n];
    for v in order {
        if !adj[v as usize].iter().any(|&u| in_set[u as usize]) {
            in_set[v as usize] = true;
        }
    }
    let size = in_set.iter().filter(|&&b| b).count();
    Ok(Output { in_set, size })
}

/// Checks `out` on any graph: `size` matches, no edge `u–v` (`u ≠ v`) lies
/// inside the set, and every vertex outside has a neighbour inside. Names
/// the edge or vertex that fails.
pub fn verify(g: &Graph, _cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.in_set.len() != n {
        return Err(VerifyError::new(format!(
            "in_set has {} entries for {n} vertices",
            out.in_set.len()
        )));
    }
    let size = out.in_set.iter().filter(|&&b| b).count();
    if size != out.size {
        return Err(VerifyError::new(format!(
            "size is {} but {size} vertices are in the set",
            out.size
        )));
    }
    for (v, nb) in plain_lists(g).iter().enumerate() {
        let inside = nb.iter().find(|&&u| out.in_set[u as usize]);
        match (out.in_set[v], inside) {
            (true, Some(&u)) => {
                return Err(VerifyError::new(format!(
                    "edge {v} - {u} has both ends in the set"
                )))
            }
            (false, None) => {
                return Err(VerifyError::new(format!(
                "vertex {v} is outside the set and so is every neighbour: the set is not maximal"
            )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The conformance check of this algorithm's driver on `exec` (see
/// [`crate::conformance`]).
pub fn check_on<E: crate::program::Executor>(
    _g: &Graph,
    _exec: &E,
    _seed: u64,
) -> Result<(), String> {
    Err("mis has no driver yet".into())
}

#[cfg(test)]
mod tests {
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::with_threads;
    use proptest::prelude::*;

    #[test]
    fn a_star_takes_the_centre_or_all_leaves() {
        let g = graph(5, &[(0, 1), (0, 2), (0, 3), (0, 4)], false);
        for seed in 0..16 {
            let cfg = Config { seed };
            let out = run(&g, &cfg).unwrap();
            assert!(out.size == 1 && out.in_set[0] || out.size == 4 && !out.in_set[0]);
            verify(&g, &cfg, &out).unwrap();
        }
    }

    #[test]
    fn isolated_and_looped_vertices_join() {
        let g = graph(3, &[(1, 1), (1, 1)], true);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.in_set, vec![true, true, true]);
        assert_eq!(out.size, 3);
    }

    #[test]
    fn verifier_rejects_dependent_and_non_maximal_sets() {
        let g = graph(3, &[(0, 1), (1, 2)], true);
        let cfg = Config::default();
        let both = Output {
            in_set: vec![true, true, false],
            size: 2,
        };
        let err = verify(&g, &cfg, &both).unwrap_err();
        assert!(err.0.contains("edge 0 - 1"), "{err}");
        let sparse = Output {
            in_set: vec![true, false, false],
            size: 1,
        };
        let err = verify(&g, &cfg, &sparse).unwrap_err();
        assert!(err.0.contains("vertex 2"), "{err}");
        let miscounted = Output {
            in_set: vec![true, false, true],
            size: 3,
        };
        assert!(verify(&g, &cfg, &miscounted).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn run_matches_reference_at_any_thread_count(spec in graphs(), seed in any::<u64>()) {
            let g = spec.build();
            let cfg = Config { seed };
            let want = reference(&g, &cfg).unwrap();
            for t in THREADS {
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                prop_assert_eq!(&got, &want);
            }
            prop_assert!(verify(&g, &cfg, &want).is_ok());
        }
    }
}
