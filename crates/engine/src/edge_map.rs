//! The push/pull edge-map (Ligra, Shun & Blelloch, PPoPP'13) over the chunk
//! table (Gemini, Zhu et al., OSDI'16, §4.1 and §5.2).
//!
//! [`edge_map`] applies an [`EdgeFunctor`] to the edges leaving a frontier
//! and returns the set of vertices for which an update returned `true`:
//!
//! * **push** (sparse): every active vertex `u` walks its out-edges `u → v`;
//!   for each `v` with `cond(v)`, `update_atomic(u, v, w)` runs (concurrently
//!   with other threads, so it must use atomics) and `v` joins the output when
//!   it returns `true`. Output ids are collected per thread and concatenated;
//!   `update_atomic` must return `true` at most once per `v` per call (for
//!   example by a compare-and-swap) or the output holds duplicates.
//! * **pull** (dense): every vertex `v` with `cond(v)` walks its in-edges
//!   `u → v` from active `u` and calls `update(u, v, w)`; one thread owns `v`,
//!   so `update` needs no atomics. The scan stops as soon as `cond(v)` turns
//!   false (the direction-optimising BFS trick of Beamer et al., SC'12).
//!
//! The direction is decided in one place, [`decide`]: pull when the active
//! vertices plus their out-edges exceed a threshold, `|E| / 20` by default
//! ([`DEFAULT_THRESHOLD_DIVISOR`], Ligra's and Gemini's choice), overridable
//! per call through [`EdgeMapOptions`].
//!
//! Work division: pull iterates the graph's chunk table, each chunk cut into
//! 64-vertex mini-chunks (one bitmap word each) that rayon's work stealing
//! balances, as Gemini's mini-chunk stealing does; push splits the frontier
//! list into blocks, and the out-edges of a very high-degree vertex into
//! edge blocks, so one hub does not serialise a step.
//!
//! Unweighted graphs pass weight `1.0` to every update.
use plexus_graph::{Adjacency, Graph, VertexId, Weight};
use rayon::prelude::*;

use crate::subset::{bit, words_for, VertexSubset};

/// Pull when `active vertices + their out-edges > num_arcs / DEFAULT_THRESHOLD_DIVISOR`.
pub const DEFAULT_THRESHOLD_DIVISOR: u64 = 20;
/// Vertices per mini-chunk in pull mode (Gemini's default; one bitmap word).
pub const MINI_CHUNK: usize = 64;
/// Frontier vertices per push task (rayon may split no finer than this).
pub const PUSH_GRAIN: usize = 64;
/// Most vertices one rayon task of a pass over vertices may hold, where a
/// vertex's work grows with its degree. Rayon's adaptive splitting stops
/// at about a quarter of the range per task on two threads, and a graph
/// stored in degree order holds most of its edges in the first quarter of
/// its ids: PageRank on Kronecker scale 22 in degree order kept 1.07 of 2
/// CPUs busy. Passes cap their tasks at this many vertices so that an idle
/// thread always finds one to steal; the cap costs nothing measurable.
pub const STEAL_GRAIN: usize = 1024;
/// Out-degree above which a vertex's edges are split into parallel blocks in push mode.
pub const HEAVY_DEGREE: usize = 1 << 14;
/// Edges per block when a heavy vertex is split.
const HEAVY_BLOCK: usize = 1 << 12;

/// Which way to traverse edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Decide by the threshold rule (see [`decide`]).
    #[default]
    Auto,
    /// Always push along out-edges from a sparse frontier.
    Push,
    /// Always pull along in-edges into every vertex.
    Pull,
}

/// The traversal actually used by one edge-map call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Push from a sparse frontier along out-edges.
    Sparse,
    /// Pull into every vertex along in-edges, frontier as a bitmap.
    Dense,
}

/// Per-call options of [`edge_map`] (and of the program executors).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeMapOptions {
    /// Push, pull, or decide by the threshold.
    pub direction: Direction,
    /// Pull when active vertices + their out-edges exceed this; `None` means
    /// `num_arcs / DEFAULT_THRESHOLD_DIVISOR`.
    pub threshold: Option<u64>,
    /// Treat every arc as two-way: push along out- *and* in-edges, pull from
    /// in- *and* out-edges (used by WCC on directed graphs). Ignored for
    /// undirected graphs, whose out-edges already go both ways.
    pub symmetric: bool,
    /// Traverse every arc backwards: push along in-edges, pull over
    /// out-edges (Brandes's backward phase, SCC's backward search). Ignored
    /// for undirected graphs; `symmetric` covers both directions already.
    pub reverse: bool,
}

/// Ligra's edge functor.
pub trait EdgeFunctor: Sync {
    /// Pull-mode update of `dst` from active `src` over an edge of weight `w`;
    /// only one thread touches `dst` at a time. Returns whether `dst` joins
    /// the output.
    fn update(&self, src: VertexId, dst: VertexId, w: Weight) -> bool;
    /// Push-mode update, concurrent with others on the same `dst`. Returns
    /// whether `dst` joins the output; must return `true` at most once per
    /// `dst` in one call.
    fn update_atomic(&self, src: VertexId, dst: VertexId, w: Weight) -> bool;
    /// Whether `dst` still wants updates. Default: always.
    fn cond(&self, _dst: VertexId) -> bool {
        true
    }
}

/// The threshold the default rule compares against for `g`.
pub fn default_threshold(g: &Graph) -> u64 {
    g.num_arcs() / DEFAULT_THRESHOLD_DIVISOR
}

/// Chooses push or pull for `frontier` (Ligra's rule): pull when
/// `|frontier| + Σ out-degree(frontier) > threshold`. For symmetric
/// traversal of a directed graph the in-degrees count too.
pub fn decide(g: &Graph, frontier: &VertexSubset, opts: &EdgeMapOptions) -> Mode {
    match opts.direction {
        Direction::Push => Mode::Sparse,
        Direction::Pull => Mode::Dense,
        Direction::Auto => {
            if frontier.is_empty() {
                return Mode::Sparse;
            }
            let threshold = opts.threshold.unwrap_or_else(|| default_threshold(g));
            let mut work = frontier.len() as u64 + frontier.out_degree_sum(g);
            if opts.symmetric && g.is_directed() {
                work += in_degree_sum(g, frontier);
            }
            if work > threshold {
                Mode::Dense
            } else {
                Mode::Sparse
            }
        }
    }
}

fn in_degree_sum(g: &Graph, s: &VertexSubset) -> u64 {
    let inc = g.inc();
    let ids: Vec<VertexId> = s.iter().collect();
    ids.par_iter()
        .with_min_len(1024)
        .map(|&v| inc.degree(v) as u64)
        .sum()
}

/// Applies `f` to the edges leaving `frontier` and returns the vertices an
/// update reported, pushing or pulling as [`decide`] says.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use plexus_engine::edge_map::{edge_map, EdgeFunctor, EdgeMapOptions};
/// use plexus_engine::subset::VertexSubset;
/// use plexus_graph::{BuildOptions, Graph};
///
/// // One BFS step: claim unvisited out-neighbours of the frontier.
/// struct Visit(Vec<AtomicU32>);
/// impl EdgeFunctor for Visit {
///     fn update(&self, s: u32, d: u32, _w: f64) -> bool {
///         self.0[d as usize].store(s, Ordering::Relaxed);
///         true
///     }
///     fn update_atomic(&self, s: u32, d: u32, _w: f64) -> bool {
///         self.0[d as usize].compare_exchange(u32::MAX, s, Ordering::Relaxed, Ordering::Relaxed).is_ok()
///     }
///     fn cond(&self, d: u32) -> bool {
///         self.0[d as usize].load(Ordering::Relaxed) == u32::MAX
///     }
/// }
/// let g = Graph::from_edges(4, &[(0, 1), (0, 2), (2, 3)], &BuildOptions::directed()).unwrap();
/// let parent = Visit((0..4).map(|v| AtomicU32::new(if v == 0 { 0 } else { u32::MAX })).collect());
/// let next = edge_map(&g, &VertexSubset::from_vertex(4, 0), &parent, &EdgeMapOptions::default());
/// assert_eq!(next.to_sorted_vec(), vec![1, 2]);
/// ```
pub fn edge_map<F: EdgeFunctor>(
    g: &Graph,
    frontier: &VertexSubset,
    f: &F,
    opts: &EdgeMapOptions,
) -> VertexSubset {
    if opts.reverse && g.is_directed() && !opts.symmetric {
        let forward = EdgeMapOptions {
            reverse: false,
            ..*opts
        };
        return edge_map(&g.reversed(), frontier, f, &forward);
    }
    let n = g.num_vertices();
    let symmetric = opts.symmetric && g.is_directed();
    match decide(g, frontier, opts) {
        Mode::Sparse => {
            let sparse;
            let ids = match frontier.as_sparse() {
                Some(ids) => ids,
                None => {
                    sparse = frontier.to_sparse();
                    sparse.as_sparse().unwrap_or(&[])
                }
            };
            let out = push_frontier(
                g,
                ids,
                symmetric,
                |_u| Some(()),
                |_m: &(), u, v, w| f.cond(v) && f.update_atomic(u, v, w),
            );
            VertexSubset::from_distinct_ids(n, out)
        }
        Mode::Dense => {
            let dense;
            let words = match frontier.as_bitmap() {
                Some(w) => w,
                None => {
                    dense = frontier.to_dense();
                    dense.as_bitmap().unwrap_or(&[])
                }
            };
            pull_vertices(g, |v| {
                if !f.cond(v) {
                    return false;
                }
                let mut hit = pull_scan(g.inc(), v, words, f);
                if symmetric && f.cond(v) {
                    hit |= pull_scan(g.out(), v, words, f);
                }
                hit
            })
        }
    }
}

/// Pull-mode scan of one adjacency list of `v` for [`edge_map`].
#[inline]
fn pull_scan<F: EdgeFunctor>(adj: &Adjacency, v: VertexId, active: &[u64], f: &F) -> bool {
    let nb = adj.neighbors(v);
    let ws = adj.weights(v);
    let mut hit = false;
    for (i, &u) in nb.iter().enumerate() {
        if bit(active, u) {
            let w = ws.map_or(1.0, |ws| ws[i]);
            if f.update(u, v, w) {
                hit = true;
            }
            if !f.cond(v) {
                break;
            }
        }
    }
    hit
}

/// Runs `f(v)` for every vertex, dividing the work by the chunk table into
/// 64-vertex mini-chunks, and returns the vertices for which it returned
/// `true` as a dense subset. `f(v)` runs exactly once per vertex, on one
/// thread, so it may write `v`'s state without atomics.
pub fn pull_vertices(g: &Graph, f: impl Fn(VertexId) -> bool + Sync) -> VertexSubset {
    let n = g.num_vertices();
    let mut words = vec![0u64; words_for(n)];
    let count = for_each_word(g, &mut words, |lo, hi| {
        let mut x = 0u64;
        for v in lo..hi {
            if f(v as VertexId) {
                x |= 1 << (v - lo);
            }
        }
        x
    });
    VertexSubset::from_bitmap_counted(n, words, count)
}

/// Fills `words[i]` with `word(64·i, min(64·i + 64, n))` for every word,
/// chunk by chunk (chunks are split into disjoint word ranges, as chunk
/// starts are multiples of 64), and returns the total number of set bits.
pub(crate) fn for_each_word(
    g: &Graph,
    words: &mut [u64],
    word: impl Fn(usize, usize) -> u64 + Sync,
) -> usize {
    let n = g.num_vertices();
    let chunks = g.chunks();
    let aligned = chunks.iter().all(|c| c.start % MINI_CHUNK as u64 == 0)
        && chunks.first().is_some_and(|c| c.start == 0)
        && chunks.last().is_some_and(|c| c.end as usize == n);
    // Vertex ranges, one per chunk (or one for the whole graph when the
    // chunk table does not have the documented shape).
    let ranges: Vec<(usize, usize)> = if aligned {
        chunks
            .iter()
            .map(|c| (c.start as usize, c.end as usize))
            .collect()
    } else {
        vec![(0, n)]
    };
    let mut parts = Vec::with_capacity(ranges.len());
    let mut rest: &mut [u64] = words;
    for &(lo, hi) in &ranges {
        let nw = words_for(hi) - lo / MINI_CHUNK;
        let (head, tail) = rest.split_at_mut(nw.min(rest.len()));
        parts.push((lo, hi, head));
        rest = tail;
    }
    let word = &word;
    parts
        .into_par_iter()
        .map(|(lo, hi, ws)| {
            ws.par_iter_mut()
                .enumerate()
                .map(|(j, w)| {
                    let a = lo + j * MINI_CHUNK;
                    let b = (a + MINI_CHUNK).min(hi);
                    *w = word(a, b);
                    w.count_ones() as usize
                })
                .sum::<usize>()
        })
        .sum()
}

/// Push-mode skeleton: for each `u` of `frontier`, `signal(u)` makes a
/// message (or `None` to stay silent) and `edge(&msg, u, v, w)` runs for
/// every out-edge `u → v` (and in-edge `v → u` when `symmetric`); the
/// returned list holds each `v` for which `edge` returned `true`, collected
/// per task and concatenated.
pub(crate) fn push_frontier<M, S, E>(
    g: &Graph,
    frontier: &[VertexId],
    symmetric: bool,
    signal: S,
    edge: E,
) -> Vec<VertexId>
where
    M: Send + Sync,
    S: Fn(VertexId) -> Option<M> + Sync,
    E: Fn(&M, VertexId, VertexId, Weight) -> bool + Sync,
{
    let out = g.out();
    let inc = g.inc();
    let heavy =
        |u: VertexId| out.degree(u) + if symmetric { inc.degree(u) } else { 0 } > HEAVY_DEGREE;
    let parts: Vec<Vec<VertexId>> = frontier
        .par_iter()
        .with_min_len(PUSH_GRAIN)
        .fold(Vec::new, |mut acc, &u| {
            if !heavy(u) {
                if let Some(m) = signal(u) {
                    push_list(out, u, 0..out.degree(u), &m, &edge, &mut acc);
                    if symmetric {
                        push_list(inc, u, 0..inc.degree(u), &m, &edge, &mut acc);
                    }
                }
            }
            acc
        })
        .collect();
    let mut parts = parts;
    // High-degree vertices: split their edge lists into blocks.
    for &u in frontier.iter().filter(|&&u| heavy(u)) {
        let Some(m) = signal(u) else { continue };
        let mut lists = vec![out];
        if symmetric {
            lists.push(inc);
        }
        for adj in lists {
            let d = adj.degree(u);
            let blocks: Vec<Vec<VertexId>> = (0..d.div_ceil(HEAVY_BLOCK))
                .into_par_iter()
                .map(|b| {
                    let mut acc = Vec::new();
                    let r = b * HEAVY_BLOCK..((b + 1) * HEAVY_BLOCK).min(d);
                    push_list(adj, u, r, &m, &edge, &mut acc);
                    acc
                })
                .collect();
            parts.extend(blocks);
        }
    }
    concat(parts)
}

#[inline]
fn push_list<M, E>(
    adj: &Adjacency,
    u: VertexId,
    r: std::ops::Range<usize>,
    m: &M,
    edge: &E,
    acc: &mut Vec<VertexId>,
) where
    E: Fn(&M, VertexId, VertexId, Weight) -> bool,
{
    let nb = &adj.neighbors(u)[r.clone()];
    match adj.weights(u) {
        Some(ws) => {
            for (&v, &w) in nb.iter().zip(&ws[r]) {
                if edge(m, u, v, w) {
                    acc.push(v);
                }
            }
        }
        None => {
            for &v in nb {
                if edge(m, u, v, 1.0) {
                    acc.push(v);
                }
            }
        }
    }
}

/// Concatenates per-task vectors, copying in parallel.
pub(crate) fn concat(parts: Vec<Vec<VertexId>>) -> Vec<VertexId> {
    let total: usize = parts.iter().map(Vec::len).sum();
    if parts.len() == 1 {
        return parts.into_iter().next().unwrap_or_default();
    }
    let mut out = vec![0 as VertexId; total];
    let mut slices = Vec::with_capacity(parts.len());
    let mut rest: &mut [VertexId] = &mut out;
    for p in &parts {
        let (head, tail) = rest.split_at_mut(p.len());
        slices.push(head);
        rest = tail;
    }
    slices
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|(dst, src)| dst.copy_from_slice(src));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_graph::BuildOptions;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Claims unvisited vertices (a BFS step).
    struct Visit(Vec<AtomicU32>);
    impl EdgeFunctor for Visit {
        fn update(&self, s: VertexId, d: VertexId, _w: Weight) -> bool {
            self.0[d as usize].store(s, Ordering::Relaxed);
            true
        }
        fn update_atomic(&self, s: VertexId, d: VertexId, _w: Weight) -> bool {
            self.0[d as usize]
                .compare_exchange(u32::MAX, s, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        }
        fn cond(&self, d: VertexId) -> bool {
            self.0[d as usize].load(Ordering::Relaxed) == u32::MAX
        }
    }

    fn star_plus_path(n: u32) -> Graph {
        // A hub 0 with edges to every vertex, plus a path 1 → 2 → ... .
        let mut e: Vec<(u32, u32)> = (1..n).map(|v| (0, v)).collect();
        e.extend((1..n - 1).map(|v| (v, v + 1)));
        Graph::from_edges(n as usize, &e, &BuildOptions::directed()).unwrap()
    }

    fn bfs_levels(g: &Graph, direction: Direction) -> Vec<usize> {
        let n = g.num_vertices();
        let vis = Visit(
            (0..n)
                .map(|v| AtomicU32::new(if v == 0 { 0 } else { u32::MAX }))
                .collect(),
        );
        let mut f = VertexSubset::from_vertex(n, 0);
        let mut sizes = vec![];
        while !f.is_empty() {
            sizes.push(f.len());
            f = edge_map(
                g,
                &f,
                &vis,
                &EdgeMapOptions {
                    direction,
                    ..Default::default()
                },
            );
        }
        sizes
    }

    #[test]
    fn push_and_pull_give_the_same_levels_including_a_heavy_vertex() {
        let g = star_plus_path(HEAVY_DEGREE as u32 + 100);
        let push = bfs_levels(&g, Direction::Push);
        let pull = bfs_levels(&g, Direction::Pull);
        let auto = bfs_levels(&g, Direction::Auto);
        assert_eq!(push, vec![1, HEAVY_DEGREE + 99]);
        assert_eq!(push, pull);
        assert_eq!(push, auto);
    }

    #[test]
    fn decide_switches_to_pull_above_the_threshold() {
        let g = star_plus_path(100);
        let opts = EdgeMapOptions::default();
        assert_eq!(
            decide(&g, &VertexSubset::from_vertex(100, 50), &opts),
            Mode::Sparse
        );
        assert_eq!(
            decide(&g, &VertexSubset::from_vertex(100, 0), &opts),
            Mode::Dense
        );
        let high = EdgeMapOptions {
            threshold: Some(1000),
            ..opts
        };
        assert_eq!(
            decide(&g, &VertexSubset::from_vertex(100, 0), &high),
            Mode::Sparse
        );
    }

    #[test]
    fn symmetric_traversal_follows_in_edges_too() {
        let g = Graph::from_edges(3, &[(1, 0), (2, 1)], &BuildOptions::directed()).unwrap();
        let vis = Visit(
            (0..3)
                .map(|v| AtomicU32::new(if v == 0 { 0 } else { u32::MAX }))
                .collect(),
        );
        for direction in [Direction::Push, Direction::Pull] {
            for v in 1..3 {
                vis.0[v].store(u32::MAX, Ordering::Relaxed);
            }
            let opts = EdgeMapOptions {
                direction,
                symmetric: true,
                ..Default::default()
            };
            let next = edge_map(&g, &VertexSubset::from_vertex(3, 0), &vis, &opts);
            assert_eq!(next.to_sorted_vec(), vec![1]);
        }
    }

    #[test]
    fn concat_keeps_order_of_parts() {
        assert_eq!(concat(vec![vec![1, 2], vec![], vec![3]]), vec![1, 2, 3]);
        assert_eq!(concat(vec![]), Vec::<u32>::new());
    }
}
