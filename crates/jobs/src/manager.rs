//! The job manager: submission, admission at superstep boundaries, and the
//! three ways of running a set of jobs.
//!
//! * [`ExecMode::Sequential`] (S): one job at a time, in submission order.
//! * [`ExecMode::Independent`] (C): every job on its own thread at once,
//!   each with its own traversal; they share only the thread pool.
//! * [`ExecMode::Shared`] (M): one scheduler runs every job's superstep in
//!   one pass over the chunks ([`crate::scan::step_all`]); jobs of one
//!   algorithm on one snapshot are fused into lanes ([`crate::lanes`]);
//!   a job submitted while others run joins at the next boundary.
//!
//! All modes run the same kernels through the same chunked executor, so
//! their results are equal and their byte counts comparable. Each job pins
//! the snapshot it was submitted with; jobs on different snapshots are
//! scanned separately. A job that fails (bad parameter, unknown root, a
//! panic in a kernel) fails alone: a panic in a fused group restarts the
//! group's other jobs as tasks of their own, from scratch.
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;

use plexus_graph::Graph;

use crate::cache::{chunk_bytes, detect_llc_cached, Llc};
use crate::error::JobError;
use crate::job::{JobHandle, JobShared, JobStatus, StateLedger};
use crate::lanes::new_task;
use crate::memory::available_bytes;
use crate::scan::{step_all, Outcome, ScanCounters, ScanTable, ScanTask};
use crate::snapshot::Snapshot;
use crate::spec::{resolve, state_bytes, JobSpec};

/// How the manager runs its jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecMode {
    /// One job after another (S).
    Sequential,
    /// All jobs at once, each its own traversal (C).
    Independent,
    /// All jobs through one shared scan, fused where they fit (M).
    Shared,
}

impl std::str::FromStr for ExecMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sequential" | "S" | "s" => Ok(ExecMode::Sequential),
            "independent" | "C" | "c" => Ok(ExecMode::Independent),
            "shared" | "M" | "m" => Ok(ExecMode::Shared),
            _ => Err(format!(
                "unknown mode '{s}' (expected sequential, independent or shared)"
            )),
        }
    }
}

impl std::fmt::Display for ExecMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ExecMode::Sequential => "sequential",
            ExecMode::Independent => "independent",
            ExecMode::Shared => "shared",
        })
    }
}

/// Manager settings.
#[derive(Clone, Debug)]
pub struct ManagerConfig {
    /// How to run jobs.
    pub mode: ExecMode,
    /// Worker threads of the manager's pool (0: all cores).
    pub threads: usize,
    /// Last-level cache size in bytes to plan chunks with; `None`: detect.
    pub llc_bytes: Option<u64>,
    /// Where a detected LLC is remembered between runs (see
    /// [`crate::cache::detect_llc_cached`]); `None`: measure every time.
    pub llc_cache: Option<std::path::PathBuf>,
    /// Memory the jobs' state may use, in bytes; `None`: `MemAvailable`.
    pub memory_limit_bytes: Option<u64>,
    /// In shared mode, fuse jobs of one algorithm into lanes (default true).
    pub fuse: bool,
    /// Also fuse SSSP jobs into lanes (default false: measured slower, see
    /// [`crate::lanes::sssp`]); without it each SSSP job is its own task.
    pub fuse_sssp: bool,
    /// Run an SSSP job that is its own task in the chunk scan (the engine's
    /// vertex program, one pass per bucket, sharing chunk loads) instead of
    /// the engine's delta-stepping kernel (default false: the kernel is
    /// faster, see [`crate::lanes::whole`]).
    pub sssp_in_scan: bool,
    /// Serve PageRank jobs that arrive together and differ only in damping
    /// and stopping rule from one damping-free power series (default true;
    /// [`crate::lanes::pagerank_series`]). Their ranks then equal the
    /// engine's within rounding instead of bit for bit; `false` runs them
    /// in lanes, bit-identical to the engine.
    pub pagerank_series: bool,
    /// Pin the pool's threads to these CPU ids (`sched_setaffinity`; the
    /// scheduler pins a unit to its NUMA node); `None`: the CPUs the
    /// process may use.
    pub cpus: Option<Vec<usize>>,
    /// In shared mode, when no job is running, admit the first jobs only
    /// once submissions have paused for `quiet` or `max` has passed since
    /// the first of them arrived ([`Gather`]); `None` (the default):
    /// admit at once. A server sets it so that a burst of submissions
    /// starts as one wave of fused groups, as a batch does.
    pub gather: Option<Gather>,
}

/// How long an idle shared manager gathers a burst of submissions before
/// admitting it ([`ManagerConfig::gather`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    /// Admit once no job has arrived for this long.
    pub quiet: std::time::Duration,
    /// Admit at the latest this long after the idle manager saw the first
    /// waiting job.
    pub max: std::time::Duration,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            mode: ExecMode::Shared,
            threads: 0,
            llc_bytes: None,
            llc_cache: None,
            memory_limit_bytes: None,
            fuse: true,
            fuse_sssp: false,
            sssp_in_scan: false,
            pagerank_series: true,
            cpus: None,
            gather: None,
        }
    }
}

/// Figures of a manager's run so far.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ManagerStats {
    /// Bytes of topology the executor read.
    pub topology_bytes_read: u64,
    /// Bytes of topology of the snapshots jobs ran on (each counted once).
    pub topology_bytes: u64,
    /// Σ per-vertex state of the jobs now running, in bytes.
    pub job_state_bytes: u64,
    /// The largest Σ job state seen at a superstep boundary, in bytes.
    pub peak_job_state_bytes: u64,
    /// Passes over the chunks (supersteps of a set of tasks).
    pub passes: u64,
    /// (task, chunk) pairs processed.
    pub task_chunks: u64,
    /// Chunks in the latest chunk table.
    pub chunks: u64,
    /// Topology bytes per chunk the latest table aimed at.
    pub chunk_target_bytes: u64,
    /// The LLC the chunks were sized for.
    pub llc: Llc,
}

struct Queue {
    jobs: VecDeque<Arc<JobShared>>,
    /// When the latest job was queued.
    last_arrival: Option<std::time::Instant>,
    closed: bool,
    /// Live [`AdmissionHold`]s: while any, the shared loop admits nothing.
    holds: usize,
}

struct Inner {
    cfg: ManagerConfig,
    /// The pool supersteps run on; replaced at a superstep boundary when
    /// [`JobManager::set_threads`] asked for another size.
    pool: Mutex<Arc<rayon::ThreadPool>>,
    /// A pool size (threads, CPUs to pin to) to switch to at the next
    /// superstep boundary.
    resize: Mutex<Option<(usize, Option<Vec<usize>>)>>,
    /// Pools built by resizes.
    resizes: AtomicU64,
    llc: Llc,
    queue: Mutex<Queue>,
    wake: Condvar,
    counters: ScanCounters,
    /// Jobs not yet ended, and ended ones whose handle is still held
    /// (pruned at each submission and statistics call, so a long-lived manager keeps neither
    /// forgotten jobs nor, through them, their snapshots).
    all: Mutex<Vec<Arc<JobShared>>>,
    next_id: AtomicU64,
    ledger: Arc<StateLedger>,
    /// The snapshots jobs ran on, not pinned (a version is released once
    /// no job or result holds it), each with its topology bytes.
    snapshots: Mutex<Vec<(Weak<Snapshot>, u64)>>,
    /// Topology bytes of the released snapshots jobs ran on.
    released_bytes: AtomicU64,
    table_info: Mutex<(u64, u64)>,
}

impl Inner {
    /// Records that a job runs on `snap`, without pinning it; forgets the
    /// released ones (their bytes still count in the statistics).
    /// Forgets ended jobs nobody holds a handle of (nothing can ask about
    /// them any more), and with them their results and snapshots.
    fn prune(&self) {
        lock(&self.all).retain(|j| Arc::strong_count(j) > 1 || !j.status().state.is_terminal());
    }

    fn note_snapshot(&self, snap: &Arc<Snapshot>) {
        let mut snaps = lock(&self.snapshots);
        snaps.retain(|(w, bytes)| {
            let alive = w.strong_count() > 0;
            if !alive {
                self.released_bytes.fetch_add(*bytes, Ordering::Relaxed);
            }
            alive
        });
        let known = snaps
            .iter()
            .any(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(snap)));
        if !known {
            snaps.push((Arc::downgrade(snap), snap.graph().topology_bytes()));
        }
    }

    /// Topology bytes of every snapshot jobs ran on, each counted once.
    fn topology_bytes(&self) -> u64 {
        let live: u64 = lock(&self.snapshots).iter().map(|(_, b)| b).sum();
        live + self.released_bytes.load(Ordering::Relaxed)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs jobs on shared graph snapshots. Dropping it waits for the jobs.
pub struct JobManager {
    inner: Arc<Inner>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl JobManager {
    /// A manager with its own thread pool; detects the LLC now (about a
    /// third of a second, unless remembered in `cfg.llc_cache`) unless
    /// `cfg.llc_bytes` is given.
    pub fn new(cfg: ManagerConfig) -> Result<Self, JobError> {
        let pool = build_pool(cfg.threads, cfg.cpus.clone())?;
        let llc = detect_llc_cached(cfg.llc_bytes, cfg.llc_cache.as_deref());
        let inner = Arc::new(Inner {
            cfg,
            pool: Mutex::new(Arc::new(pool)),
            resize: Mutex::new(None),
            resizes: AtomicU64::new(0),
            llc,
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                last_arrival: None,
                closed: false,
                holds: 0,
            }),
            wake: Condvar::new(),
            counters: ScanCounters::default(),
            all: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            ledger: Arc::default(),
            snapshots: Mutex::new(Vec::new()),
            released_bytes: AtomicU64::new(0),
            table_info: Mutex::new((0, 0)),
        });
        let mgr = JobManager {
            inner: Arc::clone(&inner),
            workers: Mutex::new(Vec::new()),
        };
        let worker = match inner.cfg.mode {
            ExecMode::Shared => Some(("plexus-scheduler", shared_loop as fn(Arc<Inner>))),
            ExecMode::Sequential => Some(("plexus-sequential", sequential_loop as fn(Arc<Inner>))),
            ExecMode::Independent => None,
        };
        if let Some((name, f)) = worker {
            let h = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || f(inner))
                .map_err(|e| JobError::Threads(e.to_string()))?;
            lock(&mgr.workers).push(h);
        }
        Ok(mgr)
    }

    /// The mode.
    pub fn mode(&self) -> ExecMode {
        self.inner.cfg.mode
    }

    /// Threads in the manager's pool now (a resize asked for by
    /// [`JobManager::set_threads`] shows once a superstep boundary applied it).
    pub fn threads(&self) -> usize {
        lock(&self.inner.pool).current_num_threads()
    }

    /// Runs the manager's supersteps on `threads` threads (0: all cores)
    /// pinned to `cpus` (`None`: the process's CPUs) from its next superstep
    /// boundary on: the boundary builds a new pool and the old one ends
    /// when its last superstep returns. Results do not change (the chunked
    /// executor's results do not depend on the thread count); the cost is
    /// the pool's start ([`crate::sched::model::DEFAULT_RESIZE_SECONDS`]
    /// is what the scheduler charges for it). A later call before the
    /// boundary replaces an earlier one. When the new pool cannot be built
    /// (threads refused by the OS) the old one is kept.
    pub fn set_threads(&self, threads: usize, cpus: Option<Vec<usize>>) {
        *lock(&self.inner.resize) = Some((threads, cpus));
    }

    /// The CPUs each worker of the manager's pool may run on now
    /// ([`crate::sched::numa::current_thread_affinity`], asked of every
    /// worker, in worker order; `None` where unknown): where a
    /// [`JobManager::set_threads`] placed the pool once a superstep
    /// boundary applied it.
    pub fn worker_cpus(&self) -> Vec<Option<Vec<usize>>> {
        let pool = Arc::clone(&lock(&self.inner.pool));
        pool.broadcast(|_| crate::sched::numa::current_thread_affinity().ok())
    }

    /// Pools built by [`JobManager::set_threads`] so far.
    pub fn resizes(&self) -> u64 {
        self.inner.resizes.load(Ordering::Relaxed)
    }

    /// Submits a job on `snapshot` (pinned for the job's life). A job whose
    /// parameters do not resolve (unknown root, bad damping, ...) is
    /// returned already failed, with the reason in its status. A job whose
    /// state can never fit in the memory budget is refused:
    /// [`JobError::WontFit`] with the bytes needed and available.
    pub fn submit(&self, snapshot: Arc<Snapshot>, spec: JobSpec) -> Result<JobHandle, JobError> {
        let g = snapshot.graph();
        let resolved = resolve(g, &spec.algorithm);
        if let Ok(r) = &resolved {
            let needed = state_bytes(g, r);
            let available = self
                .inner
                .cfg
                .memory_limit_bytes
                .or_else(available_bytes)
                .unwrap_or(u64::MAX);
            if needed > available {
                return Err(JobError::WontFit {
                    job: spec.name.clone(),
                    needed,
                    available,
                });
            }
        }
        let ok = resolved.is_ok();
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let job = Arc::new(JobShared::new(
            id,
            spec,
            Arc::clone(&snapshot),
            resolved,
            Arc::clone(&self.inner.ledger),
        ));
        self.inner.prune();
        lock(&self.inner.all).push(Arc::clone(&job));
        self.inner.note_snapshot(&snapshot);
        if ok {
            match self.inner.cfg.mode {
                ExecMode::Independent => {
                    let inner = Arc::clone(&self.inner);
                    let j = Arc::clone(&job);
                    let h = std::thread::Builder::new()
                        .name(format!("plexus-job-{id}"))
                        .spawn(move || {
                            run_solo(&inner, j);
                            inner.prune();
                        })
                        .map_err(|e| JobError::Threads(e.to_string()))?;
                    lock(&self.workers).push(h);
                }
                _ => {
                    let mut q = lock(&self.inner.queue);
                    if q.closed {
                        job.finish(Err(JobError::Shutdown));
                    } else {
                        q.jobs.push_back(Arc::clone(&job));
                        q.last_arrival = Some(std::time::Instant::now());
                        self.inner.wake.notify_all();
                    }
                }
            }
        }
        Ok(JobHandle { shared: job })
    }

    /// Status of every job submitted, in submission order (an ended job is
    /// left out once its every handle has been dropped and another job
    /// submitted).
    pub fn statuses(&self) -> Vec<JobStatus> {
        self.inner.prune();
        lock(&self.inner.all).iter().map(|j| j.status()).collect()
    }

    /// Waits until every job submitted so far has ended.
    pub fn wait_all(&self) {
        let jobs: Vec<Arc<JobShared>> = lock(&self.inner.all).clone();
        for j in jobs {
            JobHandle { shared: j }.wait(None);
        }
    }

    /// Figures so far.
    pub fn stats(&self) -> ManagerStats {
        let inner = &self.inner;
        inner.prune();
        let c = &inner.counters;
        let (chunks, target) = *lock(&inner.table_info);
        ManagerStats {
            topology_bytes_read: c.topology_bytes_read.load(Ordering::Relaxed),
            topology_bytes: inner.topology_bytes(),
            job_state_bytes: inner.state_now(),
            peak_job_state_bytes: inner.ledger.peak(),
            passes: c.passes.load(Ordering::Relaxed),
            task_chunks: c.task_chunks.load(Ordering::Relaxed),
            chunks,
            chunk_target_bytes: target,
            llc: inner.llc,
        }
    }

    /// Stops taking jobs, lets the submitted ones finish, and joins the threads.
    /// Holds admission in shared mode until the returned guard is dropped:
    /// jobs submitted meanwhile wait in the queue and are admitted together
    /// at the first superstep boundary after it, so a burst of jobs
    /// submitted at once starts as one set of fused lanes and groups rather
    /// than the first job alone with the rest joining one by one. Running
    /// jobs go on meanwhile. Other modes ignore it.
    pub fn hold_admission(&self) -> AdmissionHold<'_> {
        lock(&self.inner.queue).holds += 1;
        AdmissionHold { mgr: self }
    }

    pub fn shutdown(&self) {
        {
            let mut q = lock(&self.inner.queue);
            q.closed = true;
            self.inner.wake.notify_all();
        }
        let hs: Vec<JoinHandle<()>> = std::mem::take(&mut *lock(&self.workers));
        for h in hs {
            let _ = h.join();
        }
    }
}

/// Holds admission while it lives ([`JobManager::hold_admission`]).
#[must_use = "admission resumes as soon as the hold is dropped"]
pub struct AdmissionHold<'a> {
    mgr: &'a JobManager,
}

impl Drop for AdmissionHold<'_> {
    fn drop(&mut self) {
        let mut q = lock(&self.mgr.inner.queue);
        q.holds = q.holds.saturating_sub(1);
        self.mgr.inner.wake.notify_all();
    }
}

impl Drop for JobManager {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A rayon pool of `threads` threads (0: all cores) on the CPU set `cpus`
/// (`None`: the CPUs this process may use), whatever thread builds it (a
/// unit's resize builds it on the manager's own thread). A pool with one
/// thread per CPU of its set pins thread `i` to the set's `i`-th CPU
/// ([`crate::sched::numa::worker_cpu`]: unpinned, the kernel can stack two
/// workers on one vCPU and halve a whole batch); the threads of any other
/// pool get the whole set ([`crate::sched::numa::PoolPinning`]).
fn build_pool(threads: usize, cpus: Option<Vec<usize>>) -> Result<rayon::ThreadPool, JobError> {
    crate::sched::numa::PoolPinning::new(threads, cpus)
        .builder()
        .thread_name(|i| format!("plexus-scan-{i}"))
        .build()
        .map_err(|e| JobError::Threads(e.to_string()))
}

impl Inner {
    /// The pool for the next superstep: a resize asked for since the last
    /// boundary is applied now (a new pool; the old one ends when the last
    /// superstep holding it returns).
    fn pool(&self) -> Arc<rayon::ThreadPool> {
        let pending = lock(&self.resize).take();
        if let Some((threads, cpus)) = pending {
            if let Ok(p) = build_pool(threads, cpus) {
                *lock(&self.pool) = Arc::new(p);
                self.resizes.fetch_add(1, Ordering::Relaxed);
            }
        }
        Arc::clone(&lock(&self.pool))
    }

    fn state_now(&self) -> u64 {
        lock(&self.all).iter().map(|j| j.state_bytes()).sum()
    }

    fn note_state(&self) {
        self.ledger.note(self.state_now());
    }

    /// The chunk table for a pass over `g` by tasks holding `state` bytes
    /// of per-vertex state (the largest task's, GraphM's `|V| · U_v`).
    fn table(&self, g: &Graph, state: u64, threads: usize) -> ScanTable {
        let n = g.num_vertices().max(1) as u64;
        let target = chunk_bytes(
            self.llc.bytes,
            threads,
            g.topology_bytes(),
            n,
            state.div_ceil(n),
        );
        // Tasks share a chunk visit while their randomly read state fits the
        // LLC together (scan::cache_runs).
        let t = ScanTable::build(g, target, threads * 8).with_cache_bytes(self.llc.bytes);
        *lock(&self.table_info) = (t.chunks().len() as u64, t.target_bytes());
        t
    }

    /// Runs one superstep of `tasks` on `g` and sorts the outcomes: tasks
    /// that run on, and jobs to restart alone after a group's panic.
    fn step(
        &self,
        g: &Graph,
        tasks: Vec<Box<dyn ScanTask>>,
    ) -> (Vec<Box<dyn ScanTask>>, Vec<Arc<JobShared>>) {
        let pool = self.pool();
        let state = tasks.iter().map(|t| t.state_bytes()).max().unwrap_or(0);
        let table = self.table(g, state, pool.current_num_threads());
        self.ledger.begin_step(self.state_now());
        let outcomes = pool.install(|| step_all(g, &table, tasks, &self.counters));
        let mut running = Vec::new();
        let mut restart = Vec::new();
        for o in outcomes {
            match o {
                Outcome::Running(t) => running.push(t),
                Outcome::Finished => {}
                Outcome::Panicked(msg, jobs) => {
                    if jobs.len() > 1 {
                        for j in jobs {
                            j.requeue();
                            restart.push(j);
                        }
                    } else {
                        for j in jobs {
                            j.finish(Err(JobError::Failed(msg.clone())));
                        }
                    }
                }
            }
        }
        self.note_state();
        (running, restart)
    }
}

/// Runs one job alone to the end (S and C modes, and restarts).
fn run_solo(inner: &Inner, job: Arc<JobShared>) {
    if let Some(e) = job.stop_reason() {
        job.finish(Err(e));
        return;
    }
    let snap = Arc::clone(&job.snapshot);
    let g = snap.graph();
    let Some(task) = new_task(g, &job, false, inner.cfg.sssp_in_scan, false) else {
        job.finish(Err(JobError::Failed(
            "the job has no runnable parameters".into(),
        )));
        return;
    };
    let mut tasks = vec![task];
    while !tasks.is_empty() {
        let (running, restart) = inner.step(g, tasks);
        tasks = running;
        // A task of one job never asks for restarts; be safe anyway.
        for j in restart {
            j.finish(Err(JobError::Failed("its task failed".into())));
        }
    }
}

fn sequential_loop(inner: Arc<Inner>) {
    loop {
        let job = {
            let mut q = lock(&inner.queue);
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    break Some(j);
                }
                if q.closed {
                    break None;
                }
                q = inner.wake.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        match job {
            Some(j) => {
                run_solo(&inner, j);
                // The job's last reference besides the table is gone: an
                // ended job nobody holds no longer pins its snapshot.
                inner.prune();
            }
            None => return,
        }
    }
}

/// Waits, with no job running, until submissions pause for `g.quiet` or
/// `g.max` has passed (or the queue closes); returns the queue locked.
fn gather<'a>(
    inner: &'a Inner,
    mut q: std::sync::MutexGuard<'a, Queue>,
    g: Gather,
) -> std::sync::MutexGuard<'a, Queue> {
    let start = std::time::Instant::now();
    loop {
        if q.closed || q.jobs.is_empty() {
            return q;
        }
        let now = std::time::Instant::now();
        let quiet_at = q.last_arrival.map_or(now, |t| t + g.quiet);
        let until = quiet_at.min(start + g.max);
        if now >= until {
            return q;
        }
        q = match inner.wake.wait_timeout(q, until - now) {
            Ok((q, _)) => q,
            Err(e) => e.into_inner().0,
        };
    }
}

/// The tasks of one snapshot in the shared scan.
struct Group {
    snapshot: Arc<Snapshot>,
    tasks: Vec<Box<dyn ScanTask>>,
}

fn shared_loop(inner: Arc<Inner>) {
    let mut groups: Vec<Group> = Vec::new();
    loop {
        // Admission: jobs submitted since the last boundary join now.
        let admitted: Vec<Arc<JobShared>> = {
            let mut q = lock(&inner.queue);
            while (q.jobs.is_empty() || q.holds > 0) && groups.is_empty() {
                if q.closed && q.jobs.is_empty() {
                    return;
                }
                q = inner.wake.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            if groups.is_empty() {
                if let Some(g) = inner.cfg.gather {
                    q = gather(&inner, q, g);
                }
            }
            if q.holds > 0 {
                Vec::new()
            } else {
                q.jobs.drain(..).collect()
            }
        };
        // BFS jobs admitted together, per snapshot: MS-BFS lanes pay only
        // from `MIN_BFS_LANES` roots on (lanes::whole).
        let mut bfs_counts: Vec<(Arc<Snapshot>, usize)> = Vec::new();
        for j in admitted
            .iter()
            .filter(|j| matches!(j.resolved, Some(crate::spec::Resolved::Bfs { .. })))
        {
            match bfs_counts
                .iter_mut()
                .find(|(s, _)| Arc::ptr_eq(s, &j.snapshot))
            {
                Some((_, c)) => *c += 1,
                None => bfs_counts.push((Arc::clone(&j.snapshot), 1)),
            }
        }
        for job in admitted {
            if let Some(e) = job.stop_reason() {
                job.finish(Err(e));
                continue;
            }
            let gi = match groups
                .iter()
                .position(|gr| Arc::ptr_eq(&gr.snapshot, &job.snapshot))
            {
                Some(i) => i,
                None => {
                    groups.push(Group {
                        snapshot: Arc::clone(&job.snapshot),
                        tasks: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let group = &mut groups[gi];
            let g = group.snapshot.graph();
            let sssp = matches!(job.resolved, Some(crate::spec::Resolved::Sssp { .. }));
            let fuse = inner.cfg.fuse && job.fusable() && (inner.cfg.fuse_sssp || !sssp);
            // PageRank jobs admitted together that a damping series can
            // serve go to one (one per precision and wave), never to lanes:
            // a series cannot take a job once it has started, so each
            // boundary's arrivals start their own (a stream of submissions
            // arrives in waves, and a series costs one gather per edge
            // however many jobs it serves, where lanes cost one per job).
            let series = fuse
                && inner.cfg.pagerank_series
                && matches!(&job.resolved, Some(crate::spec::Resolved::PageRank(c))
                    if crate::lanes::pagerank_series::fits(g, c));
            if series {
                if group
                    .tasks
                    .iter_mut()
                    .filter(|t| t.pagerank_series() == Some(false))
                    .any(|t| t.join(g, &job))
                {
                    continue;
                }
            } else if fuse && group.tasks.iter_mut().any(|t| t.join(g, &job)) {
                continue;
            }
            if let (true, Some(crate::spec::Resolved::Bfs { source })) = (fuse, &job.resolved) {
                let together = bfs_counts
                    .iter()
                    .find(|(s, _)| Arc::ptr_eq(s, &job.snapshot))
                    .map_or(0, |(_, c)| *c);
                if together < crate::lanes::whole::MIN_BFS_LANES {
                    group.tasks.push(Box::new(crate::lanes::whole::BfsJob::new(
                        g.num_vertices(),
                        &job,
                        *source,
                    )));
                    continue;
                }
            }
            match new_task(g, &job, fuse, inner.cfg.sssp_in_scan, series) {
                Some(t) => group.tasks.push(t),
                None => job.finish(Err(JobError::Failed(
                    "the job has no runnable parameters".into(),
                ))),
            }
        }
        // One superstep of every task, snapshot by snapshot.
        let mut restart = Vec::new();
        for group in &mut groups {
            let snap = Arc::clone(&group.snapshot);
            let tasks = std::mem::take(&mut group.tasks);
            let (running, again) = inner.step(snap.graph(), tasks);
            group.tasks = running;
            restart.extend(again);
        }
        groups.retain(|g| !g.tasks.is_empty());
        if !restart.is_empty() {
            let mut q = lock(&inner.queue);
            for j in restart.into_iter().rev() {
                q.jobs.push_front(j);
            }
        }
    }
}
