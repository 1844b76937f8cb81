//! The pull gather over a graph's tiles ([`plexus_graph::tiles`]): every
//! vertex's sum of a per-vertex value over its in-neighbours, one block of
//! targets per task, each block's sums kept in L2 while its tiles pass by
//! segment, each segment's values in L1.
//!
//! A target's sum is the f64 sum of its in-neighbours' values in CSC
//! order: runs of up to [`FIXED`] arcs are added one by one, longer runs in
//! four interleaved partial sums that are then added in a fixed order. So
//! it equals the in-order sum up to f64 rounding (and exactly when every
//! partial sum is exact, as sums of a few hundred f32 values of similar
//! size are), and does not depend on the number of threads.

use plexus_graph::tiles::{TileBlock, Tiles, CLASSES, FIXED};
use rayon::prelude::*;

/// `sums[v] = Σ values[u]` over the in-arcs `u → v` of the graph `tiles`
/// was built from, for every vertex `v`. `values` has at least `n`
/// entries and `sums` exactly `n` (panics otherwise).
pub fn gather<T: Copy + Into<f64> + Sync>(tiles: &Tiles, values: &[T], sums: &mut [f64]) {
    let pieces = split_by_blocks(tiles, sums);
    map_blocks(tiles, values, pieces, |_, piece, block_sums| {
        piece.copy_from_slice(block_sums)
    });
}

/// For every block of `tiles`, in parallel (one rayon task a block):
/// computes the block's sums (`Σ values[u]` over the in-arcs of each of
/// its targets, in a per-thread scratch that stays in L2) and returns
/// `f(block, item, sums)`, with `items[i]` the i-th block's own item
/// (say its slices of the per-vertex state, from [`split_by_blocks`]).
/// Results come back in block order. So a pass uses each block's sums
/// while they are in cache instead of writing all `n` and reading them
/// back. `values` has at least `n` entries and `items` one per block
/// (panics otherwise).
pub fn map_blocks<T, I, R, F>(tiles: &Tiles, values: &[T], items: Vec<I>, f: F) -> Vec<R>
where
    T: Copy + Into<f64> + Sync,
    I: Send,
    R: Send,
    F: Fn(&TileBlock, I, &[f64]) -> R + Sync,
{
    let blocks = tiles.blocks();
    let n = blocks.last().map_or(0, |b| b.hi as usize);
    assert!(
        values.len() >= n,
        "tiled gather: {} values for {n} vertices",
        values.len()
    );
    assert_eq!(items.len(), blocks.len(), "tiled gather: one item a block");
    blocks
        .par_iter()
        .zip(items)
        .with_max_len(1)
        .map(|(b, item)| {
            // The thread's scratch, taken for the task (a task that runs
            // inside `f` on this thread then starts a scratch of its own)
            // and kept for the next: no allocation or page faults a block.
            let mut scratch = SCRATCH.take();
            scratch.resize((b.hi - b.lo) as usize, 0.0);
            block_sums(tiles, b, &values[..n], &mut scratch);
            let r = f(b, item, &scratch);
            SCRATCH.set(scratch);
            r
        })
        .collect()
}

thread_local! {
    /// A block's sums, reused by the tasks a thread runs.
    static SCRATCH: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// `slice` (one entry per vertex, or empty) cut at the blocks' bounds:
/// one piece a block, all empty when `slice` is.
pub fn split_by_blocks<'a, T>(tiles: &Tiles, slice: &'a mut [T]) -> Vec<&'a mut [T]> {
    let blocks = tiles.blocks();
    let empty = slice.is_empty();
    let mut pieces = Vec::with_capacity(blocks.len());
    let mut rest = slice;
    for b in blocks {
        let len = if empty { 0 } else { (b.hi - b.lo) as usize };
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(len);
        pieces.push(piece);
        rest = tail;
    }
    assert!(rest.is_empty(), "tiled gather: tiles of another graph");
    pieces
}

/// Tiles of fewer arcs than this are not prefetched as a whole segment:
/// they touch few of its lines.
const PREFETCH_MIN_ARCS: u64 = 64;

/// One block's sums into `sums` (`b.hi - b.lo` entries, overwritten);
/// `values` holds exactly the graph's `n` values.
fn block_sums<T: Copy + Into<f64>>(tiles: &Tiles, b: &TileBlock, values: &[T], sums: &mut [f64]) {
    let n = values.len();
    let shift = tiles.shift();
    let (table, targets, sources, long_lengths) = (
        tiles.tiles(),
        tiles.targets(),
        tiles.sources(),
        tiles.long_lengths(),
    );
    sums.fill(0.0);
    // A tile's segment, asked for as a whole one tile ahead (while the
    // tile before it is summed, so into L2 and not into the L1 that holds
    // that tile's segment), when the tile has arcs enough to touch much of
    // it: its values then come in as a sequential stream instead of as
    // random misses to L3.
    let line = (64 / std::mem::size_of::<T>()).max(1);
    let prefetch_segment = |i: usize| {
        let t = &table[i];
        let end = table
            .get(i + 1)
            .map_or(sources.len() as u64, |next| next.first_source);
        if end.saturating_sub(t.first_source) >= PREFETCH_MIN_ARCS {
            let lo = (t.segment as usize) << shift;
            for v in (lo..(lo + (1 << shift)).min(n)).step_by(line) {
                crate::prefetch::prefetch_later(values, v);
            }
        }
    };
    let (first, end) = (b.first_tile as usize, b.end_tile as usize);
    if first < end {
        prefetch_segment(first);
    }
    for (i, t) in (first..end).zip(&table[first..end]) {
        if i + 1 < end {
            prefetch_segment(i + 1);
        }
        let lo = (t.segment as usize) << shift;
        let c = &values[lo..(lo + (1 << shift)).min(n)];
        let (mut r, mut a) = (t.first_run as usize, t.first_source as usize);
        macro_rules! fixed {
            ($($len:literal)*) => {$(
                let k = t.runs[$len - 1] as usize;
                fixed_runs::<T, $len>(c, sums, &targets[r..r + k], &sources[a..a + k * $len]);
                r += k;
                a += k * $len;
            )*};
        }
        fixed!(1 2 3 4 5 6 7 8);
        let first_long = t.first_long as usize;
        let long = t.runs[CLASSES - 1] as usize;
        for (&len, &target) in long_lengths[first_long..first_long + long]
            .iter()
            .zip(&targets[r..r + long])
        {
            let run = &sources[a..a + len as usize];
            let mut lanes = [0f64; 4];
            let mut groups = run.chunks_exact(4);
            for g in &mut groups {
                for (lane, &u) in lanes.iter_mut().zip(g) {
                    *lane += c[u as usize].into();
                }
            }
            let mut s = sums[target as usize] + ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]));
            for &u in groups.remainder() {
                s += c[u as usize].into();
            }
            sums[target as usize] = s;
            a += len as usize;
        }
    }
}

/// Adds each run of exactly `L` arcs, in order, into its target's sum.
#[inline(always)]
fn fixed_runs<T: Copy + Into<f64>, const L: usize>(
    c: &[T],
    sums: &mut [f64],
    targets: &[u16],
    sources: &[u16],
) {
    debug_assert!(L <= FIXED);
    for (&t, run) in targets.iter().zip(sources.chunks_exact(L)) {
        let mut s = sums[t as usize];
        for &u in run {
            s += c[u as usize].into();
        }
        sums[t as usize] = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_graph::{BuildOptions, Graph};
    use proptest::prelude::*;

    /// The plain in-order gather the tiles must reproduce.
    fn plain(g: &Graph, values: &[f32]) -> Vec<f64> {
        (0..g.num_vertices() as u32)
            .map(|v| {
                g.in_neighbors(v)
                    .iter()
                    .map(|&u| f64::from(values[u as usize]))
                    .sum()
            })
            .collect()
    }

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let opts = if directed {
            BuildOptions::directed()
        } else {
            BuildOptions::undirected()
        };
        Graph::from_edges(n, edges, &opts).expect("valid edges")
    }

    proptest! {
        /// Any graph (isolated vertices, self-loops, duplicate arcs, hubs
        /// whose runs pass FIXED), any segment and block size, any thread
        /// count: the sums of the in-order gather.
        #[test]
        fn tiled_sums_equal_the_in_order_gather(
            n in 1usize..300,
            raw in proptest::collection::vec((0u32..300, 0u32..300), 0..1500),
            hub_arcs in 0usize..200,
            directed in any::<bool>(),
            shift in 0u32..6,
            block in 1usize..80,
            threads in 1usize..4,
        ) {
            let mut edges: Vec<(u32, u32)> = raw.into_iter().map(|(a, b)| (a % n as u32, b % n as u32)).collect();
            // A hub: vertex 0 receives from many consecutive sources.
            edges.extend((0..hub_arcs as u32).map(|u| (u % n as u32, 0)));
            let g = graph(n, &edges, directed).with_tiles(shift, block);
            let tiles = g.tiles().expect("built");
            tiles.check(n, g.inc().num_edges(), true).map_err(TestCaseError::fail)?;
            let values: Vec<f32> = (0..n).map(|u| 1.0 / (1 + u % 7) as f32).collect();
            let mut sums = vec![f64::NAN; n];
            crate::with_threads(threads, || gather(tiles, &values, &mut sums)).expect("pool");
            let want = plain(&g, &values);
            for v in 0..n {
                prop_assert!((sums[v] - want[v]).abs() <= 1e-12 * want[v].abs(), "vertex {v}: {} against {}", sums[v], want[v]);
            }
        }
    }

    #[test]
    fn a_graph_without_arcs_gathers_zeros() {
        let g = graph(5, &[], true).with_tiles(2, 2);
        let mut sums = vec![1.0; 5];
        gather(g.tiles().expect("built"), &[1.0f32; 5], &mut sums);
        assert_eq!(sums, vec![0.0; 5]);
    }
}
