//! PageRank variants fused into one k-wide traversal: up to
//! [`MAX_LANES`] PageRank jobs (different damping, personalisation,
//! stopping rules) hold their ranks side by side, `k` values per vertex,
//! so one read of an in-edge `u → v` and of `u`'s row of contributions
//! serves all of them.
//!
//! Each lane follows `algo::pagerank` operation for operation: the same
//! start (`1/|V|`), contributions `PR(u)/outdeg(u)`, dangling mass and L1
//! change by the engine's `deterministic_sum`, per-vertex sums in CSC order,
//! the same elimination of isolated vertices (`pagerank::Isolated`) and the
//! same update formula (`pagerank::Step`), so a lane's ranks are bit-identical to the
//! engine's and its iteration count and `converged` flag equal. Lanes
//! advance one iteration per superstep and stop on their own rules; a lane
//! that ends leaves the group (the rows are compacted), a job that arrives
//! joins at the next boundary with its own iteration count at 0.
//!
//! **Precision.** A group holds jobs of one [`pagerank::Precision`]: rows
//! of f64 contributions, or of f32 for `Single` jobs, exactly as the engine
//! stores them, so the ranks stay bit-identical in both. A row of 16 lanes
//! is then one 64-byte line instead of two. A job of the other precision
//! starts a group of its own (both groups share the chunk scan).
//!
//! Identical jobs share a lane: a job whose configuration equals a lane's
//! (same damping, personalisation and stopping rule) becomes that lane's
//! twin and gets the lane's result, which is the one it would compute on
//! its own (the iteration is deterministic from its start at `1/|V|`), even
//! when it arrives after the lane started. A twin holds no state of its own;
//! cancelling it leaves the lane to the others.
use std::sync::Arc;

use plexus_engine::algo::pagerank;
use plexus_engine::program::AtomicF64;
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::job::JobShared;
use crate::output::{JobOutput, Values};
use crate::scan::{ChunkPlan, Plan, ScanChunk, ScanTask};
use crate::spec::Resolved;

/// Most lanes in one group.
pub const MAX_LANES: usize = 16;

/// One 64-byte cache line of contributions (the alignment is the point).
#[repr(C, align(64))]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Line([f64; 8]);

/// A stored contribution `PR(u)/outdeg(u)` in a row: f64, or f32 for the
/// engine's [`pagerank::Precision::Single`] (a row of 16 lanes is then one
/// cache line instead of two).
pub(crate) trait Elem: bytemuck::Pod + Send + Sync + 'static {
    /// Lanes in one 64-byte line.
    const PER_LINE: usize;
    fn put(x: f64) -> Self;
    fn get(self) -> f64;
}

impl Elem for f64 {
    const PER_LINE: usize = 8;
    #[inline(always)]
    fn put(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn get(self) -> f64 {
        self
    }
}

impl Elem for f32 {
    const PER_LINE: usize = 16;
    #[inline(always)]
    fn put(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn get(self) -> f64 {
        f64::from(self)
    }
}

/// The teleport vector of a lane: uniform, or uniform over sources.
#[derive(Debug)]
enum Teleport {
    Uniform(f64),
    Sources { member: Vec<bool>, share: f64 },
}

impl Teleport {
    #[inline]
    fn at(&self, v: usize) -> f64 {
        match self {
            Teleport::Uniform(x) => *x,
            Teleport::Sources { member, share } => {
                if member[v] {
                    *share
                } else {
                    0.0
                }
            }
        }
    }
}

struct Lane {
    job: Arc<JobShared>,
    /// Jobs with the same configuration, served by this lane.
    twins: Vec<Arc<JobShared>>,
    cfg: pagerank::Config,
    teleport: Teleport,
    iterations: usize,
    converged: bool,
    /// The engine's elimination of isolated vertices, when it applies.
    isolated: Option<pagerank::Isolated>,
    /// The current iteration's substitution (dangling mass and, with
    /// `isolated`, the rescaling), as the engine computes it.
    step: pagerank::Step,
}

impl Lane {
    /// The substitution for the next iteration, from the lane's sums over
    /// the iterate: all dangling vertices, and (for the elimination) the
    /// vertices with edges and the dangling ones among them.
    fn set_step(&mut self, dangling: f64, rest_mass: f64, rest_dangling: f64) {
        self.step = match self.isolated {
            None => pagerank::Step::plain(dangling),
            Some(iso) => iso.step(self.cfg.damping, rest_dangling, rest_mass),
        };
    }
}

/// Adds vertex `v`'s value `x` in one lane to the lane's three sums at
/// `acc[0]`, `acc[k]` and `acc[2k]`: dangling, mass off isolated vertices,
/// dangling mass off isolated vertices (`lone`: `v` is isolated).
#[inline]
fn add_sums(acc: &mut [f64], k: usize, x: f64, dangling: bool, lone: bool) {
    if dangling {
        acc[0] += x;
        if !lone {
            acc[2 * k] += x;
        }
    }
    if !lone {
        acc[k] += x;
    }
}

impl Lane {
    fn limit(&self) -> usize {
        self.cfg.iterations.unwrap_or(self.cfg.max_iterations)
    }
    fn finished(&self) -> bool {
        self.iterations >= self.limit() || (self.converged && self.cfg.iterations.is_none())
    }
    /// The lane's job and its twins.
    fn all_jobs(&self) -> impl Iterator<Item = &Arc<JobShared>> {
        std::iter::once(&self.job).chain(&self.twins)
    }
    /// Ends the jobs that were cancelled or passed their deadline; `false`
    /// when none is left (a twin takes the place of a stopped first job).
    fn drop_stopped(&mut self) -> bool {
        self.twins.retain(|t| match t.stop_reason() {
            Some(e) => {
                t.finish(Err(e));
                false
            }
            None => true,
        });
        if let Some(e) = self.job.stop_reason() {
            self.job.finish(Err(e));
            if self.twins.is_empty() {
                return false;
            }
            self.job = self.twins.remove(0);
        }
        true
    }
}

/// Up to [`MAX_LANES`] PageRank jobs in one k-wide power iteration.
pub struct PageRankLanes {
    n: usize,
    lanes: Vec<Lane>,
    /// `rank[v·k + l]`: lane `l`'s rank of `v` (previous iteration).
    rank: Vec<f64>,
    /// `contrib[u·s + l] = rank / outdeg(u)` (0 for dangling `u`), in rows
    /// of stride `s` = [`PageRankLanes::stride`] (`k` rounded up to a power
    /// of two, padding zero) in 64-byte aligned lines, so a row never
    /// straddles more cache lines than it fills.
    contrib: Vec<Line>,
    /// The ranks being computed.
    next: Vec<AtomicF64>,
    /// Lanes that joined since the last superstep; added at the next plan
    /// in one reshape.
    pending: Vec<Lane>,
    /// Whether `contrib` and the lanes' dangling masses match `rank` (the
    /// end of a superstep computes them in its pass; a reshape clears it).
    fresh: bool,
    /// Contributions stored in f32 (`Precision::Single` jobs), else f64.
    single: bool,
}

impl PageRankLanes {
    /// An empty group on a graph of `n` vertices for jobs of `precision`
    /// (a job of the other precision starts a group of its own).
    pub fn new(n: usize, precision: pagerank::Precision) -> Self {
        PageRankLanes {
            n,
            lanes: Vec::new(),
            rank: Vec::new(),
            contrib: Vec::new(),
            next: Vec::new(),
            pending: Vec::new(),
            fresh: false,
            single: precision == pagerank::Precision::Single,
        }
    }

    fn width(&self) -> usize {
        self.lanes.len()
    }

    /// The row stride of `contrib`: the width rounded up to a power of two.
    fn stride(&self) -> usize {
        self.width().next_power_of_two()
    }

    fn contrib<T: Elem>(&self) -> &[T] {
        bytemuck::cast_slice(&self.contrib)
    }

    /// Rebuilds the rows keeping the lanes for which `keep` is true, then
    /// appending `added` lanes starting at `1/|V|`.
    fn reshape(&mut self, keep: &[bool], added: Vec<Lane>) {
        let n = self.n;
        let old_k = self.width();
        let kept: Vec<usize> = (0..old_k).filter(|&l| keep[l]).collect();
        let new_k = kept.len() + added.len();
        let start = 1.0 / n as f64;
        // Filled in parallel (16 lanes of kron22: 537 MB).
        let mut rank = plexus_engine::hugepages::filled(n * new_k, start);
        if new_k > 0 && !kept.is_empty() {
            let old = &self.rank;
            rank.par_chunks_mut(new_k).enumerate().for_each(|(v, row)| {
                for (j, &l) in kept.iter().enumerate() {
                    row[j] = old[v * old_k + l];
                }
            });
        }
        let mut lanes: Vec<Lane> = Vec::with_capacity(new_k);
        for (l, lane) in std::mem::take(&mut self.lanes).into_iter().enumerate() {
            if keep[l] {
                lanes.push(lane);
            }
        }
        lanes.extend(added);
        self.lanes = lanes;
        self.rank = rank;
        self.contrib = Vec::new();
        self.next = Vec::new();
        self.fresh = false;
        let share = self.lane_bytes();
        for l in &self.lanes {
            l.job.set_state_bytes(share);
        }
    }

    /// A lane's rank and next value (f64) and contribution (f64 or f32).
    fn lane_bytes(&self) -> u64 {
        (if self.single { 20 } else { 24 }) * self.n as u64
    }

    fn make_lane(&self, g: &Graph, job: &Arc<JobShared>) -> Option<Lane> {
        let Some(Resolved::PageRank(cfg)) = &job.resolved else {
            return None;
        };
        let n = g.num_vertices();
        let teleport = match &cfg.personalization {
            None => Teleport::Uniform(1.0 / n as f64),
            Some(sources) => {
                let mut member = vec![false; n];
                let mut k = 0usize;
                for &s in sources {
                    if let Some(m) = member.get_mut(s as usize) {
                        if !*m {
                            *m = true;
                            k += 1;
                        }
                    }
                }
                Teleport::Sources {
                    member,
                    share: 1.0 / k.max(1) as f64,
                }
            }
        };
        Some(Lane {
            job: Arc::clone(job),
            twins: Vec::new(),
            isolated: pagerank::Isolated::of(g, cfg),
            cfg: cfg.clone(),
            teleport,
            iterations: 0,
            converged: false,
            step: pagerank::Step::plain(0.0),
        })
    }

    /// Hands each lane of `ls` its ranks (and its twins theirs), in one
    /// pass over the rows: per block of vertices, every ending lane copies
    /// its column while the block's rows are in the cache (one lane at a
    /// time would read all the rows once per lane).
    fn deliver(&self, g: &Graph, ls: &[usize]) {
        const BLOCK: usize = 4096;
        let (n, k) = (g.num_vertices(), self.width());
        let mut outs: Vec<Vec<f64>> = ls.iter().map(|_| vec![0.0; n]).collect();
        let mut blocks: Vec<Vec<&mut [f64]>> = (0..n.div_ceil(BLOCK))
            .map(|_| Vec::with_capacity(ls.len()))
            .collect();
        for out in outs.iter_mut() {
            for (b, part) in out.chunks_mut(BLOCK).enumerate() {
                blocks[b].push(part);
            }
        }
        let rank = &self.rank;
        blocks.into_par_iter().enumerate().for_each(|(b, parts)| {
            for (part, &l) in parts.into_iter().zip(ls) {
                for (j, x) in part.iter_mut().enumerate() {
                    *x = rank[(b * BLOCK + j) * k + l];
                }
            }
        });
        for (rank, &l) in outs.into_iter().zip(ls) {
            let lane = &self.lanes[l];
            let values = Values::PageRank {
                rank,
                iterations: lane.iterations,
                converged: lane.converged,
            };
            for twin in &lane.twins {
                twin.finish(Ok(JobOutput {
                    snapshot: Arc::clone(&twin.snapshot),
                    values: values.clone(),
                }));
            }
            lane.job.finish(Ok(JobOutput {
                snapshot: Arc::clone(&lane.job.snapshot),
                values,
            }));
        }
    }
}

/// Vertices per block of [`lane_sums`]: the engine's
/// `program::deterministic_sum` block, so sums are bit-identical to it.
pub(crate) const SUM_BLOCK: usize = 1024;

/// How many edges ahead the pull asks for a contribution row.
pub(crate) const PREFETCH_AHEAD: usize = 32;

/// Asks the cache for every 64-byte line of `rows[at..at + K]`.
#[inline(always)]
fn prefetch_row<T: Elem, const K: usize>(rows: &[T], at: usize) {
    for line in 0..K.div_ceil(T::PER_LINE) {
        plexus_engine::prefetch::prefetch(rows, at + line * T::PER_LINE);
    }
}

/// `k` sums over the vertices `0..n` in one pass, each with exactly the
/// arithmetic of the engine's `deterministic_sum` (fixed 1024-vertex
/// blocks summed in vertex order from 0, then the block sums in block
/// order): `add(v, acc)` adds vertex `v`'s terms to the `k` accumulators.
fn lane_sums(n: usize, k: usize, add: impl Fn(usize, &mut [f64]) + Sync) -> Vec<f64> {
    let blocks: Vec<Vec<f64>> = (0..n.div_ceil(SUM_BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut acc = vec![0.0f64; k];
            for v in b * SUM_BLOCK..((b + 1) * SUM_BLOCK).min(n) {
                add(v, &mut acc);
            }
            acc
        })
        .collect();
    (0..k).map(|l| blocks.iter().map(|b| b[l]).sum()).collect()
}

impl PageRankLanes {
    /// The dense step over `chunk` for rows of stride `K`: per vertex, the
    /// `K` sums over its in-edges in CSC order (one row of contributions per
    /// in-neighbour; padding lanes add zeros), then each lane's update.
    fn pull<T: Elem, const K: usize>(&self, g: &Graph, chunk: &ScanChunk) {
        let inc = g.inc();
        let contrib = self.contrib::<T>();
        let k = self.width();
        let offs = inc.offsets();
        let (s, e) = (chunk.start as usize, chunk.end as usize);
        let first = offs[s] as usize;
        // The chunk's in-edges, contiguous in CSC order.
        let sources = &inc.neighbor_array()[first..offs[e] as usize];
        let mut i = 0;
        for v in s..e {
            let stop = offs[v + 1] as usize - first;
            let mut acc = [0.0f64; K];
            while i < stop {
                // The rows are read in random order and miss the cache once
                // k·8 bytes per vertex outgrow it: ask for the row
                // PREFETCH_AHEAD edges on (across vertex boundaries) now.
                if let Some(&w) = sources.get(i + PREFETCH_AHEAD) {
                    prefetch_row::<T, K>(contrib, w as usize * K);
                }
                let u = sources[i] as usize;
                let row = &contrib[u * K..u * K + K];
                for (a, c) in acc.iter_mut().zip(row) {
                    *a += c.get();
                }
                i += 1;
            }
            self.apply(v, &acc[..k]);
        }
    }

    /// [`PageRankLanes::pull`] for the group's row stride.
    fn pull_k<T: Elem>(&self, g: &Graph, chunk: &ScanChunk) {
        match self.stride() {
            1 => self.pull::<T, 1>(g, chunk),
            2 => self.pull::<T, 2>(g, chunk),
            4 => self.pull::<T, 4>(g, chunk),
            8 => self.pull::<T, 8>(g, chunk),
            _ => self.pull::<T, 16>(g, chunk),
        }
    }

    /// Fills the rows of contributions from `rank` (rows of stride
    /// [`PageRankLanes::stride`], padding zero).
    fn fill_rows<T: Elem>(&mut self, g: &Graph) {
        let (n, k, stride) = (self.n, self.width(), self.stride());
        let mut contrib = std::mem::take(&mut self.contrib);
        let lines = (n * stride).div_ceil(T::PER_LINE);
        if contrib.capacity() < lines {
            // Rows are read in random order: huge pages spare a page
            // walk per miss (plexus_engine::hugepages).
            contrib = plexus_engine::hugepages::filled(lines, Line::default());
        } else {
            contrib.clear();
            contrib.resize(lines, Line::default());
        }
        let rank = &self.rank;
        let rows: &mut [T] = bytemuck::cast_slice_mut(&mut contrib);
        rows[..n * stride]
            .par_chunks_mut(stride)
            .enumerate()
            .for_each(|(u, row)| {
                let row = &mut row[..k];
                let deg = g.out_degree(u as VertexId);
                for (l, c) in row.iter_mut().enumerate() {
                    *c = T::put(if deg == 0 {
                        0.0
                    } else {
                        rank[u * k + l] / deg as f64
                    });
                }
            });
        self.contrib = contrib;
    }

    /// The end of a superstep with rows of `T` (see [`ScanTask::end_step`]).
    fn end_step_rows<T: Elem>(&mut self, g: &Graph) {
        // One pass over fixed blocks: each lane's change (for its stopping
        // rule), the new ranks, and for the next iteration the contributions
        // and dangling masses, all with the engine's summation order.
        let (n, k, stride) = (self.n, self.width(), self.stride());
        let next = &self.next;
        let lanes = &self.lanes;
        let rows: &mut [T] = bytemuck::cast_slice_mut(&mut self.contrib);
        let per_block: Vec<(Vec<f64>, Vec<f64>)> = self
            .rank
            .par_chunks_mut(SUM_BLOCK * k)
            .zip(rows.par_chunks_mut(SUM_BLOCK * stride))
            .enumerate()
            .map(|(b, (ranks, contribs))| {
                let mut change = vec![0.0f64; k];
                // Per lane: dangling, rest mass, rest dangling (`add_sums`).
                let mut sums = vec![0.0f64; 3 * k];
                let first = b * SUM_BLOCK;
                for (j, (r_row, c_row)) in ranks
                    .chunks_exact_mut(k)
                    .zip(contribs.chunks_exact_mut(stride))
                    .enumerate()
                {
                    let v = first + j;
                    let deg = g.out_degree(v as VertexId);
                    let lone = pagerank::Isolated::is_isolated(g, v as VertexId);
                    for (l, lane) in lanes.iter().enumerate() {
                        let nv = next[v * k + l].load();
                        // The teleport is only read for an isolated vertex.
                        let t = if lone { lane.teleport.at(v) } else { 0.0 };
                        let prior = lane.step.prior(lone, r_row[l], t);
                        change[l] += (nv - prior).abs();
                        r_row[l] = nv;
                        add_sums(&mut sums[l..], k, nv, deg == 0, lone);
                        c_row[l] = T::put(if deg == 0 { 0.0 } else { nv / deg as f64 });
                    }
                }
                (change, sums)
            })
            .collect();
        for (l, lane) in self.lanes.iter_mut().enumerate() {
            let change: f64 = per_block.iter().map(|b| b.0[l]).sum();
            let sum = |i: usize| per_block.iter().map(|b| b.1[i]).sum::<f64>();
            lane.set_step(sum(l), sum(k + l), sum(2 * k + l));
            lane.iterations += 1;
            lane.converged = change < n as f64 * lane.cfg.tolerance;
        }
        self.fresh = true;
    }

    /// `PR'(v) = d·(scale·sum + dangling·t(v)) + (1 − d)·t(v)` for every
    /// lane (`pagerank::Step::update`).
    #[inline]
    fn apply(&self, v: usize, sums: &[f64]) {
        let k = sums.len();
        for ((lane, &sum), next) in self
            .lanes
            .iter()
            .zip(sums)
            .zip(&self.next[v * k..v * k + k])
        {
            let t = lane.teleport.at(v);
            next.store(lane.step.update(lane.cfg.damping, sum, t));
        }
    }
}

impl ScanTask for PageRankLanes {
    fn plan(&mut self, g: &Graph) -> Plan {
        // Lanes that end here: cancelled, past their deadline, or finished.
        let mut keep = vec![true; self.width()];
        let mut ending = Vec::new();
        for (l, kept) in keep.iter_mut().enumerate() {
            if !self.lanes[l].drop_stopped() {
                *kept = false;
            } else if self.lanes[l].finished() {
                ending.push(l);
                *kept = false;
            }
        }
        if !ending.is_empty() {
            self.deliver(g, &ending);
        }
        let pending = std::mem::take(&mut self.pending);
        let pending: Vec<Lane> = pending
            .into_iter()
            .filter_map(|mut lane| lane.drop_stopped().then_some(lane))
            .collect();
        if keep.iter().any(|&x| !x) || !pending.is_empty() {
            self.reshape(&keep, pending);
        }
        if self.lanes.is_empty() {
            return Plan::Done;
        }
        // A twin promoted in place of a stopped first job holds the lane now.
        let share = self.lane_bytes();
        for lane in &self.lanes {
            lane.job.set_state_bytes(share);
        }
        let (n, k) = (self.n, self.width());
        if !self.fresh {
            // Vertex step: contributions, then each lane's dangling mass.
            if self.single {
                self.fill_rows::<f32>(g);
            } else {
                self.fill_rows::<f64>(g);
            }
            let rank = &self.rank;
            let sums = lane_sums(n, 3 * k, |u, acc| {
                let dangling = g.out_degree(u as VertexId) == 0;
                let lone = pagerank::Isolated::is_isolated(g, u as VertexId);
                for (l, &r) in rank[u * k..u * k + k].iter().enumerate() {
                    add_sums(&mut acc[l..], k, r, dangling, lone);
                }
            });
            for (l, lane) in self.lanes.iter_mut().enumerate() {
                lane.set_step(sums[l], sums[k + l], sums[2 * k + l]);
            }
            self.fresh = true;
        }
        if self.next.len() != n * k {
            self.next = plexus_engine::hugepages::from_fn(n * k, |_| AtomicF64::new(0.0));
        }
        for job in self.lanes.iter().flat_map(Lane::all_jobs) {
            job.mark_running();
            job.record_step(n as u64, g.num_arcs());
        }
        Plan::Chunks(ChunkPlan::dense(false))
    }

    fn run_chunk(
        &self,
        g: &Graph,
        chunk: &ScanChunk,
        _active: &[VertexId],
        _out: &mut Vec<VertexId>,
    ) {
        for job in self.lanes.iter().flat_map(Lane::all_jobs) {
            job.maybe_fault();
        }
        if self.single {
            self.pull_k::<f32>(g, chunk)
        } else {
            self.pull_k::<f64>(g, chunk)
        }
    }

    fn end_step(&mut self, g: &Graph, _activated: Vec<VertexId>) {
        if self.single {
            self.end_step_rows::<f32>(g);
        } else {
            self.end_step_rows::<f64>(g);
        }
    }

    fn cancelled(&self) -> bool {
        self.lanes
            .iter()
            .flat_map(Lane::all_jobs)
            .all(|j| j.cancel_requested())
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        self.lanes
            .iter()
            .chain(&self.pending)
            .flat_map(Lane::all_jobs)
            .cloned()
            .collect()
    }

    fn state_bytes(&self) -> u64 {
        self.lane_bytes() * self.width() as u64
    }

    fn gathered_bytes(&self) -> u64 {
        // The pull reads a row of contributions per source id.
        let elem = if self.single { 4 } else { 8 };
        elem * self.stride() as u64 * self.n as u64
    }

    fn join(&mut self, g: &Graph, job: &Arc<JobShared>) -> bool {
        if let Some(Resolved::PageRank(cfg)) = &job.resolved {
            if (cfg.precision == pagerank::Precision::Single) != self.single {
                return false;
            }
            if let Some(lane) = self
                .lanes
                .iter_mut()
                .chain(&mut self.pending)
                .find(|l| l.cfg == *cfg)
            {
                job.set_state_bytes(0);
                lane.twins.push(Arc::clone(job));
                return true;
            }
        }
        if self.width() + self.pending.len() >= MAX_LANES {
            return false;
        }
        match self.make_lane(g, job) {
            Some(lane) => {
                job.set_state_bytes(self.lane_bytes());
                self.pending.push(lane);
                true
            }
            None => false,
        }
    }
}
