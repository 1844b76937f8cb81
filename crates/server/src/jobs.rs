//! The server's jobs: one id space over managed jobs (run by the shared
//! [`JobManager`], so jobs from every client share scans and fused lanes)
//! and worker jobs (algorithms the manager does not run, and imports),
//! with one status, progress, cancel and result path for both.
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use plexus_engine::progress::Observer;
use plexus_jobs::{JobError, JobHandle, JobManager, JobState};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::results::ResultTable;
use crate::sched::{Sched, Slot};

/// Rows in a finished job's top-k digest.
pub const DIGEST_ROWS: usize = 10;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Limits on queued work (jobs not yet ended).
#[derive(Clone, Copy, Debug)]
pub struct QueueLimits {
    /// Unfinished jobs one client may have (429 beyond).
    pub per_client: usize,
    /// Unfinished jobs in all (429 beyond).
    pub total: usize,
    /// Finished jobs kept (with their results) before the oldest are forgotten.
    pub finished_kept: usize,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            per_client: 256,
            total: 4096,
            finished_kept: 4096,
        }
    }
}

/// Progress and the stop flag of a worker job, as the engine's kernels
/// report them ([`plexus_engine::progress::observe`]).
#[derive(Default)]
pub struct Watch {
    steps: AtomicU64,
    active: AtomicU64,
    cancel: AtomicBool,
    deadline: Mutex<Option<Instant>>,
}

impl Observer for Watch {
    fn superstep(&self, active: u64) {
        self.steps.fetch_add(1, Ordering::Relaxed);
        self.active.store(active, Ordering::Relaxed);
    }
    fn cancel_requested(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.past_deadline()
    }
}

impl Watch {
    fn past_deadline(&self) -> bool {
        lock(&self.deadline).is_some_and(|d| Instant::now() >= d)
    }
}

/// A worker job's life.
#[derive(Default)]
struct Life {
    state: Option<JobState>,
    error: Option<String>,
    started: Option<Instant>,
    finished: Option<Instant>,
}

/// What a worker job's work hands back: a result table (algorithms) and a
/// summary.
pub struct Finish {
    pub table: Option<ResultTable>,
    pub summary: Value,
}

/// A job run by a worker thread.
pub struct Worker {
    pub watch: Arc<Watch>,
    life: Mutex<Life>,
    changed: Condvar,
    state_bytes: AtomicU64,
}

enum Backend {
    Managed(JobHandle),
    Scheduled(Arc<Slot>),
    Worker(Arc<Worker>),
}

/// A finished job's result and summaries.
#[derive(Default)]
struct Outcome {
    collected: bool,
    table: Option<Arc<ResultTable>>,
    summary: Value,
    /// The top-k digest, computed on first request (O(vertices)).
    digest: Option<Value>,
}

/// One job of the server.
pub struct JobRecord {
    pub id: u64,
    /// Algorithm name, or `import`.
    pub algorithm: String,
    pub graph: String,
    /// The graph version pinned at submission (0 for imports).
    pub version: u64,
    /// Who submitted it (for the per-client limit).
    pub client: String,
    /// The parameters as given.
    pub params: Value,
    /// `shared` (the job manager), `worker` or `import`.
    pub route: &'static str,
    submitted: Instant,
    submitted_unix: f64,
    backend: Backend,
    outcome: Mutex<Outcome>,
}

/// A job's status as the API shows it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct JobView {
    pub id: u64,
    pub algorithm: String,
    pub graph: String,
    pub version: u64,
    pub route: &'static str,
    pub state: JobState,
    pub superstep: u64,
    pub active_vertices: u64,
    /// Seconds since submission (to the end once ended).
    pub elapsed_seconds: f64,
    /// Bytes of per-vertex state held now (the result's once done).
    pub state_bytes: u64,
    pub error: Option<String>,
    pub params: Value,
    pub submitted_unix: f64,
    /// Summary fields in external ids (once done and collected).
    pub summary: Value,
}

impl JobRecord {
    /// The job's state now.
    pub fn state(&self) -> JobState {
        match &self.backend {
            Backend::Managed(h) => h.status().state,
            Backend::Scheduled(s) => match (s.status(), s.ended()) {
                (Some(st), _) => st.state,
                (None, Some((state, ..))) => state,
                (None, None) => JobState::Queued,
            },
            Backend::Worker(w) => lock(&w.life).state.unwrap_or(JobState::Queued),
        }
    }

    /// Seconds from submission to the launch of a scheduled job (0 for
    /// the others).
    fn launch_delay(&self) -> f64 {
        match &self.backend {
            Backend::Scheduled(s) => s.launched_at().map_or(0.0, |t| {
                t.saturating_duration_since(self.submitted).as_secs_f64()
            }),
            _ => 0.0,
        }
    }

    /// How a scheduled job ended without a launch (refused, withdrawn).
    fn unlaunched_end(&self) -> Option<(JobState, String, Instant)> {
        match &self.backend {
            Backend::Scheduled(s) => s.ended(),
            _ => None,
        }
    }

    /// The job manager's handle of a managed job (a scheduled one once
    /// launched).
    fn handle(&self) -> Option<JobHandle> {
        match &self.backend {
            Backend::Managed(h) => Some(h.clone()),
            Backend::Scheduled(s) => s.handle(),
            Backend::Worker(_) => None,
        }
    }

    /// Status and progress now.
    pub fn view(&self) -> JobView {
        let o = lock(&self.outcome);
        let managed = self.handle().map(|h| h.status());
        let (state, superstep, active, bytes, error, ended) = match &self.backend {
            Backend::Managed(_) | Backend::Scheduled(_) => match (managed, self.unlaunched_end()) {
                (Some(s), _) => {
                    // A scheduled job's latency counts from its launch.
                    let ended = s.latency_seconds.map(|l| l + self.launch_delay());
                    (
                        s.state,
                        s.superstep,
                        s.active_vertices,
                        s.state_bytes,
                        s.error,
                        ended,
                    )
                }
                (None, Some((state, why, at))) => (
                    state,
                    0,
                    0,
                    0,
                    Some(why),
                    Some((at - self.submitted).as_secs_f64()),
                ),
                (None, None) => (JobState::Queued, 0, 0, 0, None, None),
            },
            Backend::Worker(w) => {
                let l = lock(&w.life);
                (
                    l.state.unwrap_or(JobState::Queued),
                    w.watch.steps.load(Ordering::Relaxed),
                    w.watch.active.load(Ordering::Relaxed),
                    w.state_bytes.load(Ordering::Relaxed),
                    l.error.clone(),
                    l.finished.map(|f| (f - self.submitted).as_secs_f64()),
                )
            }
        };
        let bytes = match &o.table {
            Some(t) => t.size_bytes(),
            None => bytes,
        };
        JobView {
            id: self.id,
            algorithm: self.algorithm.clone(),
            graph: self.graph.clone(),
            version: self.version,
            route: self.route,
            state,
            superstep,
            active_vertices: active,
            elapsed_seconds: ended.unwrap_or_else(|| self.submitted.elapsed().as_secs_f64()),
            state_bytes: bytes,
            error,
            params: self.params.clone(),
            submitted_unix: self.submitted_unix,
            summary: o.summary.clone(),
        }
    }

    /// Asks the job to stop: a queued job never starts, a running one stops
    /// at its next superstep (a worker job) or chunk (a managed job).
    pub fn cancel(&self) {
        match &self.backend {
            Backend::Managed(h) => h.cancel(),
            Backend::Scheduled(s) => s.cancel(),
            Backend::Worker(w) => {
                w.watch.cancel.store(true, Ordering::Relaxed);
                let mut l = lock(&w.life);
                if l.state.is_none() {
                    l.state = Some(JobState::Cancelled);
                    l.error = Some("job was cancelled".into());
                    l.finished = Some(Instant::now());
                    w.changed.notify_all();
                }
            }
        }
    }

    /// Takes a finished managed job's result into the record (once; later
    /// calls do nothing). O(vertices) when it converts.
    pub fn collect(&self) {
        let mut o = lock(&self.outcome);
        if o.collected {
            return;
        }
        if matches!(self.backend, Backend::Worker(_)) {
            return;
        }
        if self.unlaunched_end().is_some() {
            o.collected = true;
            return;
        }
        let Some(h) = self.handle() else {
            return;
        };
        match h.status().state {
            JobState::Done => {
                if let Ok(out) = h.take_result() {
                    o.summary = out.summary();
                    o.table = Some(Arc::new(ResultTable::of_output(out)));
                }
                o.collected = true;
            }
            JobState::Failed | JobState::Cancelled => o.collected = true,
            _ => {}
        }
    }

    /// The result table of a finished job; the error says why there is none.
    pub fn table(&self) -> Result<Arc<ResultTable>, ApiError> {
        self.collect();
        if let Some(t) = &lock(&self.outcome).table {
            return Ok(Arc::clone(t));
        }
        let v = self.view();
        Err(match v.state {
            JobState::Queued | JobState::Running => ApiError::conflict(format!(
                "job {} has not finished (it is {})",
                self.id,
                state_name(v.state)
            )),
            JobState::Done => {
                ApiError::not_found(format!("job {} has no per-vertex result", self.id))
            }
            s => ApiError::conflict(format!(
                "job {} {}: {}",
                self.id,
                state_name(s),
                v.error.unwrap_or_default()
            )),
        })
    }

    /// The top-k digest of a finished job (`null` before, and for a job
    /// without a per-vertex result); computed on the first call, outside
    /// the record's lock.
    pub fn digest(&self) -> Value {
        self.collect();
        let table = {
            let o = lock(&self.outcome);
            if let Some(d) = &o.digest {
                return d.clone();
            }
            match &o.table {
                Some(t) => Arc::clone(t),
                None => return Value::Null,
            }
        };
        let d = table.digest(DIGEST_ROWS);
        lock(&self.outcome).digest = Some(d.clone());
        d
    }

    /// Waits until the job ends or `timeout` passes; the state seen last.
    pub fn wait(&self, timeout: Duration) -> JobState {
        match &self.backend {
            Backend::Managed(h) => h.wait(Some(timeout)),
            Backend::Scheduled(_) => {
                let start = Instant::now();
                loop {
                    let left = timeout.saturating_sub(start.elapsed());
                    if let Some(h) = self.handle() {
                        return h.wait(Some(left));
                    }
                    let s = self.state();
                    if s.is_terminal() || left.is_zero() {
                        return s;
                    }
                    std::thread::sleep(left.min(Duration::from_millis(5)));
                }
            }
            Backend::Worker(w) => {
                let start = Instant::now();
                let mut l = lock(&w.life);
                loop {
                    let s = l.state.unwrap_or(JobState::Queued);
                    let left = timeout.saturating_sub(start.elapsed());
                    if s.is_terminal() || left.is_zero() {
                        return s;
                    }
                    l = match w.changed.wait_timeout(l, left) {
                        Ok((g, _)) => g,
                        Err(e) => e.into_inner().0,
                    };
                }
            }
        }
    }
}

/// A state's lowercase name.
pub fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Queued => "queued",
        JobState::Running => "running",
        JobState::Done => "done",
        JobState::Failed => "failed",
        JobState::Cancelled => "cancelled",
    }
}

/// What a new job is, apart from how it runs.
pub struct NewJob {
    pub algorithm: String,
    pub graph: String,
    pub version: u64,
    pub client: String,
    pub params: Value,
    pub deadline: Option<Duration>,
}

type Work = Box<dyn FnOnce(&Arc<Watch>) -> Result<Finish, String> + Send>;

struct Task {
    record: Arc<JobRecord>,
    work: Work,
}

/// The job table, the shared manager and the worker threads.
pub struct Jobs {
    mgr: JobManager,
    /// `--scheduler`: managed jobs go through this runner instead of `mgr`.
    sched: Option<Sched>,
    table: Mutex<BTreeMap<u64, Arc<JobRecord>>>,
    next_id: AtomicU64,
    queue: Mutex<Option<mpsc::Sender<Task>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    limits: QueueLimits,
    admitting: AtomicBool,
}

impl Jobs {
    /// The table over `mgr`, with `workers` worker threads for the jobs the
    /// manager does not run.
    pub fn new(
        mgr: JobManager,
        sched: Option<Sched>,
        workers: usize,
        limits: QueueLimits,
    ) -> Result<Arc<Jobs>, ApiError> {
        let (tx, rx) = mpsc::channel::<Task>();
        let jobs = Arc::new(Jobs {
            mgr,
            sched,
            table: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
            queue: Mutex::new(Some(tx)),
            threads: Mutex::new(Vec::new()),
            limits,
            admitting: AtomicBool::new(true),
        });
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..workers.max(1) {
            let rx = Arc::clone(&rx);
            let h = std::thread::Builder::new()
                .name(format!("plexus-serve-worker-{i}"))
                .spawn(move || loop {
                    let task = lock(&rx).recv();
                    match task {
                        Ok(t) => run_task(t),
                        Err(_) => return,
                    }
                })
                .map_err(|e| ApiError::internal(format!("cannot start a worker thread: {e}")))?;
            lock(&jobs.threads).push(h);
        }
        // Finished managed jobs' results are converted here, off the
        // request path (O(vertices) each); the thread stops with the queue.
        let weak = Arc::downgrade(&jobs);
        let h = std::thread::Builder::new()
            .name("plexus-serve-collector".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_millis(20));
                let Some(j) = weak.upgrade() else { return };
                if lock(&j.queue).is_none() {
                    return;
                }
                // `collect` returns at once for collected, worker and
                // unfinished jobs.
                for r in j.all() {
                    r.collect();
                }
            })
            .map_err(|e| ApiError::internal(format!("cannot start the collector thread: {e}")))?;
        lock(&jobs.threads).push(h);
        Ok(jobs)
    }

    /// The shared job manager.
    pub fn manager(&self) -> &JobManager {
        &self.mgr
    }

    /// The scheduler, with `--scheduler`.
    pub fn scheduler(&self) -> Option<&Sched> {
        self.sched.as_ref()
    }

    /// Refuses a new job when the server is stopping or a queue limit is
    /// reached.
    pub fn admit(&self, client: &str) -> Result<(), ApiError> {
        if !self.admitting.load(Ordering::Relaxed) {
            return Err(ApiError::unavailable(
                "the server is shutting down and takes no new jobs",
            ));
        }
        let t = lock(&self.table);
        let live: Vec<&Arc<JobRecord>> = t.values().filter(|r| !r.state().is_terminal()).collect();
        if live.len() >= self.limits.total {
            return Err(ApiError::too_many(format!(
                "{} jobs are queued or running, the server's limit; retry later",
                live.len()
            )));
        }
        let mine = live.iter().filter(|r| r.client == client).count();
        if mine >= self.limits.per_client {
            return Err(ApiError::too_many(format!(
                "this client has {mine} jobs queued or running, the limit per client; retry later"
            )));
        }
        Ok(())
    }

    fn record(&self, new: NewJob, route: &'static str, backend: Backend) -> Arc<JobRecord> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let r = Arc::new(JobRecord {
            id,
            algorithm: new.algorithm,
            graph: new.graph,
            version: new.version,
            client: new.client,
            params: new.params,
            route,
            submitted: Instant::now(),
            submitted_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            backend,
            outcome: Mutex::default(),
        });
        let mut t = lock(&self.table);
        t.insert(id, Arc::clone(&r));
        self.forget_old(&mut t);
        r
    }

    /// Drops the oldest finished jobs beyond the number kept.
    fn forget_old(&self, t: &mut BTreeMap<u64, Arc<JobRecord>>) {
        let finished: Vec<u64> = t
            .values()
            .filter(|r| r.state().is_terminal())
            .map(|r| r.id)
            .collect();
        let extra = finished.len().saturating_sub(self.limits.finished_kept);
        for id in finished.into_iter().take(extra) {
            t.remove(&id);
        }
    }

    /// Submits a managed job (`spec` already built from a resolved
    /// request): to the scheduler with `--scheduler` (`cost` is what it
    /// plans with), else to the shared manager.
    pub fn submit_managed(
        &self,
        new: NewJob,
        snapshot: Arc<plexus_jobs::Snapshot>,
        mut spec: plexus_jobs::JobSpec,
        cost: plexus_jobs::sched::Cost,
    ) -> Result<Arc<JobRecord>, ApiError> {
        spec.deadline = new.deadline;
        if let Some(sched) = &self.sched {
            let slot = Arc::new(Slot::default());
            let record = self.record(new, "scheduled", Backend::Scheduled(Arc::clone(&slot)));
            if !sched.arrive(Arc::clone(&slot), snapshot, spec, cost) {
                slot.end(JobState::Cancelled, "the server is shutting down".into());
                return Err(ApiError::unavailable(
                    "the server is shutting down and takes no new jobs",
                ));
            }
            return Ok(record);
        }
        let handle = self.mgr.submit(snapshot, spec).map_err(|e| match e {
            JobError::WontFit {
                needed, available, ..
            } => ApiError::wont_fit(e.to_string(), needed, available),
            JobError::Shutdown => ApiError::unavailable(e.to_string()),
            other => ApiError::bad_request(other.to_string()),
        })?;
        Ok(self.record(new, "shared", Backend::Managed(handle)))
    }

    /// Submits a job run by `work` on a worker thread (`route` is `worker`)
    /// or on a thread of its own (`import`).
    pub fn submit_work(
        &self,
        new: NewJob,
        route: &'static str,
        state_bytes: u64,
        work: Work,
    ) -> Result<Arc<JobRecord>, ApiError> {
        let watch = Arc::new(Watch::default());
        *lock(&watch.deadline) = new.deadline.map(|d| Instant::now() + d);
        let w = Arc::new(Worker {
            watch,
            life: Mutex::default(),
            changed: Condvar::new(),
            state_bytes: AtomicU64::new(state_bytes),
        });
        let record = self.record(new, route, Backend::Worker(w));
        let task = Task {
            record: Arc::clone(&record),
            work,
        };
        if route == "import" {
            std::thread::Builder::new()
                .name(format!("plexus-serve-import-{}", record.id))
                .spawn(move || run_task(task))
                .map_err(|e| ApiError::internal(format!("cannot start an import thread: {e}")))?;
            return Ok(record);
        }
        let sent = lock(&self.queue).as_ref().map(|q| q.send(task).is_ok());
        if sent != Some(true) {
            record.cancel();
            return Err(ApiError::unavailable(
                "the server is shutting down and takes no new jobs",
            ));
        }
        Ok(record)
    }

    /// The job `id`.
    pub fn get(&self, id: u64) -> Result<Arc<JobRecord>, ApiError> {
        lock(&self.table)
            .get(&id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("no job {id}")))
    }

    /// Forgets a finished job and its result.
    pub fn forget(&self, id: u64) {
        lock(&self.table).remove(&id);
    }

    /// Every job known, in submission order.
    pub fn all(&self) -> Vec<Arc<JobRecord>> {
        lock(&self.table).values().cloned().collect()
    }

    /// Unfinished jobs reading graph `name`.
    pub fn readers_of(&self, name: &str) -> usize {
        lock(&self.table)
            .values()
            .filter(|r| r.graph == name && r.algorithm != "import" && !r.state().is_terminal())
            .count()
    }

    /// Stops admitting, lets unfinished jobs run up to `grace`, cancels the
    /// rest, and stops the manager and the workers.
    pub fn shutdown(&self, grace: Duration) {
        self.admitting.store(false, Ordering::Relaxed);
        let start = Instant::now();
        for r in self.all() {
            r.wait(grace.saturating_sub(start.elapsed()));
        }
        for r in self.all() {
            if !r.state().is_terminal() {
                r.cancel();
            }
        }
        for r in self.all() {
            r.wait(Duration::from_secs(5));
        }
        lock(&self.queue).take();
        if let Some(s) = &self.sched {
            s.stop();
        }
        self.mgr.shutdown();
        let hs: Vec<JoinHandle<()>> = std::mem::take(&mut *lock(&self.threads));
        for h in hs {
            let _ = h.join();
        }
    }

    /// Whether new jobs are admitted.
    pub fn admitting(&self) -> bool {
        self.admitting.load(Ordering::Relaxed)
    }
}

impl Drop for Jobs {
    /// Cancels what still runs, so that dropping the manager (which waits
    /// for its jobs) does not wait for jobs nobody will read.
    fn drop(&mut self) {
        for r in lock(&self.table).values() {
            if !r.state().is_terminal() {
                r.cancel();
            }
        }
    }
}

/// Runs one worker task: skipped when cancelled while queued; a panic
/// fails the job alone.
fn run_task(t: Task) {
    let Backend::Worker(w) = &t.record.backend else {
        return;
    };
    {
        let mut l = lock(&w.life);
        if l.state.is_some() {
            return;
        }
        l.state = Some(JobState::Running);
        l.started = Some(Instant::now());
        w.changed.notify_all();
    }
    let watch = Arc::clone(&w.watch);
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| (t.work)(&watch)));
    let mut o = lock(&t.record.outcome);
    let mut l = lock(&w.life);
    let (state, error) = match r {
        Ok(Ok(f)) => {
            o.summary = f.summary;
            if let Some(table) = f.table {
                w.state_bytes.store(table.size_bytes(), Ordering::Relaxed);
                o.table = Some(Arc::new(table));
            }
            (JobState::Done, None)
        }
        Ok(Err(e)) if w.watch.cancel.load(Ordering::Relaxed) => {
            let _ = e;
            (JobState::Cancelled, Some("job was cancelled".to_string()))
        }
        Ok(Err(_)) if w.watch.past_deadline() => {
            (JobState::Failed, Some("deadline exceeded".into()))
        }
        Ok(Err(e)) => (JobState::Failed, Some(e)),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            (JobState::Failed, Some(format!("job failed: {msg}")))
        }
    };
    o.collected = true;
    l.state = Some(state);
    l.error = error;
    l.finished = Some(Instant::now());
    if state != JobState::Done {
        w.state_bytes.store(0, Ordering::Relaxed);
    }
    w.changed.notify_all();
}

/// The JSON of a job view, with its digest when asked (the web page's
/// finished-job card).
pub fn view_json(r: &JobRecord, with_digest: bool) -> Value {
    // A job that has just ended has its summary once collected; the
    // collector thread may not have come by yet.
    r.collect();
    let digest = with_digest.then(|| r.digest());
    let mut v = serde_json::to_value(r.view()).unwrap_or(Value::Null);
    if let Some(d) = digest {
        v["digest"] = d;
    }
    v
}

/// Counts of jobs by state now.
pub fn counts_by_state(jobs: &[Arc<JobRecord>]) -> BTreeMap<&'static str, u64> {
    let mut m = BTreeMap::new();
    for s in ["queued", "running", "done", "failed", "cancelled"] {
        m.insert(s, 0);
    }
    for r in jobs {
        *m.entry(state_name(r.state())).or_default() += 1;
    }
    m
}

/// `{"jobs": [...]}` for a list of records.
pub fn list_json(jobs: &[Arc<JobRecord>]) -> Value {
    json!({ "jobs": jobs.iter().map(|r| serde_json::to_value(r.view()).unwrap_or(Value::Null)).collect::<Vec<_>>() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_jobs::{ExecMode, ManagerConfig};

    fn jobs() -> Arc<Jobs> {
        let mgr = JobManager::new(ManagerConfig {
            mode: ExecMode::Shared,
            threads: 1,
            ..Default::default()
        })
        .unwrap();
        Jobs::new(mgr, None, 1, QueueLimits::default()).unwrap()
    }

    fn new_job() -> NewJob {
        NewJob {
            algorithm: "test".into(),
            graph: "g".into(),
            version: 0,
            client: "c".into(),
            params: Value::Null,
            deadline: None,
        }
    }

    #[test]
    fn a_panicking_job_fails_alone() {
        let j = jobs();
        let bad = j
            .submit_work(new_job(), "worker", 0, Box::new(|_| panic!("boom")))
            .unwrap();
        let good = j
            .submit_work(
                new_job(),
                "worker",
                0,
                Box::new(|_| {
                    Ok(Finish {
                        table: None,
                        summary: json!({"ok": true}),
                    })
                }),
            )
            .unwrap();
        assert_eq!(bad.wait(Duration::from_secs(10)), JobState::Failed);
        assert!(bad.view().error.unwrap().contains("boom"));
        assert_eq!(good.wait(Duration::from_secs(10)), JobState::Done);
        assert_eq!(good.view().summary, json!({"ok": true}));
        j.shutdown(Duration::from_secs(1));
    }

    #[test]
    fn a_queued_worker_job_cancelled_never_runs() {
        let j = jobs();
        let gate = Arc::new(std::sync::Barrier::new(2));
        let g2 = Arc::clone(&gate);
        let first = j
            .submit_work(
                new_job(),
                "worker",
                0,
                Box::new(move |_| {
                    g2.wait();
                    Err("stopped".into())
                }),
            )
            .unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let r2 = Arc::clone(&ran);
        let second = j
            .submit_work(
                new_job(),
                "worker",
                0,
                Box::new(move |_| {
                    r2.store(true, Ordering::Relaxed);
                    Err("ran".into())
                }),
            )
            .unwrap();
        second.cancel();
        assert_eq!(second.state(), JobState::Cancelled);
        gate.wait();
        assert_eq!(first.wait(Duration::from_secs(10)), JobState::Failed);
        j.shutdown(Duration::from_secs(1));
        assert!(!ran.load(Ordering::Relaxed));
    }
}
