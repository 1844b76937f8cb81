//! Strongly connected components (SCC).
//!
//! **Returns** [`Output`]: `component[v]` is the smallest internal id in
//! `v`'s strongly connected component (so labels are deterministic and a
//! vertex `v` with `component[v] == v` is its component's representative);
//! `count` is the number of components. Every vertex is labelled; there is
//! no sentinel.
//!
//! **Input.** Any graph. Components follow out-edges; on an undirected graph
//! (whose out-edges are symmetric) they are the connected components.
//! Self-loops and duplicate edges change nothing; isolated vertices are
//! singleton components. Weights are ignored.
//!
//! **Method.** `run` combines, in parallel:
//! 1. *Trimming* (McLendon et al., JPDC 2005): vertices with no remaining
//!    in- or out-neighbour are singleton components, removed level by level
//!    with atomic counters started at the degrees (a vertex with a
//!    self-loop is left to the later phases).
//! 2. *Forward–backward* (Fleischer, Hendrickson & Pinar, "On identifying
//!    strongly connected components in parallel", IPDPS workshops 2000):
//!    from a pivot of largest `in·out` degree, the intersection of the
//!    forward and backward reachable sets is the pivot's component, usually
//!    the giant one. Each search is a vertex program on the in-memory
//!    executor, which pushes or pulls by frontier size as BFS does; the
//!    backward one runs on [`Graph::reversed`].
//! 3. *Colouring* (Orzan, PhD thesis 2004; Slota, Rajamanickam & Madduri,
//!    "BFS and coloring-based parallel algorithms for strongly connected
//!    components", IPDPS 2014) for the rest, with at least
//!    `COLOURING_MIN_THREADS` threads: propagate the minimum id forward
//!    until stable (WCC's min-label vertex program restricted to them), so `colour[v]` is the
//!    smallest remaining id that reaches `v`; each vertex `r` with
//!    `colour[r] == r` is the smallest id of its component, which is the
//!    set of vertices of colour `r` that reach `r` (the reach program
//!    from every such root at once on the reversed graph, each step
//!    within a colour). Repeat on what remains. Whenever at most
//!    `SERIAL_CUTOFF` vertices remain (before the first round too), and
//!    with fewer threads always, finish with Pearce's variant of Tarjan (a
//!    chain of k small components would otherwise take k rounds).
//!
//! Graphs of at most `SERIAL_VERTICES` vertices and `SERIAL_ARCS` arcs
//! skip the parallel phases: Pearce's variant (D. J. Pearce, "A
//! space-efficient algorithm for finding strongly connected components",
//! IPL 2016; one array of DFS indices and component numbers, no on-stack
//! flags, one graph-dependent branch per arc) on the whole graph is
//! faster there on two threads.
//!
//! `reference` is Tarjan's algorithm ("Depth-first search and linear graph
//! algorithms", SIAM J. Comput. 1972), iterative so deep graphs cannot
//! overflow the stack. `verify` compares with Kosaraju's two-pass algorithm
//! (also iterative), a second, independent method.
//!
//! **Executor fit.** Every search is a vertex program (`Reach`, WCC's
//! `MinLabel`)
//! run superstep by superstep, but the driver, trimming and Pearce's
//! search are in-memory code that re-partitions the remaining vertices
//! between phases.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::wcc::spread_min_labels;
use crate::driver::{drive, Driver};
use crate::error::{AlgoError, VerifyError};
use crate::program::{
    Executor, GraphView, InEdges, InMemory, PhaseClock, StepOptions, VertexProgram, Vertices,
};
use crate::subset::VertexSubset;

/// Label of a vertex not yet assigned to a component (internal use only;
/// never present in an output).
const UNASSIGNED: u32 = u32::MAX;

/// At most this many vertices left (after forward–backward or a colouring
/// round) are finished sequentially by [`pearce`], as in Slota et al.'s
/// Multistep: the colouring needs one round per component along a chain
/// of components, a DFS one pass. (The measurements below used Tarjan.) Their cut-off is 100,000 on many cores;
/// at two threads a colouring round pays off later. On cnr-2000 Tarjan on
/// the 116,921 vertices left by forward–backward beat one colouring round
/// (19 ms) followed by Tarjan on the 63,322 it left (5 ms): 58 → 44 ms in
/// all.
const SERIAL_CUTOFF: usize = 200_000;

/// Fewer worker threads than this finish everything forward–backward
/// leaves by [`pearce`], with no colouring rounds. On two threads Pearce
/// is far ahead: cnr2000x8 (eight disjoint copies of cnr-2000, 2.6 M
/// vertices, 25.7 M arcs; forward–backward leaves 1.8 M vertices) took
/// 175–183 ms a run with Pearce on that rest (130 ms of it) against
/// 602–612 ms with colouring rounds down to [`SERIAL_CUTOFF`] (1,120 ms on
/// one thread, so the rounds scale, but need about eight times the
/// threads to catch up with Pearce). Sixteen
/// leaves a margin for scaling below linear, which this 2-core machine
/// cannot measure.
const COLOURING_MIN_THREADS: usize = 16;

/// SCC takes no parameters; the struct exists so every algorithm has the
/// same `run(g, cfg)` shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {}

/// Strongly connected components.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Smallest internal id of each vertex's component, indexed by internal id.
    pub component: Vec<u32>,
    /// Number of components.
    pub count: usize,
}

/// Computes the components: on a graph of at most [`SERIAL_VERTICES`]
/// vertices and [`SERIAL_ARCS`] arcs by [`pearce`], otherwise in parallel
/// (trim, forward–backward, colouring, Pearce on the rest).
pub fn run(g: &Graph, _cfg: &Config) -> Result<Output, AlgoError> {
    if g.num_vertices() <= SERIAL_VERTICES && g.num_arcs() <= SERIAL_ARCS as u64 {
        return Ok(serial(g));
    }
    let cutoff = if rayon::current_num_threads() >= COLOURING_MIN_THREADS {
        SERIAL_CUTOFF
    } else {
        usize::MAX
    };
    Ok(run_with_cutoff(g, cutoff, &StepOptions::default()))
}

/// Graphs of at most [`SERIAL_VERTICES`] vertices and [`SERIAL_ARCS`]
/// arcs are solved by [`pearce`] alone: on two threads the parallel
/// phases cost more than they save there. Measured (2 threads, medians of
/// 9): cnr-2000 (325,557 vertices, 3.2 M arcs)
/// 26 ms through trim, forward–backward and Tarjan, 14 ms by Pearce
/// alone; soc-Slashdot0902 8.1 → 5.2 ms; R-MAT scale 18 (2.0 M arcs) even
/// (20–23 ms either way); R-MAT scale 20 (8.2 M arcs) 120 ms parallel
/// against 145 ms serial.
const SERIAL_VERTICES: usize = 1 << 20;
/// See [`SERIAL_VERTICES`].
const SERIAL_ARCS: usize = 4 << 20;

/// All components by [`pearce`], one pass.
fn serial(g: &Graph) -> Output {
    let n = g.num_vertices();
    labelled(n, |found| pearce(g, 0..n as VertexId, |_| true, found))
}

/// The output of a sequential search over all `n` vertices that reports
/// each component once, as `found(members, smallest id)`.
fn labelled(n: usize, search: impl FnOnce(&mut dyn FnMut(&[VertexId], u32))) -> Output {
    let mut component = vec![UNASSIGNED; n];
    let mut count = 0;
    search(&mut |members, label| {
        for &x in members {
            component[x as usize] = label;
        }
        count += 1;
    });
    Output { component, count }
}

/// Pearce's space-efficient variant of Tarjan's algorithm ("A
/// space-efficient algorithm for finding strongly connected components",
/// IPL 2016), iterative, over the subgraph induced by the vertices where
/// `allowed` holds, DFS trees started at `starts` in order. Calls
/// `found(members, smallest id)` once per component.
///
/// One array, `rindex`, holds a vertex's DFS index while it is open (0:
/// not visited) and, once its component is found, a component number
/// counted down from `n - 1`. Indices are counted up from 1 and given back
/// when a component closes, so an open vertex's `rindex` is always below
/// every closed vertex's: `low = min(low, rindex[w])` needs no on-stack
/// test, and closed neighbours change nothing. Per arc the only branch
/// that depends on the graph is "not visited yet".
fn pearce(
    g: &Graph,
    starts: impl Iterator<Item = VertexId>,
    allowed: impl Fn(VertexId) -> bool,
    mut found: impl FnMut(&[VertexId], u32),
) {
    let n = g.num_vertices();
    if n == 0 {
        return;
    }
    let mut rindex = vec![0u32; n];
    let mut next_index = 1u32;
    // Component numbers, counted down; stays above every open index
    // (indices in use + components closed ≤ n). Wraps only after the last.
    let mut component = (n - 1) as u32;
    // Open vertices that are not the root of their component (yet).
    let mut waiting: Vec<VertexId> = Vec::new();
    let mut members: Vec<VertexId> = Vec::new();
    // Call stack: (vertex, position in its out-neighbour list, still a root).
    let mut calls: Vec<(VertexId, usize, bool)> = Vec::new();
    for start in starts {
        if rindex[start as usize] != 0 || !allowed(start) {
            continue;
        }
        rindex[start as usize] = next_index;
        next_index += 1;
        calls.push((start, 0, true));
        while let Some(top) = calls.last_mut() {
            let v = top.0;
            let nb = g.out_neighbors(v);
            let (mut pos, mut root) = (top.1, top.2);
            let mut low = rindex[v as usize];
            let mut descend = None;
            while pos < nb.len() {
                let w = nb[pos];
                pos += 1;
                if !allowed(w) {
                    continue;
                }
                let rw = rindex[w as usize];
                if rw == 0 {
                    descend = Some(w);
                    break;
                }
                root &= rw >= low;
                low = low.min(rw);
            }
            *top = (v, pos, root);
            rindex[v as usize] = low;
            if let Some(w) = descend {
                rindex[w as usize] = next_index;
                next_index += 1;
                calls.push((w, 0, true));
                continue;
            }
            calls.pop();
            if root {
                // `v` closes its component: it and every waiting vertex
                // opened after it.
                next_index -= 1;
                members.clear();
                members.push(v);
                let mut label = v;
                while let Some(&w) = waiting.last() {
                    if rindex[w as usize] < low {
                        break;
                    }
                    waiting.pop();
                    rindex[w as usize] = component;
                    next_index -= 1;
                    members.push(w);
                    label = label.min(w);
                }
                rindex[v as usize] = component;
                component = component.wrapping_sub(1);
                found(&members, label);
            } else {
                waiting.push(v);
            }
            // Back in the parent: `v`'s value lowers the parent's.
            if let Some(parent) = calls.last_mut() {
                let rv = rindex[v as usize];
                let rp = rindex[parent.0 as usize];
                if rv < rp {
                    rindex[parent.0 as usize] = rv;
                    parent.2 = false;
                }
            }
        }
    }
}

/// [`run`] with the serial cut-off as a parameter (0 = colour to the end),
/// so tests can exercise the colouring rounds on small graphs, and with the
/// searches' step options (tests force push or pull).
fn run_with_cutoff(g: &Graph, serial_cutoff: usize, opts: &StepOptions) -> Output {
    let n = g.num_vertices();
    let comp: Vec<AtomicU32> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU32::new(UNASSIGNED))
        .collect();
    let live = |v: VertexId| comp[v as usize].load(Ordering::Relaxed) == UNASSIGNED;
    let mut phase = PhaseClock::start("scc");

    trim(g, &comp);
    phase.end("trim");
    // Backward searches run on the reverse, which shares `g`'s arrays.
    let reversed = g.reversed();

    // Forward–backward from the pivot of largest in·out degree.
    let pivot = (0..n as VertexId)
        .into_par_iter()
        .filter(|&v| live(v))
        .max_by_key(|&v| {
            (
                (g.out_degree(v) as u64) * (g.in_degree(v) as u64),
                std::cmp::Reverse(v),
            )
        });
    if let Some(p) = pivot {
        let seed = || VertexSubset::from_vertex(n, p);
        let fwd = reach(g, seed(), live, |_| 0, opts);
        phase.end("forward");
        let bwd = reach(
            &reversed,
            seed(),
            |v| fwd[v as usize].load(Ordering::Relaxed),
            |_| 0,
            opts,
        );
        phase.end("backward");
        let members: Vec<VertexId> = (0..n as VertexId)
            .into_par_iter()
            .filter(|&v| bwd[v as usize].load(Ordering::Relaxed))
            .collect();
        let label = members.first().copied().unwrap_or(p);
        members
            .par_iter()
            .for_each(|&v| comp[v as usize].store(label, Ordering::Relaxed));
        phase.end("pivot's component");
    }

    // Colouring rounds on what is left.
    let mut remaining: Vec<VertexId> = (0..n as VertexId)
        .into_par_iter()
        .filter(|&v| live(v))
        .collect();
    // Only colouring rounds need colours.
    let colour: Vec<AtomicU32> = if remaining.len() > serial_cutoff {
        (0..n)
            .into_par_iter()
            .map(|_| AtomicU32::new(UNASSIGNED))
            .collect()
    } else {
        Vec::new()
    };
    let colour_of = |v: VertexId| colour[v as usize].load(Ordering::Relaxed);
    while !remaining.is_empty() {
        if remaining.len() <= serial_cutoff {
            pearce(g, remaining.iter().copied(), live, |members, label| {
                for &x in members {
                    comp[x as usize].store(label, Ordering::Relaxed);
                }
            });
            phase.end("pearce");
            break;
        }
        remaining
            .par_iter()
            .for_each(|&v| colour[v as usize].store(v, Ordering::Relaxed));
        // Unless a test forces a direction: the colours pull only while
        // the frontier's arcs are over half the live ones (a pull reads
        // every live in-list in full, with no early exit), and the search
        // for components pushes (a pull would read the in-lists of every
        // live vertex, though each search reaches only its colour's
        // component). On cnr2000x8 at two threads with colouring rounds
        // forced: both by BFS's rule (pull
        // above a twentieth of all arcs) 1.22 s a run, these rules 0.75 s,
        // and a search that always pulls 2.5 s.
        let live_arcs: u64 = remaining.par_iter().map(|&v| g.out_degree(v) as u64).sum();
        let pull_above = |arcs: u64| StepOptions {
            threshold: Some(arcs),
            ..*opts
        };
        // Min-label propagation along out-edges among the live vertices,
        // each starting from its own id.
        spread_min_labels(
            &InMemory::new(g),
            &colour,
            live,
            VertexSubset::from_distinct_ids(n, remaining.clone()),
            &pull_above(live_arcs / 2),
        );
        phase.end("colours");
        // Roots: vertices that kept their own id. The backward search
        // within each colour from its root finds the root's component.
        let roots: Vec<VertexId> = remaining
            .par_iter()
            .copied()
            .filter(|&v| colour_of(v) == v)
            .collect();
        let found = reach(
            &reversed,
            VertexSubset::from_distinct_ids(n, roots),
            live,
            colour_of,
            &pull_above(live_arcs),
        );
        remaining
            .par_iter()
            .filter(|&&v| found[v as usize].load(Ordering::Relaxed))
            .for_each(|&v| comp[v as usize].store(colour_of(v), Ordering::Relaxed));
        remaining = remaining.par_iter().copied().filter(|&v| live(v)).collect();
        phase.end("components of the colours");
    }

    let component: Vec<u32> = comp.into_iter().map(AtomicU32::into_inner).collect();
    let count = (0..n)
        .into_par_iter()
        .filter(|&v| component[v] == v as u32)
        .count();
    Output { component, count }
}

/// Repeatedly removes live vertices with no live in- or out-neighbour and
/// no self-loop as singleton components.
fn trim(g: &Graph, comp: &[AtomicU32]) {
    let n = g.num_vertices();
    // Counters of live in- and out-neighbours, started at the degrees: a
    // vertex's self-loops stay counted (removing a vertex decrements only
    // its other neighbours), so a counter is at least the number of live
    // neighbours other than the vertex itself and reaches 0 only when
    // there are none. A vertex with a self-loop is therefore never
    // trimmed, and is left to the later phases, which find it alone in
    // its component (kron22 as a directed graph: 676 self-loops in 65 M
    // arcs). Counting the other neighbours exactly read every list: 48–80
    // of a 150 ms run there, and by binary search, 88 ms.
    let degrees = |adj: &plexus_graph::Adjacency| -> Vec<AtomicU32> {
        let offsets = adj.offsets();
        (0..n)
            .into_par_iter()
            .map(|v| AtomicU32::new((offsets[v + 1] - offsets[v]) as u32))
            .collect()
    };
    let (indeg, outdeg) = (degrees(g.inc()), degrees(g.out()));
    let claim = |v: VertexId| {
        comp[v as usize]
            .compare_exchange(UNASSIGNED, v, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    };
    let mut frontier: Vec<VertexId> = (0..n as VertexId)
        .into_par_iter()
        .filter(|&v| {
            (indeg[v as usize].load(Ordering::Relaxed) == 0
                || outdeg[v as usize].load(Ordering::Relaxed) == 0)
                && claim(v)
        })
        .collect();
    while !frontier.is_empty() {
        frontier = frontier
            .par_iter()
            .with_max_len(64)
            .flat_map_iter(|&v| {
                let (indeg, outdeg) = (&indeg, &outdeg);
                let via_out = g.out_neighbors(v).iter().copied().filter(move |&u| {
                    u != v && indeg[u as usize].fetch_sub(1, Ordering::Relaxed) == 1
                });
                let via_in = g.in_neighbors(v).iter().copied().filter(move |&u| {
                    u != v && outdeg[u as usize].fetch_sub(1, Ordering::Relaxed) == 1
                });
                via_out.chain(via_in).filter(|&u| claim(u))
            })
            .collect();
    }
}

/// The vertices `seeds` reach along the arcs of `g` through vertices where
/// `allowed` holds, each step staying within one class (`seeds` included;
/// every seed must be allowed), as flags: a BFS without depths, run by
/// [`Reach`] on the in-memory executor, which pushes from a small frontier
/// and pulls (first active in-neighbour of the same class wins) once it is
/// large, as direction-optimising BFS does. A search of the arcs backwards
/// runs on [`Graph::reversed`].
///
/// `class` must never decrease along an arc of `g` between allowed
/// vertices (`class(u) <= class(v)` for an arc `u → v`), so that a vertex
/// hears its own class as the largest that arrives (see [`Reach`]): true of
/// one class for all (forward–backward, `|_| 0`) and of the colours at
/// their fixed point searched backwards (an arc `u → v` of the reversed
/// graph is `v → u` of the graph, and whatever reaches `v` reaches `u`).
fn reach(
    g: &Graph,
    seeds: VertexSubset,
    allowed: impl Fn(VertexId) -> bool + Sync,
    class: impl Fn(VertexId) -> u32 + Sync,
    opts: &StepOptions,
) -> Vec<AtomicBool> {
    let n = g.num_vertices();
    let seen: Vec<AtomicBool> = (0..n)
        .into_par_iter()
        .map(|_| AtomicBool::new(false))
        .collect();
    let program = Reach {
        seen: &seen,
        allowed,
        class,
    };
    let exec = InMemory::new(g);
    seeds
        .iter()
        .for_each(|v| seen[v as usize].store(true, Ordering::Relaxed));
    let mut frontier = seeds;
    while !frontier.is_empty() {
        frontier = exec.superstep(&program, &frontier, opts).next;
    }
    seen
}

/// The vertex program of [`reach`]: a vertex is claimed once, by the first
/// message of its own class that finds it unseen and allowed. The message
/// is the sender's class and messages combine by their maximum: since no
/// sender's class exceeds the receiver's, the maximum is the receiver's
/// class exactly when one of the messages is (the slot law holds).
struct Reach<'a, F, C> {
    seen: &'a [AtomicBool],
    allowed: F,
    class: C,
}

impl<F, C> VertexProgram for Reach<'_, F, C>
where
    F: Fn(VertexId) -> bool + Sync,
    C: Fn(VertexId) -> u32 + Sync,
{
    /// The sender's class.
    type Msg = u32;

    fn combine(&self, a: u32, b: u32) -> u32 {
        a.max(b)
    }

    fn cond(&self, v: VertexId) -> bool {
        !self.seen[v as usize].load(Ordering::Relaxed) && (self.allowed)(v)
    }

    fn sparse_signal(&self, src: VertexId) -> Option<u32> {
        Some((self.class)(src))
    }

    fn sparse_slot(&self, dst: VertexId, class: u32) -> bool {
        let seen = &self.seen[dst as usize];
        !seen.load(Ordering::Relaxed)
            && (self.allowed)(dst)
            && {
                let own = (self.class)(dst);
                debug_assert!(class <= own, "a class decreased along an arc");
                class == own
            }
            && claim(seen)
    }

    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<u32> {
        // Any in-neighbour of the same class on the frontier will do: stop
        // at the first.
        let own = (self.class)(v);
        edges
            .sources()
            .iter()
            .any(|&u| edges.is_active(u) && (self.class)(u) == own)
            .then_some(own)
    }

    fn dense_slot(&self, v: VertexId, _class: u32) -> bool {
        // One thread owns `v` in dense mode; `cond` said it is unseen, and
        // the signal came from its own class.
        self.seen[v as usize].store(true, Ordering::Relaxed);
        true
    }
}

/// Sets `flag`; whether this call set it. A plain load first, so that an
/// edge to a vertex already claimed costs no locked instruction.
#[inline]
fn claim(flag: &AtomicBool) -> bool {
    !flag.load(Ordering::Relaxed) && !flag.swap(true, Ordering::Relaxed)
}

/// SCC on any executor through [`SccDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, SccDriver::new(exec.view(), cfg)?)
}

/// The phases of [`SccDriver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Forward propagation of the smallest colour among unassigned vertices.
    Colour,
    /// Backward reach from each root within its colour.
    Back,
}

/// The program of [`SccDriver`]: in the colour phase WCC's min-label rule
/// along out-edges among unassigned vertices (messages combine by
/// minimum); in the backward phase [`Reach`]'s rule with the colours as
/// classes (messages combine by maximum).
#[derive(Debug)]
pub struct Colouring {
    comp: Vec<AtomicU32>,
    colour: Vec<AtomicU32>,
    seen: Vec<AtomicBool>,
    phase: Phase,
}

impl Colouring {
    #[inline]
    fn open(&self, v: VertexId) -> bool {
        self.comp[v as usize].load(Ordering::Relaxed) == UNASSIGNED
    }
    #[inline]
    fn colour(&self, v: VertexId) -> u32 {
        self.colour[v as usize].load(Ordering::Relaxed)
    }
    #[inline]
    fn lower(&self, v: VertexId, c: u32) -> bool {
        let cell = &self.colour[v as usize];
        self.open(v) && c < cell.load(Ordering::Relaxed) && c < cell.fetch_min(c, Ordering::Relaxed)
    }
}

impl VertexProgram for Colouring {
    /// A colour (a vertex id).
    type Msg = u32;

    fn combine(&self, a: u32, b: u32) -> u32 {
        match self.phase {
            Phase::Colour => a.min(b),
            Phase::Back => a.max(b),
        }
    }

    fn cond(&self, v: VertexId) -> bool {
        match self.phase {
            Phase::Colour => self.open(v),
            Phase::Back => self.open(v) && !self.seen[v as usize].load(Ordering::Relaxed),
        }
    }

    fn sparse_signal(&self, src: VertexId) -> Option<u32> {
        Some(self.colour(src))
    }

    fn sparse_slot(&self, dst: VertexId, c: u32) -> bool {
        match self.phase {
            Phase::Colour => self.lower(dst, c),
            Phase::Back => {
                self.cond(dst) && c == self.colour(dst) && claim(&self.seen[dst as usize])
            }
        }
    }

    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<u32> {
        match self.phase {
            Phase::Colour => edges
                .active()
                .filter(|&(u, _)| self.open(u))
                .map(|(u, _)| self.colour(u))
                .min(),
            Phase::Back => {
                let own = self.colour(v);
                edges
                    .active()
                    .any(|(u, _)| self.open(u) && self.colour(u) == own)
                    .then_some(own)
            }
        }
    }

    fn dense_slot(&self, v: VertexId, c: u32) -> bool {
        match self.phase {
            Phase::Colour => self.lower(v, c),
            Phase::Back => {
                c == self.colour(v) && {
                    self.seen[v as usize].store(true, Ordering::Relaxed);
                    true
                }
            }
        }
    }
}

/// SCC as a step machine that any executor runs: colouring rounds
/// (Orzan; Slota et al.) until every vertex is assigned. A round
/// propagates the smallest colour forward among unassigned vertices until
/// stable, so `colour[v]` is the smallest unassigned id that reaches `v`;
/// each root `r` (`colour[r] == r`) is the smallest id of its component,
/// which is the set of vertices of colour `r` that reach `r` (a backward
/// reach from every root at once, each step within a colour). Labels
/// equal [`run`]'s. A chain of `k` components takes `k` rounds; the
/// in-memory kernel trims and finishes with Pearce's search instead.
#[derive(Debug)]
pub struct SccDriver {
    p: Colouring,
    frontier: Option<VertexSubset>,
    rounds: usize,
}

impl SccDriver {
    /// SCC over a graph seen through `view`.
    pub fn new(view: &dyn GraphView, _cfg: &Config) -> Result<Self, AlgoError> {
        let n = view.num_vertices();
        Ok(SccDriver {
            p: Colouring {
                comp: (0..n).map(|_| AtomicU32::new(UNASSIGNED)).collect(),
                colour: (0..n as u32).map(AtomicU32::new).collect(),
                seen: (0..n).map(|_| AtomicBool::new(false)).collect(),
                phase: Phase::Colour,
            },
            frontier: Some(VertexSubset::all(n)),
            rounds: 0,
        })
    }

    /// Ends a round: the seen vertices join their root's component; the
    /// rest start the next round with their own ids as colours.
    fn close_round<V: Vertices>(&mut self, ops: &V) -> VertexSubset {
        let n = self.p.comp.len();
        let p = &self.p;
        ops.process_vertices(&VertexSubset::all(n), |v| {
            if !p.open(v) {
                return false;
            }
            if p.seen[v as usize].load(Ordering::Relaxed) {
                p.comp[v as usize].store(p.colour(v), Ordering::Relaxed);
                false
            } else {
                p.colour[v as usize].store(v, Ordering::Relaxed);
                true
            }
        })
    }
}

impl Driver for SccDriver {
    type Program = Colouring;
    type Output = Output;

    fn program(&self) -> &Colouring {
        &self.p
    }

    fn options(&self) -> StepOptions {
        StepOptions {
            reverse: self.p.phase == Phase::Back,
            ..StepOptions::default()
        }
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = self.p.comp.len();
        if let Some(f) = self.frontier.take().filter(|f| !f.is_empty()) {
            return Some(f);
        }
        match self.p.phase {
            Phase::Colour => {
                // Colours are stable: the roots seed the backward reach.
                self.p.phase = Phase::Back;
                let p = &self.p;
                let roots = ops.process_vertices(&VertexSubset::all(n), |v| {
                    let root = p.open(v) && p.colour(v) == v;
                    if root {
                        p.seen[v as usize].store(true, Ordering::Relaxed);
                    }
                    root
                });
                Some(roots).filter(|r| !r.is_empty())
            }
            Phase::Back => {
                self.rounds += 1;
                self.p.phase = Phase::Colour;
                let rest = self.close_round(ops);
                Some(rest).filter(|r| !r.is_empty())
            }
        }
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        // A push may list a vertex once per message that changed it.
        self.frontier = Some(next.deduplicated());
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        let component: Vec<u32> = self.p.comp.into_iter().map(AtomicU32::into_inner).collect();
        let count = component
            .iter()
            .enumerate()
            .filter(|&(v, &c)| c as usize == v)
            .count();
        Output { component, count }
    }

    fn state_bytes(&self) -> u64 {
        9 * self.p.comp.len() as u64
    }
}

/// Computes the components sequentially by Tarjan's algorithm, with an
/// explicit stack instead of recursion.
pub fn reference(g: &Graph, _cfg: &Config) -> Result<Output, AlgoError> {
    let n = g.num_vertices();
    Ok(labelled(n, |found| {
        tarjan(g, 0..n as VertexId, |_| true, found)
    }))
}

/// Iterative Tarjan over the subgraph induced by the vertices where
/// `allowed` holds, starting DFS trees at `starts` in order. Calls
/// `found(members, smallest id)` once per component.
fn tarjan(
    g: &Graph,
    starts: impl Iterator<Item = VertexId>,
    allowed: impl Fn(VertexId) -> bool,
    mut found: impl FnMut(&[VertexId], u32),
) {
    let n = g.num_vertices();
    let mut index = vec![UNASSIGNED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<VertexId> = Vec::new();
    let mut next_index = 0u32;
    // Call stack of (vertex, position in its out-neighbour list).
    let mut calls: Vec<(VertexId, usize)> = Vec::new();
    for root in starts {
        if index[root as usize] != UNASSIGNED || !allowed(root) {
            continue;
        }
        calls.push((root, 0));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut pos)) = calls.last_mut() {
            let nb = g.out_neighbors(v);
            if *pos < nb.len() {
                let w = nb[*pos];
                *pos += 1;
                if !allowed(w) {
                    continue;
                }
                if index[w as usize] == UNASSIGNED {
                    index[w as usize] = next_index;
                    low[w as usize] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    calls.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                let start = stack.iter().rposition(|&x| x == v).unwrap_or(0);
                let members = stack.split_off(start);
                for &x in &members {
                    on_stack[x as usize] = false;
                }
                let label = members.iter().copied().min().unwrap_or(v);
                found(&members, label);
            }
        }
    }
}

/// Checks `out` against Kosaraju's algorithm (iterative): the partition into
/// components must be the same, every label must be the smallest id of its
/// component, and `count` must match. Names the vertex that disagrees.
pub fn verify(g: &Graph, _cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.component.len() != n {
        return Err(VerifyError::new(format!(
            "component has {} entries for {n} vertices",
            out.component.len()
        )));
    }
    let want = kosaraju(g);
    if let Some(v) = (0..n).find(|&v| want[v] != out.component[v]) {
        let w = out.component[v];
        let why = if (w as usize) < n && want[w as usize] == want[v] {
            format!("{w} is in its component but {} is its smallest id", want[v])
        } else {
            format!("its component's smallest id is {}", want[v])
        };
        return Err(VerifyError::new(format!(
            "vertex {v} is labelled {w}, but {why}"
        )));
    }
    let count = (0..n).filter(|&v| want[v] == v as u32).count();
    if count != out.count {
        return Err(VerifyError::new(format!(
            "count is {} but there are {count} components",
            out.count
        )));
    }
    Ok(())
}

/// Kosaraju's algorithm: finishing order of a DFS on out-edges, then DFS on
/// in-edges in reverse finishing order; each second-pass tree is a
/// component. Labels are then replaced by the smallest member id.
fn kosaraju(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    let mut visited = vec![false; n];
    let mut finish: Vec<VertexId> = Vec::with_capacity(n);
    let mut calls: Vec<(VertexId, usize)> = Vec::new();
    for root in 0..n as VertexId {
        if visited[root as usize] {
            continue;
        }
        visited[root as usize] = true;
        calls.push((root, 0));
        while let Some(&mut (v, ref mut pos)) = calls.last_mut() {
            let nb = g.out_neighbors(v);
            if let Some(&w) = nb.get(*pos) {
                *pos += 1;
                if !visited[w as usize] {
                    visited[w as usize] = true;
                    calls.push((w, 0));
                }
            } else {
                finish.push(v);
                calls.pop();
            }
        }
    }
    let mut tree = vec![UNASSIGNED; n];
    let mut todo: Vec<VertexId> = Vec::new();
    for &root in finish.iter().rev() {
        if tree[root as usize] != UNASSIGNED {
            continue;
        }
        tree[root as usize] = root;
        todo.push(root);
        while let Some(v) = todo.pop() {
            for &w in g.in_neighbors(v) {
                if tree[w as usize] == UNASSIGNED {
                    tree[w as usize] = root;
                    todo.push(w);
                }
            }
        }
    }
    let mut smallest = vec![UNASSIGNED; n];
    for (v, &t) in tree.iter().enumerate() {
        let t = t as usize;
        smallest[t] = smallest[t].min(v as u32);
    }
    (0..n).map(|v| smallest[tree[v] as usize]).collect()
}

/// The conformance check of [`SccDriver`] on `exec` (see
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
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::edge_map::Direction;
    use crate::with_threads;
    use proptest::prelude::*;

    #[test]
    fn two_cycles_joined_by_a_bridge_and_a_tail() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 4 -> 3, 4 -> 5, isolated 6.
        let e = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (4, 5)];
        let g = graph(7, &e, true);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.component, vec![0, 0, 0, 3, 3, 5, 6]);
        assert_eq!(out.count, 4);
        assert_eq!(out, reference(&g, &Config::default()).unwrap());
        verify(&g, &Config::default(), &out).unwrap();
    }

    #[test]
    fn undirected_components_are_connected_components() {
        let g = graph(6, &[(5, 3), (3, 4), (1, 2), (0, 0)], false);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.component, vec![0, 1, 1, 3, 3, 3]);
        assert_eq!(out.count, 3);
    }

    #[test]
    fn a_long_cycle_and_a_long_path_do_not_overflow_the_stack() {
        let n = 200_000u32;
        let mut e: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        let g = graph(n as usize, &e, true);
        let out = reference(&g, &Config::default()).unwrap();
        assert_eq!(out.count, n as usize);
        verify(&g, &Config::default(), &out).unwrap();
        e.push((n - 1, 0));
        let g = graph(n as usize, &e, true);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.count, 1);
        assert_eq!(out, reference(&g, &Config::default()).unwrap());
    }

    #[test]
    fn chains_of_two_cycles_take_several_colouring_rounds() {
        // 300 two-cycles {2i, 2i+1}, chained upwards (one component per
        // colouring round) or downwards (all in one round), with no serial
        // finish.
        for upwards in [true, false] {
            let mut e = Vec::new();
            for i in 0..300u32 {
                e.push((2 * i, 2 * i + 1));
                e.push((2 * i + 1, 2 * i));
                if i > 0 {
                    e.push(if upwards {
                        (2 * i - 1, 2 * i)
                    } else {
                        (2 * i, 2 * i - 1)
                    });
                }
            }
            let g = graph(600, &e, true);
            let want = reference(&g, &Config::default()).unwrap();
            assert_eq!(want.count, 300);
            for t in THREADS {
                let got =
                    with_threads(t, || run_with_cutoff(&g, 0, &StepOptions::default())).unwrap();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn a_self_loop_keeps_a_vertex_from_the_trim_and_it_is_still_alone() {
        // 0 → 1 → 2 with a loop on 1, and the two-cycle 3 ⇄ 4 fed by 2.
        let e = [(0, 1), (1, 1), (1, 2), (2, 3), (3, 4), (4, 3)];
        let g = graph(5, &e, true);
        let comp: Vec<AtomicU32> = (0..5).map(|_| AtomicU32::new(UNASSIGNED)).collect();
        trim(&g, &comp);
        let left: Vec<u32> = comp.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        // 0 has no in-edge and goes; 1's loop keeps both its counters above 0.
        assert_eq!(left[0], 0);
        assert_eq!(left[1], UNASSIGNED);
        assert_eq!(left[3..], [UNASSIGNED, UNASSIGNED]);
        let want = reference(&g, &Config::default()).unwrap();
        assert_eq!(want.component, vec![0, 1, 2, 3, 3]);
        for cutoff in [0, usize::MAX] {
            for t in THREADS {
                let got = with_threads(t, || run_with_cutoff(&g, cutoff, &StepOptions::default()))
                    .unwrap();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn verifier_rejects_merged_split_and_non_minimal_labels() {
        let e = [(0, 1), (1, 0), (1, 2)];
        let g = graph(3, &e, true);
        let cfg = Config::default();
        let not_min = Output {
            component: vec![1, 1, 2],
            count: 2,
        };
        let err = verify(&g, &cfg, &not_min).unwrap_err();
        assert!(err.0.contains("vertex 0"), "{err}");
        let merged = Output {
            component: vec![0, 0, 0],
            count: 1,
        };
        let err = verify(&g, &cfg, &merged).unwrap_err();
        assert!(err.0.contains("vertex 2"), "{err}");
        let miscounted = Output {
            component: vec![0, 0, 2],
            count: 3,
        };
        assert!(verify(&g, &cfg, &miscounted).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_reference_at_any_thread_count(spec in graphs()) {
            let g = spec.build();
            let cfg = Config::default();
            let want = reference(&g, &cfg).unwrap();
            for t in THREADS {
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                prop_assert_eq!(&got, &want);
                // Colouring to the end, each search pushing only, pulling
                // only, or choosing by frontier size.
                for direction in [Direction::Push, Direction::Pull, Direction::Auto] {
                    let opts = StepOptions { direction, ..StepOptions::default() };
                    let coloured = with_threads(t, || run_with_cutoff(&g, 0, &opts)).unwrap();
                    prop_assert_eq!(&coloured, &want, "{:?}", direction);
                }
                // Trim and forward–backward, then Pearce on the rest.
                let tail = with_threads(t, || run_with_cutoff(&g, usize::MAX, &StepOptions::default()))
                    .unwrap();
                prop_assert_eq!(&tail, &want);
            }
            prop_assert!(verify(&g, &cfg, &want).is_ok());
        }
    }
}
