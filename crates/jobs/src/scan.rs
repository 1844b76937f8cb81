//! The shared-scan executor (GraphM's share–synchronise, SC'19 §3.3–3.4).
//!
//! A [`ScanTable`] cuts the vertices into chunks whose topology (offsets,
//! neighbours and weights of both directions) is about
//! [`crate::cache::chunk_bytes`] each: a chunk and the job state it touches
//! fit in the last-level cache. One superstep of *all* running tasks is one
//! pass over the chunks in a common order ([`step_all`]): the threads take
//! chunks (rayon, in table order), and every task active in a chunk
//! processes it before the thread moves on, so the chunk comes from memory
//! once for all of them. A task whose frontier has no vertex in a chunk
//! skips it (sparse steps: the sorted frontier is split by the chunk table,
//! GraphM's per-job active bitmaps against the chunk table); dense steps
//! visit every chunk. Tasks at different supersteps (a BFS at depth 1 beside
//! one at depth 6) share the same pass; a task that arrives joins at the
//! next pass.
//!
//! **Runs.** Sharing a chunk pays only while the tasks' randomly read state
//! (a pull's contributions, CDLP's labels: [`ScanTask::gathered_bytes`])
//! fits the cache together; beyond that their gathers evict each other and
//! cost more than re-reading the chunk, which streams. So a pass groups the
//! tasks first-fit into *runs* whose gathered state fits the table's cache
//! budget ([`ScanTable::with_cache_bytes`], the LLC; [`cache_runs`]): the
//! tasks of a run share every chunk visit, and the runs scan the chunks one
//! after another. Tasks whose state is small still share one run.
//!
//! Tasks are [`ScanTask`]s. [`ProgramTask`] runs any engine [`Driver`]
//! (the algorithm's own step machine, one superstep per pass) through the
//! engine's per-vertex kernels [`dense_vertex`] and [`sparse_vertex`];
//! [`ScanExecutor`] is the same pass as an engine [`Executor`] for a single
//! program; the fused multi-lane tasks live in [`crate::lanes`].
//!
//! **Counting.** Each pass adds the bytes of topology it reads to
//! [`ScanCounters::topology_bytes_read`]: for every chunk, the slice of the
//! in-edge arrays (offsets, neighbours, weights when a task reads them) once
//! if any task pulls it, and for pushing tasks the out-edge lists of their
//! active vertices, summed over tasks but capped at the chunk's slice (a
//! line already in cache is not read again within the chunk). A whole-graph
//! step (Afforest WCC) counts the whole topology once.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use plexus_engine::driver::Driver;
use plexus_engine::edge_map::{self, Mode};
use plexus_engine::program::{
    dense_vertex, sparse_vertex, Active, Executor, GraphView, InMemory, Modes, Step, StepOptions,
    Traversal, VertexProgram, Vertices,
};
use plexus_engine::subset::VertexSubset;
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::job::JobShared;
use crate::output::{JobOutput, Values};

/// Chunk starts are multiples of this (one bitmap word).
pub const CHUNK_ALIGN: u64 = 64;

/// One chunk of the shared scan: vertices `start..end` and their edge counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanChunk {
    /// First vertex (a multiple of [`CHUNK_ALIGN`]).
    pub start: VertexId,
    /// One past the last vertex.
    pub end: VertexId,
    /// Out-edges of the chunk's vertices.
    pub out_edges: u64,
    /// In-edges of the chunk's vertices.
    pub in_edges: u64,
}

impl ScanChunk {
    /// The chunk's vertices.
    pub fn vertices(&self) -> std::ops::Range<VertexId> {
        self.start..self.end
    }
}

/// The shared scan's chunk table: contiguous, 64-aligned chunks covering
/// `0..n` in order, each holding about `target_bytes` of topology.
#[derive(Clone, Debug)]
pub struct ScanTable {
    chunks: Vec<ScanChunk>,
    target_bytes: u64,
    /// The cache the tasks of one chunk pass share their gathered state in
    /// ([`ScanTable::with_cache_bytes`]); `u64::MAX`: unbounded.
    cache_bytes: u64,
}

/// Bytes of one direction's arrays for vertices `s..e`.
pub(crate) fn slice_bytes(offsets: &[u64], s: usize, e: usize, weighted: bool) -> u64 {
    let edges = offsets[e] - offsets[s];
    8 * (e - s) as u64 + edges * (4 + if weighted { 8 } else { 0 })
}

/// Bytes of topology (both directions when directed) of vertices `s..e`.
fn range_bytes(g: &Graph, s: usize, e: usize) -> u64 {
    let w = g.is_weighted();
    let mut b = slice_bytes(g.out().offsets(), s, e, w);
    if g.is_directed() {
        b += slice_bytes(g.inc().offsets(), s, e, w);
    }
    b
}

impl ScanTable {
    /// Cuts `g` into chunks of at most `target_bytes` of topology (a chunk
    /// holds at least 64 vertices), and into at least `min_chunks` chunks
    /// when the graph has enough vertices, so every thread has work.
    pub fn build(g: &Graph, target_bytes: u64, min_chunks: usize) -> Self {
        let n = g.num_vertices();
        let total = range_bytes(g, 0, n);
        let target = target_bytes
            .min(total.div_ceil(min_chunks.max(1) as u64))
            .max(1);
        let oo = g.out().offsets();
        let io = g.inc().offsets();
        let mut chunks = Vec::new();
        let a = CHUNK_ALIGN as usize;
        let mut s = 0usize;
        while s < n {
            // Largest k ≥ 1 with range_bytes(s, min(s + 64k, n)) ≤ target.
            let kmax = (n - s).div_ceil(a);
            let (mut lo, mut hi) = (1usize, kmax);
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if range_bytes(g, s, (s + mid * a).min(n)) <= target {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            let e = (s + lo * a).min(n);
            chunks.push(ScanChunk {
                start: s as VertexId,
                end: e as VertexId,
                out_edges: oo[e] - oo[s],
                in_edges: io[e] - io[s],
            });
            s = e;
        }
        ScanTable {
            chunks,
            target_bytes: target,
            cache_bytes: u64::MAX,
        }
    }

    /// The same table with a cache budget: tasks whose state read at random
    /// ([`ScanTask::gathered_bytes`]) would together exceed `bytes` share no
    /// chunk visit ([`step_all`]). Without one, every task shares every chunk.
    pub fn with_cache_bytes(mut self, bytes: u64) -> Self {
        self.cache_bytes = bytes.max(1);
        self
    }

    /// The cache budget ([`ScanTable::with_cache_bytes`]).
    pub fn cache_bytes(&self) -> u64 {
        self.cache_bytes
    }

    /// The chunks, in scan order.
    pub fn chunks(&self) -> &[ScanChunk] {
        &self.chunks
    }

    /// The topology bytes each chunk was sized to.
    pub fn target_bytes(&self) -> u64 {
        self.target_bytes
    }

    /// Cuts a sorted id list by chunk: chunk `i` holds
    /// `ids[bounds[i]..bounds[i + 1]]`.
    pub fn split_sorted(&self, ids: &[VertexId]) -> Vec<usize> {
        let mut bounds = Vec::with_capacity(self.chunks.len() + 1);
        bounds.push(0);
        for c in &self.chunks {
            let from = *bounds.last().unwrap_or(&0);
            bounds.push(from + ids[from..].partition_point(|&v| v < c.end));
        }
        bounds
    }
}

/// Groups tasks into runs over the chunks (first fit, in task order):
/// `run[k]` for the task with `gathered[k]` bytes of randomly read state,
/// so that the tasks of one run read at most `cache` bytes together. A
/// task that alone exceeds `cache` runs on its own; when everything fits,
/// all tasks share one run.
pub(crate) fn cache_runs(gathered: &[u64], cache: u64) -> Vec<usize> {
    let mut loads: Vec<u64> = Vec::new();
    gathered
        .iter()
        .map(
            |&b| match loads.iter().position(|&l| l.saturating_add(b) <= cache) {
                Some(r) => {
                    loads[r] = loads[r].saturating_add(b);
                    r
                }
                None => {
                    loads.push(b);
                    loads.len() - 1
                }
            },
        )
        .collect()
}

/// What a task does in the coming superstep.
#[derive(Debug)]
pub enum Plan {
    /// The task has finished (its jobs have their results or errors).
    Done,
    /// One superstep over the chunks.
    Chunks(ChunkPlan),
    /// One step over the whole graph outside the chunk scan (a kernel that
    /// is not chunked, like Afforest); it reads about `bytes` of topology.
    Whole { bytes: u64 },
}

/// A chunked superstep.
#[derive(Debug)]
pub struct ChunkPlan {
    /// Dense: every chunk, pulling into its vertices; sparse: the chunks
    /// holding active vertices, pushing from them.
    pub mode: Mode,
    /// Also traverse edges backwards (push along in-edges, pull over out-edges).
    pub symmetric: bool,
    /// The task reads edge weights.
    pub weights: bool,
    /// Sparse: the active vertices, sorted ascending and distinct.
    pub active: Vec<VertexId>,
}

impl ChunkPlan {
    /// A dense step over every chunk, without weights: a pull along
    /// in-edges, and also along out-edges when `symmetric`.
    pub fn dense(symmetric: bool) -> Self {
        ChunkPlan {
            mode: Mode::Dense,
            symmetric,
            weights: false,
            active: Vec::new(),
        }
    }
}

/// A unit of work in the shared scan: one job, or several fused into lanes.
///
/// The executor calls [`ScanTask::plan`] at each superstep boundary (with
/// `&mut self`), then [`ScanTask::run_chunk`] for each chunk the plan
/// touches (with `&self`, concurrently for different chunks), then
/// [`ScanTask::end_step`] with the vertices activated, concatenated in chunk
/// order. A task delivers each job's result through its [`JobShared`] when
/// that job finishes.
pub trait ScanTask: Send + Sync {
    /// Prepares the next superstep (admits nothing, drops cancelled lanes,
    /// delivers finished ones).
    fn plan(&mut self, g: &Graph) -> Plan;
    /// Processes one chunk: `active` is the chunk's part of a sparse plan's
    /// frontier (empty for dense plans). Activated vertices go to `out`.
    fn run_chunk(&self, g: &Graph, chunk: &ScanChunk, active: &[VertexId], out: &mut Vec<VertexId>);
    /// Runs a [`Plan::Whole`] step.
    fn run_whole(&mut self, _g: &Graph) {}
    /// Takes the vertices activated by the superstep (chunk order; a sparse
    /// step may list a vertex more than once).
    fn end_step(&mut self, g: &Graph, activated: Vec<VertexId>);
    /// Whether every job of the task has been cancelled (its chunks are skipped).
    fn cancelled(&self) -> bool;
    /// The jobs still running in the task.
    fn jobs(&self) -> Vec<Arc<JobShared>>;
    /// Bytes of per-vertex state the task holds.
    fn state_bytes(&self) -> u64;
    /// Bytes of state a chunk pass of the task reads at random, indexed by
    /// neighbour ids (a pull's contributions or labels): what competes with
    /// other tasks' for the cache while they share a chunk. Default: all of
    /// [`ScanTask::state_bytes`].
    fn gathered_bytes(&self) -> u64 {
        self.state_bytes()
    }
    /// Takes `job` as a new lane at a superstep boundary, if the task fuses
    /// jobs of its kind and has room; `false` otherwise (the default).
    fn join(&mut self, _g: &Graph, _job: &Arc<JobShared>) -> bool {
        false
    }
    /// For a PageRank damping series ([`crate::lanes::pagerank_series`]),
    /// whether it has started (a PageRank job that arrives after one
    /// started runs in lanes rather than in a second series); `None` for
    /// other tasks.
    fn pagerank_series(&self) -> Option<bool> {
        None
    }
    /// A short name for traces (`PLEXUS_TRACE`).
    fn name(&self) -> &'static str {
        std::any::type_name::<Self>()
            .rsplit("::")
            .next()
            .unwrap_or("task")
    }
}

/// Counters of the executor, shared by every pass of a manager.
#[derive(Debug, Default)]
pub struct ScanCounters {
    /// Bytes of topology read (see the module docs for what counts).
    pub topology_bytes_read: AtomicU64,
    /// Passes run (supersteps of the whole set of tasks).
    pub passes: AtomicU64,
    /// Chunks visited, summed over passes.
    pub chunk_visits: AtomicU64,
    /// (task, chunk) pairs processed, summed over passes.
    pub task_chunks: AtomicU64,
}

/// What became of a task after a superstep.
pub enum Outcome<'t> {
    /// It runs on.
    Running(Box<dyn ScanTask + 't>),
    /// It has finished; its jobs have their results.
    Finished,
    /// A kernel panicked: the message and the task's jobs.
    Panicked(String, Vec<Arc<JobShared>>),
}

thread_local! {
    static GUARDED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether the current thread is inside a kernel call the executor guards
/// (a panic there fails only its task). Panic hooks use this to stay quiet.
pub fn in_guarded_kernel() -> bool {
    GUARDED.with(|g| g.get() > 0)
}

/// Runs `f`, catching a panic as its message.
pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    GUARDED.with(|g| g.set(g.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    r.map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into())
    })
}

fn panic_message<'t>(task: &dyn ScanTask, msg: String) -> Outcome<'t> {
    Outcome::Panicked(format!("panic in kernel: {msg}"), task.jobs())
}

/// Runs one superstep of every task in `tasks` as one pass over `table`'s
/// chunks, and returns what became of each task (in order).
pub fn step_all<'t>(
    g: &Graph,
    table: &ScanTable,
    tasks: Vec<Box<dyn ScanTask + 't>>,
    counters: &ScanCounters,
) -> Vec<Outcome<'t>> {
    let trace = plexus_engine::program::trace_enabled();
    let pass_start = std::time::Instant::now();
    let (mut prepared, mut outcomes) = prepare_tasks(g, table, tasks, counters);

    let live: Vec<usize> = (0..prepared.len())
        .filter(|&i| prepared[i].plan.is_some())
        .collect();
    let mut runs_used = 0usize;
    if !live.is_empty() {
        counters.passes.fetch_add(1, Ordering::Relaxed);
        let prep = &prepared;
        let runs = cache_runs(
            &live
                .iter()
                .map(|&ti| prep[ti].task.gathered_bytes())
                .collect::<Vec<_>>(),
            table.cache_bytes(),
        );
        runs_used = runs.iter().max().map_or(0, |&r| r + 1);
        let visitor = Visitor {
            g,
            live: &live,
            runs: &runs,
            prep,
            trace,
        };
        let visit = |run: usize, ci: usize, chunk: &ScanChunk| visitor.visit(run, ci, chunk);
        // Runs go one after another, each over every chunk in parallel.
        let per_chunk: Vec<(Vec<Vec<VertexId>>, u64, u64)> = (0..runs_used)
            .flat_map(|run| {
                table
                    .chunks()
                    .par_iter()
                    .enumerate()
                    .with_max_len(1)
                    .map(|(ci, chunk)| visit(run, ci, chunk))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut bytes = 0u64;
        let mut visits = 0u64;
        let mut merged: Vec<Vec<Vec<VertexId>>> = vec![Vec::new(); live.len()];
        for (outs, b, v) in per_chunk {
            bytes += b;
            visits += v;
            for (k, o) in outs.into_iter().enumerate() {
                if !o.is_empty() {
                    merged[k].push(o);
                }
            }
        }
        counters
            .topology_bytes_read
            .fetch_add(bytes, Ordering::Relaxed);
        counters
            .chunk_visits
            .fetch_add((table.chunks().len() * runs_used) as u64, Ordering::Relaxed);
        counters.task_chunks.fetch_add(visits, Ordering::Relaxed);
        end_steps(g, &mut prepared, &mut outcomes, &live, merged);
    }
    if trace {
        let parts: Vec<String> = prepared
            .iter()
            .map(|p| {
                format!(
                    "{}x{} {:.1}+{:.1}ms",
                    p.task.name(),
                    p.task.jobs().len(),
                    p.serial_ns as f64 / 1e6,
                    p.chunk_ns.load(Ordering::Relaxed) as f64 / 1e6
                )
            })
            .collect();
        eprintln!(
            "scan pass {:.1} ms, {runs_used} run(s): {}",
            pass_start.elapsed().as_secs_f64() * 1e3,
            parts.join(" ")
        );
    }
    prepared
        .into_iter()
        .zip(outcomes)
        .map(|(p, o)| match o {
            Some(o) => o,
            None => {
                debug_assert!(!p.done);
                Outcome::Running(p.task)
            }
        })
        .collect()
}

/// A task of a pass, after its plan.
struct Prepared<'t> {
    task: Box<dyn ScanTask + 't>,
    plan: Option<ChunkPlan>,
    bounds: Vec<usize>,
    failed: Mutex<Option<String>>,
    done: bool,
    /// Nanoseconds in `run_chunk`, summed over workers (trace only).
    chunk_ns: AtomicU64,
    /// Nanoseconds in `plan` and `run_whole` (trace only).
    serial_ns: u64,
}

/// Plans every task of a pass: a task done, failed or run whole gets its
/// outcome now; one that scans chunks gets its plan (and, sparse, its
/// frontier cut by chunk).
fn prepare_tasks<'t>(
    g: &Graph,
    table: &ScanTable,
    tasks: Vec<Box<dyn ScanTask + 't>>,
    counters: &ScanCounters,
) -> (Vec<Prepared<'t>>, Vec<Option<Outcome<'t>>>) {
    let mut prepared: Vec<Prepared<'t>> = Vec::with_capacity(tasks.len());
    let mut outcomes: Vec<Option<Outcome<'t>>> = Vec::with_capacity(tasks.len());
    for mut task in tasks {
        let t0 = std::time::Instant::now();
        let planned = guarded(|| task.plan(g));
        let mut p = Prepared {
            task,
            plan: None,
            bounds: Vec::new(),
            failed: Mutex::new(None),
            done: false,
            chunk_ns: AtomicU64::new(0),
            serial_ns: 0,
        };
        match planned {
            Err(msg) => {
                outcomes.push(Some(panic_message(p.task.as_ref(), msg)));
                p.done = true;
            }
            Ok(Plan::Done) => {
                outcomes.push(Some(Outcome::Finished));
                p.done = true;
            }
            Ok(Plan::Whole { bytes }) => {
                counters
                    .topology_bytes_read
                    .fetch_add(bytes, Ordering::Relaxed);
                if let Err(msg) = guarded(|| p.task.run_whole(g)) {
                    outcomes.push(Some(panic_message(p.task.as_ref(), msg)));
                    p.done = true;
                } else {
                    outcomes.push(None);
                }
            }
            Ok(Plan::Chunks(plan)) => {
                if plan.mode == Mode::Sparse {
                    p.bounds = table.split_sorted(&plan.active);
                }
                p.plan = Some(plan);
                outcomes.push(None);
            }
        }
        p.serial_ns = t0.elapsed().as_nanos() as u64;
        prepared.push(p);
    }
    (prepared, outcomes)
}

/// One chunk visit by the tasks of one run of a pass.
struct Visitor<'a, 't> {
    g: &'a Graph,
    /// The tasks that scan chunks (indices into `prep`).
    live: &'a [usize],
    /// The run of each of `live`.
    runs: &'a [usize],
    prep: &'a [Prepared<'t>],
    trace: bool,
}

impl Visitor<'_, '_> {
    /// Visits chunk `ci` with the tasks of run `run`: their activated
    /// vertices (indexed like `live`), the bytes read and the visits.
    fn visit(&self, run: usize, ci: usize, chunk: &ScanChunk) -> (Vec<Vec<VertexId>>, u64, u64) {
        let (g, live, runs, prep, trace) = (self.g, self.live, self.runs, self.prep, self.trace);
        let out = g.out().offsets();
        let inc = g.inc().offsets();
        let weighted = g.is_weighted();
        let directed = g.is_directed();
        let mut outs: Vec<Vec<VertexId>> = vec![Vec::new(); live.len()];
        let (s, e) = (chunk.start as usize, chunk.end as usize);
        let (mut pull_in, mut pull_out, mut pull_w) = (false, false, false);
        let mut push_bytes = 0u64;
        let mut visits = 0u64;
        for (k, &ti) in live.iter().enumerate() {
            if runs[k] != run {
                continue;
            }
            let p = &prep[ti];
            let Some(plan) = &p.plan else { continue };
            if p.task.cancelled() || lock(&p.failed).is_some() {
                continue;
            }
            let active: &[VertexId] = match plan.mode {
                Mode::Dense => &[],
                Mode::Sparse => {
                    let a = &plan.active[p.bounds[ci]..p.bounds[ci + 1]];
                    if a.is_empty() {
                        continue;
                    }
                    a
                }
            };
            visits += 1;
            match plan.mode {
                Mode::Dense => {
                    pull_in = true;
                    pull_out |= plan.symmetric && directed;
                    pull_w |= plan.weights;
                }
                Mode::Sparse => {
                    let per_edge = 4 + if plan.weights && weighted { 8 } else { 0 };
                    for &u in active {
                        let u = u as usize;
                        push_bytes += 16 + per_edge * (out[u + 1] - out[u]);
                        if plan.symmetric && directed {
                            push_bytes += 16 + per_edge * (inc[u + 1] - inc[u]);
                        }
                    }
                }
            }
            let task = p.task.as_ref();
            let t0 = trace.then(std::time::Instant::now);
            if let Err(msg) = guarded(|| task.run_chunk(g, chunk, active, &mut outs[k])) {
                let mut f = lock(&p.failed);
                if f.is_none() {
                    *f = Some(msg);
                }
            }
            if let Some(t0) = t0 {
                p.chunk_ns
                    .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            }
        }
        // Bytes: pulled slices once; pushes capped by the chunk's slice.
        let w = weighted && pull_w;
        let mut bytes = 0;
        let mut out_counted = false;
        if pull_in {
            bytes += slice_bytes(inc, s, e, w);
            out_counted = !directed;
        }
        if pull_out {
            bytes += slice_bytes(out, s, e, w);
            out_counted = true;
        }
        if !out_counted && push_bytes > 0 {
            let cap = range_bytes(g, s, e);
            bytes += push_bytes.min(cap);
        }
        (outs, bytes, visits)
    }
}

/// Ends the step of every task that scanned chunks, with the vertices its
/// chunk visits activated (`merged`, indexed like `live`); a task that
/// failed in a chunk gets its outcome.
fn end_steps<'t>(
    g: &Graph,
    prepared: &mut [Prepared<'t>],
    outcomes: &mut [Option<Outcome<'t>>],
    live: &[usize],
    mut merged: Vec<Vec<Vec<VertexId>>>,
) {
    for (k, &ti) in live.iter().enumerate() {
        let p = &mut prepared[ti];
        if let Some(msg) = lock(&p.failed).take() {
            outcomes[ti] = Some(panic_message(p.task.as_ref(), msg));
            p.done = true;
            continue;
        }
        let parts = std::mem::take(&mut merged[k]);
        let activated = if parts.len() == 1 {
            parts.into_iter().next().unwrap_or_default()
        } else {
            parts.concat()
        };
        let task = &mut p.task;
        if let Err(msg) = guarded(|| task.end_step(g, activated)) {
            outcomes[ti] = Some(panic_message(p.task.as_ref(), msg));
            p.done = true;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How one program's superstep runs over the chunks: its mode, the arcs it
/// follows and (dense) the active sources.
struct ChunkStep {
    mode: Mode,
    traversal: Traversal,
    /// The dense frontier (`None`: every vertex is active).
    bits: Option<Vec<u64>>,
}

impl ChunkStep {
    /// The step of a program with modes `modes` from `frontier` with
    /// `opts` on `g`, and its plan for the pass.
    fn plan(
        g: &Graph,
        modes: Modes,
        frontier: &VertexSubset,
        opts: &StepOptions,
        weights: bool,
    ) -> (ChunkStep, ChunkPlan) {
        let n = g.num_vertices();
        let traversal = Traversal::new(g.is_directed(), opts);
        let mode = match modes {
            Modes::SparseOnly => Mode::Sparse,
            Modes::DenseOnly => Mode::Dense,
            Modes::Both => edge_map::decide(g, frontier, opts),
        };
        let (bits, active) = match mode {
            Mode::Dense => {
                let bits = (frontier.len() != n).then(|| match frontier.as_bitmap() {
                    Some(w) => w.to_vec(),
                    None => frontier.to_dense().as_bitmap().unwrap_or(&[]).to_vec(),
                });
                (bits, Vec::new())
            }
            Mode::Sparse => (None, frontier.to_sorted_vec()),
        };
        let step = ChunkStep {
            mode,
            traversal,
            bits,
        };
        let plan = ChunkPlan {
            mode,
            symmetric: traversal.symmetric || traversal.reverse,
            weights,
            active,
        };
        (step, plan)
    }

    /// Runs `p`'s step over one chunk with the engine's per-vertex kernels.
    fn run_chunk<P: VertexProgram>(
        &self,
        g: &Graph,
        p: &P,
        chunk: &ScanChunk,
        active: &[VertexId],
        out: &mut Vec<VertexId>,
    ) {
        match self.mode {
            Mode::Dense => {
                let act = match &self.bits {
                    None => Active::All,
                    Some(w) => Active::Bitmap(w),
                };
                for v in chunk.vertices() {
                    if dense_vertex(g, p, v, act, self.traversal) {
                        out.push(v);
                    }
                }
            }
            Mode::Sparse => {
                for &u in active {
                    sparse_vertex(g, p, u, self.traversal, out);
                }
            }
        }
    }
}

/// One job running an engine [`Driver`] (the algorithm's own step
/// machine, unchanged) in the shared scan: the driver's logic runs at each
/// superstep boundary, its program's edge step over the chunks.
pub struct ProgramTask<D: Driver> {
    driver: Option<D>,
    values: Box<dyn Fn(D::Output) -> Values + Send + Sync>,
    job: Arc<JobShared>,
    step: Option<ChunkStep>,
}

impl<D: Driver> ProgramTask<D> {
    /// A task running `driver` for `job`; `values` turns its output into
    /// the job's result.
    pub(crate) fn new(
        driver: D,
        values: Box<dyn Fn(D::Output) -> Values + Send + Sync>,
        job: Arc<JobShared>,
    ) -> Self {
        job.set_state_bytes(driver.state_bytes());
        ProgramTask {
            driver: Some(driver),
            values,
            job,
            step: None,
        }
    }
}

impl<D: Driver> ScanTask for ProgramTask<D>
where
    D::Program: Sync,
{
    fn plan(&mut self, g: &Graph) -> Plan {
        if let Some(e) = self.job.stop_reason() {
            self.job.finish(Err(e));
            return Plan::Done;
        }
        self.job.mark_running();
        let ops = InMemory::new(g);
        let Some(driver) = self.driver.as_mut() else {
            return Plan::Done;
        };
        let Some(frontier) = driver.next_frontier(&ops) else {
            if let Some(d) = self.driver.take() {
                let values = (self.values)(d.finish(&ops));
                self.job.finish(Ok(JobOutput {
                    snapshot: Arc::clone(&self.job.snapshot),
                    values,
                }));
            }
            return Plan::Done;
        };
        let opts = driver.options();
        let (step, plan) = ChunkStep::plan(
            g,
            D::Program::MODES,
            &frontier,
            &opts,
            driver.reads_weights(),
        );
        let edges = match step.mode {
            Mode::Dense => g.num_arcs(),
            Mode::Sparse => frontier.out_degree_sum(g),
        };
        self.job.record_step(frontier.len() as u64, edges);
        self.step = Some(step);
        Plan::Chunks(plan)
    }

    fn run_chunk(
        &self,
        g: &Graph,
        chunk: &ScanChunk,
        active: &[VertexId],
        out: &mut Vec<VertexId>,
    ) {
        self.job.maybe_fault();
        if let (Some(step), Some(d)) = (&self.step, &self.driver) {
            step.run_chunk(g, d.program(), chunk, active, out);
        }
    }

    fn end_step(&mut self, g: &Graph, activated: Vec<VertexId>) {
        // Dense output is ascending and distinct; a sparse step may list a
        // vertex once per slot that woke it (law 6): deduplicate.
        let next = VertexSubset::from_ids(g.num_vertices(), activated);
        self.step = None;
        if let Some(d) = self.driver.as_mut() {
            d.activated(&InMemory::new(g), next);
        }
    }

    fn cancelled(&self) -> bool {
        self.job.cancel_requested()
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        vec![Arc::clone(&self.job)]
    }

    fn state_bytes(&self) -> u64 {
        self.driver.as_ref().map_or(0, Driver::state_bytes)
    }
}

/// The shared-scan executor as an engine [`Executor`] for one program at a
/// time: each superstep is one pass of [`step_all`] over a chunk table
/// sized as the job manager sizes it, with the engine's per-vertex kernels;
/// vertex steps and sums are the in-memory executor's. `plexus run
/// --executor scan` runs an algorithm's driver on it.
pub struct ScanExecutor<'g> {
    g: &'g Graph,
    table: ScanTable,
    counters: ScanCounters,
}

impl<'g> ScanExecutor<'g> {
    /// An executor over `g` whose chunks hold about `chunk_bytes` of
    /// topology each (see [`crate::cache::chunk_bytes`]).
    pub fn new(g: &'g Graph, chunk_bytes: u64) -> Self {
        let threads = rayon::current_num_threads();
        ScanExecutor {
            g,
            table: ScanTable::build(g, chunk_bytes, threads * 8),
            counters: ScanCounters::default(),
        }
    }

    /// An executor whose chunks are sized for this machine's last-level
    /// cache and the current pool, with 16 bytes of state per vertex.
    pub fn for_machine(g: &'g Graph) -> Self {
        let llc = crate::cache::detect_llc(None);
        let n = g.num_vertices().max(1) as u64;
        let bytes = crate::cache::chunk_bytes(
            llc.bytes,
            rayon::current_num_threads(),
            g.topology_bytes(),
            n,
            16,
        );
        ScanExecutor::new(g, bytes)
    }

    /// The executor's counters (passes, bytes of topology read).
    pub fn counters(&self) -> &ScanCounters {
        &self.counters
    }
}

/// One superstep of a borrowed program, as a scan task.
struct StepTask<'a, P> {
    p: &'a P,
    step: Option<(ChunkStep, ChunkPlan)>,
    activated: &'a Mutex<Vec<VertexId>>,
}

impl<P: VertexProgram> ScanTask for StepTask<'_, P> {
    fn plan(&mut self, _g: &Graph) -> Plan {
        match self.step.as_mut() {
            Some((_, plan)) => Plan::Chunks(ChunkPlan {
                mode: plan.mode,
                symmetric: plan.symmetric,
                weights: plan.weights,
                active: std::mem::take(&mut plan.active),
            }),
            None => Plan::Done,
        }
    }

    fn run_chunk(
        &self,
        g: &Graph,
        chunk: &ScanChunk,
        active: &[VertexId],
        out: &mut Vec<VertexId>,
    ) {
        if let Some((step, _)) = &self.step {
            step.run_chunk(g, self.p, chunk, active, out);
        }
    }

    fn end_step(&mut self, _g: &Graph, activated: Vec<VertexId>) {
        *lock(self.activated) = activated;
        self.step = None;
    }

    fn cancelled(&self) -> bool {
        false
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        Vec::new()
    }

    fn state_bytes(&self) -> u64 {
        0
    }
}

impl Vertices for ScanExecutor<'_> {
    fn view(&self) -> &dyn GraphView {
        self.g
    }

    fn process_vertices<F: Fn(VertexId) -> bool + Sync>(
        &self,
        subset: &VertexSubset,
        f: F,
    ) -> VertexSubset {
        InMemory::new(self.g).process_vertices(subset, f)
    }

    fn vertex_sum<F: Fn(VertexId) -> f64 + Sync>(&self, f: F) -> f64 {
        InMemory::new(self.g).vertex_sum(f)
    }
}

impl Executor for ScanExecutor<'_> {
    fn superstep<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
    ) -> Step {
        let g = self.g;
        plexus_engine::progress::superstep(frontier.len() as u64);
        let activated = Mutex::new(Vec::new());
        let step = ChunkStep::plan(g, P::MODES, frontier, opts, true);
        let mode = step.0.mode;
        let task = StepTask {
            p,
            step: Some(step),
            activated: &activated,
        };
        for outcome in step_all(g, &self.table, vec![Box::new(task)], &self.counters) {
            if let Outcome::Panicked(msg, _) = outcome {
                std::panic::resume_unwind(Box::new(msg));
            }
        }
        let ids = activated.into_inner().unwrap_or_else(|e| e.into_inner());
        Step {
            next: VertexSubset::from_ids(g.num_vertices(), ids),
            mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cache_runs;

    #[test]
    fn tasks_share_a_run_while_their_gathered_state_fits_the_cache() {
        // Everything fits: one run.
        assert_eq!(cache_runs(&[1, 2, 3], 10), vec![0, 0, 0]);
        // First fit in task order; a task larger than the cache runs alone
        // and nothing joins it.
        assert_eq!(cache_runs(&[6, 5, 20, 4, 1], 10), vec![0, 1, 2, 0, 1]);
        // No budget: one run.
        assert_eq!(cache_runs(&[u64::MAX, 7], u64::MAX), vec![0, 0]);
        assert_eq!(cache_runs(&[3, 7], u64::MAX), vec![0, 0]);
        assert!(cache_runs(&[], 1).is_empty());
    }
}
