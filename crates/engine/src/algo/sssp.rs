//! Single-source shortest paths on non-negative edge weights.
//!
//! **Returns** [`Output`]: `dist[v]` is the length of a shortest path
//! `source ⇝ v` along out-edges (`f64::INFINITY` when unreachable),
//! `parent[v]` an in-neighbour `u` whose edge completes such a path exactly
//! (`dist[u] + w(u, v) == dist[v]` in `f64`): the smallest such id with
//! `dist[u] < dist[v]`, or, when zero-weight ties leave some vertex without
//! one, the smallest id among those with the fewest hops from the source
//! over such tight edges, so parents always form a tree (the source is its
//! own parent; `u32::MAX` when unreachable), and `iterations` the number of
//! relaxation supersteps. Distances are the minimum over paths of the path
//! length summed left to right in `f64`, so they equal Dijkstra's exactly;
//! parents are a deterministic function of the distances.
//!
//! **Method.** Delta-stepping (Meyer & Sanders, "Δ-stepping: a
//! parallelizable shortest path algorithm", J. Algorithms 2003), bucketed as
//! in GAPBS `sssp.cc` (Beamer et al., 2015): vertices wait in buckets of
//! width `Δ` by tentative distance; the lowest non-empty bucket is relaxed
//! as one frontier, again and again until it stays empty, then the next.
//! Each relaxation round is a superstep of a [`VertexProgram`] (message: a
//! tentative distance; `over_edge` adds the weight; slots take the minimum),
//! pushed or pulled by Ligra's rule. `Δ` defaults to `4 · w̄ / d̄` (mean
//! edge weight over mean out-degree, [`Config::delta`]).
//!
//! **Input.** A weighted graph (integer weights are integral `f64`s) with
//! no negative or NaN weight; `+∞` weights behave as absent edges. Zero
//! weights, self-loops and duplicate edges are fine.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::driver::{drive, Driver};
use crate::edge_map::{edge_map, EdgeFunctor, EdgeMapOptions};
use crate::error::{AlgoError, VerifyError};
use crate::program::{
    AtomicF64, Executor, GraphView, InEdges, StepOptions, VertexProgram, Vertices,
};
use crate::subset::VertexSubset;

/// Sentinel for "no parent".
pub const NO_PARENT: u32 = u32::MAX;
/// Default source vertex (internal id).
pub const DEFAULT_SOURCE: VertexId = 0;
/// Relative tolerance of the verifier's triangle and tightness checks.
pub const VERIFY_EPSILON: f64 = 1e-9;

/// SSSP parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Source vertex (internal id). Default [`DEFAULT_SOURCE`].
    pub source: VertexId,
    /// Bucket width `Δ > 0`, in weight units. `None` (default):
    /// [`default_delta`], `4 · w̄ / d̄` with `w̄` the mean finite edge weight
    /// and `d̄` the mean out-degree (at least 1): Meyer and Sanders' `Θ(1/d)`
    /// for random weights, a middle ground between Dijkstra (`Δ → 0`) and
    /// Bellman–Ford (`Δ → ∞`) that grows with sparsity. The constant 4 is
    /// measured (bench/NOTES.md): on Kronecker scale 22 (weights 1–255,
    /// `d̄` 53.6) it gives Δ ≈ 9.6 where Δ 2–8 run about 2× faster than
    /// the mean weight (128); on USA-road-FLA (`d̄` 2.4) Δ ≈ 213, near the
    /// best measured (256).
    pub delta: Option<f64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            source: DEFAULT_SOURCE,
            delta: None,
        }
    }
}

/// SSSP result, indexed by internal id.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// Shortest-path distance; `f64::INFINITY` when unreachable.
    pub dist: Vec<f64>,
    /// Predecessor on a shortest path (see the module docs); [`NO_PARENT`] when unreachable.
    pub parent: Vec<u32>,
    /// Relaxation supersteps run.
    pub iterations: usize,
}

/// Checks the graph and parameters (source in range, weights present,
/// none negative or NaN, `Δ` finite and > 0) and returns `Δ`: the given one,
/// or [`default_delta`] from the graph's cached weight statistics. Other executors and the job manager
/// call it so that every path applies the same rules.
pub fn prepare(g: &dyn GraphView, cfg: &Config) -> Result<f64, AlgoError> {
    if (cfg.source as usize) >= g.num_vertices() {
        return Err(AlgoError::NoSuchVertex(u64::from(cfg.source)));
    }
    let (true, Some(stats)) = (g.is_weighted(), g.weight_stats()) else {
        return Err(AlgoError::UnsupportedGraph(
            "sssp needs edge weights; import with --weighted".into(),
        ));
    };
    if stats.first_invalid.is_some() {
        let (src, dst, w) = g.first_invalid_arc().unwrap_or((0, 0, f64::NAN));
        if w.is_nan() {
            return Err(AlgoError::UnsupportedGraph(format!(
                "sssp: edge {src} -> {dst} has weight NaN"
            )));
        }
        return Err(AlgoError::NegativeWeight {
            algorithm: "sssp",
            src: u64::from(src),
            dst: u64::from(dst),
            weight: w,
        });
    }
    match cfg.delta {
        Some(d) if d > 0.0 && d.is_finite() => Ok(d),
        Some(d) => Err(AlgoError::InvalidParameter(format!(
            "delta must be a finite number > 0, got {d}"
        ))),
        None => Ok(default_delta(
            stats.finite_sum / stats.finite_count.max(1) as f64,
            g.num_arcs() as f64 / g.num_vertices().max(1) as f64,
        )),
    }
}

/// The default bucket width for mean finite weight `mean_weight` and mean
/// out-degree `mean_degree`: `4 · mean_weight / max(mean_degree, 1)`, or 1.0
/// when that is not a positive finite number (no or zero weights).
pub fn default_delta(mean_weight: f64, mean_degree: f64) -> f64 {
    let d = 4.0 * mean_weight / mean_degree.max(1.0);
    if d > 0.0 && d.is_finite() {
        d
    } else {
        1.0
    }
}

/// The relaxation program: tentative distances, lowered by minimum.
#[derive(Debug)]
pub struct Program {
    dist: Vec<AtomicF64>,
}

impl Program {
    /// All distances infinite but the source's, 0.
    pub fn new(n: usize, source: VertexId) -> Self {
        // Read in the random order of neighbour lists: on huge pages.
        let dist: Vec<AtomicF64> = crate::hugepages::from_fn(n, |_| AtomicF64::new(f64::INFINITY));
        if let Some(d) = dist.get(source as usize) {
            d.store(0.0);
        }
        Program { dist }
    }

    /// The current tentative distance of `v`.
    pub fn dist(&self, v: VertexId) -> f64 {
        self.dist[v as usize].load()
    }
}

impl VertexProgram for Program {
    /// A tentative distance.
    type Msg = f64;

    fn combine(&self, a: f64, b: f64) -> f64 {
        a.min(b)
    }

    fn sparse_signal(&self, src: VertexId) -> Option<f64> {
        Some(self.dist[src as usize].load())
    }

    fn over_edge(&self, d: f64, w: f64) -> f64 {
        d + w
    }

    fn sparse_slot(&self, dst: VertexId, d: f64) -> bool {
        // May return true several times per superstep; the driver deduplicates.
        self.dist[dst as usize].fetch_min_nonnegative(d)
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<f64> {
        edges
            .active()
            .map(|(u, w)| self.dist[u as usize].load() + w)
            .min_by(f64::total_cmp)
    }

    fn dense_slot(&self, v: VertexId, d: f64) -> bool {
        self.dist[v as usize].fetch_min_nonnegative(d)
    }
}

/// The bucket of distance `d` for width `delta` (monotone in `d`,
/// saturating at `u64::MAX - 1`: the kernels use `u64::MAX` for "no
/// bucket", and a far bucket must never look like it).
#[inline]
fn bucket(d: f64, delta: f64) -> u64 {
    ((d / delta) as u64).min(u64::MAX - 1)
}

/// Delta-stepping distances on any executor ([`SsspDriver`] without its
/// parent phases' output).
pub fn distances_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Distances, AlgoError> {
    let out = run_on(exec, cfg)?;
    Ok(Distances {
        dist: out.dist,
        iterations: out.iterations,
    })
}

/// SSSP on any executor through [`SsspDriver`]: the same distances and
/// parents as [`run`], bit for bit.
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, SsspDriver::new(exec.view(), cfg)?)
}

/// The phases of [`SsspDriver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Delta-stepping relaxations.
    Relax,
    /// Each reached vertex takes its smallest in-neighbour over a tight
    /// edge that strictly lowers the distance.
    Parents,
    /// BFS over tight edges (only when some reached vertex found no parent).
    TightHops,
    /// Each reached vertex takes its smallest tight in-neighbour one hop up.
    TightParents,
}

/// Sentinel hop count of [`Paths`]: not reached over tight edges.
const NO_HOP: u32 = u32::MAX;

/// The program of [`SsspDriver`]: delta-stepping relaxations
/// ([`Program`]), then the parent phases of [`parents`] as supersteps.
/// Messages are `f64`: distances while relaxing and in the tight BFS,
/// vertex ids (exact in `f64`) while choosing parents; every phase
/// combines by minimum.
#[derive(Debug)]
pub struct Paths {
    relax: Program,
    parent: Vec<AtomicU32>,
    hop: Vec<AtomicU32>,
    source: VertexId,
    phase: Phase,
    level: u32,
}

impl Paths {
    fn dist(&self, v: VertexId) -> f64 {
        self.relax.dist(v)
    }
}

impl VertexProgram for Paths {
    type Msg = f64;

    fn combine(&self, a: f64, b: f64) -> f64 {
        a.min(b)
    }

    fn cond(&self, v: VertexId) -> bool {
        match self.phase {
            Phase::Relax => true,
            Phase::Parents => v != self.source && self.dist(v) < f64::INFINITY,
            Phase::TightHops => self.hop[v as usize].load(Ordering::Relaxed) == NO_HOP,
            Phase::TightParents => {
                v != self.source && self.hop[v as usize].load(Ordering::Relaxed) != NO_HOP
            }
        }
    }

    fn sparse_signal(&self, src: VertexId) -> Option<f64> {
        match self.phase {
            Phase::Relax => self.relax.sparse_signal(src),
            Phase::TightHops => Some(self.dist(src)),
            // Dense-only phases (the driver forces pull).
            Phase::Parents | Phase::TightParents => None,
        }
    }

    fn over_edge(&self, m: f64, w: f64) -> f64 {
        m + w
    }

    fn sparse_slot(&self, dst: VertexId, m: f64) -> bool {
        match self.phase {
            Phase::Relax => self.relax.sparse_slot(dst, m),
            Phase::TightHops => self.claim_hop(dst, m),
            Phase::Parents | Phase::TightParents => false,
        }
    }

    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<f64> {
        match self.phase {
            Phase::Relax => self.relax.dense_signal(v, edges),
            Phase::TightHops => edges
                .active()
                .map(|(u, w)| self.dist(u) + w)
                .min_by(f64::total_cmp),
            Phase::Parents => {
                let d = self.dist(v);
                edges
                    .iter()
                    .find(|&(u, w)| self.dist(u) < d && self.dist(u) + w == d)
                    .map(|(u, _)| f64::from(u))
            }
            Phase::TightParents => {
                let (d, h) = (self.dist(v), self.hop[v as usize].load(Ordering::Relaxed));
                edges
                    .iter()
                    .find(|&(u, w)| {
                        self.hop[u as usize].load(Ordering::Relaxed).wrapping_add(1) == h
                            && self.dist(u) + w == d
                    })
                    .map(|(u, _)| f64::from(u))
            }
        }
    }

    fn dense_slot(&self, v: VertexId, m: f64) -> bool {
        match self.phase {
            Phase::Relax => self.relax.dense_slot(v, m),
            Phase::TightHops => self.claim_hop(v, m),
            Phase::Parents | Phase::TightParents => {
                self.parent[v as usize].store(m as u32, Ordering::Relaxed);
                false
            }
        }
    }
}

impl Paths {
    /// Tight BFS: `v` joins the current hop level when an offer over a
    /// tight edge arrives (offers are never below `dist[v]`, so the
    /// minimum of several is tight when one of them is).
    fn claim_hop(&self, v: VertexId, offer: f64) -> bool {
        offer == self.dist(v)
            && self.hop[v as usize]
                .compare_exchange(NO_HOP, self.level, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// SSSP as a step machine that any executor runs: delta-stepping (the
/// lowest non-empty bucket of width `Δ` is one frontier, relaxed until it
/// stays empty), then the parents of [`run`] chosen by pull steps (and,
/// across zero-weight ties, a BFS over tight edges), so distances and
/// parents equal [`run`]'s exactly.
#[derive(Debug)]
pub struct SsspDriver {
    p: Paths,
    delta: f64,
    buckets: BTreeMap<u64, Vec<VertexId>>,
    iterations: usize,
    frontier: Option<VertexSubset>,
}

impl SsspDriver {
    /// SSSP from `cfg.source` over a graph seen through `view` (checks the
    /// source, the weights and `Δ` by [`prepare`]).
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let delta = prepare(view, cfg)?;
        let n = view.num_vertices();
        let parent: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(NO_PARENT)).collect();
        parent[cfg.source as usize].store(cfg.source, Ordering::Relaxed);
        let mut buckets = BTreeMap::new();
        buckets.insert(0, vec![cfg.source]);
        Ok(SsspDriver {
            p: Paths {
                relax: Program::new(n, cfg.source),
                parent,
                hop: (0..n).map(|_| AtomicU32::new(NO_HOP)).collect(),
                source: cfg.source,
                phase: Phase::Relax,
                level: 0,
            },
            delta,
            buckets,
            iterations: 0,
            frontier: None,
        })
    }

    /// The next bucket's live members, or `None` when every bucket is empty.
    fn next_bucket<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = self.p.parent.len();
        while let Some((k, ids)) = self.buckets.pop_first() {
            let (p, delta) = (&self.p.relax, self.delta);
            let frontier = VertexSubset::from_ids(n, ids);
            let frontier = ops.process_vertices(&frontier, |v| bucket(p.dist(v), delta) == k);
            if !frontier.is_empty() {
                self.iterations += 1;
                return Some(frontier);
            }
        }
        None
    }
}

impl Driver for SsspDriver {
    type Program = Paths;
    type Output = Output;

    fn program(&self) -> &Paths {
        &self.p
    }

    fn options(&self) -> StepOptions {
        match self.p.phase {
            Phase::Parents | Phase::TightParents => StepOptions {
                direction: crate::edge_map::Direction::Pull,
                ..StepOptions::default()
            },
            Phase::Relax | Phase::TightHops => StepOptions::default(),
        }
    }

    fn reads_weights(&self) -> bool {
        true
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = self.p.parent.len();
        match self.p.phase {
            Phase::Relax => {
                if let Some(f) = self.next_bucket(ops) {
                    return Some(f);
                }
                self.p.phase = Phase::Parents;
                Some(VertexSubset::all(n))
            }
            Phase::Parents => {
                let p = &self.p;
                let orphans = ops.vertex_sum(|v| {
                    let lost =
                        p.cond(v) && p.parent[v as usize].load(Ordering::Relaxed) == NO_PARENT;
                    f64::from(u8::from(lost))
                });
                if orphans == 0.0 {
                    return None;
                }
                self.p.phase = Phase::TightHops;
                self.p.hop[self.p.source as usize].store(0, Ordering::Relaxed);
                self.p.level = 1;
                Some(VertexSubset::from_vertex(n, self.p.source))
            }
            Phase::TightHops => match self.frontier.take() {
                Some(f) if !f.is_empty() => {
                    self.p.level += 1;
                    Some(f)
                }
                _ => {
                    self.p.phase = Phase::TightParents;
                    Some(VertexSubset::all(n))
                }
            },
            Phase::TightParents => None,
        }
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        match self.p.phase {
            Phase::Relax => {
                let (p, delta) = (&self.p.relax, self.delta);
                for v in next.iter() {
                    self.buckets
                        .entry(bucket(p.dist(v), delta))
                        .or_default()
                        .push(v);
                }
            }
            Phase::TightHops => self.frontier = Some(next),
            Phase::Parents | Phase::TightParents => {}
        }
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        let Paths { relax, parent, .. } = self.p;
        Output {
            dist: relax
                .dist
                .into_par_iter()
                .map(AtomicF64::into_inner)
                .collect(),
            parent: parent.into_iter().map(AtomicU32::into_inner).collect(),
            iterations: self.iterations,
        }
    }

    fn state_bytes(&self) -> u64 {
        let queued: usize = self.buckets.values().map(Vec::len).sum();
        16 * self.p.parent.len() as u64 + 4 * queued as u64
    }
}

/// Buckets ahead of the current one kept in each thread's array of bins;
/// vertices further ahead wait in the thread's overflow list (their bucket is
/// recomputed from the distance when the window moves on).
const BIN_WINDOW: u64 = 1 << 12;
/// Out-edges per parallel task of a relaxation round; vertices of higher
/// degree are split across tasks.
const EDGE_GRAIN: usize = 2048;
/// A thread relaxes its own share of the current bucket at once, without a
/// global round, while it holds fewer vertices than this (GAPBS's
/// `kBinSizeThreshold`).
const FUSE_BELOW: usize = 1000;

/// A tentative-distance word of the in-memory kernels: `f64` in general,
/// `u32` when every edge weight is an integer and every shortest path is
/// shorter than `u32::MAX` ([`fits_u32`]). Integer sums below 2^53 are exact
/// in `f64`, so both words reach the same distances and, bucketing the
/// same values, the same rounds; the `u32` word halves the state that the
/// relaxations read at random (kron22: 9.6 MB of distances and as much of
/// stamps instead of 19.2 MB each; 10 % faster there, bench/NOTES.md).
/// `u16` halves it again where it is tried first ([`try_u16`]): a sum that
/// does not fit stops that run, and the distances come from `u32` (or
/// `f64`) instead, so the output never depends on the word.
trait Word: Copy + PartialEq + Send + Sync {
    /// Whether a sum can overflow the word on a graph this word was chosen
    /// for (`u16`): [`Word::offer`] then returns [`Word::UNREACHED`], the
    /// relaxation records it ([`LocalBins::overflow`]) and the run stops
    /// and is redone in `u32`.
    const NARROW: bool = false;
    /// One vertex's cell, loaded and lowered by any thread.
    type Cell: Send + Sync;
    /// A cell holding `d`.
    fn cell(d: Self) -> Self::Cell;
    /// The distance of a vertex not reached yet.
    const UNREACHED: Self;
    /// The source's distance.
    const ZERO: Self;
    /// A relax stamp that no reached distance equals (compared with `==`).
    const NEVER: Self;
    /// The current value of `c`.
    fn load(c: &Self::Cell) -> Self;
    /// Replaces the value of `c`.
    fn store(c: &Self::Cell, d: Self);
    /// Lowers `c` to `d` if `d` is smaller; whether it did.
    fn lower(c: &Self::Cell, d: Self) -> bool;
    /// `d + w` for an edge of weight `w ≥ 0`.
    fn offer(d: Self, w: f64) -> Self;
    /// The distance as `f64`, `+∞` when unreached.
    fn to_f64(self) -> f64;
    /// The distance as an integer, for the integer words; `None` for `f64`
    /// and when unreached.
    fn to_integer(self) -> Option<u64>;
}

impl Word for f64 {
    type Cell = AtomicF64;
    const UNREACHED: f64 = f64::INFINITY;
    const ZERO: f64 = 0.0;
    // NaN equals nothing, not even itself.
    const NEVER: f64 = f64::NAN;
    #[inline(always)]
    fn cell(d: f64) -> AtomicF64 {
        AtomicF64::new(d)
    }
    #[inline(always)]
    fn load(c: &AtomicF64) -> f64 {
        c.load()
    }
    #[inline(always)]
    fn store(c: &AtomicF64, d: f64) {
        c.store(d)
    }
    #[inline(always)]
    fn lower(c: &AtomicF64, d: f64) -> bool {
        c.fetch_min_nonnegative(d)
    }
    #[inline(always)]
    fn offer(d: f64, w: f64) -> f64 {
        d + w
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_integer(self) -> Option<u64> {
        None
    }
}

/// The integer words: `u32` (chosen by [`fits_u32`], never overflows) and
/// `u16` (tried by [`try_u16`], `NARROW`).
macro_rules! integer_word {
    ($t:ty, $cell:ty, $narrow:expr) => {
        impl Word for $t {
            const NARROW: bool = $narrow;
            type Cell = $cell;
            const UNREACHED: $t = <$t>::MAX;
            const ZERO: $t = 0;
            // Only reached vertices (distance below MAX) are ever stamped.
            const NEVER: $t = <$t>::MAX;
            #[inline(always)]
            fn cell(d: $t) -> $cell {
                <$cell>::new(d)
            }
            #[inline(always)]
            fn load(c: &$cell) -> $t {
                c.load(Ordering::Relaxed)
            }
            #[inline(always)]
            fn store(c: &$cell, d: $t) {
                c.store(d, Ordering::Relaxed)
            }
            #[inline(always)]
            fn lower(c: &$cell, d: $t) -> bool {
                // A plain load first, as `AtomicF64::fetch_min_nonnegative`.
                d < c.load(Ordering::Relaxed) && d < c.fetch_min(d, Ordering::Relaxed)
            }
            #[inline(always)]
            fn offer(d: $t, w: f64) -> $t {
                // `w` is an integer (the words are chosen only then); the
                // cast saturates for a weight past the word and for +∞, and
                // so does the sum. A saturated sum is UNREACHED: in u32 it
                // is longer than every shortest path (fits_u32), so
                // dropping it loses nothing; in u16 it is an overflow
                // unless `w` is +∞ (see `Word::NARROW`).
                d.saturating_add(w as $t)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                if self == <$t>::MAX {
                    f64::INFINITY
                } else {
                    f64::from(self)
                }
            }
            #[inline(always)]
            fn to_integer(self) -> Option<u64> {
                (self != <$t>::MAX).then_some(u64::from(self))
            }
        }
    };
}

integer_word!(u32, AtomicU32, false);
integer_word!(u16, AtomicU16, true);

/// Whether to try the `u16` word first (half the bytes of `u32` per
/// distance and stamp; kron22 about 10 % faster, bench/NOTES.md session 17).
/// Certain when every simple path is shorter than 65,535; otherwise tried
/// on graphs where it is likely (integer weights of at most 1,023, so a
/// 64-edge path fits, and a mean out-degree of at least 4, so shortest
/// paths have few edges), and redone in `u32` if a sum overflows.
fn try_u16(g: &Graph) -> bool {
    let Some(stats) = g.weight_stats() else {
        return false;
    };
    let n = g.num_vertices();
    let longest = stats
        .finite_sum
        .min(stats.max_finite * n.saturating_sub(1) as f64);
    let likely = stats.max_finite * 64.0 < 65_535.0 && g.num_arcs() as f64 >= 4.0 * n as f64;
    g.meta().integral_weights && (longest < 65_535.0 || likely)
}

/// Whether the `u32` word holds every distance exactly: all weights are
/// integers and no simple path can reach `u32::MAX` (the smaller of the
/// sum of all weights and `(n − 1)` times the largest).
fn fits_u32(g: &Graph) -> bool {
    let Some(stats) = g.weight_stats() else {
        return false;
    };
    let n = g.num_vertices().saturating_sub(1) as f64;
    let longest = stats.finite_sum.min(stats.max_finite * n);
    g.meta().integral_weights && longest < f64::from(u32::MAX)
}

/// Tentative distances of the in-memory kernels, one cell per vertex.
struct Tentative<W: Word> {
    dist: Vec<W::Cell>,
    /// For a narrow word: messages from this value on may overflow with
    /// some edge (65,535 minus the largest finite weight); `+∞` otherwise.
    overflow_from: f64,
    /// The bucket width `Δ`.
    delta: f64,
    /// `log2 Δ` when `Δ` is a power of two from 1 to 2^32: an integer
    /// distance's bucket is then a shift ([`Tentative::bucket`]).
    shift: Option<u32>,
}

impl<W: Word> Tentative<W> {
    /// All unreached but `source`, at 0, on `g`, bucketed by width `delta`.
    fn new(g: &Graph, source: VertexId, delta: f64) -> Self {
        let n = g.num_vertices();
        let overflow_from = match (W::NARROW, g.weight_stats()) {
            (true, Some(stats)) => 65_535.0 - stats.max_finite,
            (true, None) => 0.0,
            (false, _) => f64::INFINITY,
        };
        // Read in the random order of neighbour lists: on huge pages.
        let dist = crate::hugepages::from_fn(n, |v| {
            W::cell(if v == source as usize {
                W::ZERO
            } else {
                W::UNREACHED
            })
        });
        let shift = ((1.0..=4_294_967_296.0).contains(&delta) && delta.fract() == 0.0)
            .then_some(delta as u64)
            .filter(|d| d.is_power_of_two())
            .map(u64::trailing_zeros);
        Tentative {
            dist,
            overflow_from,
            delta,
            shift,
        }
    }

    /// [`bucket`] of distance `d`: `floor(d / Δ)`. For an integer distance
    /// and `Δ = 2^s` that quotient is exact in `f64` (`d < 2^32`, a power of
    /// two divides exactly), so `d >> s` is the same number without the
    /// conversion and division on every lowering (about 7 % of road SSSP's
    /// samples, bench/NOTES.md session 34).
    #[inline(always)]
    fn bucket(&self, d: W) -> u64 {
        match (self.shift, d.to_integer()) {
            (Some(s), Some(x)) => x >> s,
            _ => bucket(d.to_f64(), self.delta),
        }
    }

    #[inline(always)]
    fn get(&self, v: VertexId) -> W {
        W::load(&self.dist[v as usize])
    }

    /// The distances as `f64`s.
    fn into_f64(self) -> Vec<f64> {
        self.dist.par_iter().map(|c| W::load(c).to_f64()).collect()
    }
}

/// Relax stamps: the distance each vertex last sent along its edges
/// ([`Word::NEVER`] before the first time).
fn stamps<W: Word>(n: usize) -> Vec<W::Cell> {
    crate::hugepages::from_fn(n, |_| W::cell(W::NEVER))
}

/// `u`'s distance if `u` is still in bucket `k` (not lowered into an
/// earlier one since it was filed) and its distance differs from the one
/// it last sent along its edges (its stamp): whether it needs relaxing.
#[inline(always)]
fn unsent<W: Word>(p: &Tentative<W>, relaxed_at: &[W::Cell], u: VertexId, k: u64) -> Option<W> {
    let d = p.get(u);
    (p.bucket(d) == k && W::load(&relaxed_at[u as usize]) != d).then_some(d)
}

/// [`unsent`], stamping `u` with the distance it is about to send. A load
/// and a store, not a swap: two threads that take the same entry at once
/// may both relax it (the same offers twice, harmless), and no locked
/// instruction is paid per frontier entry.
#[inline(always)]
fn claim_fresh<W: Word>(
    p: &Tentative<W>,
    relaxed_at: &[W::Cell],
    u: VertexId,
    k: u64,
) -> Option<W> {
    let d = unsent(p, relaxed_at, u, k)?;
    W::store(&relaxed_at[u as usize], d);
    Some(d)
}

/// One thread's bins: `near[b - base]` holds vertices queued for bucket
/// `b < base + BIN_WINDOW`, `far` those further ahead.
#[derive(Default)]
struct LocalBins {
    near: Vec<Vec<VertexId>>,
    far: Vec<VertexId>,
    /// A relaxation's sum did not fit a narrow word ([`Word::NARROW`]).
    overflow: bool,
}

impl LocalBins {
    /// Queues `v` for bucket `b ≥ base`.
    #[inline]
    fn file(&mut self, v: VertexId, b: u64, base: u64) {
        if b - base < BIN_WINDOW {
            let i = (b - base) as usize;
            if self.near.len() <= i {
                self.near.resize_with(i + 1, Vec::new);
            }
            self.near[i].push(v);
        } else {
            self.far.push(v);
        }
    }

    /// Offers `m` plus each weight to the matching neighbour and queues
    /// every neighbour it lowers in its bucket ([`Tentative::bucket`]).
    #[inline]
    fn relax<W: Word>(&mut self, t: &Tentative<W>, nb: &[VertexId], ws: &[f64], m: W, base: u64) {
        if W::NARROW && m.to_f64() >= t.overflow_from {
            // Some edge may take the sum past the word: check each (rare:
            // only messages within the largest weight of 65,535).
            self.relax_edges::<W, true>(t, nb, ws, m, base);
        } else {
            self.relax_edges::<W, false>(t, nb, ws, m, base);
        }
    }

    /// [`Self::relax`]'s loop; `CHECK` also records a sum that came back
    /// UNREACHED from a finite weight (an overflow of a narrow word).
    #[inline(always)]
    fn relax_edges<W: Word, const CHECK: bool>(
        &mut self,
        t: &Tentative<W>,
        nb: &[VertexId],
        ws: &[f64],
        m: W,
        base: u64,
    ) {
        for (&v, &w) in nb.iter().zip(ws) {
            let d = W::offer(m, w);
            if W::lower(&t.dist[v as usize], d) {
                self.file(v, t.bucket(d), base);
            } else if CHECK && d == W::UNREACHED && w.is_finite() {
                self.overflow = true;
            }
        }
    }
}

/// Delta-stepping on the in-memory executor with GAPBS's bucket layout: each
/// thread relaxes its share of the current bucket's vertices (push only, as
/// GAPBS; the [`Program`]'s arithmetic on the tentative-distance [`Word`])
/// and files each lowered vertex straight into its own bins, so no round
/// needs a global regrouping step. Stale entries (a vertex whose distance
/// has since dropped to a lower bucket) are skipped when popped. Same
/// distances as [`delta_stepping`] on any executor.
fn delta_stepping_in_memory<W: Word>(
    g: &Graph,
    source: VertexId,
    delta: f64,
) -> Result<Option<(Vec<f64>, usize)>, AlgoError> {
    use std::sync::Mutex;
    let n = g.num_vertices();
    let p = Tentative::<W>::new(g, source, delta);
    let out = g.out();
    let threads = rayon::current_num_threads();
    let bins: Vec<Mutex<LocalBins>> = (0..threads).map(|_| Mutex::default()).collect();
    let lock = |i: usize| bins[i].lock().unwrap_or_else(|e| e.into_inner());
    let mut base = 0u64;
    let mut k = 0u64;
    let mut frontier: Vec<VertexId> = vec![source];
    let mut iterations = 0;
    // The distance each vertex last sent along its edges.
    let relaxed_at = stamps::<W>(n);
    loop {
        if !frontier.is_empty() {
            if crate::progress::cancel_requested() {
                return Err(AlgoError::Cancelled);
            }
            iterations += 1;
            crate::progress::superstep(frontier.len() as u64);
            // u's message if u is still in bucket k and its distance changed
            // since it last sent one (see the tasks below).
            let fresh = |u: VertexId| claim_fresh(&p, &relaxed_at, u, k);
            // Tasks: (vertex, its message, first edge, end edge), high
            // degrees split. A vertex is relaxed only if it is still in
            // bucket k (not lowered into an earlier one since it was filed)
            // and its distance changed since it was last relaxed: duplicate
            // entries and repeat visits at the same distance are skipped.
            // Each entry's distance and stamp miss the cache: they are asked
            // for [`TEAM_FAR`] entries ahead, as in the team rounds.
            let tasks: Vec<(VertexId, W, usize, usize)> = frontier
                .par_chunks(1024)
                .flat_map_iter(|chunk| {
                    let mut tasks = Vec::new();
                    for &u in chunk.iter().take(TEAM_FAR) {
                        prefetch_state(&p, &relaxed_at, out, u);
                    }
                    for (j, &u) in chunk.iter().enumerate() {
                        if let Some(&w) = chunk.get(j + TEAM_FAR) {
                            prefetch_state(&p, &relaxed_at, out, w);
                        }
                        if let Some(m) = fresh(u) {
                            let d = out.degree(u);
                            tasks
                                .extend((0..d.div_ceil(EDGE_GRAIN).max(1)).map(|b| {
                                    (u, m, b * EDGE_GRAIN, ((b + 1) * EDGE_GRAIN).min(d))
                                }));
                        }
                    }
                    tasks
                })
                .collect();
            // Relaxes edges lo..hi of u with message m, filing lowered
            // vertices into `local`.
            let relax = |local: &mut LocalBins, u: VertexId, m: W, lo: usize, hi: usize| {
                // prepare() checked that the graph is weighted.
                let ws = out.weights(u).map_or(&[][..], |w| &w[lo..hi]);
                local.relax(&p, &out.neighbors(u)[lo..hi], ws, m, base);
            };
            let cur = (k - base) as usize;
            tasks.par_chunks(16).for_each(|chunk| {
                let mut local = lock(rayon::current_thread_index().unwrap_or(0) % threads);
                let local = &mut *local;
                for (j, &(u, m, lo, hi)) in chunk.iter().enumerate() {
                    // The out-list of a task a few places on (its offset was
                    // read when the tasks were made).
                    if let Some(&(w, _, at, _)) = chunk.get(j + TEAM_AHEAD) {
                        prefetch_edges(out, out.offsets()[w as usize] as usize + at);
                    }
                    relax(local, u, m, lo, hi);
                    // Bucket fusion (GAPBS): while this thread's own share of
                    // the current bucket is small, relax it right away
                    // instead of waiting for the next round.
                    while local
                        .near
                        .get(cur)
                        .is_some_and(|b| !b.is_empty() && b.len() < FUSE_BELOW)
                    {
                        let bin = std::mem::take(&mut local.near[cur]);
                        for &u in &bin {
                            if let Some(m) = fresh(u) {
                                relax(local, u, m, 0, out.degree(u));
                            }
                        }
                    }
                }
            });
        }
        if W::NARROW && (0..threads).any(|t| lock(t).overflow) {
            return Ok(None);
        }
        // The next bucket: the lowest non-empty near bin of any thread.
        let next = (0..threads)
            .filter_map(|t| {
                let l = lock(t);
                let from = (k.saturating_sub(base)) as usize;
                l.near
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, b)| !b.is_empty())
                    .map(|(i, _)| base + i as u64)
            })
            .min();
        match next {
            Some(b) => {
                k = b;
                let i = (b - base) as usize;
                frontier.clear();
                for t in 0..threads {
                    let mut l = lock(t);
                    if let Some(bin) = l.near.get_mut(i) {
                        frontier.append(bin);
                    }
                }
            }
            None => {
                // The window is empty: restart it at the lowest far bucket.
                // Entries now in a bucket below the window are stale (any
                // lowering into the window was filed there and processed).
                let end = base.saturating_add(BIN_WINDOW);
                let far: Vec<VertexId> = (0..threads)
                    .flat_map(|t| std::mem::take(&mut lock(t).far))
                    .filter(|&v| p.bucket(p.get(v)) >= end)
                    .collect();
                let Some(lowest) = far.par_iter().map(|&v| p.bucket(p.get(v))).min() else {
                    break;
                };
                base = lowest;
                k = lowest;
                for t in 0..threads {
                    lock(t).near.clear();
                }
                let mut l = lock(0);
                for v in far {
                    l.file(v, p.bucket(p.get(v)), base);
                }
                frontier = std::mem::take(&mut l.near[0]);
            }
        }
    }
    Ok(Some((p.into_f64(), iterations)))
}

/// Frontier vertices a team thread takes at a time (GAPBS's dynamic
/// schedule of 64).
const TEAM_GRAIN: usize = 64;

/// Frontier entries ahead whose distance, relax stamp and out-list offset a
/// team round prefetches.
const TEAM_FAR: usize = 16;

/// Frontier entries ahead whose out-list and weights a team round
/// prefetches, if the entry looks fresh by then.
const TEAM_AHEAD: usize = 8;

/// Asks the cache for what deciding whether `u` is fresh reads: its
/// distance, its relax stamp and its out-list offset. Only addresses
/// computed from `u`: nothing waits for memory.
#[inline(always)]
fn prefetch_state<W: Word>(
    p: &Tentative<W>,
    relaxed_at: &[W::Cell],
    out: &plexus_graph::Adjacency,
    u: VertexId,
) {
    use crate::prefetch::prefetch;
    let u = u as usize;
    prefetch(&p.dist, u);
    prefetch(relaxed_at, u);
    prefetch(out.offsets(), u);
}

/// Asks the cache for the start of `u`'s out-list and weights when `u`
/// would be relaxed in bucket `k` now (its state, prefetched
/// [`TEAM_FAR`] entries earlier, is read). Most frontier entries are stale
/// (about 60 % on kron22: a vertex is filed each time it is lowered), and
/// their lists are not fetched. A hint only: the entry is checked again
/// when it is relaxed.
#[inline(always)]
fn prefetch_list_if_fresh<W: Word>(
    p: &Tentative<W>,
    relaxed_at: &[W::Cell],
    out: &plexus_graph::Adjacency,
    u: VertexId,
    k: u64,
) {
    if unsent(p, relaxed_at, u, k).is_some() {
        prefetch_edges(out, out.offsets()[u as usize] as usize);
    }
}

/// Asks the cache for out-edge `at` (position in the neighbour array) and
/// its weight.
#[inline(always)]
fn prefetch_edges(out: &plexus_graph::Adjacency, at: usize) {
    crate::prefetch::prefetch(out.neighbor_array(), at);
    if let Some(ws) = out.weight_array() {
        crate::prefetch::prefetch(ws, at);
    }
}

/// The frontier of a team round: each thread's share, published between
/// rounds, read as one list in thread order.
struct Shares<'a>(Vec<std::sync::RwLockReadGuard<'a, Vec<VertexId>>>);

impl Shares<'_> {
    fn len(&self) -> usize {
        self.0.iter().map(|s| s.len()).sum()
    }

    /// Calls `f` on the entries at positions `lo..hi` of the list.
    fn for_range(&self, mut lo: usize, hi: usize, mut f: impl FnMut(VertexId)) {
        let mut start = 0;
        for s in &self.0 {
            let end = start + s.len();
            if lo < end && lo < hi {
                for &v in &s[lo - start..hi.min(end) - start] {
                    f(v);
                }
                lo = hi.min(end);
            }
            start = end;
        }
    }
}

/// [`delta_stepping_in_memory`] run by a team of the pool's threads that
/// stays together from the first round to the last (see [`crate::team`]),
/// as GAPBS runs its whole `sssp` in one OpenMP parallel region: each round
/// every thread takes [`TEAM_GRAIN`] frontier vertices at a time from a
/// shared cursor and files lowered vertices in its own bins, relaxes its own
/// small share of the current bucket at once (bucket fusion), offers its
/// lowest non-empty bin, and after a barrier publishes its share of the
/// lowest one as part of the next frontier: two barrier waits per round and
/// no wake-ups, which matters on road graphs (about 700 rounds of a few
/// thousand edges). Same distances; the calling thread's progress observer
/// sees every round.
fn delta_stepping_team<W: Word>(
    g: &Graph,
    source: VertexId,
    delta: f64,
) -> Result<Option<(Vec<f64>, usize)>, AlgoError> {
    use crate::team::SpinBarrier;
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    use std::sync::RwLock;
    let n = g.num_vertices();
    let p = Tentative::<W>::new(g, source, delta);
    let out = g.out();
    let threads = rayon::current_num_threads();
    let relaxed_at = stamps::<W>(n);
    let published: Vec<RwLock<Vec<VertexId>>> = (0..threads).map(|_| RwLock::default()).collect();
    if let Some(first) = published.first() {
        first
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(source);
    }
    let cursor = AtomicUsize::new(0);
    // The lowest non-empty bin offered for the next round, by round parity.
    let next_bin = [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)];
    let far_min = AtomicU64::new(u64::MAX);
    let cancelled = AtomicBool::new(false);
    // A sum overflowed the narrow word: every thread stops at the round's end.
    let overflowed = AtomicBool::new(false);
    let rounds = AtomicUsize::new(0);
    let barrier = SpinBarrier::new(threads);
    let observer = crate::progress::current();
    let driver = rayon::current_thread_index();
    rayon::broadcast(|ctx| {
        let me = ctx.index();
        let leader = driver.map_or(me == 0, |d| d == me);
        crate::progress::observe_if(observer.as_ref().filter(|_| leader), || {
            let mut bins = LocalBins::default();
            let (mut base, mut k, mut round) = (0u64, 0u64, 0usize);
            // u's message if it needs relaxing in bucket k ([`claim_fresh`]).
            let fresh = |u: VertexId, k: u64| claim_fresh(&p, &relaxed_at, u, k);
            let relax = |bins: &mut LocalBins, u: VertexId, m: W, base: u64| {
                // prepare() checked that the graph is weighted.
                let ws = out.weights(u).unwrap_or(&[]);
                bins.relax(&p, out.neighbors(u), ws, m, base);
            };
            // Relaxes the fresh entries of `list` in bucket `k`. Each entry's
            // state, offset and out-list miss the cache, and the offset is
            // needed to find the list: ask for the state [`TEAM_FAR`]
            // entries ahead and, once it has arrived, for the list
            // [`TEAM_AHEAD`] entries ahead, so no load waits on memory.
            let relax_list = |bins: &mut LocalBins, list: &[VertexId], k: u64, base: u64| {
                for &u in list.iter().take(TEAM_FAR) {
                    prefetch_state(&p, &relaxed_at, out, u);
                }
                for &u in list.iter().take(TEAM_AHEAD) {
                    prefetch_list_if_fresh(&p, &relaxed_at, out, u, k);
                }
                for (j, &u) in list.iter().enumerate() {
                    if let Some(&w) = list.get(j + TEAM_FAR) {
                        prefetch_state(&p, &relaxed_at, out, w);
                    }
                    if let Some(&w) = list.get(j + TEAM_AHEAD) {
                        prefetch_list_if_fresh(&p, &relaxed_at, out, w, k);
                    }
                    if let Some(m) = fresh(u, k) {
                        relax(bins, u, m, base);
                    }
                }
            };
            loop {
                {
                    let shares = Shares(
                        published
                            .iter()
                            .map(|s| s.read().unwrap_or_else(|e| e.into_inner()))
                            .collect(),
                    );
                    let total = shares.len();
                    if leader {
                        crate::progress::superstep(total as u64);
                        if crate::progress::cancel_requested() {
                            cancelled.store(true, Ordering::Relaxed);
                        }
                    }
                    let mut grain: Vec<VertexId> = Vec::with_capacity(TEAM_GRAIN);
                    loop {
                        let i = cursor.fetch_add(TEAM_GRAIN, Ordering::Relaxed);
                        if i >= total {
                            break;
                        }
                        grain.clear();
                        shares.for_range(i, (i + TEAM_GRAIN).min(total), |u| grain.push(u));
                        relax_list(&mut bins, &grain, k, base);
                    }
                }
                // Bucket fusion: relax this thread's small share of bucket k now.
                let cur = (k - base) as usize;
                while bins
                    .near
                    .get(cur)
                    .is_some_and(|b| !b.is_empty() && b.len() < FUSE_BELOW)
                {
                    let bin = std::mem::take(&mut bins.near[cur]);
                    relax_list(&mut bins, &bin, k, base);
                }
                let offer = bins
                    .near
                    .iter()
                    .enumerate()
                    .skip(cur)
                    .find(|(_, b)| !b.is_empty())
                    .map_or(u64::MAX, |(i, _)| base + i as u64);
                next_bin[(round + 1) & 1].fetch_min(offer, Ordering::Relaxed);
                if W::NARROW && bins.overflow {
                    overflowed.store(true, Ordering::Relaxed);
                }
                barrier.wait();
                // Everyone has relaxed and offered; the frontier is no longer read.
                let mut next = next_bin[(round + 1) & 1].load(Ordering::Relaxed);
                if leader {
                    next_bin[round & 1].store(u64::MAX, Ordering::Relaxed);
                    cursor.store(0, Ordering::Relaxed);
                }
                // Both flags were set before the barrier: every thread
                // reads the same values and leaves at the same round.
                let mut done =
                    cancelled.load(Ordering::Relaxed) || overflowed.load(Ordering::Relaxed);
                if next == u64::MAX && !done {
                    // The window is empty: move it to the lowest far bucket.
                    // Far entries now below the window are stale (a lowering
                    // into the window was filed there and relaxed).
                    let end = base.saturating_add(BIN_WINDOW);
                    let mine = bins
                        .far
                        .iter()
                        .map(|&v| p.bucket(p.get(v)))
                        .filter(|&b| b >= end)
                        .min()
                        .unwrap_or(u64::MAX);
                    far_min.fetch_min(mine, Ordering::Relaxed);
                    barrier.wait();
                    next = far_min.load(Ordering::Relaxed);
                    if next == u64::MAX {
                        done = true;
                    } else {
                        base = next;
                        bins.near.clear();
                        for v in std::mem::take(&mut bins.far) {
                            let b = p.bucket(p.get(v));
                            if b >= end {
                                bins.file(v, b, base);
                            }
                        }
                    }
                }
                if !done {
                    k = next;
                    let mut share = published[me].write().unwrap_or_else(|e| e.into_inner());
                    share.clear();
                    if let Some(bin) = bins.near.get_mut((k - base) as usize) {
                        std::mem::swap(&mut *share, bin);
                    }
                }
                round += 1;
                if leader {
                    rounds.store(round, Ordering::Relaxed);
                }
                barrier.wait();
                if leader {
                    // Read after the window barrier above, before this one.
                    far_min.store(u64::MAX, Ordering::Relaxed);
                }
                if done {
                    break;
                }
            }
        })
    });
    if cancelled.into_inner() {
        return Err(AlgoError::Cancelled);
    }
    if overflowed.into_inner() {
        return Ok(None);
    }
    Ok(Some((p.into_f64(), rounds.into_inner())))
}

/// Claims vertices over *tight* edges (`dist[u] + w == dist[v]`) level by
/// level: a BFS of the shortest-path subgraph, giving each reached vertex
/// its hop count in that subgraph.
struct TightVisit<'a> {
    dist: &'a [f64],
    hop: Vec<AtomicU32>,
    level: u32,
}

impl EdgeFunctor for TightVisit<'_> {
    fn update(&self, u: VertexId, v: VertexId, w: f64) -> bool {
        let tight = self.dist[u as usize] + w == self.dist[v as usize];
        if tight {
            self.hop[v as usize].store(self.level, Ordering::Relaxed);
        }
        tight
    }
    fn update_atomic(&self, u: VertexId, v: VertexId, w: f64) -> bool {
        self.dist[u as usize] + w == self.dist[v as usize]
            && self.hop[v as usize]
                .compare_exchange(NO_PARENT, self.level, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
    fn cond(&self, v: VertexId) -> bool {
        self.hop[v as usize].load(Ordering::Relaxed) == NO_PARENT
    }
}

/// Parents from distances. Fast path: each reached vertex but the source
/// takes its smallest-id in-neighbour `u` over a tight edge with
/// `dist[u] < dist[v]`; parents then strictly lower the distance, so they
/// form a tree. When some reached vertex has no such in-neighbour (a tight
/// edge of weight 0, or one too small to change the sum in `f64`), all
/// parents come from [`tight_bfs_parents`] instead. Either way the result
/// is a function of the distances alone, independent of the thread count.
fn parents(g: &Graph, source: VertexId, dist: &[f64]) -> Vec<u32> {
    let parent: Vec<u32> = (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(64)
        .map(|v| {
            if v == source {
                return source;
            }
            let d = dist[v as usize];
            if d == f64::INFINITY {
                return NO_PARENT;
            }
            let ws = g.in_weights(v).unwrap_or(&[]);
            g.in_neighbors(v)
                .iter()
                .zip(ws)
                .find(|&(&u, &w)| dist[u as usize] < d && dist[u as usize] + w == d)
                .map_or(NO_PARENT, |(&u, _)| u)
        })
        .collect();
    let complete = parent
        .par_iter()
        .zip(dist.par_iter())
        .all(|(&p, &d)| p != NO_PARENT || d == f64::INFINITY);
    if complete {
        parent
    } else {
        tight_bfs_parents(g, source, dist)
    }
}

/// Parents from distances across zero-weight ties: BFS over tight edges
/// gives hop counts (unique), then each reached vertex but the source
/// takes the smallest-id in-neighbour one hop up over a tight edge.
/// Following parents strictly lowers the hop count and ends at the source.
/// Every reached vertex is reached by the BFS: the vertex that last lowered
/// its distance is reached first (by induction on Dijkstra's settle order).
fn tight_bfs_parents(g: &Graph, source: VertexId, dist: &[f64]) -> Vec<u32> {
    let n = g.num_vertices();
    let mut visit = TightVisit {
        dist,
        hop: (0..n).map(|_| AtomicU32::new(NO_PARENT)).collect(),
        level: 0,
    };
    visit.hop[source as usize].store(0, Ordering::Relaxed);
    let mut frontier = VertexSubset::from_vertex(n, source);
    while !frontier.is_empty() {
        visit.level += 1;
        frontier = edge_map(g, &frontier, &visit, &EdgeMapOptions::default());
    }
    let hop: Vec<u32> = visit.hop.into_iter().map(AtomicU32::into_inner).collect();
    (0..n as VertexId)
        .into_par_iter()
        .map(|v| {
            if v == source {
                return source;
            }
            let h = hop[v as usize];
            if h == NO_PARENT {
                return NO_PARENT;
            }
            let ws = g.in_weights(v).unwrap_or(&[]);
            g.in_neighbors(v)
                .iter()
                .zip(ws)
                .find(|&(&u, &w)| {
                    hop[u as usize].wrapping_add(1) == h && dist[u as usize] + w == dist[v as usize]
                })
                .map_or(NO_PARENT, |(&u, _)| u)
        })
        .collect()
}

/// Runs delta-stepping in parallel on the current rayon pool: distances and
/// parents ([`distances`] then [`parents_of`]).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let d = distances(g, cfg)?;
    let parent = parents(g, cfg.source, &d.dist);
    Ok(Output {
        dist: d.dist,
        parent,
        iterations: d.iterations,
    })
}

/// Shortest-path distances alone (what GAPBS's `sssp` computes).
#[derive(Clone, Debug, PartialEq)]
pub struct Distances {
    /// Shortest-path distance; `f64::INFINITY` when unreachable.
    pub dist: Vec<f64>,
    /// Relaxation supersteps run.
    pub iterations: usize,
}

/// Delta-stepping distances, without parents.
pub fn distances(g: &Graph, cfg: &Config) -> Result<Distances, AlgoError> {
    let delta = prepare(g, cfg)?;
    let narrow = if try_u16(g) {
        kernel::<u16>(g, cfg.source, delta)?
    } else {
        None
    };
    let wide = || match fits_u32(g) {
        true => kernel::<u32>(g, cfg.source, delta),
        false => kernel::<f64>(g, cfg.source, delta),
    };
    let (dist, iterations) = match narrow {
        Some(r) => r,
        // u32 and f64 never overflow (fits_u32; f64 sums saturate to +∞).
        None => wide()?.ok_or_else(|| {
            AlgoError::InvalidParameter("sssp: a distance overflowed its word".into())
        })?,
    };
    Ok(Distances { dist, iterations })
}

/// Delta-stepping in word `W`: by a team when none is running, else by
/// rounds of the pool; `None` when a sum overflowed a narrow word.
fn kernel<W: Word>(
    g: &Graph,
    source: VertexId,
    delta: f64,
) -> Result<Option<(Vec<f64>, usize)>, AlgoError> {
    match crate::team::exclusive() {
        Some(_team) => delta_stepping_team::<W>(g, source, delta),
        None => delta_stepping_in_memory::<W>(g, source, delta),
    }
}

/// The parents that go with `dist` (see the module docs): one pass over the
/// in-edges, so callers that only need distances can skip it.
pub fn parents_of(g: &Graph, cfg: &Config, dist: &[f64]) -> Vec<u32> {
    parents(g, cfg.source, dist)
}

/// Plain sequential Dijkstra with a binary heap (lazy deletion).
/// `iterations` counts the vertices settled.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    prepare(g, cfg)?;
    use std::cmp::Reverse;
    let n = g.num_vertices();
    let mut dist = vec![f64::INFINITY; n];
    dist[cfg.source as usize] = 0.0;
    // Non-negative f64s order like their bit patterns.
    let mut heap = std::collections::BinaryHeap::from([Reverse((0u64, cfg.source))]);
    let mut settled = 0;
    while let Some(Reverse((bits, u))) = heap.pop() {
        let du = f64::from_bits(bits);
        if du > dist[u as usize] {
            continue;
        }
        settled += 1;
        let ws = g.out_weights(u).unwrap_or(&[]);
        for (&v, &w) in g.out_neighbors(u).iter().zip(ws) {
            let nd = du + w;
            if nd < dist[v as usize] {
                dist[v as usize] = nd;
                heap.push(Reverse((nd.to_bits(), v)));
            }
        }
    }
    let parent = parents(g, cfg.source, &dist);
    Ok(Output {
        dist,
        parent,
        iterations: settled,
    })
}

/// Whether `a ≤ b` up to the verifier's relative tolerance.
fn le_eps(a: f64, b: f64) -> bool {
    a <= b + VERIFY_EPSILON * b.abs().max(1.0)
}

/// Checks the shortest-path properties on any weighted graph: the source is
/// at 0 and its own parent; no distance is negative or NaN; every edge
/// `u → v` from a reached `u` satisfies `dist[v] ≤ dist[u] + w` (relative
/// tolerance [`VERIFY_EPSILON`]); every reached vertex's parent edge exists
/// and achieves its distance (same tolerance) and following parents leads
/// to the source (so each distance is the length of a real path);
/// unreached vertices have no parent. Together: distances are shortest.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    prepare(g, cfg).map_err(|e| VerifyError::new(format!("cannot verify: {e}")))?;
    let n = g.num_vertices();
    let (dist, parent) = (&out.dist, &out.parent);
    if dist.len() != n || parent.len() != n {
        return Err(VerifyError::new(format!(
            "output has the wrong length for {n} vertices"
        )));
    }
    let s = cfg.source;
    if dist[s as usize] != 0.0 || parent[s as usize] != s {
        return Err(VerifyError::new(format!(
            "source {s} has distance {} and parent {}",
            dist[s as usize], parent[s as usize]
        )));
    }
    for v in 0..n as VertexId {
        let d = dist[v as usize];
        if d.is_nan() || d < 0.0 {
            return Err(VerifyError::new(format!("vertex {v} has distance {d}")));
        }
        let p = parent[v as usize];
        if d == f64::INFINITY {
            if p != NO_PARENT {
                return Err(VerifyError::new(format!(
                    "unreached vertex {v} has parent {p}"
                )));
            }
            continue;
        }
        // Triangle inequality on every out-edge.
        let ws = g.out_weights(v).unwrap_or(&[]);
        for (&w_, &wt) in g.out_neighbors(v).iter().zip(ws) {
            if !le_eps(dist[w_ as usize], d + wt) {
                return Err(VerifyError::new(format!(
                    "edge {v} -> {w_} (weight {wt}): distance {} at {w_} exceeds {d} + {wt}",
                    dist[w_ as usize]
                )));
            }
        }
        if v == s {
            continue;
        }
        // Tightness of the parent edge.
        if p as usize >= n {
            return Err(VerifyError::new(format!(
                "reached vertex {v} (distance {d}) has no parent"
            )));
        }
        let dp = dist[p as usize];
        let ws = g.in_weights(v).unwrap_or(&[]);
        let tight = g
            .in_neighbors(v)
            .iter()
            .zip(ws)
            .any(|(&u, &w)| u == p && le_eps(dp + w, d) && le_eps(d, dp + w));
        if !tight {
            return Err(VerifyError::new(format!(
                "vertex {v} at distance {d}: no edge {p} -> {v} from its parent (at {dp}) achieves it"
            )));
        }
    }
    // Parent chains reach the source (no cycles among parents).
    let mut state = vec![0u8; n]; // 0 unknown, 1 on the current chain, 2 leads to the source
    state[s as usize] = 2;
    for v in 0..n {
        if parent[v] == NO_PARENT || state[v] == 2 {
            continue;
        }
        let mut chain = vec![];
        let mut x = v;
        while state[x] == 0 {
            state[x] = 1;
            chain.push(x);
            x = parent[x] as usize;
        }
        if state[x] == 1 {
            return Err(VerifyError::new(format!(
                "the parents of vertex {v} form a cycle through vertex {x} that misses the source"
            )));
        }
        for c in chain {
            state[c] = 2;
        }
    }
    Ok(())
}

/// The conformance check of [`SsspDriver`] on `exec` (see
/// [`crate::conformance`]): distances and parents equal [`run`]'s bit for
/// bit, and the result passes [`verify`]. Unweighted graphs are skipped.
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    if !g.is_weighted() {
        return Ok(());
    }
    let n = g.num_vertices().max(1) as u64;
    let cfg = Config {
        source: (seed % n) as VertexId,
        delta: [None, Some(0.5), Some(3.0)][(seed >> 8) as usize % 3],
    };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    let bits = |d: &[f64]| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    crate::conformance::same("dist", &bits(&got.dist), &bits(&fast.dist))?;
    crate::conformance::same("parent", &got.parent, &fast.parent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::{weighted_graphs, THREADS};
    use crate::program::InMemory;
    use crate::with_threads;
    use plexus_graph::BuildOptions;
    use proptest::prelude::*;

    fn cfg(source: VertexId) -> Config {
        Config {
            source,
            delta: None,
        }
    }

    #[test]
    fn an_observer_sees_the_supersteps_and_can_stop_the_kernel() {
        use crate::progress::{observe, Observer};
        use std::sync::atomic::AtomicU64;
        use std::sync::Arc;
        // A weighted path 0 -> 1 -> ... -> 99 (unit weights, Δ = 1): one
        // superstep per vertex.
        let edges: Vec<(VertexId, VertexId, f64)> = (0..99).map(|v| (v, v + 1, 1.0)).collect();
        let g = Graph::from_weighted_edges(100, &edges, &BuildOptions::directed()).unwrap();
        struct StopAfter(AtomicU64, u64);
        impl Observer for StopAfter {
            fn superstep(&self, _active: u64) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
            fn cancel_requested(&self) -> bool {
                self.0.load(Ordering::Relaxed) >= self.1
            }
        }
        let c = Config {
            source: 0,
            delta: Some(1.0),
        };
        let all = Arc::new(StopAfter(AtomicU64::new(0), u64::MAX));
        let d = observe(all.clone(), || distances(&g, &c)).unwrap();
        assert_eq!(all.0.load(Ordering::Relaxed), d.iterations as u64);
        assert!(d.iterations >= 99);
        let stop = Arc::new(StopAfter(AtomicU64::new(0), 5));
        assert_eq!(
            observe(stop.clone(), || run(&g, &c)),
            Err(AlgoError::Cancelled)
        );
        assert_eq!(stop.0.load(Ordering::Relaxed), 5);
        // No observer installed any more: the kernel runs to the end.
        assert_eq!(run(&g, &c).unwrap().dist[99], 99.0);
    }

    /// The LDBC Graphalytics `example-directed` graph (ids shifted down by one)
    /// and its published SSSP output from vertex 1 (internal 0).
    #[test]
    fn graphalytics_example_directed_matches_the_published_output() {
        let e = [
            (1, 3, 0.5),
            (1, 5, 0.3),
            (2, 4, 0.1),
            (2, 5, 0.3),
            (2, 10, 0.12),
            (3, 1, 0.53),
            (3, 5, 0.62),
            (3, 8, 0.21),
            (3, 10, 0.52),
            (5, 3, 0.69),
            (5, 4, 0.53),
            (5, 8, 0.1),
            (6, 3, 0.23),
            (6, 4, 0.39),
            (7, 4, 0.83),
            (8, 1, 0.39),
            (9, 4, 0.69),
        ];
        let t: Vec<(u32, u32, f64)> = e.iter().map(|&(u, v, w)| (u - 1, v - 1, w)).collect();
        let g = Graph::from_weighted_edges(10, &t, &BuildOptions::directed()).unwrap();
        let out = run(&g, &cfg(0)).unwrap();
        let inf = f64::INFINITY;
        let want = [0.0, inf, 0.5, 0.83, 0.3, inf, inf, 0.4, inf, 1.02];
        for (v, (&a, &b)) in out.dist.iter().zip(&want).enumerate() {
            assert!(
                a == b || (a - b).abs() <= 1e-4 * b,
                "vertex {v}: {a} vs {b}"
            );
        }
        assert_eq!(out.parent[3], 4);
        verify(&g, &cfg(0), &out).unwrap();
    }

    #[test]
    fn unweighted_and_negative_inputs_are_errors() {
        let g = Graph::from_edges(2, &[(0, 1)], &BuildOptions::directed()).unwrap();
        assert!(
            matches!(run(&g, &cfg(0)), Err(AlgoError::UnsupportedGraph(m)) if m.contains("--weighted"))
        );
        let g =
            Graph::from_weighted_edges(3, &[(0, 1, 1.0), (2, 1, -2.0)], &BuildOptions::directed())
                .unwrap();
        assert_eq!(
            run(&g, &cfg(0)),
            Err(AlgoError::NegativeWeight {
                algorithm: "sssp",
                src: 2,
                dst: 1,
                weight: -2.0
            })
        );
        let g = Graph::from_weighted_edges(2, &[(0, 1, 1.0)], &BuildOptions::directed()).unwrap();
        assert_eq!(run(&g, &cfg(2)), Err(AlgoError::NoSuchVertex(2)));
        let bad_delta = Config {
            source: 0,
            delta: Some(0.0),
        };
        assert!(matches!(
            run(&g, &bad_delta),
            Err(AlgoError::InvalidParameter(_))
        ));
    }

    /// A directed path `0 → 1 → …` with these weights.
    #[test]
    fn a_power_of_two_width_buckets_integer_distances_by_a_shift_exactly() {
        let g = path(&[1.0, 2.0]);
        let shifts = [1.0, 2.0, 256.0, 4_294_967_296.0];
        for delta in shifts.into_iter().chain([3.0, 0.5, 255.5, 1e-300, 1e300]) {
            let wide = Tentative::<u32>::new(&g, 0, delta);
            let narrow = Tentative::<u16>::new(&g, 0, delta);
            assert_eq!(wide.shift.is_some(), shifts.contains(&delta), "{delta}");
            for d in [
                0u32,
                1,
                2,
                255,
                256,
                257,
                65_534,
                65_535,
                1 << 31,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(wide.bucket(d), bucket(d.to_f64(), delta), "{d} / {delta}");
                if let Ok(d) = u16::try_from(d) {
                    assert_eq!(narrow.bucket(d), bucket(d.to_f64(), delta), "{d} / {delta}");
                }
            }
            assert_eq!(
                Tentative::<f64>::new(&g, 0, delta).bucket(300.0),
                bucket(300.0, delta)
            );
        }
    }

    fn path(ws: &[f64]) -> Graph {
        let edges: Vec<(VertexId, VertexId, f64)> = ws
            .iter()
            .enumerate()
            .map(|(i, &w)| (i as VertexId, i as VertexId + 1, w))
            .collect();
        Graph::from_weighted_edges(ws.len() + 1, &edges, &BuildOptions::directed()).unwrap()
    }

    #[test]
    fn the_u32_word_holds_paths_up_to_its_bound_and_f64_takes_the_rest() {
        // The longest path is u32::MAX − 1: the u32 word, exact.
        let top = f64::from(u32::MAX - 1);
        let g = path(&[2e9, top - 2e9]);
        assert!(fits_u32(&g));
        // Past it, or with a fraction: f64, exact all the same.
        let over = path(&[2e9, 2.5e9]);
        assert!(!fits_u32(&over));
        let half = path(&[1.5, 2.0]);
        assert!(!fits_u32(&half));
        for (g, want) in [
            (&g, vec![0.0, 2e9, top]),
            (&over, vec![0.0, 2e9, 4.5e9]),
            (&half, vec![0.0, 1.5, 3.5]),
        ] {
            for t in THREADS {
                let got = with_threads(t, || run(g, &cfg(0))).unwrap().unwrap();
                assert_eq!(got.dist, want);
                assert_eq!(got.parent, vec![0, 0, 1]);
            }
        }
        // A sum past the word saturates to "unreached", never wraps.
        assert_eq!(<u32 as Word>::offer(u32::MAX - 1, 5.0), u32::MAX);
        assert_eq!(<u32 as Word>::offer(u32::MAX, 0.0).to_f64(), f64::INFINITY);
        assert_eq!(<u32 as Word>::offer(7, 5.0), 12);
    }

    #[test]
    fn zero_weight_cycles_and_tiny_deltas_are_fine() {
        let t = [
            (0, 1, 0.0),
            (1, 2, 0.0),
            (2, 1, 0.0),
            (2, 3, 2.5),
            (0, 3, 3.0),
        ];
        let g = Graph::from_weighted_edges(4, &t, &BuildOptions::directed()).unwrap();
        for delta in [None, Some(1e-300), Some(1e300)] {
            let c = Config { source: 0, delta };
            let out = run(&g, &c).unwrap();
            assert_eq!(out.dist, vec![0.0, 0.0, 0.0, 2.5]);
            verify(&g, &c, &out).unwrap();
        }
    }

    #[test]
    fn buckets_past_u64_are_still_relaxed_by_every_kernel() {
        // With Δ = 1e-300 every positive distance saturates the bucket
        // index; the team once took that bucket for "no bucket" and left
        // vertex 1's out-edges unrelaxed.
        let g = path(&[1.0, 1.0, 1.0]);
        for t in THREADS {
            let team = with_threads(t, || delta_stepping_team::<f64>(&g, 0, 1e-300));
            let plain = with_threads(t, || delta_stepping_in_memory::<f64>(&g, 0, 1e-300));
            for got in [team, plain] {
                assert_eq!(got.unwrap().unwrap().unwrap().0, vec![0.0, 1.0, 2.0, 3.0]);
            }
        }
    }

    #[test]
    fn verifier_rejects_corrupted_outputs() {
        let t = [
            (0, 1, 1.0),
            (1, 2, 1.0),
            (0, 2, 5.0),
            (2, 3, 0.0),
            (3, 2, 0.0),
        ];
        let g = Graph::from_weighted_edges(5, &t, &BuildOptions::directed()).unwrap();
        let c = cfg(0);
        let good = run(&g, &c).unwrap();
        verify(&g, &c, &good).unwrap();
        let mut bad = good.clone();
        bad.dist[2] = 3.0;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("1 -> 2"));
        let mut bad = good.clone();
        bad.dist[1] = 0.5;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("1 -> 2"));
        // Too-small distances held up by a parent cycle of zero-weight edges.
        let mut bad = good.clone();
        bad.dist[2] = 0.0;
        bad.dist[3] = 0.0;
        bad.parent[2] = 3;
        bad.parent[3] = 2;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("cycle"));
        let mut bad = good;
        bad.parent[4] = 0;
        assert!(verify(&g, &c, &bad)
            .unwrap_err()
            .0
            .contains("unreached vertex 4"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_dijkstra_and_passes_verify(
            spec in weighted_graphs(),
            s in 0usize..1000,
            delta in proptest::option::of(0.25f64..20.0),
        ) {
            let g = spec.build();
            let c = Config { source: (s % g.num_vertices()) as VertexId, delta };
            let want = reference(&g, &c).unwrap();
            verify(&g, &c, &want).unwrap();
            let generic = distances_on(&InMemory::new(&g), &c).unwrap();
            prop_assert_eq!(&generic.dist, &want.dist);
            for t in THREADS {
                let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
                prop_assert_eq!(&got.dist, &want.dist);
                prop_assert_eq!(&got.parent, &want.parent);
                if let Err(e) = verify(&g, &c, &got) {
                    return Err(TestCaseError::fail(e.to_string()));
                }
                // Both in-memory paths, whichever `run` took (another
                // test may hold the team right): each in its own pool.
                let delta = prepare(&g, &c).unwrap();
                let team = with_threads(t, || delta_stepping_team::<f64>(&g, c.source, delta)).unwrap().unwrap();
                prop_assert_eq!(&team.expect("f64 never overflows").0, &want.dist);
                let plain = with_threads(t, || delta_stepping_in_memory::<f64>(&g, c.source, delta)).unwrap().unwrap();
                prop_assert_eq!(&plain.expect("f64 never overflows").0, &want.dist);
            }
        }

        #[test]
        fn integer_weights_take_the_u32_and_u16_words_and_match_dijkstra(
            spec in weighted_graphs(),
            s in 0usize..1000,
            // Powers of two too: integer words then bucket by a shift.
            delta in proptest::option::of(prop_oneof![
                0.25f64..20.0,
                (0u32..5).prop_map(|s| f64::from(1u32 << s)),
            ]),
        ) {
            // Doubled, the generator's halves are integers 0..=20.
            let mut spec = spec;
            for e in &mut spec.edges {
                e.2 *= 2.0;
            }
            let g = spec.build();
            prop_assert!(fits_u32(&g));
            let c = Config { source: (s % g.num_vertices()) as VertexId, delta };
            let want = reference(&g, &c).unwrap();
            let delta = prepare(&g, &c).unwrap();
            for t in THREADS {
                let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
                prop_assert_eq!(&got.dist, &want.dist);
                prop_assert_eq!(&got.parent, &want.parent);
                let team = with_threads(t, || delta_stepping_team::<u32>(&g, c.source, delta)).unwrap().unwrap();
                prop_assert_eq!(&team.expect("fits u32").0, &want.dist);
                let plain = with_threads(t, || delta_stepping_in_memory::<u32>(&g, c.source, delta)).unwrap().unwrap();
                prop_assert_eq!(&plain.expect("fits u32").0, &want.dist);
                // At most 39 edges of weight ≤ 40 per path: u16 always fits.
                prop_assert!(try_u16(&g));
                let team = with_threads(t, || delta_stepping_team::<u16>(&g, c.source, delta)).unwrap().unwrap();
                prop_assert_eq!(&team.expect("fits u16").0, &want.dist);
                let plain = with_threads(t, || delta_stepping_in_memory::<u16>(&g, c.source, delta)).unwrap().unwrap();
                prop_assert_eq!(&plain.expect("fits u16").0, &want.dist);
            }
        }
    }

    #[test]
    fn the_team_moves_its_bucket_window_and_matches_dijkstra() {
        // Δ so small that the path's buckets run far past one window of
        // BIN_WINDOW buckets, with side edges that file vertices far ahead.
        let mut edges: Vec<(VertexId, VertexId, f64)> = (0..299).map(|v| (v, v + 1, 1.0)).collect();
        edges.extend((0..290).step_by(7).map(|v| (v, v + 9, 8.5)));
        let g = Graph::from_weighted_edges(300, &edges, &BuildOptions::directed()).unwrap();
        let c = Config {
            source: 0,
            delta: Some(0.01),
        };
        let want = reference(&g, &c).unwrap();
        // The same graph with doubled (integer) weights, for the u32 word.
        let doubled: Vec<_> = edges.iter().map(|&(u, v, w)| (u, v, 2.0 * w)).collect();
        let g2 = Graph::from_weighted_edges(300, &doubled, &BuildOptions::directed()).unwrap();
        assert!(fits_u32(&g2) && !fits_u32(&g));
        let want2: Vec<f64> = want.dist.iter().map(|d| 2.0 * d).collect();
        for t in [1, 2, 3] {
            let (dist, rounds) = with_threads(t, || delta_stepping_team::<f64>(&g, 0, 0.01))
                .unwrap()
                .unwrap()
                .expect("f64 never overflows");
            assert_eq!(dist, want.dist, "{t} threads");
            assert!(rounds >= 299 / 9, "{t} threads: {rounds} rounds");
            let (dist, rounds) = with_threads(t, || delta_stepping_team::<u32>(&g2, 0, 0.02))
                .unwrap()
                .unwrap()
                .expect("fits u32");
            assert_eq!(dist, want2, "{t} threads, u32");
            assert!(rounds >= 299 / 9, "{t} threads, u32: {rounds} rounds");
            let (dist, _) = with_threads(t, || delta_stepping_team::<u16>(&g2, 0, 0.02))
                .unwrap()
                .unwrap()
                .expect("fits u16");
            assert_eq!(dist, want2, "{t} threads, u16");
        }
    }

    #[test]
    fn the_u16_word_holds_distances_below_65535_and_overflows_are_redone_in_u32() {
        // 65,534, the word's largest distance: u16, exact.
        let top = path(&[30_000.0, 35_534.0]);
        assert!(try_u16(&top));
        // One more: the u16 kernels see the overflow (a sum of 65,535).
        let over = path(&[30_000.0, 35_535.0]);
        assert!(!try_u16(&over));
        for t in THREADS {
            for (g, fits) in [(&top, true), (&over, false)] {
                let team = with_threads(t, || delta_stepping_team::<u16>(g, 0, 1000.0))
                    .unwrap()
                    .unwrap();
                let plain = with_threads(t, || delta_stepping_in_memory::<u16>(g, 0, 1000.0))
                    .unwrap()
                    .unwrap();
                assert_eq!(team.is_some(), fits, "{t} threads, team");
                assert_eq!(plain.is_some(), fits, "{t} threads, rounds");
            }
            let got = with_threads(t, || run(&top, &cfg(0))).unwrap().unwrap();
            assert_eq!(got.dist, vec![0.0, 30_000.0, 65_534.0]);
            let got = with_threads(t, || run(&over, &cfg(0))).unwrap().unwrap();
            assert_eq!(got.dist, vec![0.0, 30_000.0, 65_535.0]);
        }
        // A graph where u16 is likely (weights ≤ 255, mean degree ≥ 4) but
        // the far end lies 334 hops of 255 away: the u16 run stops at the
        // first overflow, and `run` gives u32's exact distances.
        let n = 1000;
        let mut edges = Vec::new();
        for v in 0..n as VertexId {
            for step in 1..=3 {
                if v + step < n as VertexId {
                    edges.push((v, v + step, 255.0));
                }
            }
        }
        let far = Graph::from_weighted_edges(n, &edges, &BuildOptions::undirected()).unwrap();
        assert!(try_u16(&far) && fits_u32(&far));
        let c = cfg(0);
        let want = reference(&far, &c).unwrap();
        assert!(want.dist[n - 1] > 65_535.0);
        let delta = prepare(&far, &c).unwrap();
        for t in THREADS {
            let team = with_threads(t, || delta_stepping_team::<u16>(&far, 0, delta))
                .unwrap()
                .unwrap();
            assert!(team.is_none(), "{t} threads");
            let plain = with_threads(t, || delta_stepping_in_memory::<u16>(&far, 0, delta))
                .unwrap()
                .unwrap();
            assert!(plain.is_none(), "{t} threads");
            let got = with_threads(t, || run(&far, &c)).unwrap().unwrap();
            assert_eq!(got.dist, want.dist, "{t} threads");
            assert_eq!(got.parent, want.parent, "{t} threads");
        }
    }
}
