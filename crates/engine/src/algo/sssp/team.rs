//! Delta-stepping as one team of the pool's threads kept together across
//! bucket rounds (two barrier waits per round).
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::RwLock;

use crate::team::SpinBarrier;

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
    let n = g.num_vertices();
    let threads = rayon::current_num_threads();
    let published: Vec<RwLock<Vec<VertexId>>> = (0..threads).map(|_| RwLock::default()).collect();
    if let Some(first) = published.first() {
        first
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(source);
    }
    let team = Team {
        p: Tentative::<W>::new(g, source, delta),
        out: g.out(),
        relaxed_at: stamps::<W>(n),
        published,
        cursor: AtomicUsize::new(0),
        next_bin: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
        far_min: AtomicU64::new(u64::MAX),
        cancelled: AtomicBool::new(false),
        overflowed: AtomicBool::new(false),
        rounds: AtomicUsize::new(0),
        barrier: SpinBarrier::new(threads),
    };
    let observer = crate::progress::current();
    let driver = rayon::current_thread_index();
    rayon::broadcast(|ctx| {
        let me = ctx.index();
        let leader = driver.map_or(me == 0, |d| d == me);
        crate::progress::observe_if(observer.as_ref().filter(|_| leader), || {
            team_member(&team, me, leader)
        })
    });
    if team.cancelled.into_inner() {
        return Err(AlgoError::Cancelled);
    }
    if team.overflowed.into_inner() {
        return Ok(None);
    }
    Ok(Some((team.p.into_f64(), team.rounds.into_inner())))
}

/// What the threads of a [`delta_stepping_team`] run share.
struct Team<'a, W: Word> {
    p: Tentative<W>,
    out: &'a plexus_graph::Adjacency,
    relaxed_at: Vec<W::Cell>,
    /// Each thread's share of the current bucket's frontier.
    published: Vec<RwLock<Vec<VertexId>>>,
    /// The next grain of the frontier to take.
    cursor: AtomicUsize,
    /// The lowest non-empty bin offered for the next round, by round parity.
    next_bin: [AtomicU64; 2],
    /// The lowest far bucket above the window, when the window is empty.
    far_min: AtomicU64,
    cancelled: AtomicBool,
    /// A sum overflowed the narrow word: every thread stops at the round's end.
    overflowed: AtomicBool,
    rounds: AtomicUsize,
    barrier: SpinBarrier,
}

/// One thread of the team: bucket rounds until every thread sees the same
/// end (no bucket left, a cancellation or an overflow).
fn team_member<W: Word>(t: &Team<'_, W>, me: usize, leader: bool) {
    let mut bins = LocalBins::default();
    let (mut base, mut k, mut round) = (0u64, 0u64, 0usize);
    loop {
        relax_shares(t, &mut bins, k, base, leader);
        fuse_and_offer(t, &mut bins, k, base, round);
        t.barrier.wait();
        // Everyone has relaxed and offered; the frontier is no longer read.
        let mut next = t.next_bin[(round + 1) & 1].load(Ordering::Relaxed);
        if leader {
            t.next_bin[round & 1].store(u64::MAX, Ordering::Relaxed);
            t.cursor.store(0, Ordering::Relaxed);
        }
        // Both flags were set before the barrier: every thread
        // reads the same values and leaves at the same round.
        let mut done = t.cancelled.load(Ordering::Relaxed) || t.overflowed.load(Ordering::Relaxed);
        if next == u64::MAX && !done {
            match move_window(t, &mut bins, &mut base) {
                Some(b) => next = b,
                None => done = true,
            }
        }
        if !done {
            k = next;
            let mut share = t.published[me].write().unwrap_or_else(|e| e.into_inner());
            share.clear();
            if let Some(bin) = bins.near.get_mut((k - base) as usize) {
                std::mem::swap(&mut *share, bin);
            }
        }
        round += 1;
        if leader {
            t.rounds.store(round, Ordering::Relaxed);
        }
        t.barrier.wait();
        if leader {
            // Read after the window barrier above, before this one.
            t.far_min.store(u64::MAX, Ordering::Relaxed);
        }
        if done {
            break;
        }
    }
}

/// Relaxes this thread's grains of the published frontier of bucket `k`
/// (the leader also counts the superstep and looks for a cancellation).
fn relax_shares<W: Word>(t: &Team<'_, W>, bins: &mut LocalBins, k: u64, base: u64, leader: bool) {
    let shares = Shares(
        t.published
            .iter()
            .map(|s| s.read().unwrap_or_else(|e| e.into_inner()))
            .collect(),
    );
    let total = shares.len();
    if leader {
        crate::progress::superstep(total as u64);
        if crate::progress::cancel_requested() {
            t.cancelled.store(true, Ordering::Relaxed);
        }
    }
    let mut grain: Vec<VertexId> = Vec::with_capacity(TEAM_GRAIN);
    loop {
        let i = t.cursor.fetch_add(TEAM_GRAIN, Ordering::Relaxed);
        if i >= total {
            break;
        }
        grain.clear();
        shares.for_range(i, (i + TEAM_GRAIN).min(total), |u| grain.push(u));
        relax_list(t, bins, &grain, k, base);
    }
}

/// Bucket fusion (relaxes this thread's small share of bucket `k` now),
/// then offers this thread's lowest non-empty bin for the next round and
/// raises the overflow flag.
fn fuse_and_offer<W: Word>(t: &Team<'_, W>, bins: &mut LocalBins, k: u64, base: u64, round: usize) {
    let cur = (k - base) as usize;
    while bins
        .near
        .get(cur)
        .is_some_and(|b| !b.is_empty() && b.len() < FUSE_BELOW)
    {
        let bin = std::mem::take(&mut bins.near[cur]);
        relax_list(t, bins, &bin, k, base);
    }
    let offer = bins
        .near
        .iter()
        .enumerate()
        .skip(cur)
        .find(|(_, b)| !b.is_empty())
        .map_or(u64::MAX, |(i, _)| base + i as u64);
    t.next_bin[(round + 1) & 1].fetch_min(offer, Ordering::Relaxed);
    if W::NARROW && bins.overflow {
        t.overflowed.store(true, Ordering::Relaxed);
    }
}

/// The window is empty: moves it (every thread, between two barrier
/// waits) to the lowest far bucket, which it returns; `None` when there
/// is none. Far entries now below the window are stale (a lowering into
/// the window was filed there and relaxed).
fn move_window<W: Word>(t: &Team<'_, W>, bins: &mut LocalBins, base: &mut u64) -> Option<u64> {
    let p = &t.p;
    let end = base.saturating_add(BIN_WINDOW);
    let mine = bins
        .far
        .iter()
        .map(|&v| p.bucket(p.get(v)))
        .filter(|&b| b >= end)
        .min()
        .unwrap_or(u64::MAX);
    t.far_min.fetch_min(mine, Ordering::Relaxed);
    t.barrier.wait();
    let next = t.far_min.load(Ordering::Relaxed);
    if next == u64::MAX {
        return None;
    }
    *base = next;
    bins.near.clear();
    for v in std::mem::take(&mut bins.far) {
        let b = p.bucket(p.get(v));
        if b >= end {
            bins.file(v, b, *base);
        }
    }
    Some(next)
}

/// Relaxes the fresh entries of `list` in bucket `k` (u's message if it
/// needs relaxing in bucket k: [`claim_fresh`]). Each entry's state,
/// offset and out-list miss the cache, and the offset is needed to find
/// the list: ask for the state [`TEAM_FAR`] entries ahead and, once it has
/// arrived, for the list [`TEAM_AHEAD`] entries ahead, so no load waits on
/// memory.
fn relax_list<W: Word>(
    t: &Team<'_, W>,
    bins: &mut LocalBins,
    list: &[VertexId],
    k: u64,
    base: u64,
) {
    let (p, out, relaxed_at) = (&t.p, t.out, &t.relaxed_at[..]);
    for &u in list.iter().take(TEAM_FAR) {
        prefetch_state(p, relaxed_at, out, u);
    }
    for &u in list.iter().take(TEAM_AHEAD) {
        prefetch_list_if_fresh(p, relaxed_at, out, u, k);
    }
    for (j, &u) in list.iter().enumerate() {
        if let Some(&w) = list.get(j + TEAM_FAR) {
            prefetch_state(p, relaxed_at, out, w);
        }
        if let Some(&w) = list.get(j + TEAM_AHEAD) {
            prefetch_list_if_fresh(p, relaxed_at, out, w, k);
        }
        if let Some(m) = claim_fresh(p, relaxed_at, u, k) {
            // prepare() checked that the graph is weighted.
            let ws = out.weights(u).unwrap_or(&[]);
            bins.relax(p, out.neighbors(u), ws, m, base);
        }
    }
}
