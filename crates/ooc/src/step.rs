//! The edge step of one superstep as a visitor of a walk's batches: a
//! [`SparseVisit`] pushes each source's signal into the message logs, a
//! [`DenseVisit`] folds each vertex's gathered lists into its slot. The
//! executor's own supersteps and the shared passes of [`crate::shared`]
//! run the same visitors, so a job computes the same in both; a shared
//! walk hands every job the union of the jobs' lists, and each visitor
//! skips the vertices that are not its own (sparse: not in its frontier;
//! dense: `cond` false).
use std::sync::atomic::{AtomicU64, Ordering};

use plexus_engine::program::{Active, InEdges, VertexProgram};
use plexus_engine::subset::{bit, VertexSubset};
use plexus_graph::VertexId;
use rayon::prelude::*;

use crate::error::{OocError, Result};
use crate::logs::{LogCounters, LogDir, Logs};
use crate::plan::Plan;
use crate::reader::Item;

/// The push step of one program: signals over edges into per-interval
/// logs; [`SparseVisit::finish`] applies them with `sparse_slot`.
pub(crate) struct SparseVisit<'a, P: VertexProgram> {
    p: &'a P,
    plan: &'a Plan,
    logs: Logs<'a, P>,
    /// The source being visited and its signal.
    cur: Option<(VertexId, Option<P::Msg>)>,
    /// Only these sources push (`None`: every visited vertex).
    only: Option<Vec<u64>>,
    err: Option<OocError>,
}

impl<'a, P: VertexProgram> SparseVisit<'a, P> {
    /// A push step of `p` with logs in `dir`, sized by `plan` (one buffer
    /// per interval and one to read back; at most that much again written
    /// but not yet dropped from the page cache).
    pub fn new(
        p: &'a P,
        plan: &'a Plan,
        dir: &'a LogDir,
        counters: &'a LogCounters,
        only: Option<Vec<u64>>,
    ) -> Self {
        let k = plan.intervals();
        let buffers = plan.log_bytes * (k as u64 + 1);
        SparseVisit {
            p,
            plan,
            logs: Logs::new(p, dir, counters, k, plan.log_bytes, buffers),
            cur: None,
            only,
            err: None,
        }
    }

    /// Pushes the signals of a batch's sources.
    pub fn visit(&mut self, items: &[Item<'_>]) {
        let p = self.p;
        for it in items {
            if self.err.is_some() || self.only.as_ref().is_some_and(|b| !bit(b, it.v)) {
                continue;
            }
            if self.cur.as_ref().map(|c| c.0) != Some(it.v) {
                self.cur = Some((it.v, p.sparse_signal(it.v)));
            }
            let Some((_, Some(m))) = &self.cur else {
                continue;
            };
            for (i, &d) in it.targets.iter().enumerate() {
                let w = it.weights.map_or(1.0, |ws| ws[i]);
                let msg = p.over_edge(m.clone(), w);
                if let Err(e) = self.logs.push(self.plan.interval_of(d), d, msg) {
                    self.err = Some(e);
                    return;
                }
            }
        }
    }

    /// Reads every interval's log back and applies its messages; returns
    /// the activated vertices (ids, as a sparse step's next frontier).
    pub fn finish(self) -> Result<VertexSubset> {
        // The last interval ends at the graph's vertex count.
        let n = self.plan.starts.last().map_or(0, |&s| s as usize);
        Ok(VertexSubset::from_ids(n, self.activated()?))
    }

    /// The activated vertices, after applying every interval's log.
    fn activated(mut self) -> Result<Vec<VertexId>> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        let p = self.p;
        let mut out = Vec::new();
        for i in 0..self.plan.intervals() {
            self.logs.drain(i, &mut |v, m| {
                if p.sparse_slot(v, m) {
                    out.push(v);
                }
            })?;
        }
        Ok(out)
    }
}

/// The pull step of one program: each visited vertex whose `cond` holds
/// folds its signals over its lists (pieces of a list longer than the
/// buffer combined in order, law 4) and applies its slot.
pub(crate) struct DenseVisit<'a, P: VertexProgram> {
    p: &'a P,
    /// The frontier as a bitmap (`None`: every vertex is active).
    active: Option<Vec<u64>>,
    /// The vertex being gathered in pieces: its id, whether it takes
    /// messages, and its signal so far.
    cur: Option<(VertexId, bool, Option<P::Msg>)>,
    /// The activated vertices, a bit each (n / 8 bytes whatever their
    /// number: a dense step may activate every vertex).
    out: Vec<AtomicU64>,
    /// Vertices in the graph.
    n: usize,
    /// Where each vertex's items begin in a batch (kept across batches).
    starts: Vec<usize>,
}

impl<'a, P: VertexProgram> DenseVisit<'a, P> {
    /// A pull step of `p` on `n` vertices with the frontier `active` (a
    /// bitmap, or `None` when every vertex is in it).
    pub fn new(p: &'a P, n: usize, active: Option<Vec<u64>>) -> Self {
        DenseVisit {
            p,
            active,
            cur: None,
            out: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            n,
            starts: Vec::new(),
        }
    }

    /// Gathers a batch's vertices.
    pub fn visit(&mut self, items: &[Item<'_>]) {
        let DenseVisit {
            p,
            active,
            cur,
            out,
            starts,
            ..
        } = self;
        let p: &P = p;
        let active = active.as_deref().map_or(Active::All, Active::Bitmap);
        if items.first().is_some_and(|it| !it.whole) {
            // A piece of a list longer than the buffer: fold it into the
            // vertex's signal so far (law 4).
            for it in items {
                if cur.as_ref().map(|c| c.0) != Some(it.v) {
                    close(p, cur, out);
                    *cur = Some((it.v, p.cond(it.v), None));
                }
                let Some((_, ok, acc)) = cur.as_mut() else {
                    return;
                };
                if !*ok || (it.side == 1 && !p.cond(it.v)) {
                    continue;
                }
                let edges = InEdges::new(it.targets, it.weights, active);
                if let Some(m) = p.dense_signal(it.v, edges) {
                    *acc = Some(match acc.take() {
                        Some(a) => p.combine(a, m),
                        None => m,
                    });
                }
            }
            return;
        }
        close(p, cur, out);
        // Whole lists: each vertex on one thread, vertices in parallel.
        starts.clear();
        starts.extend((0..items.len()).filter(|&i| i == 0 || items[i - 1].v != items[i].v));
        let starts: &[usize] = starts;
        let out: &[AtomicU64] = out;
        starts
            .par_iter()
            .enumerate()
            .with_min_len(64)
            .for_each(|(k, &s)| {
                let e = starts.get(k + 1).copied().unwrap_or(items.len());
                if let Some(v) = dense_whole(p, &items[s..e], active) {
                    set(out, v);
                }
            });
    }

    /// The activated vertices (a bitmap, as a dense step's next frontier).
    pub fn finish(mut self) -> VertexSubset {
        close(self.p, &mut self.cur, &self.out);
        let n = self.n;
        let words = self.out.into_iter().map(AtomicU64::into_inner).collect();
        VertexSubset::from_bitmap(n, words)
    }
}

/// Applies the slot of the vertex gathered in pieces (`cur`), if any.
fn close<P: VertexProgram>(
    p: &P,
    cur: &mut Option<(VertexId, bool, Option<P::Msg>)>,
    out: &[AtomicU64],
) {
    if let Some((v, true, Some(m))) = cur.take() {
        if p.dense_slot(v, m) {
            set(out, v);
        }
    }
}

/// Sets `v`'s bit in `words`.
#[inline]
fn set(words: &[AtomicU64], v: VertexId) {
    words[v as usize / 64].fetch_or(1 << (v % 64), Ordering::Relaxed);
}

/// The dense step of one vertex whose lists (one item per side) are all in
/// the buffer: `cond`, the signals over each side combined, the slot.
/// Returns the vertex when the slot activates it.
fn dense_whole<P: VertexProgram>(
    p: &P,
    group: &[Item<'_>],
    active: Active<'_>,
) -> Option<VertexId> {
    let v = group.first()?.v;
    if !p.cond(v) {
        return None;
    }
    let mut acc: Option<P::Msg> = None;
    for it in group {
        if it.side == 1 && !p.cond(v) {
            continue;
        }
        if let Some(m) = p.dense_signal(v, InEdges::new(it.targets, it.weights, active)) {
            acc = Some(match acc {
                Some(a) => p.combine(a, m),
                None => m,
            });
        }
    }
    p.dense_slot(v, acc?).then_some(v)
}
