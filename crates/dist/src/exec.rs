//! [`DistExecutor`]: the engine's [`Executor`] across ranks, SPMD: every
//! rank runs the same driver (`algo::NAME::run_on(&exec, cfg)`) on its own
//! copy of the driver's state, and the executor keeps the copies equal.
//!
//! **Replicated state, partitioned edges.** The contract lets any program
//! method read per-vertex state of vertices a rank does not master
//! (`cond(v)` and a partial dense signal of a mirror `v`, a sparse signal
//! of a mirror `u`, `next_frontier` and `finish` over every vertex), and
//! gives an executor no way to copy a program's state (it is the driver's
//! private atomics). So every rank holds the driver's whole state and
//! applies *every* slot, with the same message, to its copy:
//! - **sparse:** each rank walks its push lists (arcs into its masters)
//!   from the active sources, reading the signal from its own copy (equal to
//!   the master's), and combines the messages per target (law 3); the
//!   combined messages of all masters are all-gathered and every rank
//!   applies each with `sparse_slot`, one call per target.
//! - **dense:** for each target `v` with `cond(v)` that has pull entries on
//!   this rank, the rank folds `dense_signal` over its local in-edges of
//!   `v` (a partial message, law 4) and sends it to `v`'s master; the
//!   master combines the parts in rank order, and the combined messages are
//!   all-gathered and applied with `dense_slot` on every rank.
//! - the mode: forced by the program or the options, or Ligra's rule on
//!   the global `|F| + Σ deg(F)`, one all-reduce of each rank's masters.
//! - `vertex_sum`: each rank sums its masters in fixed 1024-vertex blocks;
//!   the rank sums are all-gathered and added in rank order (the same bits
//!   on every rank).
//! - `process_vertices`: runs on every rank over the whole subset (the step
//!   writes the driver's state, which must stay equal everywhere); no
//!   communication.
//!
//! - **one rank** exchanges nothing and runs the in-memory loop shapes
//!   over its lists: a dense step applies each slot right after its
//!   signal, one task per 64-vertex word of the next frontier's bitmap; a
//!   sparse step applies a slot per edge (law 3), hub lists split into
//!   blocks.
//!
//! Every rank applies the same messages in the same way, so the copies
//! stay bit-identical, and every driver decision (frontier sizes, sums) is
//! the same on every rank. Edge work and message combining are
//! partitioned; slot application and vertex steps are replicated
//! (O(|V|) per rank per dense step): see `docs/dist.md`.
//!
//! A transport error (a lost rank, a timeout) cannot be returned through
//! [`Executor`]: it is recorded, later supersteps return empty frontiers and
//! sums return 0 (so drivers end), and [`DistExecutor::fault`] returns it;
//! callers check it after a run.
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use plexus_engine::edge_map::{Direction, Mode, DEFAULT_THRESHOLD_DIVISOR};
use plexus_engine::program::{
    Active, Executor, GraphView, InEdges, Modes, Step, StepOptions, Traversal, VertexProgram,
    Vertices, Wire,
};
use plexus_engine::subset::{bit, VertexSubset};
use plexus_graph::tiles::Tiles;
use plexus_graph::{Graph, VertexId, Weight};
use rayon::prelude::*;
use serde::Serialize;

use crate::comm::Comm;
use crate::error::{DistError, Result};
use crate::part::{Arcs, Lists, Part};
use crate::view::DistView;

/// What one superstep cost on this rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StepStats {
    /// `"sparse"` or `"dense"`.
    pub mode: &'static str,
    /// Active vertices (global).
    pub frontier: u64,
    /// Bytes this rank sent to other ranks.
    pub bytes_sent: u64,
    /// Bytes this rank received from other ranks.
    pub bytes_received: u64,
    /// Milliseconds computing (wall time less `comm_ms`).
    pub compute_ms: f64,
    /// Milliseconds in the transport (waiting included).
    pub comm_ms: f64,
}

/// Transport counters and the first fault.
#[derive(Debug, Default)]
struct Ledger {
    fault: Option<DistError>,
    sent: u64,
    received: u64,
    comm_s: f64,
    steps: Vec<StepStats>,
}

/// The distributed executor of one rank (see the module docs).
#[derive(Debug)]
pub struct DistExecutor<'c, C: Comm> {
    comm: &'c C,
    part: Part,
    view: DistView,
    ledger: Mutex<Ledger>,
    /// The targets of dense steps on several ranks, per traversal
    /// (forward, reverse, symmetric): made on first use.
    targets: [OnceLock<Vec<VertexId>>; 3],
    /// Tiles of the forward pull lists for PageRank's gather
    /// ([`crate::pagerank`]), where the store would tile a graph of this
    /// size (targets by master on one rank, by key index on several):
    /// made on first use, so other algorithms never pay for them.
    tiles: OnceLock<Option<Tiles>>,
}

/// The build identity exchanged at start: a hash of the running
/// executable's bytes (`/proc/self/exe`), so ranks started from different
/// binaries refuse to run together even at one crate version; the crate's
/// name and version when the executable cannot be read. Computed once.
pub fn build_id() -> u64 {
    static ID: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *ID.get_or_init(|| {
        std::env::current_exe()
            .and_then(hash_file)
            .unwrap_or_else(|_| {
                let s = concat!(env!("CARGO_PKG_NAME"), " ", env!("CARGO_PKG_VERSION"));
                s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
                })
            })
    })
}

/// A 64-bit hash of a file's bytes, read in 1 MiB blocks, eight bytes at a
/// time (not cryptographic: it tells builds apart, it does not authenticate).
fn hash_file(path: std::path::PathBuf) -> std::io::Result<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    let mut len = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        len += k as u64;
        for w in buf[..k].chunks(8) {
            let mut b = [0u8; 8];
            b[..w.len()].copy_from_slice(w);
            h = (h ^ u64::from_le_bytes(b))
                .wrapping_mul(0xff51_afd7_ed55_8ccd)
                .rotate_left(31);
        }
    }
    Ok(h ^ len)
}

impl<'c, C: Comm> DistExecutor<'c, C> {
    /// This rank's executor over `g`, which every rank must open the same
    /// (checked first: the ranks exchange a fingerprint of the graph and
    /// the build, and refuse to start on a mismatch). Collective: every
    /// rank of `comm` calls it. No rank reads the whole graph: the view is
    /// gathered from even shares ([`DistView::gather`]) and each rank
    /// reads only its masters' lists ([`Part::from_slices`]); on a
    /// memory-mapped store only those pages are touched.
    pub fn new(comm: &'c C, g: &Graph) -> Result<Self> {
        handshake(comm, crate::view::fingerprint(g))?;
        let (view, cuts) = DistView::gather(comm, g)?;
        let part = Part::from_slices(g, cuts, comm.rank());
        Ok(DistExecutor::assemble(comm, view, part))
    }

    /// This rank's executor over a part and view loaded without the graph
    /// (a part file of `plexus partition`). Collective; the ranks refuse
    /// to start unless every rank holds its own rank's part of the same
    /// partition into `comm.size()` parts, from the same build.
    pub fn from_part(comm: &'c C, view: DistView, part: Part) -> Result<Self> {
        if part.cuts().ranks() != comm.size() || part.rank() != comm.rank() {
            return Err(DistError::Mismatch {
                rank: comm.rank(),
                what: format!(
                    "this rank holds part {} of {}, not part {} of {}",
                    part.rank(),
                    part.cuts().ranks(),
                    comm.rank(),
                    comm.size()
                ),
            });
        }
        if !part.ends_are_masters() {
            return Err(DistError::Mismatch {
                rank: comm.rank(),
                what: "this rank's part holds arcs that do not end at its masters".into(),
            });
        }
        let mut h = view.checksum();
        for &b in part.cuts().bounds() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        handshake(comm, h)?;
        Ok(DistExecutor::assemble(comm, view, part))
    }

    fn assemble(comm: &'c C, view: DistView, part: Part) -> Self {
        DistExecutor {
            comm,
            part,
            view,
            ledger: Mutex::new(Ledger::default()),
            targets: Default::default(),
            tiles: OnceLock::new(),
        }
    }

    /// This executor with tiles of the given shape (segments of `2^shift`
    /// sources, blocks of at most `block_targets` targets) for PageRank's
    /// gather, whatever the graph's size (tests use small ones).
    pub fn with_tiles(mut self, shift: u32, block_targets: usize) -> Self {
        let p = &self.part;
        self.tiles = OnceLock::from(crate::pagerank::tiles_of(
            p.pull(Arcs::Out),
            p.masters(),
            self.comm.size() == 1,
            Some((shift, block_targets)),
        ));
        self
    }

    /// The tiles of the forward pull lists where the graph is large enough
    /// to tile (made on the first call; a caller that times the algorithm
    /// calls it during set-up).
    pub fn pull_tiles(&self) -> Option<&Tiles> {
        self.tiles
            .get_or_init(|| {
                let p = &self.part;
                crate::pagerank::tiles_of(
                    p.pull(Arcs::Out),
                    p.masters(),
                    self.comm.size() == 1,
                    None,
                )
            })
            .as_ref()
    }

    /// The whole-graph facts every rank holds.
    pub fn dist_view(&self) -> &DistView {
        &self.view
    }

    /// This rank's part of the graph.
    pub fn part(&self) -> &Part {
        &self.part
    }

    /// The first transport error of the run, if any (results computed after
    /// one are not valid).
    pub fn fault(&self) -> Option<DistError> {
        self.ledger().fault.clone()
    }

    /// The statistics of every superstep run so far on this rank.
    pub fn steps(&self) -> Vec<StepStats> {
        self.ledger().steps.clone()
    }

    /// Bytes sent and received by this rank so far, supersteps and sums.
    pub fn bytes(&self) -> (u64, u64) {
        let l = self.ledger();
        (l.sent, l.received)
    }

    /// The transport.
    pub(crate) fn comm(&self) -> &'c C {
        self.comm
    }

    /// Runs `f` as one step of this rank's statistics: its wall time, the
    /// transport's share of it and the bytes it moved, under the mode `f`
    /// names; `frontier` is the step's active vertex count.
    pub(crate) fn stage<T>(&self, frontier: u64, f: impl FnOnce() -> (T, &'static str)) -> T {
        let started = Instant::now();
        let (sent0, received0, comm0) = {
            let l = self.ledger();
            (l.sent, l.received, l.comm_s)
        };
        let (out, mode) = f();
        let mut l = self.ledger();
        let comm_s = l.comm_s - comm0;
        let stats = StepStats {
            mode,
            frontier,
            bytes_sent: l.sent - sent0,
            bytes_received: l.received - received0,
            compute_ms: (started.elapsed().as_secs_f64() - comm_s).max(0.0) * 1e3,
            comm_ms: comm_s * 1e3,
        };
        l.steps.push(stats);
        out
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the transport unless a fault was recorded; counts its
    /// time and bytes (`sent` is known up front, received bytes are what
    /// `received` says of the answer); records its error.
    fn talk<T>(
        &self,
        sent: u64,
        f: impl FnOnce(&C) -> Result<T>,
        received: impl Fn(&T) -> u64,
    ) -> Option<T> {
        if self.ledger().fault.is_some() {
            return None;
        }
        let t = Instant::now();
        let r = f(self.comm);
        let mut l = self.ledger();
        l.comm_s += t.elapsed().as_secs_f64();
        match r {
            Ok(x) => {
                l.sent += sent;
                l.received += received(&x);
                Some(x)
            }
            Err(e) => {
                l.fault = Some(e);
                None
            }
        }
    }

    /// `all_gather` of `mine`, counted; `None` after a fault.
    pub(crate) fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        let me = self.comm.rank();
        let sent = mine.len() as u64 * (self.comm.size() as u64 - 1);
        self.talk(sent, |c| c.all_gather(&mine), |all| others(all, me))
    }

    /// Every rank's values of its masters (`mine`: this rank's, in master
    /// order), concatenated in rank order: one all-gather, none on one
    /// rank. A peer's block of the wrong length, or holding a value that
    /// fails `valid`, is refused as malformed `what`.
    pub(crate) fn gather_master_values(
        &self,
        mine: Vec<f64>,
        what: &str,
        valid: impl Fn(f64) -> bool + Sync,
    ) -> Result<Vec<f64>> {
        if self.comm.size() == 1 {
            return Ok(mine);
        }
        let bytes: Vec<u8> = mine.iter().flat_map(|x| x.to_le_bytes()).collect();
        let all = self.gather(bytes).ok_or_else(|| self.collective_fault())?;
        let cuts = self.part.cuts();
        let value = |c: &[u8]| f64::from_le_bytes(c.try_into().unwrap_or([0xff; 8]));
        let mut out = Vec::with_capacity(cuts.bounds().last().map_or(0, |&n| n as usize));
        for (peer, b) in all.iter().enumerate() {
            let ok = b.len() == 8 * cuts.range(peer).len()
                && b.par_chunks_exact(8)
                    .with_min_len(1024)
                    .all(|c| valid(value(c)));
            if !ok {
                return Err(DistError::Malformed {
                    rank: self.comm.rank(),
                    peer,
                    what: what.into(),
                });
            }
            out.extend(b.chunks_exact(8).map(value));
        }
        Ok(out)
    }

    /// The recorded fault, or a generic one when a collective gave nothing.
    pub(crate) fn collective_fault(&self) -> DistError {
        self.fault()
            .unwrap_or_else(|| DistError::Invalid("a collective failed".into()))
    }

    /// `all_to_all` of `out`, counted; `None` after a fault.
    pub(crate) fn exchange(&self, out: Vec<Vec<u8>>) -> Option<Vec<Vec<u8>>> {
        let me = self.comm.rank();
        let sent = out
            .iter()
            .enumerate()
            .filter(|&(r, _)| r != me)
            .map(|(_, b)| b.len() as u64)
            .sum();
        self.talk(sent, |c| c.all_to_all(out), |all| others(all, me))
    }

    /// Records `e` as the fault unless one is recorded.
    pub(crate) fn fail(&self, e: DistError) {
        let mut l = self.ledger();
        if l.fault.is_none() {
            l.fault = Some(e);
        }
    }

    /// Decodes every rank's `(vertex, message)` list, in rank order.
    fn decode_all<M: Wire>(&self, all: Vec<Vec<u8>>) -> Option<Vec<(VertexId, M)>> {
        let mut out = Vec::new();
        for (r, bytes) in all.iter().enumerate() {
            match decode_pairs::<M>(bytes, self.view.num_vertices()) {
                Some(mut x) => out.append(&mut x),
                None => {
                    self.fail(DistError::Malformed {
                        rank: self.comm.rank(),
                        peer: r,
                        what: "message list".into(),
                    });
                    return None;
                }
            }
        }
        Some(out)
    }

    /// Every rank's combined messages (`mine` for this rank's masters), in
    /// rank order: all-gathered, except on one rank, where they stay as
    /// they are (no encoding).
    fn replicate<M: Wire>(&self, mine: Vec<(VertexId, M)>) -> Option<Vec<(VertexId, M)>> {
        if self.comm.size() == 1 {
            return Some(mine);
        }
        let all = self.gather(encode_pairs(&mine))?;
        drop(mine);
        self.decode_all::<M>(all)
    }

    /// The degree a traversal walks from `u` (Ligra's work measure).
    fn walk_degree(&self, u: VertexId, t: Traversal) -> u64 {
        let v = &self.view;
        let d = if t.reverse {
            v.in_degree(u)
        } else {
            v.out_degree(u)
        };
        let extra = if t.symmetric { v.in_degree(u) } else { 0 };
        (d + extra) as u64
    }

    /// The mode of a superstep: forced, or Ligra's rule on the global work
    /// (one all-reduce of the masters' shares).
    fn choose_mode<P: VertexProgram>(
        &self,
        frontier: &VertexSubset,
        opts: &StepOptions,
        t: Traversal,
    ) -> Mode {
        match (P::MODES, opts.direction) {
            (Modes::SparseOnly, _) | (Modes::Both, Direction::Push) => return Mode::Sparse,
            (Modes::DenseOnly, _) | (Modes::Both, Direction::Pull) => return Mode::Dense,
            _ => {}
        }
        if frontier.is_empty() {
            return Mode::Sparse;
        }
        let r = self.part.masters();
        let work = |u: VertexId| 1 + self.walk_degree(u, t);
        let local: u64 = match (frontier.as_sparse(), frontier.as_bitmap()) {
            (Some(ids), _) => ids
                .par_iter()
                .filter(|u| r.contains(u))
                .map(|&u| work(u))
                .sum(),
            (None, Some(words)) => r
                .into_par_iter()
                .with_min_len(1024)
                .filter(|&u| bit(words, u))
                .map(work)
                .sum(),
            (None, None) => r.into_par_iter().map(work).sum(),
        };
        let global = self
            .talk(
                8 * (self.comm.size() as u64 - 1),
                |c| c.all_reduce_sum(&[local]),
                |_| 8 * (self.comm.size() as u64 - 1),
            )
            .and_then(|x| x.first().copied())
            .unwrap_or(0);
        let threshold = opts
            .threshold
            .unwrap_or(self.view.num_arcs() / DEFAULT_THRESHOLD_DIVISOR);
        if global > threshold {
            Mode::Dense
        } else {
            Mode::Sparse
        }
    }

    /// The lists a step walks: `(push, pull)`, each one or two, in the
    /// order the in-memory kernel folds them (`dense_vertex`: the gathered
    /// lists first, then the pushed-along ones when symmetric).
    fn lists(&self, t: Traversal) -> (Vec<&Lists>, Vec<&Lists>) {
        let p = &self.part;
        if t.reverse {
            (vec![p.push(Arcs::In)], vec![p.pull(Arcs::In)])
        } else if t.symmetric {
            (
                vec![p.push(Arcs::Out), p.push(Arcs::In)],
                vec![p.pull(Arcs::Out), p.pull(Arcs::In)],
            )
        } else {
            (vec![p.push(Arcs::Out)], vec![p.pull(Arcs::Out)])
        }
    }

    /// A sparse step; returns the activated vertices (every rank the same).
    fn sparse<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        t: Traversal,
    ) -> VertexSubset {
        let n = self.view.num_vertices();
        let converted;
        let ids = match frontier.as_sparse() {
            Some(ids) => ids,
            None => {
                converted = frontier.to_sparse();
                converted.as_sparse().unwrap_or(&[])
            }
        };
        let (push, _) = self.lists(t);
        if self.comm.size() == 1 {
            return VertexSubset::from_distinct_ids(n, push_local(p, ids, &push));
        }
        let mut msgs: Vec<(VertexId, P::Msg)> = ids
            .par_iter()
            .with_min_len(64)
            .flat_map_iter(|&u| {
                let mut out = Vec::new();
                if push.iter().any(|l| l.contains(u)) {
                    if let Some(m) = p.sparse_signal(u) {
                        for l in &push {
                            let (ends, ws) = l.get(u);
                            for (i, &v) in ends.iter().enumerate() {
                                let w = ws.map_or(1.0, |ws| ws[i]);
                                out.push((v, p.over_edge(m.clone(), w)));
                            }
                        }
                    }
                }
                out
            })
            .collect();
        msgs.par_sort_by_key(|&(v, _)| v);
        let mut finals: Vec<(VertexId, P::Msg)> = Vec::new();
        for (v, m) in msgs {
            match finals.last_mut() {
                Some((last, acc)) if *last == v => {
                    let a = std::mem::replace(acc, m.clone());
                    *acc = p.combine(a, m);
                }
                _ => finals.push((v, m)),
            }
        }
        let Some(all) = self.replicate(finals) else {
            return VertexSubset::empty(n);
        };
        let woke = all
            .into_par_iter()
            .with_min_len(64)
            .filter_map(|(v, m)| p.sparse_slot(v, m).then_some(v))
            .collect();
        VertexSubset::from_distinct_ids(n, woke)
    }

    /// The targets of a dense step on several ranks, ascending: every
    /// vertex with entries in `pull`, and every master (the master folds
    /// its own part even when empty, as `dense_vertex` does: a signal over
    /// no edges may still say something). Made once per traversal.
    fn targets(&self, t: Traversal, pull: &[&Lists]) -> &[VertexId] {
        let i = usize::from(t.reverse) + 2 * usize::from(t.symmetric);
        self.targets[i].get_or_init(|| {
            let mine = self.part.masters();
            let mut keys: Vec<VertexId> = pull
                .iter()
                .flat_map(|l| l.keys().iter().copied())
                .filter(|v| !mine.contains(v))
                .chain(mine.clone())
                .collect();
            keys.par_sort_unstable();
            keys.dedup();
            keys
        })
    }

    /// This rank's partial dense messages, ascending by target.
    fn partials<P: VertexProgram>(
        &self,
        p: &P,
        t: Traversal,
        pull: &[&Lists],
        active: Active<'_>,
    ) -> Vec<(VertexId, P::Msg)> {
        let mine = self.part.masters();
        self.targets(t, pull)
            .par_iter()
            .with_min_len(64)
            .filter_map(|&v| fold(p, v, pull, active, mine.contains(&v)).map(|m| (v, m)))
            .collect()
    }

    /// A dense step; returns the activated vertices (every rank the same).
    fn dense<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        t: Traversal,
    ) -> VertexSubset {
        let n = self.view.num_vertices();
        let converted;
        let active = if frontier.len() == n {
            Active::All
        } else {
            match frontier.as_bitmap() {
                Some(w) => Active::Bitmap(w),
                None => {
                    converted = frontier.to_dense();
                    Active::Bitmap(converted.as_bitmap().unwrap_or(&[]))
                }
            }
        };
        let (_, pull) = self.lists(t);
        if self.comm.size() == 1 {
            return pull_local(p, &pull, active, n);
        }
        let partials = self.partials(p, t, &pull, active);
        // To the masters: the partials are ascending, so each master's
        // share is one run.
        let cuts = self.part.cuts();
        let out: Vec<Vec<u8>> = (0..self.comm.size())
            .map(|r| {
                let range = cuts.range(r);
                let lo = partials.partition_point(|x| x.0 < range.start);
                let hi = partials.partition_point(|x| x.0 < range.end);
                encode_pairs(&partials[lo..hi])
            })
            .collect();
        drop(partials);
        let Some(got) = self.exchange(out) else {
            return VertexSubset::empty(n);
        };
        let Some(parts) = self.decode_all::<P::Msg>(got) else {
            return VertexSubset::empty(n);
        };
        // Combined at the master, in rank order.
        let mine = self.part.masters();
        let mut acc: Vec<Option<P::Msg>> = vec![None; mine.len()];
        for (v, m) in parts {
            if !mine.contains(&v) {
                self.fail(DistError::Malformed {
                    rank: self.comm.rank(),
                    peer: cuts.owner(v),
                    what: format!("a dense message for vertex {v}, not mastered here"),
                });
                return VertexSubset::empty(n);
            }
            let slot = &mut acc[(v - mine.start) as usize];
            *slot = Some(match slot.take() {
                Some(a) => p.combine(a, m),
                None => m,
            });
        }
        let finals: Vec<(VertexId, P::Msg)> = acc
            .into_iter()
            .enumerate()
            .filter_map(|(i, m)| m.map(|m| (mine.start + i as VertexId, m)))
            .collect();
        let Some(all) = self.replicate(finals) else {
            return VertexSubset::empty(n);
        };
        let woke = all
            .into_par_iter()
            .with_min_len(64)
            .filter_map(|(v, m)| p.dense_slot(v, m).then_some(v))
            .collect();
        VertexSubset::from_distinct_ids(n, woke)
    }
}

/// Lists longer than this are split into blocks of [`PUSH_BLOCK`] entries
/// by a sparse step on one rank (the in-memory push's rule for hubs).
const HEAVY: usize = 1 << 14;
/// See [`HEAVY`].
const PUSH_BLOCK: usize = 1 << 12;
/// How many vertex ids ahead a dense step on one rank prefetches a list.
const PREFETCH_AHEAD: usize = 16;

/// `v`'s dense message over its lists in `pull` (in `dense_vertex`'s
/// order, `cond` before each), or `None`. Only `v`'s master (`master`)
/// signals over an empty list, so that part counts once (law 4).
#[inline]
fn fold<P: VertexProgram>(
    p: &P,
    v: VertexId,
    pull: &[&Lists],
    active: Active<'_>,
    master: bool,
) -> Option<P::Msg> {
    let mut msg: Option<P::Msg> = None;
    for l in pull {
        if !p.cond(v) {
            break;
        }
        let (src, ws) = l.get(v);
        if src.is_empty() && !master {
            continue;
        }
        if let Some(m) = p.dense_signal(v, InEdges::new(src, ws, active)) {
            msg = Some(match msg {
                Some(a) => p.combine(a, m),
                None => m,
            });
        }
    }
    msg
}

/// The dense step of a lone rank, which masters every vertex: as the
/// in-memory pull, each word of 64 vertices on one task, each vertex's
/// signal folded over its lists and its slot applied at once; the
/// activated vertices as a bitmap.
fn pull_local<P: VertexProgram>(
    p: &P,
    pull: &[&Lists],
    active: Active<'_>,
    n: usize,
) -> VertexSubset {
    let ahead = |v: usize| {
        if let Some(l) = pull.first() {
            let (_, offsets, ends, _) = l.raw();
            let a = v + PREFETCH_AHEAD;
            if a < n && p.cond(a as VertexId) {
                if let Some(i) = l.index(a as VertexId) {
                    plexus_engine::prefetch::prefetch(ends, offsets[i] as usize);
                }
            }
        }
    };
    select(n, |v| {
        ahead(v as usize);
        fold(p, v, pull, active, true).is_some_and(|m| p.dense_slot(v, m))
    })
}

/// The vertices of `0..n` for which `f` holds, as a bitmap: each word of
/// 64 vertices on one task, `f` once per vertex.
fn select(n: usize, f: impl Fn(VertexId) -> bool + Sync) -> VertexSubset {
    let mut words = vec![0u64; n.div_ceil(64)];
    words
        .par_iter_mut()
        .enumerate()
        .with_min_len(4)
        .for_each(|(j, w)| {
            let lo = j * 64;
            let mut x = 0u64;
            for v in lo..(lo + 64).min(n) {
                if f(v as VertexId) {
                    x |= 1 << (v - lo);
                }
            }
            *w = x;
        });
    VertexSubset::from_bitmap(n, words)
}

/// The sparse step of a lone rank: every slot applied as its message
/// arrives over an edge (law 3: as the combined message would be), as the
/// in-memory push does, lists longer than [`HEAVY`] split into blocks;
/// the activated vertices.
fn push_local<P: VertexProgram>(p: &P, ids: &[VertexId], push: &[&Lists]) -> Vec<VertexId> {
    let degree = |u: VertexId| push.iter().map(|l| l.get(u).0.len()).sum::<usize>();
    let mut parts: Vec<Vec<VertexId>> = ids
        .par_iter()
        .with_min_len(64)
        .fold(Vec::new, |mut acc, &u| {
            let d = degree(u);
            if d > 0 && d <= HEAVY {
                if let Some(m) = p.sparse_signal(u) {
                    for l in push {
                        let (ends, ws) = l.get(u);
                        push_edges(p, &m, ends, ws, &mut acc);
                    }
                }
            }
            acc
        })
        .collect();
    for &u in ids.iter().filter(|&&u| degree(u) > HEAVY) {
        let Some(m) = p.sparse_signal(u) else {
            continue;
        };
        for l in push {
            let (ends, ws) = l.get(u);
            let blocks: Vec<Vec<VertexId>> = (0..ends.len().div_ceil(PUSH_BLOCK))
                .into_par_iter()
                .map(|b| {
                    let r = b * PUSH_BLOCK..((b + 1) * PUSH_BLOCK).min(ends.len());
                    let mut acc = Vec::new();
                    push_edges(p, &m, &ends[r.clone()], ws.map(|w| &w[r]), &mut acc);
                    acc
                })
                .collect();
            parts.extend(blocks);
        }
    }
    parts.concat()
}

/// `sparse_slot(v, over_edge(m, w))` over the entries `ends` (weights
/// `ws`, 1.0 when none), appending each activated `v` to `acc`.
#[inline]
fn push_edges<P: VertexProgram>(
    p: &P,
    m: &P::Msg,
    ends: &[VertexId],
    ws: Option<&[Weight]>,
    acc: &mut Vec<VertexId>,
) {
    match ws {
        Some(ws) => {
            for (&v, &w) in ends.iter().zip(ws) {
                if p.sparse_slot(v, p.over_edge(m.clone(), w)) {
                    acc.push(v);
                }
            }
        }
        None => {
            for &v in ends {
                if p.sparse_slot(v, p.over_edge(m.clone(), 1.0)) {
                    acc.push(v);
                }
            }
        }
    }
}

/// Bytes received from ranks other than `me`.
fn others(all: &[Vec<u8>], me: usize) -> u64 {
    all.iter()
        .enumerate()
        .filter(|&(r, _)| r != me)
        .map(|(_, b)| b.len() as u64)
        .sum()
}

/// `(vertex, message)` pairs as bytes: a `u64` count, then each vertex
/// (`u32`) and message ([`Wire`]).
fn encode_pairs<M: Wire>(pairs: &[(VertexId, M)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + pairs.len() * 12);
    (pairs.len() as u64).encode(&mut out);
    for (v, m) in pairs {
        v.encode(&mut out);
        m.encode(&mut out);
    }
    out
}

/// The inverse of [`encode_pairs`]; `None` when the bytes are malformed or
/// name a vertex `>= n`.
fn decode_pairs<M: Wire>(bytes: &[u8], n: usize) -> Option<Vec<(VertexId, M)>> {
    let mut s = bytes;
    let count = usize::try_from(u64::decode(&mut s)?).ok()?;
    let mut out = Vec::with_capacity(count.min(s.len() / 4));
    for _ in 0..count {
        let v = VertexId::decode(&mut s)?;
        if v as usize >= n {
            return None;
        }
        out.push((v, M::decode(&mut s)?));
    }
    s.is_empty().then_some(out)
}

/// Exchanges the graph's checksum, the build and the rank count; every
/// rank refuses to start unless all agree with rank 0.
fn handshake<C: Comm>(comm: &C, graph: u64) -> Result<()> {
    let mut mine = Vec::with_capacity(24);
    graph.encode(&mut mine);
    build_id().encode(&mut mine);
    (comm.size() as u64).encode(&mut mine);
    let all = comm.all_gather(&mine)?;
    for (r, theirs) in all.iter().enumerate() {
        if theirs.len() != mine.len() {
            return Err(DistError::Mismatch {
                rank: comm.rank(),
                what: format!("rank {r} sent a handshake of {} bytes", theirs.len()),
            });
        }
        let field = |i: usize, b: &[u8]| {
            u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]))
        };
        for (i, name) in ["graph checksum", "build", "rank count"].iter().enumerate() {
            if field(i, theirs) != field(i, &all[0]) {
                return Err(DistError::Mismatch {
                    rank: comm.rank(),
                    what: format!("rank {r}'s {name} differs from rank 0's"),
                });
            }
        }
    }
    Ok(())
}

impl<C: Comm> Vertices for DistExecutor<'_, C> {
    fn view(&self) -> &dyn GraphView {
        &self.view
    }

    fn process_vertices<F: Fn(VertexId) -> bool + Sync>(
        &self,
        subset: &VertexSubset,
        f: F,
    ) -> VertexSubset {
        let n = subset.num_vertices();
        if subset.len() == n {
            return select(n, f);
        }
        if let Some(words) = subset.as_bitmap() {
            return select(n, |v| bit(words, v) && f(v));
        }
        let ids = subset.as_sparse().unwrap_or(&[]);
        let kept = ids
            .par_iter()
            .with_min_len(256)
            .copied()
            .filter(|&v| f(v))
            .collect();
        VertexSubset::from_distinct_ids(n, kept)
    }

    fn vertex_sum<F: Fn(VertexId) -> f64 + Sync>(&self, f: F) -> f64 {
        const BLOCK: u32 = 1024;
        let r = self.part.masters();
        let blocks: Vec<f64> = (0..r.len().div_ceil(BLOCK as usize) as u32)
            .into_par_iter()
            .map(|b| {
                let s = r.start + b * BLOCK;
                (s..(s + BLOCK).min(r.end)).fold(0.0, |acc, v| acc + f(v))
            })
            .collect();
        let local: f64 = blocks.iter().sum();
        let Some(all) = self.gather(local.to_bits().to_le_bytes().to_vec()) else {
            return 0.0;
        };
        all.iter()
            .map(|b| f64::from_bits(u64::from_le_bytes(b[..].try_into().unwrap_or([0; 8]))))
            .sum()
    }
}

impl<C: Comm> Executor for DistExecutor<'_, C> {
    fn superstep<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
    ) -> Step {
        plexus_engine::progress::superstep(frontier.len() as u64);
        let n = self.view.num_vertices();
        let t = Traversal::new(self.view.is_directed(), opts);
        let (next, mode) = self.stage(frontier.len() as u64, || {
            let mode = self.choose_mode::<P>(frontier, opts, t);
            let next = if self.ledger().fault.is_some() {
                VertexSubset::empty(n)
            } else {
                match mode {
                    Mode::Sparse => self.sparse(p, frontier, t),
                    Mode::Dense => self.dense(p, frontier, t),
                }
            };
            let name = match mode {
                Mode::Sparse => "sparse",
                Mode::Dense => "dense",
            };
            ((next, mode), name)
        });
        let next = if self.ledger().fault.is_some() {
            VertexSubset::empty(n)
        } else {
            next
        };
        Step { next, mode }
    }
}
