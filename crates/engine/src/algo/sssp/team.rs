//! Delta-stepping as one team of the pool's threads kept together across
//! bucket rounds (two barrier waits per round).
use super::*;

/// Frontier vertices a team thread takes at a time (GAPBS's dynamic
/// schedule of 64).
pub(super) const TEAM_GRAIN: usize = 64;

/// Frontier entries ahead whose distance, relax stamp and out-list offset a
/// team round prefetches.
pub(super) const TEAM_FAR: usize = 16;

/// Frontier entries ahead whose out-list and weights a team round
/// prefetches, if the entry looks fresh by then.
pub(super) const TEAM_AHEAD: usize = 8;

/// Asks the cache for what deciding whether `u` is fresh reads: its
/// distance, its relax stamp and its out-list offset. Only addresses
/// computed from `u`: nothing waits for memory.
#[inline(always)]
pub(super) fn prefetch_state<W: Word>(
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
pub(super) fn prefetch_list_if_fresh<W: Word>(
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
pub(super) fn prefetch_edges(out: &plexus_graph::Adjacency, at: usize) {
    crate::prefetch::prefetch(out.neighbor_array(), at);
    if let Some(ws) = out.weight_array() {
        crate::prefetch::prefetch(ws, at);
    }
}

/// The frontier of a team round: each thread's share, published between
/// rounds, read as one list in thread order.
pub(super) struct Shares<'a>(Vec<std::sync::RwLockReadGuard<'a, Vec<VertexId>>>);

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
pub(super) fn delta_stepping_team<W: Word>(
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
