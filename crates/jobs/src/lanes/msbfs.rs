//! Multi-source BFS: up to 64 BFS jobs as the bit lanes of one traversal
//! (MS-BFS, Then et al., "The more the merrier: efficient multi-source
//! graph traversal", VLDB 2014).
//!
//! Per vertex: `seen` (lanes that reached it), `cur` (lanes whose frontier
//! holds it), `next` (lanes that reach it in this superstep), one `u64`
//! each; per lane: depth and parent arrays and its own level. One pass over
//! an edge serves every lane: pushing, an active `u` offers `cur[u]` to each
//! out-neighbour at once; pulling, an unvisited `v` ORs `cur[u]` of its
//! in-neighbours and stops as soon as every lane it still wants has a hit.
//! The first lane bit to reach `v` records `u` as the lane's parent and the
//! lane's level as the depth, so depths are exactly BFS's (the level at
//! which a lane's frontier first touches `v`); parents are valid
//! (`bfs::verify` holds), as in the engine, where they also vary.
//!
//! Lanes are independent: each has its own level, so a BFS submitted later
//! joins at a superstep boundary at level 0 beside lanes at level 6. A lane
//! ends when its frontier is empty (its `iterations` is then the engine's);
//! the group chooses push or pull for the union frontier by Ligra's rule.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use plexus_engine::edge_map::{default_threshold, Mode};
use plexus_engine::subset::bit;
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::job::JobShared;
use crate::lanes::union_bitmap;
use crate::output::{JobOutput, Values, UNREACHED};
use crate::scan::{ChunkPlan, Plan, ScanChunk, ScanTask};
use crate::spec::Resolved;

/// Lanes per group (bits of a `u64`). A lane slot is used once.
pub const MAX_LANES: usize = 64;

struct Lane {
    job: Arc<JobShared>,
    depth: Vec<AtomicU32>,
    parent: Vec<AtomicU32>,
    /// Depth given to vertices reached in the current superstep.
    level: u32,
}

/// Up to 64 BFS jobs fused into one bit-parallel traversal.
pub struct MsBfs {
    n: usize,
    seen: Vec<AtomicU64>,
    cur: Vec<AtomicU64>,
    next: Vec<AtomicU64>,
    /// The union frontier, sorted and distinct.
    front: Vec<VertexId>,
    /// Lane slots by bit; `None` once ended (or never used).
    lanes: Vec<Option<Lane>>,
    /// Lanes with a non-empty frontier.
    live: u64,
    mode: Mode,
    /// Dense steps: the union frontier as a bitmap (one bit test per
    /// in-neighbour instead of a load of `cur`).
    bits: Vec<u64>,
}

impl MsBfs {
    /// An empty group on a graph of `n` vertices.
    pub fn new(n: usize) -> Self {
        MsBfs {
            n,
            seen: (0..n).map(|_| AtomicU64::new(0)).collect(),
            cur: (0..n).map(|_| AtomicU64::new(0)).collect(),
            next: (0..n).map(|_| AtomicU64::new(0)).collect(),
            front: Vec::new(),
            lanes: Vec::new(),
            live: 0,
            mode: Mode::Sparse,
            bits: Vec::new(),
        }
    }

    /// Adds a BFS job as a new lane (at a superstep boundary); `false` when
    /// the group has no free lane slot or the job is not a BFS.
    pub(crate) fn add(&mut self, job: &Arc<JobShared>) -> bool {
        let Some(Resolved::Bfs { source }) = job.resolved else {
            return false;
        };
        if self.lanes.len() >= MAX_LANES {
            return false;
        }
        let bit = self.lanes.len();
        let n = self.n;
        let lane = Lane {
            job: Arc::clone(job),
            depth: (0..n).map(|_| AtomicU32::new(UNREACHED)).collect(),
            parent: (0..n).map(|_| AtomicU32::new(UNREACHED)).collect(),
            level: 0,
        };
        let s = source as usize;
        lane.depth[s].store(0, Ordering::Relaxed);
        lane.parent[s].store(source, Ordering::Relaxed);
        self.seen[s].fetch_or(1 << bit, Ordering::Relaxed);
        self.cur[s].fetch_or(1 << bit, Ordering::Relaxed);
        if let Err(i) = self.front.binary_search(&source) {
            self.front.insert(i, source);
        }
        self.lanes.push(Some(lane));
        self.live |= 1 << bit;
        job.set_state_bytes(self.lane_bytes());
        true
    }

    fn lane_bytes(&self) -> u64 {
        // depth + parent, plus an even share of the three masks.
        let n = self.n as u64;
        let lanes = self.lanes.iter().flatten().count().max(1) as u64;
        8 * n + 24 * n / lanes
    }

    fn end_lane(&mut self, bit: usize, outcome: Option<crate::error::JobError>) {
        let Some(lane) = self.lanes[bit].take() else {
            return;
        };
        self.live &= !(1 << bit);
        match outcome {
            Some(e) => lane.job.finish(Err(e)),
            None => {
                let un = |v: Vec<AtomicU32>| -> Vec<u32> {
                    v.into_par_iter().map(AtomicU32::into_inner).collect()
                };
                let iterations = lane.level as usize;
                let values = Values::Bfs {
                    depth: un(lane.depth),
                    parent: un(lane.parent),
                    iterations,
                };
                lane.job.finish(Ok(JobOutput {
                    snapshot: Arc::clone(&lane.job.snapshot),
                    values,
                }));
            }
        }
    }

    /// Per-lane frontier sizes.
    fn lane_counts(&self) -> [u64; MAX_LANES] {
        self.front
            .par_iter()
            .with_min_len(4096)
            .fold(
                || [0u64; MAX_LANES],
                |mut acc, &v| {
                    let mut m = self.cur[v as usize].load(Ordering::Relaxed);
                    while m != 0 {
                        acc[m.trailing_zeros() as usize] += 1;
                        m &= m - 1;
                    }
                    acc
                },
            )
            .reduce(
                || [0u64; MAX_LANES],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        *x += y;
                    }
                    a
                },
            )
    }

    /// Records the lanes in `found` reaching `v` from `u`.
    #[inline]
    fn claim(&self, mut found: u64, u: VertexId, v: VertexId) {
        while found != 0 {
            let b = found.trailing_zeros() as usize;
            found &= found - 1;
            if let Some(l) = &self.lanes[b] {
                l.parent[v as usize].store(u, Ordering::Relaxed);
                l.depth[v as usize].store(l.level, Ordering::Relaxed);
            }
        }
    }
}

impl ScanTask for MsBfs {
    fn plan(&mut self, g: &Graph) -> Plan {
        for bit in 0..self.lanes.len() {
            if let Some(e) = self.lanes[bit].as_ref().and_then(|l| l.job.stop_reason()) {
                self.end_lane(bit, Some(e));
            }
        }
        let counts = self.lane_counts();
        for (bit, &count) in counts.iter().enumerate().take(self.lanes.len()) {
            if self.lanes[bit].is_some() && count == 0 {
                self.end_lane(bit, None);
            }
        }
        if self.live == 0 {
            return Plan::Done;
        }
        let edges: u64 = self
            .front
            .par_iter()
            .with_min_len(1024)
            .map(|&v| g.out_degree(v) as u64)
            .sum();
        self.mode = if self.front.len() as u64 + edges > default_threshold(g) {
            Mode::Dense
        } else {
            Mode::Sparse
        };
        self.bits = match self.mode {
            Mode::Dense => union_bitmap(self.n, &self.front),
            Mode::Sparse => Vec::new(),
        };
        let share = self.lane_bytes();
        for (bit, lane) in self.lanes.iter_mut().enumerate() {
            if let Some(l) = lane {
                l.level += 1;
                l.job.mark_running();
                l.job.record_step(counts[bit], edges);
                l.job.set_state_bytes(share);
            }
        }
        Plan::Chunks(ChunkPlan {
            mode: self.mode,
            symmetric: false,
            weights: false,
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
        let live = self.live;
        match self.mode {
            Mode::Dense => {
                let inc = g.inc();
                for v in chunk.vertices() {
                    let want = live & !self.seen[v as usize].load(Ordering::Relaxed);
                    if want == 0 {
                        continue;
                    }
                    let mut found = 0u64;
                    for &u in inc.neighbors(v) {
                        if !bit(&self.bits, u) {
                            continue;
                        }
                        let hit = self.cur[u as usize].load(Ordering::Relaxed) & want & !found;
                        if hit != 0 {
                            self.claim(hit, u, v);
                            found |= hit;
                            if found == want {
                                break;
                            }
                        }
                    }
                    if found != 0 {
                        self.next[v as usize].store(found, Ordering::Relaxed);
                        out.push(v);
                    }
                }
            }
            Mode::Sparse => {
                let adj = g.out();
                for &u in active {
                    let offer = self.cur[u as usize].load(Ordering::Relaxed) & live;
                    if offer == 0 {
                        continue;
                    }
                    for &v in adj.neighbors(u) {
                        let cand = offer & !self.seen[v as usize].load(Ordering::Relaxed);
                        if cand == 0 {
                            continue;
                        }
                        let old = self.next[v as usize].fetch_or(cand, Ordering::Relaxed);
                        let fresh = cand & !old;
                        if fresh != 0 {
                            self.claim(fresh, u, v);
                        }
                        if old == 0 {
                            out.push(v);
                        }
                    }
                }
            }
        }
    }

    fn end_step(&mut self, _g: &Graph, mut activated: Vec<VertexId>) {
        // Activated ids are distinct (one push per vertex whose `next` was 0).
        activated.par_sort_unstable();
        let (seen, cur, next) = (&self.seen, &self.cur, &self.next);
        self.front
            .par_iter()
            .with_min_len(1024)
            .for_each(|&v| cur[v as usize].store(0, Ordering::Relaxed));
        activated.par_iter().with_min_len(1024).for_each(|&v| {
            let m = next[v as usize].swap(0, Ordering::Relaxed);
            seen[v as usize].fetch_or(m, Ordering::Relaxed);
            cur[v as usize].store(m, Ordering::Relaxed);
        });
        self.front = activated;
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
        let n = self.n as u64;
        24 * n + 8 * n * self.lanes.iter().flatten().count() as u64
    }

    fn join(&mut self, _g: &Graph, job: &Arc<JobShared>) -> bool {
        self.add(job)
    }
}
