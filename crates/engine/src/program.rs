//! The executor contract: vertex programs in Gemini's sparse/dense
//! signal–slot form (Zhu et al., OSDI'16, §3) with combinable messages, and
//! the in-memory executor that runs them over the push/pull edge-map.
//!
//! An algorithm is written once as a [`VertexProgram`] (per-vertex functions
//! over state the program owns) plus a driver loop that calls an
//! [`Executor`] superstep by superstep. The in-memory executor ([`InMemory`])
//! is here; a shared-scan executor (many jobs per pass over each chunk), an
//! out-of-core executor (messages logged per vertex interval) and an MPI
//! executor (masters and mirrors) run the same program code: see
//! `docs/engine-contract.md` for what each does with each method.
//!
//! A superstep over frontier `F`:
//!
//! * **sparse (push)**: for each `u ∈ F`, `m = sparse_signal(u)`; for each
//!   out-edge `u → v` of weight `w`, `sparse_slot(v, over_edge(m, w))`; `v`
//!   is in the next frontier when a slot on it returned `true`.
//! * **dense (pull)**: for each vertex `v` with `cond(v)`,
//!   `m = dense_signal(v, in-edges of v, active = F)`; if `Some(m)`,
//!   `dense_slot(v, m)`; `v` is in the next frontier when it returned `true`.
//!
//! The executor picks the mode by Ligra's threshold rule
//! ([`crate::edge_map::decide`]) unless [`VertexProgram::MODES`] or the
//! [`StepOptions`] force one. The laws a program must obey so that every
//! executor gives the same result are listed on [`VertexProgram`].
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use plexus_graph::{Adjacency, Graph, VertexId, Weight};

pub use crate::view::GraphView;
use rayon::prelude::*;

use crate::edge_map::{self, pull_vertices, push_frontier, EdgeMapOptions, Mode};
use crate::subset::{bit, VertexSubset};
pub use crate::wire::Wire;

/// Options of one superstep: direction, threshold, symmetric traversal.
pub type StepOptions = EdgeMapOptions;

/// Which edge-processing modes a program implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modes {
    /// Both; the executor decides per superstep.
    Both,
    /// Only the sparse pair (`sparse_signal`, `sparse_slot`); always push.
    SparseOnly,
    /// Only the dense pair (`dense_signal`, `dense_slot`); always pull.
    DenseOnly,
}

/// A vertex program in signal–slot form.
///
/// State lives in the program (atomics, or plain vectors behind interior
/// mutability); every method touches only the state of the vertex it is
/// given (`dst`/`v` for slots, reads of `src` for signals) so that executors
/// may call it from any thread, in any order, chunk by chunk.
///
/// Laws (what every executor relies on):
///
/// 1. `combine` is associative and commutative.
/// 2. `over_edge(m, w)` depends on the message and weight only.
/// 3. Slots are order-insensitive: applying messages `a` then `b` to `v`
///    (in either order), or `combine(a, b)` once, leaves `v` in the same
///    state, and `v` is activated if any application activates it. An
///    executor may therefore buffer sparse messages and combine them per
///    destination before applying (out-of-core), or apply them as they come
///    (in memory, concurrently: sparse slots use atomics).
/// 4. A dense signal over a union of edge sets equals `combine` of the
///    dense signals over the parts (`None` being the identity), so MPI ranks
///    may each gather over their local in-edges and the master combines.
///    A signal may stop early (for example at the first active in-neighbour)
///    when any prefix gives an acceptable answer.
/// 5. Signals read state as it was at the start of the superstep or as it is
///    now; a program whose result must not depend on that (synchronous
///    algorithms such as PageRank) keeps separate read and write arrays.
/// 6. A sparse slot returns `true` at most once per destination per
///    superstep, or the driver accepts duplicate ids in the next frontier
///    (SSSP deduplicates them itself).
pub trait VertexProgram: Sync {
    /// The message: small and combinable (`Copy` in every program but
    /// those whose message is a set, such as CDLP's label counts), with a
    /// byte form ([`Wire`]) for executors whose ranks do not share memory.
    type Msg: Clone + Send + Sync + Wire;

    /// Which modes the program implements. Default: both.
    const MODES: Modes = Modes::Both;

    /// Combines two messages to the same vertex (associative, commutative).
    fn combine(&self, a: Self::Msg, b: Self::Msg) -> Self::Msg;

    /// Whether `v` still wants messages this superstep (dense mode skips `v`
    /// when false). Default: always.
    fn cond(&self, _v: VertexId) -> bool {
        true
    }

    /// The message active vertex `src` sends along its out-edges, or `None`.
    fn sparse_signal(&self, src: VertexId) -> Option<Self::Msg>;

    /// The message as it arrives over an edge of weight `w` (1.0 on
    /// unweighted graphs). Default: unchanged.
    fn over_edge(&self, msg: Self::Msg, _w: Weight) -> Self::Msg {
        msg
    }

    /// Applies an arriving message at `dst`; returns whether `dst` becomes
    /// active. Runs concurrently with other slots on `dst` in memory.
    fn sparse_slot(&self, dst: VertexId, msg: Self::Msg) -> bool;

    /// Folds `v`'s in-edges (from active sources, see [`InEdges::active`])
    /// into one message, or `None` when there is nothing to say.
    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<Self::Msg>;

    /// Applies the combined message at `v`; returns whether `v` becomes
    /// active. One thread owns `v` while this runs.
    fn dense_slot(&self, v: VertexId, msg: Self::Msg) -> bool;
}

/// Which sources are active in a dense superstep.
#[derive(Clone, Copy, Debug)]
pub enum Active<'a> {
    /// Every vertex.
    All,
    /// The set bits of a bitmap over all vertices.
    Bitmap(&'a [u64]),
}

impl Active<'_> {
    /// Whether `u` is active.
    #[inline(always)]
    pub fn contains(&self, u: VertexId) -> bool {
        match self {
            Active::All => true,
            Active::Bitmap(w) => bit(w, u),
        }
    }
}

/// A view of (some of) the in-edges of one vertex handed to
/// [`VertexProgram::dense_signal`]: sources, optional weights (parallel),
/// and which sources are active. Executors may hand a part of a vertex's
/// in-edges (an MPI rank's local edges, one direction of a symmetric step).
#[derive(Clone, Copy, Debug)]
pub struct InEdges<'a> {
    sources: &'a [VertexId],
    weights: Option<&'a [Weight]>,
    active: Active<'a>,
}

impl<'a> InEdges<'a> {
    /// A view over `sources` with parallel `weights` (or none).
    #[inline]
    pub fn new(sources: &'a [VertexId], weights: Option<&'a [Weight]>, active: Active<'a>) -> Self {
        InEdges {
            sources,
            weights,
            active,
        }
    }

    /// The edges of `v` in `adj`.
    #[inline]
    pub fn of(adj: &'a Adjacency, v: VertexId, active: Active<'a>) -> Self {
        InEdges::new(adj.neighbors(v), adj.weights(v), active)
    }

    /// Number of edges in the view, active or not.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether the view has no edges.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// All sources, active or not, sorted ascending.
    pub fn sources(&self) -> &'a [VertexId] {
        self.sources
    }

    /// Weights parallel to [`InEdges::sources`] (`None` when unweighted).
    pub fn weights(&self) -> Option<&'a [Weight]> {
        self.weights
    }

    /// Whether every source counts as active (no filtering needed).
    pub fn all_active(&self) -> bool {
        matches!(self.active, Active::All)
    }

    /// Whether source `u` is active.
    #[inline(always)]
    pub fn is_active(&self, u: VertexId) -> bool {
        self.active.contains(u)
    }

    /// `(source, weight)` of every edge, active or not (weight 1.0 when unweighted).
    pub fn iter(&self) -> impl Iterator<Item = (VertexId, Weight)> + 'a {
        let ws = self.weights;
        self.sources
            .iter()
            .enumerate()
            .map(move |(i, &u)| (u, ws.map_or(1.0, |w| w[i])))
    }

    /// `(source, weight)` of every edge from an active source.
    pub fn active(&self) -> impl Iterator<Item = (VertexId, Weight)> + 'a {
        let active = self.active;
        self.iter().filter(move |&(u, _)| active.contains(u))
    }
}

/// What one superstep did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Vertices activated by a slot (the next frontier). After a sparse step
    /// it is an id list (duplicates possible if slots break law 6); after a
    /// dense step a bitmap.
    pub next: VertexSubset,
    /// The mode the executor used.
    pub mode: Mode,
}

/// The vertex side of an executor: what a driver calls between supersteps
/// (Gemini's `processVertices` and reductions), and the graph as drivers
/// see it.
pub trait Vertices: Sync {
    /// The graph's counts, degrees and facts (never its arrays).
    fn view(&self) -> &dyn GraphView;

    /// Runs `f(v)` once for every `v` in `subset` (Gemini's
    /// `processVertices`) and returns those for which it returned `true`.
    fn process_vertices<F: Fn(VertexId) -> bool + Sync>(
        &self,
        subset: &VertexSubset,
        f: F,
    ) -> VertexSubset;

    /// `Σ f(v)` over all vertices, summed in an order that does not depend on
    /// the number of threads (bit-identical results for any pool size).
    fn vertex_sum<F: Fn(VertexId) -> f64 + Sync>(&self, f: F) -> f64;

    /// Where drivers put per-vertex arrays
    /// ([`crate::vertex_array::VertexArray::from_fn`]): `None` (the
    /// default) for the heap; an executor whose budget cannot hold them
    /// (out of core) gives its own backing.
    fn backing(&self) -> Option<&dyn crate::vertex_array::Backing> {
        None
    }
}

/// Something that runs supersteps of vertex programs over a graph.
pub trait Executor: Vertices {
    /// Runs one edge-processing superstep of `p` from `frontier`.
    fn superstep<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
    ) -> Step;
}

/// Which arcs a superstep follows, after the options are applied to a
/// graph: `symmetric` and `reverse` only ever hold on directed graphs, and
/// never both (symmetric already covers the reverse direction).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traversal {
    /// Both directions of every arc.
    pub symmetric: bool,
    /// Arcs backwards only.
    pub reverse: bool,
}

impl Traversal {
    /// The traversal `opts` asks for on a graph that is `directed` or not.
    pub fn new(directed: bool, opts: &StepOptions) -> Self {
        Traversal {
            symmetric: opts.symmetric && directed,
            reverse: opts.reverse && directed && !opts.symmetric,
        }
    }

    /// `(pushed along, gathered over)`: the out- and in-lists of the
    /// traversal (swapped when reversed).
    #[inline]
    pub fn lists(self, g: &Graph) -> (&Adjacency, &Adjacency) {
        if self.reverse {
            (g.inc(), g.out())
        } else {
            (g.out(), g.inc())
        }
    }
}

/// The in-memory executor: push and pull over one graph, with the
/// edge-map's chunk-table work division. Its algorithms' fast kernels
/// (`bfs::run`, `sssp::run`, ...) are specialisations of this executor and
/// the only code that reads the [`Graph`] behind the view.
#[derive(Debug)]
pub struct InMemory<'g> {
    g: &'g Graph,
    /// `g` with every arc reversed (arrays shared), made on the first
    /// reverse step.
    reversed: std::sync::OnceLock<Graph>,
}

impl<'g> InMemory<'g> {
    /// An executor over `g`.
    pub fn new(g: &'g Graph) -> Self {
        InMemory {
            g,
            reversed: std::sync::OnceLock::new(),
        }
    }

    /// The graph (for the in-memory specialisations only).
    pub fn graph(&self) -> &'g Graph {
        self.g
    }
}

/// Runs one superstep of `p` on `g` in memory (shorthand for
/// `InMemory::new(g).superstep(...)`).
pub fn run_superstep<P: VertexProgram>(
    g: &Graph,
    p: &P,
    frontier: &VertexSubset,
    opts: &StepOptions,
) -> Step {
    InMemory::new(g).superstep(p, frontier, opts)
}

impl Vertices for InMemory<'_> {
    fn view(&self) -> &dyn GraphView {
        self.g
    }

    fn process_vertices<F: Fn(VertexId) -> bool + Sync>(
        &self,
        subset: &VertexSubset,
        f: F,
    ) -> VertexSubset {
        let n = subset.num_vertices();
        if subset.len() == n {
            return pull_vertices(self.g, f);
        }
        match subset.as_bitmap() {
            Some(words) => pull_vertices(self.g, |v| bit(words, v) && f(v)),
            None => {
                let ids = subset.as_sparse().unwrap_or(&[]);
                let kept: Vec<VertexId> = ids
                    .par_iter()
                    .with_min_len(256)
                    .copied()
                    .filter(|&v| f(v))
                    .collect();
                VertexSubset::from_distinct_ids(n, kept)
            }
        }
    }

    fn vertex_sum<F: Fn(VertexId) -> f64 + Sync>(&self, f: F) -> f64 {
        deterministic_sum(self.g.num_vertices(), f)
    }
}

impl Executor for InMemory<'_> {
    fn superstep<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
    ) -> Step {
        crate::progress::superstep(frontier.len() as u64);
        let started = trace_enabled().then(std::time::Instant::now);
        let step = if Traversal::new(self.g.is_directed(), opts).reverse {
            let g = self.reversed.get_or_init(|| self.g.reversed());
            let forward = StepOptions {
                reverse: false,
                ..*opts
            };
            InMemory::new(g).superstep_untraced(p, frontier, &forward)
        } else {
            self.superstep_untraced(p, frontier, opts)
        };
        if let Some(t) = started {
            eprintln!(
                "plexus-trace superstep {:?} frontier {} next {} {:.3} ms",
                step.mode,
                frontier.len(),
                step.next.len(),
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        step
    }
}

impl InMemory<'_> {
    /// [`Executor::superstep`] without the trace line.
    fn superstep_untraced<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
    ) -> Step {
        let g = self.g;
        let n = g.num_vertices();
        // Reverse steps reach here as forward steps on the reversed graph.
        let t = Traversal::new(g.is_directed(), opts);
        let symmetric = t.symmetric;
        let mode = match P::MODES {
            Modes::SparseOnly => Mode::Sparse,
            Modes::DenseOnly => Mode::Dense,
            Modes::Both => edge_map::decide(g, frontier, opts),
        };
        match mode {
            Mode::Sparse => {
                let converted;
                let ids = match frontier.as_sparse() {
                    Some(ids) => ids,
                    None => {
                        converted = frontier.to_sparse();
                        converted.as_sparse().unwrap_or(&[])
                    }
                };
                let out = push_frontier(
                    g,
                    ids,
                    symmetric,
                    |u| p.sparse_signal(u),
                    |m, _u, v, w| p.sparse_slot(v, p.over_edge(m.clone(), w)),
                );
                Step {
                    next: VertexSubset::from_distinct_ids(n, out),
                    mode,
                }
            }
            Mode::Dense => {
                let converted;
                let active = if frontier.len() == n {
                    Active::All
                } else {
                    match frontier.as_bitmap() {
                        Some(w) => Active::Bitmap(w),
                        None => {
                            converted = frontier.to_dense();
                            Active::Bitmap(converted.as_bitmap().unwrap_or(&[]))
                        }
                    }
                };
                // Each vertex's in-list starts on a line of its own that
                // misses the cache; the loop body is long enough that the
                // core keeps few such misses in flight, so ask for the list
                // of the vertex DENSE_PREFETCH_AHEAD ids on (if it will be
                // read) while this one is processed.
                let (offsets, sources) = (g.inc().offsets(), g.inc().neighbor_array());
                let next = pull_vertices(g, |v| {
                    let ahead = v as usize + DENSE_PREFETCH_AHEAD;
                    if ahead < n && p.cond(ahead as VertexId) {
                        crate::prefetch::prefetch(sources, offsets[ahead] as usize);
                    }
                    dense_vertex(g, p, v, active, t)
                });
                Step { next, mode }
            }
        }
    }
}

/// How many vertex ids ahead a dense step prefetches an in-list.
pub(crate) const DENSE_PREFETCH_AHEAD: usize = 16;

/// Whether `PLEXUS_TRACE` is set: the in-memory executor then prints one line
/// per superstep (mode, frontier and next sizes, milliseconds) on stderr.
pub fn trace_enabled() -> bool {
    plexus_graph::trace::enabled()
}

/// `PLEXUS_TRACE=1`: the time of each phase of an algorithm's run, one
/// line each on stderr (`plexus-trace ALGORITHM PHASE MS ms`); nothing
/// otherwise.
pub(crate) struct PhaseClock {
    algorithm: &'static str,
    since: Option<std::time::Instant>,
}

impl PhaseClock {
    /// Starts timing the first phase of `algorithm`.
    pub(crate) fn start(algorithm: &'static str) -> Self {
        PhaseClock {
            algorithm,
            since: trace_enabled().then(std::time::Instant::now),
        }
    }

    /// Prints the time since the previous phase ended, named `name`.
    pub(crate) fn end(&mut self, name: &str) {
        if let Some(t) = self.since.as_mut() {
            eprintln!(
                "plexus-trace {} {name} {:.3} ms",
                self.algorithm,
                t.elapsed().as_secs_f64() * 1e3
            );
            *t = std::time::Instant::now();
        }
    }
}

/// An `f64` that threads may load and store concurrently (its bits in an
/// `AtomicU64`), for per-vertex program state such as ranks and distances.
#[derive(Debug, Default)]
pub struct AtomicF64(AtomicU64);

impl AtomicF64 {
    /// A cell holding `x`.
    pub fn new(x: f64) -> Self {
        AtomicF64(AtomicU64::new(x.to_bits()))
    }

    /// The current value.
    #[inline(always)]
    pub fn load(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }

    /// Replaces the value.
    #[inline(always)]
    pub fn store(&self, x: f64) {
        self.0.store(x.to_bits(), Ordering::Relaxed)
    }

    /// Lowers the value to `x` if `x` is smaller; returns whether it did.
    /// Both the stored value and `x` must be `>= 0` (or `+∞`), where the
    /// order of the IEEE bit patterns is the order of the numbers, so a
    /// single integer `fetch_min` suffices.
    #[inline(always)]
    pub fn fetch_min_nonnegative(&self, x: f64) -> bool {
        debug_assert!(x >= 0.0 || x.is_nan());
        let bits = x.to_bits();
        // A plain load first: most offers do not lower the value, and a
        // read-modify-write would take the cache line exclusively every time.
        bits < self.0.load(Ordering::Relaxed) && bits < self.0.fetch_min(bits, Ordering::Relaxed)
    }

    /// Consumes the cell and returns the value.
    pub fn into_inner(self) -> f64 {
        f64::from_bits(self.0.into_inner())
    }
}

/// Vertices per block of [`deterministic_sum`].
const SUM_BLOCK: usize = 1024;

/// `Σ_{v < n} f(v)`: per-block sums in parallel (fixed 1024-vertex blocks,
/// each summed in vertex order), then the block sums in block order, so the
/// result does not depend on the thread count.
pub fn deterministic_sum(n: usize, f: impl Fn(VertexId) -> f64 + Sync) -> f64 {
    let blocks: Vec<f64> = (0..n.div_ceil(SUM_BLOCK))
        .into_par_iter()
        .map(|b| {
            let r = b * SUM_BLOCK..((b + 1) * SUM_BLOCK).min(n);
            r.fold(0.0, |s, v| s + f(v as VertexId))
        })
        .collect();
    blocks.iter().sum()
}

/// The dense step for one vertex: `cond`, gather (over the in-edges of the
/// traversal, and the out-edges too when symmetric, combining the parts),
/// slot. Returns whether `v` becomes active. Exposed so that other
/// executors (a shared scan over a chunk) run exactly the same per-vertex
/// code.
#[inline]
pub fn dense_vertex<P: VertexProgram>(
    g: &Graph,
    p: &P,
    v: VertexId,
    active: Active<'_>,
    t: Traversal,
) -> bool {
    if !p.cond(v) {
        return false;
    }
    let (forward, backward) = t.lists(g);
    let mut msg = p.dense_signal(v, InEdges::of(backward, v, active));
    if t.symmetric && p.cond(v) {
        if let Some(m2) = p.dense_signal(v, InEdges::of(forward, v, active)) {
            msg = Some(match msg {
                Some(m1) => p.combine(m1, m2),
                None => m2,
            });
        }
    }
    match msg {
        Some(m) => p.dense_slot(v, m),
        None => false,
    }
}

/// The sparse step for one active vertex `u`: signal, then a slot over each
/// out-edge of the traversal (and in-edge when symmetric); activated
/// destinations are appended to `out`. Exposed for other executors, like
/// [`dense_vertex`].
#[inline]
pub fn sparse_vertex<P: VertexProgram>(
    g: &Graph,
    p: &P,
    u: VertexId,
    t: Traversal,
    out: &mut Vec<VertexId>,
) {
    let Some(m) = p.sparse_signal(u) else { return };
    let (forward, backward) = t.lists(g);
    let mut lists = [Some(forward), None];
    if t.symmetric {
        lists[1] = Some(backward);
    }
    for adj in lists.into_iter().flatten() {
        let nb = adj.neighbors(u);
        let ws = adj.weights(u);
        for (i, &v) in nb.iter().enumerate() {
            let w = ws.map_or(1.0, |ws| ws[i]);
            if p.sparse_slot(v, p.over_edge(m.clone(), w)) {
                out.push(v);
            }
        }
    }
}

/// Runs the dense step for the vertices of `range` (one chunk) and returns
/// the activated ones, ascending: the unit of work a shared-scan or
/// out-of-core executor hands a job for one loaded chunk.
pub fn dense_range<P: VertexProgram>(
    g: &Graph,
    p: &P,
    range: Range<VertexId>,
    active: Active<'_>,
    t: Traversal,
) -> Vec<VertexId> {
    range
        .filter(|&v| dense_vertex(g, p, v, active, t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge_map::Direction;
    use plexus_graph::BuildOptions;
    use std::sync::atomic::AtomicU32;

    /// Gemini's CC example (Figure 4): min-label propagation.
    struct MinLabel {
        label: Vec<AtomicU32>,
    }
    impl VertexProgram for MinLabel {
        type Msg = u32;
        fn combine(&self, a: u32, b: u32) -> u32 {
            a.min(b)
        }
        fn sparse_signal(&self, src: VertexId) -> Option<u32> {
            Some(self.label[src as usize].load(Ordering::Relaxed))
        }
        fn sparse_slot(&self, dst: VertexId, msg: u32) -> bool {
            msg < self.label[dst as usize].fetch_min(msg, Ordering::Relaxed)
        }
        fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<u32> {
            edges
                .active()
                .map(|(u, _)| self.label[u as usize].load(Ordering::Relaxed))
                .min()
        }
        fn dense_slot(&self, v: VertexId, msg: u32) -> bool {
            msg < self.label[v as usize].fetch_min(msg, Ordering::Relaxed)
        }
    }

    fn components(g: &Graph, direction: Direction) -> (Vec<u32>, Vec<Mode>) {
        let n = g.num_vertices();
        let p = MinLabel {
            label: (0..n as u32).map(AtomicU32::new).collect(),
        };
        let opts = StepOptions {
            direction,
            symmetric: true,
            ..Default::default()
        };
        let exec = InMemory::new(g);
        let mut f = VertexSubset::all(n);
        let mut modes = vec![];
        while !f.is_empty() {
            let s = exec.superstep(&p, &f, &opts);
            modes.push(s.mode);
            f = s.next;
        }
        (
            p.label.iter().map(|a| a.load(Ordering::Relaxed)).collect(),
            modes,
        )
    }

    #[test]
    fn min_label_program_gives_components_in_every_mode() {
        let g = Graph::from_edges(
            6,
            &[(1, 0), (2, 1), (4, 3), (5, 5)],
            &BuildOptions::directed(),
        )
        .unwrap();
        for d in [Direction::Push, Direction::Pull, Direction::Auto] {
            let (labels, modes) = components(&g, d);
            assert_eq!(labels, vec![0, 0, 0, 3, 3, 5]);
            if d == Direction::Push {
                assert!(modes.iter().all(|&m| m == Mode::Sparse));
            }
            if d == Direction::Pull {
                assert!(modes.iter().all(|&m| m == Mode::Dense));
            }
        }
    }

    #[test]
    fn chunk_kernels_agree_with_the_executor() {
        let g =
            Graph::from_edges(5, &[(0, 1), (1, 2), (3, 4)], &BuildOptions::undirected()).unwrap();
        let p = MinLabel {
            label: (0..5u32).map(AtomicU32::new).collect(),
        };
        let woken = dense_range(&g, &p, 0..5, Active::All, Traversal::default());
        assert_eq!(woken, vec![1, 2, 4]);
        let mut out = vec![];
        sparse_vertex(&g, &p, 0, Traversal::default(), &mut out);
        assert!(out.is_empty());
        // Vertex 2 saw vertex 1's new label within the same pass (law 5).
        assert_eq!(p.label[2].load(Ordering::Relaxed), 0);
    }

    #[test]
    fn process_vertices_and_sum_cover_every_vertex_once() {
        let g = Graph::from_edges(3000, &[(0, 1)], &BuildOptions::directed()).unwrap();
        let exec = InMemory::new(&g);
        let all = exec.process_vertices(&VertexSubset::all(3000), |v| v % 3 == 0);
        assert_eq!(all.len(), 1000);
        let some =
            exec.process_vertices(&VertexSubset::from_ids(3000, vec![3, 4, 6]), |v| v % 3 == 0);
        assert_eq!(some.to_sorted_vec(), vec![3, 6]);
        let dense_some = exec.process_vertices(
            &VertexSubset::from_ids(3000, vec![3, 4, 6]).to_dense(),
            |v| v != 4,
        );
        assert_eq!(dense_some.to_sorted_vec(), vec![3, 6]);
        let s1 = crate::with_threads(1, || exec.vertex_sum(|v| 0.1 * v as f64)).unwrap();
        let s4 = crate::with_threads(4, || exec.vertex_sum(|v| 0.1 * v as f64)).unwrap();
        assert_eq!(s1.to_bits(), s4.to_bits());
    }

    #[test]
    fn atomic_f64_min_orders_non_negative_values_like_numbers() {
        let a = AtomicF64::new(f64::INFINITY);
        assert!(a.fetch_min_nonnegative(3.5));
        assert!(!a.fetch_min_nonnegative(4.0));
        assert!(a.fetch_min_nonnegative(0.0));
        assert!(!a.fetch_min_nonnegative(0.0));
        assert_eq!(a.into_inner(), 0.0);
    }

    #[test]
    fn in_edges_filters_inactive_sources() {
        let words = [0b101u64];
        let e = InEdges::new(&[0, 1, 2], Some(&[1.5, 2.5, 3.5]), Active::Bitmap(&words));
        assert_eq!(e.active().collect::<Vec<_>>(), vec![(0, 1.5), (2, 3.5)]);
        assert_eq!(e.len(), 3);
        assert!(!e.all_active());
    }
}
