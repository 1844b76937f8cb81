//! The decision core: pure code from a [`SchedState`] (machine, queued
//! jobs, running units) to [`Decision`]s, each with a human-readable reason.
//! The real runner ([`super::runner`]) and the simulator ([`super::sim`])
//! both call [`decide`] whenever a job arrives or a unit ends.
//!
//! `congra` follows CongraPlus §3.2 and §4.2 (Pan and Li, TPDS'18):
//! 1. *Scan groups* (Plexus's addition): a queued job that can be fused with
//!    a running shared-scan unit (same algorithm on the same snapshot) joins
//!    it when its time at the unit's threads fits in the unit's remaining
//!    run and the node's bandwidth can take the job's state traffic (the
//!    topology is read once for the whole group).
//! 2. *Query assigner* (§4.2.1): the remaining queued work is assigned to
//!    NUMA nodes by the LPT rule (heaviest first, to the least-loaded node;
//!    load = remaining seconds of the node's running units + assigned work).
//!    Queued jobs of one scan group form one candidate unit.
//! 3. *Local scheduler* per node (§3.2.2, generate-and-check): candidates
//!    lightest first form the sets `S_1 ⊂ S_2 ⊂ …` while the node has a free
//!    core for each at the minimum of one thread and the contention check
//!    (eq. 2, `Σ_ctxt BW + Σ_S BW(1) < limit`) passes.
//! 4. *Iterative ascent* (§4.2.3) gives each `S_k` its threads: from one
//!    thread each, one more thread goes to the unit whose profiled time
//!    drops most (eq. 3, counted in QoS units: the drop times the unit's
//!    jobs divided by its time with every core of the machine, so the
//!    ascent lowers the summed QoS figure; the paper counts seconds), until
//!    the node's cores are used or nothing gains; a unit whose next thread
//!    would oversubscribe the node's bandwidth stops ascending, the others
//!    go on. The `S_k` with the most work per
//!    second, `Σ T(Q,1)/T(Q,T(Q))`, is launched (ties: the larger set); see
//!    docs/scheduler.md for why this and not eq. 5 selects the set.
//! 5. *Look-ahead* (§4.2.4, optional): when `Gain(Q_LA) − Loss(ctxt)` (the
//!    heaviest waiting job's time drop with the threads `S` would take,
//!    minus eq. 6's mean remaining time of the running units) exceeds
//!    `Perf(S, T)` (eq. 5, read as the time drop of `S` from its threads),
//!    nothing is launched on the node and the resources are held for it.
//!
//! 6. *Short-job bypass* (Plexus's addition, optional): when a node's cores
//!    are all taken, the lightest waiting job starts at once with the
//!    node's cores, time-sharing them (at most one such unit per node), when
//!    `(k + 2)·T_alone < R` (k running jobs on the node, R the shortest
//!    remaining run): the summed response time drops, and tiny jobs do not
//!    wait for long ones.
//! 7. *Re-allocation* (Plexus's addition, optional; the paper fixes a
//!    query's threads at launch): the node's running units that can be
//!    resized (shared-scan managers, whose pools change at a superstep
//!    boundary) and whose remaining run is long against a resize's cost
//!    enter steps 3–4 with the candidates: each counts as holding one core
//!    (so a new job is admitted while a core can be taken from them), and
//!    the ascent gives threads to them and to the new units together, a
//!    running unit's eq. 3 gain weighted by its share of work left. Units
//!    whose threads change get [`Action::Resize`]; with an empty queue the
//!    running units grow into released cores.
//! 8. *Tail spread and migration* (Plexus's addition, with re-allocation,
//!    on machines of several nodes): with nothing waiting, a node left
//!    without a unit takes the longest-running unit of a node that runs
//!    several, and a unit left alone on the machine spreads over every
//!    node's cores ([`Action::Move`]); a spread unit goes back to one node
//!    when a job arrives. Without this the last jobs of a stream run on one
//!    socket while the other idles.
//!
//! *Aging* (Plexus's addition, every `congra` variant): a queued job that
//! has waited [`STARVATION_QOS`] times its solo time is starved: starved
//! jobs are assigned and admitted first, oldest first, and neither the
//! work-rate rule nor the look-ahead holds them. [`next_aging_deadline`]
//! tells the drivers when to decide again for it.
//!
//! `fifo` runs one job at a time with all cores; `all` starts every job on
//! arrival with all cores (the OS time-shares them).
use std::collections::HashMap;

use serde::Serialize;

use super::model::{Cost, Machine};

/// A running unit is re-allocated only when its remaining run is at least
/// this many times what a resize costs it (half a superstep's wait for the
/// boundary plus [`Machine::resize_seconds`]): a unit about to end keeps its
/// threads.
pub const RESIZE_MIN_REMAINING_FACTOR: f64 = 4.0;

/// Aging bound of `congra`: a queued job that has waited at least this many
/// times its solo time (its time alone with every core of the machine) is
/// *starved*: it goes ahead of every job that is not, it cannot be held by
/// the look-ahead, one the work-rate rule would hold starts over busy cores
/// (time-sharing them) on a node not already oversubscribed, and starved
/// jobs go in arrival order (docs/scheduler.md, "Aging").
pub const STARVATION_QOS: f64 = 1.0;

/// A job's solo time as the policy sees it: its time alone with every core.
fn solo(m: &Machine, c: &Cost) -> f64 {
    c.seconds(m.cores() as f64)
}

/// When `q` becomes starved ([`STARVATION_QOS`]).
fn starved_at(m: &Machine, q: &QueuedJob) -> f64 {
    q.arrival + STARVATION_QOS * solo(m, &q.cost)
}

/// The next time after `state.now` when a queued job becomes starved
/// ([`STARVATION_QOS`]) under `policy`, if any: the drivers decide again
/// then, as at an arrival (`congra` only; the other policies do not age).
pub fn next_aging_deadline(policy: Policy, state: &SchedState<'_>) -> Option<f64> {
    if !matches!(policy, Policy::Congra { .. }) {
        return None;
    }
    state
        .queue
        .iter()
        .map(|q| starved_at(state.machine, q))
        .filter(|&t| t > state.now + 1e-12)
        .min_by(f64::total_cmp)
}

/// A scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// One job at a time, in arrival order, with every core.
    Fifo,
    /// Every job started on arrival with every core (oversubscribed).
    All,
    /// CongraPlus; `look_ahead` enables §4.2.4's look-ahead,
    /// `short_job_bypass` Plexus's bypass for short jobs and `resize`
    /// Plexus's re-allocation of running units' threads (see [`decide`]).
    Congra {
        look_ahead: bool,
        short_job_bypass: bool,
        resize: bool,
    },
}

/// The names of the `congra` variants, indexed by `(look_ahead,
/// short_job_bypass, resize)` as bits 2, 1, 0 inverted (0: everything on).
const CONGRA_NAMES: [&str; 8] = [
    "congra",
    "congra-fixed",
    "congra-nobypass",
    "congra-nobypass-fixed",
    "congra-nola",
    "congra-nola-fixed",
    "congra-plain",
    "congra-plain-fixed",
];

impl Policy {
    /// The policies `plexus simulate` replays by default, in report order.
    pub const ALL: [Policy; 6] = [
        Policy::CONGRA,
        Policy::Congra {
            look_ahead: true,
            short_job_bypass: true,
            resize: false,
        },
        Policy::Congra {
            look_ahead: false,
            short_job_bypass: true,
            resize: true,
        },
        Policy::Congra {
            look_ahead: true,
            short_job_bypass: false,
            resize: true,
        },
        Policy::All,
        Policy::Fifo,
    ];

    /// `congra`: look-ahead, short-job bypass and re-allocation on.
    pub const CONGRA: Policy = Policy::Congra {
        look_ahead: true,
        short_job_bypass: true,
        resize: true,
    };

    /// The policy's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::All => "all",
            Policy::Congra {
                look_ahead,
                short_job_bypass,
                resize,
            } => {
                let i = usize::from(!look_ahead) << 2
                    | usize::from(!short_job_bypass) << 1
                    | usize::from(!resize);
                CONGRA_NAMES[i]
            }
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fifo" => return Ok(Policy::Fifo),
            "all" => return Ok(Policy::All),
            _ => {}
        }
        match CONGRA_NAMES.iter().position(|n| *n == s) {
            Some(i) => Ok(Policy::Congra {
                look_ahead: i & 4 == 0,
                short_job_bypass: i & 2 == 0,
                resize: i & 1 == 0,
            }),
            None => Err(format!(
                "unknown scheduler '{s}' (expected fifo, all or one of {})",
                CONGRA_NAMES.join(", ")
            )),
        }
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A job waiting to be launched.
#[derive(Clone, Debug)]
pub struct QueuedJob {
    /// The caller's number for the job (returned in decisions).
    pub id: usize,
    /// Its name, for reasons.
    pub name: String,
    /// Arrival time, seconds from the start of the stream.
    pub arrival: f64,
    /// Its profiled cost.
    pub cost: Cost,
    /// Its scan group key (algorithm and snapshot) when it can be fused
    /// into a shared scan; `None` otherwise.
    pub group: Option<String>,
}

/// A launched unit (one job, or jobs fused into one shared scan) that runs.
#[derive(Clone, Debug)]
pub struct RunningUnit {
    /// The caller's number for the unit.
    pub id: usize,
    /// Its node, or `None` when its threads span every node.
    pub node: Option<usize>,
    /// Its threads (after a resize already decided, the new count).
    pub threads: usize,
    /// The jobs it runs (callers' numbers).
    pub jobs: Vec<usize>,
    /// The unit's cost (fused when it holds several jobs).
    pub cost: Cost,
    /// Its scan group key when others may join it.
    pub group: Option<String>,
    /// Estimated seconds until it ends.
    pub remaining_seconds: f64,
    /// Whether its threads can change while it runs (a [`Action::Resize`]
    /// applied at its next superstep boundary).
    pub resizable: bool,
}

/// What the scheduler sees.
#[derive(Clone, Copy, Debug)]
pub struct SchedState<'a> {
    /// Seconds from the start of the stream.
    pub now: f64,
    /// The machine.
    pub machine: &'a Machine,
    /// Jobs waiting, in arrival order.
    pub queue: &'a [QueuedJob],
    /// Units running.
    pub running: &'a [RunningUnit],
}

/// Why a job is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HoldCause {
    /// No free core on its node for it at one thread.
    NoCore,
    /// Launching it would oversubscribe its node's bandwidth (eq. 2).
    Contention,
    /// The node's running units do more work per second with its cores.
    WorkRate,
    /// The node's free cores are held for a heavier job (§4.2.4).
    LookAhead,
}

/// What to do.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Action {
    /// Start `jobs` as one unit (fused when more than one) with `threads`
    /// threads on `node` (`None`: spread over every node, unpinned).
    Launch {
        jobs: Vec<usize>,
        node: Option<usize>,
        threads: usize,
    },
    /// Add `job` to the running shared-scan unit `unit` at its next superstep boundary.
    Join { unit: usize, job: usize },
    /// Run the running unit `unit` on `threads` threads (of its node) from
    /// its next superstep boundary on.
    Resize { unit: usize, threads: usize },
    /// Run the running unit `unit` on `node` (`None`: spread over every
    /// node) with `threads` threads from its next superstep boundary on
    /// (`congra`'s tail spread and its undoing, see [`decide`]).
    Move {
        unit: usize,
        node: Option<usize>,
        threads: usize,
    },
    /// Keep `job` (and the node's resources) waiting.
    Hold {
        job: usize,
        node: usize,
        cause: HoldCause,
    },
}

/// One decision with its reason.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decision {
    /// Seconds from the start of the stream.
    pub at: f64,
    /// What to do.
    #[serde(flatten)]
    pub action: Action,
    /// Why, in words and figures.
    pub reason: String,
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t={:.2}s {}", self.at, self.reason)
    }
}

/// The decisions of a run as `--explain` shows them: a hold repeated at
/// later decision points (same job, node and cause) is kept once, until
/// its cause changes or the job starts.
#[derive(Clone, Debug, Default)]
pub struct DecisionLog {
    decisions: Vec<Decision>,
    held: HashMap<usize, (usize, HoldCause)>,
}

impl DecisionLog {
    /// Records `ds` (one decision point's decisions) and returns those kept.
    pub fn record(&mut self, ds: &[Decision]) -> Vec<Decision> {
        let mut kept = Vec::new();
        for d in ds {
            match &d.action {
                Action::Hold { job, node, cause } => {
                    if self.held.insert(*job, (*node, *cause)) == Some((*node, *cause)) {
                        continue;
                    }
                }
                Action::Launch { jobs, .. } => jobs.iter().for_each(|j| {
                    self.held.remove(j);
                }),
                Action::Join { job, .. } => {
                    self.held.remove(job);
                }
                Action::Resize { .. } | Action::Move { .. } => {}
            }
            kept.push(d.clone());
        }
        self.decisions.extend(kept.iter().cloned());
        kept
    }

    /// Every decision kept so far.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }
}

fn gbs(bytes_per_second: f64) -> String {
    format!("{:.2}", bytes_per_second / 1e9)
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// The decisions for `state` under `policy`. Pure: the same state gives
/// the same decisions. `congra` with re-allocation may decide with an empty
/// queue (running units grow into the cores an ended unit released).
pub fn decide(policy: Policy, state: &SchedState<'_>) -> Vec<Decision> {
    match policy {
        Policy::Fifo => fifo(state),
        Policy::All => all(state),
        Policy::Congra {
            look_ahead,
            short_job_bypass,
            resize,
        } => congra(state, look_ahead, short_job_bypass, resize),
    }
}

fn fifo(s: &SchedState<'_>) -> Vec<Decision> {
    if !s.running.is_empty() {
        return Vec::new();
    }
    let Some(q) = s
        .queue
        .iter()
        .min_by(|a, b| a.arrival.total_cmp(&b.arrival).then(a.id.cmp(&b.id)))
    else {
        return Vec::new();
    };
    let cores = s.machine.cores();
    vec![Decision {
        at: s.now,
        action: Action::Launch {
            jobs: vec![q.id],
            node: None,
            threads: cores,
        },
        reason: format!(
            "launch {} alone with all {}: fifo runs one job at a time ({} waiting)",
            q.name,
            plural(cores, "thread"),
            s.queue.len() - 1
        ),
    }]
}

fn all(s: &SchedState<'_>) -> Vec<Decision> {
    let cores = s.machine.cores();
    let mut threads: usize = s.running.iter().map(|u| u.threads).sum();
    s.queue
        .iter()
        .map(|q| {
            threads += cores;
            Decision {
                at: s.now,
                action: Action::Launch {
                    jobs: vec![q.id],
                    node: None,
                    threads: cores,
                },
                reason: format!(
                    "launch {} on arrival with all {}: Σ threads {threads} on {cores} cores",
                    q.name,
                    plural(cores, "thread")
                ),
            }
        })
        .collect()
}

/// A unit to be: one queued job, or queued jobs of one scan group.
struct Candidate {
    /// Indices into the queue.
    members: Vec<usize>,
    cost: Cost,
    group: Option<String>,
    /// Whether a member has waited past its aging bound.
    starved: bool,
    /// The earliest arrival of its members.
    arrival: f64,
}

/// Per-node view of the running units.
struct NodeCtx {
    threads: usize,
    jobs: usize,
    bandwidth: f64,
    remaining: Vec<f64>,
}

impl Candidate {
    /// The queued job `qi` alone.
    fn single(s: &SchedState<'_>, qi: usize) -> Candidate {
        let q = &s.queue[qi];
        Candidate {
            members: vec![qi],
            cost: q.cost,
            group: q.group.clone(),
            starved: starved_at(s.machine, q) <= s.now + 1e-12,
            arrival: q.arrival,
        }
    }

    /// Aging's order: starved candidates first, the oldest first; two that
    /// are not starved compare by `rest`.
    fn aging_cmp(
        &self,
        other: &Self,
        rest: impl FnOnce() -> std::cmp::Ordering,
    ) -> std::cmp::Ordering {
        other.starved.cmp(&self.starved).then_with(|| {
            if self.starved {
                self.arrival.total_cmp(&other.arrival)
            } else {
                rest()
            }
        })
    }
}

fn node_ctx(s: &SchedState<'_>) -> Vec<NodeCtx> {
    let nodes = s.machine.nodes;
    let mut ctx: Vec<NodeCtx> = (0..nodes)
        .map(|_| NodeCtx {
            threads: 0,
            jobs: 0,
            bandwidth: 0.0,
            remaining: Vec::new(),
        })
        .collect();
    for u in s.running {
        let bw = u.cost.bandwidth(u.threads as f64);
        match u.node {
            Some(n) if n < nodes => {
                ctx[n].threads += u.threads;
                ctx[n].jobs += u.jobs.len();
                ctx[n].bandwidth += bw;
                ctx[n].remaining.push(u.remaining_seconds);
            }
            _ => {
                for c in ctx.iter_mut() {
                    c.threads += u.threads.div_ceil(nodes);
                    c.jobs += u.jobs.len();
                    c.bandwidth += bw / nodes as f64;
                    c.remaining.push(u.remaining_seconds);
                }
            }
        }
    }
    ctx
}

fn names(s: &SchedState<'_>, members: &[usize]) -> String {
    members
        .iter()
        .map(|&i| s.queue[i].name.as_str())
        .collect::<Vec<_>>()
        .join("+")
}

/// CONGRA's decision at one point (the steps of [`Policy::Congra`]'s
/// docs, each a function below): tail moves (8a, 8c), scan groups (1), the
/// query assigner (2), the local scheduler per node (3–5), the short-job
/// bypass (6), moves merged with re-allocation (7) and the tail spread (8b).
fn congra(
    s: &SchedState<'_>,
    look_ahead: bool,
    short_job_bypass: bool,
    resize: bool,
) -> Vec<Decision> {
    let m = s.machine;
    let mut out = Vec::new();
    // 8a and 8c (tail spread undone, tail migration) on machines of several
    // nodes; the steps below see the running units where they now are.
    let view: Vec<RunningUnit>;
    let view_state: SchedState<'_>;
    let s = if resize && m.nodes > 1 {
        view = tail_moves(s, &mut out);
        view_state = SchedState {
            running: &view,
            ..*s
        };
        &view_state
    } else {
        s
    };
    let mut ctx = node_ctx(s);
    let waiting = join_scan_groups(s, &mut ctx, &mut out);
    let cands = candidates(s, &waiting);
    let node_of = assign_nodes(s, &ctx, &cands);
    let mut after_threads: Vec<usize> = ctx.iter().map(|c| c.threads).collect();
    for (node, nc) in ctx.iter().enumerate() {
        let plan = NodePlan::new(s, &cands, &node_of, node, nc, resize);
        if let Some(threads) = plan.schedule(look_ahead, &mut out) {
            after_threads[node] = threads;
        }
    }
    if short_job_bypass {
        bypass_short_jobs(s, &ctx, &cands, &node_of, &after_threads, &mut out);
    }
    merge_moves(&mut out);
    if resize && m.nodes > 1 && s.queue.is_empty() && s.running.len() == 1 {
        tail_spread(s, &mut out);
    }
    out
}

/// Step 1, scan groups: a queued job joins a running unit of its group
/// when that pays and its node's bandwidth allows; returns the others
/// (indices into the queue), which wait for the next steps.
fn join_scan_groups(
    s: &SchedState<'_>,
    ctx: &mut [NodeCtx],
    out: &mut Vec<Decision>,
) -> Vec<usize> {
    let m = s.machine;
    let limit = m.node_bandwidth_bytes();
    let mut waiting: Vec<usize> = Vec::new();
    for (qi, q) in s.queue.iter().enumerate() {
        let host = q
            .group
            .as_ref()
            .and_then(|g| s.running.iter().find(|u| u.group.as_ref() == Some(g)));
        let Some(u) = host else {
            waiting.push(qi);
            continue;
        };
        let node = u.node.unwrap_or(0).min(m.nodes - 1);
        // A joiner rides on the group's remaining scan; one that would need
        // longer than that at the group's threads would keep the group (and
        // its jobs) running on those threads: it starts its own unit instead.
        if q.cost.seconds(u.threads as f64) > u.remaining_seconds {
            waiting.push(qi);
            continue;
        }
        // Nor does one whose lane would cost more than its own run (a
        // fused kernel slower than the job's own, measured in the profile).
        let t = u.threads as f64;
        let added =
            Cost::fused(&[u.cost, q.cost]).map_or(0.0, |f| f.seconds(t) - u.cost.seconds(t));
        if added >= q.cost.seconds(t) {
            waiting.push(qi);
            continue;
        }
        // The joiner's state traffic at the unit's pace; the topology is
        // already read for the group.
        let extra = q.cost.state_bytes / u.cost.seconds(u.threads as f64).max(1e-9);
        if ctx[node].bandwidth + extra <= limit {
            ctx[node].bandwidth += extra;
            out.push(Decision {
                at: s.now,
                action: Action::Join {
                    unit: u.id,
                    job: q.id,
                },
                reason: format!(
                    "join {} to running scan group #{} ({}) on node {node}: topology read once, adds {} GB/s of state traffic; Σbw {} of {} GB/s",
                    q.name,
                    u.id,
                    q.group.as_deref().unwrap_or(""),
                    gbs(extra),
                    gbs(ctx[node].bandwidth),
                    gbs(limit)
                ),
            });
        } else {
            waiting.push(qi);
        }
    }
    waiting
}

/// The candidates of the waiting jobs: queued jobs of one group fuse into
/// one new unit, unless its fused scan would take longer than its jobs one
/// after another (the profile's lane cost): then they stay single jobs.
fn candidates(s: &SchedState<'_>, waiting: &[usize]) -> Vec<Candidate> {
    let m = s.machine;
    let mut cands: Vec<Candidate> = Vec::new();
    for &qi in waiting {
        let q = &s.queue[qi];
        if let Some(g) = &q.group {
            if let Some(c) = cands.iter_mut().find(|c| c.group.as_ref() == Some(g)) {
                c.members.push(qi);
                c.starved |= starved_at(m, q) <= s.now + 1e-12;
                c.arrival = c.arrival.min(q.arrival);
                let costs: Vec<Cost> = c.members.iter().map(|&i| s.queue[i].cost).collect();
                c.cost = Cost::fused(&costs).unwrap_or(q.cost);
                continue;
            }
        }
        cands.push(Candidate::single(s, qi));
    }
    let mut split: Vec<Candidate> = Vec::new();
    for c in cands {
        let costs: Vec<Cost> = c.members.iter().map(|&i| s.queue[i].cost).collect();
        if c.members.len() > 1 && !Cost::fusing_pays(&costs, m.cores_per_node as f64) {
            split.extend(c.members.iter().map(|&qi| Candidate::single(s, qi)));
        } else {
            split.push(c);
        }
    }
    split
}

/// Step 2, the query assigner: LPT over nodes; starved candidates first,
/// oldest first (aging), then heaviest first. Returns each candidate's node.
fn assign_nodes(s: &SchedState<'_>, ctx: &[NodeCtx], cands: &[Candidate]) -> Vec<usize> {
    let m = s.machine;
    let mut load: Vec<f64> = ctx.iter().map(|c| c.remaining.iter().sum()).collect();
    let mut by_weight: Vec<usize> = (0..cands.len()).collect();
    by_weight.sort_by(|&a, &b| {
        let (ca, cb) = (&cands[a], &cands[b]);
        ca.aging_cmp(cb, || cb.cost.seconds(1.0).total_cmp(&ca.cost.seconds(1.0)))
    });
    let mut node_of = vec![0usize; cands.len()];
    for &ci in &by_weight {
        let n = (0..m.nodes)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]))
            .unwrap_or(0);
        node_of[ci] = n;
        load[n] += cands[ci].cost.seconds(1.0);
    }
    node_of
}

/// A refused candidate: its index, the cause and the reason.
type Refusal = (usize, HoldCause, String);

/// Steps 3–5 on one node, the local scheduler: with re-allocation, the
/// node's running units that may be resized enter the ascent with the
/// candidates (Plexus's addition, docs/scheduler.md).
struct NodePlan<'p, 's> {
    s: &'p SchedState<'s>,
    cands: &'p [Candidate],
    node: usize,
    nc: &'p NodeCtx,
    cores: usize,
    limit: f64,
    /// The node's candidates: starved first, oldest first (aging); then
    /// lightest first, ties in arrival order.
    mine: Vec<usize>,
    /// Running units that may be resized.
    movable: Vec<&'p RunningUnit>,
    /// Units on the node that keep their threads (the work-rate score
    /// counts what new neighbours cost them).
    fixed: Vec<&'p RunningUnit>,
    fixed_threads: usize,
    fixed_bw: f64,
    /// Cores to share among the movable units and the new ones.
    pool: usize,
}

impl<'p, 's> NodePlan<'p, 's> {
    fn new(
        s: &'p SchedState<'s>,
        cands: &'p [Candidate],
        node_of: &[usize],
        node: usize,
        nc: &'p NodeCtx,
        resize: bool,
    ) -> Self {
        let m = s.machine;
        let mut mine: Vec<usize> = (0..cands.len()).filter(|&c| node_of[c] == node).collect();
        let mut movable: Vec<&RunningUnit> = if resize {
            s.running
                .iter()
                .filter(|u| u.node == Some(node) && u.resizable && worth_resizing(m, u))
                .collect()
        } else {
            Vec::new()
        };
        let moved_threads: usize = movable.iter().map(|u| u.threads).sum();
        let cores = m.cores_per_node;
        let fixed_threads = nc.threads.saturating_sub(moved_threads);
        if cores.saturating_sub(fixed_threads) < movable.len() {
            // Not a core for each at one thread (units that cannot move
            // hold them): leave the running units as they are.
            movable.clear();
        }
        let fixed: Vec<&RunningUnit> = s
            .running
            .iter()
            .filter(|u| u.node == Some(node) && !movable.iter().any(|v| v.id == u.id))
            .collect();
        let moved_threads: usize = movable.iter().map(|u| u.threads).sum();
        let moved_bw: f64 = movable
            .iter()
            .map(|u| u.cost.bandwidth(u.threads as f64))
            .sum();
        let fixed_threads = nc.threads.saturating_sub(moved_threads);
        let fixed_bw = (nc.bandwidth - moved_bw).max(0.0);
        mine.sort_by(|&a, &b| {
            let (ca, cb) = (&cands[a], &cands[b]);
            ca.aging_cmp(cb, || ca.cost.seconds(1.0).total_cmp(&cb.cost.seconds(1.0)))
                .then(ca.members[0].cmp(&cb.members[0]))
        });
        NodePlan {
            s,
            cands,
            node,
            nc,
            cores,
            limit: m.node_bandwidth_bytes(),
            mine,
            movable,
            fixed,
            fixed_threads,
            fixed_bw,
            pool: cores.saturating_sub(fixed_threads),
        }
    }

    /// The node's decisions, appended to `out`; returns the threads the
    /// node then runs, `None` when it keeps what it runs.
    fn schedule(&self, look_ahead: bool, out: &mut Vec<Decision>) -> Option<usize> {
        let (s, cands, nc, cores) = (self.s, self.cands, self.nc, self.cores);
        if self.mine.is_empty() && self.movable.is_empty() {
            return None;
        }
        let (mut set, mut refusal) = self.generate();
        if set.is_empty() && self.movable.is_empty() {
            if let Some((c, cause, why)) = refusal {
                out.push(self.hold(c, cause, &why));
            }
            return None;
        }
        // Starved candidates are a prefix of the generated set.
        let starved_in_set = set.iter().take_while(|&&c| cands[c].starved).count();
        let (threads, stop) = self.best_set(&mut set, &mut refusal);
        // Aging over busy cores: a starved candidate the work rate leaves
        // out starts now with every core of the node, time-sharing them
        // (its threads and the running ones each hold their cores part of
        // the time), when the node is not already oversubscribed. With a
        // superlinear profile, time-sharing at every core costs less than
        // the one-thread split the work rate refused.
        let aged = refusal
            .as_ref()
            .filter(|(c, cause, _)| *cause == HoldCause::WorkRate && cands[*c].starved)
            .map(|(c, _, why)| (*c, why.clone()))
            .filter(|_| nc.threads <= cores);
        let (unit_threads, new_threads) = threads.split_at(self.movable.len());
        let total_bw: f64 = self.fixed_bw
            + self
                .movable
                .iter()
                .zip(unit_threads)
                .map(|(u, &t)| u.cost.bandwidth(t as f64))
                .sum::<f64>()
            + set
                .iter()
                .zip(new_threads)
                .map(|(&ci, &t)| cands[ci].cost.bandwidth(t as f64))
                .sum::<f64>();
        if look_ahead && !set.is_empty() && !nc.remaining.is_empty() && starved_in_set == 0 {
            if let Some(d) = self.look_ahead(&set, new_threads) {
                out.push(d);
                return None;
            }
        }
        let mut aged_threads = 0;
        if let Some((c, why)) = aged {
            if let Some(d) = self.aged_launch(c, &why, &threads, total_bw) {
                out.push(d);
                aged_threads = cores;
                refusal = None;
            }
        }
        let waiting_note = match &refusal {
            Some((c, _, why)) => format!("; {} waits: {why}", names(s, &cands[*c].members)),
            None => String::new(),
        };
        if set.is_empty() {
            if let Some((c, cause, why)) = &refusal {
                out.push(self.hold(*c, *cause, why));
            }
        }
        self.resizes(&set, unit_threads, total_bw, &stop, out);
        self.launches(&set, new_threads, total_bw, &stop, &waiting_note, out);
        Some(
            self.fixed_threads
                + unit_threads.iter().sum::<usize>()
                + new_threads.iter().sum::<usize>()
                + aged_threads,
        )
    }

    /// A hold of candidate `c` on this node.
    fn hold(&self, c: usize, cause: HoldCause, why: &str) -> Decision {
        Decision {
            at: self.s.now,
            action: Action::Hold {
                job: self.s.queue[self.cands[c].members[0]].id,
                node: self.node,
                cause,
            },
            reason: format!("hold {}: {why}", names(self.s, &self.cands[c].members)),
        }
    }

    /// Generate and check: lightest first, one thread each, eq. 2 (the
    /// movable units counted at one thread, the least they can hold).
    /// Returns the set and the first candidate refused, with why.
    fn generate(&self) -> (Vec<usize>, Option<Refusal>) {
        let (cands, nc, node, cores, limit) =
            (self.cands, self.nc, self.node, self.cores, self.limit);
        let (movable, fixed_threads) = (&self.movable, self.fixed_threads);
        let free = self.pool - movable.len();
        let mut set: Vec<usize> = Vec::new();
        let mut bw = self.fixed_bw + movable.iter().map(|u| u.cost.bandwidth(1.0)).sum::<f64>();
        let mut refusal: Option<Refusal> = None;
        for &c in &self.mine {
            let need = cands[c].cost.bandwidth(1.0);
            if set.len() + 1 > free {
                refusal = Some((
                    c,
                    HoldCause::NoCore,
                    if movable.is_empty() {
                        format!(
                            "no free core on node {node} ({} of {cores} busy)",
                            nc.threads + set.len()
                        )
                    } else {
                        format!(
                            "no free core on node {node} ({cores} cores: {fixed_threads} held by units that keep their threads, one each for {} that can shrink, {} launched now)",
                            plural(movable.len(), "running unit"),
                            set.len()
                        )
                    },
                ));
                break;
            }
            let idle = nc.threads == 0 && set.is_empty();
            if bw + need >= limit && !idle {
                refusal = Some((
                    c,
                    HoldCause::Contention,
                    format!(
                        "contention (eq. 2): Σbw would be {} of {} GB/s on node {node}",
                        gbs(bw + need),
                        gbs(limit)
                    ),
                ));
                break;
            }
            set.push(c);
            bw += need;
        }
        (set, refusal)
    }

    /// Share of `u`'s work left, in [0, 1].
    fn left(u: &RunningUnit) -> f64 {
        let whole = u.cost.seconds(u.threads as f64);
        if whole > 0.0 {
            (u.remaining_seconds / whole).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Check each generated set S_k (the first k of `set`; k = 0 only with
    /// movable units): iterative ascent gives the threads of S_k and of the
    /// movable units; keep the set doing the most work per second, Σ c/T(t)
    /// over the node's movable and new units with `c` the unit's least
    /// core-seconds on the node (`T(1)` unless it is superlinear; ties: the
    /// larger set). Truncates `set` to it (a refusal for the first left
    /// out) and returns the threads (movable units first) and why the
    /// ascent stopped.
    fn best_set(
        &self,
        set: &mut Vec<usize>,
        refusal: &mut Option<Refusal>,
    ) -> (Vec<usize>, String) {
        let (s, cands, node, cores) = (self.s, self.cands, self.node, self.cores);
        let m = s.machine;
        // Eq. 3's gain in QoS units: a second saved counts per job of the
        // unit and relative to the unit's time with every core (the solo
        // time QoS divides by), so a short job's second weighs more than a
        // long one's (docs/scheduler.md, "Deviations").
        let weight =
            |c: &Cost, jobs: usize| -> f64 { jobs as f64 / c.seconds(m.cores() as f64).max(1e-12) };
        let item_of_unit = |u: &RunningUnit| Item {
            cost: u.cost,
            left: Self::left(u),
            weight: weight(&u.cost, u.jobs.len()),
            label: format!("unit #{}", u.id),
        };
        let item_of_cand = |c: usize| Item {
            cost: cands[c].cost,
            left: 1.0,
            weight: weight(&cands[c].cost, cands[c].members.len()),
            label: names(s, &cands[c].members),
        };
        // Starved candidates (a prefix of `set`) enter the options like
        // the others; one the work rate leaves out time-shares the node's
        // cores instead of waiting ([`NodePlan::schedule`]).
        let k0 = usize::from(self.movable.is_empty());
        let mut options: Vec<(f64, Vec<usize>, String)> = Vec::new();
        for k in k0..=set.len() {
            let items: Vec<Item> = self
                .movable
                .iter()
                .map(|u| item_of_unit(u))
                .chain(set[..k].iter().map(|&c| item_of_cand(c)))
                .collect();
            let (t, why) = ascent(&items, self.fixed_bw, self.pool, self.limit, node);
            // Each unit's rate is slowed by its co-run factor: the share of
            // the node's other cores that the other units then hold.
            let busy = (self.fixed_threads + t.iter().sum::<usize>()) as f64;
            let others = |own: usize| -> f64 {
                (busy - own as f64).max(0.0) / (cores as f64 - own as f64).max(1.0)
            };
            let score: f64 = items
                .iter()
                .zip(&t)
                .map(|(it, &ti)| {
                    it.cost.work_rate(ti as f64, m.cores_per_node)
                        / it.cost.corun_factor(others(ti))
                })
                .chain(self.fixed.iter().map(|u| {
                    u.cost.work_rate(u.threads as f64, m.cores_per_node)
                        / u.cost.corun_factor(others(u.threads))
                }))
                .sum();
            options.push((score, t, why));
        }
        let top = options
            .iter()
            .map(|o| o.0)
            .fold(f64::NEG_INFINITY, f64::max);
        // The largest set with the best work rate.
        let pick = options.iter().rposition(|o| o.0 >= top - 1e-9).unwrap_or(0);
        let scores: Vec<String> = options.iter().map(|o| format!("{:.2}", o.0)).collect();
        let best_k = k0 + pick;
        let (_, threads, stop) = options.swap_remove(pick);
        if best_k < set.len() {
            let c = set[best_k];
            *refusal = Some((
                c,
                HoldCause::WorkRate,
                format!(
                    "work rate Σ c/T(t) with the first {k0}..{} lightest: {} (best with {best_k})",
                    set.len(),
                    scores.join(", ")
                ),
            ));
            set.truncate(best_k);
        }
        (threads, stop)
    }

    /// Look-ahead: the hold of the heaviest candidate left out of `set`
    /// when waiting for the node's cores gains it more than launching
    /// `set` (with `new_threads`) gains, `None` otherwise.
    fn look_ahead(&self, set: &[usize], new_threads: &[usize]) -> Option<Decision> {
        let (s, cands, nc, node) = (self.s, self.cands, self.nc, self.node);
        let la = self
            .mine
            .iter()
            .copied()
            .filter(|c| !set.contains(c))
            .max_by(|&a, &b| {
                cands[a]
                    .cost
                    .seconds(1.0)
                    .total_cmp(&cands[b].cost.seconds(1.0))
            })?;
        let t_la: usize = new_threads.iter().sum();
        let c = &cands[la].cost;
        let gain_la = c.seconds(1.0) - c.seconds(t_la as f64);
        let loss = nc.remaining.iter().sum::<f64>() / nc.remaining.len() as f64;
        let perf: f64 = set
            .iter()
            .zip(new_threads)
            .map(|(&ci, &t)| cands[ci].cost.seconds(1.0) - cands[ci].cost.seconds(t as f64))
            .sum();
        // Held only when waiting gains more (a NaN gain holds nothing).
        let holds = gain_la - loss > perf;
        if !holds {
            return None;
        }
        let why = format!(
            "node {node} held for it (look-ahead): Gain {:.3} s − Loss {:.3} s = {:.3} s > Perf(S) {:.3} s of launching {}",
            gain_la,
            loss,
            gain_la - loss,
            perf,
            set.iter().map(|&ci| names(s, &cands[ci].members)).collect::<Vec<_>>().join(", ")
        );
        Some(self.hold(la, HoldCause::LookAhead, &why))
    }

    /// Aging over busy cores: the launch of starved candidate `c` (refused
    /// by the work rate, `why`) with every core of the node, time-sharing
    /// them, when [`over_busy_cores`] allows it.
    fn aged_launch(
        &self,
        c: usize,
        why: &str,
        threads: &[usize],
        total_bw: f64,
    ) -> Option<Decision> {
        let (s, cands, nc, node) = (self.s, self.cands, self.nc, self.node);
        let m = s.machine;
        let q = cands[c]
            .members
            .iter()
            .map(|&i| &s.queue[i])
            .min_by(|a, b| a.arrival.total_cmp(&b.arrival));
        let busy = nc
            .threads
            .max(self.fixed_threads + threads.iter().sum::<usize>());
        q.and_then(|q| {
            over_busy_cores(
                s,
                &cands[c],
                node,
                busy,
                total_bw,
                format!(
                    "(aging: {} waited {:.3} s ≥ {STARVATION_QOS} × its solo {:.3} s; time-sharing instead of a split, {why})",
                    q.name,
                    s.now - q.arrival,
                    solo(m, &q.cost)
                ),
            )
        })
    }

    /// The resize decisions of the movable units whose threads change.
    fn resizes(
        &self,
        set: &[usize],
        unit_threads: &[usize],
        total_bw: f64,
        stop: &str,
        out: &mut Vec<Decision>,
    ) {
        let (s, cands, node, limit) = (self.s, self.cands, self.node, self.limit);
        let launched_names = set
            .iter()
            .map(|&ci| names(s, &cands[ci].members))
            .collect::<Vec<_>>()
            .join(", ");
        for (u, &t) in self.movable.iter().zip(unit_threads) {
            if t == u.threads {
                continue;
            }
            let l = Self::left(u);
            let (before, after) = (
                l * u.cost.seconds(u.threads as f64),
                l * u.cost.seconds(t as f64),
            );
            let why = if t < u.threads && !set.is_empty() {
                format!("cores for {launched_names}")
            } else if t < u.threads {
                "a partner gains more from the core".to_string()
            } else {
                "cores released".to_string()
            };
            out.push(Decision {
                at: s.now,
                action: Action::Resize { unit: u.id, threads: t },
                reason: format!(
                    "{} unit #{} ({}) on node {node} from {} to {} at its next superstep boundary ({why}): iterative ascent over {} with its {:.0}% of work left, ≈{:.3} s → {:.3} s; Σbw {} of {} GB/s; ascent stopped: {stop}",
                    if t > u.threads { "grow" } else { "shrink" },
                    u.id,
                    plural(u.jobs.len(), "job"),
                    u.threads,
                    plural(t, "thread"),
                    plural(self.pool, "core"),
                    l * 100.0,
                    before,
                    after,
                    gbs(total_bw),
                    gbs(limit)
                ),
            });
        }
    }

    /// The launch decisions of `set`, with `new_threads`.
    fn launches(
        &self,
        set: &[usize],
        new_threads: &[usize],
        total_bw: f64,
        stop: &str,
        waiting_note: &str,
        out: &mut Vec<Decision>,
    ) {
        let (s, cands, node, limit) = (self.s, self.cands, self.node, self.limit);
        let m = s.machine;
        for (&ci, &t) in set.iter().zip(new_threads) {
            let c = &cands[ci];
            let group_note = match (&c.group, c.members.len()) {
                (Some(g), 1) => format!(" (new scan group {g}: none running)"),
                (Some(g), k) => format!(" ({k} jobs fused into one shared scan of {g})"),
                (None, _) => String::new(),
            };
            let aging_note = if c.starved {
                let oldest = c
                    .members
                    .iter()
                    .map(|&i| &s.queue[i])
                    .min_by(|a, b| a.arrival.total_cmp(&b.arrival));
                oldest.map_or_else(String::new, |q| {
                    format!(
                        " (aging: {} waited {:.3} s ≥ {STARVATION_QOS} × its solo {:.3} s, so it goes first)",
                        q.name,
                        s.now - q.arrival,
                        solo(m, &q.cost)
                    )
                })
            } else {
                String::new()
            };
            out.push(Decision {
                at: s.now,
                action: Action::Launch {
                    jobs: c.members.iter().map(|&i| s.queue[i].id).collect(),
                    node: Some(node),
                    threads: t,
                },
                reason: format!(
                    "launch {} on node {node} with {}{group_note}{aging_note}: {} GB/s, Σbw {} of {} GB/s; ascent stopped: {stop}{waiting_note}",
                    names(s, &c.members),
                    plural(t, "thread"),
                    gbs(c.cost.bandwidth(t as f64)),
                    gbs(total_bw),
                    gbs(limit)
                ),
            });
        }
    }
}

/// Step 6, the short-job bypass: on a node whose cores are all taken (and
/// not already oversubscribed), the lightest waiting job starts now with
/// the node's cores, time-sharing them, when that lowers the summed
/// response time: time-shared it takes about 2·T_alone and delays each of
/// the k running jobs by T_alone, while waiting would cost it the shortest
/// remaining run R; so bypass when (k + 2)·T_alone < R.
fn bypass_short_jobs(
    s: &SchedState<'_>,
    ctx: &[NodeCtx],
    cands: &[Candidate],
    node_of: &[usize],
    after_threads: &[usize],
    out: &mut Vec<Decision>,
) {
    let m = s.machine;
    for (node, nc) in ctx.iter().enumerate() {
        let cores = m.cores_per_node;
        if nc.remaining.is_empty() || nc.threads > cores || after_threads[node] < cores {
            continue;
        }
        let shortest = nc.remaining.iter().copied().fold(f64::INFINITY, f64::min);
        let started: Vec<usize> = out
            .iter()
            .flat_map(|d| match &d.action {
                Action::Launch { jobs, .. } => jobs.clone(),
                Action::Join { job, .. } => vec![*job],
                Action::Hold { .. } | Action::Resize { .. } | Action::Move { .. } => Vec::new(),
            })
            .collect();
        let mut mine: Vec<usize> = (0..cands.len())
            .filter(|&c| node_of[c] == node)
            .filter(|&c| {
                !cands[c]
                    .members
                    .iter()
                    .any(|&i| started.contains(&s.queue[i].id))
            })
            .collect();
        mine.sort_by(|&a, &b| {
            cands[a]
                .cost
                .seconds(cores as f64)
                .total_cmp(&cands[b].cost.seconds(cores as f64))
        });
        let Some(&c) = mine.first() else { continue };
        let alone = cands[c].cost.seconds(cores as f64);
        if (nc.jobs + 2) as f64 * alone >= shortest {
            continue;
        }
        let detail = format!(
            "(short-job bypass): ({} running + 2) × {alone:.4} s alone < {shortest:.3} s shortest remaining run",
            nc.jobs
        );
        let Some(d) = over_busy_cores(
            s,
            &cands[c],
            node,
            after_threads[node],
            nc.bandwidth,
            detail,
        ) else {
            continue;
        };
        // It was held above at this decision point: it starts instead.
        let ids: Vec<usize> = cands[c].members.iter().map(|&i| s.queue[i].id).collect();
        out.retain(|d| !matches!(&d.action, Action::Hold { job, .. } if ids.contains(job)));
        out.push(d);
    }
}

/// Step 7 with the moves of 8a and 8c: a unit moved and re-allocated in
/// the same decision gets one decision, the move with the re-allocation's
/// threads.
fn merge_moves(out: &mut Vec<Decision>) {
    let moved: Vec<usize> = out
        .iter()
        .filter_map(|d| match d.action {
            Action::Move { unit, .. } => Some(unit),
            _ => None,
        })
        .collect();
    for id in moved {
        let Some(pos) = out
            .iter()
            .position(|d| matches!(d.action, Action::Resize { unit, .. } if unit == id))
        else {
            continue;
        };
        let r = out.remove(pos);
        if let Action::Resize { threads: t, .. } = r.action {
            for d in out.iter_mut() {
                if let Action::Move { unit, threads, .. } = &mut d.action {
                    if *unit == id {
                        *threads = t;
                        d.reason = format!("{}; then {}", d.reason, r.reason);
                    }
                }
            }
        }
    }
}

/// Step 8b, the tail spread: with nothing waiting and one unit left on the
/// machine (the caller checks both), the other nodes' cores would idle
/// until it ends (a unit is placed on one node); it runs on every core of
/// the machine instead when that ends it sooner, its remote accesses
/// counted (step 8a undoes this when a job arrives).
fn tail_spread(s: &SchedState<'_>, out: &mut Vec<Decision>) {
    let m = s.machine;
    let limit = m.node_bandwidth_bytes();
    let u = &s.running[0];
    if !(u.resizable && u.node.is_some() && worth_resizing(m, u)) {
        return;
    }
    let grown = out.iter().find_map(|d| match d.action {
        Action::Resize { unit, threads } if unit == u.id => Some(threads),
        _ => None,
    });
    let t_node = grown.unwrap_or(u.threads);
    let whole = u.cost.seconds(u.threads as f64).max(1e-12);
    let left = (u.remaining_seconds / whole).clamp(0.0, 1.0);
    let span = 1.0 + (m.nodes - 1) as f64 / m.nodes as f64 * (m.remote_factor - 1.0);
    let on_node = left
        * u.cost
            .seconds(t_node as f64)
            .max(u.cost.bytes() / limit.max(1.0));
    let cores = m.cores();
    let spread_s = left
        * u.cost
            .seconds(cores as f64)
            .max(u.cost.bytes() * span / (m.nodes as f64 * limit).max(1.0));
    if spread_s + m.resize_seconds < on_node {
        out.retain(|d| !matches!(d.action, Action::Resize { unit, .. } if unit == u.id));
        out.push(Decision {
            at: s.now,
            action: Action::Move {
                unit: u.id,
                node: None,
                threads: cores,
            },
            reason: format!(
                "spread unit #{} ({}) from node {} to all {} of the machine at its next superstep boundary (tail spread: nothing waits, no other unit runs): {:.0}% of work left, ≈{:.3} s on its node → {:.3} s on every node",
                u.id,
                plural(u.jobs.len(), "job"),
                u.node.unwrap_or(0),
                plural(cores, "core"),
                left * 100.0,
                on_node,
                spread_s
            ),
        });
    }
}

/// Launches `c` on `node` with every core of the node over `busy` threads
/// already there, time-sharing the cores (its demand counted at its
/// time-shared share on top of `bandwidth`, bytes/s); `None` when that
/// would oversubscribe the node's bandwidth. `detail` follows "over busy
/// cores" in the reason.
fn over_busy_cores(
    s: &SchedState<'_>,
    c: &Candidate,
    node: usize,
    busy: usize,
    bandwidth: f64,
    detail: String,
) -> Option<Decision> {
    let cores = s.machine.cores_per_node;
    let x = (busy + cores) as f64 / cores as f64;
    if bandwidth + c.cost.bandwidth(cores as f64) / x > s.machine.node_bandwidth_bytes() {
        return None;
    }
    Some(Decision {
        at: s.now,
        action: Action::Launch {
            jobs: c.members.iter().map(|&i| s.queue[i].id).collect(),
            node: Some(node),
            threads: cores,
        },
        reason: format!(
            "launch {} on node {node} with {} over busy cores {detail}",
            names(s, &c.members),
            plural(cores, "thread"),
        ),
    })
}

/// Steps 8a and 8c of `congra` (multi-node machines, with re-allocation):
/// a unit spread over every node goes back to the least busy node as soon
/// as a job waits (8a, the tail spread undone); with nothing waiting, a
/// node with no unit takes the unit with the longest remaining run from a
/// node that runs several (8c, tail migration). Pushes the `Move`
/// decisions to `out` and returns the running units as they then stand.
fn tail_moves(s: &SchedState<'_>, out: &mut Vec<Decision>) -> Vec<RunningUnit> {
    let m = s.machine;
    let mut running = s.running.to_vec();
    if !s.queue.is_empty() {
        for i in 0..running.len() {
            if !spread(&running[i]) {
                continue;
            }
            let busy = |n: usize| -> usize {
                running
                    .iter()
                    .filter(|u| u.node == Some(n))
                    .map(|u| u.threads)
                    .sum()
            };
            let home = (0..m.nodes).min_by_key(|&n| busy(n)).unwrap_or(0);
            let u = &mut running[i];
            let t = m.cores_per_node.min(u.threads);
            let before = u.cost.seconds(u.threads as f64);
            u.remaining_seconds *= u.cost.seconds(t as f64) / before.max(1e-12);
            u.node = Some(home);
            let from = u.threads;
            u.threads = t;
            out.push(Decision {
                at: s.now,
                action: Action::Move {
                    unit: u.id,
                    node: Some(home),
                    threads: t,
                },
                reason: format!(
                    "gather unit #{} ({}) from {} over every node to node {home} with {} at its next superstep boundary (tail spread undone: {} waiting)",
                    u.id,
                    plural(u.jobs.len(), "job"),
                    plural(from, "thread"),
                    plural(t, "thread"),
                    plural(s.queue.len(), "job")
                ),
            });
        }
    } else {
        // 8c. Tail migration: with nothing waiting, a node with no unit
        //     takes the unit with the longest remaining run from a node
        //     that runs several (its partners there grow into its
        //     cores in step 7).
        for n in 0..m.nodes {
            if running
                .iter()
                .any(|u| u.node == Some(n) || u.node.is_none())
            {
                continue;
            }
            let count = |k: usize| running.iter().filter(|u| u.node == Some(k)).count();
            let pick = (0..running.len())
                .filter(|&i| {
                    let u = &running[i];
                    u.resizable && u.node.is_some_and(|k| count(k) >= 2) && worth_resizing(m, u)
                })
                .max_by(|&a, &b| {
                    running[a]
                        .remaining_seconds
                        .total_cmp(&running[b].remaining_seconds)
                });
            let Some(i) = pick else { continue };
            let u = &mut running[i];
            let (from_node, from) = (u.node.unwrap_or(0), u.threads);
            let t = m.cores_per_node;
            let before = u.remaining_seconds;
            u.remaining_seconds *=
                u.cost.seconds(t as f64) / u.cost.seconds(from as f64).max(1e-12);
            u.node = Some(n);
            u.threads = t;
            out.push(Decision {
                at: s.now,
                action: Action::Move {
                    unit: u.id,
                    node: Some(n),
                    threads: t,
                },
                reason: format!(
                    "move unit #{} ({}) from node {from_node} ({}) to idle node {n} with {} at its next superstep boundary (tail migration: nothing waits), ≈{:.3} s → {:.3} s",
                    u.id,
                    plural(u.jobs.len(), "job"),
                    plural(from, "thread"),
                    plural(t, "thread"),
                    before,
                    u.remaining_seconds
                ),
            });
        }
    }
    running
}

/// Whether `u` is a `congra` unit spread over every node (step 8b).
fn spread(u: &RunningUnit) -> bool {
    u.node.is_none() && u.resizable
}

/// Whether re-allocating `u` can pay: its remaining run is at least
/// [`RESIZE_MIN_REMAINING_FACTOR`] times a resize's cost (half a superstep's
/// wait for the boundary plus the new pool's start).
fn worth_resizing(m: &Machine, u: &RunningUnit) -> bool {
    let cost = 0.5 * u.cost.superstep_seconds(u.threads as f64) + m.resize_seconds;
    u.remaining_seconds >= RESIZE_MIN_REMAINING_FACTOR * cost
}

/// One unit in an ascent: a running unit to re-allocate or a candidate.
struct Item {
    cost: Cost,
    /// Share of the unit's work left, in [0, 1] (1 for a candidate): eq.
    /// 3's gain of one more thread is counted on the work left.
    left: f64,
    /// What a second of the unit's time counts in the ascent: its jobs
    /// divided by its time with every core of the machine, per second.
    weight: f64,
    label: String,
}

/// Iterative ascent (CongraPlus §4.2.3) for `items` on a node with `cores`
/// cores to share and `ctx_bw` bytes/s used by units that keep their
/// threads: from one thread each, one more thread to the unit whose time
/// (on its work left, weighted by [`Item::weight`]) drops most (eq. 3),
/// until the cores are used or nothing gains; a unit whose next thread
/// would exceed the node's bandwidth stops ascending (the step is not
/// taken) while the others go on. Returns the threads and why the ascent
/// stopped.
fn ascent(
    items: &[Item],
    ctx_bw: f64,
    cores: usize,
    limit: f64,
    node: usize,
) -> (Vec<usize>, String) {
    let mut threads = vec![1usize; items.len()];
    // Units whose next thread would oversubscribe the bandwidth: they stop
    // ascending, the others go on (a unit that adds less traffic per
    // thread may still take a core).
    let mut capped = vec![false; items.len()];
    let mut refused: Option<String> = None;
    let gain = |i: usize, t: usize| items[i].weight * items[i].left * items[i].cost.gain(t);
    loop {
        let used: usize = threads.iter().sum();
        if used >= cores {
            return (
                threads,
                format!("all {} free on node {node} used", plural(cores, "core")),
            );
        }
        let Some(best) = (0..items.len())
            .filter(|&i| !capped[i])
            .max_by(|&a, &b| gain(a, threads[a]).total_cmp(&gain(b, threads[b])))
        else {
            let why = refused.unwrap_or_else(|| "nothing to ascend".into());
            return (threads, why);
        };
        if gain(best, threads[best]) <= 0.0 {
            let why = match refused {
                Some(r) => format!("{r}; no other unit gains from one more thread"),
                None => "no unit gains from one more thread".into(),
            };
            return (threads, why);
        }
        let trial: f64 = ctx_bw
            + items
                .iter()
                .zip(&threads)
                .enumerate()
                .map(|(i, (it, &t))| {
                    let t = if i == best { t + 1 } else { t };
                    it.cost.bandwidth(t as f64)
                })
                .sum::<f64>();
        if trial > limit {
            refused.get_or_insert_with(|| {
                format!(
                    "+1 thread on {} would need {} of {} GB/s",
                    items[best].label,
                    gbs(trial),
                    gbs(limit)
                )
            });
            capped[best] = true;
            continue;
        }
        threads[best] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::model::LaneCost;

    /// A job taking `t1` s alone at one thread, `serial` of it not
    /// parallel, moving `gb` GB per run.
    fn cost(t1: f64, serial: f64, gb: f64) -> Cost {
        Cost::amdahl(t1 * serial, t1 * (1.0 - serial), gb * 1e9, 0.0)
    }

    fn job(id: usize, c: Cost) -> QueuedJob {
        QueuedJob {
            id,
            name: format!("j{id}"),
            arrival: 0.0,
            cost: c,
            group: None,
        }
    }

    fn launches(d: &[Decision]) -> Vec<(Vec<usize>, Option<usize>, usize)> {
        d.iter()
            .filter_map(|d| match &d.action {
                Action::Launch {
                    jobs,
                    node,
                    threads,
                } => Some((jobs.clone(), *node, *threads)),
                _ => None,
            })
            .collect()
    }

    const NOLA: Policy = Policy::Congra {
        look_ahead: false,
        short_job_bypass: false,
        resize: false,
    };
    const LA: Policy = Policy::Congra {
        look_ahead: true,
        short_job_bypass: false,
        resize: false,
    };

    #[test]
    fn admission_refuses_to_oversubscribe_bandwidth() {
        let m = Machine::model(1, 8, 10.0);
        // Each job needs 4 GB/s at one thread: two fit under 10, a third does not.
        let q: Vec<QueuedJob> = (0..3).map(|i| job(i, cost(1.0, 0.0, 4.0))).collect();
        let d = decide(
            NOLA,
            &SchedState {
                now: 0.0,
                machine: &m,
                queue: &q,
                running: &[],
            },
        );
        let l = launches(&d);
        assert_eq!(l.len(), 2, "{d:#?}");
        assert!(
            d.iter().any(|x| x.reason.contains("waits: contention")),
            "{d:#?}"
        );
    }

    #[test]
    fn lighter_jobs_go_first() {
        let m = Machine::model(1, 1, 100.0);
        let q = vec![job(0, cost(9.0, 0.1, 1.0)), job(1, cost(2.0, 0.1, 1.0))];
        let d = decide(
            NOLA,
            &SchedState {
                now: 0.0,
                machine: &m,
                queue: &q,
                running: &[],
            },
        );
        assert_eq!(launches(&d), vec![(vec![1], Some(0), 1)]);
    }

    #[test]
    fn ascent_gives_the_thread_to_the_biggest_time_drop_and_stops_before_the_limit() {
        // Plenty of bandwidth: 4 cores, a perfectly parallel 8 s job and a
        // 90%-serial 8 s job: the parallel one gains more from each thread.
        let m = Machine::model(1, 4, 1000.0);
        let q = vec![job(0, cost(8.0, 0.0, 1.0)), job(1, cost(8.0, 0.9, 1.0))];
        let d = decide(
            NOLA,
            &SchedState {
                now: 0.0,
                machine: &m,
                queue: &q,
                running: &[],
            },
        );
        let mut l = launches(&d);
        l.sort();
        assert_eq!(
            l,
            vec![(vec![0], Some(0), 3), (vec![1], Some(0), 1)],
            "{d:#?}"
        );
        // Tight bandwidth: 8 GB per run at T(1) = 8 s → 1 GB/s at 1
        // thread, 2 GB/s at 2, 3 GB/s at 3; a limit of 2.5 GB/s stops at 2.
        let m = Machine::model(1, 4, 2.5);
        let q = vec![job(0, cost(8.0, 0.0, 8.0))];
        let d = decide(
            NOLA,
            &SchedState {
                now: 0.0,
                machine: &m,
                queue: &q,
                running: &[],
            },
        );
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 2)], "{d:#?}");
        assert!(
            d[0].reason
                .contains("+1 thread on j0 would need 3.00 of 2.50"),
            "{}",
            d[0].reason
        );
    }

    #[test]
    fn look_ahead_holds_when_eq_5_and_6_say_so() {
        let m = Machine::model(1, 4, 1000.0);
        // One core is free; a heavy parallel job waits behind a light one.
        let running = vec![RunningUnit {
            id: 7,
            node: Some(0),
            threads: 3,
            jobs: vec![99],
            cost: cost(1.0, 0.0, 0.1),
            group: None,
            remaining_seconds: 0.5,
            resizable: true,
        }];
        let q = vec![job(0, cost(1.0, 0.9, 0.1)), job(1, cost(100.0, 0.0, 0.1))];
        let st = SchedState {
            now: 0.1,
            machine: &m,
            queue: &q,
            running: &running,
        };
        // Without look-ahead the light job takes the free core.
        assert_eq!(launches(&decide(NOLA, &st)), vec![(vec![0], Some(0), 1)]);
        // S = {j0} at one thread: Perf = 0; Q_LA = j1 with 1 thread gains 0,
        // so no hold yet.
        let d = decide(LA, &st);
        assert_eq!(launches(&d).len(), 1, "{d:#?}");
        // Two free cores: S = {j0, j1} fits, nothing to look ahead for.
        // With j0 heavier in time but j1 needing more cores to gain:
        let running2 = vec![RunningUnit {
            threads: 2,
            ..running[0].clone()
        }];
        let q2 = vec![
            job(0, cost(1.0, 0.9, 0.1)),
            job(1, cost(2.0, 0.9, 0.1)),
            job(2, cost(100.0, 0.0, 0.1)),
        ];
        let st2 = SchedState {
            now: 0.1,
            machine: &m,
            queue: &q2,
            running: &running2,
        };
        // S = {j0, j1} at one thread each: Perf = 0; Q_LA = j2 with the
        // 2 threads S takes: gain 50 s − loss 0.5 s > 0 → hold (j0 has
        // waited less than its solo time: no aging yet).
        let d = decide(LA, &st2);
        assert!(launches(&d).is_empty(), "{d:#?}");
        assert!(matches!(d[0].action, Action::Hold { job: 2, .. }), "{d:#?}");
        assert!(d[0].reason.contains("look-ahead"));
        // Nothing running: never hold (no release would come).
        let st3 = SchedState {
            running: &[],
            ..st2
        };
        assert!(!launches(&decide(LA, &st3)).is_empty());
    }

    #[test]
    fn a_superlinear_profile_gets_the_cores_rather_than_a_partner() {
        let m = Machine::model(1, 2, 1000.0);
        let pr = Cost::fit(&[2.0, 0.8], 1e9, 0.0).unwrap();
        let q = vec![job(0, pr), job(1, pr)];
        let d = decide(
            NOLA,
            &SchedState {
                now: 0.0,
                machine: &m,
                queue: &q,
                running: &[],
            },
        );
        // One at two threads does 2 cores' worth of work at its best
        // efficiency (1.6 core-seconds per run) per second; two at one do 1.6.
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 2)], "{d:#?}");
        assert!(d[0].reason.contains("work rate"), "{}", d[0].reason);
    }

    #[test]
    fn a_short_job_bypasses_a_full_node_and_only_one_at_a_time() {
        let m = Machine::model(1, 2, 1000.0);
        let running = vec![RunningUnit {
            id: 1,
            node: Some(0),
            threads: 2,
            jobs: vec![9],
            cost: cost(10.0, 0.0, 0.1),
            group: None,
            remaining_seconds: 8.0,
            resizable: true,
        }];
        let q = vec![job(0, cost(0.2, 0.0, 0.01)), job(1, cost(5.0, 0.0, 0.01))];
        let by = Policy::Congra {
            look_ahead: false,
            short_job_bypass: true,
            resize: false,
        };
        let st = SchedState {
            now: 0.0,
            machine: &m,
            queue: &q,
            running: &running,
        };
        let d = decide(by, &st);
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 2)], "{d:#?}");
        assert!(d.iter().any(|x| x.reason.contains("short-job bypass")));
        // Not held and launched at one decision point.
        assert!(
            !d.iter()
                .any(|x| matches!(x.action, Action::Hold { job: 0, .. })),
            "{d:#?}"
        );
        assert!(launches(&decide(NOLA, &st)).is_empty());
        // Already oversubscribed: no second bypass.
        let mut two = running.clone();
        two.push(RunningUnit {
            id: 2,
            threads: 2,
            ..running[0].clone()
        });
        let st = SchedState {
            running: &two,
            ..st
        };
        assert!(launches(&decide(by, &st)).is_empty());
    }

    const RESIZE: Policy = Policy::Congra {
        look_ahead: false,
        short_job_bypass: false,
        resize: true,
    };

    fn unit(id: usize, threads: usize, c: Cost, remaining: f64) -> RunningUnit {
        RunningUnit {
            id,
            node: Some(0),
            threads,
            jobs: vec![100 + id],
            cost: c,
            group: None,
            remaining_seconds: remaining,
            resizable: true,
        }
    }

    fn resizes(d: &[Decision]) -> Vec<(usize, usize)> {
        d.iter()
            .filter_map(|d| match d.action {
                Action::Resize { unit, threads } => Some((unit, threads)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_heavy_job_left_at_one_thread_grows_when_its_partner_ends() {
        let m = Machine::model(1, 4, 1000.0);
        // The heavy unit was launched with one thread beside three others
        // that have ended: half its work is left, the queue is empty.
        let heavy = cost(20.0, 0.05, 1.0);
        let running = vec![unit(3, 1, heavy, 10.0)];
        let st = SchedState {
            now: 5.0,
            machine: &m,
            queue: &[],
            running: &running,
        };
        let d = decide(RESIZE, &st);
        assert_eq!(resizes(&d), vec![(3, 4)], "{d:#?}");
        assert!(
            d[0].reason
                .starts_with("grow unit #3 (1 job) on node 0 from 1 to 4 threads"),
            "{}",
            d[0].reason
        );
        assert!(d[0].reason.contains("50% of work left"), "{}", d[0].reason);
        // Threads fixed for a unit's life (the paper, `-fixed`): nothing.
        assert!(decide(NOLA, &st).is_empty());
        // A unit about to end keeps its threads.
        let ending = vec![unit(3, 1, heavy, 0.001)];
        let st = SchedState {
            running: &ending,
            ..st
        };
        assert!(decide(RESIZE, &st).is_empty());
        // A unit that cannot be resized keeps its threads.
        let fixed = vec![RunningUnit {
            resizable: false,
            ..running[0].clone()
        }];
        let st = SchedState {
            running: &fixed,
            ..st
        };
        assert!(decide(RESIZE, &st).is_empty());
    }

    #[test]
    fn a_short_arrival_takes_a_core_from_a_unit_holding_every_core() {
        let m = Machine::model(1, 4, 1000.0);
        // Amdahl with 10% serial: threads 3 and 4 add 1.26 jobs' work rate
        // to the running unit, the new job at two threads adds 1.82; the
        // ascent weighs the short job's seconds 40 times the long one's (in
        // QoS units), so it takes two cores.
        let running = vec![unit(1, 4, cost(20.0, 0.1, 1.0), 5.0)];
        let q = vec![job(0, cost(0.5, 0.1, 0.1))];
        let st = SchedState {
            now: 1.0,
            machine: &m,
            queue: &q,
            running: &running,
        };
        let d = decide(RESIZE, &st);
        assert_eq!(resizes(&d), vec![(1, 2)], "{d:#?}");
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 2)], "{d:#?}");
        assert!(d[0].reason.contains("cores for j0"), "{}", d[0].reason);
        // Fixed threads: the job waits for a core.
        let d = decide(NOLA, &st);
        assert!(launches(&d).is_empty(), "{d:#?}");
        assert!(
            matches!(
                d[0].action,
                Action::Hold {
                    job: 0,
                    cause: HoldCause::NoCore,
                    ..
                }
            ),
            "{d:#?}"
        );
    }

    fn queued_at(id: usize, c: Cost, arrival: f64) -> QueuedJob {
        QueuedJob {
            arrival,
            ..job(id, c)
        }
    }

    #[test]
    fn a_job_waiting_past_its_aging_bound_goes_ahead_of_lighter_later_arrivals() {
        // One node of 2 cores, one held by a unit that keeps its threads:
        // one free core. j0 (1 s at one thread, 0.5 s with both cores: its
        // solo time) came first, j1 (0.1 s) later.
        let m = Machine::model(1, 2, 1000.0);
        let running = vec![RunningUnit {
            resizable: false,
            ..unit(5, 1, cost(50.0, 0.0, 0.1), 40.0)
        }];
        let q = vec![
            queued_at(0, cost(1.0, 0.0, 0.1), 0.0),
            queued_at(1, cost(0.1, 0.0, 0.1), 0.2),
        ];
        let at = |now: f64| SchedState {
            now,
            machine: &m,
            queue: &q,
            running: &running,
        };
        // Before j0's bound (0.5 s of waiting): lightest first.
        assert_eq!(
            launches(&decide(NOLA, &at(0.3))),
            vec![(vec![1], Some(0), 1)]
        );
        assert_eq!(next_aging_deadline(NOLA, &at(0.3)), Some(0.5));
        // At it: j0 is starved and takes the core ahead of j1.
        let d = decide(NOLA, &at(0.5));
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 1)], "{d:#?}");
        assert!(
            d.iter()
                .any(|x| x.reason.contains("aging: j0 waited 0.500 s")),
            "{d:#?}"
        );
        // Starved jobs go in arrival order, whatever their weight.
        let late = vec![
            queued_at(0, cost(0.1, 0.0, 0.1), 0.2),
            queued_at(1, cost(1.0, 0.0, 0.1), 0.0),
        ];
        let st = SchedState {
            now: 2.0,
            queue: &late,
            ..at(2.0)
        };
        assert_eq!(launches(&decide(NOLA, &st)), vec![(vec![1], Some(0), 1)]);
        // fifo and all do not age.
        assert_eq!(next_aging_deadline(Policy::Fifo, &at(0.3)), None);
    }

    #[test]
    fn a_starved_job_is_not_held_by_the_work_rate_rule() {
        // The running unit scales superlinearly to 2 threads: sharing the
        // cores with a second such job does less work per second, so the
        // work-rate rule holds the newcomer (superlinear test above)...
        let m = Machine::model(1, 2, 1000.0);
        let pr = Cost::fit(&[2.0, 0.8], 1e9, 0.0).unwrap();
        let running = vec![unit(1, 2, pr, 5.0)];
        let q = vec![queued_at(0, pr, 0.0)];
        let at = |now: f64| SchedState {
            now,
            machine: &m,
            queue: &q,
            running: &running,
        };
        let d = decide(RESIZE, &at(0.1));
        assert!(launches(&d).is_empty(), "{d:#?}");
        assert!(
            matches!(
                d[0].action,
                Action::Hold {
                    cause: HoldCause::WorkRate,
                    ..
                }
            ),
            "{d:#?}"
        );
        // ... until it has waited its solo time (T(2) = 0.8 s): then it
        // starts at once, time-sharing both cores with the running unit
        // (which keeps its 2 threads: a one-thread split would cost both
        // more than time-sharing, T(1) = 2 s > 2·T(2)).
        let d = decide(RESIZE, &at(0.8));
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 2)], "{d:#?}");
        assert!(resizes(&d).is_empty(), "{d:#?}");
        assert!(
            d.iter().all(|x| !matches!(x.action, Action::Hold { .. })),
            "{d:#?}"
        );
        // On a node already oversubscribed it waits for a core.
        let busy = vec![unit(1, 2, pr, 5.0), unit(2, 2, pr, 5.0)];
        let d = decide(
            RESIZE,
            &SchedState {
                now: 0.8,
                machine: &m,
                queue: &q,
                running: &busy,
            },
        );
        assert!(launches(&d).is_empty(), "{d:#?}");
    }

    #[test]
    fn a_superlinear_job_does_not_take_a_core_from_a_linear_unit() {
        // A linear unit holds both cores; the queued job is superlinear
        // (fresh kron20 SSSP: 0.326 s, 0.144 s). Counted in T(1)/T(t) the
        // split scores 1 + 1 = 2, a tie with the unit at 2 threads, and the
        // job took a core at 1 thread, where it does 0.288/0.326 = 0.88
        // cores' worth of its work: the split scores 1.88 and the job waits.
        let m = Machine::model(1, 2, 1000.0);
        let lin = Cost::fit(&[2.0, 1.0], 1e9, 0.0).unwrap();
        let sssp = Cost::fit(&[0.326, 0.144], 1e9, 0.0).unwrap();
        assert!((sssp.work_rate(1.0, 2) - 0.288 / 0.326).abs() < 1e-9);
        assert!((lin.work_rate(1.0, 2) - 1.0).abs() < 1e-12);
        let running = vec![unit(1, 2, lin, 1.5)];
        let q = vec![queued_at(0, sssp, 0.0)];
        let st = SchedState {
            now: 0.01,
            machine: &m,
            queue: &q,
            running: &running,
        };
        let d = decide(RESIZE, &st);
        assert!(launches(&d).is_empty(), "{d:#?}");
        assert!(
            matches!(
                d[0].action,
                Action::Hold {
                    cause: HoldCause::WorkRate,
                    ..
                }
            ),
            "{d:#?}"
        );
        // A sublinear job of the same times at 2 threads takes the core.
        let sub = Cost::fit(&[0.26, 0.144], 1e9, 0.0).unwrap();
        let q = vec![queued_at(0, sub, 0.0)];
        let d = decide(RESIZE, &SchedState { queue: &q, ..st });
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 1)], "{d:#?}");
    }

    #[test]
    fn a_starved_job_is_not_held_by_the_look_ahead() {
        // As in look_ahead_holds_when_eq_5_and_6_say_so: S = {j0, j1} is held
        // for j2; once j0 has waited its solo time, S launches.
        let m = Machine::model(1, 4, 1000.0);
        let running = vec![RunningUnit {
            resizable: false,
            ..unit(7, 2, cost(1.0, 0.0, 0.1), 0.5)
        }];
        let q = vec![
            job(0, cost(1.0, 0.9, 0.1)),
            job(1, cost(2.0, 0.9, 0.1)),
            job(2, cost(100.0, 0.0, 0.1)),
        ];
        let at = |now: f64| SchedState {
            now,
            machine: &m,
            queue: &q,
            running: &running,
        };
        assert!(launches(&decide(LA, &at(0.1))).is_empty());
        // j0's solo time: 0.9 + 0.1/4 = 0.925 s.
        let d = decide(LA, &at(0.925));
        assert_eq!(
            launches(&d),
            vec![(vec![0], Some(0), 1), (vec![1], Some(0), 1)],
            "{d:#?}"
        );
    }

    fn moves(d: &[Decision]) -> Vec<(usize, Option<usize>, usize)> {
        d.iter()
            .filter_map(|d| match d.action {
                Action::Move {
                    unit,
                    node,
                    threads,
                } => Some((unit, node, threads)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_last_unit_spreads_over_every_node_and_comes_back_when_a_job_arrives() {
        let m = Machine::model(2, 4, 1000.0);
        let running = vec![unit(3, 4, cost(20.0, 0.0, 1.0), 5.0)];
        let st = SchedState {
            now: 1.0,
            machine: &m,
            queue: &[],
            running: &running,
        };
        let d = decide(RESIZE, &st);
        assert_eq!(moves(&d), vec![(3, None, 8)], "{d:#?}");
        assert!(d[0].reason.contains("tail spread"), "{}", d[0].reason);
        // Threads fixed, or one node: nothing.
        assert!(decide(NOLA, &st).is_empty());
        let one = Machine::model(1, 8, 1000.0);
        assert!(moves(&decide(
            RESIZE,
            &SchedState {
                machine: &one,
                ..st
            }
        ))
        .is_empty());
        // Spread, a job arrives: the unit goes back to one node and the job
        // starts on the other.
        let spread = vec![RunningUnit {
            node: None,
            threads: 8,
            ..running[0].clone()
        }];
        let q = vec![job(0, cost(2.0, 0.0, 0.1))];
        let d = decide(
            RESIZE,
            &SchedState {
                queue: &q,
                running: &spread,
                ..st
            },
        );
        assert_eq!(moves(&d), vec![(3, Some(0), 4)], "{d:#?}");
        assert_eq!(launches(&d), vec![(vec![0], Some(1), 4)], "{d:#?}");
    }

    #[test]
    fn an_idle_node_takes_the_longest_unit_of_a_busy_one_when_nothing_waits() {
        let m = Machine::model(2, 4, 1000.0);
        let running = vec![
            unit(1, 2, cost(20.0, 0.0, 1.0), 3.0),
            unit(2, 2, cost(20.0, 0.0, 1.0), 6.0),
        ];
        let d = decide(
            RESIZE,
            &SchedState {
                now: 1.0,
                machine: &m,
                queue: &[],
                running: &running,
            },
        );
        assert_eq!(moves(&d), vec![(2, Some(1), 4)], "{d:#?}");
        assert_eq!(resizes(&d), vec![(1, 4)], "{d:#?}");
    }

    #[test]
    fn a_hold_repeated_at_later_decision_points_is_logged_once() {
        let hold = |at: f64, cause: HoldCause| Decision {
            at,
            action: Action::Hold {
                job: 4,
                node: 0,
                cause,
            },
            reason: format!("hold j4 at {at}"),
        };
        let mut log = DecisionLog::default();
        assert_eq!(log.record(&[hold(1.0, HoldCause::NoCore)]).len(), 1);
        assert!(log.record(&[hold(2.0, HoldCause::NoCore)]).is_empty());
        assert!(log.record(&[hold(3.0, HoldCause::NoCore)]).is_empty());
        // Its cause changes: logged again.
        assert_eq!(log.record(&[hold(4.0, HoldCause::Contention)]).len(), 1);
        let launch = Decision {
            at: 5.0,
            action: Action::Launch {
                jobs: vec![4],
                node: Some(0),
                threads: 1,
            },
            reason: "launch j4".into(),
        };
        assert_eq!(log.record(&[launch]).len(), 1);
        assert_eq!(log.decisions().len(), 3);
    }

    #[test]
    fn lpt_on_two_nodes_balances() {
        let m = Machine::model(2, 4, 1000.0);
        let q = vec![
            job(0, cost(10.0, 0.5, 0.1)),
            job(1, cost(7.0, 0.5, 0.1)),
            job(2, cost(5.0, 0.5, 0.1)),
            job(3, cost(4.0, 0.5, 0.1)),
        ];
        let d = decide(
            NOLA,
            &SchedState {
                now: 0.0,
                machine: &m,
                queue: &q,
                running: &[],
            },
        );
        let l = launches(&d);
        let load = |n| -> f64 {
            l.iter()
                .filter(|x| x.1 == Some(n))
                .map(|x| q[x.0[0]].cost.seconds(1.0))
                .sum()
        };
        // LPT: 10 → n0, 7 → n1, 5 → n1 (12), 4 → n0 (14).
        assert_eq!((load(0), load(1)), (14.0, 12.0), "{d:#?}");
    }

    #[test]
    fn one_node_reduces_to_plain_scheduling() {
        let m = Machine::model(1, 2, 1000.0);
        let q: Vec<QueuedJob> = (0..3)
            .map(|i| job(i, cost(1.0 + i as f64, 0.2, 0.1)))
            .collect();
        let d = decide(
            NOLA,
            &SchedState {
                now: 0.0,
                machine: &m,
                queue: &q,
                running: &[],
            },
        );
        assert_eq!(
            launches(&d),
            vec![(vec![0], Some(0), 1), (vec![1], Some(0), 1)]
        );
    }

    /// A state at time 0.
    fn at_start<'a>(
        m: &'a Machine,
        queue: &'a [QueuedJob],
        running: &'a [RunningUnit],
    ) -> SchedState<'a> {
        SchedState {
            now: 0.0,
            machine: m,
            queue,
            running,
        }
    }

    /// A queued job of the scan group `group`.
    fn grouped(id: usize, c: Cost, group: &str) -> QueuedJob {
        QueuedJob {
            group: Some(group.into()),
            ..job(id, c)
        }
    }

    #[test]
    fn fused_groups_join_a_running_scan_and_queued_ones_launch_together() {
        let m = Machine::model(1, 2, 1000.0);
        let (a, b) = (
            grouped(0, cost(1.0, 0.2, 0.1), "pagerank@g"),
            grouped(1, cost(1.0, 0.2, 0.1), "pagerank@g"),
        );
        let d = decide(NOLA, &at_start(&m, &[a.clone(), b.clone()], &[]));
        assert_eq!(launches(&d), vec![(vec![0, 1], Some(0), 2)], "{d:#?}");
        let running = vec![RunningUnit {
            id: 3,
            node: Some(0),
            threads: 2,
            jobs: vec![0],
            cost: a.cost,
            group: a.group.clone(),
            remaining_seconds: 1.0,
            resizable: true,
        }];
        let d = decide(NOLA, &at_start(&m, std::slice::from_ref(&b), &running));
        assert_eq!(d[0].action, Action::Join { unit: 3, job: 1 }, "{d:#?}");
        // Near its end the group would run on for the joiner: no join.
        let ending = vec![RunningUnit {
            remaining_seconds: 0.1,
            ..running[0].clone()
        }];
        let st = SchedState {
            now: 0.0,
            machine: &m,
            queue: &[b],
            running: &ending,
        };
        let d = decide(NOLA, &st);
        assert!(
            d.iter().all(|x| !matches!(x.action, Action::Join { .. })),
            "{d:#?}"
        );
    }

    #[test]
    fn jobs_whose_fused_kernel_is_slower_neither_fuse_nor_join() {
        // Measured lanes: two fused take 4.5 × one alone (MS-BFS lanes
        // against direction-optimising BFS), each further one 0.5 more.
        let m = Machine::model(1, 2, 1000.0);
        let mut c = cost(1.0, 0.0, 0.1);
        c.lanes = Some(LaneCost {
            base: 4.0,
            per_lane: 0.5,
        });
        let (a, b) = (grouped(0, c, "bfs@g"), grouped(1, c, "bfs@g"));
        let d = decide(NOLA, &at_start(&m, &[a.clone(), b.clone()], &[]));
        assert_eq!(
            launches(&d),
            vec![(vec![0], Some(0), 1), (vec![1], Some(0), 1)],
            "{d:#?}"
        );
        let running = vec![RunningUnit {
            jobs: vec![0],
            group: a.group.clone(),
            resizable: false,
            ..unit(3, 2, a.cost, 1.0)
        }];
        let d = decide(NOLA, &at_start(&m, std::slice::from_ref(&b), &running));
        assert!(
            d.iter().all(|x| !matches!(x.action, Action::Join { .. })),
            "{d:#?}"
        );
        // Eight of them queued together do fuse: 4 + 7 × 0.5 < 8.
        let q: Vec<QueuedJob> = (0..8).map(|i| grouped(i, c, "bfs@g")).collect();
        let d = decide(NOLA, &at_start(&m, &q, &[]));
        assert_eq!(launches(&d), vec![((0..8).collect(), Some(0), 2)], "{d:#?}");
    }

    #[test]
    fn the_work_rate_counts_the_corun_slowdown_of_both_neighbours() {
        // Two linear jobs: splitting the cores ties with one at two threads
        // (the larger set wins the tie) until co-running slows them.
        let m = Machine::model(1, 2, 1000.0);
        let mut c = Cost::fit(&[2.0, 1.0], 1e9, 0.0).unwrap();
        let st = |q: &[QueuedJob]| decide(RESIZE, &at_start(&m, q, &[]));
        let q = vec![job(0, c), job(1, c)];
        assert_eq!(launches(&st(&q)).len(), 2);
        c.corun_slowdown = 0.2;
        let q = vec![job(0, c), job(1, c)];
        let d = st(&q);
        assert_eq!(launches(&d), vec![(vec![0], Some(0), 2)], "{d:#?}");
    }

    #[test]
    fn fifo_runs_one_job_and_all_runs_every_job() {
        let m = Machine::model(2, 2, 10.0);
        let q: Vec<QueuedJob> = (0..3).map(|i| job(i, cost(1.0, 0.2, 0.1))).collect();
        let st = SchedState {
            now: 0.0,
            machine: &m,
            queue: &q,
            running: &[],
        };
        assert_eq!(
            launches(&decide(Policy::Fifo, &st)),
            vec![(vec![0], None, 4)]
        );
        assert_eq!(launches(&decide(Policy::All, &st)).len(), 3);
        for name in CONGRA_NAMES.iter().chain(&["fifo", "all"]) {
            let p: Policy = name.parse().unwrap();
            assert_eq!(p.name(), *name);
        }
        assert_eq!("congra".parse::<Policy>(), Ok(Policy::CONGRA));
        assert!("congra-x".parse::<Policy>().is_err());
    }
}
