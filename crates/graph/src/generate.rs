//! Graph generators, deterministic by seed and parallel: Kronecker / R-MAT
//! (Graph500 parameters A=0.57, B=0.19, C=0.19, as in the GAP benchmark
//! suite), uniform random (Erdős–Rényi G(n, m) style, GAPBS `-u`) and 2-D grids.
//!
//! GAP conventions: `kron` and `uniform` are undirected with `n = 2^scale`
//! and `edge_factor · n` generated edges, vertex ids randomly permuted;
//! `rmat` is the same recursive process kept directed. Generated graphs drop
//! self-loops and duplicate edges (as GAPBS's builder does) unless told otherwise.
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::builder::{BuildOptions, DuplicatePolicy, EdgeBuffer, LoopPolicy};
use crate::ids::IdMap;
use crate::order::OrderChoice;
use crate::types::{VertexId, MAX_VERTICES};
use crate::{build, Graph, GraphError, Result};

/// Graph500 / GAPBS R-MAT probabilities.
pub const DEFAULT_A: f64 = 0.57;
pub const DEFAULT_B: f64 = 0.19;
pub const DEFAULT_C: f64 = 0.19;
/// Edges generated per RNG stream (each block has its own seeded stream, so
/// results do not depend on the thread count).
const BLOCK: u64 = 1 << 16;

/// Which generator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Generator {
    /// Kronecker (undirected R-MAT).
    Kron,
    /// R-MAT, directed.
    Rmat,
    /// Uniform random endpoints, undirected.
    Uniform,
    /// `width × height` grid, 4-neighbour, undirected.
    Grid2d { width: u64, height: u64 },
}

/// Generator parameters.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// `n = 2^scale` (ignored by grids).
    pub scale: u32,
    /// Edges generated per vertex.
    pub edge_factor: u64,
    /// Seed of every random choice.
    pub seed: u64,
    /// R-MAT probabilities (D = 1 − A − B − C).
    pub a: f64,
    pub b: f64,
    pub c: f64,
    /// Uniform integer weights in `1..=max_weight` when set (GAPBS uses 255).
    pub max_weight: Option<u32>,
    /// Permute vertex ids (GAP convention for kron/uniform/rmat).
    pub permute: bool,
    /// Keep self-loops and duplicate edges instead of dropping them.
    pub keep_multi: bool,
    /// Vertex order to apply after generation.
    pub order: OrderChoice,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            scale: 10,
            edge_factor: 16,
            seed: 27491095,
            a: DEFAULT_A,
            b: DEFAULT_B,
            c: DEFAULT_C,
            max_weight: None,
            permute: true,
            keep_multi: false,
            order: OrderChoice::default(),
        }
    }
}

fn rng_for(seed: u64, stream: u64) -> Xoshiro256PlusPlus {
    // SplitMix-style mixing so adjacent streams are unrelated.
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Xoshiro256PlusPlus::seed_from_u64(z ^ (z >> 31))
}

/// Checks `kind`'s arguments; returns the vertex count.
fn check_args(kind: Generator, o: &GenOptions) -> Result<u64> {
    if let Generator::Grid2d { width, height } = kind {
        return width
            .checked_mul(height)
            .filter(|&n| n < MAX_VERTICES && n > 0)
            .ok_or_else(|| {
                GraphError::InvalidArgument(format!(
                    "a {width}×{height} grid needs 1 to {} vertices",
                    MAX_VERTICES - 1
                ))
            });
    }
    if o.scale == 0 || o.scale >= 32 {
        return Err(GraphError::InvalidArgument(format!(
            "scale {} is out of range (1..=31 for 32-bit ids)",
            o.scale
        )));
    }
    if !(o.a >= 0.0 && o.b >= 0.0 && o.c >= 0.0 && o.a + o.b + o.c <= 1.0) {
        return Err(GraphError::InvalidArgument(
            "R-MAT probabilities must be >= 0 with a + b + c <= 1".into(),
        ));
    }
    if o.edge_factor == 0 {
        return Err(GraphError::InvalidArgument(
            "edge factor must be at least 1".into(),
        ));
    }
    Ok(1u64 << o.scale)
}

/// The grid's edges: right and down neighbours, row by row.
fn grid_pairs(width: u64, height: u64) -> impl Iterator<Item = (VertexId, VertexId)> {
    (0..height).flat_map(move |y| {
        (0..width).flat_map(move |x| {
            let v = (y * width + x) as VertexId;
            let right = (x + 1 < width).then_some((v, v + 1));
            let down = (y + 1 < height).then_some((v, v + width as VertexId));
            right.into_iter().chain(down)
        })
    })
}

/// The weight of the grid's edge `i`.
fn grid_weight(o: &GenOptions, mw: u32, i: u64) -> f64 {
    rng_for(o.seed ^ 0x5757, i / BLOCK).gen_range(1..=mw.max(1)) as f64
}

/// The weight of the random generators' edge `i`.
fn random_weight(o: &GenOptions, mw: u32, i: u64) -> f64 {
    rng_for(o.seed ^ 0x5757, i).gen_range(1..=mw.max(1)) as f64
}

/// The pairs of block `blk` (edges `blk·BLOCK..`) of a random generator
/// on `n` vertices and `m` edges, before the permutation.
fn block_pairs(
    kind: Generator,
    o: &GenOptions,
    n: u64,
    m: u64,
    blk: u64,
) -> impl Iterator<Item = (VertexId, VertexId)> + '_ {
    let mut rng = rng_for(o.seed, blk);
    let count = BLOCK.min(m - blk * BLOCK);
    let (ab, abc) = (o.a + o.b, o.a + o.b + o.c);
    let scale = o.scale;
    (0..count).map(move |_| match kind {
        Generator::Uniform => (
            rng.gen_range(0..n) as VertexId,
            rng.gen_range(0..n) as VertexId,
        ),
        _ => {
            let (mut u, mut v) = (0u64, 0u64);
            for _ in 0..scale {
                let r: f64 = rng.gen();
                let (bu, bv) = if r < o.a {
                    (0, 0)
                } else if r < ab {
                    (0, 1)
                } else if r < abc {
                    (1, 0)
                } else {
                    (1, 1)
                };
                u = (u << 1) | bu;
                v = (v << 1) | bv;
            }
            (u as VertexId, v as VertexId)
        }
    })
}

/// The random permutation of the vertex ids, when `o.permute`.
fn permutation(o: &GenOptions, n: u64) -> Option<Vec<VertexId>> {
    o.permute.then(|| {
        // Fisher–Yates with a seeded stream: sequential but O(n).
        let mut p: Vec<VertexId> = (0..n as VertexId).collect();
        let mut rng = rng_for(o.seed ^ 0xA5A5_A5A5, u64::MAX);
        for i in (1..p.len()).rev() {
            let j = rng.gen_range(0..=i);
            p.swap(i, j);
        }
        p
    })
}

/// Generates the edges only (internal ids, before symmetrisation): the
/// number of vertices, the edge buffer and whether the graph is directed.
pub fn generate_edges(kind: Generator, o: &GenOptions) -> Result<(usize, EdgeBuffer, bool)> {
    let n = check_args(kind, o)?;
    check_fits(kind, o, false)?;
    if let Generator::Grid2d { width, height } = kind {
        let (src, dst): (Vec<VertexId>, Vec<VertexId>) = grid_pairs(width, height).unzip();
        let weights = o.max_weight.map(|mw| {
            (0..src.len() as u64)
                .into_par_iter()
                .map(|i| grid_weight(o, mw, i))
                .collect()
        });
        return Ok((n as usize, EdgeBuffer { src, dst, weights }, false));
    }
    let m = n * o.edge_factor;
    let blocks = m.div_ceil(BLOCK);
    let pairs: Vec<(VertexId, VertexId)> = (0..blocks)
        .into_par_iter()
        .flat_map_iter(|blk| block_pairs(kind, o, n, m, blk))
        .collect();
    let perm = permutation(o, n);
    let (src, dst): (Vec<VertexId>, Vec<VertexId>) = match &perm {
        Some(p) => pairs
            .par_iter()
            .map(|&(u, v)| (p[u as usize], p[v as usize]))
            .unzip(),
        None => pairs.par_iter().copied().unzip(),
    };
    drop(pairs);
    let weights = o.max_weight.map(|mw| {
        (0..m)
            .into_par_iter()
            .map(|i| random_weight(o, mw, i))
            .collect()
    });
    Ok((
        n as usize,
        EdgeBuffer { src, dst, weights },
        kind == Generator::Rmat,
    ))
}

/// The edges [`generate_edges`] makes, handed to `f(src, dst, weight)` in
/// the same order without holding them (a few blocks at a time, made in
/// parallel); returns the vertex count and whether the graph is directed.
pub fn for_each_edge(
    kind: Generator,
    o: &GenOptions,
    mut f: impl FnMut(VertexId, VertexId, Option<f64>) -> Result<()>,
) -> Result<(usize, bool)> {
    let n = check_args(kind, o)?;
    if let Generator::Grid2d { width, height } = kind {
        for (i, (u, v)) in grid_pairs(width, height).enumerate() {
            f(u, v, o.max_weight.map(|mw| grid_weight(o, mw, i as u64)))?;
        }
        return Ok((n as usize, false));
    }
    let m = n * o.edge_factor;
    let blocks = m.div_ceil(BLOCK);
    let perm = permutation(o, n);
    let batch = (rayon::current_num_threads() * 4) as u64;
    let mut first = 0;
    while first < blocks {
        let last = (first + batch).min(blocks);
        let made: Vec<Vec<(VertexId, VertexId, Option<f64>)>> = (first..last)
            .into_par_iter()
            .map(|blk| {
                block_pairs(kind, o, n, m, blk)
                    .enumerate()
                    .map(|(k, (u, v))| {
                        let (u, v) = match &perm {
                            Some(p) => (p[u as usize], p[v as usize]),
                            None => (u, v),
                        };
                        let i = blk * BLOCK + k as u64;
                        (u, v, o.max_weight.map(|mw| random_weight(o, mw, i)))
                    })
                    .collect()
            })
            .collect();
        for (u, v, w) in made.into_iter().flatten() {
            f(u, v, w)?;
        }
        first = last;
    }
    Ok((n as usize, kind == Generator::Rmat))
}

/// Build options of a generated graph: GAPBS drops self-loops and
/// duplicates (keeping the smallest weight) unless `keep_multi`.
pub fn build_options(directed: bool, o: &GenOptions) -> BuildOptions {
    let (self_loops, duplicates) = if o.keep_multi {
        (LoopPolicy::Keep, DuplicatePolicy::Keep)
    } else {
        (LoopPolicy::Drop, DuplicatePolicy::Min)
    };
    BuildOptions {
        directed,
        self_loops,
        duplicates,
        order: o.order,
    }
}

/// Vertices and edges `kind` generates with `o`, before dropping
/// self-loops and duplicates (saturating, so absurd requests stay absurd).
pub fn planned_size(kind: Generator, o: &GenOptions) -> (u64, u64) {
    match kind {
        Generator::Grid2d { width, height } => {
            let n = width.saturating_mul(height);
            (n, n.saturating_mul(2))
        }
        _ => {
            let n = 1u64.checked_shl(o.scale).unwrap_or(u64::MAX);
            (n, n.saturating_mul(o.edge_factor))
        }
    }
}

/// A lower bound on the peak memory of generating `kind` with `o`: the
/// edge pairs and their permuted copy (16 B an edge, 8 more with
/// weights) and the permutation; with `build`, also building the stored
/// graph (the edge buffer beside two arcs an edge, 8 B each with their
/// sort scratch, 16 with weights, and 32 B a vertex of offsets and maps).
pub fn estimate_peak_bytes(kind: Generator, o: &GenOptions, build: bool) -> u64 {
    let (n, m) = planned_size(kind, o);
    let w = if o.max_weight.is_some() { 8 } else { 0 };
    let generate = m.saturating_mul(16 + w).saturating_add(n.saturating_mul(4));
    if !build {
        return generate;
    }
    let per_edge = 8 + w + 2 * (8 + 2 * w);
    generate.max(
        m.saturating_mul(per_edge)
            .saturating_add(n.saturating_mul(32)),
    )
}

/// The memory available to a new allocation (Linux `MemAvailable`), if known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Refuses a generation whose [`estimate_peak_bytes`] exceeds the
/// available memory, naming both, before anything is allocated.
pub fn check_fits(kind: Generator, o: &GenOptions, build: bool) -> Result<()> {
    if !matches!(kind, Generator::Grid2d { .. }) && !(1..32).contains(&o.scale) {
        // Out of range: `generate_edges` says so.
        return Ok(());
    }
    let need = estimate_peak_bytes(kind, o, build);
    let Some(have) = available_memory() else {
        return Ok(());
    };
    if need > have {
        let (n, m) = planned_size(kind, o);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(GraphError::InvalidArgument(format!(
            "{n} vertices and {m} edges need at least {:.1} GiB of memory; {:.1} GiB is available (use a smaller --scale or --edge-factor)",
            gib(need),
            gib(have)
        )));
    }
    Ok(())
}

/// Generates a graph (refused first when it cannot fit in memory).
pub fn generate(kind: Generator, o: &GenOptions) -> Result<Graph> {
    check_fits(kind, o, true)?;
    let (n, buf, directed) = generate_edges(kind, o)?;
    build(n, buf, IdMap::Identity { n }, &build_options(directed, o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kron_is_deterministic_and_thread_independent() {
        let o = GenOptions {
            scale: 8,
            edge_factor: 4,
            ..Default::default()
        };
        let a = generate(Generator::Kron, &o).unwrap();
        let b = crate::builder::tests_support::with_threads(1, || {
            generate(Generator::Kron, &o).unwrap()
        });
        let ea: Vec<_> = a.arcs().collect();
        let eb: Vec<_> = b.arcs().collect();
        assert_eq!(ea, eb);
        assert!(!a.is_directed());
        assert_eq!(a.num_vertices(), 256);
        assert_eq!(a.meta().self_loops, 0);
    }

    #[test]
    fn auto_orders_a_kronecker_graph_by_degree_and_leaves_a_grid_alone() {
        use crate::graph::VertexOrder;
        let kron = GenOptions {
            scale: 17,
            edge_factor: 8,
            ..Default::default()
        };
        let natural = generate(Generator::Kron, &kron).unwrap();
        let auto = generate(
            Generator::Kron,
            &GenOptions {
                order: OrderChoice::Auto,
                ..kron
            },
        )
        .unwrap();
        assert_eq!(natural.meta().order, VertexOrder::None);
        assert_eq!(auto.meta().order, VertexOrder::Degree);
        // The same graph in the same external ids.
        let external = |g: &Graph| {
            let mut arcs: Vec<(i64, i64)> = g
                .arcs()
                .map(|(u, v, _)| (g.natural_id(u) as i64, g.natural_id(v) as i64))
                .collect();
            arcs.sort_unstable();
            arcs
        };
        assert_eq!(external(&auto), external(&natural));
        let grid = generate(
            Generator::Grid2d {
                width: 512,
                height: 512,
            },
            &GenOptions {
                order: OrderChoice::Auto,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(grid.meta().order, VertexOrder::None);
    }

    #[test]
    fn grid_has_the_expected_edges() {
        let g = generate(
            Generator::Grid2d {
                width: 3,
                height: 2,
            },
            &GenOptions::default(),
        )
        .unwrap();
        assert_eq!(g.num_vertices(), 6);
        assert_eq!(g.num_edges(), 7);
    }
}
