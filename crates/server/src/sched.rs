//! `--scheduler POLICY`: managed jobs from every client go through one
//! [`Runner`] (the CongraPlus scheduler of `plexus batch --scheduler`),
//! which decides when each starts, in which unit and with how many
//! threads. One thread owns the runner: it takes arrivals, withdraws jobs
//! cancelled before their launch, ticks the runner every few
//! milliseconds, and hands each launched job's handle to its [`Slot`].
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use plexus_jobs::sched::runner::RunnerStats;
use plexus_jobs::sched::{Cost, Machine, Policy, Runner, RunnerConfig};
use plexus_jobs::{JobHandle, JobSpec, JobState, JobStatus, Snapshot};

use crate::jobs::lock;

/// How often the runner decides when nothing arrives (as `plexus batch
/// --scheduler` ticks).
const TICK: Duration = Duration::from_millis(2);

/// Why a withdrawn job ended.
const CANCELLED: &str = "job was cancelled";

/// The scheduler the server runs managed jobs through.
#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    /// The policy (`congra`, `fifo`, ...).
    pub policy: Policy,
    /// The machine it schedules on (nodes, cores, bandwidth).
    pub machine: Machine,
}

/// A scheduled job as the server sees it: queued in the runner until
/// launched, then its handle; or ended before a launch (refused or
/// withdrawn).
#[derive(Default)]
pub struct Slot {
    /// The launched job's handle, and when it was handed over.
    handle: Mutex<Option<(JobHandle, Instant)>>,
    /// Ended without a launch: the state and why.
    ended: Mutex<Option<(JobState, String, Instant)>>,
    cancel: AtomicBool,
}

impl Slot {
    /// The launched job's handle.
    pub fn handle(&self) -> Option<JobHandle> {
        lock(&self.handle).as_ref().map(|(h, _)| h.clone())
    }

    /// When the job was launched (to within a tick).
    pub fn launched_at(&self) -> Option<Instant> {
        lock(&self.handle).as_ref().map(|(_, t)| *t)
    }

    /// The state, progress and error now (`None` parts while queued).
    pub fn status(&self) -> Option<JobStatus> {
        self.handle().map(|h| h.status())
    }

    /// The state and error of a job that ended without a launch, and when.
    pub fn ended(&self) -> Option<(JobState, String, Instant)> {
        lock(&self.ended).clone()
    }

    /// Asks the job to stop: withdrawn before its launch, cancelled through
    /// its handle after.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle() {
            h.cancel();
        }
    }

    /// Ends a job that was never launched (the first end wins).
    pub(crate) fn end(&self, state: JobState, why: String) {
        lock(&self.ended).get_or_insert((state, why, Instant::now()));
    }
}

struct Arrival {
    slot: Arc<Slot>,
    snapshot: Arc<Snapshot>,
    spec: JobSpec,
    cost: Cost,
}

/// The runner's thread and the way to it.
pub struct Sched {
    tx: Mutex<Option<mpsc::Sender<Arrival>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    stats: Arc<Mutex<RunnerStats>>,
    cores: usize,
}

impl Sched {
    /// Starts the runner's thread under `cfg`, each unit's jobs within
    /// `memory_limit_bytes` (`None`: `MemAvailable`).
    pub fn start(cfg: &SchedulerConfig, memory_limit_bytes: Option<u64>) -> std::io::Result<Sched> {
        let (tx, rx) = mpsc::channel::<Arrival>();
        let runner = Runner::new(RunnerConfig {
            policy: cfg.policy,
            machine: cfg.machine.clone(),
            llc_bytes: None,
            memory_limit_bytes,
            fuse_sssp: false,
            pin: true,
        });
        let stats = Arc::new(Mutex::new(RunnerStats::default()));
        let s2 = Arc::clone(&stats);
        let thread = std::thread::Builder::new()
            .name("plexus-serve-scheduler".into())
            .spawn(move || drive(runner, &rx, &s2))?;
        Ok(Sched {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            stats,
            cores: cfg.machine.cores(),
        })
    }

    /// Queues a job in the runner; `false` once stopped.
    pub fn arrive(
        &self,
        slot: Arc<Slot>,
        snapshot: Arc<Snapshot>,
        spec: JobSpec,
        cost: Cost,
    ) -> bool {
        let a = Arrival {
            slot,
            snapshot,
            spec,
            cost,
        };
        lock(&self.tx).as_ref().is_some_and(|tx| tx.send(a).is_ok())
    }

    /// Figures of the units that have ended.
    pub fn stats(&self) -> RunnerStats {
        *lock(&self.stats)
    }

    /// Cores of the machine it schedules on.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Takes no more arrivals; returns once every job queued or running
    /// has ended (cancel them first to be quick).
    pub fn stop(&self) {
        lock(&self.tx).take();
        if let Some(h) = lock(&self.thread).take() {
            let _ = h.join();
        }
    }
}

impl Drop for Sched {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The runner's loop: until the channel closes and every job has ended.
fn drive(mut runner: Runner, rx: &mpsc::Receiver<Arrival>, stats: &Mutex<RunnerStats>) {
    // Jobs not yet launched nor ended, by runner number.
    let mut pending: Vec<(usize, Arc<Slot>)> = Vec::new();
    let mut open = true;
    loop {
        let mut arrivals = Vec::new();
        if open {
            match rx.recv_timeout(TICK) {
                Ok(a) => arrivals.push(a),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
            }
            arrivals.extend(rx.try_iter());
        } else {
            std::thread::sleep(TICK);
        }
        for a in arrivals {
            let at = runner.elapsed();
            let i = runner.arrive(a.snapshot, a.spec, a.cost, at);
            pending.push((i, a.slot));
        }
        for (i, slot) in &pending {
            if slot.cancel.load(Ordering::Relaxed) && runner.withdraw(*i, CANCELLED) {
                slot.end(JobState::Cancelled, CANCELLED.into());
            }
        }
        if let Err(e) = runner.tick() {
            // A unit's pool could not start: the jobs it would have run
            // stay queued and the next tick tries again.
            eprintln!("plexus serve: scheduler: {e}");
        }
        pending.retain(|(i, slot)| {
            if slot.ended().is_some() {
                return false;
            }
            if let Some(h) = runner.handle(*i) {
                if slot.cancel.load(Ordering::Relaxed) {
                    h.cancel();
                }
                *lock(&slot.handle) = Some((h.clone(), Instant::now()));
                return false;
            }
            if let Some(why) = runner.refused(*i) {
                slot.end(JobState::Failed, why.to_string());
                return false;
            }
            true
        });
        *lock(stats) = runner.stats();
        if !open && runner.idle() {
            return;
        }
    }
}
