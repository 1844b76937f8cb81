//! SSSP from up to [`MAX_LANES`] roots fused into one traversal: each lane
//! runs the engine's delta-stepping (its own buckets, its own current
//! bucket, bucket width `Δ` of its job), and one superstep relaxes every
//! lane's current bucket at once. Distances are stored vertex-major
//! (`dist[v·8 + lane]`, one cache line per vertex), so one visit of an edge
//! `u → v` relaxes all the lanes whose frontier holds `u`.
//!
//! Per lane this is the engine's driver step for step (bucket popped,
//! stale entries dropped, frontier relaxed until the bucket stays empty,
//! improved vertices re-bucketed), so distances converge to the same
//! fixpoint, bit-identical, and parents come from the engine's
//! `sssp::parents_of`. Pushing, a slot is an atomic minimum as in
//! `sssp::Program`; pulling, `v` takes per lane the minimum over active
//! in-neighbours of `dist[u] + w`.
//!
//! **Off by default** ([`crate::ManagerConfig::fuse_sssp`]): fused lanes
//! measured slower than one task per job in the shared scan, and that
//! slower than one job after another.
//! Unlike BFS levels, the
//! lanes' buckets hold different vertices at any time, so a row of 8
//! distances serves one lane per visit while the union frontier turns
//! pulls on early and the working set grows eightfold.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use plexus_engine::edge_map::Mode;
use plexus_engine::program::AtomicF64;
use plexus_engine::subset::bit;
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::job::JobShared;
use crate::lanes::union_bitmap;
use crate::output::{JobOutput, Values};
use crate::scan::{ChunkPlan, Plan, ScanChunk, ScanTask};
use crate::spec::Resolved;

/// Lanes per group: 8 distances fill one 64-byte line per vertex.
pub const MAX_LANES: usize = 8;

struct Lane {
    job: Arc<JobShared>,
    source: VertexId,
    delta: f64,
    buckets: BTreeMap<u64, Vec<VertexId>>,
    iterations: usize,
}

/// Pull when the union frontier plus its out-edges exceed this: half the
/// arcs, higher than Ligra's `|E| / 20`, because the lanes' frontiers are
/// mostly disjoint, so their union is large while each lane's own work is
/// small, and a pull scans every edge whatever the frontier.
fn dense_threshold(g: &Graph) -> u64 {
    g.num_arcs() / 2
}

/// The bucket of distance `d` for width `delta` (the engine's rule).
#[inline]
fn bucket(d: f64, delta: f64) -> u64 {
    (d / delta) as u64
}

/// Up to 8 SSSP jobs in one traversal.
pub struct SsspLanes {
    n: usize,
    /// `dist[v·MAX_LANES + l]`.
    dist: Vec<AtomicF64>,
    /// Lanes whose current frontier holds `v`.
    cur: Vec<AtomicU64>,
    /// Lanes in which `v` improved this superstep.
    next: Vec<AtomicU64>,
    /// The union frontier, sorted and distinct.
    front: Vec<VertexId>,
    lanes: [Option<Lane>; MAX_LANES],
    mode: Mode,
    /// Dense steps: the union frontier as a bitmap, to skip inactive
    /// in-neighbours with one bit test instead of a load of `cur`.
    bits: Vec<u64>,
}

impl SsspLanes {
    /// An empty group on a graph of `n` vertices.
    pub fn new(n: usize) -> Self {
        SsspLanes {
            n,
            dist: (0..n * MAX_LANES)
                .map(|_| AtomicF64::new(f64::INFINITY))
                .collect(),
            cur: (0..n).map(|_| AtomicU64::new(0)).collect(),
            next: (0..n).map(|_| AtomicU64::new(0)).collect(),
            front: Vec::new(),
            lanes: Default::default(),
            mode: Mode::Sparse,
            bits: Vec::new(),
        }
    }

    #[inline]
    fn d(&self, v: VertexId, l: usize) -> &AtomicF64 {
        &self.dist[v as usize * MAX_LANES + l]
    }

    fn live(&self) -> u64 {
        self.lanes
            .iter()
            .enumerate()
            .filter(|(_, l)| l.is_some())
            .fold(0, |m, (i, _)| m | 1 << i)
    }

    fn lane_bytes(&self) -> u64 {
        let n = self.n as u64;
        let lanes = self.lanes.iter().flatten().count().max(1) as u64;
        8 * n + 16 * n / lanes
    }

    fn end_lane(&mut self, l: usize, outcome: Option<crate::error::JobError>) {
        let Some(lane) = self.lanes[l].take() else {
            return;
        };
        let n = self.n;
        match outcome {
            Some(e) => lane.job.finish(Err(e)),
            None => {
                let dist: Vec<f64> = (0..n as VertexId)
                    .into_par_iter()
                    .map(|v| self.d(v, l).load())
                    .collect();
                lane.job.finish(Ok(JobOutput {
                    snapshot: Arc::clone(&lane.job.snapshot),
                    values: Values::Sssp {
                        dist,
                        source: lane.source,
                        iterations: lane.iterations,
                    },
                }));
            }
        }
        // The slot may be reused: reset its column.
        (0..n as VertexId)
            .into_par_iter()
            .with_min_len(4096)
            .for_each(|v| self.d(v, l).store(f64::INFINITY));
    }
}

impl ScanTask for SsspLanes {
    fn plan(&mut self, g: &Graph) -> Plan {
        let n = self.n;
        // Clear the last frontier.
        let cur = &self.cur;
        self.front
            .par_iter()
            .with_min_len(1024)
            .for_each(|&v| cur[v as usize].store(0, Ordering::Relaxed));
        let mut union: Vec<VertexId> = Vec::new();
        let mut counts = [0u64; MAX_LANES];
        for l in 0..MAX_LANES {
            let Some(lane) = &self.lanes[l] else { continue };
            if let Some(e) = lane.job.stop_reason() {
                self.end_lane(l, Some(e));
                continue;
            }
            // The engine's driver: the lowest bucket, stale entries dropped.
            let mut frontier = Vec::new();
            while let Some(lane) = self.lanes[l].as_mut() {
                let Some((k, ids)) = lane.buckets.pop_first() else {
                    break;
                };
                let delta = lane.delta;
                let mut ids = ids;
                ids.par_sort_unstable();
                ids.dedup();
                let dist = &self.dist;
                ids.retain(|&v| bucket(dist[v as usize * MAX_LANES + l].load(), delta) == k);
                if !ids.is_empty() {
                    frontier = ids;
                    break;
                }
            }
            if frontier.is_empty() {
                self.end_lane(l, None);
                continue;
            }
            if let Some(lane) = self.lanes[l].as_mut() {
                lane.iterations += 1;
            }
            counts[l] = frontier.len() as u64;
            let cur = &self.cur;
            frontier.par_iter().with_min_len(1024).for_each(|&v| {
                cur[v as usize].fetch_or(1 << l, Ordering::Relaxed);
            });
            union.extend(frontier);
        }
        if self.live() == 0 {
            return Plan::Done;
        }
        union.par_sort_unstable();
        union.dedup();
        let edges: u64 = union
            .par_iter()
            .with_min_len(1024)
            .map(|&v| g.out_degree(v) as u64)
            .sum();
        self.mode = if union.len() as u64 + edges > dense_threshold(g) {
            Mode::Dense
        } else {
            Mode::Sparse
        };
        let share = self.lane_bytes();
        for (l, lane) in self.lanes.iter().enumerate() {
            if let Some(lane) = lane {
                lane.job.mark_running();
                lane.job.record_step(counts[l], edges);
                lane.job.set_state_bytes(share);
            }
        }
        self.bits = match self.mode {
            Mode::Dense => union_bitmap(n, &union),
            Mode::Sparse => Vec::new(),
        };
        self.front = union;
        Plan::Chunks(ChunkPlan {
            mode: self.mode,
            symmetric: false,
            weights: true,
            active: match self.mode {
                Mode::Sparse => self.front.clone(),
                Mode::Dense => Vec::new(),
            },
        })
    }

    fn run_chunk(
        &self,
        g: &Graph,
        chunk: &ScanChunk,
        active: &[VertexId],
        out: &mut Vec<VertexId>,
    ) {
        for l in self.lanes.iter().flatten() {
            l.job.maybe_fault();
        }
        match self.mode {
            Mode::Dense => {
                let inc = g.inc();
                for v in chunk.vertices() {
                    let mut best = [f64::INFINITY; MAX_LANES];
                    let mut any = 0u64;
                    let ws = inc.weights(v).unwrap_or(&[]);
                    for (&u, &w) in inc.neighbors(v).iter().zip(ws) {
                        if !bit(&self.bits, u) {
                            continue;
                        }
                        let mut m = self.cur[u as usize].load(Ordering::Relaxed);
                        any |= m;
                        while m != 0 {
                            let l = m.trailing_zeros() as usize;
                            m &= m - 1;
                            let c = self.d(u, l).load() + w;
                            if c.total_cmp(&best[l]).is_lt() {
                                best[l] = c;
                            }
                        }
                    }
                    let mut improved = 0u64;
                    while any != 0 {
                        let l = any.trailing_zeros() as usize;
                        any &= any - 1;
                        if self.d(v, l).fetch_min_nonnegative(best[l]) {
                            improved |= 1 << l;
                        }
                    }
                    if improved != 0 {
                        self.next[v as usize].store(improved, Ordering::Relaxed);
                        out.push(v);
                    }
                }
            }
            Mode::Sparse => {
                let adj = g.out();
                for &u in active {
                    let offer = self.cur[u as usize].load(Ordering::Relaxed);
                    if offer == 0 {
                        continue;
                    }
                    let mut du = [0.0f64; MAX_LANES];
                    let mut m = offer;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        du[l] = self.d(u, l).load();
                    }
                    let ws = adj.weights(u).unwrap_or(&[]);
                    for (&v, &w) in adj.neighbors(u).iter().zip(ws) {
                        let mut improved = 0u64;
                        let mut m = offer;
                        while m != 0 {
                            let l = m.trailing_zeros() as usize;
                            m &= m - 1;
                            if self.d(v, l).fetch_min_nonnegative(du[l] + w) {
                                improved |= 1 << l;
                            }
                        }
                        if improved != 0
                            && self.next[v as usize].fetch_or(improved, Ordering::Relaxed) == 0
                        {
                            out.push(v);
                        }
                    }
                }
            }
        }
    }

    fn end_step(&mut self, _g: &Graph, activated: Vec<VertexId>) {
        // Each improved vertex goes into its lanes' buckets.
        let next = &self.next;
        let masks: Vec<u64> = activated
            .par_iter()
            .map(|&v| next[v as usize].swap(0, Ordering::Relaxed))
            .collect();
        for l in 0..MAX_LANES {
            let Some(lane) = &self.lanes[l] else { continue };
            let delta = lane.delta;
            let dist = &self.dist;
            let moved: Vec<(u64, VertexId)> = activated
                .par_iter()
                .zip(masks.par_iter())
                .filter(|(_, &m)| m & (1 << l) != 0)
                .map(|(&v, _)| (bucket(dist[v as usize * MAX_LANES + l].load(), delta), v))
                .collect();
            if let Some(lane) = self.lanes[l].as_mut() {
                for (b, v) in moved {
                    lane.buckets.entry(b).or_default().push(v);
                }
            }
        }
    }

    fn cancelled(&self) -> bool {
        self.lanes
            .iter()
            .flatten()
            .all(|l| l.job.cancel_requested())
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        self.lanes
            .iter()
            .flatten()
            .map(|l| Arc::clone(&l.job))
            .collect()
    }

    fn state_bytes(&self) -> u64 {
        (8 * MAX_LANES as u64 + 16) * self.n as u64
    }

    fn join(&mut self, _g: &Graph, job: &Arc<JobShared>) -> bool {
        let Some(Resolved::Sssp { source, delta }) = job.resolved else {
            return false;
        };
        let Some(l) = self.lanes.iter().position(Option::is_none) else {
            return false;
        };
        self.d(source, l).store(0.0);
        let mut buckets = BTreeMap::new();
        buckets.insert(0, vec![source]);
        self.lanes[l] = Some(Lane {
            job: Arc::clone(job),
            source,
            delta,
            buckets,
            iterations: 0,
        });
        job.set_state_bytes(self.lane_bytes());
        true
    }
}
