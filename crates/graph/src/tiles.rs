//! In-edges cut into tiles for pull passes that sum a per-vertex value over
//! every vertex's in-neighbours (PageRank's gather).
//!
//! A tile is a block of targets (at most [`BLOCK_TARGETS`]: as many as
//! fill half of the building machine's L2 with f64 sums) by a segment of
//! `2^shift` consecutive sources (whose values stay in L1). A target's in-list meets a segment in one run of
//! consecutive CSC entries. Within a tile the runs are grouped by length
//! class (1, 2, …, [`FIXED`] arcs, then longer), and within a class ordered
//! by target, so a kernel sums runs of one class with a loop of a fixed trip
//! count instead of a loop whose exit mispredicts on short lists. The
//! longer runs are written by decreasing length (equal lengths by target),
//! so their loop's exit mostly predicts too; readers accept them in any
//! order.
//!
//! Blocks cover `0..n` in order; a block's tiles are in segment order, so
//! a target meets its in-neighbours in CSC order. Stored beside the CSC in
//! `graph.plx` when [`Tiles::worthwhile`] says so.
//!
//! Invariants ([`Tiles::check`]): blocks are contiguous, cover `0..n`, hold
//! at most [`BLOCK_TARGETS`] targets and consecutive tile ranges; a tile's
//! runs and sources are the next ones in the arrays; every target offset is
//! inside its block and every source offset inside its segment and `< n`.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::section::Section;
use crate::Adjacency;

/// Runs of up to `FIXED` arcs form a class of their own length.
pub const FIXED: usize = 8;
/// Length classes: 1..=FIXED, then longer runs.
pub const CLASSES: usize = FIXED + 1;
/// Most targets a block may hold: a target's offset in its block is a u16.
pub const BLOCK_TARGETS: usize = 1 << 16;
/// Targets a block holds when the machine's L2 size is unknown: 256 KiB of
/// f64 sums.
const DEFAULT_BLOCK_TARGETS: usize = 1 << 15;
/// Fewest targets [`block_targets_for_l2`] gives a block.
const MIN_BLOCK_TARGETS: usize = 1 << 12;
/// A block also ends once it holds `1/BLOCKS_BY_ARCS` of the arcs, so the
/// hubs at the front of a degree order spread over several blocks and
/// threads.
const BLOCKS_BY_ARCS: u64 = 64;
/// Segments of `2^SHIFT` sources: 8,192 f32 values, 32 KiB (L1).
pub const SHIFT: u32 = 13;

/// Targets per block for a core with `l2` bytes of L2: as many as half of
/// it holds in f64 sums (the other half is left to the values' and the
/// streams' lines), a power of two from 2^12 to [`BLOCK_TARGETS`];
/// 2^15 when the size is unknown. 1 MiB gives 2^16 and 512 KiB 2^15.
pub fn block_targets_for_l2(l2: Option<u64>) -> usize {
    match l2 {
        None => DEFAULT_BLOCK_TARGETS,
        Some(bytes) => {
            let fit = (bytes / 2 / 8).max(1);
            (1usize << fit.ilog2()).clamp(MIN_BLOCK_TARGETS, BLOCK_TARGETS)
        }
    }
}

/// One (target block, source segment) tile.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct Tile {
    /// The segment: sources `segment << shift ..`.
    pub segment: u32,
    /// Runs per length class (`runs[c]` of `c + 1` arcs; the last, longer).
    pub runs: [u32; CLASSES],
    /// Index of the tile's first run in [`Tiles::targets`].
    pub first_run: u64,
    /// Index of the tile's first arc in [`Tiles::sources`].
    pub first_source: u64,
    /// Index of the tile's first long run in [`Tiles::long_lengths`].
    pub first_long: u64,
}

impl Tile {
    /// Where the tile's long runs start: the index of the first in
    /// [`Tiles::targets`] and of its first arc in [`Tiles::sources`] (after
    /// the runs of classes 1..=[`FIXED`]).
    pub fn long_runs_start(&self) -> (usize, usize) {
        let fixed = &self.runs[..FIXED];
        let runs: usize = fixed.iter().map(|&k| k as usize).sum();
        let arcs: usize = fixed
            .iter()
            .zip(1..)
            .map(|(&k, len)| k as usize * len)
            .sum();
        (
            self.first_run as usize + runs,
            self.first_source as usize + arcs,
        )
    }
}

/// One block of targets `lo..hi` with its tiles `first_tile..end_tile`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct TileBlock {
    pub lo: u64,
    pub hi: u64,
    pub first_tile: u64,
    pub end_tile: u64,
}

/// The tiles of a CSC; see the module docs.
#[derive(Clone, Debug)]
pub struct Tiles {
    pub(crate) shift: u32,
    pub(crate) blocks: Section<TileBlock>,
    pub(crate) tiles: Section<Tile>,
    pub(crate) targets: Section<u16>,
    pub(crate) sources: Section<u16>,
    pub(crate) long_lengths: Section<u32>,
}

fn class_of(len: usize) -> usize {
    len.min(CLASSES) - 1
}

/// Calls `f(segment, class, len, start)` for each run of the sorted list.
fn for_each_run(list: &[u32], shift: u32, mut f: impl FnMut(usize, usize, usize, usize)) {
    let mut i = 0;
    while i < list.len() {
        let segment = (list[i] >> shift) as usize;
        let mut j = i + 1;
        while j < list.len() && (list[j] >> shift) as usize == segment {
            j += 1;
        }
        f(segment, class_of(j - i), j - i, i);
        i = j;
    }
}

/// One block's part of the arrays, built on its own and then concatenated.
struct BlockPart {
    lo: usize,
    hi: usize,
    tiles: Vec<Tile>,
    targets: Vec<u16>,
    sources: Vec<u16>,
    long_lengths: Vec<u32>,
}

impl Tiles {
    /// Whether a graph of `n` vertices and `arcs` arcs gets tiles when
    /// stored: its f32 values do not fit L2 (`n ≥ 2^18`) and its in-lists
    /// average at least 8 arcs, so runs are longer than one arc on
    /// average (a road graph, 2.5 arcs a vertex, gains nothing).
    pub fn worthwhile(n: usize, arcs: u64) -> bool {
        n >= 1 << 18 && arcs >= 8 * n as u64
    }

    /// Tiles of `inc` (in-lists sorted by source) with segments of
    /// [`SHIFT`] and blocks sized to this machine's L2
    /// ([`block_targets_for_l2`] of [`crate::caches::l2_bytes`]).
    pub fn build(inc: &Adjacency) -> Tiles {
        Tiles::build_with(inc, SHIFT, block_targets_for_l2(crate::caches::l2_bytes()))
    }

    /// Tiles with segments of `2^shift` sources (`shift ≤ 16`) and blocks of
    /// at most `block_targets ≤ BLOCK_TARGETS` targets (tests use small ones).
    pub fn build_with(inc: &Adjacency, shift: u32, block_targets: usize) -> Tiles {
        assert!(shift <= 16 && (1..=BLOCK_TARGETS).contains(&block_targets));
        let offsets = inc.offsets();
        let sources = inc.neighbor_array();
        let n = offsets.len().saturating_sub(1);
        let per_block = (sources.len() as u64 / BLOCKS_BY_ARCS).max(1);
        let bounds = crate::builder::vertex_blocks(offsets, per_block, block_targets);
        let segments = (n >> shift) + 1;
        let parts: Vec<BlockPart> = bounds
            .par_windows(2)
            .with_max_len(1)
            .map(|w| build_block(offsets, sources, w[0], w[1], shift, segments))
            .collect();
        // Concatenate, rebasing each block's tiles on the global arrays.
        let mut blocks = Vec::with_capacity(parts.len());
        let (mut tiles, mut targets, mut srcs, mut longs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for p in parts {
            let first_tile = tiles.len() as u64;
            let (r, a, l) = (targets.len() as u64, srcs.len() as u64, longs.len() as u64);
            tiles.extend(p.tiles.iter().map(|t| Tile {
                first_run: t.first_run + r,
                first_source: t.first_source + a,
                first_long: t.first_long + l,
                ..*t
            }));
            targets.extend_from_slice(&p.targets);
            srcs.extend_from_slice(&p.sources);
            longs.extend_from_slice(&p.long_lengths);
            blocks.push(TileBlock {
                lo: p.lo as u64,
                hi: p.hi as u64,
                first_tile,
                end_tile: tiles.len() as u64,
            });
        }
        Tiles {
            shift,
            blocks: Section::owned(blocks),
            tiles: Section::owned(tiles),
            targets: Section::owned(targets),
            sources: Section::owned(srcs),
            long_lengths: Section::owned(longs),
        }
    }

    /// Builds the tiles of a CSC whose offsets are in memory but whose
    /// sources are not, block by block, exactly as [`Tiles::build`] does
    /// (same blocks, same arrays): `read(range)` returns the sources
    /// `range` of the CSC (a block's, at most about `m / 64` arcs plus one
    /// list), and `emit` receives each block's tiles (rebased on the
    /// arrays emitted before), run targets, sources and long-run lengths,
    /// in order. Returns the block records. Blocks are built a few at a
    /// time on the thread pool.
    pub(crate) fn build_by_blocks<E: Send>(
        offsets: &[u64],
        mut read: impl FnMut(std::ops::Range<u64>) -> Result<Vec<u32>, E>,
        mut emit: impl FnMut(&[Tile], &[u16], &[u16], &[u32]) -> Result<(), E>,
    ) -> Result<Vec<TileBlock>, E> {
        let shift = SHIFT;
        let block_targets = block_targets_for_l2(crate::caches::l2_bytes());
        let n = offsets.len().saturating_sub(1);
        let m = offsets.last().copied().unwrap_or(0);
        let per_block = (m / BLOCKS_BY_ARCS).max(1);
        let bounds = crate::builder::vertex_blocks(offsets, per_block, block_targets);
        let segments = (n >> shift) + 1;
        let mut blocks = Vec::with_capacity(bounds.len());
        let (mut tiles, mut runs, mut arcs, mut longs) = (0u64, 0u64, 0u64, 0u64);
        let batch = rayon::current_num_threads().max(1);
        let windows: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        for group in windows.chunks(batch) {
            let mut inputs = Vec::with_capacity(group.len());
            for &(lo, hi) in group {
                let base = offsets[lo];
                let sources = read(base..offsets[hi])?;
                let local: Vec<u64> = offsets[lo..=hi].iter().map(|&o| o - base).collect();
                inputs.push((lo, hi, local, sources));
            }
            let parts: Vec<BlockPart> = inputs
                .par_iter()
                .with_max_len(1)
                .map(|(lo, hi, local, sources)| {
                    let mut p = build_block(local, sources, 0, hi - lo, shift, segments);
                    (p.lo, p.hi) = (*lo, *hi);
                    p
                })
                .collect();
            drop(inputs);
            for p in parts {
                let rebased: Vec<Tile> = p
                    .tiles
                    .iter()
                    .map(|t| Tile {
                        first_run: t.first_run + runs,
                        first_source: t.first_source + arcs,
                        first_long: t.first_long + longs,
                        ..*t
                    })
                    .collect();
                emit(&rebased, &p.targets, &p.sources, &p.long_lengths)?;
                blocks.push(TileBlock {
                    lo: p.lo as u64,
                    hi: p.hi as u64,
                    first_tile: tiles,
                    end_tile: tiles + p.tiles.len() as u64,
                });
                tiles += p.tiles.len() as u64;
                runs += p.targets.len() as u64;
                arcs += p.sources.len() as u64;
                longs += p.long_lengths.len() as u64;
            }
        }
        Ok(blocks)
    }

    /// Sources per segment are `2^shift`.
    pub fn shift(&self) -> u32 {
        self.shift
    }
    /// The blocks, covering the targets in order.
    pub fn blocks(&self) -> &[TileBlock] {
        &self.blocks
    }
    /// Every tile, block by block.
    pub fn tiles(&self) -> &[Tile] {
        &self.tiles
    }
    /// Each run's target, as an offset in its block.
    pub fn targets(&self) -> &[u16] {
        &self.targets
    }
    /// Each arc's source, as an offset in its segment.
    pub fn sources(&self) -> &[u16] {
        &self.sources
    }
    /// The length of each run longer than [`FIXED`].
    pub fn long_lengths(&self) -> &[u32] {
        &self.long_lengths
    }
    /// Bytes of the five arrays.
    pub fn size_bytes(&self) -> u64 {
        self.blocks.size_bytes()
            + self.tiles.size_bytes()
            + self.targets.size_bytes()
            + self.sources.size_bytes()
            + self.long_lengths.size_bytes()
    }

    /// Checks the invariants (module docs) for a graph of `n` vertices and
    /// `arcs` in-arcs: the block and tile tables always (O(tiles)), every
    /// target and source offset too when `arrays` (O(arcs)). Names the first
    /// violation.
    pub fn check(&self, n: usize, arcs: u64, arrays: bool) -> Result<(), String> {
        if self.shift > 16 {
            return Err(format!("tile segment shift {} is above 16", self.shift));
        }
        let (mut next_lo, mut next_tile) = (0u64, 0u64);
        let (mut run, mut arc, mut long) = (0u64, 0u64, 0u64);
        for (i, b) in self.blocks.iter().enumerate() {
            if b.lo != next_lo
                || b.hi <= b.lo
                || b.hi - b.lo > BLOCK_TARGETS as u64
                || b.first_tile != next_tile
                || b.end_tile < b.first_tile
            {
                return Err(format!("tile block {i} does not follow the one before it"));
            }
            if b.end_tile <= self.tiles.len() as u64 {
                let own = &self.tiles[b.first_tile as usize..b.end_tile as usize];
                if own.windows(2).any(|w| w[0].segment >= w[1].segment) {
                    return Err(format!("tile block {i} has tiles out of segment order"));
                }
            }
            next_lo = b.hi;
            next_tile = b.end_tile;
        }
        if next_lo != n as u64 || next_tile != self.tiles.len() as u64 {
            return Err(format!(
                "tile blocks end at vertex {next_lo} and tile {next_tile}, not {n} and {}",
                self.tiles.len()
            ));
        }
        for (i, t) in self.tiles.iter().enumerate() {
            if t.first_run != run
                || t.first_source != arc
                || t.first_long != long
                || (t.segment as u64) << self.shift >= n as u64
            {
                return Err(format!("tile {i} does not follow the one before it"));
            }
            for (c, &k) in t.runs.iter().enumerate() {
                run += k as u64;
                if c < FIXED {
                    arc += k as u64 * (c as u64 + 1);
                }
            }
            let longs = self
                .long_lengths
                .get(long as usize..(long + t.runs[FIXED] as u64) as usize);
            let longs =
                longs.ok_or_else(|| format!("tile {i} has more long runs than the table"))?;
            if longs.iter().any(|&l| l as usize <= FIXED) {
                return Err(format!("tile {i} has a long run of {FIXED} arcs or fewer"));
            }
            arc += longs.iter().map(|&l| l as u64).sum::<u64>();
            long += t.runs[FIXED] as u64;
        }
        if run != self.targets.len() as u64
            || arc != self.sources.len() as u64
            || long != self.long_lengths.len() as u64
            || arc != arcs
        {
            return Err(format!(
                "tile tables count {run} runs, {arc} arcs and {long} long runs; the arrays hold {}, {} and {} (the graph {arcs} arcs)",
                self.targets.len(),
                self.sources.len(),
                self.long_lengths.len()
            ));
        }
        if arrays {
            self.check_arrays(n)?;
        }
        Ok(())
    }

    fn check_arrays(&self, n: usize) -> Result<(), String> {
        self.blocks.par_iter().enumerate().try_for_each(|(i, b)| {
            let width = (b.hi - b.lo) as usize;
            for k in b.first_tile as usize..b.end_tile as usize {
                let t = &self.tiles[k];
                let base = (t.segment as usize) << self.shift;
                let limit = (1usize << self.shift).min(n - base);
                let runs: u64 = t.runs.iter().map(|&c| c as u64).sum();
                let end_source = self
                    .tiles
                    .get(k + 1)
                    .map_or(self.sources.len() as u64, |next| next.first_source);
                let targets = &self.targets[t.first_run as usize..(t.first_run + runs) as usize];
                if targets.iter().any(|&x| x as usize >= width) {
                    return Err(format!(
                        "tile block {i} has a run target outside its {width} vertices"
                    ));
                }
                if self.sources[t.first_source as usize..end_source as usize]
                    .iter()
                    .any(|&s| s as usize >= limit)
                {
                    return Err(format!(
                        "tile block {i} has a source outside segment {}",
                        t.segment
                    ));
                }
            }
            Ok(())
        })
    }
}

/// Per-thread scratch of [`build_block`]: counters per (segment, class)
/// and per segment, sized once to the segment count and left all-zero
/// between blocks (only the entries a block touched are reset), so that a
/// block costs time in its own runs, not in the graph's number of segments.
#[derive(Default)]
struct Scratch {
    /// Per (segment, class): runs counted, then the next run's slot.
    runs: Vec<usize>,
    /// Per (segment, class): arcs counted, then the next arc's slot.
    arcs: Vec<usize>,
    /// Per segment: 1 once touched, then the next long run's slot.
    long: Vec<usize>,
    /// The segments this block touched.
    touched: Vec<usize>,
    /// Set while a block is being built (a panic leaves it set, and the
    /// next use clears every counter).
    dirty: bool,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

fn build_block(
    offsets: &[u64],
    sources: &[u32],
    lo: usize,
    hi: usize,
    shift: u32,
    segments: usize,
) -> BlockPart {
    SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        let st = &mut *scratch;
        if st.dirty {
            st.runs.fill(0);
            st.arcs.fill(0);
            st.long.fill(0);
            st.touched.clear();
        }
        if st.long.len() < segments {
            st.runs.resize(segments * CLASSES, 0);
            st.arcs.resize(segments * CLASSES, 0);
            st.long.resize(segments, 0);
        }
        st.dirty = true;
        let part = fill_block(offsets, sources, lo, hi, shift, st);
        for &s in &st.touched {
            st.runs[s * CLASSES..(s + 1) * CLASSES].fill(0);
            st.arcs[s * CLASSES..(s + 1) * CLASSES].fill(0);
            st.long[s] = 0;
        }
        st.touched.clear();
        st.dirty = false;
        part
    })
}

/// The tiles of targets `lo..hi`, with `st`'s counters all zero on entry.
fn fill_block(
    offsets: &[u64],
    sources: &[u32],
    lo: usize,
    hi: usize,
    shift: u32,
    st: &mut Scratch,
) -> BlockPart {
    let list = |v: usize| &sources[offsets[v] as usize..offsets[v + 1] as usize];
    let Scratch {
        runs,
        arcs,
        long,
        touched,
        ..
    } = st;
    // Count runs and arcs per (segment, class).
    for v in lo..hi {
        for_each_run(list(v), shift, |s, c, len, _| {
            if long[s] == 0 {
                long[s] = 1;
                touched.push(s);
            }
            runs[s * CLASSES + c] += 1;
            arcs[s * CLASSES + c] += len;
        });
    }
    // A tile per touched segment, in segment order; counts become slots.
    touched.sort_unstable();
    let (mut r, mut a, mut l) = (0, 0, 0);
    let mut tiles = Vec::with_capacity(touched.len());
    for &s in touched.iter() {
        let mut tile = Tile {
            segment: s as u32,
            runs: [0; CLASSES],
            first_run: r as u64,
            first_source: a as u64,
            first_long: l as u64,
        };
        for c in 0..CLASSES {
            let k = s * CLASSES + c;
            tile.runs[c] = runs[k] as u32;
            let count = runs[k];
            runs[k] = r;
            r += count;
            let count = arcs[k];
            arcs[k] = a;
            a += count;
        }
        long[s] = l;
        l += tile.runs[FIXED] as usize;
        tiles.push(tile);
    }
    // Place every run; targets ascend within a class since `v` does.
    let mut part = BlockPart {
        lo,
        hi,
        tiles,
        targets: vec![0; r],
        sources: vec![0; a],
        long_lengths: vec![0; l],
    };
    for v in lo..hi {
        let whole = list(v);
        for_each_run(whole, shift, |s, c, len, start| {
            let k = s * CLASSES + c;
            part.targets[runs[k]] = (v - lo) as u16;
            runs[k] += 1;
            let base = (s as u32) << shift;
            let slots = &mut part.sources[arcs[k]..arcs[k] + len];
            for (slot, &u) in slots.iter_mut().zip(&whole[start..start + len]) {
                *slot = (u - base) as u16;
            }
            arcs[k] += len;
            if c == FIXED {
                part.long_lengths[long[s]] = len as u32;
                long[s] += 1;
            }
        });
    }
    for tile in &part.tiles {
        order_long_runs(
            tile,
            &mut part.targets,
            &mut part.sources,
            &mut part.long_lengths,
        );
    }
    part
}

/// Reorders `tile`'s long runs (placed in target order) by decreasing
/// length, equal lengths by target, moving their targets, lengths and arcs
/// along. A kernel's loop over a long run then mostly exits at the trip
/// count of the run before it, so the exit predicts. Each
/// target has one run a tile, so the sums are unchanged.
fn order_long_runs(tile: &Tile, targets: &mut [u16], sources: &mut [u16], lengths: &mut [u32]) {
    let long = tile.runs[FIXED] as usize;
    let (first_run, first_arc) = tile.long_runs_start();
    let first_long = tile.first_long as usize;
    let lengths = &mut lengths[first_long..first_long + long];
    if lengths.windows(2).all(|w| w[0] >= w[1]) {
        return;
    }
    let targets = &mut targets[first_run..first_run + long];
    let arcs: usize = lengths.iter().map(|&l| l as usize).sum();
    let sources = &mut sources[first_arc..first_arc + arcs];
    // Each run as (length, target, first arc); a stable sort keeps equal
    // lengths in target order.
    let mut runs: Vec<(u32, u16, usize)> = Vec::with_capacity(long);
    let mut a = 0;
    for (&len, &t) in lengths.iter().zip(targets.iter()) {
        runs.push((len, t, a));
        a += len as usize;
    }
    runs.sort_by_key(|&(len, _, _)| std::cmp::Reverse(len));
    let placed = sources.to_vec();
    let mut a = 0;
    for (k, &(len, t, from)) in runs.iter().enumerate() {
        lengths[k] = len;
        targets[k] = t;
        let len = len as usize;
        sources[a..a + len].copy_from_slice(&placed[from..from + len]);
        a += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_take_half_of_l2_in_sums() {
        assert_eq!(block_targets_for_l2(Some(1 << 20)), 1 << 16);
        assert_eq!(block_targets_for_l2(Some(512 << 10)), 1 << 15);
        assert_eq!(block_targets_for_l2(Some(1280 << 10)), 1 << 16);
        assert_eq!(block_targets_for_l2(Some(32 << 20)), BLOCK_TARGETS);
        assert_eq!(block_targets_for_l2(Some(0)), MIN_BLOCK_TARGETS);
        assert_eq!(block_targets_for_l2(None), DEFAULT_BLOCK_TARGETS);
    }
    use crate::{BuildOptions, Graph};
    use proptest::prelude::*;

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let opts = if directed {
            BuildOptions::directed()
        } else {
            BuildOptions::undirected()
        };
        Graph::from_edges(n, edges, &opts).unwrap()
    }

    /// Every arc of the CSC, read back from the tiles as (target, source).
    fn arcs_of(t: &Tiles) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for b in t.blocks() {
            for tile in &t.tiles()[b.first_tile as usize..b.end_tile as usize] {
                let (mut r, mut a, mut l) = (
                    tile.first_run as usize,
                    tile.first_source as usize,
                    tile.first_long as usize,
                );
                for (c, &k) in tile.runs.iter().enumerate() {
                    for _ in 0..k {
                        let len = if c < FIXED {
                            c + 1
                        } else {
                            t.long_lengths()[l] as usize
                        };
                        l += usize::from(c == FIXED);
                        let target = b.lo + t.targets()[r] as u64;
                        for &s in &t.sources()[a..a + len] {
                            out.push((target, ((tile.segment as u64) << t.shift()) + s as u64));
                        }
                        r += 1;
                        a += len;
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Whether every tile's long runs come by decreasing length, equal
    /// lengths by target; the number of tiles with two long runs or more.
    fn long_runs_by_length(t: &Tiles) -> (bool, usize) {
        let (mut ordered, mut tiles_with_several) = (true, 0);
        for tile in t.tiles() {
            let long = tile.runs[FIXED] as usize;
            let (first_run, _) = tile.long_runs_start();
            let lengths =
                &t.long_lengths()[tile.first_long as usize..tile.first_long as usize + long];
            let targets = &t.targets()[first_run..first_run + long];
            let keys: Vec<(std::cmp::Reverse<u32>, u16)> = lengths
                .iter()
                .zip(targets)
                .map(|(&l, &x)| (std::cmp::Reverse(l), x))
                .collect();
            ordered &= keys.windows(2).all(|w| w[0] < w[1]);
            tiles_with_several += usize::from(long >= 2);
        }
        (ordered, tiles_with_several)
    }

    #[test]
    fn long_runs_come_by_decreasing_length_then_target() {
        // Targets 0..12 each take a run of 9 + (v * 7) % 13 arcs (lengths
        // repeat) from the segment of sources 64..128, and one short run
        // from the segment before. The other targets take four scattered
        // arcs each: enough arcs that the first block (closed at 1/64 of
        // them) holds all twelve.
        let long = (0..12u32).flat_map(|v| {
            let len = 9 + (v * 7) % 13;
            (0..len)
                .map(move |k| (64 + k * 2 + v % 2, v))
                .chain([(20 + v, v)])
        });
        let filler = (12..4096u32).flat_map(|v| (0..4).map(move |k| ((v * 31 + k * 97) % 4096, v)));
        let edges: Vec<(u32, u32)> = long.chain(filler).collect();
        let g = graph(4096, &edges, true);
        let t = Tiles::build_with(g.inc(), 6, 64);
        t.check(4096, g.inc().num_edges(), true).unwrap();
        assert_eq!(long_runs_by_length(&t), (true, 1));
        let mut want: Vec<(u64, u64)> = edges.iter().map(|&(u, v)| (v as u64, u as u64)).collect();
        want.sort_unstable();
        assert_eq!(arcs_of(&t), want);
    }

    proptest! {
        #[test]
        fn tiles_hold_every_in_arc_once_and_pass_their_check(
            n in 1usize..200,
            raw in proptest::collection::vec((0u32..200, 0u32..200), 0..800),
            directed in any::<bool>(),
            shift in 0u32..6,
            block in 1usize..50,
        ) {
            let edges: Vec<(u32, u32)> = raw.into_iter().map(|(a, b)| (a % n as u32, b % n as u32)).collect();
            let g = graph(n, &edges, directed);
            let t = Tiles::build_with(g.inc(), shift, block);
            t.check(n, g.inc().num_edges(), true).map_err(TestCaseError::fail)?;
            let mut want: Vec<(u64, u64)> = (0..n as u32)
                .flat_map(|v| g.in_neighbors(v).iter().map(move |&u| (v as u64, u as u64)))
                .collect();
            want.sort_unstable();
            prop_assert_eq!(arcs_of(&t), want);
            prop_assert!(t.blocks().iter().all(|b| b.hi - b.lo <= block as u64));
            prop_assert!(long_runs_by_length(&t).0);
        }
    }

    #[test]
    fn check_names_what_is_wrong() {
        let edges: Vec<(u32, u32)> = (0..64u32)
            .flat_map(|v| [(v, (v + 1) % 64), ((v * 5) % 64, v), (0, v)])
            .collect();
        let g = graph(64, &edges, true);
        let arcs = g.inc().num_edges();
        let good = Tiles::build_with(g.inc(), 2, 8);
        good.check(64, arcs, true).unwrap();
        let with = |f: &dyn Fn(&mut Tiles)| {
            let mut t = good.clone();
            f(&mut t);
            t.check(64, arcs, true).unwrap_err()
        };
        let edit_tiles = |f: &dyn Fn(&mut Vec<Tile>)| {
            with(&|t: &mut Tiles| {
                let mut v = t.tiles.to_vec();
                f(&mut v);
                t.tiles = Section::owned(v);
            })
        };
        assert!(with(&|t| t.shift = 17).contains("shift"));
        assert!(with(&|t| {
            let mut v = t.blocks.to_vec();
            v[1].lo += 1;
            t.blocks = Section::owned(v);
        })
        .contains("tile block 1"));
        assert!(edit_tiles(&|v| v[2].first_source += 1).contains("tile 2"));
        let last = good.tiles().len() - 1;
        assert!(edit_tiles(&|v| v[last].segment = 1000).contains(&format!("tile {last} ")));
        assert!(good.blocks()[0].end_tile >= 2, "block 0 has two tiles");
        assert!(edit_tiles(&|v| v[1].segment = v[0].segment).contains("segment order"));
        assert!(with(&|t| {
            let mut v = t.targets.to_vec();
            v[0] = 60_000;
            t.targets = Section::owned(v);
        })
        .contains("run target"));
        assert!(with(&|t| {
            let mut v = t.sources.to_vec();
            v[0] = 4;
            t.sources = Section::owned(v);
        })
        .contains("source outside segment"));
        assert!(good
            .check(64, arcs + 1, false)
            .unwrap_err()
            .contains("arcs"));
        assert!(good.check(65, arcs, false).unwrap_err().contains("65"));
    }

    #[test]
    fn tiles_are_worthwhile_on_large_graphs_of_long_lists() {
        assert!(Tiles::worthwhile(1 << 18, 8 << 18));
        assert!(!Tiles::worthwhile(1 << 18, (8 << 18) - 1));
        assert!(!Tiles::worthwhile((1 << 18) - 1, 1 << 30));
    }
}
