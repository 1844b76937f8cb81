//! [`OocExecutor`]: the engine's [`Executor`] over a stored graph that is
//! read, never mapped, page range by page range.
//!
//! A superstep, in the mode that moves fewer bytes ([`crate::cost`]; a
//! mode the program or the options fix, Ligra's rule with `--io full` or
//! an explicit threshold):
//! - **sparse (push):** the active sources' lists (out-lists; in-lists too
//!   when symmetric, in-lists only when reversed) are read by page ranges
//!   in ascending order; each source's signal goes over each of its edges
//!   into the message log of the destination's interval ([`crate::logs`]);
//!   then every interval's log is read back and its messages applied with
//!   `sparse_slot`.
//! - **dense (pull):** the in-lists (out-lists too when symmetric, only
//!   out-lists when reversed) of the vertices whose `cond` holds are read by
//!   page ranges; each vertex's signal is folded over its list (pieces of a
//!   list longer than the buffer combined, law 4) and its slot applied.
//!
//! With [`IoMode::Full`] every page of every list is read every superstep
//! (GraphChi's pattern) and only the needed vertices are computed: the
//! baseline that shows what reading only the active pages buys.
//!
//! The program's per-vertex state is the driver's: a driver that allocates
//! its arrays through [`Vertices::backing`] (BFS) gets them in the
//! executor's state files ([`crate::state`]), mapped, written back after
//! every superstep and reclaimed under the cap; other drivers keep theirs
//! on the heap. The executor's own memory is the plan's ([`crate::plan`]). An I/O error during a superstep (which cannot return
//! one) is recorded, later supersteps do nothing, and
//! [`OocExecutor::take_fault`] returns it: callers check it after a run.
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

use plexus_engine::edge_map::{Direction, Mode, DEFAULT_THRESHOLD_DIVISOR};
use plexus_engine::program::{
    deterministic_sum, Executor, GraphView, Modes, Step, StepOptions, Traversal, VertexProgram,
    Vertices,
};
use plexus_engine::subset::VertexSubset;
use plexus_graph::VertexId;
use rayon::prelude::*;
use serde::Serialize;

use crate::cost::{self, Estimate};
use crate::error::{OocError, Result};
use crate::file::{Side, StoredGraph};
use crate::logs::{LogCounters, LogDir};
use crate::plan::{fixed_plan, plan, plan_shared, Plan};
use crate::reader::Walk;
use crate::state::{StateFiles, STATE_WINDOW};
use crate::step::{DenseVisit, SparseVisit};

/// Which pages a superstep reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// Only the pages holding the lists the step needs (PartitionedVC).
    #[default]
    Active,
    /// Every page of every list the step's direction walks (GraphChi).
    Full,
}

impl IoMode {
    /// The mode named `s` (`active` or `full`).
    pub fn parse(s: &str) -> Option<IoMode> {
        match s {
            "active" => Some(IoMode::Active),
            "full" => Some(IoMode::Full),
            _ => None,
        }
    }
}

/// Options of an [`OocExecutor`].
#[derive(Clone, Debug)]
pub struct OocOptions {
    /// The memory budget in bytes (see [`crate::plan`]).
    pub memory: u64,
    /// Which pages a superstep reads.
    pub io: IoMode,
    /// Bytes of per-vertex state the algorithm's driver holds (counted
    /// against the budget; see [`state_bytes_per_vertex`]).
    pub state_bytes: u64,
    /// Whether to read edge weights (when the graph has them); algorithms
    /// that ignore weights save their I/O with `false`.
    pub weights: bool,
    /// Whether to read with `O_DIRECT` where the file system allows it
    /// (else buffered reads, dropped from the page cache after use).
    pub direct: bool,
    /// Buffer sizes that override the budget's plan: `(read buffer bytes,
    /// log buffer bytes, interval adjacency bytes)`, for tests and
    /// experiments (see [`crate::plan::fixed_plan`]).
    pub tuning: Option<(u64, u64, u64)>,
    /// Where the log directory goes (default: beside the graph's directory,
    /// in the data directory).
    pub temp_parent: Option<PathBuf>,
    /// Whether drivers that ask ([`Vertices::backing`]) get their
    /// per-vertex arrays in state files (`true`) or on the heap.
    pub file_state: bool,
}

impl Default for OocOptions {
    fn default() -> Self {
        OocOptions {
            memory: 1 << 30,
            io: IoMode::Active,
            state_bytes: 0,
            weights: true,
            direct: true,
            tuning: None,
            temp_parent: None,
            file_state: true,
        }
    }
}

/// Bytes of an algorithm's driver state the budget counts on `n` vertices:
/// for a driver whose arrays are in the executor's state files (`backed`;
/// BFS and PageRank through `run_on`), what stays on the heap (BFS: its
/// frontier while it runs, its result when it ends; PageRank: its
/// contributions, then its result: 8 bytes a vertex either way) plus a
/// resident window of each file-backed array ([`STATE_WINDOW`]); otherwise
/// [`state_bytes_per_vertex`] for every vertex.
pub fn state_bytes(algorithm: &str, n: u64, backed: bool) -> u64 {
    match (algorithm, backed) {
        ("bfs", true) => 8 * n + 2 * (4 * n).min(STATE_WINDOW),
        // The contributions stay on the heap (read in in-list order), then
        // the result; the ranks and the new ranks are file-backed.
        ("pagerank" | "ppr", true) => 8 * n + 2 * (8 * n).min(STATE_WINDOW),
        _ => n * state_bytes_per_vertex(algorithm),
    }
}

/// A generous estimate of an algorithm's per-vertex driver state on the
/// heap, in bytes (its arrays, frontiers and result), for the budget.
pub fn state_bytes_per_vertex(algorithm: &str) -> u64 {
    // bfs and pagerank measured on kron22 (peak RSS beyond the executor's
    // own arrays and buffers: about 15 and 32 bytes a vertex), rounded up;
    // the others from their drivers' arrays, with room to spare.
    match algorithm {
        "bfs" | "wcc" | "nhop" => 24,
        "sssp" => 56,
        "pagerank" | "ppr" => 40,
        "cdlp" => 64,
        "coloring" | "mis" | "kcore" => 48,
        _ => 64,
    }
}

/// What one superstep did.
#[derive(Clone, Debug, Serialize)]
pub struct StepStats {
    /// `sparse` or `dense`.
    pub mode: &'static str,
    /// Vertices in the frontier.
    pub active: u64,
    /// Vertices activated.
    pub activated: u64,
    /// Adjacency pages read.
    pub pages: u64,
    /// Adjacency bytes read.
    pub bytes: u64,
    /// Seconds in adjacency reads.
    pub io_seconds: f64,
    /// Log bytes written.
    pub log_written: u64,
    /// Log bytes read back.
    pub log_read: u64,
    /// Seconds the superstep took (the direction rule's estimate included).
    pub seconds: f64,
    /// What the direction rule estimated (`None` where the program, the
    /// options or `--io full` fixed the rule; see [`OocExecutor::choose`]).
    pub estimate: Option<Estimate>,
}

/// The executor's counters after (or during) a run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `active` or `full`.
    pub io: IoMode,
    /// The budget in bytes.
    pub memory: u64,
    /// Number of vertex intervals.
    pub intervals: usize,
    /// Adjacency read buffer bytes.
    pub read_buffer_bytes: u64,
    /// Bytes of one interval's log buffer.
    pub log_buffer_bytes: u64,
    /// Bytes of the fixed per-vertex arrays (with the state estimate).
    pub fixed_bytes: u64,
    /// Bytes of adjacency in the file (the graph's edges once).
    pub adjacency_bytes: u64,
    /// Adjacency bytes read (whole pages).
    pub bytes_read: u64,
    /// Adjacency pages read.
    pub pages_read: u64,
    /// `pread` calls for adjacency.
    pub reads: u64,
    /// Seconds in adjacency reads.
    pub io_seconds: f64,
    /// Bytes read once for offsets, permutation and weight facts.
    pub setup_bytes: u64,
    /// Log bytes written.
    pub log_bytes_written: u64,
    /// Log bytes read back.
    pub log_bytes_read: u64,
    /// Messages merged before reaching a slot.
    pub messages_combined: u64,
    /// Bytes of the drivers' per-vertex arrays in state files.
    pub state_file_bytes: u64,
    /// Per superstep.
    pub supersteps: Vec<StepStats>,
}

/// The out-of-core executor (see the module docs).
#[derive(Debug)]
pub struct OocExecutor {
    g: StoredGraph,
    plan: Plan,
    io: IoMode,
    weights: bool,
    memory: u64,
    dir: LogDir,
    logs: LogCounters,
    steps: Mutex<Vec<StepStats>>,
    /// Drivers' file-backed arrays (`None`: on the heap).
    state: Option<StateFiles>,
}

impl OocExecutor {
    /// Opens the stored graph `graph_file` (a `graph.plx`) and plans its
    /// intervals under `opts.memory`; refuses a budget too small for one
    /// interval before reading any adjacency.
    pub fn open(graph_file: &Path, opts: &OocOptions) -> Result<Self> {
        Self::open_planned(graph_file, opts, |g| plan(g, opts.memory, opts.state_bytes))
    }

    /// Opens `graph_file` for a shared batch ([`OocExecutor::run_shared`])
    /// of jobs whose algorithm states take `states` bytes each (their sum
    /// and every job's logs count against `opts.memory`; see
    /// [`crate::plan::plan_shared`]); `opts.state_bytes` is not used.
    pub fn open_shared(graph_file: &Path, opts: &OocOptions, states: &[u64]) -> Result<Self> {
        Self::open_planned(graph_file, opts, |g| plan_shared(g, opts.memory, states))
    }

    /// Opens `graph_file` with the plan `make` gives (or `opts.tuning`'s).
    fn open_planned(
        graph_file: &Path,
        opts: &OocOptions,
        make: impl FnOnce(&StoredGraph) -> Result<Plan>,
    ) -> Result<Self> {
        let g = StoredGraph::open(graph_file)?;
        g.use_direct_io(opts.direct);
        let plan = match opts.tuning {
            Some((read, log, interval)) => fixed_plan(&g, read, log, interval),
            None => make(&g)?,
        };
        let parent = match &opts.temp_parent {
            Some(p) => p.clone(),
            None => graph_file
                .parent()
                .and_then(Path::parent)
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        };
        let dir = LogDir::create(&parent)?;
        let state = opts
            .file_state
            .then(|| StateFiles::new(dir.path().to_path_buf()));
        Ok(OocExecutor {
            state,
            weights: opts.weights && g.meta().weighted,
            g,
            plan,
            io: opts.io,
            memory: opts.memory,
            dir,
            logs: LogCounters::default(),
            steps: Mutex::new(Vec::new()),
        })
    }

    /// The stored graph.
    pub fn graph(&self) -> &StoredGraph {
        &self.g
    }

    /// The plan (intervals and buffers).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Starts writing back the state files' dirty pages (before and after
    /// every superstep), so that the pages a step wrote are clean, and
    /// reclaimable without a wait, when the cap needs room. Not after every
    /// batch: a page under writeback that the next batch writes again
    /// makes the writer wait for the device.
    fn write_back(&self) {
        if let Some(s) = &self.state {
            s.write_back();
        }
    }

    /// Bytes of the drivers' file-backed arrays made so far.
    pub fn state_file_bytes(&self) -> u64 {
        self.state.as_ref().map_or(0, StateFiles::bytes_made)
    }

    /// The directory holding the message logs (and the state files).
    pub fn log_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Takes the first I/O error a superstep met (see the module docs).
    pub fn take_fault(&self) -> Option<OocError> {
        self.g.take_fault()
    }

    /// The counters so far.
    pub fn report(&self) -> Report {
        let io = &self.g.io;
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        Report {
            io: self.io,
            memory: self.memory,
            intervals: self.plan.intervals(),
            read_buffer_bytes: self.plan.read_bytes,
            log_buffer_bytes: self.plan.log_bytes,
            fixed_bytes: self.plan.fixed_bytes,
            adjacency_bytes: self.g.adjacency_bytes(),
            bytes_read: get(&io.bytes),
            pages_read: get(&io.pages),
            reads: get(&io.reads),
            io_seconds: get(&io.nanos) as f64 * 1e-9,
            setup_bytes: get(&io.setup_bytes),
            log_bytes_written: get(&self.logs.written),
            log_bytes_read: get(&self.logs.read),
            messages_combined: get(&self.logs.combined),
            state_file_bytes: self.state_file_bytes(),
            supersteps: self.steps.lock().map(|s| s.clone()).unwrap_or_default(),
        }
    }

    /// Pages, bytes, I/O nanoseconds, log bytes written and read so far.
    fn counters(&self) -> [u64; 5] {
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let io = &self.g.io;
        [
            get(&io.pages),
            get(&io.bytes),
            get(&io.nanos),
            get(&self.logs.written),
            get(&self.logs.read),
        ]
    }

    /// `(pushed along, gathered over)` for traversal `t`.
    fn lists(&self, t: Traversal) -> (&Side, &Side) {
        match t.reverse {
            true => (self.g.inc(), self.g.out()),
            false => (self.g.out(), self.g.inc()),
        }
    }

    /// A walk over `sides`.
    fn walk<'a>(&'a self, sides: Vec<&'a Side>) -> Walk<'a> {
        self.walk_with(sides, self.weights)
    }

    /// A walk over `sides`, reading weights when `weights`.
    pub(crate) fn walk_with<'a>(&'a self, sides: Vec<&'a Side>, weights: bool) -> Walk<'a> {
        let weights = weights && self.g.meta().weighted;
        let cap_pages = Walk::cap_for(self.plan.read_bytes, sides.len(), weights);
        Walk {
            g: &self.g,
            sides,
            weights,
            cap_pages,
        }
    }

    /// Which pages a superstep reads.
    pub fn io_mode(&self) -> IoMode {
        self.io
    }

    /// Adjacency pages, bytes, I/O nanoseconds and `pread` calls so far.
    pub(crate) fn io_counters(&self) -> [u64; 4] {
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let io = &self.g.io;
        [
            get(&io.pages),
            get(&io.bytes),
            get(&io.nanos),
            get(&io.reads),
        ]
    }

    /// The mode of a superstep of `p` from `frontier` that reads weights
    /// when `weights` (the job's own choice, so that a job of a shared
    /// batch decides as it would alone), and what the rule estimated: a
    /// mode the program or the options fix; with
    /// [`IoMode::Active`] and no explicit threshold, the direction that
    /// moves fewer bytes ([`crate::cost`]); otherwise Ligra's rule
    /// ([`OocExecutor::ligra`]), since with [`IoMode::Full`] both
    /// directions read every page of one side (`m` lists either way).
    pub(crate) fn choose<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
        t: Traversal,
        weights: bool,
    ) -> (Mode, Option<Estimate>) {
        match (P::MODES, opts.direction) {
            (Modes::SparseOnly, _) | (Modes::Both, Direction::Push) => (Mode::Sparse, None),
            (Modes::DenseOnly, _) | (Modes::Both, Direction::Pull) => (Mode::Dense, None),
            (Modes::Both, Direction::Auto) if frontier.is_empty() => (Mode::Sparse, None),
            (Modes::Both, Direction::Auto)
                if self.io == IoMode::Full || opts.threshold.is_some() =>
            {
                (self.ligra(frontier, opts, t), None)
            }
            (Modes::Both, Direction::Auto) => {
                let e = self.estimate(p, frontier, t, weights);
                let mode = match e.pull_bytes.map(|pull| pull.cmp(&e.push_bytes())) {
                    Some(std::cmp::Ordering::Less) => Mode::Dense,
                    Some(std::cmp::Ordering::Equal) => self.ligra(frontier, opts, t),
                    _ => Mode::Sparse,
                };
                (mode, Some(e))
            }
        }
    }

    /// The bytes a push and a pull of `p` from `frontier` would move (see
    /// [`crate::cost`]); the pull is not estimated when the push moves no
    /// more than one byte per vertex, or once it is known to cost more.
    fn estimate<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        t: Traversal,
        weights: bool,
    ) -> Estimate {
        let n = self.g.num_vertices();
        let (frontier_bytes, edges) =
            cost::frontier_pages(&self.sides(Mode::Sparse, t), weights, frontier);
        let buffered = self.plan.log_bytes * self.plan.intervals() as u64;
        let mut e = Estimate {
            frontier_bytes,
            log_bytes: cost::log_bytes::<P>(edges, buffered),
            pull_bytes: None,
        };
        let push = e.push_bytes();
        if push > n as u64 {
            // One byte over the push, so that a tie is seen (and broken
            // by Ligra's rule).
            let limit = push.saturating_add(1);
            e.pull_bytes = cost::pull_pages(p, &self.sides(Mode::Dense, t), weights, n, limit);
        }
        e
    }

    /// Ligra's rule on the view's degrees (as `edge_map::decide` does on a
    /// graph; a reverse step counts in-degrees, as the in-memory executor
    /// does on the reversed graph).
    fn ligra(&self, frontier: &VertexSubset, opts: &StepOptions, t: Traversal) -> Mode {
        let g = &self.g;
        let threshold = opts
            .threshold
            .unwrap_or(g.num_arcs() / DEFAULT_THRESHOLD_DIVISOR);
        let deg = |v: VertexId| -> u64 {
            let (o, i) = (g.out_degree(v) as u64, g.in_degree(v) as u64);
            match (t.reverse, opts.symmetric && g.is_directed()) {
                (_, true) => o + i,
                (true, false) => i,
                (false, false) => o,
            }
        };
        let work = frontier.len() as u64 + frontier.iter().map(deg).sum::<u64>();
        if work > threshold {
            Mode::Dense
        } else {
            Mode::Sparse
        }
    }

    /// The push step: signals into logs, then slots from the logs.
    fn sparse<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        t: Traversal,
    ) -> Result<VertexSubset> {
        let n = self.g.num_vertices();
        let walk = self.walk(self.sides(Mode::Sparse, t));
        let only = match self.io {
            IoMode::Full => frontier.to_dense().as_bitmap().map(<[u64]>::to_vec),
            IoMode::Active => None,
        };
        let mut step = SparseVisit::new(p, &self.plan, &self.dir, &self.logs, only);
        let mut visit = |items: &[crate::reader::Item<'_>]| step.visit(items);
        match (self.io, frontier_bits(frontier)) {
            // The frontier's members ascending, from a bitmap (n / 8 bytes)
            // rather than a sorted copy of its ids (4 bytes a member).
            (IoMode::Active, Some(words)) => {
                walk.run(crate::shared::set_bits(words), &mut visit)?
            }
            _ => walk.run(0..n as VertexId, &mut visit)?,
        }
        step.finish()
    }

    /// The pull step: read the gathered lists of the vertices whose `cond`
    /// holds, fold, slot.
    fn dense<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        t: Traversal,
    ) -> Result<VertexSubset> {
        let n = self.g.num_vertices();
        let walk = self.walk(self.sides(Mode::Dense, t));
        let mut step = DenseVisit::new(p, n, frontier_bits(frontier));
        let mut visit = |items: &[crate::reader::Item<'_>]| step.visit(items);
        match self.io {
            IoMode::Active => walk.run((0..n as VertexId).filter(|&v| p.cond(v)), &mut visit)?,
            IoMode::Full => walk.run(0..n as VertexId, &mut visit)?,
        }
        Ok(step.finish())
    }

    /// The lists a step in `mode` walks for traversal `t`, in the order
    /// its visitor expects: sparse steps the pushed-along lists (then the
    /// gathered ones when symmetric), dense steps the gathered lists (then
    /// the pushed-along ones when symmetric).
    pub(crate) fn sides(&self, mode: Mode, t: Traversal) -> Vec<&Side> {
        let (fwd, bwd) = self.lists(t);
        let (first, second) = match mode {
            Mode::Sparse => (fwd, bwd),
            Mode::Dense => (bwd, fwd),
        };
        if t.symmetric {
            vec![first, second]
        } else {
            vec![first]
        }
    }
}

/// The frontier as a bitmap, or `None` when it holds every vertex.
pub(crate) fn frontier_bits(frontier: &VertexSubset) -> Option<Vec<u64>> {
    (frontier.len() != frontier.num_vertices()).then(|| match frontier.as_bitmap() {
        Some(w) => w.to_vec(),
        None => frontier.to_dense().as_bitmap().unwrap_or(&[]).to_vec(),
    })
}

impl Vertices for OocExecutor {
    fn view(&self) -> &dyn GraphView {
        &self.g
    }

    fn process_vertices<F: Fn(VertexId) -> bool + Sync>(
        &self,
        subset: &VertexSubset,
        f: F,
    ) -> VertexSubset {
        let n = subset.num_vertices();
        let kept: Vec<VertexId> = if subset.len() == n {
            (0..n as VertexId)
                .into_par_iter()
                .with_min_len(1024)
                .filter(|&v| f(v))
                .collect()
        } else {
            subset
                .to_sorted_vec()
                .into_par_iter()
                .with_min_len(256)
                .filter(|&v| f(v))
                .collect()
        };
        VertexSubset::from_ids(n, kept)
    }

    fn vertex_sum<F: Fn(VertexId) -> f64 + Sync>(&self, f: F) -> f64 {
        deterministic_sum(self.g.num_vertices(), f)
    }

    fn backing(&self) -> Option<&dyn plexus_engine::vertex_array::Backing> {
        self.state
            .as_ref()
            .map(|s| s as &dyn plexus_engine::vertex_array::Backing)
    }
}

impl Executor for OocExecutor {
    fn superstep<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
    ) -> Step {
        plexus_engine::progress::superstep(frontier.len() as u64);
        // The state the driver wrote since the last superstep (its
        // initial values, vertex steps) is written back early too.
        self.write_back();
        let n = self.g.num_vertices();
        let t = Traversal::new(self.g.is_directed(), opts);
        let started = Instant::now();
        let (mode, estimate) = self.choose(p, frontier, opts, t, self.weights);
        let before = self.counters();
        let result = match (self.g.faulted(), mode) {
            (true, _) => Ok(VertexSubset::empty(n)),
            (false, Mode::Sparse) => self.sparse(p, frontier, t),
            (false, Mode::Dense) => self.dense(p, frontier, t),
        };
        let next = result.unwrap_or_else(|e| {
            self.g.record(e);
            VertexSubset::empty(n)
        });
        let after = self.counters();
        let stats = StepStats {
            mode: match mode {
                Mode::Sparse => "sparse",
                Mode::Dense => "dense",
            },
            active: frontier.len() as u64,
            activated: next.len() as u64,
            pages: after[0] - before[0],
            bytes: after[1] - before[1],
            io_seconds: (after[2] - before[2]) as f64 * 1e-9,
            log_written: after[3] - before[3],
            log_read: after[4] - before[4],
            seconds: started.elapsed().as_secs_f64(),
            estimate,
        };
        if let Ok(mut s) = self.steps.lock() {
            s.push(stats);
        }
        self.write_back();
        Step { next, mode }
    }
}
