//! The simulator: replays a job stream through a policy's [`decide`] on a
//! modelled [`Machine`], with a fluid progress model (docs/scheduler.md).
//!
//! A unit at `t` threads alone finishes its work in `T(t) = a + b/t` seconds
//! ([`Cost::seconds`]), so it progresses at `1/T(t)` of its work per second.
//! On a node with `x = Σ threads / cores > 1` cores are time-shared: each
//! unit holds its `t` threads a `1/x` share of the time, so it progresses at
//! `1/(x·T(t))`, slowed by a further `1 + π(x − 1)` (oversubscription
//! penalty: context switches, cache refills, preempted barriers), and by
//! its co-run factor `1 + σ·f` ([`Cost::corun_factor`]) with `f` the share
//! of its node's other cores that other units' threads hold. A unit demands `bytes ×
//! progress rate` bytes per second, times the remote-access factor
//! `1 + (N−1)/N·(ρ − 1)` when its threads span `N > 1` nodes; when a node's
//! summed demand exceeds its bandwidth `B`, every unit there is slowed by
//! `B / Σ demand` (bandwidth roofline). Rates are recomputed at every event
//! (arrival, unit end), where the policy decides again.
//!
//! A job joining a running scan group extends the group: the group's cost
//! becomes the fused cost ([`Cost::fused`]) and its remaining time grows by
//! the fused time's increase, but not below the joiner's own time alone;
//! every job of a unit ends when the unit ends.
//!
//! A resized unit ([`Action::Resize`], `congra`'s units) keeps its threads
//! until its next superstep boundary, modelled as half a superstep at its
//! current threads later ([`Cost::superstep_seconds`]), and then stalls for
//! [`Machine::resize_seconds`] (its new pool starts): that much work at the
//! new rate is added to what it has left. A moved unit ([`Action::Move`])
//! changes node (or spreads over every node) at the same boundary.
//! Decisions are taken at arrivals, unit ends (with an empty queue too,
//! when the policy re-allocates) and when a queued job's aging bound
//! passes ([`super::policy::next_aging_deadline`]).
use serde::Serialize;

use super::model::{Cost, Machine};
use super::percentile;
use super::policy::{
    decide, next_aging_deadline, Action, Decision, DecisionLog, Policy, QueuedJob, RunningUnit,
    SchedState,
};

/// A job of the stream.
#[derive(Clone, Debug)]
pub struct SimJob {
    /// Its name.
    pub name: String,
    /// Arrival, seconds from the start.
    pub arrival: f64,
    /// Its profiled cost.
    pub cost: Cost,
    /// Its scan group key, if it can be fused.
    pub group: Option<String>,
}

/// What became of one job.
#[derive(Clone, Debug, Serialize)]
pub struct SimJobResult {
    pub name: String,
    pub arrival: f64,
    pub start: f64,
    pub finish: f64,
    /// `finish − arrival`, seconds.
    pub response_seconds: f64,
    /// The job alone on the machine with every core ([`solo_seconds`]).
    pub solo_seconds: f64,
    /// `response / solo`.
    pub qos: f64,
}

/// A policy's replay of a stream.
#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    pub policy: String,
    pub jobs: Vec<SimJobResult>,
    /// Seconds from 0 to the last finish.
    pub makespan_seconds: f64,
    pub throughput_jobs_per_hour: f64,
    pub qos_p50: Option<f64>,
    pub qos_p95: Option<f64>,
    pub decisions: Vec<Decision>,
}

/// The remote-access factor of a unit spanning every node.
fn span_factor(m: &Machine) -> f64 {
    if m.nodes > 1 {
        1.0 + (m.nodes - 1) as f64 / m.nodes as f64 * (m.remote_factor - 1.0)
    } else {
        1.0
    }
}

/// Seconds `cost` takes alone on `m` with every core: `T(cores)`, or the
/// bandwidth bound `bytes · remote factor / (N · B)` if longer.
pub fn solo_seconds(m: &Machine, cost: &Cost) -> f64 {
    let t = cost.seconds(m.cores() as f64);
    let bw = cost.bytes() * span_factor(m) / (m.nodes as f64 * m.node_bandwidth_bytes());
    t.max(bw)
}

struct Unit {
    id: usize,
    node: Option<usize>,
    threads: usize,
    jobs: Vec<usize>,
    cost: Cost,
    group: Option<String>,
    /// Fraction of the unit's work left, in (0, 1] (a resize's stall may
    /// add a little more).
    left: f64,
    /// Whether the policy may resize it.
    resizable: bool,
    /// A resize (or move) decided but not yet applied: (threads, seconds
    /// from the start when its superstep boundary comes, the node it runs
    /// on then).
    pending: Option<(usize, f64, Option<usize>)>,
}

/// Progress rates (fraction of work per second) of `units` on `m`.
fn rates(m: &Machine, units: &[Unit]) -> Vec<f64> {
    let nodes = m.nodes;
    let cores = m.cores_per_node as f64;
    let mut threads = vec![0.0f64; nodes];
    for u in units {
        match u.node {
            Some(n) => threads[n.min(nodes - 1)] += u.threads as f64,
            None => threads
                .iter_mut()
                .for_each(|t| *t += u.threads as f64 / nodes as f64),
        }
    }
    let over: Vec<f64> = threads.iter().map(|t| (t / cores).max(1.0)).collect();
    let on = |u: &Unit| -> Vec<usize> {
        match u.node {
            Some(n) => vec![n.min(nodes - 1)],
            None => (0..nodes).collect(),
        }
    };
    let mut speed0 = Vec::with_capacity(units.len());
    let mut demand = vec![0.0f64; nodes];
    for u in units {
        let x = on(u).iter().map(|&n| over[n]).fold(1.0, f64::max);
        // Co-run interference: the share of the other cores of its nodes
        // that other units keep busy.
        let ns = on(u);
        let own = u.threads as f64 / ns.len() as f64;
        let others = (m.cores_per_node as f64 - own).max(1.0);
        let busy = ns
            .iter()
            .map(|&n| ((threads[n] - own).max(0.0) / others).min(1.0))
            .sum::<f64>()
            / ns.len() as f64;
        let slow = (1.0 + m.oversubscription_penalty * (x - 1.0)) * u.cost.corun_factor(busy);
        // Time sharing: the unit holds its threads 1/x of the time.
        let s = 1.0 / (u.cost.seconds(u.threads as f64) * x * slow);
        let rho = if u.node.is_none() {
            span_factor(m)
        } else {
            1.0
        };
        let d = u.cost.bytes() * s * rho;
        for &n in &ns {
            demand[n] += d / ns.len() as f64;
        }
        speed0.push(s);
    }
    let theta: Vec<f64> = demand
        .iter()
        .map(|d| {
            if *d > 0.0 {
                (m.node_bandwidth_bytes() / d).min(1.0)
            } else {
                1.0
            }
        })
        .collect();
    units
        .iter()
        .zip(speed0)
        .map(|(u, s)| s * on(u).iter().map(|&n| theta[n]).fold(1.0, f64::min))
        .collect()
}

/// Plans `u` to run with `threads` on `node` from its next superstep
/// boundary (half a superstep at its current threads from `now`, or the
/// boundary already planned); nothing when that is what it runs now.
fn plan(u: &mut Unit, now: f64, threads: usize, node: Option<usize>) {
    let at = u.pending.map_or_else(
        || now + 0.5 * u.cost.superstep_seconds(u.threads as f64),
        |p| p.1,
    );
    u.pending = (threads != u.threads || node != u.node).then_some((threads, at, node));
}

/// What the simulator's decisions change: the queue (job indices), the
/// running units, each job's start and the next unit's id.
struct World {
    queue: Vec<usize>,
    units: Vec<Unit>,
    start: Vec<f64>,
    next_unit: usize,
}

impl World {
    /// Carries out decision `d` at `now`.
    fn apply(&mut self, policy: Policy, jobs: &[SimJob], now: f64, d: &Decision) {
        let (queue, units, start) = (&mut self.queue, &mut self.units, &mut self.start);
        match &d.action {
            Action::Launch {
                jobs: js,
                node,
                threads,
            } => {
                let costs: Vec<Cost> = js.iter().map(|&j| jobs[j].cost).collect();
                let cost = Cost::fused(&costs).unwrap_or(jobs[js[0]].cost);
                for &j in js {
                    start[j] = now;
                    queue.retain(|&q| q != j);
                }
                units.push(Unit {
                    id: self.next_unit,
                    node: *node,
                    threads: (*threads).max(1),
                    jobs: js.clone(),
                    cost,
                    group: if js.len() > 1 || matches!(policy, Policy::Congra { .. }) {
                        jobs[js[0]].group.clone()
                    } else {
                        None
                    },
                    left: 1.0,
                    resizable: matches!(policy, Policy::Congra { .. }),
                    pending: None,
                });
                self.next_unit += 1;
            }
            Action::Join { unit, job } => {
                if let Some(u) = units.iter_mut().find(|u| u.id == *unit) {
                    let t = u.threads as f64;
                    let left_s = u.left * u.cost.seconds(t);
                    let fused = Cost::fused(&[u.cost, jobs[*job].cost]).unwrap_or(u.cost);
                    let grown = (left_s + fused.seconds(t) - u.cost.seconds(t))
                        .max(jobs[*job].cost.seconds(t));
                    u.cost = fused;
                    u.left = (grown / fused.seconds(t)).min(1.0);
                    u.jobs.push(*job);
                    start[*job] = now;
                    queue.retain(|&q| q != *job);
                }
            }
            Action::Resize { unit, threads } => {
                if let Some(u) = units.iter_mut().find(|u| u.id == *unit) {
                    let node = u.pending.map_or(u.node, |p| p.2);
                    plan(u, now, (*threads).max(1), node);
                }
            }
            Action::Move {
                unit,
                node,
                threads,
            } => {
                if let Some(u) = units.iter_mut().find(|u| u.id == *unit) {
                    plan(u, now, (*threads).max(1), *node);
                }
            }
            Action::Hold { .. } => {}
        }
    }

    /// Launches the first queued job on node 0 with its cores: the policy
    /// launched nothing with nothing running and nothing to come (a policy
    /// bug), and the replay must go on.
    fn launch_first(&mut self, m: &Machine, jobs: &[SimJob], now: f64) {
        let (queue, units, start) = (&mut self.queue, &mut self.units, &mut self.start);
        let j = queue.remove(0);
        start[j] = now;
        units.push(Unit {
            id: self.next_unit,
            node: Some(0),
            threads: m.cores_per_node,
            jobs: vec![j],
            cost: jobs[j].cost,
            group: None,
            left: 1.0,
            resizable: false,
            pending: None,
        });
        self.next_unit += 1;
    }
}

/// The report of a replay: each job's times and QoS, the makespan, the
/// throughput and QoS percentiles, and the decisions taken.
fn report(
    m: &Machine,
    policy: Policy,
    jobs: &[SimJob],
    start: &[f64],
    finish: &[f64],
    log: &DecisionLog,
) -> SimReport {
    let results: Vec<SimJobResult> = (0..jobs.len())
        .map(|j| {
            let solo = solo_seconds(m, &jobs[j].cost);
            let response = finish[j] - jobs[j].arrival;
            SimJobResult {
                name: jobs[j].name.clone(),
                arrival: jobs[j].arrival,
                start: start[j],
                finish: finish[j],
                response_seconds: response,
                solo_seconds: solo,
                qos: response / solo,
            }
        })
        .collect();
    let makespan = results.iter().map(|r| r.finish).fold(0.0, f64::max);
    let qos: Vec<f64> = results
        .iter()
        .map(|r| r.qos)
        .filter(|q| q.is_finite())
        .collect();
    SimReport {
        policy: policy.name().into(),
        throughput_jobs_per_hour: if makespan > 0.0 {
            jobs.len() as f64 * 3600.0 / makespan
        } else {
            0.0
        },
        makespan_seconds: makespan,
        qos_p50: percentile(&qos, 50.0),
        qos_p95: percentile(&qos, 95.0),
        jobs: results,
        decisions: log.decisions().to_vec(),
    }
}

/// Replays `jobs` through `policy` on `m`.
pub fn simulate(m: &Machine, policy: Policy, jobs: &[SimJob]) -> SimReport {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| jobs[a].arrival.total_cmp(&jobs[b].arrival).then(a.cmp(&b)));
    let mut next = 0usize;
    let mut w = World {
        queue: Vec::new(),
        units: Vec::new(),
        start: vec![f64::NAN; jobs.len()],
        next_unit: 0,
    };
    let mut finish = vec![f64::NAN; jobs.len()];
    let mut now = 0.0f64;
    let mut log = DecisionLog::default();
    let resizing = matches!(policy, Policy::Congra { resize: true, .. });
    // Whether a job arrived or a unit ended since the last decision point.
    let mut changed = true;
    // When a queued job next becomes starved (a decision point, as an
    // arrival is).
    let mut aging: Option<f64> = None;
    for _ in 0..10_000_000u64 {
        while next < order.len() && jobs[order[next]].arrival <= now + 1e-12 {
            w.queue.push(order[next]);
            next += 1;
            changed = true;
        }
        if changed && (!w.queue.is_empty() || (resizing && !w.units.is_empty())) {
            let rs: Vec<f64> = rates(m, &w.units);
            let queued: Vec<QueuedJob> = w
                .queue
                .iter()
                .map(|&j| QueuedJob {
                    id: j,
                    name: jobs[j].name.clone(),
                    arrival: jobs[j].arrival,
                    cost: jobs[j].cost,
                    group: jobs[j].group.clone(),
                })
                .collect();
            let running: Vec<RunningUnit> = w
                .units
                .iter()
                .zip(&rs)
                .map(|(u, r)| RunningUnit {
                    id: u.id,
                    node: u.pending.map_or(u.node, |p| p.2),
                    threads: u.pending.map_or(u.threads, |p| p.0),
                    jobs: u.jobs.clone(),
                    cost: u.cost,
                    group: u.group.clone(),
                    remaining_seconds: if *r > 0.0 { u.left / r } else { f64::INFINITY },
                    resizable: u.resizable,
                })
                .collect();
            let st = SchedState {
                now,
                machine: m,
                queue: &queued,
                running: &running,
            };
            let ds = decide(policy, &st);
            for d in &ds {
                w.apply(policy, jobs, now, d);
            }
            log.record(&ds);
            let still: Vec<QueuedJob> = queued
                .iter()
                .filter(|q| w.queue.contains(&q.id))
                .cloned()
                .collect();
            aging = next_aging_deadline(
                policy,
                &SchedState {
                    queue: &still,
                    ..st
                },
            );
            if w.units.is_empty() && !w.queue.is_empty() && next >= order.len() {
                // The policy launched nothing with nothing running and nothing
                // to come: a policy bug; launch the first job to keep going.
                w.launch_first(m, jobs, now);
            }
        }
        if w.units.is_empty() && next >= order.len() && w.queue.is_empty() {
            break;
        }
        let rs = rates(m, &w.units);
        let mut dt = f64::INFINITY;
        for (u, r) in w.units.iter().zip(&rs) {
            if *r > 0.0 {
                dt = dt.min(u.left / r);
            }
        }
        if next < order.len() {
            dt = dt.min((jobs[order[next]].arrival - now).max(0.0));
        }
        for u in &w.units {
            if let Some((_, at, _)) = u.pending {
                dt = dt.min((at - now).max(0.0));
            }
        }
        if let Some(at) = aging {
            dt = dt.min((at - now).max(0.0));
        }
        if !dt.is_finite() {
            break;
        }
        now += dt;
        for (u, r) in w.units.iter_mut().zip(&rs) {
            u.left -= r * dt;
        }
        let before = w.units.len();
        w.units.retain(|u| {
            if u.left <= 1e-9 {
                for &j in &u.jobs {
                    finish[j] = now;
                }
                false
            } else {
                true
            }
        });
        changed = w.units.len() < before;
        if aging.is_some_and(|at| at <= now + 1e-12) {
            aging = None;
            changed = true;
        }
        // Resizes whose superstep boundary came: the new pool starts.
        for u in &mut w.units {
            if let Some((t, at, node)) = u.pending {
                if at <= now + 1e-12 {
                    u.threads = t;
                    u.node = node;
                    u.left += m.resize_seconds / u.cost.seconds(t as f64).max(1e-12);
                    u.pending = None;
                }
            }
        }
    }
    report(m, policy, jobs, &w.start, &finish, &log)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(t1: f64, serial: f64, gb: f64) -> Cost {
        Cost::amdahl(t1 * serial, t1 * (1.0 - serial), gb * 1e9, 0.0)
    }

    fn stream(n: usize, c: Cost) -> Vec<SimJob> {
        (0..n)
            .map(|i| SimJob {
                name: format!("j{i}"),
                arrival: 0.0,
                cost: c,
                group: None,
            })
            .collect()
    }

    #[test]
    fn one_job_alone_takes_its_solo_time_under_every_policy() {
        let m = Machine::model(1, 2, 100.0);
        let jobs = stream(1, cost(10.0, 0.2, 1.0));
        for p in Policy::ALL {
            let r = simulate(&m, p, &jobs);
            let solo = solo_seconds(&m, &jobs[0].cost);
            assert!(
                (r.makespan_seconds - solo).abs() < 1e-6,
                "{p}: {} vs {solo}",
                r.makespan_seconds
            );
            assert!((r.qos_p50.unwrap() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn fifo_runs_jobs_back_to_back() {
        let m = Machine::model(1, 2, 100.0);
        let jobs = stream(3, cost(10.0, 0.2, 1.0));
        let r = simulate(&m, Policy::Fifo, &jobs);
        assert!(
            (r.makespan_seconds - 3.0 * 6.0).abs() < 1e-6,
            "{}",
            r.makespan_seconds
        );
        // Congra runs two at one thread each: 10 s, then the third on 2: 6 s.
        let r = simulate(
            &m,
            Policy::Congra {
                look_ahead: false,
                short_job_bypass: false,
                resize: false,
            },
            &jobs,
        );
        assert!(
            (r.makespan_seconds - 16.0).abs() < 1e-6,
            "{}",
            r.makespan_seconds
        );
    }

    #[test]
    fn co_running_units_are_slowed_by_their_corun_factor() {
        // Two perfectly parallel 10 s jobs under `all`: time-shared, both
        // end at 10 s; with σ = 0.3 each is slowed by 1.3 while the other
        // runs, so both end at 13 s. Alone (fifo) nothing changes.
        let m = Machine::model(1, 2, 100.0);
        let mut c = cost(10.0, 0.0, 1.0);
        let r = simulate(&m, Policy::All, &stream(2, c));
        assert!(
            (r.makespan_seconds - 10.0).abs() < 1e-6,
            "{}",
            r.makespan_seconds
        );
        c.corun_slowdown = 0.3;
        let r = simulate(&m, Policy::All, &stream(2, c));
        assert!(
            (r.makespan_seconds - 13.0).abs() < 1e-6,
            "{}",
            r.makespan_seconds
        );
        let r = simulate(&m, Policy::Fifo, &stream(2, c));
        assert!(
            (r.makespan_seconds - 10.0).abs() < 1e-6,
            "{}",
            r.makespan_seconds
        );
    }

    #[test]
    fn a_unit_left_at_one_thread_speeds_up_once_resized() {
        // Perfectly parallel 10 s and 2 s jobs on 2 cores: one thread each
        // (equal work rate, the larger set); the short one ends at 2 s.
        let m = Machine::model(1, 2, 100.0);
        let mut heavy = cost(10.0, 0.0, 0.1);
        heavy.supersteps = 10.0;
        let jobs = vec![
            SimJob {
                name: "heavy".into(),
                arrival: 0.0,
                cost: heavy,
                group: None,
            },
            SimJob {
                name: "light".into(),
                arrival: 0.0,
                cost: cost(2.0, 0.0, 0.1),
                group: None,
            },
        ];
        let fixed = Policy::Congra {
            look_ahead: false,
            short_job_bypass: false,
            resize: false,
        };
        let r = simulate(&m, fixed, &jobs);
        assert!(
            (r.makespan_seconds - 10.0).abs() < 1e-6,
            "{}",
            r.makespan_seconds
        );
        // Resized at 2 s: it keeps one thread until its next superstep
        // boundary (half a 1 s superstep), stalls 1 ms, then runs the
        // remaining 7.5 s of one-thread work on two threads.
        let r = simulate(&m, Policy::CONGRA, &jobs);
        let expect = 2.5 + 7.5 / 2.0 + m.resize_seconds;
        assert!(
            (r.makespan_seconds - expect).abs() < 1e-6,
            "{} vs {expect}",
            r.makespan_seconds
        );
        assert!(r
            .decisions
            .iter()
            .any(|d| matches!(d.action, Action::Resize { threads: 2, .. })));
    }

    #[test]
    fn a_held_job_starts_when_its_aging_bound_passes() {
        // A long superlinear job holds both cores (the work-rate rule holds
        // a second one that would share them); the second starts when it has
        // waited its solo time (T(2) = 0.8 s), not when the first ends.
        let m = Machine::model(1, 2, 100.0);
        let jobs = vec![
            SimJob {
                name: "long".into(),
                arrival: 0.0,
                cost: Cost::fit(&[20.0, 8.0], 1e9, 0.0).unwrap(),
                group: None,
            },
            SimJob {
                name: "short".into(),
                arrival: 0.01,
                cost: Cost::fit(&[2.0, 0.8], 1e8, 0.0).unwrap(),
                group: None,
            },
        ];
        let plain = Policy::Congra {
            look_ahead: false,
            short_job_bypass: false,
            resize: true,
        };
        let r = simulate(&m, plain, &jobs);
        let start = r.jobs[1].start;
        assert!((start - 0.81).abs() < 1e-9, "{start}: {:#?}", r.decisions);
        assert!(r.jobs[0].finish > 8.0);
    }

    #[test]
    fn the_bandwidth_roofline_slows_everyone_on_a_saturated_node() {
        // 4 jobs of 10 GB at 10 s per thread on a 4-core 2 GB/s node: alone
        // each wants 1 GB/s; together 4 GB/s, so each runs at half speed.
        let mut m = Machine::model(1, 4, 2.0);
        m.oversubscription_penalty = 0.05;
        let jobs = stream(4, cost(10.0, 0.0, 10.0));
        let r = simulate(&m, Policy::All, &jobs);
        // All: each at 4 threads time-shared to 1 would move 10 GB in 10 s
        // (slower by the oversubscription penalty), 4 GB/s asked of 2: the
        // node's bandwidth bounds the run at 40 GB / 2 GB/s = 20 s.
        let expect = 20.0;
        assert!(
            (r.makespan_seconds - expect).abs() < 1e-6 * expect,
            "{} vs {expect}",
            r.makespan_seconds
        );
    }
}
