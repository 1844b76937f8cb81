//! k-core decomposition: the core number of every vertex.
//!
//! **Returns** [`Output`]: `core[v]` is the largest `k` such that `v` lies in
//! the k-core (the largest subgraph in which every vertex has at least `k`
//! neighbours); `max_core` is the largest core number (0 for the empty
//! graph). With [`Config::k`] set, `in_k_core[v]` says whether `core[v] ≥ k`.
//!
//! **Input.** Computed on the *undirected simple view* of any graph: the
//! neighbours of `v` are its distinct in- and out-neighbours other than `v`.
//! So direction is ignored, duplicate edges count once, and self-loops are
//! ignored (NetworkX `core_number` refuses graphs with self-loops; we drop
//! them instead, which equals running NetworkX after
//! `G.remove_edges_from(nx.selfloop_edges(G))`). Isolated vertices have core
//! 0, degree-1 vertices core ≤ 1. Weights are ignored.
//!
//! **Method.** `reference`: Batagelj & Zaversnik's bucket peeling ("An
//! O(m) algorithm for cores decomposition of networks", 2003). `run`:
//! parallel peeling by levels in the style of Julienne (Dhulipala, Blelloch
//! & Shun, SPAA 2017) / Ligra's `KCore`: at level `k`, every remaining vertex
//! of degree ≤ k is removed with core `k`, its remaining neighbours'
//! degrees drop (atomically), and those that fall to `k` are removed in the
//! same level; then `k` moves to the smallest remaining degree. Within a
//! level a vertex that falls to `k` is peeled at once by the thread that
//! lowered it (depth first, as in a sequential peel) rather than in a next
//! parallel round, so a long chain (a road graph's paths) costs no round
//! per link. Core numbers are unique, so the result is identical at any
//! thread count. Small graphs (under 2^20 vertices + arcs) are peeled by
//! Batagelj–Zaversnik on one thread, where the passes per level would cost
//! more than they share.
//!
//! **Executor fit.** [`KcoreDriver`] runs the same level peeling as a
//! vertex program that every executor runs: one pull step counts each
//! vertex's distinct neighbours, then each sub-round is a pull step in which
//! every remaining vertex gathers the ids of its neighbours peeled in the
//! previous sub-round (sets, so duplicates count once) and is peeled when
//! its degree falls to the level. Core numbers are unique, so `run`, the
//! in-memory specialisation (bucket peeling below the size cut-off, the
//! depth-first level peel above it), must return exactly the driver's
//! output; the conformance harness ([`crate::conformance`]) holds them to
//! that.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::triangles::{plain_lists, SimpleView};
use crate::driver::{drive, Driver};
use crate::edge_map::Direction;
use crate::error::{AlgoError, VerifyError};
use crate::program::{Executor, GraphView, InEdges, Modes, StepOptions, VertexProgram, Vertices};
use crate::subset::VertexSubset;

/// Default for [`Config::k`]: no k-core membership requested.
pub const DEFAULT_K: Option<u32> = None;

/// Graphs with fewer vertices + arcs (of the simple view) than this are
/// peeled on one thread by bucket peeling, `O(n + m)`: below it the
/// parallel peel's passes per level cost more than they share (email-Enron,
/// 36,692 vertices and 43 levels: 5 ms in parallel).
const SEQUENTIAL_BELOW: u64 = 1 << 20;

/// Vertices a parallel pass over the remaining vertices hands to one task.
const LEVEL_GRAIN: usize = 4096;

/// Parameters of the decomposition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// If set, also report membership of the k-core (`core[v] ≥ k`).
    /// Must be at most |V|; default [`DEFAULT_K`].
    pub k: Option<u32>,
}

/// Core numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Core number of each vertex, indexed by internal id.
    pub core: Vec<u32>,
    /// The largest core number (0 for the empty graph).
    pub max_core: u32,
    /// With [`Config::k`] = `Some(k)`: whether each vertex is in the k-core.
    pub in_k_core: Option<Vec<bool>>,
}

fn check(g: &Graph, cfg: &Config) -> Result<(), AlgoError> {
    match cfg.k {
        Some(k) if k as usize > g.num_vertices() => Err(AlgoError::InvalidParameter(format!(
            "k = {k} is larger than the number of vertices ({})",
            g.num_vertices()
        ))),
        _ => Ok(()),
    }
}

/// [`check`] on a graph of `n` vertices, for drivers (which see only the
/// view): `k` must be at most `n`.
fn check_k(n: usize, cfg: &Config) -> Result<(), AlgoError> {
    match cfg.k {
        Some(k) if k as usize > n => Err(AlgoError::InvalidParameter(format!(
            "k = {k} is larger than the number of vertices ({n})"
        ))),
        _ => Ok(()),
    }
}

fn finish(core: Vec<u32>, cfg: &Config) -> Output {
    let max_core = core.par_iter().copied().max().unwrap_or(0);
    let in_k_core = cfg.k.map(|k| core.par_iter().map(|&c| c >= k).collect());
    Output {
        core,
        max_core,
        in_k_core,
    }
}

/// Computes core numbers by parallel level peeling (graphs below
/// [`SEQUENTIAL_BELOW`] vertices + arcs: bucket peeling on one thread).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    run_with(g, cfg, SEQUENTIAL_BELOW)
}

/// [`run`] with the size below which one thread peels (tests pass 0 to
/// exercise the parallel peel on small graphs).
fn run_with(g: &Graph, cfg: &Config, sequential_below: u64) -> Result<Output, AlgoError> {
    check(g, cfg)?;
    let view = SimpleView::new(g);
    let n = g.num_vertices();
    if (n as u64).saturating_add(view.num_arcs()) < sequential_below {
        let core = bucket_peel_lists(n, |v| view.neighbors(v as VertexId));
        return Ok(finish(core, cfg));
    }
    let deg: Vec<AtomicU32> = (0..n as VertexId)
        .into_par_iter()
        .map(|v| AtomicU32::new(view.degree(v) as u32))
        .collect();
    let alive: Vec<AtomicBool> = (0..n)
        .into_par_iter()
        .map(|_| AtomicBool::new(true))
        .collect();
    let core: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    // Vertices not yet removed; compacted at the start of every level.
    let mut remaining: Vec<VertexId> = (0..n as VertexId).collect();
    let mut k = 0u32;
    while !remaining.is_empty() {
        // The level passes run inline below LEVEL_GRAIN vertices: a graph
        // with many levels (email-Enron has 43) would otherwise pay a
        // parallel pass's set-up three times per level.
        remaining = remaining
            .par_iter()
            .with_min_len(LEVEL_GRAIN)
            .copied()
            .filter(|&v| alive[v as usize].load(Ordering::Relaxed))
            .collect();
        if remaining.is_empty() {
            break;
        }
        let min_deg = remaining
            .par_iter()
            .with_min_len(LEVEL_GRAIN)
            .map(|&v| deg[v as usize].load(Ordering::Relaxed))
            .min()
            .unwrap_or(k);
        k = k.max(min_deg);
        let frontier: Vec<VertexId> = remaining
            .par_iter()
            .with_min_len(LEVEL_GRAIN)
            .copied()
            .filter(|&v| deg[v as usize].load(Ordering::Relaxed) <= k)
            .collect();
        // Remove the whole frontier first, so the decrements below only
        // touch vertices that stay (their degree is then > k).
        frontier
            .par_iter()
            .with_min_len(LEVEL_GRAIN)
            .for_each(|&v| alive[v as usize].store(false, Ordering::Relaxed));
        // Then peel on from each frontier vertex in the thread that holds
        // it: a neighbour whose degree falls to k joins this level at once
        // (depth first, on the thread's own stack) instead of waiting for a
        // next parallel round; on a road graph a level is a long chain of
        // such rounds. Exactly one decrement of a vertex returns k + 1 (the
        // one that lowers it to k), so each is claimed once; a decrement
        // that races with the claim finds k or less and claims nothing.
        frontier
            .par_iter()
            .for_each_init(Vec::new, |stack: &mut Vec<VertexId>, &v| {
                stack.push(v);
                while let Some(x) = stack.pop() {
                    core[x as usize].store(k, Ordering::Relaxed);
                    for &u in view.neighbors(x) {
                        if alive[u as usize].load(Ordering::Relaxed)
                            && deg[u as usize].fetch_sub(1, Ordering::Relaxed) == k + 1
                        {
                            alive[u as usize].store(false, Ordering::Relaxed);
                            stack.push(u);
                        }
                    }
                }
            });
    }
    let core = core.into_par_iter().map(AtomicU32::into_inner).collect();
    Ok(finish(core, cfg))
}

/// Computes core numbers sequentially by Batagelj–Zaversnik bucket peeling.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    check(g, cfg)?;
    let adj = plain_lists(g);
    let core = bucket_peel_lists(adj.len(), |v| &adj[v]);
    Ok(finish(core, cfg))
}

/// Batagelj–Zaversnik bucket peeling over `n` vertices whose simple
/// neighbour lists `nbrs(v)` gives: `O(n + m)` on one thread.
fn bucket_peel_lists<'a>(n: usize, nbrs: impl Fn(usize) -> &'a [VertexId]) -> Vec<u32> {
    // u32 throughout (degrees and positions are below 2^32, as vertex ids
    // are): half the bytes of usize, so a graph of a few 100 k vertices
    // peels within a core's L2.
    let mut deg: Vec<u32> = (0..n).map(|v| nbrs(v).len() as u32).collect();
    let max_deg = deg.iter().copied().max().unwrap_or(0) as usize;
    // Bucket sort vertices by degree: `vert` in degree order, `pos[v]` its
    // index there, `bin[d]` the first index of degree d.
    let mut bin = vec![0u32; max_deg + 2];
    for &d in &deg {
        bin[d as usize + 1] += 1;
    }
    for d in 1..bin.len() {
        bin[d] += bin[d - 1];
    }
    let mut vert = vec![0u32; n];
    let mut pos = vec![0u32; n];
    let mut next = bin.clone();
    for v in 0..n {
        let d = deg[v] as usize;
        pos[v] = next[d];
        vert[next[d] as usize] = v as u32;
        next[d] += 1;
    }
    for i in 0..n {
        let v = vert[i] as usize;
        let dv = deg[v];
        for &u in nbrs(v) {
            let u = u as usize;
            let du = deg[u];
            if du > dv {
                // Move u to the front of its bucket, then shrink its degree.
                let pu = pos[u];
                let pw = bin[du as usize];
                let w = vert[pw as usize];
                if u as u32 != w {
                    vert[pu as usize] = w;
                    pos[w as usize] = pu;
                    vert[pw as usize] = u as u32;
                    pos[u] = pw;
                }
                bin[du as usize] += 1;
                deg[u] = du - 1;
            }
        }
    }
    deg
}

/// Checks `out` on any graph. For each vertex `v` with `c = core[v]`: `v`
/// has at least `c` neighbours with core ≥ `c` (so the claimed c-core
/// contains `v`), and fewer than `c + 1` with core ≥ `c + 1`. Those local
/// checks do not rule out values that are too small everywhere (a triangle
/// labelled all 1 passes them), so the verifier then re-peels the graph by
/// a third method (minimum-degree removal with a lazy bucket queue) and names the first vertex
/// whose core differs. Also checks `max_core` and `in_k_core`.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.core.len() != n {
        return Err(VerifyError::new(format!(
            "core has {} entries for {n} vertices",
            out.core.len()
        )));
    }
    let adj = plain_lists(g);
    for (v, nb) in adj.iter().enumerate() {
        let c = out.core[v];
        let at_least = |k: u32| nb.iter().filter(|&&u| out.core[u as usize] >= k).count();
        let support = at_least(c);
        if support < c as usize {
            return Err(VerifyError::new(format!(
                "vertex {v} has core {c} but only {support} neighbours with core >= {c}"
            )));
        }
        let above = at_least(c + 1);
        if above > c as usize {
            return Err(VerifyError::new(format!(
                "vertex {v} has core {c} but {above} neighbours with core >= {}, so it is in the {}-core",
                c + 1,
                c + 1
            )));
        }
    }
    let want = bucket_peel(&adj);
    if let Some(v) = (0..n).find(|&v| want[v] != out.core[v]) {
        return Err(VerifyError::new(format!(
            "vertex {v} has core {} but peeling gives {}",
            out.core[v], want[v]
        )));
    }
    let max = out.core.iter().copied().max().unwrap_or(0);
    if out.max_core != max {
        return Err(VerifyError::new(format!(
            "max_core is {} but the largest core number is {max}",
            out.max_core
        )));
    }
    match (cfg.k, &out.in_k_core) {
        (None, None) => {}
        (Some(k), Some(m)) => {
            if m.len() != n {
                return Err(VerifyError::new("in_k_core has the wrong length"));
            }
            if let Some(v) = (0..n).find(|&v| m[v] != (out.core[v] >= k)) {
                return Err(VerifyError::new(format!(
                    "vertex {v} has core {} but in_k_core says {} for k = {k}",
                    out.core[v], m[v]
                )));
            }
        }
        _ => {
            return Err(VerifyError::new(
                "in_k_core is present exactly when k is set",
            ))
        }
    }
    Ok(())
}

/// Core numbers by repeatedly removing a vertex of minimum remaining degree,
/// found with a lazy bucket queue (a vertex is pushed again whenever its
/// degree drops; stale entries are skipped): the core of a vertex is the
/// largest minimum degree seen up to its removal. `O(n + m)`.
fn bucket_peel(adj: &[Vec<VertexId>]) -> Vec<u32> {
    let n = adj.len();
    let mut deg: Vec<usize> = adj.iter().map(Vec::len).collect();
    let max_deg = deg.iter().copied().max().unwrap_or(0);
    let mut buckets: Vec<Vec<VertexId>> = vec![Vec::new(); max_deg + 1];
    for (v, &d) in deg.iter().enumerate() {
        buckets[d].push(v as VertexId);
    }
    let mut removed = vec![false; n];
    let mut core = vec![0u32; n];
    let mut level = 0usize;
    let mut at = 0usize;
    let mut left = n;
    while left > 0 {
        let Some(v) = buckets[at].pop() else {
            at += 1;
            continue;
        };
        let v = v as usize;
        if removed[v] || deg[v] != at {
            continue;
        }
        removed[v] = true;
        left -= 1;
        level = level.max(at);
        core[v] = level as u32;
        for &u in &adj[v] {
            let u = u as usize;
            if !removed[u] {
                deg[u] -= 1;
                buckets[deg[u]].push(u as VertexId);
                at = at.min(deg[u]);
            }
        }
    }
    core
}

/// Core numbers on any executor through [`KcoreDriver`]: the same output
/// as [`run`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, KcoreDriver::new(exec.view(), cfg)?)
}

/// The phases of [`KcoreDriver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Every vertex counts its distinct neighbours.
    Degree,
    /// Every remaining vertex loses the neighbours peeled in the last
    /// sub-round; those left with at most `level` are peeled now.
    Peel,
}

/// The program of [`KcoreDriver`]: a degree, a liveness flag and a core
/// number per vertex; pull steps only ([`Modes::DenseOnly`]).
///
/// Messages are sets of distinct neighbour ids (sorted, without `v`
/// itself), combined by union: associative, commutative and idempotent, so
/// a vertex's duplicate arcs, the two directions of a symmetric step and
/// any split of its edges into parts count each neighbour once, as the
/// simple view does. A count would not be idempotent, and a push could not
/// see that two messages came from one neighbour; that is why the program
/// pulls and gathers ids.
#[derive(Debug)]
pub struct Peeling {
    deg: Vec<AtomicU32>,
    alive: Vec<AtomicBool>,
    core: Vec<AtomicU32>,
    level: u32,
    phase: Phase,
}

/// Sorted union of two sorted, duplicate-free id lists.
fn union(a: Vec<VertexId>, b: Vec<VertexId>) -> Vec<VertexId> {
    if a.is_empty() {
        return b;
    }
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        out.push(x.min(y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

impl Peeling {
    #[inline]
    fn alive(&self, v: VertexId) -> bool {
        self.alive[v as usize].load(Ordering::Relaxed)
    }
    #[inline]
    fn deg(&self, v: VertexId) -> u32 {
        self.deg[v as usize].load(Ordering::Relaxed)
    }
    /// Peels `v` at the current level.
    #[inline]
    fn peel(&self, v: VertexId) {
        self.alive[v as usize].store(false, Ordering::Relaxed);
        self.core[v as usize].store(self.level, Ordering::Relaxed);
    }
}

impl VertexProgram for Peeling {
    /// Distinct neighbour ids, sorted.
    type Msg = Vec<VertexId>;

    const MODES: Modes = Modes::DenseOnly;

    fn combine(&self, a: Vec<VertexId>, b: Vec<VertexId>) -> Vec<VertexId> {
        union(a, b)
    }

    fn cond(&self, v: VertexId) -> bool {
        self.alive(v)
    }

    fn sparse_signal(&self, _src: VertexId) -> Option<Vec<VertexId>> {
        None // Dense only.
    }

    fn sparse_slot(&self, _dst: VertexId, _m: Vec<VertexId>) -> bool {
        false // Dense only.
    }

    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<Vec<VertexId>> {
        let mut ids: Vec<VertexId> = match self.phase {
            Phase::Degree => edges.iter().map(|(u, _)| u).filter(|&u| u != v).collect(),
            // The active sources are the vertices peeled in the last
            // sub-round (a snapshot: this step's peels are not among them).
            Phase::Peel => edges.active().map(|(u, _)| u).filter(|&u| u != v).collect(),
        };
        ids.sort_unstable();
        ids.dedup();
        (!ids.is_empty()).then_some(ids)
    }

    fn dense_slot(&self, v: VertexId, ids: Vec<VertexId>) -> bool {
        let lost = ids.len() as u32;
        match self.phase {
            Phase::Degree => {
                self.deg[v as usize].store(lost, Ordering::Relaxed);
                false
            }
            Phase::Peel => {
                let d = self.deg(v).saturating_sub(lost);
                self.deg[v as usize].store(d, Ordering::Relaxed);
                let peeled = d <= self.level;
                if peeled {
                    self.peel(v);
                }
                peeled
            }
        }
    }
}

/// k-core as a step machine that any executor runs: level peeling as in
/// [`run`]'s parallel peel, with every chain of removals cut into pull
/// sub-rounds. A first step counts each vertex's distinct neighbours (the
/// undirected simple view: both directions of every arc, without
/// self-loops and duplicates). Each level `k` (the largest of the previous
/// level and the smallest remaining degree) peels the remaining vertices
/// of degree at most `k` with core `k`; each sub-round then lowers the
/// remaining vertices' degrees by their neighbours peeled in the previous
/// sub-round and peels those left with at most `k`, until a sub-round
/// peels none.
///
/// Invariant at the start of every sub-round: `deg[v]` of a remaining
/// vertex counts its distinct neighbours that are remaining or were peeled
/// in the previous sub-round. Core numbers are unique, so the result
/// equals [`run`]'s on any executor and thread count. A sub-round is one
/// pass over the remaining vertices, so a long chain peeled within one
/// level (a road graph's paths) costs a pass per link, where the in-memory
/// kernel follows it depth first in one pass.
#[derive(Debug)]
pub struct KcoreDriver {
    p: Peeling,
    cfg: Config,
    /// Vertices not peeled at the start of the current level (a superset
    /// of those remaining).
    remaining: VertexSubset,
    /// The vertices peeled by the last step (`None` before the first).
    last: Option<VertexSubset>,
}

impl KcoreDriver {
    /// Core numbers of a graph seen through `view` (checks `cfg.k`).
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let n = view.num_vertices();
        check_k(n, cfg)?;
        Ok(KcoreDriver {
            p: Peeling {
                deg: (0..n).map(|_| AtomicU32::new(0)).collect(),
                alive: (0..n).map(|_| AtomicBool::new(true)).collect(),
                core: (0..n).map(|_| AtomicU32::new(0)).collect(),
                level: 0,
                phase: Phase::Degree,
            },
            cfg: cfg.clone(),
            remaining: VertexSubset::all(n),
            last: None,
        })
    }

    /// Starts the next level: the smallest remaining degree raises the
    /// level, and the remaining vertices of degree at most the level are
    /// peeled. `None` when no vertex remains.
    fn next_level<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let p = &self.p;
        let smallest = AtomicU32::new(u32::MAX);
        self.remaining = ops.process_vertices(&self.remaining, |v| {
            p.alive(v) && {
                smallest.fetch_min(p.deg(v), Ordering::Relaxed);
                true
            }
        });
        if self.remaining.is_empty() {
            return None;
        }
        self.p.level = self.p.level.max(smallest.into_inner());
        let p = &self.p;
        let peeled = ops.process_vertices(&self.remaining, |v| {
            p.deg(v) <= p.level && {
                p.peel(v);
                true
            }
        });
        Some(peeled)
    }
}

impl Driver for KcoreDriver {
    type Program = Peeling;
    type Output = Output;

    fn program(&self) -> &Peeling {
        &self.p
    }

    fn options(&self) -> StepOptions {
        StepOptions {
            symmetric: true,
            direction: Direction::Pull,
            ..StepOptions::default()
        }
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = self.p.deg.len();
        let Some(last) = self.last.take() else {
            // The degree step, from every vertex.
            return Some(VertexSubset::all(n)).filter(|_| n > 0);
        };
        self.p.phase = Phase::Peel;
        if !last.is_empty() {
            return Some(last);
        }
        self.next_level(ops)
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        self.last = Some(next);
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        let core = self.p.core.into_iter().map(AtomicU32::into_inner).collect();
        finish(core, &self.cfg)
    }

    fn state_bytes(&self) -> u64 {
        9 * self.p.deg.len() as u64
    }
}

/// The conformance check of [`KcoreDriver`] on `exec` (see
/// [`crate::conformance`]): with `k` drawn from `seed` (none, or up to
/// |V|), the output equals [`run`]'s and passes [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let n = g.num_vertices() as u64;
    let cfg = Config {
        k: (!seed.is_multiple_of(3)).then(|| ((seed >> 2) % (n + 1)) as u32),
    };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("core", &got, &fast)
}

#[cfg(test)]
mod tests {
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::with_threads;
    use proptest::prelude::*;

    #[test]
    fn a_triangle_with_a_tail_and_an_isolated_vertex() {
        let g = graph(5, &[(0, 1), (1, 2), (2, 0), (2, 3)], false);
        let out = run(&g, &Config { k: Some(2) }).unwrap();
        assert_eq!(out.core, vec![2, 2, 2, 1, 0]);
        assert_eq!(out.max_core, 2);
        assert_eq!(out.in_k_core, Some(vec![true, true, true, false, false]));
        verify(&g, &Config { k: Some(2) }, &out).unwrap();
    }

    #[test]
    fn k4_plus_pendant_path() {
        let e = [
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 2),
            (1, 3),
            (2, 3),
            (3, 4),
            (4, 5),
        ];
        let g = graph(6, &e, true);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.core, vec![3, 3, 3, 3, 1, 1]);
        assert_eq!(out, reference(&g, &Config::default()).unwrap());
    }

    #[test]
    fn self_loops_and_duplicates_do_not_raise_the_core() {
        let g = graph(2, &[(0, 1), (0, 1), (1, 0), (0, 0), (1, 1)], true);
        assert_eq!(run(&g, &Config::default()).unwrap().core, vec![1, 1]);
    }

    #[test]
    fn k_larger_than_the_graph_is_rejected() {
        let g = graph(3, &[(0, 1)], false);
        assert!(matches!(
            run(&g, &Config { k: Some(4) }),
            Err(AlgoError::InvalidParameter(_))
        ));
        assert!(run(&g, &Config { k: Some(3) }).is_ok());
    }

    #[test]
    fn verifier_rejects_too_large_and_too_small_cores() {
        let g = graph(4, &[(0, 1), (1, 2), (2, 0), (2, 3)], false);
        let cfg = Config::default();
        let mut out = run(&g, &cfg).unwrap();
        out.core[3] = 2;
        out.max_core = 2;
        let err = verify(&g, &cfg, &out).unwrap_err();
        assert!(err.0.contains("vertex 3"), "{err}");
        // All-ones on the triangle passes the local checks, not the re-peel.
        out.core = vec![1, 1, 1, 1];
        out.max_core = 1;
        let err = verify(&g, &cfg, &out).unwrap_err();
        assert!(err.0.contains("vertex 0"), "{err}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn run_matches_reference_at_any_thread_count(spec in graphs(), k in 0u32..4) {
            let g = spec.build();
            let cfg = Config { k: Some(k).filter(|&k| k as usize <= g.num_vertices()) };
            let want = reference(&g, &cfg).unwrap();
            for t in THREADS {
                // The parallel peel (no size cut-off) and `run` (which
                // peels these small graphs on one thread).
                let got = with_threads(t, || run_with(&g, &cfg, 0)).unwrap().unwrap();
                prop_assert_eq!(&got, &want);
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                prop_assert_eq!(&got, &want);
            }
            prop_assert!(verify(&g, &cfg, &want).is_ok());
        }

        #[test]
        fn the_driver_agrees_with_run_on_any_executor(
            spec in graphs(),
            seed in any::<u64>(),
            threads in 1usize..=4,
        ) {
            let g = spec.build();
            let adversary = crate::conformance::Adversary::new(&g, seed);
            let r = with_threads(threads, || check_on(&g, &adversary, seed)).unwrap();
            prop_assert!(r.is_ok(), "adversary: {:?}", r);
            let r = check_on(&g, &crate::program::InMemory::new(&g), seed);
            prop_assert!(r.is_ok(), "in memory: {:?}", r);
        }
    }
}
