//! A job's shared record (status, progress, cancellation, the result slot)
//! and the handle a submitter holds.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::JobError;
use crate::output::JobOutput;
use crate::snapshot::Snapshot;
#[cfg(any(test, feature = "fault-injection"))]
use crate::spec::Fault;
use crate::spec::{JobSpec, Resolved};

/// A job's number, unique within a manager, in submission order from 1.
pub type JobId = u64;

/// Where a job is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Submitted; waits for the next superstep boundary (or its turn).
    Queued,
    /// Running supersteps.
    Running,
    /// Finished; the result waits to be taken.
    Done,
    /// Stopped by an error (bad parameter, panic, deadline); see the error.
    Failed,
    /// Cancelled by the submitter.
    Cancelled,
}

impl JobState {
    /// Whether the job will not change state again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Done | JobState::Failed | JobState::Cancelled
        )
    }
}

/// A consistent-enough view of a job for displays.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JobStatus {
    /// The job's number.
    pub id: JobId,
    /// The job's name.
    pub name: String,
    /// The algorithm's short name.
    pub algorithm: &'static str,
    /// Graph name and pinned version, `name@v1`.
    pub snapshot: String,
    /// Where the job is.
    pub state: JobState,
    /// Supersteps started so far (1-based while running).
    pub superstep: u64,
    /// Active vertices of the latest superstep.
    pub active_vertices: u64,
    /// Out-edges of those vertices (dense steps: the edges scanned).
    pub active_edges: u64,
    /// Bytes of per-vertex state the job holds now: its share of a fused
    /// group while running, its result while that waits to be taken.
    pub state_bytes: u64,
    /// The error of a failed job.
    pub error: Option<String>,
    /// Seconds from submission to the end (`None` while not finished).
    pub latency_seconds: Option<f64>,
    /// Seconds from the first superstep to the end (`None` while not finished).
    pub run_seconds: Option<f64>,
}

#[derive(Debug)]
struct Record {
    state: JobState,
    error: Option<JobError>,
    result: Option<JobOutput>,
    taken: bool,
    started: Option<Instant>,
    finished: Option<Instant>,
}

/// What the manager and the executors share about one job.
#[derive(Debug)]
pub struct JobShared {
    pub(crate) id: JobId,
    pub(crate) spec: JobSpec,
    pub(crate) snapshot: Arc<Snapshot>,
    pub(crate) resolved: Option<Resolved>,
    pub(crate) submitted: Instant,
    /// May share a fused group (cleared when a group panicked and its lanes restart alone).
    pub(crate) fusable: AtomicBool,
    cancel: AtomicBool,
    superstep: AtomicU64,
    active_vertices: AtomicU64,
    active_edges: AtomicU64,
    state_bytes: AtomicU64,
    /// The manager's account of state bytes (results made count at once).
    ledger: Arc<StateLedger>,
    record: Mutex<Record>,
    changed: Condvar,
}

/// A manager's account of job state bytes for its peak: the state held
/// when the current superstep began plus the results made during it. A
/// task builds its finishing jobs' results while it still holds its own
/// state (PageRank lanes copy each lane out of the shared rows), so both
/// are resident at once. Results are counted when made, before the job
/// ends, so the peak is complete when a waiter sees the job end.
#[derive(Debug, Default)]
pub(crate) struct StateLedger {
    base: AtomicU64,
    made: AtomicU64,
    peak: AtomicU64,
}

impl StateLedger {
    /// A superstep begins with `held` bytes of job state.
    pub(crate) fn begin_step(&self, held: u64) {
        self.base.store(held, Ordering::Relaxed);
        self.made.store(0, Ordering::Relaxed);
        self.peak.fetch_max(held, Ordering::Relaxed);
    }

    /// A result of `bytes` was built.
    fn result_made(&self, bytes: u64) {
        let made = self.made.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak
            .fetch_max(self.base.load(Ordering::Relaxed) + made, Ordering::Relaxed);
    }

    /// The state now is `held` bytes.
    pub(crate) fn note(&self, held: u64) {
        self.peak.fetch_max(held, Ordering::Relaxed);
    }

    /// The largest state seen, in bytes.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl JobShared {
    pub(crate) fn new(
        id: JobId,
        spec: JobSpec,
        snapshot: Arc<Snapshot>,
        resolved: Result<Resolved, JobError>,
        ledger: Arc<StateLedger>,
    ) -> Self {
        let (resolved, state, error) = match resolved {
            Ok(r) => (Some(r), JobState::Queued, None),
            Err(e) => (None, JobState::Failed, Some(e)),
        };
        let now = Instant::now();
        JobShared {
            id,
            spec,
            snapshot,
            resolved,
            submitted: now,
            fusable: AtomicBool::new(true),
            cancel: AtomicBool::new(false),
            superstep: AtomicU64::new(0),
            active_vertices: AtomicU64::new(0),
            active_edges: AtomicU64::new(0),
            state_bytes: AtomicU64::new(0),
            ledger,
            record: Mutex::new(Record {
                state,
                error,
                result: None,
                taken: false,
                started: None,
                finished: (state == JobState::Failed).then_some(now),
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the job may join a fused group.
    pub(crate) fn fusable(&self) -> bool {
        self.fusable.load(Ordering::Relaxed)
    }

    /// Whether the submitter asked to cancel.
    #[inline]
    pub(crate) fn cancel_requested(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The reason to stop now, if any: cancellation or a passed deadline.
    pub(crate) fn stop_reason(&self) -> Option<JobError> {
        if self.cancel_requested() {
            return Some(JobError::Cancelled);
        }
        match self.spec.deadline {
            Some(d) if self.submitted.elapsed() > d => Some(JobError::DeadlineExceeded(d)),
            _ => None,
        }
    }

    /// Marks the job running (at its first superstep).
    pub(crate) fn mark_running(&self) {
        let mut r = self.lock();
        if r.state == JobState::Queued {
            r.state = JobState::Running;
            r.started = Some(Instant::now());
        }
    }

    /// Records the start of a superstep over `active` vertices and `edges` edges.
    pub(crate) fn record_step(&self, active: u64, edges: u64) {
        self.superstep.fetch_add(1, Ordering::Relaxed);
        self.active_vertices.store(active, Ordering::Relaxed);
        self.active_edges.store(edges, Ordering::Relaxed);
    }

    /// The current superstep (1-based once running).
    #[cfg(any(test, feature = "fault-injection"))]
    pub(crate) fn superstep(&self) -> u64 {
        self.superstep.load(Ordering::Relaxed)
    }

    /// Sets the bytes of state the job holds.
    pub(crate) fn set_state_bytes(&self, b: u64) {
        self.state_bytes.store(b, Ordering::Relaxed);
    }

    /// Bytes of state the job holds.
    pub(crate) fn state_bytes(&self) -> u64 {
        self.state_bytes.load(Ordering::Relaxed)
    }

    /// Panics when an injected fault is due in the current superstep. Called
    /// by kernels while they process a chunk. Compiled only in tests and
    /// with the `fault-injection` feature; otherwise a no-op.
    #[inline]
    pub(crate) fn maybe_fault(&self) {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(Fault::PanicAtSuperstep(s)) = self.spec.fault {
            if self.superstep() == s {
                panic!("injected fault in job {} at superstep {s}", self.spec.name);
            }
        }
    }

    /// For a job run by one whole-graph kernel call (BFS, SSSP): panics when
    /// any fault is injected, before the kernel starts. The kernel runs all
    /// its supersteps inside the call, some in teams that wait for each
    /// other, so a panic at a later superstep could leave a team waiting.
    /// Compiled only in tests and with the `fault-injection` feature.
    pub(crate) fn maybe_fault_whole(&self) {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(Fault::PanicAtSuperstep(s)) = self.spec.fault {
            panic!(
                "injected fault in job {} (superstep {s}, raised at the start of its whole-graph kernel)",
                self.spec.name
            );
        }
    }

    /// Ends the job: `Ok` stores the result, `Err` records the failure or
    /// cancellation. Later calls do nothing (the first end wins).
    pub(crate) fn finish(&self, outcome: Result<JobOutput, JobError>) {
        let mut r = self.lock();
        if r.state.is_terminal() {
            return;
        }
        r.finished = Some(Instant::now());
        if r.started.is_none() {
            r.started = r.finished;
        }
        // A result waiting to be taken still takes memory: it is the job's state.
        let held = outcome.as_ref().map_or(0, JobOutput::size_bytes);
        self.ledger.result_made(held);
        match outcome {
            Ok(out) => {
                r.state = JobState::Done;
                r.result = Some(out);
            }
            Err(JobError::Cancelled) => {
                r.state = JobState::Cancelled;
                r.error = Some(JobError::Cancelled);
            }
            Err(e) => {
                r.state = JobState::Failed;
                r.error = Some(e);
            }
        }
        drop(r);
        self.state_bytes.store(held, Ordering::Relaxed);
        self.changed.notify_all();
    }

    /// Puts a job back in the queue (its fused group failed; it restarts alone).
    pub(crate) fn requeue(&self) {
        self.fusable.store(false, Ordering::Relaxed);
        self.superstep.store(0, Ordering::Relaxed);
        self.active_vertices.store(0, Ordering::Relaxed);
        self.active_edges.store(0, Ordering::Relaxed);
        self.state_bytes.store(0, Ordering::Relaxed);
    }

    pub(crate) fn status(&self) -> JobStatus {
        let r = self.lock();
        let secs = |a: Instant, b: Option<Instant>| b.map(|b| (b - a).as_secs_f64());
        JobStatus {
            id: self.id,
            name: self.spec.name.clone(),
            algorithm: self.spec.algorithm.name(),
            snapshot: format!("{}@{}", self.snapshot.name(), self.snapshot.id()),
            state: r.state,
            superstep: self.superstep.load(Ordering::Relaxed),
            active_vertices: self.active_vertices.load(Ordering::Relaxed),
            active_edges: self.active_edges.load(Ordering::Relaxed),
            state_bytes: self.state_bytes.load(Ordering::Relaxed),
            error: r.error.as_ref().map(|e| e.to_string()),
            latency_seconds: secs(self.submitted, r.finished),
            run_seconds: r.started.and_then(|s| secs(s, r.finished)),
        }
    }
}

/// The submitter's handle on a job: status, progress, cancellation, and
/// the result (taken once).
#[derive(Clone, Debug)]
pub struct JobHandle {
    pub(crate) shared: Arc<JobShared>,
}

impl JobHandle {
    /// The job's number.
    pub fn id(&self) -> JobId {
        self.shared.id
    }

    /// The snapshot the job pinned at submission.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.shared.snapshot
    }

    /// Status and live progress.
    pub fn status(&self) -> JobStatus {
        self.shared.status()
    }

    /// Asks the job to stop. A queued job never starts; a running one stops
    /// at its next chunk (mid-superstep) and its state is released. Other
    /// jobs are not disturbed. Does nothing once the job has ended.
    pub fn cancel(&self) {
        self.shared.cancel.store(true, Ordering::Relaxed);
    }

    /// Waits until the job has ended (done, failed or cancelled), or until
    /// `timeout` passes; returns the state it saw last.
    pub fn wait(&self, timeout: Option<Duration>) -> JobState {
        let start = Instant::now();
        let mut r = self.shared.lock();
        loop {
            if r.state.is_terminal() {
                return r.state;
            }
            let wait = match timeout {
                None => Duration::from_millis(100),
                Some(t) => match t.checked_sub(start.elapsed()) {
                    Some(left) => left.min(Duration::from_millis(100)),
                    None => return r.state,
                },
            };
            r = match self.shared.changed.wait_timeout(r, wait) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Takes the result: the output of a finished job (once; later calls
    /// give [`JobError::AlreadyTaken`]), or the job's error.
    pub fn take_result(&self) -> Result<JobOutput, JobError> {
        let mut r = self.shared.lock();
        match r.state {
            JobState::Done => {
                if r.taken {
                    return Err(JobError::AlreadyTaken(self.shared.id));
                }
                r.taken = true;
                self.shared.state_bytes.store(0, Ordering::Relaxed);
                r.result
                    .take()
                    .ok_or(JobError::AlreadyTaken(self.shared.id))
            }
            JobState::Failed | JobState::Cancelled => Err(r
                .error
                .clone()
                .unwrap_or_else(|| JobError::Failed("unknown error".into()))),
            JobState::Queued | JobState::Running => Err(JobError::NotFinished(self.shared.id)),
        }
    }
}
