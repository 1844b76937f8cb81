//! Breadth-first search from one source along out-edges.
//!
//! **Returns** [`Output`]: `depth[v]` is the number of hops on a shortest
//! path `source ⇝ v`, `parent[v]` the vertex before `v` on one such path
//! (the source is its own parent), `iterations` the number of supersteps
//! that expanded a non-empty frontier (the source's eccentricity plus one).
//! Unreachable vertices have `depth = parent = u32::MAX`. Depths are unique;
//! parents are not (any in-neighbour one level up is valid), so runs may
//! differ in parents but never in depths.
//!
//! **Method.** Direction-optimising BFS (Beamer, Asanović & Patterson,
//! "Direction-optimizing breadth-first search", SC'12), written as a
//! [`VertexProgram`]: a small frontier pushes along out-edges claiming
//! unvisited vertices with a compare-and-swap; a large one (active vertices
//! plus their out-edges above `|E| / 20`, Ligra's rule) makes every
//! unvisited vertex pull from its in-edges and stop at the first visited
//! in-neighbour on the frontier. Every executor runs the program; on one
//! machine in memory, [`run`] takes the pull levels itself ([`bottom_up`]:
//! the same per-vertex work without the program interface's generality,
//! a third faster on Kronecker graphs), small push levels in a team of
//! threads, and the rest as the executor's supersteps.
//!
//! **Input.** Any graph; weights are ignored; self-loops and duplicate
//! edges are harmless. For undirected graphs out-edges go both ways.
use std::sync::atomic::{AtomicU32, Ordering};

use plexus_graph::{Graph, VertexId};

use crate::driver::{drive, Driver};
use crate::edge_map::Direction;
use crate::error::{AlgoError, VerifyError};
use crate::program::{
    Executor, GraphView, InEdges, InMemory, StepOptions, VertexProgram, Vertices,
};
use crate::subset::VertexSubset;
use crate::vertex_array::{Backing, VertexArray};

/// Sentinel for "not reached" in `depth` and `parent`.
pub const UNREACHED: u32 = u32::MAX;
/// Default source vertex (internal id).
pub const DEFAULT_SOURCE: VertexId = 0;

/// BFS parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Source vertex (internal id). Default [`DEFAULT_SOURCE`].
    pub source: VertexId,
    /// Push, pull, or decide per level (default: decide by Ligra's rule).
    pub direction: Direction,
    /// Override of the push/pull threshold in active vertices + out-edges
    /// (default `None`: `|E| / 20`).
    pub threshold: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            source: DEFAULT_SOURCE,
            direction: Direction::Auto,
            threshold: None,
        }
    }
}

/// BFS result, indexed by internal id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Hops from the source; [`UNREACHED`] when unreachable.
    pub depth: Vec<u32>,
    /// Predecessor on a shortest path; the source's is itself; [`UNREACHED`] when unreachable.
    pub parent: Vec<u32>,
    /// Number of non-empty frontiers expanded (max depth + 1).
    pub iterations: usize,
}

/// The BFS vertex program: claims unvisited vertices for the current level.
#[derive(Debug)]
pub struct Program {
    parent: VertexArray<AtomicU32>,
    depth: VertexArray<AtomicU32>,
    /// Depth given to vertices claimed in the current superstep.
    level: u32,
}

impl Program {
    /// A program on `n` vertices with `source` visited at depth 0.
    pub fn new(n: usize, source: VertexId) -> Self {
        // Written in parallel, on huge pages: pushes claim parents in
        // random order.
        let heap =
            || VertexArray::heap(crate::hugepages::from_fn(n, |_| AtomicU32::new(UNREACHED)));
        Self::with_arrays(heap(), heap(), source)
    }

    /// A program on `n` vertices with `source` visited at depth 0, its
    /// arrays in `backing` (the heap when `None`; see
    /// [`crate::vertex_array`]).
    pub fn new_in(
        backing: Option<&dyn Backing>,
        n: usize,
        source: VertexId,
    ) -> Result<Self, AlgoError> {
        let make = |name| VertexArray::from_fn(backing, name, n, |_| AtomicU32::new(UNREACHED));
        Ok(Self::with_arrays(
            make("bfs-parent")?,
            make("bfs-depth")?,
            source,
        ))
    }

    fn with_arrays(
        parent: VertexArray<AtomicU32>,
        depth: VertexArray<AtomicU32>,
        source: VertexId,
    ) -> Self {
        let p = Program {
            parent,
            depth,
            level: 0,
        };
        if let (Some(a), Some(b)) = (p.parent.get(source as usize), p.depth.get(source as usize)) {
            a.store(source, Ordering::Relaxed);
            b.store(0, Ordering::Relaxed);
        }
        p
    }

    /// Sets the depth given to vertices claimed by the next superstep.
    pub fn set_level(&mut self, level: u32) {
        self.level = level;
    }

    /// Consumes the program and returns `(depth, parent)`.
    pub fn into_parts(self) -> (Vec<u32>, Vec<u32>) {
        (
            into_plain(self.depth.into_vec()),
            into_plain(self.parent.into_vec()),
        )
    }
}

impl VertexProgram for Program {
    /// The id of the sending vertex: the parent it offers.
    type Msg = VertexId;

    fn combine(&self, a: VertexId, b: VertexId) -> VertexId {
        a.min(b)
    }

    fn cond(&self, v: VertexId) -> bool {
        self.parent[v as usize].load(Ordering::Relaxed) == UNREACHED
    }

    fn sparse_signal(&self, src: VertexId) -> Option<VertexId> {
        Some(src)
    }

    fn sparse_slot(&self, dst: VertexId, msg: VertexId) -> bool {
        let parent = &self.parent[dst as usize];
        // A plain load first (as GAPBS): most pushes reach vertices already
        // claimed, and a compare-exchange would take the cache line
        // exclusively for nothing.
        let claimed = parent.load(Ordering::Relaxed) == UNREACHED
            && parent
                .compare_exchange(UNREACHED, msg, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        if claimed {
            self.depth[dst as usize].store(self.level, Ordering::Relaxed);
        }
        claimed
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<VertexId> {
        // Any in-neighbour on the frontier will do: stop at the first.
        edges
            .sources()
            .iter()
            .copied()
            .find(|&u| edges.is_active(u))
    }

    fn dense_slot(&self, v: VertexId, msg: VertexId) -> bool {
        // One thread owns `v` in dense mode; `cond` said it is unvisited.
        self.parent[v as usize].store(msg, Ordering::Relaxed);
        self.depth[v as usize].store(self.level, Ordering::Relaxed);
        true
    }
}

/// The values of `cells`, in place (no pass over the array: BFS's output
/// arrays are 16 MiB each on Kronecker scale 22).
fn into_plain(cells: Vec<AtomicU32>) -> Vec<u32> {
    let mut cells = std::mem::ManuallyDrop::new(cells);
    let (ptr, len, cap) = (cells.as_mut_ptr(), cells.len(), cells.capacity());
    // SAFETY: `AtomicU32` has the same size, alignment and bit validity as
    // `u32` (std documents it), so the allocation of `cap` cells is one of
    // `cap` `u32`s with the same layout, and its first `len` are
    // initialised; `cells` is not dropped, so the allocation has one owner.
    #[allow(unsafe_code)]
    unsafe {
        Vec::from_raw_parts(ptr.cast::<u32>(), len, cap)
    }
}

/// Runs one level of [`run`] outside the executor: reports the superstep
/// to the progress observer and, under `PLEXUS_TRACE`, prints its time.
fn traced_level(
    what: &str,
    frontier: &VertexSubset,
    level: impl FnOnce(&VertexSubset) -> VertexSubset,
) -> VertexSubset {
    crate::progress::superstep(frontier.len() as u64);
    let started = crate::program::trace_enabled().then(std::time::Instant::now);
    let next = level(frontier);
    if let Some(t) = started {
        eprintln!(
            "plexus-trace bfs {what} frontier {} next {} {:.3} ms",
            frontier.len(),
            next.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    next
}

/// One pull (bottom-up) level of [`run`]: every unvisited vertex takes the
/// first in-neighbour on `frontier` (a bitmap) as its parent, at depth
/// `p.level` (GAPBS's `BUStep`). The same claims as the program's dense
/// step; returns the vertices claimed, as a bitmap.
fn bottom_up(g: &Graph, p: &Program, frontier: &[u64]) -> VertexSubset {
    let (offsets, sources) = (g.inc().offsets(), g.inc().neighbor_array());
    let n = g.num_vertices();
    let (parent, depth, level) = (&p.parent[..], &p.depth[..], p.level);
    crate::edge_map::pull_vertices(g, |v| {
        let v = v as usize;
        // The in-list of a vertex a few ids on starts on a line that
        // misses the cache: ask for it now if it will be read.
        let ahead = v + crate::program::DENSE_PREFETCH_AHEAD;
        if ahead < n && parent[ahead].load(Ordering::Relaxed) == UNREACHED {
            crate::prefetch::prefetch(sources, offsets[ahead] as usize);
        }
        if parent[v].load(Ordering::Relaxed) != UNREACHED {
            return false;
        }
        let list = &sources[offsets[v] as usize..offsets[v + 1] as usize];
        match list.iter().find(|&&u| crate::subset::bit(frontier, u)) {
            Some(&u) => {
                // One thread owns `v` in a pull level.
                parent[v].store(u, Ordering::Relaxed);
                depth[v].store(level, Ordering::Relaxed);
                true
            }
            None => false,
        }
    })
}

/// One push (top-down) level of [`run`] from a frontier held as a bitmap
/// (the output of a [`bottom_up`] level): the members are listed in id
/// order, and each claims its unvisited out-neighbours with the program's
/// `sparse_slot`. Such a frontier is large and its members are scattered,
/// so every member's offsets and out-list miss the cache
/// ([`for_out_edges_prefetched`]).
fn top_down_from_bitmap(g: &Graph, p: &Program, frontier: &VertexSubset) -> VertexSubset {
    use rayon::prelude::*;
    let ids = frontier.to_sorted_vec();
    let parts: Vec<Vec<VertexId>> = ids
        .par_chunks(TOP_DOWN_GRAIN)
        .map(|members| {
            let mut acc = Vec::new();
            for_out_edges_prefetched(g.out(), members, |u, v| {
                if p.sparse_slot(v, u) {
                    acc.push(v);
                }
            });
            acc
        })
        .collect();
    VertexSubset::from_distinct_ids(g.num_vertices(), crate::edge_map::concat(parts))
}

/// Calls `visit(u, v)` for every out-edge `u → v` of every vertex `u` of
/// `members`, in order. The members' offsets and out-lists are likely
/// cache misses (scattered members, or a frontier just claimed by either
/// thread) and the offset is needed to find the list, so the offsets are
/// asked for [`TOP_DOWN_AHEAD`] members ahead and, once they have arrived,
/// the list half as far: no load waits on memory for long.
#[inline(always)]
fn for_out_edges_prefetched(
    out: &plexus_graph::Adjacency,
    members: &[VertexId],
    mut visit: impl FnMut(VertexId, VertexId),
) {
    use crate::prefetch::prefetch;
    let (offsets, targets) = (out.offsets(), out.neighbor_array());
    let list_of = |w: VertexId| prefetch(targets, offsets[w as usize] as usize);
    for &w in members.iter().take(TOP_DOWN_AHEAD) {
        prefetch(offsets, w as usize);
    }
    members
        .iter()
        .take(TOP_DOWN_AHEAD / 2)
        .for_each(|&w| list_of(w));
    for (k, &u) in members.iter().enumerate() {
        if let Some(&w) = members.get(k + TOP_DOWN_AHEAD) {
            prefetch(offsets, w as usize);
        }
        if let Some(&w) = members.get(k + TOP_DOWN_AHEAD / 2) {
            list_of(w);
        }
        for &v in out.neighbors(u) {
            visit(u, v);
        }
    }
}

/// How many frontier members ahead [`for_out_edges_prefetched`] asks for
/// offsets (and half as far, for out-lists).
const TOP_DOWN_AHEAD: usize = 16;

/// Frontier members per task of [`top_down_from_bitmap`].
const TOP_DOWN_GRAIN: usize = 1024;

/// BFS as a step machine that any executor runs: one level per superstep
/// until the frontier is empty (or `max_depth` levels, for `nhop`). Its
/// depths equal [`run`]'s on every executor; parents may differ (any
/// in-neighbour one level up is valid).
#[derive(Debug)]
pub struct BfsDriver {
    p: Program,
    frontier: Option<VertexSubset>,
    level: u32,
    max_depth: u32,
    opts: StepOptions,
}

impl BfsDriver {
    /// BFS from `cfg.source` over a graph seen through `view`.
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        Self::with_backing(view, cfg, None)
    }

    /// BFS from `cfg.source` with its parent and depth arrays in `backing`
    /// (the executor's [`Vertices::backing`]; the heap when `None`).
    pub fn with_backing(
        view: &dyn GraphView,
        cfg: &Config,
        backing: Option<&dyn Backing>,
    ) -> Result<Self, AlgoError> {
        check_source(view, cfg.source)?;
        let n = view.num_vertices();
        Ok(BfsDriver {
            p: Program::new_in(backing, n, cfg.source)?,
            frontier: Some(VertexSubset::from_vertex(n, cfg.source)),
            level: 0,
            max_depth: u32::MAX,
            opts: StepOptions {
                direction: cfg.direction,
                threshold: cfg.threshold,
                ..StepOptions::default()
            },
        })
    }

    /// Stops after `max_depth` levels.
    pub fn up_to(mut self, max_depth: u32) -> Self {
        self.max_depth = max_depth;
        self
    }
}

impl Driver for BfsDriver {
    type Program = Program;
    type Output = Output;

    fn program(&self) -> &Program {
        &self.p
    }

    fn options(&self) -> StepOptions {
        self.opts
    }

    fn next_frontier<V: Vertices>(&mut self, _ops: &V) -> Option<VertexSubset> {
        let f = self.frontier.take()?;
        if f.is_empty() || self.level >= self.max_depth {
            return None;
        }
        self.level += 1;
        self.p.set_level(self.level);
        Some(f)
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        self.frontier = Some(next);
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        let (depth, parent) = self.p.into_parts();
        Output {
            depth,
            parent,
            iterations: self.level as usize,
        }
    }

    fn state_bytes(&self) -> u64 {
        let n = self.p.parent.len() as u64;
        8 * n + self.frontier.as_ref().map_or(0, |f| 4 * f.len() as u64)
    }
}

/// BFS on any executor through [`BfsDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(
        exec,
        BfsDriver::with_backing(exec.view(), cfg, exec.backing())?,
    )
}

fn check_source(g: &dyn GraphView, source: VertexId) -> Result<(), AlgoError> {
    if (source as usize) < g.num_vertices() {
        Ok(())
    } else {
        Err(AlgoError::NoSuchVertex(u64::from(source)))
    }
}

/// Runs direction-optimising BFS in parallel on the current rayon pool.
///
/// Levels whose frontier has at most [`TEAM_MAX_WORK`] vertices + out-edges
/// (and that push) run in [`small_levels`], a team of the pool's threads
/// that stays together across levels (when no other team runs, see
/// [`crate::team`]); the others run as supersteps of the in-memory
/// executor. Depths are the same either way.
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    check_source(g, cfg.source)?;
    let opts = StepOptions {
        direction: cfg.direction,
        threshold: cfg.threshold,
        ..StepOptions::default()
    };
    let exec = InMemory::new(g);
    let n = g.num_vertices();
    let mut p = Program::new(n, cfg.source);
    let mut frontier = VertexSubset::from_vertex(n, cfg.source);
    let mut level = 0u32;
    while !frontier.is_empty() {
        // The length test first: a large frontier skips the degree sum
        // (the executor's direction rule computes its own).
        let small = cfg.direction != Direction::Pull
            && frontier.len() as u64 <= TEAM_MAX_WORK
            && frontier.len() as u64 + frontier.out_degree_sum(g) <= TEAM_MAX_WORK;
        if small {
            if let Some(_team) = crate::team::exclusive() {
                let started = crate::program::trace_enabled().then(std::time::Instant::now);
                let (from, ids) = (level, frontier.to_sorted_vec());
                frontier = VertexSubset::from_distinct_ids(n, small_levels(g, &p, ids, &mut level));
                if let Some(t) = started {
                    eprintln!(
                        "plexus-trace team levels {from}..{level} next {} {:.3} ms",
                        frontier.len(),
                        t.elapsed().as_secs_f64() * 1e3
                    );
                }
                continue;
            }
        }
        level += 1;
        p.set_level(level);
        if crate::edge_map::decide(g, &frontier, &opts) == crate::edge_map::Mode::Dense {
            frontier = traced_level("bottom-up", &frontier, |f| {
                let converted;
                let words = match f.as_bitmap() {
                    Some(w) => w,
                    None => {
                        converted = f.to_dense();
                        converted.as_bitmap().unwrap_or(&[])
                    }
                };
                bottom_up(g, &p, words)
            });
        } else if frontier.as_bitmap().is_some() {
            frontier = traced_level("top-down from a bitmap", &frontier, |f| {
                top_down_from_bitmap(g, &p, f)
            });
        } else {
            let push = StepOptions {
                direction: Direction::Push,
                ..opts
            };
            frontier = exec.superstep(&p, &frontier, &push).next;
        }
    }
    let (depth, parent) = p.into_parts();
    Ok(Output {
        depth,
        parent,
        iterations: level as usize,
    })
}

/// Most vertices + out-edges of a frontier that [`small_levels`] expands;
/// above it a level is a superstep of the executor (which balances heavy
/// vertices and may pull).
pub const TEAM_MAX_WORK: u64 = 1 << 15;

/// Vertices a team thread takes from the frontier at a time.
const TEAM_GRAIN: usize = 64;

/// Expands top-down levels from `frontier` (distinct ids, at depth
/// `*level`) while each frontier stays within [`TEAM_MAX_WORK`]; returns
/// the first frontier that does not (empty when the search is over), with
/// `*level` its depth. Every thread of the pool runs the levels
/// (`rayon::broadcast`) and meets the others at a [`SpinBarrier`] between
/// them, so no level pays for waking sleeping workers. The calling thread
/// gathers each next frontier and records progress.
fn small_levels(g: &Graph, p: &Program, frontier: Vec<VertexId>, level: &mut u32) -> Vec<VertexId> {
    use crate::team::SpinBarrier;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    let threads = rayon::current_num_threads();
    let out = g.out();
    // Two frontier buffers used in turn (GAPBS's sliding queue): a level
    // reads one and appends to the other, each thread reserving its run
    // with one `fetch_add`. A level here has at most TEAM_MAX_WORK
    // vertices + out-edges, so neither frontier can outgrow that.
    let capacity = (TEAM_MAX_WORK as usize).max(frontier.len());
    let buffers: [Vec<AtomicU32>; 2] =
        [0, 1].map(|_| (0..capacity).map(|_| AtomicU32::new(0)).collect());
    for (cell, &v) in buffers[0].iter().zip(&frontier) {
        cell.store(v, Ordering::Relaxed);
    }
    let current_len = AtomicUsize::new(frontier.len());
    let next_len = AtomicUsize::new(0);
    // Vertices + out-edges of the next frontier, summed where claimed.
    let next_work = AtomicU64::new(0);
    let cursor = AtomicUsize::new(0);
    let first = *level;
    let depth_now = AtomicU32::new(first + 1);
    let stop = AtomicBool::new(false);
    let barrier = SpinBarrier::new(threads);
    let driver = rayon::current_thread_index();
    crate::progress::superstep(frontier.len() as u64);
    // The leader records progress for the calling thread's observer.
    let observer = crate::progress::current();
    rayon::broadcast(|ctx| {
        let me = ctx.index();
        let leader = driver.map_or(me == 0, |d| d == me);
        let mut local: Vec<VertexId> = Vec::new();
        let mut grain: Vec<VertexId> = Vec::with_capacity(TEAM_GRAIN);
        crate::progress::observe_if(observer.as_ref().filter(|_| leader), || loop {
            let d = depth_now.load(Ordering::Relaxed);
            let turn = ((d - first - 1) & 1) as usize;
            let (cur, next) = (&buffers[turn], &buffers[turn ^ 1]);
            let len = current_len.load(Ordering::Relaxed);
            let mut work = 0u64;
            loop {
                let i = cursor.fetch_add(TEAM_GRAIN, Ordering::Relaxed);
                if i >= len {
                    break;
                }
                grain.clear();
                grain.extend(
                    cur[i..(i + TEAM_GRAIN).min(len)]
                        .iter()
                        .map(|c| c.load(Ordering::Relaxed)),
                );
                for_out_edges_prefetched(out, &grain, |u, v| {
                    let parent = &p.parent[v as usize];
                    if parent.load(Ordering::Relaxed) == UNREACHED
                        && parent
                            .compare_exchange(UNREACHED, u, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok()
                    {
                        p.depth[v as usize].store(d, Ordering::Relaxed);
                        local.push(v);
                        work += 1 + out.degree(v) as u64;
                    }
                });
            }
            if !local.is_empty() {
                let at = next_len.fetch_add(local.len(), Ordering::Relaxed);
                for (cell, &v) in next[at..at + local.len()].iter().zip(&local) {
                    cell.store(v, Ordering::Relaxed);
                }
                next_work.fetch_add(work, Ordering::Relaxed);
                local.clear();
            }
            barrier.wait();
            if leader {
                let found = next_len.swap(0, Ordering::Relaxed);
                let work = next_work.swap(0, Ordering::Relaxed);
                current_len.store(found, Ordering::Relaxed);
                if found == 0 || work > TEAM_MAX_WORK {
                    stop.store(true, Ordering::Relaxed);
                } else {
                    crate::progress::superstep(found as u64);
                    depth_now.fetch_add(1, Ordering::Relaxed);
                    cursor.store(0, Ordering::Relaxed);
                }
            }
            barrier.wait();
            if stop.load(Ordering::Relaxed) {
                break;
            }
        })
    });
    // The levels expanded: the last one produced the returned frontier.
    let last = depth_now.load(Ordering::Relaxed);
    *level = last;
    let found = current_len.load(Ordering::Relaxed);
    buffers[((last - first) & 1) as usize][..found]
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .collect()
}

/// Plain sequential BFS with a FIFO queue; parents are the first discoverer.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    check_source(g, cfg.source)?;
    let n = g.num_vertices();
    let mut depth = vec![UNREACHED; n];
    let mut parent = vec![UNREACHED; n];
    let s = cfg.source as usize;
    depth[s] = 0;
    parent[s] = cfg.source;
    let mut queue = std::collections::VecDeque::from([cfg.source]);
    let mut max_depth = 0;
    while let Some(u) = queue.pop_front() {
        max_depth = max_depth.max(depth[u as usize]);
        for &v in g.out_neighbors(u) {
            if depth[v as usize] == UNREACHED {
                depth[v as usize] = depth[u as usize] + 1;
                parent[v as usize] = u;
                queue.push_back(v);
            }
        }
    }
    Ok(Output {
        depth,
        parent,
        iterations: max_depth as usize + 1,
    })
}

/// Checks the BFS properties on any graph: the source has depth 0 and is
/// its own parent; every reached vertex's parent is an in-neighbour one
/// level up; unreached vertices have neither depth nor parent; every edge
/// `u → v` from a reached `u` reaches `v` with `depth[v] ≤ depth[u] + 1`;
/// `iterations` is the largest depth plus one. Together these force every
/// depth to be the exact hop distance.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    verify_levels(g, cfg.source, u32::MAX - 1, &out.depth, Some(&out.parent))?;
    let max = out
        .depth
        .iter()
        .filter(|&&d| d != UNREACHED)
        .max()
        .copied()
        .unwrap_or(0);
    if out.iterations != max as usize + 1 {
        return Err(VerifyError::new(format!(
            "iterations is {} but the deepest vertex has depth {max}",
            out.iterations
        )));
    }
    Ok(())
}

/// The BFS checks for depths capped at `max_depth` (vertices farther away
/// are unreached), with or without parents. Shared with `nhop`.
pub(crate) fn verify_levels(
    g: &Graph,
    source: VertexId,
    max_depth: u32,
    depth: &[u32],
    parent: Option<&[u32]>,
) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if depth.len() != n || parent.is_some_and(|p| p.len() != n) {
        return Err(VerifyError::new(format!(
            "output has the wrong length for {n} vertices"
        )));
    }
    let s = source as usize;
    if s >= n {
        return Err(VerifyError::new(format!(
            "source {source} is not in the graph"
        )));
    }
    if depth[s] != 0 {
        return Err(VerifyError::new(format!(
            "source {source} has depth {} instead of 0",
            depth[s]
        )));
    }
    for v in 0..n as VertexId {
        let d = depth[v as usize];
        if d != UNREACHED && d > max_depth {
            return Err(VerifyError::new(format!(
                "vertex {v} has depth {d} beyond the limit {max_depth}"
            )));
        }
        if let Some(parent) = parent {
            let p = parent[v as usize];
            if (d == UNREACHED) != (p == UNREACHED) {
                return Err(VerifyError::new(format!(
                    "vertex {v} has depth {d} but parent {p}"
                )));
            }
            if v == source {
                if p != source {
                    return Err(VerifyError::new(format!(
                        "source {source} has parent {p}, not itself"
                    )));
                }
            } else if p != UNREACHED {
                if p as usize >= n || depth[p as usize] == UNREACHED || depth[p as usize] + 1 != d {
                    return Err(VerifyError::new(format!(
                        "vertex {v} at depth {d} has parent {p} which is not one level up"
                    )));
                }
                if g.out_neighbors(p).binary_search(&v).is_err() {
                    return Err(VerifyError::new(format!(
                        "parent edge {p} -> {v} of vertex {v} is not in the graph"
                    )));
                }
            }
        } else if v != source && d != UNREACHED {
            // Without parents, require some in-neighbour one level up.
            let ok = g
                .in_neighbors(v)
                .iter()
                .any(|&u| depth[u as usize] != UNREACHED && depth[u as usize] + 1 == d);
            if !ok {
                return Err(VerifyError::new(format!(
                    "vertex {v} at depth {d} has no in-neighbour one level up"
                )));
            }
        }
        if d != UNREACHED && d < max_depth {
            for &w in g.out_neighbors(v) {
                let dw = depth[w as usize];
                if dw == UNREACHED || dw > d + 1 {
                    return Err(VerifyError::new(format!(
                        "edge {v} -> {w}: depth {d} at {v} but {} at {w}",
                        if dw == UNREACHED {
                            "unreached".to_string()
                        } else {
                            dw.to_string()
                        }
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The conformance check of [`BfsDriver`] on `exec` (see
/// [`crate::conformance`]): from a source chosen by `seed`, its depths equal
/// [`run`]'s and [`reference`]'s, and its result passes [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let n = g.num_vertices().max(1) as u64;
    let cfg = Config {
        source: (seed % n) as VertexId,
        ..Config::default()
    };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("depth", &got.depth, &fast.depth)?;
    crate::conformance::same("iterations", &got.iterations, &fast.iterations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::{graphs, THREADS};
    use crate::with_threads;
    use plexus_graph::BuildOptions;
    use proptest::prelude::*;

    fn cfg(source: VertexId, direction: Direction) -> Config {
        Config {
            source,
            direction,
            threshold: None,
        }
    }

    #[test]
    fn depths_on_a_small_directed_graph_are_hop_counts() {
        // 0 → 1 → 2 → 3, 0 → 2, 4 isolated, 3 → 0 back edge.
        let g = Graph::from_edges(
            5,
            &[(0, 1), (1, 2), (2, 3), (0, 2), (3, 0)],
            &BuildOptions::directed(),
        )
        .unwrap();
        for d in [Direction::Push, Direction::Pull, Direction::Auto] {
            let out = run(&g, &cfg(0, d)).unwrap();
            assert_eq!(out.depth, vec![0, 1, 1, 2, UNREACHED]);
            assert_eq!(out.parent, vec![0, 0, 0, 2, UNREACHED]);
            assert_eq!(out.iterations, 3);
            verify(&g, &cfg(0, d), &out).unwrap();
        }
    }

    #[test]
    fn program_arrays_convert_in_place_small_and_on_huge_pages() {
        for n in [0usize, 3, (crate::hugepages::MIN_BYTES / 4) + 77] {
            let p = Program::new(n, 1);
            if n > 0 {
                p.parent[n - 1].store(7, Ordering::Relaxed);
            }
            let (depth, parent) = p.into_parts();
            assert_eq!((depth.len(), parent.len()), (n, n));
            for v in 0..n {
                let want_parent = match v {
                    1 => 1,
                    _ if v == n - 1 => 7,
                    _ => UNREACHED,
                };
                assert_eq!(parent[v], want_parent, "vertex {v}");
                assert_eq!(depth[v], if v == 1 { 0 } else { UNREACHED });
            }
        }
    }

    #[test]
    fn a_source_outside_the_graph_is_an_error() {
        let g = Graph::from_edges(2, &[(0, 1)], &BuildOptions::directed()).unwrap();
        assert_eq!(
            run(&g, &cfg(2, Direction::Auto)),
            Err(AlgoError::NoSuchVertex(2))
        );
        assert_eq!(
            reference(&g, &cfg(2, Direction::Auto)),
            Err(AlgoError::NoSuchVertex(2))
        );
    }

    #[test]
    fn verifier_rejects_corrupted_outputs() {
        let g = Graph::from_edges(4, &[(0, 1), (1, 2), (0, 3)], &BuildOptions::directed()).unwrap();
        let c = cfg(0, Direction::Auto);
        let good = run(&g, &c).unwrap();
        verify(&g, &c, &good).unwrap();
        let mut bad = good.clone();
        bad.depth[2] = 3;
        assert!(verify(&g, &c, &bad).is_err());
        let mut bad = good.clone();
        bad.parent[2] = 3;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("vertex 2"));
        let mut bad = good.clone();
        bad.depth[3] = UNREACHED;
        bad.parent[3] = UNREACHED;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("0 -> 3"));
        let mut bad = good;
        bad.iterations = 7;
        assert!(verify(&g, &c, &bad).is_err());
    }

    #[test]
    fn small_levels_and_executor_levels_alternate_correctly() {
        // A path 0..10, a hub (10) with more leaves than TEAM_MAX_WORK, and
        // a path of 100 from the last leaf: team levels, then executor
        // levels (the hub and its leaves), then team levels again.
        let leaves = TEAM_MAX_WORK as u32 + 5000;
        let mut edges: Vec<(VertexId, VertexId)> = (0..10).map(|v| (v, v + 1)).collect();
        edges.extend((0..leaves).map(|i| (10, 11 + i)));
        let last = 10 + leaves;
        edges.extend((0..100).map(|i| (last + i, last + i + 1)));
        let n = (last + 101) as usize;
        for directed in [true, false] {
            let opts = if directed {
                BuildOptions::directed()
            } else {
                BuildOptions::undirected()
            };
            let g = Graph::from_edges(n, &edges, &opts).unwrap();
            let want = reference(&g, &cfg(0, Direction::Auto)).unwrap();
            assert_eq!(want.depth[n - 1], 111);
            for t in THREADS {
                for d in [Direction::Auto, Direction::Push] {
                    let c = cfg(0, d);
                    let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
                    assert_eq!(got.depth, want.depth, "{t} threads, {d:?}");
                    assert_eq!(got.iterations, want.iterations);
                    verify(&g, &c, &got).unwrap();
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_reference_in_depth_and_passes_verify(spec in graphs(), s in 0usize..1000) {
            let g = spec.build();
            let source = (s % g.num_vertices()) as VertexId;
            let want = reference(&g, &cfg(source, Direction::Auto)).unwrap();
            verify(&g, &cfg(source, Direction::Auto), &want).unwrap();
            for t in THREADS {
                for d in [Direction::Auto, Direction::Push, Direction::Pull] {
                    let c = cfg(source, d);
                    let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
                    prop_assert_eq!(&got.depth, &want.depth);
                    prop_assert_eq!(got.iterations, want.iterations);
                    if let Err(e) = verify(&g, &c, &got) {
                        return Err(TestCaseError::fail(e.to_string()));
                    }
                }
            }
        }
    }
}
