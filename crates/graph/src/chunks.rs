//! The chunk table: contiguous vertex ranges balanced by Gemini's rule
//! `α·|V_i| + |E_i|` (Gemini, OSDI'16, §4.1), stored with every graph and used
//! by every executor to divide work (in-memory threads, shared scans,
//! out-of-core intervals and MPI partitions take unions of adjacent chunks).
use crate::adjacency::Adjacency;
use crate::types::VertexId;

/// The `α` of Gemini's balance rule: a vertex costs as much as `ALPHA` edges.
pub const ALPHA: u64 = 8;
/// Target cost `α·|V_i| + |E_i|` of one chunk; chunks are about this big.
pub const CHUNK_TARGET_COST: u64 = 1 << 16;
/// Chunk starts are multiples of this, so per-chunk bitmap words never straddle chunks.
pub const CHUNK_ALIGN: u64 = 64;

/// One chunk: vertices `start..end` with their out- and in-edge counts.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Chunk {
    pub start: u64,
    pub end: u64,
    pub out_edges: u64,
    pub in_edges: u64,
}

impl Chunk {
    /// Vertex range of the chunk.
    pub fn vertices(&self) -> std::ops::Range<VertexId> {
        self.start as VertexId..self.end as VertexId
    }
    /// Gemini cost `α·|V| + |E_out| + |E_in|`.
    pub fn cost(&self) -> u64 {
        ALPHA * (self.end - self.start) + self.out_edges + self.in_edges
    }
}

/// Computes the chunk table. `inc` is the in-edge adjacency for directed
/// graphs (`None` for undirected ones, whose in-edges are the out-edges).
///
/// Invariants of the result: chunks are non-empty (unless the graph has no
/// vertices, then there are none), contiguous, cover `0..n` in order, and all
/// but the first start at a multiple of [`CHUNK_ALIGN`].
pub fn chunk_table(out: &Adjacency, inc: Option<&Adjacency>) -> Vec<Chunk> {
    chunk_table_of_offsets(out.offsets(), inc.map(|a| a.offsets()))
}

/// [`chunk_table`] from the out-offsets `oo` (`n + 1` entries) and, for a
/// directed graph, the in-offsets `io`.
pub fn chunk_table_of_offsets(oo: &[u64], io: Option<&[u64]>) -> Vec<Chunk> {
    let n = oo.len().saturating_sub(1) as u64;
    if n == 0 {
        return Vec::new();
    }
    let cum = |v: u64| ALPHA * v + oo[v as usize] + io.map_or(0, |o| o[v as usize]);
    let total = cum(n);
    let k = total
        .div_ceil(CHUNK_TARGET_COST)
        .clamp(1, n.div_ceil(CHUNK_ALIGN));
    let mut bounds = vec![0u64];
    for i in 1..k {
        let goal = total * i / k;
        // First v with cum(v) >= goal: cum is monotone in v.
        let (mut lo, mut hi) = (0u64, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if cum(mid) < goal {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let b = (lo / CHUNK_ALIGN) * CHUNK_ALIGN;
        if b > *bounds.last().unwrap_or(&0) && b < n {
            bounds.push(b);
        }
    }
    bounds.push(n);
    bounds
        .windows(2)
        .map(|w| {
            let (s, e) = (w[0], w[1]);
            Chunk {
                start: s,
                end: e,
                out_edges: oo[e as usize] - oo[s as usize],
                in_edges: io.map_or(oo[e as usize] - oo[s as usize], |o| {
                    o[e as usize] - o[s as usize]
                }),
            }
        })
        .collect()
}
