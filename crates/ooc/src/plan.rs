//! Vertex intervals sized from a memory budget (PartitionedVC §3.4).
//!
//! The budget pays, in this order, for:
//! 1. the fixed per-vertex arrays: a resident window of each mapped array
//!    of the store (the offsets of each direction, the natural-id
//!    permutation of a reordered store; [`crate::file::MAPPED_WINDOW`]),
//!    the executor's frontier copies (two bitmaps, and the ids a step
//!    activates: at most 4 bytes a vertex), and the caller's count of the
//!    algorithm's own state ([`crate::state_bytes`]: its heap arrays, and a
//!    resident window of each array it keeps in the executor's state
//!    files);
//! 2. what is left (`A`): half for the adjacency read buffer (`A / 2`,
//!    read with `O_DIRECT` where the file system allows, so no page-cache
//!    copy), a quarter for the message-log buffers, one per interval plus
//!    one for reading a log back (`A / 4 / (k + 1)` each), and a quarter
//!    for log pages written but not yet synced and dropped from the page
//!    cache.
//!
//! Intervals are runs of consecutive vertices whose adjacency (neighbours
//! and weights, both directions of a directed graph) takes at most half the
//! read buffer, so `--io full` reads an interval in one buffer fill; a
//! vertex whose lists alone are larger is an interval by itself and is
//! read in pieces. A plan needs a read buffer of at least [`MIN_READ`]
//! bytes and log buffers of at least [`MIN_LOG`] bytes; a budget below
//! that is refused, naming the smallest budget that would do.
use plexus_graph::VertexId;

use crate::error::{human_bytes, OocError, Result};
use crate::file::StoredGraph;

/// Smallest adjacency read buffer: two pages for each of four streams
/// (neighbours and weights of two directions).
pub const MIN_READ: u64 = 64 << 10;
/// Smallest message-log buffer of one interval (one page).
pub const MIN_LOG: u64 = 4 << 10;

/// How the budget is spent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Interval boundaries: interval `i` is `starts[i]..starts[i + 1]`.
    pub starts: Vec<VertexId>,
    /// Bytes of adjacency read buffers (all streams together).
    pub read_bytes: u64,
    /// Bytes of one interval's message-log buffer (of one job's logs, in a
    /// shared plan).
    pub log_bytes: u64,
    /// Bytes of the fixed per-vertex arrays (offsets, bitmaps, the
    /// algorithm's state estimate).
    pub fixed_bytes: u64,
}

impl Plan {
    /// Number of intervals.
    pub fn intervals(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The interval holding `v`.
    #[inline]
    pub fn interval_of(&self, v: VertexId) -> usize {
        self.starts.partition_point(|&s| s <= v).saturating_sub(1)
    }

    /// Bytes the plan accounts for in all (of one job's logs).
    pub fn total_bytes(&self) -> u64 {
        self.fixed_bytes + self.read_bytes + self.log_bytes * (self.intervals() as u64 + 1)
    }
}

/// Bytes of the fixed per-vertex arrays for `g` with `state_bytes` of
/// algorithm state.
pub fn fixed_bytes(g: &StoredGraph, state_bytes: u64) -> u64 {
    use plexus_engine::program::GraphView;
    let n = g.num_vertices() as u64;
    g.resident_bytes() + frontier_copies(n) + state_bytes
}

/// Bytes of one job's frontier copies in the executor on `n` vertices: two
/// bitmaps (the frontier's, the next one's) and the activated ids.
fn frontier_copies(n: u64) -> u64 {
    2 * n.div_ceil(64) * 8 + 4 * n
}

/// The plan for `g` under `memory` bytes with `state_bytes` of algorithm
/// state, or [`OocError::BudgetTooSmall`] naming the least that fits.
pub fn plan(g: &StoredGraph, memory: u64, state_bytes: u64) -> Result<Plan> {
    plan_for(g, memory, fixed_bytes(g, state_bytes), 1)
}

/// The plan of a shared pass ([`crate::shared`]) of jobs whose algorithm
/// states take `states` bytes each, under `memory` bytes for all of them:
/// the offsets once; each job's state, frontier copies and message logs
/// its own; one read buffer for all; one bitmap of the union of the jobs'
/// lists. [`Plan::log_bytes`] is one job's interval buffer: the logs' half
/// of what is left is split evenly across the jobs.
pub fn plan_shared(g: &StoredGraph, memory: u64, states: &[u64]) -> Result<Plan> {
    use plexus_engine::program::GraphView;
    let n = g.num_vertices() as u64;
    let per_job = frontier_copies(n);
    let jobs = states.len().max(1) as u64;
    let fixed =
        g.resident_bytes() + n.div_ceil(64) * 8 + states.iter().map(|s| s + per_job).sum::<u64>();
    plan_for(g, memory, fixed, jobs)
}

/// The plan with `fixed` bytes of per-vertex arrays and the log half split
/// across `jobs`, or [`OocError::BudgetTooSmall`].
fn plan_for(g: &StoredGraph, memory: u64, fixed: u64, jobs: u64) -> Result<Plan> {
    if let Some(p) = memory
        .checked_sub(fixed)
        .and_then(|a| try_plan(g, a, fixed, jobs))
    {
        return Ok(p);
    }
    let minimum = fixed + least_available(g, fixed, jobs);
    Err(OocError::BudgetTooSmall {
        budget: memory,
        minimum,
        readable: human_bytes(minimum),
    })
}

/// A plan with the given buffer sizes and intervals of at most
/// `interval_bytes` of adjacency, whatever the budget: for tests and
/// experiments that want many intervals, batches and log flushes on a
/// small graph (no budget is checked).
pub fn fixed_plan(g: &StoredGraph, read_bytes: u64, log_bytes: u64, interval_bytes: u64) -> Plan {
    Plan {
        starts: intervals(g, interval_bytes),
        read_bytes,
        log_bytes,
        fixed_bytes: fixed_bytes(g, 0),
    }
}

/// The plan with `avail` bytes beyond the fixed arrays, if it fits.
fn try_plan(g: &StoredGraph, avail: u64, fixed: u64, jobs: u64) -> Option<Plan> {
    let read_bytes = avail / 2;
    if read_bytes < MIN_READ {
        return None;
    }
    let starts = intervals(g, read_bytes / 2);
    let k = starts.len().saturating_sub(1) as u64;
    let log_bytes = (avail - read_bytes) / 2 / (k + 1) / jobs;
    (log_bytes >= MIN_LOG).then_some(Plan {
        starts,
        read_bytes,
        log_bytes,
        fixed_bytes: fixed,
    })
}

/// The least `avail` for which [`try_plan`] succeeds (binary search; the
/// plan only gets easier with more memory).
fn least_available(g: &StoredGraph, fixed: u64, jobs: u64) -> u64 {
    let (mut lo, mut hi) = (0u64, 2 * MIN_READ + 2 * MIN_LOG);
    while try_plan(g, hi, fixed, jobs).is_none() {
        lo = hi;
        hi = hi.saturating_mul(2);
        if hi == u64::MAX {
            return hi;
        }
    }
    while hi - lo > 4096 {
        let mid = lo + (hi - lo) / 2;
        if try_plan(g, mid, fixed, jobs).is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Runs of consecutive vertices with at most `target` bytes of adjacency
/// each (a vertex above it alone), as boundaries `0 = s_0 < … < s_k = n`.
fn intervals(g: &StoredGraph, target: u64) -> Vec<VertexId> {
    use plexus_engine::program::GraphView;
    let n = g.num_vertices();
    let per_arc = 4 + if g.is_weighted() { 8 } else { 0 };
    let directed = g.is_directed();
    let mut starts = vec![0 as VertexId];
    let mut acc = 0u64;
    for v in 0..n as VertexId {
        let mut a = per_arc * g.out_degree(v) as u64;
        if directed {
            a += per_arc * g.in_degree(v) as u64;
        }
        if acc > 0 && acc + a > target {
            starts.push(v);
            acc = 0;
        }
        acc += a;
    }
    if n > 0 {
        starts.push(n as VertexId);
    }
    starts
}
