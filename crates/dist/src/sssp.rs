//! SSSP on the distributed executor: the executor's fast path for `sssp`,
//! delta-stepping (Meyer & Sanders) over each rank's lists with
//! master-only distances, then the driver's own parent phases
//! (`SsspDriver::from_distances`), so distances and parents equal
//! `plexus_engine::algo::sssp::run`'s exactly.
//!
//! Rank `r` keeps the tentative distances, the relax stamps (the distance
//! each vertex last sent along its arcs) and the buckets of its masters
//! `V_r` only. Its push lists hold the arcs `u → v` with `v ∈ V_r`, keyed by
//! source: every arc a rank relaxes lowers one of its own masters, so the
//! minimum per target is taken where the target lives (law 3) and no
//! combined message needs to travel. A round of bucket `k` (Gemini's
//! sparse mode):
//!
//! 1. **signal:** each rank takes its bin `k` and keeps the entries still in
//!    bucket `k` whose distance differs from their stamp (stale and
//!    repeated entries drop out), stamping them: its part of the frontier,
//!    `(u, dist u)` pairs;
//! 2. **exchange:** the ranks all-gather their parts, each with the lowest
//!    non-empty bin left after taking `k` (one all-gather a round);
//! 3. **relax:** every rank offers `dist u + w` over its push list of every
//!    frontier pair (hub lists in blocks of [`EDGE_GRAIN`] arcs), lowering
//!    its masters by an atomic minimum and filing each lowered vertex in
//!    the bin of its new distance (`sssp::bucket`, the driver's
//!    `floor(d / Δ)`);
//! 4. when the whole frontier was empty, every rank moves to the smallest
//!    bin any rank named (all got the same pairs); none left ends the
//!    search.
//!
//! Light and heavy arcs are not split (the engine's kernels do not either:
//! a round relaxes all arcs of its frontier, GAPBS-style). The distances
//! are the least fixed point of `d(v) = min(d(u) + w)` summed left to right
//! in `f64`, which label-correcting reaches in any relaxation order, so
//! they equal the driver's and the in-memory kernel's bit for bit. The
//! distances are then all-gathered (the parent phases read them on every
//! rank) and the driver runs its parent supersteps on this executor.
//! Each round is one step in the statistics (mode [`MODE`]).
use std::collections::BTreeMap;

use plexus_engine::algo::sssp::{bucket, prepare, Config, Output, SsspDriver};
use plexus_engine::program::AtomicF64;
use plexus_graph::VertexId;
use rayon::prelude::*;

use crate::comm::Comm;
use crate::error::{DistError, RunError};
use crate::exec::DistExecutor;
use crate::part::{Arcs, Lists};

/// Arcs per task of a relaxation round; longer lists are split.
pub const EDGE_GRAIN: usize = 2048;
/// The mode of this module's rounds in the executor's statistics.
pub const MODE: &str = "delta-stepping";

/// One rank's delta-stepping state over its masters `lo..lo + dist.len()`.
struct Masters {
    lo: VertexId,
    delta: f64,
    dist: Vec<AtomicF64>,
    /// The distance each master last sent along its arcs (NaN: never).
    stamp: Vec<AtomicF64>,
    /// Bins by bucket: masters filed when lowered (maybe stale since).
    bins: BTreeMap<u64, Vec<VertexId>>,
}

impl Masters {
    /// `u`'s distance if `u` is still in bucket `k` and it differs from the
    /// one `u` last sent, stamping it. A load and a store (two threads
    /// taking one vertex at once may both send it: the same offers twice).
    #[inline]
    fn claim(&self, u: VertexId, k: u64) -> Option<(VertexId, f64)> {
        let i = (u - self.lo) as usize;
        let d = self.dist[i].load();
        // Bit equality: NaN (never sent) differs from every distance.
        let fresh = bucket(d, self.delta) == k && self.stamp[i].load().to_bits() != d.to_bits();
        fresh.then(|| {
            self.stamp[i].store(d);
            (u, d)
        })
    }

    /// Offers `d + w` over the arcs `a..b` of push list `i` of `l`,
    /// filing every master `v` it lowers in `out`.
    #[inline]
    fn relax(&self, l: &Lists, i: usize, d: f64, a: usize, b: usize, out: &mut TaskBins) {
        let (ends, ws) = l.at(i);
        let ws = ws.unwrap_or(&[]);
        for (&v, &w) in ends[a..b].iter().zip(&ws[a..b]) {
            let nd = d + w;
            if self.dist[(v - self.lo) as usize].fetch_min_nonnegative(nd) {
                out.file(bucket(nd, self.delta), v);
            }
        }
    }

    /// One relaxation round over the frontier `front`; lowered masters are
    /// filed in their bins.
    fn round(&mut self, l: &Lists, front: &[(VertexId, f64)]) {
        let tasks: Vec<(usize, f64, usize, usize)> = front
            .par_iter()
            .with_min_len(256)
            .flat_map_iter(|&(u, d)| {
                let (i, len) = l.index(u).map_or((0, 0), |i| (i, l.at(i).0.len()));
                (0..len.div_ceil(EDGE_GRAIN))
                    .map(move |c| (i, d, c * EDGE_GRAIN, ((c + 1) * EDGE_GRAIN).min(len)))
            })
            .collect();
        let this = &*self;
        let lowered: Vec<TaskBins> = tasks
            .par_iter()
            .with_min_len(16)
            .fold(TaskBins::default, |mut acc, &(i, d, a, b)| {
                this.relax(l, i, d, a, b, &mut acc);
                acc
            })
            .collect();
        for (b, mut vs) in lowered.into_iter().flat_map(|t| t.0) {
            self.bins.entry(b).or_default().append(&mut vs);
        }
    }
}

/// The vertices one task of a round lowered, by bucket: a short list
/// (a round's offers fall in few buckets), the last one used tried first,
/// so filing costs no map lookup per vertex.
#[derive(Default)]
struct TaskBins(Vec<(u64, Vec<VertexId>)>);

impl TaskBins {
    #[inline]
    fn file(&mut self, b: u64, v: VertexId) {
        if let Some((last, vs)) = self.0.last_mut() {
            if *last == b {
                vs.push(v);
                return;
            }
        }
        match self.0.iter().position(|(x, _)| *x == b) {
            Some(i) => {
                // Moved last, so the next lookup finds it first.
                let n = self.0.len();
                self.0.swap(i, n - 1);
                self.0[n - 1].1.push(v);
            }
            None => self.0.push((b, vec![v])),
        }
    }
}

/// SSSP from `cfg.source` on the graph `exec` runs on (see the module
/// docs); collective: every rank calls it and gets the same output. `Err`
/// when the driver would refuse `cfg` or the graph (no weights, a negative
/// or NaN weight, a bad source or `Δ`), or with the transport's fault.
pub fn run<C: Comm>(exec: &DistExecutor<'_, C>, cfg: &Config) -> Result<Output, RunError> {
    let view = exec.dist_view();
    let delta = prepare(view, cfg)?;
    let (dist, rounds) = distances(exec, cfg.source, delta)?;
    let driver = SsspDriver::from_distances(view, cfg, dist, rounds)?;
    let out = plexus_engine::driver::drive(exec, driver)?;
    match exec.fault() {
        Some(e) => Err(e.into()),
        None => Ok(out),
    }
}

/// The delta-stepping distances of every vertex (all-gathered) and the
/// number of rounds with a non-empty frontier.
fn distances<C: Comm>(
    exec: &DistExecutor<'_, C>,
    source: VertexId,
    delta: f64,
) -> Result<(Vec<f64>, usize), DistError> {
    let r = exec.part().masters();
    let l = exec.part().push(Arcs::Out);
    let mut m = Masters {
        lo: r.start,
        delta,
        dist: (0..r.len())
            .map(|_| AtomicF64::new(f64::INFINITY))
            .collect(),
        stamp: (0..r.len()).map(|_| AtomicF64::new(f64::NAN)).collect(),
        bins: BTreeMap::new(),
    };
    if r.contains(&source) {
        m.dist[(source - r.start) as usize].store(0.0);
        m.bins.insert(0, vec![source]);
    }
    let (mut k, mut rounds) = (0u64, 0usize);
    loop {
        let taken = m.bins.remove(&k).unwrap_or_default();
        let mine: Vec<(VertexId, f64)> = taken
            .par_iter()
            .with_min_len(1024)
            .filter_map(|&u| m.claim(u, k))
            .collect();
        let next = m.bins.keys().next().copied().unwrap_or(u64::MAX);
        let (front, next) = signal(exec, mine, next).ok_or_else(|| fault(exec))?;
        if front.is_empty() {
            if next == u64::MAX {
                break;
            }
            k = next;
            continue;
        }
        rounds += 1;
        plexus_engine::progress::superstep(front.len() as u64);
        exec.stage(front.len() as u64, || (m.round(l, &front), MODE));
    }
    let mine: Vec<f64> = m.dist.into_iter().map(AtomicF64::into_inner).collect();
    Ok((all_distances(exec, mine)?, rounds))
}

/// The recorded fault (a transport call returned nothing).
fn fault<C: Comm>(exec: &DistExecutor<'_, C>) -> DistError {
    exec.collective_fault()
}

/// Every rank's frontier pairs, in rank order, and the smallest bin any
/// rank has left (`u64::MAX`: none); one all-gather, none on one rank.
/// `None` after a fault, or when a peer's message is malformed (recorded).
fn signal<C: Comm>(
    exec: &DistExecutor<'_, C>,
    mine: Vec<(VertexId, f64)>,
    next: u64,
) -> Option<(Vec<(VertexId, f64)>, u64)> {
    if exec.comm().size() == 1 {
        return Some((mine, next));
    }
    let mut bytes = Vec::with_capacity(8 + 12 * mine.len());
    bytes.extend_from_slice(&next.to_le_bytes());
    for (u, d) in &mine {
        bytes.extend_from_slice(&u.to_le_bytes());
        bytes.extend_from_slice(&d.to_le_bytes());
    }
    drop(mine);
    let all = exec.gather(bytes)?;
    let cuts = exec.part().cuts();
    let (mut front, mut low) = (Vec::new(), u64::MAX);
    for (peer, b) in all.iter().enumerate() {
        match decode(b, cuts.range(peer)) {
            Some((bin, mut pairs)) => {
                low = low.min(bin);
                front.append(&mut pairs);
            }
            None => {
                exec.fail(DistError::Malformed {
                    rank: exec.comm().rank(),
                    peer,
                    what: "a frontier of (vertex, distance) pairs".into(),
                });
                return None;
            }
        }
    }
    Some((front, low))
}

/// A rank's frontier message: its lowest bin, then `(u32 vertex, f64
/// distance)` pairs, little-endian; `None` unless every vertex is in
/// `masters` (the sender's) and every distance finite and not negative.
fn decode(b: &[u8], masters: std::ops::Range<VertexId>) -> Option<(u64, Vec<(VertexId, f64)>)> {
    let (head, rest) = b.split_at_checked(8)?;
    let bin = u64::from_le_bytes(head.try_into().ok()?);
    if !rest.len().is_multiple_of(12) {
        return None;
    }
    let pairs: Vec<(VertexId, f64)> = rest
        .chunks_exact(12)
        .map(|c| {
            let u = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let mut w = [0u8; 8];
            w.copy_from_slice(&c[4..]);
            (u, f64::from_le_bytes(w))
        })
        .collect();
    pairs
        .iter()
        .all(|&(u, d)| masters.contains(&u) && (0.0..=f64::MAX).contains(&d))
        .then_some((bin, pairs))
}

/// Every rank's master distances, concatenated in rank order (one
/// all-gather; none on one rank).
fn all_distances<C: Comm>(
    exec: &DistExecutor<'_, C>,
    mine: Vec<f64>,
) -> Result<Vec<f64>, DistError> {
    exec.gather_master_values(mine, "the distances of its masters", |d| d >= 0.0)
}

#[cfg(test)]
mod tests;
