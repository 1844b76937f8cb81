//! Betweenness centrality (shortest-path, unweighted).
//!
//! **Returns** [`Output`]: `centrality[v]` (f64) is, over ordered pairs
//! `(s, t)` with `s` a source, `s ≠ v ≠ t`, the sum of the fractions of
//! shortest `s → t` paths that pass through `v`, rescaled *exactly* as
//! NetworkX `betweenness_centrality(G, k, normalized, endpoints=False)`
//! (its `_rescale`, networkx main at commit 00bd223, read 2026), with
//! `n = |V|`:
//! - `n < 3`: no rescaling (every value is 0 anyway).
//! - all vertices as sources: `normalized` divides by `(n−1)(n−2)`;
//!   otherwise undirected graphs are halved (each unordered pair counted once)
//!   and directed graphs are left as they are.
//! - `k < n` given sources: a source vertex is multiplied by
//!   `1/((k−1)(n−2))` (normalized) or `(n−1)/((k−1)·c)`, a non-source by
//!   `1/(k(n−2))` or `(n−1)/(k·c)`, where `c` is 2 for undirected graphs
//!   and 1 for directed ones. With `k = 1` the source's value is NaN
//!   (undefined 0/0), as in NetworkX.
//! - `k` sampled sources: drawn among the `m` vertices with out-degree > 0
//!   (as GAPBS does; a vertex without out-edges reaches nothing and adds
//!   nothing as a source), so the `n − 1` possible sources of the formulas
//!   above become the `m_v` vertices with out-edges other than `v`: a
//!   vertex is multiplied by `m_v/((k_v)(n−1)(n−2))` (normalized) or
//!   `m_v/(k_v·c)`, where `k_v` is `k − 1` for a source and `k` otherwise.
//!   Each vertex's value is then an unbiased estimate of its exact value;
//!   when every vertex has an out-edge these are NetworkX's factors.
//!
//! `sources_used` is the number of sources. Sampled sources are drawn
//! uniformly without replacement among the vertices with out-degree > 0 by
//! a seeded Xoshiro256++ (see [`pick_sources`]), so they differ from
//! NetworkX's (every vertex) and GAPBS's (`SourcePicker`: the same set,
//! with replacement, its own generator) for the same seed. `k` of at least
//! `m` counts as exact: every vertex that can add anything is a source.
//!
//! **Input.** Any graph; paths follow out-edges and count hops (weights are
//! ignored). Duplicate edges count once (NetworkX `Graph`/`DiGraph`
//! semantics) and self-loops never lie on a shortest path. Unreachable
//! pairs contribute nothing; isolated vertices score 0.
//!
//! **Method.** Brandes, "A faster algorithm for betweenness centrality"
//! (J. Math. Sociol. 2001): a BFS per source counting shortest paths
//! (`σ`), then dependencies accumulated in reverse BFS order, here in the
//! successor (pull) form used by GAPBS `bc.cc`, so no predecessor lists are
//! stored: the forward BFS marks each successor edge in a bitmap over the
//! CSR's edge positions (`|E|/8` bytes per worker), and the backward pass
//! reads only those edges instead of every neighbour's depth; both passes
//! prefetch the depths and paths of the edges ahead and the lists of the
//! vertices ahead in BFS order. Sources are processed in
//! parallel, each worker with its own BFS arrays; partial sums are combined
//! along a tree fixed by the source list alone, so the result is
//! bit-identical at any thread count.
//! `O(k·m)` work.
//!
//! **Executor fit.** [`BetweennessDriver`] runs betweenness on every
//! executor: Brandes as Gemini does it, per source a forward phase (BFS
//! levels counting shortest paths, one superstep per level, `σ` summed)
//! and a backward phase (levels from the deepest up along reversed arcs,
//! dependencies summed at predecessors), as the vertex program [`Brandes`].
//! [`run`] is the in-memory specialisation (sources in parallel, successor
//! bitmaps) and must agree with the driver within [`DRIVER_BOUND`]; the
//! conformance harness holds both to it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use plexus_graph::{Graph, VertexId};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::driver::{drive, Driver};
use crate::error::{AlgoError, VerifyError};
use crate::program::{Executor, GraphView, InEdges, StepOptions, VertexProgram, Vertices};
use crate::subset::VertexSubset;

/// Default of [`Config::normalized`], as in NetworkX.
pub const DEFAULT_NORMALIZED: bool = true;
/// Default seed of the source sampler.
pub const DEFAULT_SEED: u64 = 0x5EED_BE77_4EED;
/// Graphs with at most this many vertices are verified by pair enumeration;
/// larger ones by the sum identity.
pub const VERIFY_PAIRS_LIMIT: usize = 200;
/// Relative tolerance of the verifier.
pub const VERIFY_TOLERANCE: f64 = 1e-9;

/// Distance of a vertex not reached (internal).
const UNREACHED: u32 = u32::MAX;

/// Parameters of betweenness centrality.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Number of sources to sample (NetworkX `k`); `None` = every vertex.
    /// Must be in `1..=|V|`; cannot be combined with `sources`.
    pub samples: Option<usize>,
    /// Seed of the sampler; default [`DEFAULT_SEED`].
    pub seed: u64,
    /// Rescale by the number of pairs (see the module docs); default
    /// [`DEFAULT_NORMALIZED`].
    pub normalized: bool,
    /// Explicit sources (distinct, non-empty), treated like a sample of
    /// `sources.len()` vertices for rescaling. `None` = use `samples`.
    pub sources: Option<Vec<VertexId>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            samples: None,
            seed: DEFAULT_SEED,
            normalized: DEFAULT_NORMALIZED,
            sources: None,
        }
    }
}

/// Betweenness centrality.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// Rescaled centrality of each vertex, indexed by internal id.
    pub centrality: Vec<f64>,
    /// Number of sources whose shortest paths were counted.
    pub sources_used: usize,
}

/// The sources `cfg` asks for, sorted ascending, or `None` when every vertex
/// is a source (no sampling, or `k` at least the number of vertices with
/// out-degree > 0). Sampled sources are `k` distinct vertices drawn
/// uniformly among those with out-degree > 0 (a partial Fisher–Yates
/// shuffle of them by a Xoshiro256++ seeded with `cfg.seed`), the set GAPBS
/// `SourcePicker` draws from. Shared by `run`, `reference` and `verify`, so
/// all three see the same sample.
pub fn pick_sources<G: GraphView + ?Sized>(
    g: &G,
    cfg: &Config,
) -> Result<Option<Vec<VertexId>>, AlgoError> {
    let n = g.num_vertices();
    let mut chosen = match (&cfg.sources, cfg.samples) {
        (Some(_), Some(_)) => {
            return Err(AlgoError::InvalidParameter(
                "give either samples or sources, not both".into(),
            ))
        }
        (None, None) => return Ok(None),
        (None, Some(k)) => {
            if k == 0 || k > n {
                return Err(AlgoError::InvalidParameter(format!(
                    "samples = {k} must be between 1 and the number of vertices ({n})"
                )));
            }
            let mut pool = with_out_edges(g);
            if k >= pool.len() {
                return Ok(None);
            }
            let m = pool.len();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
            for i in 0..k {
                let j = rng.gen_range(i..m);
                pool.swap(i, j);
            }
            pool.truncate(k);
            pool
        }
        (Some(s), None) => {
            if s.is_empty() {
                return Err(AlgoError::InvalidParameter("sources is empty".into()));
            }
            if let Some(&v) = s.iter().find(|&&v| v as usize >= n) {
                return Err(AlgoError::NoSuchVertex(u64::from(v)));
            }
            s.clone()
        }
    };
    chosen.sort_unstable();
    if let Some(w) = chosen.windows(2).find(|w| w[0] == w[1]) {
        return Err(AlgoError::InvalidParameter(format!(
            "source {} is given twice",
            w[0]
        )));
    }
    Ok(if chosen.len() == n {
        None
    } else {
        Some(chosen)
    })
}

/// The vertices with out-degree > 0, ascending: those a sample is drawn
/// from.
fn with_out_edges<G: GraphView + ?Sized>(g: &G) -> Vec<VertexId> {
    (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .filter(|&v| g.out_degree(v) > 0)
        .collect()
}

/// What rescaling needs to know about the sources: the list (when not
/// every vertex is one) and the set it was drawn from.
struct Scaling<'a> {
    sampled: Option<&'a [VertexId]>,
    /// The sources were sampled among the vertices with out-degree > 0
    /// (`Config::samples`), not given (`Config::sources`: any vertex).
    drawn_from_out_edges: bool,
    /// How many vertices the sources were drawn from.
    population: usize,
}

impl<'a> Scaling<'a> {
    fn new<G: GraphView + ?Sized>(g: &G, cfg: &Config, sampled: Option<&'a [VertexId]>) -> Self {
        let drawn_from_out_edges = sampled.is_some() && cfg.sources.is_none();
        let population = if drawn_from_out_edges {
            (0..g.num_vertices() as VertexId)
                .into_par_iter()
                .filter(|&v| g.out_degree(v) > 0)
                .count()
        } else {
            g.num_vertices()
        };
        Scaling {
            sampled,
            drawn_from_out_edges,
            population,
        }
    }
}

/// The factor vertex `v`'s raw sum is multiplied by (see the module docs):
/// NetworkX's `_rescale` for every vertex or given sources; for sampled
/// sources, the same with the possible sources other than `v` counted
/// among the vertices with out-degree > 0.
fn scale_of<G: GraphView + ?Sized>(g: &G, cfg: &Config, sc: &Scaling, v: VertexId) -> f64 {
    let n = g.num_vertices() as f64;
    if g.num_vertices() < 3 {
        return 1.0;
    }
    let c = if g.is_directed() { 1.0 } else { 2.0 };
    match sc.sampled {
        None => {
            if cfg.normalized {
                1.0 / ((n - 1.0) * (n - 2.0))
            } else {
                1.0 / c
            }
        }
        Some(s) => {
            let k = s.len() as f64;
            let is_source = s.binary_search(&v).is_ok();
            let kk = if is_source { k - 1.0 } else { k };
            let in_population = !sc.drawn_from_out_edges || g.out_degree(v) > 0;
            // Possible sources other than `v`: `n − 1` when any vertex
            // could be one.
            let others = (sc.population - usize::from(in_population)) as f64;
            if kk == 0.0 {
                f64::NAN
            } else if cfg.normalized {
                (others / (n - 1.0)) / (kk * (n - 2.0))
            } else {
                others / (kk * c)
            }
        }
    }
}

fn rescale<G: GraphView + ?Sized>(
    g: &G,
    cfg: &Config,
    sampled: Option<&[VertexId]>,
    raw: Vec<f64>,
) -> Vec<f64> {
    let sc = Scaling::new(g, cfg, sampled);
    raw.into_par_iter()
        .enumerate()
        .map(|(v, x)| x * scale_of(g, cfg, &sc, v as VertexId))
        .collect()
}

/// A vertex's shortest-path count and, once its dependency is final, its
/// coefficient; 16 bytes, so never split across cache lines.
#[derive(Clone, Copy)]
#[repr(align(16))]
struct Paths {
    /// Number of shortest paths from the source.
    sigma: f64,
    /// `(1 + δ) / σ`, set once the vertex's dependency `δ` is final: what
    /// each predecessor adds per successor edge.
    coef: f64,
}

const NO_PATHS: Paths = Paths {
    sigma: 0.0,
    coef: 0.0,
};

/// Edges ahead whose depth and paths the forward pass asks the cache for.
const PREFETCH_DISTANCE: usize = 16;

/// Positions ahead in the BFS order (forward) or behind it (backward) at
/// which a pass asks for a vertex's offsets, and at half that distance for
/// its list, its first successor word and its paths.
const LIST_AHEAD: usize = 8;

/// Asks the cache for what visiting `order[near]` reads first (its list,
/// its first word of successor bits, its paths; its offsets were asked for
/// [`LIST_AHEAD`] vertices earlier) and for the offsets of `order[far]`.
/// Positions out of range are skipped.
#[inline(always)]
fn prefetch_vertices(
    g: &Graph,
    order: &[VertexId],
    near: usize,
    far: usize,
    succ: &[u64],
    paths: &[Paths],
) {
    use crate::prefetch::prefetch;
    let out = g.out();
    if let Some(&u) = order.get(far) {
        prefetch(out.offsets(), u as usize);
    }
    if let Some(&u) = order.get(near) {
        let lo = out.offsets()[u as usize] as usize;
        prefetch(out.neighbor_array(), lo);
        prefetch(succ, lo / 64);
        prefetch(paths, u as usize);
    }
}

/// Per-worker BFS state, reset after each source in time proportional to
/// the vertices and edges it reached.
struct Scratch {
    /// Hops from the source; [`UNREACHED`] when not (yet) reached. Apart
    /// from the paths because every edge of the BFS reads it (4 bytes per
    /// vertex: kron22's 9.6 MB, against 38 MB of paths).
    dist: Vec<u32>,
    paths: Vec<Paths>,
    /// Bit `i` is set when out-edge `i` (its CSR position) is a successor
    /// edge of the current source's BFS: from depth `ℓ` to `ℓ + 1`, the
    /// first copy of a duplicated edge. The backward pass reads only these
    /// edges (as GAPBS `bc.cc` does), not every neighbour's depth.
    succ: Vec<u64>,
    order: Vec<VertexId>,
}

impl Scratch {
    fn new(g: &Graph) -> Self {
        let n = g.num_vertices();
        Scratch {
            // Read in the random order of neighbour lists: on huge pages.
            dist: crate::hugepages::filled(n, UNREACHED),
            paths: crate::hugepages::filled(n, NO_PATHS),
            succ: crate::hugepages::filled((g.num_arcs() as usize).div_ceil(64), 0u64),
            order: Vec::new(),
        }
    }

    /// Adds the dependencies of source `s` to `bc` (Brandes, successor form).
    fn accumulate(&mut self, g: &Graph, s: VertexId, bc: &mut [f64]) {
        let Scratch {
            dist,
            paths,
            succ,
            order,
        } = self;
        order.clear();
        dist[s as usize] = 0;
        paths[s as usize].sigma = 1.0;
        order.push(s);
        let mut head = 0;
        while head < order.len() {
            let v = order[head];
            prefetch_vertices(
                g,
                order,
                head + LIST_AHEAD,
                head + 2 * LIST_AHEAD,
                succ,
                paths,
            );
            head += 1;
            let next = dist[v as usize] + 1;
            let sv = paths[v as usize].sigma;
            let base = g.out().range(v).start;
            let mut prev = None;
            let targets = g.out_neighbors(v);
            for (j, &w) in targets.iter().enumerate() {
                if let Some(&ahead) = targets.get(j + PREFETCH_DISTANCE) {
                    crate::prefetch::prefetch(dist, ahead as usize);
                    crate::prefetch::prefetch(paths, ahead as usize);
                }
                if prev == Some(w) {
                    continue;
                }
                prev = Some(w);
                let dw = &mut dist[w as usize];
                if *dw == UNREACHED {
                    *dw = next;
                    order.push(w);
                } else if *dw != next {
                    continue;
                }
                paths[w as usize].sigma += sv;
                let i = base + j;
                succ[i / 64] |= 1 << (i % 64);
            }
        }
        for (p, &v) in order.iter().enumerate().rev() {
            if p >= 2 * LIST_AHEAD {
                prefetch_vertices(g, order, p - LIST_AHEAD, p - 2 * LIST_AHEAD, succ, paths);
            }
            let range = g.out().range(v);
            let targets = g.out_neighbors(v);
            let mut dep = 0.0;
            // In edge order, the order of the sums: results do not depend
            // on the bitmap.
            for_each_set_bit(succ, range.clone(), |i| {
                dep += paths[targets[i - range.start] as usize].coef;
            });
            let pv = &mut paths[v as usize];
            let delta = pv.sigma * dep;
            pv.coef = (1.0 + delta) / pv.sigma;
            if v != s {
                bc[v as usize] += delta;
            }
        }
        for &v in order.iter() {
            dist[v as usize] = UNREACHED;
            paths[v as usize] = NO_PATHS;
            let range = g.out().range(v);
            if !range.is_empty() {
                // Whole words: bits of other vertices' lists in them belong
                // to this source too, and are cleared as well.
                succ[range.start / 64..=(range.end - 1) / 64].fill(0);
            }
        }
    }
}

/// Calls `f(i)` for every set bit `i` of `bits` (bit `i % 64` of word
/// `i / 64`) in `range`, in ascending order.
#[inline(always)]
fn for_each_set_bit(bits: &[u64], range: std::ops::Range<usize>, mut f: impl FnMut(usize)) {
    let mut k = range.start / 64;
    while k * 64 < range.end {
        let mut word = bits[k];
        if k * 64 < range.start {
            word &= !0u64 << (range.start % 64);
        }
        if range.end < (k + 1) * 64 {
            word &= (1u64 << (range.end % 64)) - 1;
        }
        while word != 0 {
            f(k * 64 + word.trailing_zeros() as usize);
            word &= word - 1;
        }
        k += 1;
    }
}

/// Sources per leaf of the reduction tree: depends only on the number of
/// sources, never on the thread count. At most 256 leaves, so a handful of
/// sources (the GAPBS benchmark uses 4) still run one per worker.
fn leaf_size(k: usize) -> usize {
    k.div_ceil(256).max(1)
}

/// Raw (unscaled) sums over `sources`, split in halves down to leaves of
/// `leaf` sources; the tree depends only on the source list.
fn raw_sums(g: &Graph, sources: &[VertexId], leaf: usize, stop: &Stop) -> Vec<f64> {
    let n = g.num_vertices();
    if sources.len() <= leaf {
        let mut bc = vec![0.0; n];
        let mut scratch = Scratch::new(g);
        for &s in sources {
            if stop.requested() {
                break;
            }
            scratch.accumulate(g, s, &mut bc);
        }
        return bc;
    }
    let (a, b) = sources.split_at(sources.len() / 2);
    let (mut x, y) = rayon::join(|| raw_sums(g, a, leaf, stop), || raw_sums(g, b, leaf, stop));
    x.par_iter_mut()
        .zip(y.par_iter())
        .for_each(|(p, q)| *p += q);
    x
}

/// The calling thread's progress observer, read by the workers between
/// sources (a stop request ends the run with [`AlgoError::Cancelled`]).
struct Stop(Option<std::sync::Arc<dyn crate::progress::Observer>>);

impl Stop {
    fn requested(&self) -> bool {
        self.0.as_ref().is_some_and(|o| o.cancel_requested())
    }
}

/// Computes betweenness in parallel over sources.
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let sampled = pick_sources(g, cfg)?;
    let all: Vec<VertexId>;
    let sources: &[VertexId] = match &sampled {
        Some(s) => s,
        None => {
            all = (0..g.num_vertices() as VertexId).collect();
            &all
        }
    };
    let stop = Stop(crate::progress::current());
    let raw = raw_sums(g, sources, leaf_size(sources.len()), &stop);
    if stop.requested() {
        return Err(AlgoError::Cancelled);
    }
    Ok(Output {
        centrality: rescale(g, cfg, sampled.as_deref(), raw),
        sources_used: sources.len(),
    })
}

/// Computes betweenness sequentially: Brandes with explicit predecessor
/// lists, one source after another.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let n = g.num_vertices();
    let sampled = pick_sources(g, cfg)?;
    let sources: Vec<VertexId> = sampled
        .clone()
        .unwrap_or_else(|| (0..n as VertexId).collect());
    let mut bc = vec![0.0; n];
    for &s in &sources {
        let mut dist = vec![UNREACHED; n];
        let mut sigma = vec![0.0f64; n];
        let mut preds: Vec<Vec<VertexId>> = vec![Vec::new(); n];
        let mut order = Vec::new();
        let mut queue = std::collections::VecDeque::from([s]);
        dist[s as usize] = 0;
        sigma[s as usize] = 1.0;
        while let Some(v) = queue.pop_front() {
            order.push(v);
            let mut nb = g.out_neighbors(v).to_vec();
            nb.dedup();
            for w in nb {
                if dist[w as usize] == UNREACHED {
                    dist[w as usize] = dist[v as usize] + 1;
                    queue.push_back(w);
                }
                if dist[w as usize] == dist[v as usize] + 1 {
                    sigma[w as usize] += sigma[v as usize];
                    preds[w as usize].push(v);
                }
            }
        }
        let mut delta = vec![0.0f64; n];
        for &w in order.iter().rev() {
            let coeff = (1.0 + delta[w as usize]) / sigma[w as usize];
            for &v in &preds[w as usize] {
                delta[v as usize] += sigma[v as usize] * coeff;
            }
            if w != s {
                bc[w as usize] += delta[w as usize];
            }
        }
    }
    Ok(Output {
        centrality: rescale(g, cfg, sampled.as_deref(), bc),
        sources_used: sources.len(),
    })
}

/// Checks `out` on any graph: lengths and `sources_used`; no negative
/// value (NaN only where NetworkX gives NaN); then, undoing the rescaling,
/// on graphs of at most [`VERIFY_PAIRS_LIMIT`] vertices every value against
/// an independent count over all pairs (`v` lies on a shortest `s → t` path
/// iff `d(s,v) + d(v,t) = d(s,t)`, and `σ_sv·σ_vt` of the `σ_st` paths pass
/// it), and on larger graphs the sum identity
/// `Σ_v raw(v) = Σ_{s source} Σ_{t reachable, t ≠ s} (d(s,t) − 1)`.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.centrality.len() != n {
        return Err(VerifyError::new(format!(
            "centrality has {} entries for {n} vertices",
            out.centrality.len()
        )));
    }
    let sampled =
        pick_sources(g, cfg).map_err(|e| VerifyError::new(format!("bad configuration: {e}")))?;
    let sources: Vec<VertexId> = sampled
        .clone()
        .unwrap_or_else(|| (0..n as VertexId).collect());
    if out.sources_used != sources.len() {
        return Err(VerifyError::new(format!(
            "sources_used is {} but the configuration gives {} sources",
            out.sources_used,
            sources.len()
        )));
    }
    // Undo the rescaling.
    let sc = Scaling::new(g, cfg, sampled.as_deref());
    let mut raw = vec![0.0; n];
    for (v, (r, &x)) in raw.iter_mut().zip(&out.centrality).enumerate() {
        let scale = scale_of(g, cfg, &sc, v as VertexId);
        if scale.is_nan() {
            if !x.is_nan() {
                return Err(VerifyError::new(format!(
                    "vertex {v} has centrality {x}, but NetworkX's rescaling makes it NaN"
                )));
            }
            continue;
        }
        if x.is_nan() || x < 0.0 {
            return Err(VerifyError::new(format!("vertex {v} has centrality {x}")));
        }
        *r = x / scale;
    }
    let close = |a: f64, b: f64| (a - b).abs() <= VERIFY_TOLERANCE * (1.0 + a.abs().max(b.abs()));
    let bfs = |s: VertexId| -> (Vec<u32>, Vec<f64>) {
        let mut dist = vec![UNREACHED; n];
        let mut sigma = vec![0.0; n];
        dist[s as usize] = 0;
        sigma[s as usize] = 1.0;
        let mut queue = std::collections::VecDeque::from([s]);
        while let Some(v) = queue.pop_front() {
            let mut nb = g.out_neighbors(v).to_vec();
            nb.dedup();
            for w in nb {
                if dist[w as usize] == UNREACHED {
                    dist[w as usize] = dist[v as usize] + 1;
                    queue.push_back(w);
                }
                if dist[w as usize] == dist[v as usize] + 1 {
                    sigma[w as usize] += sigma[v as usize];
                }
            }
        }
        (dist, sigma)
    };
    if n <= VERIFY_PAIRS_LIMIT {
        let all: Vec<(Vec<u32>, Vec<f64>)> = (0..n as VertexId).map(bfs).collect();
        for v in 0..n {
            if scale_of(g, cfg, &sc, v as VertexId).is_nan() {
                continue;
            }
            let (dv, sv) = &all[v];
            let mut want = 0.0;
            for &s in &sources {
                let s = s as usize;
                let (ds, ss) = &all[s];
                if s == v || ds[v] == UNREACHED {
                    continue;
                }
                for t in 0..n {
                    if t == s || t == v || dv[t] == UNREACHED {
                        continue;
                    }
                    if ds[v] + dv[t] == ds[t] {
                        want += ss[v] * sv[t] / ss[t];
                    }
                }
            }
            if !close(raw[v], want) {
                return Err(VerifyError::new(format!(
                    "vertex {v} has raw betweenness {}, but counting shortest paths pair by pair gives {want}",
                    raw[v]
                )));
            }
        }
    } else {
        let want: f64 = sources
            .par_iter()
            .map(|&s| {
                let (d, _) = bfs(s);
                d.iter()
                    .filter(|&&x| x != UNREACHED && x > 0)
                    .map(|&x| f64::from(x - 1))
                    .sum::<f64>()
            })
            .sum();
        let got: f64 = raw.iter().sum();
        if !close(got, want) {
            return Err(VerifyError::new(format!(
                "raw betweenness sums to {got}, but the interior vertices of all shortest paths number {want}"
            )));
        }
    }
    Ok(())
}

/// Largest relative difference between [`BetweennessDriver`] on any
/// executor and [`run`]: `|driver − kernel| ≤ DRIVER_BOUND · max(1, |kernel|)`
/// per vertex (NaN where both are NaN). The path counts and dependencies
/// are the same sums of the same terms, added in another order (per
/// superstep as the executor delivers them, sources one after another
/// instead of along the kernel's reduction tree), so they differ by
/// rounding only.
pub const DRIVER_BOUND: f64 = 1e-9;

/// An `f64` cell for [`Brandes`]'s per-vertex state (its bits in an
/// `AtomicU64`), with an atomic add for concurrent sparse slots.
#[derive(Debug, Default)]
struct Cell(AtomicU64);

impl Cell {
    #[inline]
    fn load(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
    #[inline]
    fn store(&self, x: f64) {
        self.0.store(x.to_bits(), Ordering::Relaxed)
    }
    /// Adds `x` (a compare-exchange loop: slots on one vertex may race).
    #[inline]
    fn add(&self, x: f64) {
        let mut old = self.0.load(Ordering::Relaxed);
        loop {
            let new = (f64::from_bits(old) + x).to_bits();
            match self
                .0
                .compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }
}

/// The message of [`Brandes`]: path counts (forward) or coefficients
/// `(1 + δ)/σ` (backward) sent along arcs.
#[derive(Clone, Debug, PartialEq)]
pub enum Share {
    /// A sum of shares; used on graphs without duplicate arcs.
    Sum(f64),
    /// Each sender's share, sorted by sender, each sender once; used on
    /// graphs with duplicate arcs, where a duplicated arc must count once
    /// however an executor splits and groups the copies' messages.
    BySender(Vec<(VertexId, f64)>),
}

/// Byte form: tag 0 and the sum, or tag 1 and the sender list.
impl crate::wire::Wire for Share {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Share::Sum(x) => {
                out.push(0);
                x.encode(out);
            }
            Share::BySender(v) => {
                out.push(1);
                v.encode(out);
            }
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        match u8::decode(input)? {
            0 => Some(Share::Sum(f64::decode(input)?)),
            1 => Some(Share::BySender(Vec::decode(input)?)),
            _ => None,
        }
    }
}

impl Share {
    /// The total, in sender order for [`Share::BySender`].
    fn total(&self) -> f64 {
        match self {
            Share::Sum(x) => *x,
            Share::BySender(v) => v.iter().map(|&(_, x)| x).sum(),
        }
    }
}

/// The union of two sender lists (a sender in both keeps one entry: its
/// share is the same in both, since a share depends on the sender's state
/// alone, which no slot of the superstep changes).
fn union(a: Vec<(VertexId, f64)>, b: Vec<(VertexId, f64)>) -> Vec<(VertexId, f64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The phases of [`Brandes`] for one source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// BFS from the source: vertices reached first at depth `level` take
    /// the sum of their in-neighbours' path counts at depth `level − 1`.
    Forward,
    /// Levels from the deepest up, along reversed arcs: vertices at depth
    /// `level − 1` add the coefficients of their successors at `level`.
    Backward,
}

/// The vertex program of [`BetweennessDriver`]: Brandes's two phases for
/// one source, as Gemini runs them.
///
/// Invariants: in a forward superstep signals read `sigma` of the frontier
/// (depth `level − 1`) and slots write only vertices unreached before it
/// (then at depth `level`); in a backward superstep signals read `sigma`
/// and `delta` of the frontier (depth `level`) and slots add only to
/// `delta` of vertices at depth `level − 1`, which then holds `Σ (1 + δ_w)/σ_w`
/// until the driver's vertex step multiplies it by `σ_v`. Reads and writes
/// of a superstep never meet, so results do not depend on the order of
/// signals and slots. With `by_sender` (duplicate arcs), slots merge
/// [`Share::BySender`] lists into `inbox` and the driver's vertex step sums
/// them, so each arc's copies count once.
#[derive(Debug)]
pub struct Brandes {
    phase: Phase,
    /// Forward: the depth given to the vertices reached; backward: the
    /// depth of the senders.
    level: u32,
    by_sender: bool,
    depth: Vec<AtomicU32>,
    sigma: Vec<Cell>,
    delta: Vec<Cell>,
    /// Per-vertex sender lists of the current superstep (`by_sender` only).
    inbox: Vec<Mutex<Vec<(VertexId, f64)>>>,
}

impl Brandes {
    #[inline]
    fn depth(&self, v: VertexId) -> u32 {
        self.depth[v as usize].load(Ordering::Relaxed)
    }

    /// What `u` sends in the current phase.
    #[inline]
    fn share_of(&self, u: VertexId) -> f64 {
        let s = self.sigma[u as usize].load();
        match self.phase {
            Phase::Forward => s,
            Phase::Backward => (1.0 + self.delta[u as usize].load()) / s,
        }
    }

    /// `u`'s share as a message.
    fn message(&self, u: VertexId) -> Share {
        let x = self.share_of(u);
        if self.by_sender {
            Share::BySender(vec![(u, x)])
        } else {
            Share::Sum(x)
        }
    }

    /// Whether `v` takes messages in this superstep (backward: whether it
    /// is one level above the senders).
    #[inline]
    fn receives(&self, v: VertexId) -> bool {
        match self.phase {
            Phase::Forward => self.depth(v) == UNREACHED,
            Phase::Backward => self.level > 0 && self.depth(v) == self.level - 1,
        }
    }

    /// Adds a message at `v`: to its inbox, or to `sigma` (forward) or
    /// `delta` (backward).
    fn take(&self, v: VertexId, msg: Share) {
        match msg {
            Share::BySender(list) => {
                let mut inbox = self.inbox[v as usize]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                *inbox = union(std::mem::take(&mut *inbox), list);
            }
            Share::Sum(x) => match self.phase {
                Phase::Forward => self.sigma[v as usize].add(x),
                Phase::Backward => self.delta[v as usize].add(x),
            },
        }
    }

    /// Empties `v`'s inbox and returns the sum of its shares (0 without).
    fn drain(&self, v: VertexId) -> f64 {
        if !self.by_sender {
            return 0.0;
        }
        let list = std::mem::take(
            &mut *self.inbox[v as usize]
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        Share::BySender(list).total()
    }
}

impl VertexProgram for Brandes {
    /// Path counts (forward) or coefficients (backward).
    type Msg = Share;

    fn combine(&self, a: Share, b: Share) -> Share {
        match (a, b) {
            (Share::Sum(x), Share::Sum(y)) => Share::Sum(x + y),
            (Share::BySender(x), Share::BySender(y)) => Share::BySender(union(x, y)),
            // A program sends one kind only; were they mixed, the total is
            // the best that can be said.
            (a, b) => Share::Sum(a.total() + b.total()),
        }
    }

    fn cond(&self, v: VertexId) -> bool {
        self.receives(v)
    }

    fn sparse_signal(&self, src: VertexId) -> Option<Share> {
        Some(self.message(src))
    }

    fn sparse_slot(&self, dst: VertexId, msg: Share) -> bool {
        match self.phase {
            Phase::Forward => {
                let cell = &self.depth[dst as usize];
                let claimed = cell
                    .compare_exchange(UNREACHED, self.level, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok();
                if claimed || cell.load(Ordering::Relaxed) == self.level {
                    self.take(dst, msg);
                }
                claimed
            }
            Phase::Backward => {
                if self.receives(dst) {
                    self.take(dst, msg);
                }
                false
            }
        }
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<Share> {
        let mut senders = edges.active().map(|(u, _)| u).peekable();
        senders.peek()?;
        Some(if self.by_sender {
            let mut list: Vec<(VertexId, f64)> = senders.map(|u| (u, self.share_of(u))).collect();
            list.dedup_by_key(|e| e.0);
            Share::BySender(list)
        } else {
            Share::Sum(senders.map(|u| self.share_of(u)).sum())
        })
    }

    fn dense_slot(&self, v: VertexId, msg: Share) -> bool {
        self.take(v, msg);
        match self.phase {
            Phase::Forward => {
                self.depth[v as usize].store(self.level, Ordering::Relaxed);
                true
            }
            Phase::Backward => false,
        }
    }
}

/// Betweenness as a step machine that any executor runs: for each source
/// in turn (the sources of [`pick_sources`], ascending, or every vertex),
/// a forward BFS one level per superstep (forward; `σ` sums,
/// each level kept as a frontier), then the levels from the deepest up
/// along reversed arcs (backward; a vertex step after each
/// turns `Σ (1 + δ_w)/σ_w` into `δ_v = σ_v · Σ`), then a vertex step
/// adding every `δ_v` (`v ≠ s`) to the raw sums and resetting the state.
/// The raw sums are rescaled exactly as [`run`] does (`rescale`). The
/// same terms as [`run`]'s successor form, summed in another order: the
/// result is within [`DRIVER_BOUND`] of [`run`]'s.
#[derive(Debug)]
pub struct BetweennessDriver {
    p: Brandes,
    cfg: Config,
    /// The sampled sources, or `None` when every vertex is one.
    sampled: Option<Vec<VertexId>>,
    /// Number of sources.
    k: usize,
    /// Index of the current source.
    next_source: usize,
    /// The current source's BFS levels (level `d` holds depth `d`).
    levels: Vec<VertexSubset>,
    /// Raw (unscaled) sums over the sources done.
    raw: Vec<Cell>,
    /// A source's search is under way.
    busy: bool,
}

impl BetweennessDriver {
    /// Betweenness with `cfg` over a graph seen through `view`.
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let sampled = pick_sources(view, cfg)?;
        let n = view.num_vertices();
        let k = sampled.as_ref().map_or(n, Vec::len);
        let by_sender = !view.no_duplicate_arcs();
        Ok(BetweennessDriver {
            p: Brandes {
                phase: Phase::Forward,
                level: 0,
                by_sender,
                depth: (0..n).map(|_| AtomicU32::new(UNREACHED)).collect(),
                sigma: (0..n).map(|_| Cell::default()).collect(),
                delta: (0..n).map(|_| Cell::default()).collect(),
                inbox: if by_sender {
                    (0..n).map(|_| Mutex::new(Vec::new())).collect()
                } else {
                    Vec::new()
                },
            },
            cfg: cfg.clone(),
            sampled,
            k,
            next_source: 0,
            levels: Vec::new(),
            raw: (0..n).map(|_| Cell::default()).collect(),
            busy: false,
        })
    }

    /// The `i`-th source.
    fn source(&self, i: usize) -> VertexId {
        self.sampled.as_ref().map_or(i as VertexId, |s| s[i])
    }

    /// Starts the next source's search; returns its first frontier, or
    /// `None` when every source is done.
    fn start_source(&mut self, n: usize) -> Option<VertexSubset> {
        if self.next_source >= self.k {
            return None;
        }
        let s = self.source(self.next_source);
        self.next_source += 1;
        self.p.depth[s as usize].store(0, Ordering::Relaxed);
        self.p.sigma[s as usize].store(1.0);
        self.p.phase = Phase::Forward;
        self.p.level = 1;
        self.levels = vec![VertexSubset::from_vertex(n, s)];
        self.busy = true;
        Some(self.levels[0].clone())
    }

    /// Ends the current source: adds `δ_v` to the raw sums of every reached
    /// `v ≠ s` and resets the state of every reached vertex.
    fn end_source<V: Vertices>(&mut self, ops: &V) {
        let s = self.source(self.next_source - 1);
        let (p, raw) = (&self.p, &self.raw);
        for level in &self.levels {
            ops.process_vertices(level, |v| {
                if v != s {
                    raw[v as usize].add(p.delta[v as usize].load());
                }
                p.depth[v as usize].store(UNREACHED, Ordering::Relaxed);
                p.sigma[v as usize].store(0.0);
                p.delta[v as usize].store(0.0);
                false
            });
        }
        self.levels.clear();
        self.busy = false;
    }
}

impl Driver for BetweennessDriver {
    type Program = Brandes;
    type Output = Output;

    fn program(&self) -> &Brandes {
        &self.p
    }

    fn options(&self) -> StepOptions {
        StepOptions {
            reverse: self.p.phase == Phase::Backward,
            ..StepOptions::default()
        }
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = ops.view().num_vertices();
        loop {
            if !self.busy {
                return self.start_source(n);
            }
            if self.p.phase == Phase::Forward {
                // The deepest level so far sends next.
                return self.levels.last().cloned();
            }
            // Backward: the level above the last senders sends next; the
            // source's level only receives.
            if self.p.level <= 1 {
                self.end_source(ops);
                continue;
            }
            self.p.level -= 1;
            return Some(self.levels[self.p.level as usize].clone());
        }
    }

    fn activated<V: Vertices>(&mut self, ops: &V, next: VertexSubset) {
        let p = &self.p;
        match p.phase {
            Phase::Forward => {
                if p.by_sender {
                    ops.process_vertices(&next, |v| {
                        p.sigma[v as usize].store(p.drain(v));
                        false
                    });
                }
                if next.is_empty() {
                    // Nothing new reached: back up from below the deepest level.
                    self.p.phase = Phase::Backward;
                    self.p.level = self.levels.len() as u32;
                } else {
                    self.levels.push(next);
                    self.p.level += 1;
                }
            }
            Phase::Backward => {
                let above = &self.levels[p.level as usize - 1];
                ops.process_vertices(above, |v| {
                    let sum = p.delta[v as usize].load() + p.drain(v);
                    p.delta[v as usize].store(p.sigma[v as usize].load() * sum);
                    false
                });
            }
        }
    }

    fn finish<V: Vertices>(self, ops: &V) -> Output {
        let raw: Vec<f64> = self.raw.iter().map(Cell::load).collect();
        Output {
            centrality: rescale(ops.view(), &self.cfg, self.sampled.as_deref(), raw),
            sources_used: self.k,
        }
    }

    fn state_bytes(&self) -> u64 {
        let inbox = if self.p.by_sender {
            std::mem::size_of::<Mutex<Vec<(VertexId, f64)>>>() as u64
        } else {
            0
        };
        (4 + 8 + 8 + 8 + inbox) * self.raw.len() as u64
    }
}

/// Betweenness on any executor through [`BetweennessDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, BetweennessDriver::new(exec.view(), cfg)?)
}

/// Whether `got` is within [`DRIVER_BOUND`] of `want` relative to
/// `max(1, |want|)`, or both are NaN.
fn within_bound(got: f64, want: f64) -> bool {
    (got.is_nan() && want.is_nan()) || (got - want).abs() <= DRIVER_BOUND * want.abs().max(1.0)
}

/// The conformance check of [`BetweennessDriver`] on `exec` (see
/// [`crate::conformance`]): exact, sampled (`k` and the sampler's seed from
/// `seed`) or explicit sources, normalised or not; the driver's result
/// passes [`verify`], uses as many sources as [`run`] and is within
/// [`DRIVER_BOUND`] of it at every vertex.
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let n = g.num_vertices().max(1) as u64;
    let pick = |shift: u32| ((seed >> shift) % n) as VertexId;
    let mut cfg = Config {
        seed: seed.rotate_left(17),
        normalized: seed & 4 == 0,
        ..Config::default()
    };
    match seed % 4 {
        0 => {}
        1 | 2 => cfg.samples = Some(1 + ((seed >> 8) % n) as usize),
        _ => {
            let mut s = vec![pick(8), pick(24), pick(40)];
            s.sort_unstable();
            s.dedup();
            cfg.sources = Some(s);
        }
    }
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("sources_used", &got.sources_used, &fast.sources_used)?;
    let (a, b) = (&got.centrality, &fast.centrality);
    crate::conformance::same("number of values", &a.len(), &b.len())?;
    match (0..a.len()).find(|&v| !within_bound(a[v], b[v])) {
        None => Ok(()),
        Some(v) => Err(format!(
            "centrality of vertex {v}: driver gave {:?}, the kernel {:?} (relative bound {DRIVER_BOUND:e})",
            a[v], b[v]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::with_threads;
    use proptest::prelude::*;

    fn exact(normalized: bool) -> Config {
        Config {
            normalized,
            ..Config::default()
        }
    }

    fn assert_close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (v, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x.is_nan() && y.is_nan()) || (x - y).abs() < 1e-9,
                "vertex {v}: {x} vs {y}"
            );
        }
    }

    #[test]
    fn a_path_matches_networkx() {
        // nx.betweenness_centrality(nx.path_graph(4)) = {0: 0, 1: 2/3, 2: 2/3, 3: 0};
        // normalized=False gives {1: 2, 2: 2}.
        let g = graph(4, &[(0, 1), (1, 2), (2, 3)], false);
        let out = run(&g, &exact(true)).unwrap();
        assert_close(&out.centrality, &[0.0, 2.0 / 3.0, 2.0 / 3.0, 0.0]);
        assert_eq!(out.sources_used, 4);
        let out = run(&g, &exact(false)).unwrap();
        assert_close(&out.centrality, &[0.0, 2.0, 2.0, 0.0]);
        verify(&g, &exact(false), &out).unwrap();
        // As a DiGraph: 1 lies on 0->2, 0->3; 2 on 0->3, 1->3.
        let g = graph(4, &[(0, 1), (1, 2), (2, 3)], true);
        let out = run(&g, &exact(false)).unwrap();
        assert_close(&out.centrality, &[0.0, 2.0, 2.0, 0.0]);
        let out = run(&g, &exact(true)).unwrap();
        assert_close(&out.centrality, &[0.0, 2.0 / 6.0, 2.0 / 6.0, 0.0]);
    }

    #[test]
    fn two_shortest_paths_share_the_credit() {
        // A 4-cycle 0-1-2-3-0: 1 and 3 each carry half of the 0..2 paths.
        let g = graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 1), (2, 2)], false);
        let out = run(&g, &exact(false)).unwrap();
        assert_close(&out.centrality, &[0.5, 0.5, 0.5, 0.5]);
        assert_eq!(out, reference(&g, &exact(false)).unwrap());
    }

    #[test]
    fn sampled_sources_follow_networkx_rescaling() {
        // networkx docs: path_graph(3), k = 2 with sources {0, 2},
        // endpoints=False: raw {1: 2}; vertex 1 is not a source, so it is
        // scaled by (n-1)/(k·2) = 0.5, or by 1/(k(n-2)) = 0.5 normalized.
        let g = graph(3, &[(0, 1), (1, 2)], false);
        let cfg = Config {
            sources: Some(vec![2, 0]),
            normalized: false,
            ..Config::default()
        };
        let out = run(&g, &cfg).unwrap();
        assert_close(&out.centrality, &[0.0, 1.0, 0.0]);
        assert_eq!(out.sources_used, 2);
        verify(&g, &cfg, &out).unwrap();
        let cfg = Config {
            normalized: true,
            ..cfg
        };
        assert_close(&run(&g, &cfg).unwrap().centrality, &[0.0, 1.0, 0.0]);
        // One source: its own value is NaN, as in NetworkX.
        let cfg = Config {
            sources: Some(vec![1]),
            ..cfg
        };
        let out = run(&g, &cfg).unwrap();
        assert!(out.centrality[1].is_nan() && out.centrality[0] == 0.0);
        verify(&g, &cfg, &out).unwrap();
    }

    /// A directed graph of 10 vertices: 5 with out-edges (0..=4), sinks 5
    /// and 6, isolated 7..=9; undirected, 0..=6 have edges.
    fn with_sinks(directed: bool) -> Graph {
        let e = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 5),
            (0, 4),
            (4, 3),
            (4, 6),
            (2, 0),
        ];
        graph(10, &e, directed)
    }

    #[test]
    fn sampled_sources_are_drawn_among_vertices_with_out_edges() {
        let g = with_sinks(true);
        let pick = |k: usize, seed: u64| {
            let cfg = Config {
                samples: Some(k),
                seed,
                ..Config::default()
            };
            pick_sources(&g, &cfg).unwrap()
        };
        let mut seen = [false; 10];
        for seed in 0..64 {
            for k in 1..5 {
                let s = pick(k, seed).unwrap();
                assert_eq!(s.len(), k);
                assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
                for &v in &s {
                    assert!(g.out_degree(v) > 0, "source {v} has no out-edge");
                    seen[v as usize] = true;
                }
                // Deterministic by seed, at any thread count.
                let again = with_threads(2, || pick(k, seed)).unwrap();
                assert_eq!(again, Some(s));
            }
        }
        assert_eq!(
            seen,
            [true, true, true, true, true, false, false, false, false, false]
        );
        // k at least the 5 vertices with out-edges: exact.
        for k in 5..=10 {
            assert_eq!(pick(k, 1), None, "k = {k}");
        }
        let cfg = Config {
            samples: Some(7),
            ..exact(false)
        };
        assert_eq!(run(&g, &cfg).unwrap(), run(&g, &exact(false)).unwrap());
        // Undirected: every vertex with an edge may be drawn.
        let g = with_sinks(false);
        let cfg = Config {
            samples: Some(6),
            ..Config::default()
        };
        let s = pick_sources(&g, &cfg).unwrap().unwrap();
        assert!(s.iter().all(|&v| v < 7), "{s:?}");
        assert_eq!(s.len(), 6);
    }

    /// Averaged over every `k`-subset of the vertices with out-edges (each
    /// equally likely as the sample), the rescaled sampled values are the
    /// exact values: the estimate is unbiased, isolated vertices and sinks
    /// included.
    #[test]
    fn sampled_values_average_to_the_exact_values() {
        for directed in [true, false] {
            let g = with_sinks(directed);
            let pool = with_out_edges(&g);
            for normalized in [true, false] {
                let exact_cfg = exact(normalized);
                let want = run(&g, &exact_cfg).unwrap().centrality;
                for k in 2..pool.len() {
                    let cfg = Config {
                        samples: Some(k),
                        ..exact_cfg.clone()
                    };
                    let subsets: Vec<Vec<VertexId>> = (0u32..1 << pool.len())
                        .filter(|m| m.count_ones() as usize == k)
                        .map(|m| {
                            (0..pool.len())
                                .filter(|i| (m >> i) & 1 == 1)
                                .map(|i| pool[i])
                                .collect()
                        })
                        .collect();
                    let mut mean = vec![0.0; g.num_vertices()];
                    for s in &subsets {
                        let raw = raw_sums(&g, s, leaf_size(k), &Stop(None));
                        let got = rescale(&g, &cfg, Some(s), raw);
                        for (m, x) in mean.iter_mut().zip(got) {
                            *m += x / subsets.len() as f64;
                        }
                    }
                    assert_close(&mean, &want);
                }
            }
        }
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let g = graph(3, &[(0, 1), (1, 2)], false);
        let bad = [
            Config {
                samples: Some(4),
                ..Config::default()
            },
            Config {
                samples: Some(0),
                ..Config::default()
            },
            Config {
                sources: Some(vec![]),
                ..Config::default()
            },
            Config {
                sources: Some(vec![1, 1]),
                ..Config::default()
            },
            Config {
                sources: Some(vec![0]),
                samples: Some(1),
                ..Config::default()
            },
        ];
        for cfg in bad {
            assert!(
                matches!(run(&g, &cfg), Err(AlgoError::InvalidParameter(_))),
                "{cfg:?}"
            );
        }
        let cfg = Config {
            sources: Some(vec![3]),
            ..Config::default()
        };
        assert_eq!(run(&g, &cfg), Err(AlgoError::NoSuchVertex(3)));
        // k = n is exact.
        let cfg = Config {
            samples: Some(3),
            ..Config::default()
        };
        assert_eq!(run(&g, &cfg).unwrap(), run(&g, &Config::default()).unwrap());
    }

    #[test]
    fn the_sum_identity_checks_large_graphs() {
        // A 2-D grid of 20 x 15 = 300 vertices (above the pair limit).
        let (w, h) = (20u32, 15u32);
        let mut e = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let v = y * w + x;
                if x + 1 < w {
                    e.push((v, v + 1));
                }
                if y + 1 < h {
                    e.push((v, v + w));
                }
            }
        }
        let g = graph((w * h) as usize, &e, false);
        let cfg = exact(true);
        let mut out = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &out).unwrap();
        for t in [1, 2, 4] {
            let again = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
            assert_eq!(again, out, "{t} threads");
        }
        out.centrality[17] *= 1.01;
        assert!(verify(&g, &cfg, &out).is_err());
        let cfg = Config {
            samples: Some(10),
            ..Config::default()
        };
        let out = run(&g, &cfg).unwrap();
        assert_eq!(out.sources_used, 10);
        verify(&g, &cfg, &out).unwrap();
    }

    #[test]
    fn lists_spanning_several_words_of_successor_bits_match_the_reference() {
        // Two hubs share 150 leaves (lists of 150+ edges cover three or
        // four 64-bit words, starting mid-word), a tail hangs off one leaf,
        // and some edges are duplicated (only their first copy may carry a
        // successor bit).
        let mut edges: Vec<(VertexId, VertexId)> = Vec::new();
        for leaf in 2..152 {
            edges.push((0, leaf));
            edges.push((1, leaf));
        }
        edges.extend([(151, 152), (152, 153), (153, 154), (0, 7), (1, 9), (0, 1)]);
        for directed in [false, true] {
            let g = Graph::from_edges(
                155,
                &edges,
                &plexus_graph::BuildOptions {
                    directed,
                    duplicates: plexus_graph::DuplicatePolicy::Keep,
                    ..Default::default()
                },
            )
            .unwrap();
            for samples in [None, Some(3)] {
                let cfg = Config {
                    samples,
                    ..exact(false)
                };
                let got = run(&g, &cfg).unwrap();
                let want = reference(&g, &cfg).unwrap();
                assert_close(&got.centrality, &want.centrality);
                verify(&g, &cfg, &got).unwrap();
            }
        }
    }

    #[test]
    fn the_driver_agrees_with_run_with_and_without_duplicate_arcs() {
        // Two hubs share 40 leaves, a tail hangs off one leaf; some edges
        // are duplicated (each must count once however its copies'
        // messages are split).
        let mut edges: Vec<(VertexId, VertexId)> = Vec::new();
        for leaf in 2..42 {
            edges.push((0, leaf));
            edges.push((leaf, 1));
        }
        edges.extend([
            (41, 42),
            (42, 43),
            (43, 44),
            (0, 7),
            (9, 1),
            (0, 1),
            (44, 0),
        ]);
        for (directed, duplicates) in [
            (false, plexus_graph::DuplicatePolicy::Keep),
            (true, plexus_graph::DuplicatePolicy::Keep),
            (true, plexus_graph::DuplicatePolicy::Drop),
        ] {
            let opts = plexus_graph::BuildOptions {
                directed,
                duplicates,
                ..Default::default()
            };
            let g = Graph::from_edges(45, &edges, &opts).unwrap();
            for cfg in [
                exact(true),
                Config {
                    samples: Some(5),
                    ..exact(false)
                },
                Config {
                    sources: Some(vec![3]),
                    ..exact(false)
                },
            ] {
                let want = run(&g, &cfg).unwrap();
                for seed in [1, 2] {
                    let adversary = crate::conformance::Adversary::new(&g, seed);
                    let got = run_on(&adversary, &cfg).unwrap();
                    assert_eq!(got.sources_used, want.sources_used);
                    for (v, (&a, &b)) in got.centrality.iter().zip(&want.centrality).enumerate() {
                        assert!(within_bound(a, b), "vertex {v}: {a} vs {b}");
                    }
                }
                check_on(&g, &crate::program::InMemory::new(&g), 11).unwrap();
            }
        }
    }

    #[test]
    fn verifier_names_the_wrong_vertex() {
        let g = graph(4, &[(0, 1), (1, 2), (2, 3)], false);
        let cfg = exact(false);
        let mut out = run(&g, &cfg).unwrap();
        out.centrality[2] = 1.0;
        let err = verify(&g, &cfg, &out).unwrap_err();
        assert!(err.0.contains("vertex 2"), "{err}");
        out.centrality[2] = -1.0;
        assert!(verify(&g, &cfg, &out).is_err());
        out.centrality[2] = 2.0;
        out.sources_used = 3;
        assert!(verify(&g, &cfg, &out).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn run_matches_reference_at_any_thread_count(
            spec in graphs(),
            normalized in any::<bool>(),
            k in proptest::option::of(1usize..8),
            seed in any::<u64>(),
        ) {
            let g = spec.build();
            let cfg = Config {
                samples: k.map(|k| k.min(g.num_vertices())),
                seed,
                normalized,
                sources: None,
            };
            let want = reference(&g, &cfg).unwrap();
            let first = with_threads(THREADS[0], || run(&g, &cfg)).unwrap().unwrap();
            for &t in &THREADS[1..] {
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                // Bit-identical across thread counts (NaN compares by bits).
                let bits = |o: &Output| o.centrality.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&got), bits(&first));
            }
            for (v, (a, b)) in first.centrality.iter().zip(&want.centrality).enumerate() {
                prop_assert!((a.is_nan() && b.is_nan()) || (a - b).abs() < 1e-9, "vertex {} {} vs {}", v, a, b);
            }
            prop_assert_eq!(first.sources_used, want.sources_used);
            let checked = verify(&g, &cfg, &first);
            prop_assert!(checked.is_ok(), "{:?}", checked);
        }
    }

    #[test]
    fn a_stop_request_ends_the_sources_with_cancelled() {
        struct Stop;
        impl crate::progress::Observer for Stop {
            fn superstep(&self, _active: u64) {}
            fn cancel_requested(&self) -> bool {
                true
            }
        }
        let edges: Vec<(VertexId, VertexId)> = (0..64).map(|v| (v, (v * 5 + 1) % 64)).collect();
        let g = graph(64, &edges, true);
        let r = crate::progress::observe(std::sync::Arc::new(Stop), || run(&g, &Config::default()));
        assert_eq!(r, Err(AlgoError::Cancelled));
        assert!(run(&g, &Config::default()).is_ok());
    }
}
