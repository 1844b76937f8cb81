//! The real driver of [`decide`]: jobs arrive (the caller says when), the
//! policy decides at every arrival and every unit's end, and each launched
//! unit runs in its own [`JobManager`] with a pool of `T` threads pinned to
//! its node's CPUs. A unit of one scan group runs in shared mode, so jobs
//! that join it later are admitted at its next superstep boundary and fused
//! into its lanes; any other unit runs its one job in sequential mode. A
//! [`Action::Resize`] asks the unit's manager for another pool size
//! ([`JobManager::set_threads`]), applied at its next superstep boundary.
use std::sync::Arc;
use std::time::Instant;

use super::model::{Cost, Machine};
use super::policy::{
    decide, next_aging_deadline, Action, Decision, DecisionLog, Policy, QueuedJob, RunningUnit,
    SchedState,
};
use crate::cache::detect_llc;
use crate::error::JobError;
use crate::job::{JobHandle, JobStatus};
use crate::manager::{ExecMode, JobManager, ManagerConfig};
use crate::snapshot::Snapshot;
use crate::spec::{Algorithm, JobSpec};

/// Settings of a [`Runner`].
#[derive(Clone, Debug)]
pub struct RunnerConfig {
    /// The policy.
    pub policy: Policy,
    /// The machine (with its nodes' CPU ids, for pinning).
    pub machine: Machine,
    /// LLC bytes for chunk plans; `None`: detected once when the runner starts.
    pub llc_bytes: Option<u64>,
    /// Memory budget of each unit's jobs; `None`: `MemAvailable`.
    pub memory_limit_bytes: Option<u64>,
    /// Let SSSP jobs form scan groups too (off: measured slower fused).
    pub fuse_sssp: bool,
    /// Pin each unit's threads to its node's CPUs.
    pub pin: bool,
}

/// Figures summed over the units that ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct RunnerStats {
    /// Bytes of topology read by every unit.
    pub topology_bytes_read: u64,
    /// Passes over the chunks by every unit.
    pub passes: u64,
    /// The largest Σ job state one unit held at a boundary.
    pub peak_unit_state_bytes: u64,
    /// Units launched.
    pub units: u64,
    /// Resizes and moves asked of running units.
    pub resizes: u64,
    /// Pools their managers rebuilt for those requests at a superstep
    /// boundary (a request that arrived after a unit's last boundary, or
    /// replaced by a later one, builds none).
    pub pools_rebuilt: u64,
}

struct Entry {
    snapshot: Arc<Snapshot>,
    spec: JobSpec,
    cost: Cost,
    group: Option<String>,
    arrival: f64,
    launched_at: Option<f64>,
    handle: Option<JobHandle>,
    refused: Option<String>,
    finish: Option<f64>,
}

struct Unit {
    id: usize,
    node: Option<usize>,
    threads: usize,
    jobs: Vec<usize>,
    cost: Cost,
    group: Option<String>,
    /// Estimated share of its work left at `since` (from the profiled
    /// times at the threads it had; contention is not seen).
    left: f64,
    /// Seconds from the start when `left` was estimated.
    since: f64,
    mgr: JobManager,
}

impl Unit {
    /// Estimated share of the unit's work left at `now`, in [0, 1].
    fn left_at(&self, now: f64) -> f64 {
        let whole = self.cost.seconds(self.threads as f64).max(1e-12);
        (self.left - (now - self.since) / whole).max(0.0)
    }
}

/// Runs a stream of jobs under a policy. Call [`Runner::arrive`] when a job
/// arrives and [`Runner::tick`] often (every few milliseconds).
pub struct Runner {
    cfg: RunnerConfig,
    start: Instant,
    entries: Vec<Entry>,
    units: Vec<Unit>,
    log: DecisionLog,
    next_unit: usize,
    dirty: bool,
    /// When a queued job next becomes starved (`policy::STARVATION_QOS`):
    /// the policy decides again then.
    aging: Option<f64>,
    stats: RunnerStats,
}

/// Whether jobs running `alg` can share one scan (the manager fuses them).
pub(crate) fn fusable(alg: &Algorithm, fuse_sssp: bool) -> bool {
    match alg {
        Algorithm::Sssp { .. } => fuse_sssp,
        _ => true,
    }
}

impl Runner {
    /// A runner whose clock starts now. Detects the LLC once unless given.
    pub fn new(mut cfg: RunnerConfig) -> Self {
        cfg.llc_bytes = Some(detect_llc(cfg.llc_bytes).bytes);
        Runner {
            cfg,
            start: Instant::now(),
            entries: Vec::new(),
            units: Vec::new(),
            log: DecisionLog::default(),
            next_unit: 0,
            dirty: false,
            aging: None,
            stats: RunnerStats::default(),
        }
    }

    /// Seconds since the runner started.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// A job arrives (its arrival time is `arrival` seconds from the start,
    /// for response times); returns its number. It waits for the next tick.
    pub fn arrive(
        &mut self,
        snapshot: Arc<Snapshot>,
        spec: JobSpec,
        cost: Cost,
        arrival: f64,
    ) -> usize {
        let group = (matches!(self.cfg.policy, Policy::Congra { .. })
            && fusable(&spec.algorithm, self.cfg.fuse_sssp))
        .then(|| {
            format!(
                "{}@{}@v{}",
                spec.algorithm.name(),
                snapshot.name(),
                snapshot.id().0
            )
        });
        self.entries.push(Entry {
            snapshot,
            spec,
            cost,
            group,
            arrival,
            launched_at: None,
            handle: None,
            refused: None,
            finish: None,
        });
        self.dirty = true;
        self.entries.len() - 1
    }

    /// Reaps ended units and, when something changed, decides and applies
    /// the decisions. Returns the decisions made now.
    pub fn tick(&mut self) -> Result<Vec<Decision>, JobError> {
        let now = self.elapsed();
        // Finish times of ended jobs (exact: launch + latency in the unit).
        for e in &mut self.entries {
            if e.finish.is_none() {
                if let (Some(h), Some(at)) = (&e.handle, e.launched_at) {
                    let st = h.status();
                    if st.state.is_terminal() {
                        e.finish = Some(at + st.latency_seconds.unwrap_or(now - at));
                    }
                }
            }
        }
        let mut ended = Vec::new();
        for (i, u) in self.units.iter().enumerate() {
            if u.jobs.iter().all(|&j| self.entries[j].finish.is_some()) {
                ended.push(i);
            }
        }
        for i in ended.into_iter().rev() {
            let u = self.units.remove(i);
            let s = u.mgr.stats();
            self.stats.topology_bytes_read += s.topology_bytes_read;
            self.stats.passes += s.passes;
            self.stats.pools_rebuilt += u.mgr.resizes();
            self.stats.peak_unit_state_bytes =
                self.stats.peak_unit_state_bytes.max(s.peak_job_state_bytes);
            u.mgr.shutdown();
            self.dirty = true;
        }
        if self.aging.is_some_and(|at| now >= at) {
            self.aging = None;
            self.dirty = true;
        }
        if !self.dirty {
            return Ok(Vec::new());
        }
        self.dirty = false;
        let queued: Vec<QueuedJob> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.launched_at.is_none() && e.refused.is_none())
            .map(|(i, e)| QueuedJob {
                id: i,
                name: e.spec.name.clone(),
                arrival: e.arrival,
                cost: e.cost,
                group: e.group.clone(),
            })
            .collect();
        let resizing = matches!(self.cfg.policy, Policy::Congra { resize: true, .. });
        // With re-allocation an ended unit's cores go to the running ones
        // even when nothing waits.
        if queued.is_empty() && (!resizing || self.units.is_empty()) {
            return Ok(Vec::new());
        }
        let running: Vec<RunningUnit> = self
            .units
            .iter()
            .map(|u| RunningUnit {
                id: u.id,
                node: u.node,
                threads: u.threads,
                jobs: u.jobs.clone(),
                cost: u.cost,
                group: u.group.clone(),
                remaining_seconds: u.left_at(now) * u.cost.seconds(u.threads as f64),
                resizable: matches!(self.cfg.policy, Policy::Congra { .. }),
            })
            .collect();
        let ds = decide(
            self.cfg.policy,
            &SchedState {
                now,
                machine: &self.cfg.machine,
                queue: &queued,
                running: &running,
            },
        );
        for d in &ds {
            self.apply(&d.action, now)?;
        }
        let still: Vec<QueuedJob> = queued
            .into_iter()
            .filter(|q| self.entries[q.id].launched_at.is_none())
            .collect();
        self.aging = next_aging_deadline(
            self.cfg.policy,
            &SchedState {
                now,
                machine: &self.cfg.machine,
                queue: &still,
                running: &[],
            },
        );
        Ok(self.log.record(&ds))
    }

    fn apply(&mut self, a: &Action, now: f64) -> Result<(), JobError> {
        match a {
            Action::Launch {
                jobs,
                node,
                threads,
            } => {
                let cpus = node.and_then(|n| self.cfg.machine.cpus.get(n).cloned());
                let group = if jobs.len() > 1 || matches!(self.cfg.policy, Policy::Congra { .. }) {
                    self.entries[jobs[0]].group.clone()
                } else {
                    None
                };
                let mgr = JobManager::new(ManagerConfig {
                    mode: if group.is_some() {
                        ExecMode::Shared
                    } else {
                        ExecMode::Sequential
                    },
                    threads: (*threads).max(1),
                    llc_bytes: self.cfg.llc_bytes,
                    memory_limit_bytes: self.cfg.memory_limit_bytes,
                    fuse: true,
                    fuse_sssp: self.cfg.fuse_sssp,
                    cpus: if self.cfg.pin { cpus } else { None },
                    ..Default::default()
                })?;
                let costs: Vec<Cost> = jobs.iter().map(|&j| self.entries[j].cost).collect();
                let mut unit = Unit {
                    id: self.next_unit,
                    node: *node,
                    threads: (*threads).max(1),
                    jobs: Vec::new(),
                    cost: Cost::fused(&costs).unwrap_or(costs[0]),
                    group,
                    left: 1.0,
                    since: now,
                    mgr,
                };
                self.next_unit += 1;
                self.stats.units += 1;
                for &j in jobs {
                    self.submit(&unit.mgr, j, now);
                    unit.jobs.push(j);
                }
                self.units.push(unit);
            }
            Action::Join { unit, job } => {
                if let Some(pos) = self.units.iter().position(|u| u.id == *unit) {
                    let mgr = &self.units[pos].mgr;
                    let e = &mut self.entries[*job];
                    e.launched_at = Some(now);
                    match mgr.submit(Arc::clone(&e.snapshot), e.spec.clone()) {
                        Ok(h) => e.handle = Some(h),
                        Err(err) => {
                            e.refused = Some(err.to_string());
                            e.finish = Some(now);
                        }
                    }
                    let cost = self.entries[*job].cost;
                    let u = &mut self.units[pos];
                    u.jobs.push(*job);
                    // As the simulator: the group's remaining run grows by
                    // the fused time's increase, not below the joiner's own.
                    let t = u.threads as f64;
                    let left_s = u.left_at(now) * u.cost.seconds(t);
                    let fused = Cost::fused(&[u.cost, cost]).unwrap_or(u.cost);
                    let grown =
                        (left_s + fused.seconds(t) - u.cost.seconds(t)).max(cost.seconds(t));
                    u.cost = fused;
                    u.left = (grown / fused.seconds(t).max(1e-12)).min(1.0);
                    u.since = now;
                }
            }
            Action::Resize { unit, threads } => {
                let node = self
                    .units
                    .iter()
                    .find(|u| u.id == *unit)
                    .and_then(|u| u.node);
                self.apply(
                    &Action::Move {
                        unit: *unit,
                        node,
                        threads: *threads,
                    },
                    now,
                )?;
            }
            Action::Move {
                unit,
                node,
                threads,
            } => {
                if let Some(u) = self.units.iter_mut().find(|u| u.id == *unit) {
                    let t = (*threads).max(1);
                    // A unit spread over every node (`node: None`) gets no
                    // CPU set: the pool's default pinning spreads it.
                    u.node = *node;
                    let cpus = if self.cfg.pin {
                        u.node.and_then(|n| self.cfg.machine.cpus.get(n).cloned())
                    } else {
                        None
                    };
                    u.left = u.left_at(now);
                    u.since = now;
                    u.threads = t;
                    u.mgr.set_threads(t, cpus);
                    self.stats.resizes += 1;
                }
            }
            Action::Hold { .. } => {}
        }
        Ok(())
    }

    fn submit(&mut self, mgr: &JobManager, j: usize, now: f64) {
        let e = &mut self.entries[j];
        e.launched_at = Some(now);
        match mgr.submit(Arc::clone(&e.snapshot), e.spec.clone()) {
            Ok(h) => e.handle = Some(h),
            Err(err) => {
                e.refused = Some(err.to_string());
                e.finish = Some(now);
            }
        }
    }

    /// Withdraws job `i` before its launch (its submitter cancelled it): it
    /// is never launched and counts as refused with `reason`. Returns
    /// false, changing nothing, once the job is launched or refused (cancel
    /// a launched job through its handle).
    pub fn withdraw(&mut self, i: usize, reason: &str) -> bool {
        let now = self.elapsed();
        match self.entries.get_mut(i) {
            Some(e) if e.launched_at.is_none() && e.refused.is_none() => {
                e.refused = Some(reason.to_string());
                e.finish = Some(now);
                self.dirty = true;
                true
            }
            _ => false,
        }
    }

    /// Whether every job that arrived has ended and no unit runs.
    pub fn idle(&self) -> bool {
        self.units.is_empty() && self.entries.iter().all(|e| e.finish.is_some())
    }

    /// The handle of job `i` once launched.
    pub fn handle(&self, i: usize) -> Option<&JobHandle> {
        self.entries.get(i)?.handle.as_ref()
    }

    /// Why job `i` was refused at launch, if it was.
    pub fn refused(&self, i: usize) -> Option<&str> {
        self.entries.get(i)?.refused.as_deref()
    }

    /// Seconds from job `i`'s arrival to its end, once ended.
    pub fn response_seconds(&self, i: usize) -> Option<f64> {
        let e = self.entries.get(i)?;
        e.finish.map(|f| (f - e.arrival).max(0.0))
    }

    /// Seconds from the runner's start to job `i`'s launch.
    pub fn launched_at(&self, i: usize) -> Option<f64> {
        self.entries.get(i)?.launched_at
    }

    /// Statuses of the launched jobs (for displays).
    pub fn statuses(&self) -> Vec<JobStatus> {
        self.entries
            .iter()
            .filter_map(|e| e.handle.as_ref().map(|h| h.status()))
            .collect()
    }

    /// Every decision so far (a hold repeated at later decision points is
    /// kept once, see [`DecisionLog`]).
    pub fn decisions(&self) -> &[Decision] {
        self.log.decisions()
    }

    /// Figures of the units that have ended.
    pub fn stats(&self) -> RunnerStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Values;
    use crate::Catalog;
    use plexus_graph::{BuildOptions, Graph};

    fn run(policy: Policy) -> (Vec<Values>, Vec<Decision>) {
        let edges: Vec<(u32, u32)> = (0..300u32).map(|i| (i, (i * 13 + 5) % 300)).collect();
        let g = Graph::from_edges(300, &edges, &BuildOptions::directed()).unwrap();
        let snap = Catalog::new().publish("g", g);
        let nodes = super::super::numa::read_nodes(std::path::Path::new("/sys"));
        let mut m = Machine::model(1, nodes[0].len(), 10.0);
        m.cpus = vec![nodes[0].clone()];
        let mut r = Runner::new(RunnerConfig {
            policy,
            machine: m,
            llc_bytes: Some(1 << 20),
            memory_limit_bytes: None,
            fuse_sssp: false,
            pin: true,
        });
        let c = Cost::fit(&[0.01, 0.006], 1e6, 1e5).unwrap();
        let specs = [
            JobSpec::new("bfs-1", Algorithm::Bfs { source: "3".into() }),
            JobSpec::new("pr-2", Algorithm::pagerank(0.85)),
            JobSpec::new("pr-3", Algorithm::pagerank(0.5)),
            JobSpec::new("wcc-4", Algorithm::Wcc),
        ];
        for s in specs {
            r.arrive(Arc::clone(&snap), s, c, 0.0);
        }
        while !r.idle() {
            r.tick().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let vals = (0..4)
            .map(|i| r.handle(i).unwrap().take_result().unwrap().values().clone())
            .collect();
        assert!((0..4).all(|i| r.response_seconds(i).is_some()));
        (vals, r.decisions().to_vec())
    }

    #[test]
    fn a_manager_resized_between_supersteps_gives_the_sequential_results() {
        let edges: Vec<(u32, u32)> = (0..2000u32)
            .flat_map(|i| [(i, (i * 13 + 5) % 2000), (i, (i * 7 + 1) % 2000)])
            .collect();
        let g = Graph::from_edges(2000, &edges, &BuildOptions::directed()).unwrap();
        let snap = Catalog::new().publish("g", g);
        let specs = [
            JobSpec::new("bfs-1", Algorithm::Bfs { source: "3".into() }),
            JobSpec::new("pr-2", Algorithm::pagerank(0.85)),
            JobSpec::new("pr-3", Algorithm::pagerank(0.5)),
            JobSpec::new("wcc-4", Algorithm::Wcc),
            JobSpec::new("cdlp-5", Algorithm::Cdlp { iterations: 10 }),
        ];
        let run = |mode: ExecMode, resize: bool| -> (Vec<Values>, u64) {
            let mgr = JobManager::new(ManagerConfig {
                mode,
                threads: 1,
                llc_bytes: Some(64 << 10),
                ..Default::default()
            })
            .unwrap();
            let hs: Vec<JobHandle> = specs
                .iter()
                .map(|s| mgr.submit(Arc::clone(&snap), s.clone()).unwrap())
                .collect();
            if resize {
                // Grow, shrink and grow again while the jobs run; a request
                // replaced before a boundary is never applied.
                for t in [3, 2, 1, 2] {
                    mgr.set_threads(t, None);
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
            let vals = hs
                .iter()
                .map(|h| {
                    h.wait(None);
                    h.take_result().unwrap().values().clone()
                })
                .collect();
            let n = mgr.resizes();
            mgr.shutdown();
            (vals, n)
        };
        // BFS parents may differ with the thread count (any parent on the
        // level above is valid; the engine's push levels race for it); the
        // depths and every other result may not.
        let same = |a: &[Values], b: &[Values]| {
            a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| match (x, y) {
                    (
                        Values::Bfs {
                            depth: d1,
                            iterations: i1,
                            ..
                        },
                        Values::Bfs {
                            depth: d2,
                            iterations: i2,
                            ..
                        },
                    ) => d1 == d2 && i1 == i2,
                    _ => x == y,
                })
        };
        let (want, _) = run(ExecMode::Sequential, false);
        let (got, n) = run(ExecMode::Shared, true);
        assert!(same(&got, &want), "shared with resizes differs");
        assert!(n >= 1, "no resize was applied");
        let (got, _) = run(ExecMode::Sequential, true);
        assert!(same(&got, &want), "sequential with resizes differs");
        // A pool's start (what a resize costs besides the boundary wait).
        let t0 = Instant::now();
        for _ in 0..10 {
            let p = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            p.install(|| ());
        }
        eprintln!(
            "pool of 2 threads started in {:.3} ms",
            t0.elapsed().as_secs_f64() * 100.0
        );
    }

    /// This machine's CPUs split into two one-CPU "nodes", or `None` (with
    /// a note) when the process may use fewer than two CPUs.
    fn split_machine() -> Option<Machine> {
        let cpus = super::super::numa::allowed_cpus().unwrap_or_default();
        if cpus.len() < 2 {
            eprintln!("skipped: fewer than two CPUs to split into nodes");
            return None;
        }
        let mut m = Machine::model(2, 1, 10.0);
        m.cpus = vec![vec![cpus[0]], vec![cpus[1]]];
        m.remote_factor = 1.0;
        Some(m)
    }

    #[test]
    fn a_pool_moved_to_other_cpus_runs_there_after_the_next_boundary() {
        let Some(m) = split_machine() else { return };
        let edges: Vec<(u32, u32)> = (0..500u32).map(|i| (i, (i * 7 + 3) % 500)).collect();
        let g = Graph::from_edges(500, &edges, &BuildOptions::directed()).unwrap();
        let snap = Catalog::new().publish("g", g);
        let mgr = JobManager::new(ManagerConfig {
            mode: ExecMode::Shared,
            threads: 1,
            llc_bytes: Some(64 << 10),
            cpus: Some(m.cpus[0].clone()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(mgr.worker_cpus(), vec![Some(m.cpus[0].clone())]);
        let mut spec = JobSpec::new("pr", Algorithm::pagerank(0.85));
        let h = mgr.submit(Arc::clone(&snap), spec.clone()).unwrap();
        h.wait(None);
        let want = h.take_result().unwrap().values().clone();
        // Moved to the other node with both CPUs' worth of threads there:
        // the next job's supersteps run on the new pool.
        mgr.set_threads(1, Some(m.cpus[1].clone()));
        spec.name = "pr-2".into();
        let h = mgr.submit(Arc::clone(&snap), spec).unwrap();
        h.wait(None);
        assert_eq!(h.take_result().unwrap().values(), &want);
        assert_eq!(mgr.resizes(), 1);
        assert_eq!(mgr.worker_cpus(), vec![Some(m.cpus[1].clone())]);
        mgr.shutdown();
    }

    /// On two one-CPU nodes, congra places a long PageRank and a short BFS
    /// on one node each; when the BFS ends, nothing waits and one unit is
    /// left, so the long unit spreads over both nodes (a `Move`, applied by
    /// its manager at the next superstep boundary: a new pool is built).
    /// The PageRank runs until then and is cancelled after a few more
    /// supersteps; the BFS keeps fifo's depths.
    #[test]
    fn a_runner_on_two_nodes_spreads_the_last_unit_over_both() {
        let Some(m) = split_machine() else { return };
        let edges: Vec<(u32, u32)> = (0..20_000u32)
            .flat_map(|i| [(i, (i * 13 + 5) % 20_000), (i, (i * 7 + 1) % 20_000)])
            .collect();
        let g = Graph::from_edges(20_000, &edges, &BuildOptions::directed()).unwrap();
        let snap = Catalog::new().publish("g", g);
        let long = Algorithm::PageRank {
            damping: 0.85,
            iterations: Some(10_000_000),
            tolerance: 0.0,
            max_iterations: 10_000_000,
            personalization: None,
            precision: Default::default(),
        };
        let bfs = JobSpec::new("bfs", Algorithm::Bfs { source: "3".into() });
        // The PageRank is profiled long (10 s alone on one thread), the
        // BFS short; both scale with threads.
        let pr_cost = Cost::fit(&[10.0, 5.0], 1e6, 1e5).unwrap();
        let bfs_cost = Cost::fit(&[0.01, 0.005], 1e6, 1e5).unwrap();
        let cfg = |policy: Policy, machine: Machine| RunnerConfig {
            policy,
            machine,
            llc_bytes: Some(64 << 10),
            memory_limit_bytes: None,
            fuse_sssp: false,
            pin: true,
        };
        let depth = |v: &Values| match v {
            Values::Bfs { depth, .. } => depth.clone(),
            _ => panic!("not a BFS"),
        };
        let mut r = Runner::new(cfg(Policy::Fifo, m.clone()));
        r.arrive(Arc::clone(&snap), bfs.clone(), bfs_cost, 0.0);
        while !r.idle() {
            r.tick().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let want = depth(r.handle(0).unwrap().take_result().unwrap().values());

        let mut r = Runner::new(cfg(Policy::CONGRA, m));
        r.arrive(Arc::clone(&snap), JobSpec::new("pr", long), pr_cost, 0.0);
        r.arrive(Arc::clone(&snap), bfs, bfs_cost, 0.0);
        let spread = |d: &[Decision]| {
            d.iter().any(|x| {
                matches!(
                    x.action,
                    Action::Move {
                        node: None,
                        threads: 2,
                        ..
                    }
                )
            })
        };
        let t0 = Instant::now();
        let mut cancel_at = None;
        while !r.idle() {
            r.tick().unwrap();
            if cancel_at.is_none() && spread(r.decisions()) {
                cancel_at = Some(Instant::now() + std::time::Duration::from_millis(100));
            }
            if cancel_at.is_some_and(|at| Instant::now() >= at) || t0.elapsed().as_secs() > 60 {
                r.handle(0).unwrap().cancel();
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let d = r.decisions().to_vec();
        let launches: Vec<_> = d
            .iter()
            .filter_map(|x| match &x.action {
                Action::Launch { node, threads, .. } => Some((*node, *threads)),
                _ => None,
            })
            .collect();
        assert_eq!(launches.len(), 2, "{d:#?}");
        assert!(
            launches.iter().all(|&(n, t)| n.is_some() && t == 1),
            "{d:#?}"
        );
        assert_ne!(launches[0].0, launches[1].0, "one unit per node: {d:#?}");
        assert!(spread(&d), "no tail spread: {d:#?}");
        assert_eq!(
            depth(r.handle(1).unwrap().take_result().unwrap().values()),
            want
        );
        assert_eq!(
            r.handle(0).unwrap().status().state,
            crate::job::JobState::Cancelled
        );
        let stats = r.stats();
        assert!(stats.resizes >= 1);
        assert!(stats.pools_rebuilt >= 1, "{stats:?}");
    }

    #[test]
    fn a_resizing_runner_grows_units_and_logs_each_hold_once() {
        let (_, d) = run(Policy::CONGRA);
        let mut seen = std::collections::HashSet::new();
        for x in &d {
            if let Action::Hold { job, node, cause } = &x.action {
                assert!(seen.insert((*job, *node, *cause)), "{d:#?}");
            }
        }
    }

    #[test]
    fn every_policy_gives_the_same_results() {
        let (fifo, d) = run(Policy::Fifo);
        assert_eq!(d.len(), 4);
        for p in [
            Policy::All,
            Policy::CONGRA,
            Policy::Congra {
                look_ahead: false,
                short_job_bypass: false,
                resize: false,
            },
        ] {
            let (v, d) = run(p);
            assert!(!d.is_empty());
            assert_eq!(v, fifo, "{p}");
        }
    }

    #[test]
    fn a_withdrawn_job_is_never_launched() {
        let edges: Vec<(u32, u32)> = (0..300u32).map(|i| (i, (i * 13 + 5) % 300)).collect();
        let g = Graph::from_edges(300, &edges, &BuildOptions::directed()).unwrap();
        let snap = Catalog::new().publish("g", g);
        let mut r = Runner::new(RunnerConfig {
            policy: Policy::Fifo,
            machine: Machine::model(1, 1, 10.0),
            llc_bytes: Some(1 << 20),
            memory_limit_bytes: None,
            fuse_sssp: false,
            pin: false,
        });
        let c = Cost::fit(&[0.01], 1e6, 1e5).unwrap();
        let a = r.arrive(
            Arc::clone(&snap),
            JobSpec::new("wcc-1", Algorithm::Wcc),
            c,
            0.0,
        );
        let b = r.arrive(
            Arc::clone(&snap),
            JobSpec::new("wcc-2", Algorithm::Wcc),
            c,
            0.0,
        );
        assert!(r.withdraw(b, "job was cancelled"));
        assert!(!r.withdraw(b, "again"), "only once");
        while !r.idle() {
            r.tick().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(r.handle(a).unwrap().take_result().is_ok());
        assert!(r.handle(b).is_none());
        assert_eq!(r.refused(b), Some("job was cancelled"));
        assert!(
            !r.withdraw(a, "late"),
            "a launched job is cancelled through its handle"
        );
    }
}
