//! PageRank (and personalised PageRank) on the distributed executor: the
//! executor's fast path for `pagerank` and `ppr`, a specialisation of
//! `plexus_engine::algo::pagerank::PageRankDriver` (Jacobi in `f64`) with
//! the same arithmetic, operation for operation.
//!
//! Gemini's dense mode with master-only state: rank `r` keeps the ranks
//! and contributions `PR(u)/outdeg(u)` of its masters `V_r` only. Its pull
//! lists hold the arcs `u → v` with `u ∈ V_r`, keyed by target, so every
//! contribution a list reads is the rank's own. Per iteration:
//!
//! 1. **gather:** for each key `v` of its pull lists, the rank sums the
//!    contributions of its list in list order (ascending source, as the
//!    CSC), a partial sum of `v`'s gather;
//! 2. **exchange:** each rank sends every other rank the partials of the
//!    keys that rank masters, as bare `f64`s (one `all_to_all`): which keys
//!    a peer sends is fixed, so the key ids cross once, before the first
//!    iteration;
//! 3. **apply:** each master adds the partials of its vertices in rank
//!    order (the driver's combining order at the master, law 4), applies
//!    `Step::update` (damping, teleport, dangling mass, the isolated-vertex
//!    substitution), and in the same pass adds `|PR' − x̃|` to the change,
//!    writes the next contribution and sums the next dangling mass (and,
//!    with the elimination, the mass and dangling mass of the vertices with
//!    edges), in blocks of 1024 masters from the rank's first;
//! 4. **sums:** the four block sums of every rank are all-gathered and
//!    added in rank order (as the executor's `vertex_sum`), so every rank
//!    takes the same convergence decision and the same next `Step`.
//!
//! The driver's sums are the same folds: its `vertex_sum` blocks start at
//! each rank's first master, its dense messages combine at the master in
//! rank order, and its signal sums a list in list order. So this path
//! equals `algo::pagerank::run_on` on the same executor bit for bit (the
//! tests check it on 1–4 ranks), and on one rank, where the only list of a
//! vertex is its whole in-list, it equals the in-memory Jacobi kernel in
//! double precision (`run` with `Method::Jacobi`, `Precision::Double`)
//! bit for bit when that kernel reads the CSC. Without tiles, one rank
//! runs the gather fused into the apply pass: each 1024-vertex block walks
//! its vertices' lists and applies each vertex at once, the in-memory
//! kernel's loop with its prefetch of the contribution
//! [`PREFETCH_AHEAD`] entries ahead.
//!
//! **Tiles.** Where the store would tile a graph of the rank's size, the
//! executor holds tiles of the rank's pull lists (`tiles_of`, made at
//! set-up) and the gather is the engine's tiled gather: on one rank each
//! tile block is applied as soon as its sums are ready (the in-memory
//! kernel's tiled pass, whose sums it then equals), on several the
//! partials of the keys are gathered first. The tiled gather adds long
//! runs in four interleaved partial sums, so with tiles the ranks equal
//! the driver's within its bound (`pagerank::DRIVER_RANK_BOUND`), not bit
//! for bit.
//!
//! The ranks are all-gathered once at the end, so every rank returns the
//! whole vector. Each iteration is one step in the statistics (mode
//! [`MODE`]).
use plexus_engine::algo::pagerank::{
    contribution, prefetch_contributions, prepare, Config, Isolated, Output, Step, Teleport,
    PREFETCH_AHEAD,
};
use plexus_engine::prefetch::prefetch;
use plexus_engine::program::GraphView;
use plexus_engine::tiled::{map_blocks, split_by_blocks};
use plexus_graph::tiles::Tiles;
use plexus_graph::{Adjacency, Section, VertexId};
use rayon::prelude::*;

use crate::comm::Comm;
use crate::error::{DistError, RunError};
use crate::exec::DistExecutor;
use crate::part::{Arcs, Lists};

/// Masters per block of the apply pass and of its sums: the blocks of the
/// executor's `vertex_sum` (from each rank's first master) and of the
/// in-memory kernel's Jacobi sweep.
const BLOCK: usize = 1024;
/// Keys per task of the gather on several ranks.
const GATHER_GRAIN: usize = 1024;
/// The mode of this module's steps in the executor's statistics.
pub const MODE: &str = "pagerank-pull";

/// The four sums of an apply pass: change `Σ |PR' − x̃|`, dangling mass,
/// mass of the vertices with edges, and its dangling part.
type Sums = [f64; 4];

/// Adds rank `y` of a vertex of out-degree `deg` (`lone`: without edges)
/// to the mass sums of [`Sums`] (`[0]`, the change, is the caller's).
#[inline(always)]
fn add_mass(acc: &mut Sums, y: f64, deg: u32, lone: bool) {
    if deg == 0 {
        acc[1] += y;
        if !lone {
            acc[3] += y;
        }
    }
    if !lone {
        acc[2] += y;
    }
}

/// What a rank's apply pass reads and never writes.
struct Masters<'a> {
    /// The first master.
    lo: VertexId,
    d: f64,
    teleport: &'a Teleport,
    /// `Some(t)` when the teleport is uniform.
    uniform: Option<f64>,
    /// Out-degree of each master.
    deg: Vec<u32>,
    /// Whether each master is isolated (no in- or out-arc).
    lone: Vec<bool>,
}

impl Masters<'_> {
    /// Applies master `lo + i` with gathered sum `sum`: its new rank into
    /// `rank` (which held `x`), its next contribution into `next`, and its
    /// terms into `acc` (the driver's `take_step` and `prepare_step`).
    #[inline(always)]
    fn apply(
        &self,
        step: Step,
        i: usize,
        sum: f64,
        rank: &mut f64,
        next: &mut f64,
        acc: &mut Sums,
    ) {
        let v = self.lo + i as VertexId;
        let t = self.uniform.unwrap_or_else(|| self.teleport.at(v));
        let y = step.update(self.d, sum, t);
        let (deg, lone) = (self.deg[i], self.lone[i]);
        acc[0] += (y - step.prior(lone, *rank, t)).abs();
        *rank = y;
        add_mass(acc, y, deg, lone);
        *next = contribution::<f64>(y, deg as usize);
    }

    /// The sums of ranks `x` without changing them (the start's).
    fn start_sums(&self, x: &[f64]) -> Sums {
        let blocks: Vec<Sums> = x
            .par_chunks(BLOCK)
            .enumerate()
            .map(|(b, xs)| {
                let mut acc = [0.0; 4];
                for (k, &y) in xs.iter().enumerate() {
                    let i = b * BLOCK + k;
                    add_mass(&mut acc, y, self.deg[i], self.lone[i]);
                }
                acc
            })
            .collect();
        add_blocks(&blocks)
    }

    /// One block (masters `i0..i0 + ranks.len()`) of the fused pass of a
    /// lone rank: each master's list in `l` summed over `prev` and applied
    /// at once.
    #[allow(clippy::too_many_arguments)]
    fn sweep_fused(
        &self,
        step: Step,
        l: &Lists,
        prev: &[f64],
        fetch: bool,
        i0: usize,
        ranks: &mut [f64],
        next: &mut [f64],
    ) -> Sums {
        let (keys, offsets, ends, _) = l.raw();
        let (lo, v0) = (self.lo, self.lo + i0 as VertexId);
        let mut k = keys.partition_point(|&x| x < v0);
        let kend = keys.partition_point(|&x| x < v0 + ranks.len() as VertexId);
        let first = offsets[k] as usize;
        // The block's list entries, contiguous: `j` walks them across
        // vertex boundaries so the prefetch runs ahead uniformly.
        let block_ends = &ends[first..offsets[kend] as usize];
        let mut j = 0;
        let mut acc = [0.0; 4];
        for (i, (rank, next)) in ranks.iter_mut().zip(next.iter_mut()).enumerate() {
            let mut sum = 0.0f64;
            if k < kend && keys[k] == v0 + i as VertexId {
                let stop = offsets[k + 1] as usize - first;
                while j < stop {
                    if fetch {
                        if let Some(&w) = block_ends.get(j + PREFETCH_AHEAD) {
                            prefetch(prev, w.wrapping_sub(lo) as usize);
                        }
                    }
                    sum += prev[(block_ends[j] - lo) as usize];
                    j += 1;
                }
                k += 1;
            }
            self.apply(step, i0 + i, sum, rank, next, &mut acc);
        }
        acc
    }
}

/// The per-component sums of `blocks`, in block order.
fn add_blocks(blocks: &[Sums]) -> Sums {
    let mut s = [0.0; 4];
    for (c, x) in s.iter_mut().enumerate() {
        *x = blocks.iter().map(|b| b[c]).sum();
    }
    s
}

/// PageRank with `cfg` (Jacobi in `f64`; `cfg.method` and `cfg.precision`
/// are not used, as by the driver) on the graph `exec` runs on, by the
/// fused pull of the module docs; collective: every rank calls it and gets
/// the same output. `Err` when `cfg` or the graph is refused (as the
/// driver refuses them), or with the transport's fault.
pub fn run<C: Comm>(exec: &DistExecutor<'_, C>, cfg: &Config) -> Result<Output, RunError> {
    let view = exec.dist_view();
    let teleport = prepare(view, cfg)?;
    let isolated = Isolated::of(view, cfg);
    let n = view.num_vertices();
    if n == 0 {
        return Ok(Output {
            rank: Vec::new(),
            iterations: 0,
            converged: true,
            change: 0.0,
        });
    }
    let r = exec.part().masters();
    let l = exec.part().pull(Arcs::Out);
    let m = Masters {
        lo: r.start,
        d: cfg.damping,
        uniform: match &teleport {
            Teleport::Uniform(t) => Some(*t),
            Teleport::Sources { .. } => None,
        },
        teleport: &teleport,
        deg: r.clone().map(|v| view.out_degree(v) as u32).collect(),
        lone: r.clone().map(|v| Isolated::is_isolated(view, v)).collect(),
    };
    let mut routes = Routes::new(exec, l)?;
    let mut rank = vec![1.0 / n as f64; r.len()];
    // Contributions, padded with zeros to the tiles' square (see
    // `tiles_of`); the passes write the masters' only.
    let width = r.len().max(l.keys().len());
    let mut old: Vec<f64> = (0..width)
        .map(|i| match m.deg.get(i) {
            Some(&deg) => contribution::<f64>(rank[i], deg as usize),
            None => 0.0,
        })
        .collect();
    let mut new = vec![0.0f64; width];
    let totals = |local: Sums| exec_sum(exec, local).ok_or_else(|| fault(exec));
    let next_step = |s: Sums| match isolated {
        Some(iso) => iso.step(cfg.damping, s[3], s[2]),
        None => Step::plain(s[1]),
    };
    let mut step = next_step(totals(m.start_sums(&rank))?);
    let fetch = prefetch_contributions::<f64>(r.len());
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    let (mut iterations, mut converged, mut change) = (0, false, 0.0);
    while iterations < limit {
        plexus_engine::progress::superstep(n as u64);
        let local = exec.stage(n as u64, || {
            let s = match (exec.comm().size(), exec.pull_tiles()) {
                (1, Some(t)) => Some(tiled_pass(&m, step, t, &old, &mut rank, &mut new)),
                (1, None) => Some(fused_pass(&m, step, l, &old, fetch, &mut rank, &mut new)),
                _ => routes.pass(exec, &m, step, (&old, fetch), &mut rank, &mut new),
            };
            (s, MODE)
        });
        let s = totals(local.ok_or_else(|| fault(exec))?)?;
        std::mem::swap(&mut old, &mut new);
        change = s[0];
        iterations += 1;
        converged = change < n as f64 * cfg.tolerance;
        step = next_step(s);
        if converged && cfg.iterations.is_none() {
            break;
        }
    }
    Ok(Output {
        rank: all_ranks(exec, rank)?,
        iterations,
        converged,
        change,
    })
}

/// The recorded fault (a transport call returned nothing).
fn fault<C: Comm>(exec: &DistExecutor<'_, C>) -> DistError {
    exec.collective_fault()
}

/// The fused pass of a lone rank (see the module docs); its block sums
/// added in block order.
fn fused_pass(
    m: &Masters<'_>,
    step: Step,
    l: &Lists,
    prev: &[f64],
    fetch: bool,
    rank: &mut [f64],
    next: &mut [f64],
) -> Sums {
    let blocks: Vec<Sums> = rank
        .par_chunks_mut(BLOCK)
        .zip(next[..m.deg.len()].par_chunks_mut(BLOCK))
        .enumerate()
        .map(|(b, (ranks, next))| m.sweep_fused(step, l, prev, fetch, b * BLOCK, ranks, next))
        .collect();
    add_blocks(&blocks)
}

/// The pass of a lone rank over tiles whose targets are the masters: each
/// tile block's sums applied while they are in cache (the in-memory
/// kernel's tiled pass); its block sums added in block order.
fn tiled_pass(
    m: &Masters<'_>,
    step: Step,
    t: &Tiles,
    prev: &[f64],
    rank: &mut [f64],
    next: &mut [f64],
) -> Sums {
    let masters = rank.len();
    let pieces = split_by_blocks(t, rank)
        .into_iter()
        .zip(split_by_blocks(t, &mut next[..masters]))
        .collect();
    let blocks = map_blocks(t, prev, pieces, |b, (ranks, next), sums| {
        let mut acc = [0.0; 4];
        for (k, ((r, x), &s)) in ranks.iter_mut().zip(next).zip(sums).enumerate() {
            m.apply(step, b.lo as usize + k, s, r, x, &mut acc);
        }
        acc
    });
    add_blocks(&blocks)
}

/// `local` summed over the ranks in rank order (one all-gather of four
/// `f64`s; none on one rank); `None` after a fault.
fn exec_sum<C: Comm>(exec: &DistExecutor<'_, C>, local: Sums) -> Option<Sums> {
    if exec.comm().size() == 1 {
        return Some(local);
    }
    let bytes: Vec<u8> = local.iter().flat_map(|x| x.to_le_bytes()).collect();
    let all = exec.gather(bytes)?;
    let mut s = [0.0; 4];
    for (peer, b) in all.iter().enumerate() {
        if b.len() != 32 {
            exec.fail(malformed(exec, peer, "four f64 sums"));
            return None;
        }
    }
    for (c, x) in s.iter_mut().enumerate() {
        *x = all.iter().map(|b| f64_at(b, c)).sum();
    }
    Some(s)
}

/// The `i`-th little-endian `f64` of `b` (which holds it).
#[inline]
fn f64_at(b: &[u8], i: usize) -> f64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[8 * i..8 * i + 8]);
    f64::from_le_bytes(w)
}

fn malformed<C: Comm>(exec: &DistExecutor<'_, C>, peer: usize, what: &str) -> DistError {
    DistError::Malformed {
        rank: exec.comm().rank(),
        peer,
        what: what.into(),
    }
}

/// Every rank's master ranks, concatenated in rank order (one all-gather;
/// none on one rank).
fn all_ranks<C: Comm>(exec: &DistExecutor<'_, C>, mine: Vec<f64>) -> Result<Vec<f64>, DistError> {
    exec.gather_master_values(mine, "the ranks of its masters", |x| {
        (0.0..=f64::MAX).contains(&x)
    })
}

/// Whether `b` holds exactly `count` little-endian `f64`s, each finite
/// and not negative (partial sums of contributions, ranks).
fn valid_values(b: &[u8], count: usize) -> bool {
    b.len() == 8 * count
        && b.par_chunks_exact(8)
            .with_min_len(1024)
            .all(|c| (0.0..=f64::MAX).contains(&f64_at(c, 0)))
}

/// Whether `b` holds little-endian `u32` keys, strictly ascending, all in
/// `range`.
fn valid_keys(b: &[u8], range: std::ops::Range<VertexId>) -> bool {
    b.len().is_multiple_of(4) && {
        let keys: Vec<u32> = b
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        keys.windows(2).all(|w| w[0] < w[1]) && keys.iter().all(|k| range.contains(k))
    }
}

/// Where the partial sums go on several ranks: the keys of this rank's
/// pull lists mastered by each rank (a run of the ascending keys), and the
/// masters (as indices from the first) each peer sends partials of, in
/// the peer's order. Made once per run (one all-to-all of key ids).
struct Routes {
    /// `runs[r]`: the indices of the keys rank `r` masters.
    runs: Vec<std::ops::Range<usize>>,
    /// `from[r]`: the master indices of rank `r`'s partials.
    from: Vec<Vec<u32>>,
    /// The partial sum of each key (padded as the contributions).
    part: Vec<f64>,
    /// The combined sum of each master.
    sum: Vec<f64>,
}

impl Routes {
    fn new<C: Comm>(exec: &DistExecutor<'_, C>, l: &Lists) -> Result<Routes, DistError> {
        let (me, p) = (exec.comm().rank(), exec.comm().size());
        let cuts = exec.part().cuts();
        let keys = l.keys();
        let runs: Vec<std::ops::Range<usize>> = (0..p)
            .map(|r| {
                let range = cuts.range(r);
                keys.partition_point(|&k| k < range.start)..keys.partition_point(|&k| k < range.end)
            })
            .collect();
        let masters = exec.part().masters().len();
        let (part, sum) = (vec![0.0; masters.max(keys.len())], vec![0.0; masters]);
        if p == 1 {
            return Ok(Routes {
                runs,
                from: vec![Vec::new()],
                part,
                sum,
            });
        }
        let out: Vec<Vec<u8>> = (0..p)
            .map(|r| {
                if r == me {
                    Vec::new()
                } else {
                    keys[runs[r].clone()]
                        .iter()
                        .flat_map(|k| k.to_le_bytes())
                        .collect()
                }
            })
            .collect();
        let got = exec.exchange(out).ok_or_else(|| fault(exec))?;
        let mine = exec.part().masters();
        let mut from = Vec::with_capacity(p);
        for (peer, b) in got.iter().enumerate() {
            if peer != me && !valid_keys(b, mine.clone()) {
                let e = malformed(exec, peer, "the keys of its partial sums");
                exec.fail(e.clone());
                return Err(e);
            }
            from.push(
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) - mine.start)
                    .collect(),
            );
        }
        Ok(Routes {
            runs,
            from,
            part,
            sum,
        })
    }

    /// One iteration on several ranks (gather, exchange, combine in rank
    /// order, apply); the rank's sums, or `None` after a fault.
    /// `prev`: the contributions, and whether to prefetch them.
    fn pass<C: Comm>(
        &mut self,
        exec: &DistExecutor<'_, C>,
        m: &Masters<'_>,
        step: Step,
        (prev, fetch): (&[f64], bool),
        rank: &mut [f64],
        next: &mut [f64],
    ) -> Option<Sums> {
        let (me, p) = (exec.comm().rank(), exec.comm().size());
        let l = exec.part().pull(Arcs::Out);
        match exec.pull_tiles() {
            Some(t) => plexus_engine::tiled::gather(t, prev, &mut self.part),
            None => gather(m.lo, l, prev, fetch, &mut self.part),
        }
        let part = &self.part;
        let out: Vec<Vec<u8>> = (0..p)
            .map(|r| {
                if r == me {
                    Vec::new()
                } else {
                    part[self.runs[r].clone()]
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect()
                }
            })
            .collect();
        let got = exec.exchange(out)?;
        let sum = &mut self.sum;
        sum.par_iter_mut().with_min_len(4096).for_each(|x| *x = 0.0);
        for (peer, b) in got.iter().enumerate() {
            if peer == me {
                // The own partials, by the O(1) list index of each master.
                sum.par_iter_mut()
                    .enumerate()
                    .with_min_len(1024)
                    .for_each(|(i, x)| {
                        if let Some(k) = l.index(m.lo + i as VertexId) {
                            *x += part[k];
                        }
                    });
                continue;
            }
            if !valid_values(b, self.from[peer].len()) {
                exec.fail(malformed(exec, peer, "partial sums"));
                return None;
            }
            for (k, c) in self.from[peer].iter().zip(b.chunks_exact(8)) {
                sum[*k as usize] += f64_at(c, 0);
            }
        }
        let blocks: Vec<Sums> = rank
            .par_chunks_mut(BLOCK)
            .zip(next[..sum.len()].par_chunks_mut(BLOCK))
            .zip(sum.par_chunks(BLOCK))
            .enumerate()
            .map(|(b, ((ranks, next), sums))| {
                let mut acc = [0.0; 4];
                for (k, ((r, x), &s)) in ranks.iter_mut().zip(next).zip(sums).enumerate() {
                    m.apply(step, b * BLOCK + k, s, r, x, &mut acc);
                }
                acc
            })
            .collect();
        Some(add_blocks(&blocks))
    }
}

/// Tiles ([`plexus_graph::tiles`]) of a rank's pull lists `l`, for the
/// gather: sources are the master indices (`u − lo`); targets are the
/// master indices too with `by_master` (a lone rank, whose keys are all
/// masters: its pass applies each tile block as it is gathered), else
/// the key indices, both padded to the larger count `max(|keys|,
/// |masters|)` (the tiled gather reads a square CSC; padding lists are
/// empty and padding contributions 0). `shape`: segment shift and block targets, or
/// `None` for the machine's ([`Tiles::build`]) and only where the store
/// would tile a graph of the masters' count and these arcs
/// ([`Tiles::worthwhile`]). `None` also when a list holds a source outside
/// `masters` (a damaged part; the run refuses it).
pub(crate) fn tiles_of(
    l: &Lists,
    masters: std::ops::Range<VertexId>,
    by_master: bool,
    shape: Option<(u32, usize)>,
) -> Option<Tiles> {
    let (keys, offsets, ends, _) = l.raw();
    let entries = ends.len() as u64;
    if shape.is_none() && !Tiles::worthwhile(masters.len(), entries) {
        return None;
    }
    if ends.par_iter().any(|v| !masters.contains(v)) {
        return None;
    }
    let offs = if by_master {
        if keys.iter().any(|k| !masters.contains(k)) {
            return None;
        }
        // Target `i` is master `lo + i`, with or without a list.
        let mut offs = vec![0u64; masters.len() + 1];
        for (i, v) in masters.clone().enumerate() {
            offs[i + 1] = match l.index(v) {
                Some(k) => offsets[k + 1],
                None => offs[i],
            };
        }
        offs
    } else {
        let mut offs = offsets.to_vec();
        offs.resize(masters.len().max(keys.len()) + 1, entries);
        offs
    };
    let sources: Vec<VertexId> = ends.par_iter().map(|&u| u - masters.start).collect();
    let inc = Adjacency::new(Section::owned(offs), Section::owned(sources), None).ok()?;
    Some(match shape {
        Some((shift, block)) => Tiles::build_with(&inc, shift, block),
        None => Tiles::build(&inc),
    })
}

/// The partial sum of every key of `l` over the contributions `prev` of
/// the masters from `lo`, each list in list order, into the first
/// `|keys|` entries of `part`.
fn gather(lo: VertexId, l: &Lists, prev: &[f64], fetch: bool, part: &mut [f64]) {
    let (keys, offsets, ends, _) = l.raw();
    part[..keys.len()]
        .par_chunks_mut(GATHER_GRAIN)
        .enumerate()
        .for_each(|(c, out)| {
            let k0 = c * GATHER_GRAIN;
            let first = offsets[k0] as usize;
            let chunk_ends = &ends[first..offsets[k0 + out.len()] as usize];
            let mut j = 0;
            for (i, x) in out.iter_mut().enumerate() {
                let stop = offsets[k0 + i + 1] as usize - first;
                let mut sum = 0.0f64;
                while j < stop {
                    if fetch {
                        if let Some(&w) = chunk_ends.get(j + PREFETCH_AHEAD) {
                            prefetch(prev, w.wrapping_sub(lo) as usize);
                        }
                    }
                    sum += prev[(chunk_ends[j] - lo) as usize];
                    j += 1;
                }
                *x = sum;
            }
        });
}

#[cfg(test)]
pub(crate) mod tests;
