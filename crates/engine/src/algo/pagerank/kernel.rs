//! The fused in-memory kernel: one pass per iteration computes every
//! vertex's new rank, the change, the next contribution and the next
//! dangling mass, from the in-lists or the stored tiles.
use plexus_graph::tiles::Tiles;
use plexus_graph::EdgeIdx;

use super::*;

/// A stored contribution `PR(u)/outdeg(u)`: f64, or f32 for [`Precision::Single`].
pub trait Contribution: Copy + Send + Sync + Into<f64> + 'static {
    /// Zero (a dangling vertex's contribution).
    const ZERO: Self;
    /// `x` in this width (rounded to nearest for f32).
    fn from_f64(x: f64) -> Self;
    /// Exact (both widths convert to f64 without rounding).
    #[inline]
    fn to_f64(self) -> f64 {
        self.into()
    }
}

impl Contribution for f64 {
    const ZERO: Self = 0.0;
    #[inline]
    fn from_f64(x: f64) -> Self {
        x
    }
}

impl Contribution for f32 {
    const ZERO: Self = 0.0;
    #[inline]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

/// The contribution of a vertex of out-degree `deg` with rank `rank` (0 when dangling).
#[inline]
pub fn contribution<C: Contribution>(rank: f64, deg: usize) -> C {
    if deg == 0 {
        C::ZERO
    } else {
        // Through i64: a single conversion instruction (degrees < 2^63).
        C::from_f64(rank / deg as i64 as f64)
    }
}

/// How many in-edges ahead the fused kernel prefetches a contribution.
pub const PREFETCH_AHEAD: usize = 32;

/// Whether the in-list loop prefetches contributions [`PREFETCH_AHEAD`]
/// in-edges ahead: not when the `n` contributions take at most half of a
/// core's L2 (256 KiB when its size is unknown), where every read hits L2
/// and the prefetch is six instructions an edge for nothing. Never
/// changes a result.
pub fn prefetch_contributions<C>(n: usize) -> bool {
    let l2 = plexus_graph::caches::l2_bytes().unwrap_or(512 << 10);
    (n as u64).saturating_mul(std::mem::size_of::<C>() as u64) > l2 / 2
}

/// In-list positions per vertex read without a branch on graphs of short
/// in-lists ([`short_in_lists`]).
pub(super) const SHORT: usize = 4;

/// Whether nearly every vertex has at most [`SHORT`] in-edges (a road
/// network: 99.8 % of USA-road-FLA's vertices): at most one vertex in 20
/// has more. The fused kernel then reads each vertex's first `SHORT`
/// positions of its in-list in CSC without a branch (positions past the
/// list's end are redirected to entry `n` of the contributions, which
/// holds +0, so the sum is the in-order sum of the list) and goes on with
/// a loop only past them, a well-predicted branch when rare. On a graph of
/// short lists the loop's mispredicted exit costs more than the edges
/// (measured on USA-road-FLA, one thread: a loop over the lists 7.2–8.3 ms
/// per iteration, fixed reads from a padded per-run table of the first 4
/// in-neighbours 2.7 ms, a single loop over all arcs 2.4 ms). Reading the
/// CSC in place replaced that table (16 bytes per vertex built in every
/// run, about 5 ms of the road graph's 14 ms of set-up, and streamed in
/// every pass in place of the lists' 10).
pub(super) fn short_in_lists(g: &Graph) -> bool {
    let n = g.num_vertices();
    let inc = g.inc();
    if n == 0 || inc.neighbor_array().is_empty() {
        return false;
    }
    let longer = (0..n as VertexId)
        .into_par_iter()
        .with_min_len(1 << 12)
        .filter(|&v| inc.degree(v) > SHORT)
        .count();
    longer * 20 <= n
}

/// The iterate a run starts from, as a function of the vertex: `initial`
/// when given (a probability vector; the push method hands over its
/// state); else, for [`Method::Chebyshev`] stopping by tolerance on an
/// undirected graph, `(1 - d)/|V| + d·deg(v)/arcs`, which is `F` of the
/// random walk's stationary distribution `deg/arcs` and sums to 1; else the
/// uniform vector, as NetworkX (so fixed iteration counts give NetworkX's
/// and Graphalytics's iterates, and Jacobi those of the vertex program and
/// the job manager's lanes). On an undirected graph PageRank leans towards
/// the degrees, and the degree start is about half as far from the fixed
/// point in L1 as the uniform one (USA-road-FLA 0.12 against 0.25,
/// email-Enron 0.33 against 0.82), which saves 3–4 of 16–17 Chebyshev
/// iterations there at an L1 change of 1e-4 (kron22: 7 instead of 8). The
/// fixed point and the stopping rule are the same from any start.
pub(super) fn start_vector<'a>(
    g: &'a Graph,
    cfg: &Config,
    teleport: &Teleport,
    initial: Option<&'a [f64]>,
) -> impl Fn(usize) -> f64 + Sync + 'a {
    let n = g.num_vertices();
    let uniform = 1.0 / n as f64;
    let arcs = g.num_arcs();
    let by_degree = initial.is_none()
        && cfg.method == Method::Chebyshev
        && cfg.iterations.is_none()
        && !g.is_directed()
        && matches!(teleport, Teleport::Uniform(_))
        && arcs > 0;
    let d = cfg.damping;
    let (base, per_arc) = ((1.0 - d) * uniform, d / arcs as f64);
    let out_offsets = g.out().offsets();
    move |u: usize| match initial {
        Some(x) => x[u],
        None if by_degree => base + per_arc * (out_offsets[u + 1] - out_offsets[u]) as f64,
        None => uniform,
    }
}

/// What one pass of [`fused`] reads and never writes: the iteration's
/// substitution, the last iteration's contributions `prev`, the topology,
/// and the Chebyshev schedule's state for the pass.
struct Pass<'a, C> {
    step: Step,
    d: f64,
    n: usize,
    prev: &'a [C],
    teleport: &'a Teleport,
    in_offsets: &'a [EdgeIdx],
    out_offsets: &'a [EdgeIdx],
    sources: &'a [VertexId],
    /// [`short_in_lists`] holds and the pass reads the in-lists.
    short: bool,
    /// [`prefetch_contributions`].
    prefetch: bool,
    /// The pass recomputes the last pass's `y` into `plain` only.
    replay: bool,
    /// An engaged Chebyshev pass keeps `y` in `plain`.
    keep_plain: bool,
    /// The Chebyshev recurrence is engaged, with this `ω`.
    engaged: bool,
    omega: f64,
}

/// One block of vertices `lo..lo + ranks.len()` of a [`fused`] pass: its
/// new ranks and contributions from `tiled` (the block's in-sums, when the
/// graph has tiles) or from its in-lists; returns the block's change,
/// dangling mass and (with the elimination) rest mass and dangling.
#[inline(always)]
fn sweep<C: Contribution, const GS: bool, const CHEB: bool>(
    p: &Pass<'_, C>,
    lo: usize,
    ranks: &mut [f64],
    next: &mut [C],
    older: &mut [f64],
    plain: &mut [f64],
    tiled: Option<&[f64]>,
) -> [f64; 4] {
    // Local copies of what the loop reads and never writes: `p` is a
    // reference, and for all the compiler knows
    // the loop's stores could change what they point to, so it
    // reloaded them per vertex (`valgrind --tool=callgrind`,
    // USA-road-FLA at one thread: 1.685 G instructions in this
    // kernel before, 1.453 G after).
    let (step, d, n, prev) = (p.step, p.d, p.n, p.prev);
    let (teleport, short, prefetch) = (p.teleport, p.short, p.prefetch);
    let (sources, in_offsets, out_offsets) = (p.sources, p.in_offsets, p.out_offsets);
    let (replay, keep_plain, engaged, omega) = (p.replay, p.keep_plain, p.engaged, p.omega);
    let uniform = match teleport {
        Teleport::Uniform(t) => Some(*t),
        Teleport::Sources { .. } => None,
    };
    let len = ranks.len();
    // The block's slices of the topology, hoisted out of the loop.
    let in_offs = &in_offsets[lo..=lo + len];
    let out_offs = &out_offsets[lo..=lo + len];
    if GS {
        // `next` starts as the previous sweep's values of the
        // block; entry `i` is overwritten when vertex `lo + i` is
        // done, so reading `next` for any in-block neighbour
        // gives this sweep's value for lower ids and the last
        // sweep's for the others (a well-predicted branch).
        next.copy_from_slice(&prev[lo..lo + len]);
    }
    let (mut block_change, mut block_dangling) = (0.0f64, 0.0f64);
    let (mut block_rest_mass, mut block_rest_dangling) = (0.0f64, 0.0f64);
    // The block's in-edges, contiguous; `j` walks them across
    // vertex boundaries so the prefetch runs ahead uniformly.
    let first = in_offs[0] as usize;
    let block_sources = &sources[first..in_offs[len] as usize];
    // A block without in-edges takes the loop (which then reads
    // nothing), so `last` is a position of the block's edges.
    let short = short && !block_sources.is_empty();
    let last = block_sources.len().saturating_sub(1);
    let mut j = 0;
    for i in 0..len {
        let u = lo + i;
        let mut sum = 0.0f64;
        let stop = in_offs[i + 1] as usize - first;
        let no_in_edges = j == stop;
        if let Some(t) = tiled {
            // The sum in CSC order, up to f64 rounding.
            sum = t[i];
            j = stop;
        } else if short {
            // The first SHORT positions without a branch (the
            // block has in-edges: see `last`); a position past
            // the list adds entry `n`, +0, which leaves the sum
            // as the in-order sum of the list's first entries.
            for k in 0..SHORT {
                if let Some(&w) = block_sources.get(j + PREFETCH_AHEAD + k) {
                    crate::prefetch::prefetch(prev, w as usize);
                }
            }
            let length = stop - j;
            for k in 0..SHORT {
                let w = block_sources[(j + k).min(last)] as usize;
                // Past the list, entry `n` (+0), by a select
                // the compiler keeps (a plain `if`, or a mask
                // of the value, became a branch around the
                // loads, mispredicted as often as the loop's
                // exit: 13 against 9.7 ms per iteration on
                // USA-road-FLA).
                let v = std::hint::select_unpredictable(k < length, w, n);
                sum += prev[v].to_f64();
            }
            j = (j + SHORT).min(stop);
        }
        while j < stop {
            if prefetch {
                if let Some(&w) = block_sources.get(j + PREFETCH_AHEAD) {
                    crate::prefetch::prefetch(prev, w as usize);
                }
            }
            let v = block_sources[j] as usize;
            let x = if GS && v.wrapping_sub(lo) < len {
                next[v - lo]
            } else {
                prev[v]
            };
            sum += x.to_f64();
            j += 1;
        }
        let t = uniform.unwrap_or_else(|| teleport.at(u as VertexId));
        // `y = F(x̃)(u)`; with `scale = 1` exactly F(x)(u).
        let mut y = step.update(d, sum, t);
        let deg = (out_offs[i + 1] - out_offs[i]) as usize;
        let lone = deg == 0 && no_in_edges;
        block_change += (y - step.prior(lone, ranks[i], t)).abs();
        if CHEB {
            if replay {
                plain[i] = y;
                continue;
            }
            // `ranks` keeps `x_k`; `older` goes from `x_{k-1}`
            // to `x_{k+1}` (`y` itself while `ω = 1`).
            if engaged {
                if keep_plain {
                    plain[i] = y;
                }
                let before = older[i];
                y = before + omega * (y - before);
            }
            older[i] = y;
        } else {
            ranks[i] = y;
        }
        if deg == 0 {
            block_dangling += y;
            if !lone {
                block_rest_dangling += y;
            }
        }
        if !lone {
            block_rest_mass += y;
        }
        next[i] = contribution(y, deg);
    }
    [
        block_change,
        block_dangling,
        block_rest_mass,
        block_rest_dangling,
    ]
}

/// One pass of [`fused`] over every block: over the tiles' blocks when
/// the graph has tiles, else over blocks of `BLOCK` vertices; returns each
/// block's [`sweep`] sums in block order.
fn pass_blocks<C: Contribution, const GS: bool, const CHEB: bool, const BLOCK: usize>(
    pass: &Pass<'_, C>,
    tiles: Option<&Tiles>,
    rank: &mut [f64],
    new: &mut [C],
    older: &mut [f64],
    plain: &mut [f64],
) -> Vec<[f64; 4]> {
    let n = pass.n;
    if let Some(t) = tiles {
        // The tiles' blocks: each block's sums are used while they are
        // in L2, as soon as its gather ends.
        let pieces = crate::tiled::split_by_blocks(t, rank)
            .into_iter()
            .zip(crate::tiled::split_by_blocks(t, &mut new[..n]))
            .zip(crate::tiled::split_by_blocks(t, older))
            .zip(crate::tiled::split_by_blocks(t, plain))
            .collect();
        crate::tiled::map_blocks(
            t,
            &pass.prev[..n],
            pieces,
            |b, (((ranks, next), older), plain), sums| {
                sweep::<C, GS, CHEB>(pass, b.lo as usize, ranks, next, older, plain, Some(sums))
            },
        )
    } else {
        // Chebyshev's vectors by block, or empty pieces without them.
        let cheb_blocks = if CHEB {
            rayon::iter::Either::Left(older.par_chunks_mut(BLOCK).zip(plain.par_chunks_mut(BLOCK)))
        } else {
            rayon::iter::Either::Right(
                (0..n.div_ceil(BLOCK))
                    .into_par_iter()
                    .map(|_| (<&mut [f64]>::default(), <&mut [f64]>::default())),
            )
        };
        rank.par_chunks_mut(BLOCK)
            .zip(new[..n].par_chunks_mut(BLOCK))
            .zip(cheb_blocks)
            .enumerate()
            // Tasks of at most STEAL_GRAIN vertices (one block each):
            // the blocks holding hubs must not share a task with a
            // quarter of the graph (edge_map::STEAL_GRAIN).
            .with_max_len((crate::edge_map::STEAL_GRAIN / BLOCK).max(1))
            .map(|(b, ((ranks, next), (older, plain)))| {
                sweep::<C, GS, CHEB>(pass, b * BLOCK, ranks, next, older, plain, None)
            })
            .collect()
    }
}

/// The start's dangling mass and, with the elimination (`eliminated`),
/// the mass on vertices with edges and its dangling part (unused by plain
/// iteration, so not summed for it: 0).
fn start_sums(g: &Graph, x0: &(impl Fn(VertexId) -> f64 + Sync), eliminated: bool) -> [f64; 3] {
    let n = g.num_vertices();
    let dangling = deterministic_sum(n, |u| if g.out_degree(u) == 0 { x0(u) } else { 0.0 });
    let has_edges = |u: VertexId| !Isolated::is_isolated(g, u);
    let (mut rest_mass, mut rest_dangling) = (0.0, 0.0);
    if eliminated {
        rest_mass = deterministic_sum(n, |u| if has_edges(u) { x0(u) } else { 0.0 });
        rest_dangling = deterministic_sum(n, |u| {
            if g.out_degree(u) == 0 && has_edges(u) {
                x0(u)
            } else {
                0.0
            }
        });
    }
    [dangling, rest_mass, rest_dangling]
}

/// The contributions of the start `x0` (`old`) and the array of the next
/// ones (`new`), each with an entry `n` that stays +0: short in-lists read
/// it past their end. The contributions are read in random order: on huge
/// pages, a TLB miss does not add a page walk to every cache miss.
fn start_contributions<C: Contribution>(
    g: &Graph,
    x0: &(impl Fn(usize) -> f64 + Sync),
) -> (Vec<C>, Vec<C>) {
    let n = g.num_vertices();
    let old: Vec<C> = crate::hugepages::from_fn(n + 1, |u| {
        if u < n {
            contribution(x0(u), g.out_degree(u as VertexId))
        } else {
            C::ZERO
        }
    });
    (old, crate::hugepages::filled(n + 1, C::ZERO))
}

/// Chebyshev's vectors (empty without `CHEB`): `x_{k-1}` (overwritten by
/// `x_{k+1}` in the pass, then swapped with the ranks) and the last plain
/// step `y = F(x_k)`.
fn chebyshev_vectors<const CHEB: bool>(
    n: usize,
    x0: &(impl Fn(VertexId) -> f64 + Sync),
) -> (Vec<f64>, Vec<f64>) {
    if CHEB {
        (
            crate::hugepages::from_fn(n, |u| x0(u as VertexId)),
            crate::hugepages::filled(n, 0.0),
        )
    } else {
        (Vec::new(), Vec::new())
    }
}

/// The fused in-memory kernel: per iteration one parallel pass over blocks
/// of `BLOCK` vertices that, for each vertex `u` in id order, sums the
/// contributions of its in-neighbours (CSC order), applies the formula,
/// adds `|PR'(u) - PR(u)|` to the block's change and writes `u`'s next
/// contribution (or adds its rank to the block's dangling mass). Block
/// partial sums are added in block order, so the result does not depend on
/// the number of threads. `GS`: within a block, in-neighbours of lower id
/// read this sweep's contribution. `isolated`: Jacobi with the isolated
/// vertices eliminated ([`Isolated`]). `CHEB` ([`Method::Chebyshev`], not
/// with `GS` or `isolated`): the pass computes `y = F(x_k)` as Jacobi does,
/// keeps it, and moves to `x_{k+1} = x_{k-1} + ω_k·(y - x_{k-1})`
/// (`ω_0 = 1`, `ω_1 = 1/(1 - d²/2)`, `ω_k = 1/(1 - d²·ω_{k-1}/4)`: the
/// Chebyshev recurrence for a spectrum in `[-d, d]`); the change is the
/// residual `Σ |y - x_k|` and the result the last `y`.
pub(super) fn fused<C: Contribution, const GS: bool, const CHEB: bool, const BLOCK: usize>(
    g: &Graph,
    cfg: &Config,
    teleport: &Teleport,
    isolated: Option<Isolated>,
    initial: Option<&[f64]>,
) -> Output {
    let n = g.num_vertices();
    if n == 0 {
        return Output {
            rank: Vec::new(),
            iterations: 0,
            converged: true,
            change: 0.0,
        };
    }
    let setup = trace_enabled().then(std::time::Instant::now);
    let d = cfg.damping;
    let in_offsets = g.inc().offsets();
    let sources = g.inc().neighbor_array();
    let out_offsets = g.out().offsets();
    let x0 = start_vector(g, cfg, teleport, initial);
    let mut rank = crate::hugepages::from_fn(n, &x0);
    let (mut old, mut new) = start_contributions::<C>(g, &x0);
    // Jacobi-style passes gather over the stored tiles when the graph has
    // them (Gauss–Seidel reads this sweep's values within a block, in CSC
    // order, which the tiles do not keep).
    let tiles = if GS { None } else { g.tiles() };
    // Not for Gauss–Seidel: there each fixed read chooses between this
    // sweep's and the last sweep's values, and fixed reads measured slower
    // than the loop (USA-road-FLA, f32: 8.1 against 6.9 ms per sweep).
    let short = !GS && tiles.is_none() && short_in_lists(g);
    let x0 = |u: VertexId| x0(u as usize);
    let prefetch = prefetch_contributions::<C>(n);
    let [mut dangling, mut rest_mass, mut rest_dangling] = start_sums(g, &x0, isolated.is_some());
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    let (mut older, mut plain) = chebyshev_vectors::<CHEB>(n, &x0);
    // Chebyshev starts as Jacobi (`ω = 1`) and engages the recurrence once
    // the change shrinks by less than the recurrence would shrink it.
    let mut schedule = ChebSchedule::new(d);
    // An engaged pass keeps `y` in `plain` only when it may be the last
    // (the change one pass ahead, extrapolated, within 3× the target); if
    // the run stops after a pass that did not, `replay` recomputes that
    // pass's `y` from the same state (`last_step`), writing nothing else.
    let (mut keep_plain, mut replay) = (false, false);
    let mut last_step = Step::plain(0.0);
    let (mut iterations, mut converged, mut change) = (0, false, 0.0);
    if let Some(t) = setup {
        eprintln!(
            "plexus-trace pagerank setup {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    while iterations < limit || replay {
        crate::progress::superstep(n as u64);
        if crate::progress::cancel_requested() {
            // `run` turns the partial result into `Cancelled`.
            break;
        }
        let started = trace_enabled().then(std::time::Instant::now);
        let prev: &[C] = &old;
        let step = match (replay, isolated) {
            (true, _) => last_step,
            (false, Some(iso)) => iso.step(d, rest_dangling, rest_mass),
            (false, None) => Step::plain(dangling),
        };
        if CHEB && !replay {
            schedule.next_omega();
            let target = n as f64 * cfg.tolerance;
            keep_plain = schedule.engaged
                && (iterations + 1 == limit
                    || (cfg.iterations.is_none()
                        && schedule.predicted() < 3.0 * target
                        && !no_foresight()));
        }
        let pass = Pass {
            step,
            d,
            n,
            prev,
            teleport,
            in_offsets,
            out_offsets,
            sources,
            short,
            prefetch,
            replay,
            keep_plain,
            engaged: schedule.engaged,
            omega: schedule.omega,
        };
        let partials = pass_blocks::<C, GS, CHEB, BLOCK>(
            &pass, tiles, &mut rank, &mut new, &mut older, &mut plain,
        );
        if replay {
            #[cfg(test)]
            REPLAYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // The same arithmetic as the pass it repeats: the same change.
            rank = std::mem::take(&mut plain);
            break;
        }
        change = partials.iter().map(|p| p[0]).sum();
        dangling = partials.iter().map(|p| p[1]).sum();
        rest_mass = partials.iter().map(|p| p[2]).sum();
        rest_dangling = partials.iter().map(|p| p[3]).sum();
        std::mem::swap(&mut old, &mut new);
        if CHEB {
            std::mem::swap(&mut rank, &mut older);
        }
        if let Some(t) = started {
            eprintln!(
                "plexus-trace pagerank iteration {} change {change:e} {:.3} ms",
                iterations + 1,
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        iterations += 1;
        converged = change < n as f64 * cfg.tolerance;
        if converged && cfg.iterations.is_none() {
            if CHEB && schedule.engaged && !keep_plain {
                // Back to `x_k` and its contributions, to recompute `y`.
                std::mem::swap(&mut old, &mut new);
                std::mem::swap(&mut rank, &mut older);
                last_step = step;
                replay = true;
                continue;
            }
            break;
        }
        if CHEB {
            schedule.observe(iterations, change);
        }
    }
    // The last plain step `y`: after a Jacobi step (`ω = 1`) it is `rank`.
    if CHEB && keep_plain && !replay {
        rank = std::mem::take(&mut plain);
    }
    Output {
        rank,
        iterations,
        converged,
        change,
    }
}
