//! Greedy graph colouring.
//!
//! **Returns** [`Output`]: `color[v]` in `0..num_colors` such that no two
//! adjacent vertices share a colour; `num_colors` is the number of colours
//! used (0 for the empty graph). The colouring is *greedy* (Grundy): a vertex
//! of colour `c` has a neighbour of every colour below `c`.
//!
//! **Input.** Coloured on the *undirected simple view* of any graph (distinct
//! in- and out-neighbours other than `v`): direction and duplicate edges are
//! ignored, and self-loops are ignored (a vertex with a loop is coloured as if
//! it had none; no proper colouring could honour a loop). Isolated vertices
//! get colour 0. Weights are ignored.
//!
//! **Method.** Jones & Plassmann, "A parallel graph coloring heuristic"
//! (SIAM J. Sci. Comput. 1993): every vertex gets a pseudo-random priority
//! derived from [`Config::seed`] and its internal id (ties broken by id); a
//! vertex is coloured, with the smallest colour its already coloured
//! neighbours do not use, once all its higher-priority neighbours are
//! coloured. Each round colours an independent set in parallel. The result
//! equals sequential greedy colouring in decreasing priority order, so it
//! depends on the seed (and the internal numbering), never on the thread
//! count. Expected rounds `O(log n / log log n)` on bounded-degree graphs.
//!
//! **Executor fit.** Fits the vertex-program form: a sparse signal from the
//! newly coloured frontier decrements the pending counters of lower-priority
//! neighbours, and a vertex whose counter reaches 0 joins the next frontier.

use std::sync::atomic::{AtomicU32, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::triangles::{plain_lists, SimpleView};
use crate::error::{AlgoError, VerifyError};

/// Default seed of the priorities.
pub const DEFAULT_SEED: u64 = 0x5EED_C010_4EED;

/// Colour of a vertex not (yet) coloured; never present in a finished output.
pub const UNCOLORED: u32 = u32::MAX;

/// Parameters of the colouring.
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

/// A colouring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Colour of each vertex, in `0..num_colors`, indexed by internal id.
    pub color: Vec<u32>,
    /// Number of colours used (`max color + 1`, 0 for the empty graph).
    pub num_colors: u32,
}

/// The pseudo-random priority of vertex `v` under `seed` (SplitMix64 of the
/// seed and the id). Compare `(priority(seed, v), v)` for a strict order.
pub(crate) fn priority(seed: u64, v: VertexId) -> u64 {
    let mut z = seed ^ (u64::from(v).wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Smallest colour not in `used` (colours of some neighbours); `scratch`
/// is a reusable buffer.
fn smallest_free(used: impl Iterator<Item = u32>, degree: usize, scratch: &mut Vec<bool>) -> u32 {
    // A vertex of degree d always finds a free colour in 0..=d.
    scratch.clear();
    scratch.resize(degree + 1, false);
    for c in used {
        if (c as usize) <= degree {
            scratch[c as usize] = true;
        }
    }
    scratch.iter().position(|&t| !t).unwrap_or(degree) as u32
}

/// Colours the graph in parallel (Jones–Plassmann).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let view = SimpleView::new(g);
    let n = g.num_vertices();
    let key = |v: VertexId| (priority(cfg.seed, v), v);
    let pending: Vec<AtomicU32> = (0..n as VertexId)
        .into_par_iter()
        .map(|v| {
            let kv = key(v);
            AtomicU32::new(view.neighbors(v).iter().filter(|&&u| key(u) > kv).count() as u32)
        })
        .collect();
    let color: Vec<AtomicU32> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU32::new(UNCOLORED))
        .collect();
    let mut frontier: Vec<VertexId> = (0..n as VertexId)
        .into_par_iter()
        .filter(|&v| pending[v as usize].load(Ordering::Relaxed) == 0)
        .collect();
    while !frontier.is_empty() {
        // The frontier is independent (of two adjacent vertices, the lower
        // one waits for the higher), and all higher-priority neighbours of
        // its vertices were coloured in earlier rounds.
        frontier.par_iter().for_each_init(Vec::new, |scratch, &v| {
            let nb = view.neighbors(v);
            let used = nb
                .iter()
                .map(|&u| color[u as usize].load(Ordering::Relaxed));
            let c = smallest_free(used, nb.len(), scratch);
            color[v as usize].store(c, Ordering::Relaxed);
        });
        frontier = frontier
            .par_iter()
            .with_max_len(64)
            .flat_map_iter(|&v| {
                let kv = key(v);
                let pending = &pending;
                view.neighbors(v).iter().copied().filter(move |&u| {
                    key(u) < kv && pending[u as usize].fetch_sub(1, Ordering::Relaxed) == 1
                })
            })
            .collect();
    }
    let color: Vec<u32> = color.into_iter().map(AtomicU32::into_inner).collect();
    let num_colors = color.par_iter().map(|&c| c + 1).max().unwrap_or(0);
    Ok(Output { color, num_colors })
}

/// Colours the graph sequentially: greedy in decreasing priority order.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let adj = plain_lists(g);
    let n = adj.len();
    let mut order: Vec<VertexId> = (0..n as VertexId).collect();
    order.sort_unstable_by_key(|&v| std::cmp::Reverse((priority(cfg.seed, v), v)));
    let mut color = vec![UNCOLORED; n];
    let mut scratch = Vec::new();
    for v in order {
        let nb = &adj[v as usize];
        let used = nb.iter().map(|&u| color[u as usize]);
        color[v as usize] = smallest_free(used, nb.len(), &mut scratch);
    }
    let num_colors = color.iter().map(|&c| c + 1).max().unwrap_or(0);
    Ok(Output { color, num_colors })
}

/// Checks `out` on any graph: every vertex coloured below `num_colors`,
/// `num_colors` is the number used, no edge `u–v` (`u ≠ v`) joins equal
/// colours, and every vertex of colour `c` has neighbours of all colours
/// below `c` (the greedy property). Names the vertex or edge that fails.
pub fn verify(g: &Graph, _cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.color.len() != n {
        return Err(VerifyError::new(format!(
            "color has {} entries for {n} vertices",
            out.color.len()
        )));
    }
    if let Some(v) = (0..n).find(|&v| out.color[v] >= out.num_colors) {
        return Err(VerifyError::new(format!(
            "vertex {v} has colour {} but num_colors is {}",
            out.color[v], out.num_colors
        )));
    }
    let used = out.color.iter().map(|&c| c + 1).max().unwrap_or(0);
    if used != out.num_colors {
        return Err(VerifyError::new(format!(
            "num_colors is {} but colours 0..{used} are used",
            out.num_colors
        )));
    }
    let adj = plain_lists(g);
    let mut seen = Vec::new();
    for (v, nb) in adj.iter().enumerate() {
        let c = out.color[v];
        if let Some(&u) = nb.iter().find(|&&u| out.color[u as usize] == c) {
            return Err(VerifyError::new(format!(
                "edge {v} - {u} joins two vertices of colour {c}"
            )));
        }
        seen.clear();
        seen.resize(c as usize, false);
        for &u in nb {
            if let Some(s) = seen.get_mut(out.color[u as usize] as usize) {
                *s = true;
            }
        }
        if let Some(missing) = seen.iter().position(|&s| !s) {
            return Err(VerifyError::new(format!(
                "vertex {v} has colour {c} but no neighbour of colour {missing}, so the colouring is not greedy"
            )));
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
    Err("coloring has no driver yet".into())
}

#[cfg(test)]
mod tests {
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::with_threads;
    use proptest::prelude::*;

    #[test]
    fn k4_needs_four_colours_and_isolated_vertices_get_zero() {
        let e = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
        let g = graph(5, &e, false);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.num_colors, 4);
        assert_eq!(out.color[4], 0);
        let mut c = out.color[..4].to_vec();
        c.sort_unstable();
        assert_eq!(c, vec![0, 1, 2, 3]);
        verify(&g, &Config::default(), &out).unwrap();
    }

    #[test]
    fn an_even_cycle_with_loops_and_duplicates_is_properly_coloured() {
        let g = graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 0), (1, 2)], true);
        for seed in 0..8 {
            let cfg = Config { seed };
            let out = run(&g, &cfg).unwrap();
            verify(&g, &cfg, &out).unwrap();
            assert!(out.num_colors <= 3);
            assert_eq!(out, reference(&g, &cfg).unwrap());
        }
    }

    #[test]
    fn verifier_rejects_improper_and_non_greedy_colourings() {
        let g = graph(3, &[(0, 1), (1, 2)], false);
        let cfg = Config::default();
        let bad = Output {
            color: vec![0, 0, 1],
            num_colors: 2,
        };
        let err = verify(&g, &cfg, &bad).unwrap_err();
        assert!(err.0.contains("edge 0 - 1"), "{err}");
        let lazy = Output {
            color: vec![0, 1, 2],
            num_colors: 3,
        };
        let err = verify(&g, &cfg, &lazy).unwrap_err();
        assert!(err.0.contains("vertex 2"), "{err}");
        let short = Output {
            color: vec![0, 1, 0],
            num_colors: 1,
        };
        assert!(verify(&g, &cfg, &short).is_err());
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
