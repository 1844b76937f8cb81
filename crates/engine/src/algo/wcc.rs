//! Weakly connected components (edge direction ignored).
//!
//! **Returns** [`Output`]: `component[v]` is the smallest internal id in
//! `v`'s component (so labels are deterministic and `component[r] == r`
//! for each representative `r`), and `count` the number of components.
//! Isolated vertices are components of their own.
//!
//! **Methods** ([`Config::method`]):
//! * [`Method::UnionFind`] (default): Afforest (Sutton, Ben-Nun & Barak,
//!   "Optimizing parallel graph connectivity computation via subgraph
//!   sampling", IPDPS'18; GAPBS `cc.cc`): lock-free union–find that always
//!   hangs the larger root under the smaller with a compare-and-swap (the
//!   hooking of Shiloach & Vishkin, J. Algorithms 1982), with path halving.
//!   It first links two out-neighbours per vertex, finds the largest
//!   component from a fixed sample of 1024 vertices, then links the
//!   remaining edges of the vertices outside it only. After the first
//!   neighbour it samples already, and stops sampling when one component
//!   holds 80 % of the sample (soc-Slashdot0902 1.2 → 0.86 ms, email-Enron
//!   0.47 → 0.40 ms; road and web graphs still take both rounds). Since a root is only
//!   ever hung under a smaller one, every root is the minimum of its tree,
//!   which is the required label, whatever the order of the links.
//!   `O(m α(n))` work at most, independent of the diameter.
//!   Graphs with few arcs per vertex (at most 4) whose ids keep most edges
//!   short (at least 75 % of sampled arcs inside blocks of up to 2^16
//!   consecutive ids: road networks in file order) go by blocks instead,
//!   where Afforest's sampling finds no giant component to skip: each
//!   block joins its inner edges with a sequential union–find on its own
//!   cells (in cache, no atomic operations), then the edges between blocks
//!   are linked as above (USA-road-FLA 22.1 → 12.8 ms at 2 threads).
//! * [`Method::LabelPropagation`]: Gemini's CC as a [`VertexProgram`]
//!   (min-label propagation along out- and in-edges, push or pull by
//!   Ligra's rule); `O(diameter)` supersteps. This is the form the
//!   shared-scan, out-of-core and MPI executors run.
//!
//! **Input.** Any graph; weights ignored; self-loops and duplicates harmless.
use std::sync::atomic::{AtomicU32, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::driver::{drive, Driver};
use crate::error::{AlgoError, VerifyError};
use crate::program::{
    Executor, GraphView, InEdges, InMemory, PhaseClock, StepOptions, VertexProgram, Vertices,
};
use crate::subset::VertexSubset;

/// How to compute the components.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Lock-free union–find (fast, diameter-independent).
    #[default]
    UnionFind,
    /// Min-label propagation as a vertex program.
    LabelPropagation,
}

/// WCC parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The method; both give the same labels. Default [`Method::UnionFind`].
    pub method: Method,
}

/// WCC result, indexed by internal id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// The smallest internal id in each vertex's component.
    pub component: Vec<u32>,
    /// Number of components.
    pub count: u64,
}

fn output(component: Vec<u32>) -> Output {
    let count = component
        .par_iter()
        .enumerate()
        .filter(|&(v, &c)| c as usize == v)
        .count() as u64;
    Output { component, count }
}

/// Runs WCC in parallel on the current rayon pool.
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let component = match cfg.method {
        Method::UnionFind => union_find(g),
        Method::LabelPropagation => return run_on(&InMemory::new(g), cfg),
    };
    Ok(output(component))
}

/// Follows parents to the root (read only: the compress passes shorten
/// the paths, as in GAPBS, so no lookup pays a locked write). Shared with
/// the distributed executor's union–find.
#[inline]
pub fn find(parent: &[AtomicU32], mut x: u32) -> u32 {
    loop {
        let p = parent[x as usize].load(Ordering::Relaxed);
        if p == x {
            return x;
        }
        x = p;
    }
}

/// Joins the trees of `u` and `v` (GAPBS's `Link`): climbs from the two
/// parents, hanging the higher of the two current ids under the lower once
/// the higher is a root. Only a root is ever re-hung, and always under a
/// smaller id, so parent ≤ child holds and every root is its tree's minimum.
/// Shared with the distributed executor's union–find.
#[inline]
pub fn link(parent: &[AtomicU32], u: u32, v: u32) {
    let get = |x: u32| parent[x as usize].load(Ordering::Relaxed);
    let (mut p1, mut p2) = (get(u), get(v));
    while p1 != p2 {
        let (high, low) = if p1 > p2 { (p1, p2) } else { (p2, p1) };
        let p_high = get(high);
        // Already hung under `low`, or hung there now.
        if p_high == low
            || (p_high == high
                && parent[high as usize]
                    .compare_exchange(high, low, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok())
        {
            return;
        }
        // Path halving on the way up: `high` is not a root (or was just
        // hung), and its grandparent is an ancestor, so the plain store
        // only shortens the path. Roots change only by the exchange above,
        // and a non-root never becomes a root again.
        let grand = get(p_high);
        if grand != p_high {
            parent[high as usize].store(grand, Ordering::Relaxed);
        }
        p1 = grand;
        p2 = get(low);
    }
}

/// Out-neighbours per vertex linked in Afforest's sampling phase.
const NEIGHBOR_ROUNDS: usize = 2;
/// Vertices ahead whose neighbour's parent cell phase 1 prefetches.
const LINK_AHEAD: usize = 16;
/// Vertices sampled to find the largest intermediate component.
const SAMPLES: usize = 1024;
/// Up to this many vertices (2 MiB of parents, well inside the last-level
/// cache), Afforest skips the compression after its first round.
const CACHED_PARENTS: usize = 1 << 19;
/// Sampling phase ends early once the largest component holds at least
/// `GIANT_NUM / GIANT_DEN` of the samples.
const GIANT_NUM: usize = 4;
/// See [`GIANT_NUM`].
const GIANT_DEN: usize = 5;

/// Most vertices per block of the blocked method (256 KiB of parents:
/// a block's union–find stays in the core's L2).
const BLOCK_MAX: usize = 1 << 16;
/// Fewest vertices per block (below it the blocks catch few edges).
const BLOCK_MIN: usize = 1 << 10;
/// Blocks per thread at least, for load balance where the graph is small.
const BLOCKS_PER_THREAD: usize = 4;
/// Vertices whose out-lists are sampled to measure the share of arcs that
/// stay inside their block.
const LOCALITY_SAMPLES: usize = 1024;
/// The blocked method runs when at least this share (in 1/100) of the
/// sampled arcs stays inside its block…
const LOCAL_PERCENT: usize = 75;
/// … and the graph has at most this many arcs per vertex: beyond it,
/// Afforest's sampling leaves most arcs unread (a giant component's
/// vertices skip their remaining lists), which the blocked method cannot.
/// USA-road-FLA has 2.5, cnr-2000 9.9.
const BLOCKED_MAX_ARCS_PER_VERTEX: u64 = 4;

fn union_find(g: &Graph) -> Vec<u32> {
    let len = block_len(g.num_vertices(), rayon::current_num_threads());
    if blocks_pay(g, len) {
        blocked(g, len)
    } else {
        afforest(g)
    }
}

/// Whether [`blocked`] with blocks of `len` vertices should beat
/// [`afforest`] on `g`: few arcs per vertex, most of them inside a block.
/// (Afforest's first round by blocks, where nothing is joined yet, was
/// measured on cnr-2000 and was slower: 3.0 against 2.1 ms.)
fn blocks_pay(g: &Graph, len: usize) -> bool {
    g.num_arcs() <= BLOCKED_MAX_ARCS_PER_VERTEX * g.num_vertices() as u64
        && local_percent(g, len) >= LOCAL_PERCENT
}

/// Vertices per block for `n` vertices and `threads` workers.
fn block_len(n: usize, threads: usize) -> usize {
    n.div_ceil(BLOCKS_PER_THREAD * threads.max(1))
        .clamp(BLOCK_MIN, BLOCK_MAX)
}

/// The share (in 1/100) of the out-arcs of [`LOCALITY_SAMPLES`]
/// pseudo-random vertices whose two ends lie in the same block of `len`
/// vertices; 0 for a graph without arcs.
fn local_percent(g: &Graph, len: usize) -> usize {
    let (mut local, mut all) = (0usize, 0usize);
    for u in sample(g.num_vertices(), LOCALITY_SAMPLES, 0x2545_F491_4F6C_DD1D) {
        let list = g.out_neighbors(u);
        all += list.len();
        local += list
            .iter()
            .filter(|&&v| v as usize / len == u as usize / len)
            .count();
    }
    (local * 100).checked_div(all).unwrap_or(0)
}

/// `min(count, n)` pseudo-random vertices of `0..n` (xorshift64 from
/// `seed`, repeats possible): the same ones on every run.
fn sample(n: usize, count: usize, seed: u64) -> impl Iterator<Item = VertexId> {
    (0..count.min(n)).scan(seed, move |x, _| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        Some((*x % n as u64) as VertexId)
    })
}

/// Union–find by blocks, for sparse graphs whose ids keep most edges short
/// (road networks in their file order): each block of
/// `len` consecutive vertices joins the edges inside it with a sequential
/// union–find (Rem's algorithm with splicing, Patwary, Blair & Manne,
/// SEA 2010) on its own cells, which stay in the core's cache, and keeps
/// the edges that leave it; then the kept edges are linked with the
/// lock-free [`link`]; a compression leaves every cell holding its root.
/// Every arc is read once, from its out-list.
fn blocked(g: &Graph, len: usize) -> Vec<u32> {
    let n = g.num_vertices();
    let mut phase = PhaseClock::start("wcc");
    let parent: Vec<AtomicU32> = crate::hugepages::from_fn(n, |v| AtomicU32::new(v as u32));
    phase.end("init");
    // Each block, one task, joins the arcs inside it and keeps those that
    // leave it (an undirected edge is taken from its higher end).
    let below_only = !g.is_directed();
    let leaving: Vec<Vec<(VertexId, VertexId)>> = (0..n.div_ceil(len))
        .into_par_iter()
        .map(|b| {
            let block = b * len..n.min(b * len + len);
            if below_only {
                join_block::<true>(g, &parent, block)
            } else {
                join_block::<false>(g, &parent, block)
            }
        })
        .collect();
    phase.end("blocks");
    leaving.par_iter().for_each(|arcs| {
        for &(u, v) in arcs {
            link(&parent, u, v);
        }
    });
    phase.end("leaving");
    let labels = into_labels(parent);
    phase.end("labels");
    labels
}

/// Joins the out-arcs of the vertices of `block` (only those to lower ids
/// if `BELOW_ONLY`) whose heads lie in `block`, with [`join_in_block`] on
/// cells no other task touches (no vertex of the block joined outside it
/// yet), then points every cell of the block at its root. Returns the arcs
/// that leave the block.
fn join_block<const BELOW_ONLY: bool>(
    g: &Graph,
    parent: &[AtomicU32],
    block: std::ops::Range<usize>,
) -> Vec<(VertexId, VertexId)> {
    let (lo, len) = (block.start, block.len());
    let mut leaving = Vec::new();
    for u in block.start as VertexId..block.end as VertexId {
        for &v in g.out_neighbors(u) {
            // Lists are sorted: the lower ends come first.
            if BELOW_ONLY && v >= u {
                break;
            }
            if (v as usize).wrapping_sub(lo) < len {
                join_in_block(parent, u, v);
            } else {
                leaving.push((u, v));
            }
        }
    }
    // Parents precede children, so in id order a parent's cell already
    // holds its root.
    for u in block {
        let p = parent[u].load(Ordering::Relaxed) as usize;
        let root = parent[p].load(Ordering::Relaxed);
        parent[u].store(root, Ordering::Relaxed);
    }
    leaving
}

/// The labels in place: one more compression leaves every cell holding
/// its root, and the cells become the output without a new array (on
/// USA-road-FLA the 4 MiB a new array faults in cost 1.2–2.4 ms).
fn into_labels(parent: Vec<AtomicU32>) -> Vec<u32> {
    compress(&parent);
    parent.into_iter().map(AtomicU32::into_inner).collect()
}

/// Points every cell at its root (parallel; shared with the distributed
/// executor's union–find).
pub fn compress(parent: &[AtomicU32]) {
    (0..parent.len() as VertexId)
        .into_par_iter()
        .with_min_len(1024)
        .for_each(|v| {
            let r = find(parent, v);
            parent[v as usize].store(r, Ordering::Relaxed);
        })
}

/// Rem's union with splicing on cells only the calling task touches (both
/// ends in its block): climbs from the end whose parent is higher, hanging
/// each visited vertex under the other end's parent, until the two meet
/// or a root is hung. Every store replaces a parent by a smaller id of the
/// same (joined) tree, so parent ≤ child holds and each root is its
/// tree's minimum, as [`link`] requires of the later phases.
#[inline]
fn join_in_block(parent: &[AtomicU32], mut u: VertexId, mut v: VertexId) {
    let get = |x: VertexId| parent[x as usize].load(Ordering::Relaxed);
    loop {
        let (mut pu, mut pv) = (get(u), get(v));
        if pu == pv {
            return;
        }
        if pu < pv {
            std::mem::swap(&mut u, &mut v);
            std::mem::swap(&mut pu, &mut pv);
        }
        parent[u as usize].store(pv, Ordering::Relaxed);
        if pu == u {
            return;
        }
        u = pu;
    }
}

/// Afforest (see the module notes), for every graph [`blocks_pay`]
/// declines.
fn afforest(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    let mut phase = PhaseClock::start("wcc");
    // Read in the random order of neighbour lists: on huge pages.
    let parent: Vec<AtomicU32> = crate::hugepages::from_fn(n, |v| AtomicU32::new(v as u32));
    phase.end("init");
    // Afforest phase 1: link the first few out-neighbours of every vertex,
    // which already joins most of a giant component. The `round`-th
    // neighbour of a vertex and then its parent cell are random reads that
    // miss the cache: ask for the neighbour 2·LINK_AHEAD vertices on and
    // for the parent of the neighbour LINK_AHEAD vertices on.
    let (offsets, targets) = (g.out().offsets(), g.out().neighbor_array());
    let neighbor = |u: usize, round: usize| -> Option<VertexId> {
        let at = offsets[u] as usize + round;
        (at < offsets[u + 1] as usize).then(|| targets[at])
    };
    // Phase 2: the most frequent root among a fixed sample of vertices,
    // and how many of the samples it holds.
    let largest = || {
        let mut counts = std::collections::HashMap::<u32, usize>::new();
        for v in sample(n, SAMPLES, 0x9E37_79B9_7F4A_7C15) {
            *counts.entry(find(&parent, v)).or_default() += 1;
        }
        counts
            .into_iter()
            .max_by_key(|&(r, c)| (c, std::cmp::Reverse(r)))
            .map_or((None, 0), |(r, c)| (Some(r), c))
    };
    let mut giant = None;
    let mut rounds = 0;
    for round in 0..NEIGHBOR_ROUNDS {
        (0..n).into_par_iter().with_min_len(256).for_each(|u| {
            if u + 2 * LINK_AHEAD < n {
                crate::prefetch::prefetch(targets, offsets[u + 2 * LINK_AHEAD] as usize + round);
            }
            if u + LINK_AHEAD < n {
                if let Some(w) = neighbor(u + LINK_AHEAD, round) {
                    crate::prefetch::prefetch(&parent, w as usize);
                }
            }
            if let Some(v) = neighbor(u, round) {
                link(&parent, u as VertexId, v);
            }
        });
        phase.end("link");
        // The compression only shortens the next round's climbs; while
        // the parents are few a climb stays in the cache and the pass
        // costs more than it saves (cnr-2000, 1.3 MB of parents: 7.3 →
        // 6.8 ms without it; kron22, 9.6 MB: 76.8 → 80.1 ms).
        if round > 0 || n > CACHED_PARENTS {
            compress(&parent);
            phase.end("compress");
        }
        rounds += 1;
        let (root, held) = largest();
        phase.end("sample");
        giant = root;
        // Once one component holds most of the sample, the vertices
        // outside it are few and phase 3 links their edges for less than
        // another round over every vertex costs.
        if held * GIANT_DEN >= SAMPLES.min(n) * GIANT_NUM {
            break;
        }
    }
    // Phase 3: every vertex outside the giant component links its remaining
    // edges (all in-edges too when directed). An edge between the giant
    // component and another vertex is seen from that vertex's side.
    (0..n as VertexId)
        .into_par_iter()
        .with_min_len(64)
        .for_each(|u| {
            if Some(find(&parent, u)) == giant {
                return;
            }
            for &v in g.out_neighbors(u).iter().skip(rounds) {
                link(&parent, u, v);
            }
            if g.is_directed() {
                for &v in g.in_neighbors(u) {
                    link(&parent, u, v);
                }
            }
        });
    phase.end("rest");
    let labels = into_labels(parent);
    phase.end("labels");
    labels
}

/// Gemini's CC program: every vertex where `within` holds keeps the
/// smallest label offered to it. Labels travel along out-edges (and in-edges
/// with [`StepOptions::symmetric`]); only vertices where `within` holds are
/// ever activated, so a frontier of such vertices stays within them. WCC
/// runs it on every vertex; SCC's colouring rounds on the vertices not yet
/// in a component, along out-edges only.
pub struct MinLabel<L, F> {
    label: L,
    within: F,
}

impl<L, F> std::fmt::Debug for MinLabel<L, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MinLabel")
    }
}

impl<L, F> VertexProgram for MinLabel<L, F>
where
    L: std::ops::Deref<Target = [AtomicU32]> + Sync,
    F: Fn(VertexId) -> bool + Sync,
{
    /// A label (a vertex id).
    type Msg = u32;

    fn combine(&self, a: u32, b: u32) -> u32 {
        a.min(b)
    }

    fn cond(&self, v: VertexId) -> bool {
        (self.within)(v)
    }

    fn sparse_signal(&self, src: VertexId) -> Option<u32> {
        Some(self.label[src as usize].load(Ordering::Relaxed))
    }

    fn sparse_slot(&self, dst: VertexId, msg: u32) -> bool {
        // True for every message that lowers the label, so `dst` may appear
        // more than once in a sparse step's output; the driver deduplicates.
        // Plain loads first: most messages do not lower the label, and a
        // locked read-modify-write per edge would take the line
        // exclusively every time.
        let cell = &self.label[dst as usize];
        (self.within)(dst)
            && msg < cell.load(Ordering::Relaxed)
            && msg < cell.fetch_min(msg, Ordering::Relaxed)
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<u32> {
        edges
            .sources()
            .iter()
            .filter(|&&u| edges.is_active(u))
            .map(|&u| self.label[u as usize].load(Ordering::Relaxed))
            .min()
    }

    fn dense_slot(&self, v: VertexId, msg: u32) -> bool {
        // One thread owns `v` in dense mode.
        let cell = &self.label[v as usize];
        let lower = msg < cell.load(Ordering::Relaxed);
        if lower {
            cell.store(msg, Ordering::Relaxed);
        }
        lower
    }
}

/// Runs [`MinLabel`] from `frontier` (vertices where `within` holds) until
/// no label drops: each such vertex ends with the smallest label of a
/// vertex of `frontier` that reaches it through vertices where `within`
/// holds, if smaller than its own.
pub(crate) fn spread_min_labels<E: Executor>(
    exec: &E,
    label: &[AtomicU32],
    within: impl Fn(VertexId) -> bool + Sync,
    frontier: VertexSubset,
    opts: &StepOptions,
) {
    let n = exec.view().num_vertices();
    let program = MinLabel { label, within };
    let mut frontier = frontier;
    while !frontier.is_empty() {
        let next = exec.superstep(&program, &frontier, opts).next;
        // A push may list a vertex once per message that lowered it.
        frontier = match next.as_sparse() {
            Some(ids) => VertexSubset::from_ids(n, ids.to_vec()),
            None => next,
        };
    }
}

/// WCC on any executor through [`WccDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, WccDriver::new(exec.view(), cfg)?)
}

/// Every vertex may take labels (WCC's `within`).
fn everywhere(_v: VertexId) -> bool {
    true
}

/// The program of [`WccDriver`]: [`MinLabel`] over labels it owns, on
/// every vertex.
pub type WccProgram = MinLabel<Vec<AtomicU32>, fn(VertexId) -> bool>;

/// WCC as a step machine that any executor runs: [`MinLabel`] on every
/// vertex along both directions of every arc, from all vertices, until no
/// label drops. Labels are the smallest id of each component, as [`run`]'s.
#[derive(Debug)]
pub struct WccDriver {
    p: WccProgram,
    frontier: Option<VertexSubset>,
}

impl WccDriver {
    /// WCC over a graph seen through `view` (`cfg.method` is not used).
    pub fn new(view: &dyn GraphView, _cfg: &Config) -> Result<Self, AlgoError> {
        let n = view.num_vertices();
        Ok(WccDriver {
            p: MinLabel {
                label: (0..n as u32).map(AtomicU32::new).collect(),
                within: everywhere,
            },
            frontier: Some(VertexSubset::all(n)),
        })
    }
}

impl Driver for WccDriver {
    type Program = WccProgram;
    type Output = Output;

    fn program(&self) -> &WccProgram {
        &self.p
    }

    fn options(&self) -> StepOptions {
        StepOptions {
            symmetric: true,
            ..StepOptions::default()
        }
    }

    fn next_frontier<V: Vertices>(&mut self, _ops: &V) -> Option<VertexSubset> {
        self.frontier.take().filter(|f| !f.is_empty())
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        // A push may list a vertex once per message that changed it.
        self.frontier = Some(next.deduplicated());
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        output(
            self.p
                .label
                .into_iter()
                .map(AtomicU32::into_inner)
                .collect(),
        )
    }

    fn state_bytes(&self) -> u64 {
        4 * self.p.label.len() as u64
    }
}

/// Plain sequential search over the undirected view, vertices in id order:
/// each unvisited vertex starts a component labelled with its own id.
pub fn reference(g: &Graph, _cfg: &Config) -> Result<Output, AlgoError> {
    let n = g.num_vertices();
    let mut component = vec![u32::MAX; n];
    let mut stack = Vec::new();
    for r in 0..n as VertexId {
        if component[r as usize] != u32::MAX {
            continue;
        }
        component[r as usize] = r;
        stack.push(r);
        while let Some(u) = stack.pop() {
            for &v in g.out_neighbors(u).iter().chain(g.in_neighbors(u)) {
                if component[v as usize] == u32::MAX {
                    component[v as usize] = r;
                    stack.push(v);
                }
            }
        }
    }
    Ok(output(component))
}

/// Checks the component properties on any graph: every arc joins two
/// vertices with the same label; each label is a member of its set and the
/// smallest one; a search from each representative over the undirected
/// view reaches exactly the vertices with its label (so each set is
/// connected); `count` is the number of labels.
pub fn verify(g: &Graph, _cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    let c = &out.component;
    if c.len() != n {
        return Err(VerifyError::new(format!(
            "{} labels for {n} vertices",
            c.len()
        )));
    }
    for v in 0..n as VertexId {
        let l = c[v as usize];
        if l as usize >= n || c[l as usize] != l {
            return Err(VerifyError::new(format!(
                "vertex {v} has label {l}, which is not the label of itself"
            )));
        }
        if l > v {
            return Err(VerifyError::new(format!(
                "vertex {v} has label {l}, not the smallest id in its component"
            )));
        }
        for &w in g.out_neighbors(v) {
            if c[w as usize] != l {
                return Err(VerifyError::new(format!(
                    "edge {v} -> {w} joins labels {l} and {}",
                    c[w as usize]
                )));
            }
        }
    }
    let mut reached = vec![u32::MAX; n];
    let mut stack = Vec::new();
    let mut count = 0u64;
    for r in 0..n as VertexId {
        if c[r as usize] != r {
            continue;
        }
        count += 1;
        reached[r as usize] = r;
        stack.push(r);
        while let Some(u) = stack.pop() {
            for &v in g.out_neighbors(u).iter().chain(g.in_neighbors(u)) {
                if reached[v as usize] == u32::MAX {
                    reached[v as usize] = r;
                    stack.push(v);
                }
            }
        }
    }
    if let Some(v) = (0..n).find(|&v| reached[v] != c[v]) {
        return Err(VerifyError::new(format!(
            "vertex {v} has label {} but is not connected to vertex {}",
            c[v], c[v]
        )));
    }
    if count != out.count {
        return Err(VerifyError::new(format!(
            "count is {} but there are {count} labels",
            out.count
        )));
    }
    Ok(())
}

/// The conformance check of [`WccDriver`] on `exec` (see
/// [`crate::conformance`]): labels equal [`run`]'s and pass [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, _seed: u64) -> Result<(), String> {
    let cfg = Config::default();
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("component", &got, &fast)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::{graphs, THREADS};
    use crate::with_threads;
    use plexus_graph::BuildOptions;
    use proptest::prelude::*;

    const METHODS: [Method; 2] = [Method::UnionFind, Method::LabelPropagation];

    #[test]
    fn directed_edges_join_components_either_way() {
        // {0, 1, 2} via 2 → 1 → 0, {3, 4} via 4 → 3, {5} with a self-loop, {6}.
        let g = Graph::from_edges(
            7,
            &[(2, 1), (1, 0), (4, 3), (5, 5)],
            &BuildOptions::directed(),
        )
        .unwrap();
        for method in METHODS {
            let c = Config { method };
            let out = run(&g, &c).unwrap();
            assert_eq!(out.component, vec![0, 0, 0, 3, 3, 5, 6]);
            assert_eq!(out.count, 4);
            verify(&g, &c, &out).unwrap();
        }
    }

    #[test]
    fn a_long_path_in_reverse_order_is_one_component() {
        let n = 5000u32;
        let e: Vec<(u32, u32)> = (1..n).map(|v| (v, v - 1)).collect();
        let g = Graph::from_edges(n as usize, &e, &BuildOptions::directed()).unwrap();
        let out = with_threads(2, || run(&g, &Config::default()))
            .unwrap()
            .unwrap();
        assert_eq!(out.count, 1);
        assert!(out.component.iter().all(|&c| c == 0));
    }

    #[test]
    fn edges_past_an_early_end_of_sampling_are_linked() {
        // A star on 0..3000 holds every sample after one round, so the
        // sampling ends there; 10–20 is only the second neighbour of both
        // (lists 1:[20], 5:[10], 10:[5, 20], 20:[1, 10]), so phase 3 must
        // link from the second neighbour on.
        let mut e: Vec<(u32, u32)> = (1..3000).map(|v| (0, v)).collect();
        e.retain(|&(_, v)| ![1, 5, 10, 20].contains(&v));
        e.extend([(10, 5), (10, 20), (20, 1)]);
        let g = Graph::from_edges(3000, &e, &BuildOptions::undirected()).unwrap();
        let out = output(with_threads(2, || afforest(&g)).unwrap());
        assert_eq!(out.count, 2);
        for v in [5, 10, 20] {
            assert_eq!(out.component[v], 1);
        }
        assert_eq!(out.component[2999], 0);
        verify(&g, &Config::default(), &out).unwrap();
    }

    #[test]
    fn verifier_rejects_corrupted_outputs() {
        let g = Graph::from_edges(5, &[(0, 1), (2, 3)], &BuildOptions::undirected()).unwrap();
        let c = Config::default();
        let good = run(&g, &c).unwrap();
        verify(&g, &c, &good).unwrap();
        // Two components merged under one label: not connected.
        let mut bad = good.clone();
        bad.component[2] = 0;
        bad.component[3] = 0;
        bad.count = 2;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("vertex 2"));
        // An edge split across labels.
        let mut bad = good.clone();
        bad.component[1] = 1;
        bad.count = 4;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("0 -> 1"));
        // Not the smallest id.
        let mut bad = good.clone();
        bad.component[0] = 1;
        bad.component[1] = 1;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("smallest"));
        let mut bad = good;
        bad.count = 9;
        assert!(verify(&g, &c, &bad).is_err());
    }

    #[test]
    fn the_block_method_is_chosen_where_edges_stay_in_their_blocks() {
        // A path in id order keeps every edge but one per block inside it;
        // the same path over ids scattered by a multiplier leaves its blocks.
        let n = 1u32 << 14;
        let path: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
        let scatter = |v: u32| v.wrapping_mul(40_503) % n;
        let scattered: Vec<(u32, u32)> = path
            .iter()
            .map(|&(u, v)| (scatter(u), scatter(v)))
            .collect();
        let len = block_len(n as usize, 2);
        assert_eq!(len, BLOCK_MIN * 2);
        // Each vertex joined to its next five: local, but ten arcs each.
        let dense: Vec<(u32, u32)> = (0..n)
            .flat_map(|u| (u + 1..n.min(u + 6)).map(move |v| (u, v)))
            .collect();
        for (edges, blocks) in [(&path, true), (&scattered, false), (&dense, false)] {
            let g = Graph::from_edges(n as usize, edges, &BuildOptions::undirected()).unwrap();
            assert_eq!(blocks_pay(&g, len), blocks);
            let out = with_threads(2, || run(&g, &Config::default()))
                .unwrap()
                .unwrap();
            assert_eq!(out.count, 1);
            verify(&g, &Config::default(), &out).unwrap();
        }
        assert_eq!(block_len(10, 2), BLOCK_MIN);
        assert_eq!(block_len(1 << 30, 2), BLOCK_MAX);
    }

    #[test]
    fn a_block_joins_a_path_built_from_both_ends() {
        // Edges that meet in the middle make Rem's union climb and splice
        // (5 – 1 and 4 – 2 hang before 3 joins them), and 6 – 7 leaves
        // the block of 0..6 for the lock-free phase.
        let e = [(5, 1), (4, 2), (3, 5), (3, 4), (0, 4), (6, 7), (7, 5)];
        for opts in [BuildOptions::directed(), BuildOptions::undirected()] {
            let g = Graph::from_edges(9, &e, &opts).unwrap();
            for len in [1, 2, 3, 6, 9] {
                let got = output(with_threads(2, || blocked(&g, len)).unwrap());
                assert_eq!(got.component, vec![0, 0, 0, 0, 0, 0, 0, 0, 8]);
                assert_eq!(got.count, 2);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_reference_and_passes_verify(spec in graphs()) {
            let g = spec.build();
            let want = reference(&g, &Config::default()).unwrap();
            verify(&g, &Config::default(), &want).unwrap();
            for t in THREADS {
                for method in METHODS {
                    let c = Config { method };
                    let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
                    prop_assert_eq!(&got, &want);
                }
                // Both union–find methods, whichever `run` picks here, and
                // blocks from one vertex to all of them.
                let got = output(with_threads(t, || afforest(&g)).unwrap());
                prop_assert_eq!(&got, &want);
                for len in [1, 2, 5, g.num_vertices().max(1)] {
                    let got = output(with_threads(t, || blocked(&g, len)).unwrap());
                    prop_assert_eq!(&got, &want);
                }
            }
        }
    }
}
