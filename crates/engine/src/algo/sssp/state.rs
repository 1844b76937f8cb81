//! What the in-memory delta-stepping kernels share: the distance words
//! (u16, u32, f64), the tentative distances with their relax stamps, and
//! the per-thread bins.
use super::*;

/// Buckets ahead of the current one kept in each thread's array of bins;
/// vertices further ahead wait in the thread's overflow list (their bucket is
/// recomputed from the distance when the window moves on).
pub(super) const BIN_WINDOW: u64 = 1 << 12;
/// Out-edges per parallel task of a relaxation round; vertices of higher
/// degree are split across tasks.
pub(super) const EDGE_GRAIN: usize = 2048;
/// A thread relaxes its own share of the current bucket at once, without a
/// global round, while it holds fewer vertices than this (GAPBS's
/// `kBinSizeThreshold`).
pub(super) const FUSE_BELOW: usize = 1000;

/// A tentative-distance word of the in-memory kernels: `f64` in general,
/// `u32` when every edge weight is an integer and every shortest path is
/// shorter than `u32::MAX` ([`fits_u32`]). Integer sums below 2^53 are exact
/// in `f64`, so both words reach the same distances and, bucketing the
/// same values, the same rounds; the `u32` word halves the state that the
/// relaxations read at random (kron22: 9.6 MB of distances and as much of
/// stamps instead of 19.2 MB each).
/// `u16` halves it again where it is tried first ([`try_u16`]): a sum that
/// does not fit stops that run, and the distances come from `u32` (or
/// `f64`) instead, so the output never depends on the word.
pub(super) trait Word: Copy + PartialEq + Send + Sync {
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
/// distance and stamp).
/// Certain when every simple path is shorter than 65,535; otherwise tried
/// on graphs where it is likely (integer weights of at most 1,023, so a
/// 64-edge path fits, and a mean out-degree of at least 4, so shortest
/// paths have few edges), and redone in `u32` if a sum overflows.
pub(super) fn try_u16(g: &Graph) -> bool {
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
pub(super) fn fits_u32(g: &Graph) -> bool {
    let Some(stats) = g.weight_stats() else {
        return false;
    };
    let n = g.num_vertices().saturating_sub(1) as f64;
    let longest = stats.finite_sum.min(stats.max_finite * n);
    g.meta().integral_weights && longest < f64::from(u32::MAX)
}

/// Tentative distances of the in-memory kernels, one cell per vertex.
pub(super) struct Tentative<W: Word> {
    pub(super) dist: Vec<W::Cell>,
    /// For a narrow word: messages from this value on may overflow with
    /// some edge (65,535 minus the largest finite weight); `+∞` otherwise.
    pub(super) overflow_from: f64,
    /// The bucket width `Δ`.
    pub(super) delta: f64,
    /// `log2 Δ` when `Δ` is a power of two from 1 to 2^32: an integer
    /// distance's bucket is then a shift ([`Tentative::bucket`]).
    pub(super) shift: Option<u32>,
}

impl<W: Word> Tentative<W> {
    /// All unreached but `source`, at 0, on `g`, bucketed by width `delta`.
    pub(super) fn new(g: &Graph, source: VertexId, delta: f64) -> Self {
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
    /// conversion and division on every lowering.
    #[inline(always)]
    pub(super) fn bucket(&self, d: W) -> u64 {
        match (self.shift, d.to_integer()) {
            (Some(s), Some(x)) => x >> s,
            _ => bucket(d.to_f64(), self.delta),
        }
    }

    #[inline(always)]
    pub(super) fn get(&self, v: VertexId) -> W {
        W::load(&self.dist[v as usize])
    }

    /// The distances as `f64`s.
    pub(super) fn into_f64(self) -> Vec<f64> {
        self.dist.par_iter().map(|c| W::load(c).to_f64()).collect()
    }
}

/// Relax stamps: the distance each vertex last sent along its edges
/// ([`Word::NEVER`] before the first time).
pub(super) fn stamps<W: Word>(n: usize) -> Vec<W::Cell> {
    crate::hugepages::from_fn(n, |_| W::cell(W::NEVER))
}

/// `u`'s distance if `u` is still in bucket `k` (not lowered into an
/// earlier one since it was filed) and its distance differs from the one
/// it last sent along its edges (its stamp): whether it needs relaxing.
#[inline(always)]
pub(super) fn unsent<W: Word>(
    p: &Tentative<W>,
    relaxed_at: &[W::Cell],
    u: VertexId,
    k: u64,
) -> Option<W> {
    let d = p.get(u);
    (p.bucket(d) == k && W::load(&relaxed_at[u as usize]) != d).then_some(d)
}

/// [`unsent`], stamping `u` with the distance it is about to send. A load
/// and a store, not a swap: two threads that take the same entry at once
/// may both relax it (the same offers twice, harmless), and no locked
/// instruction is paid per frontier entry.
#[inline(always)]
pub(super) fn claim_fresh<W: Word>(
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
pub(super) struct LocalBins {
    pub(super) near: Vec<Vec<VertexId>>,
    pub(super) far: Vec<VertexId>,
    /// A relaxation's sum did not fit a narrow word ([`Word::NARROW`]).
    pub(super) overflow: bool,
}

impl LocalBins {
    /// Queues `v` for bucket `b ≥ base`.
    #[inline]
    pub(super) fn file(&mut self, v: VertexId, b: u64, base: u64) {
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
    pub(super) fn relax<W: Word>(
        &mut self,
        t: &Tentative<W>,
        nb: &[VertexId],
        ws: &[f64],
        m: W,
        base: u64,
    ) {
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
    pub(super) fn relax_edges<W: Word, const CHECK: bool>(
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
