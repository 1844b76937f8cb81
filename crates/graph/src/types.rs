//! Id and offset types used on every hot path.
//!
//! Internal vertex ids are dense `0..n` and `u32` wide ([`VertexId`]); edge
//! offsets are `u64` ([`EdgeIdx`]). Keep code generic over these aliases so a
//! build with 64-bit vertex ids stays a one-line change.

/// Dense internal vertex id, `0..num_vertices`.
pub type VertexId = u32;

/// Index into an edge array (CSR `targets`, CSC `sources`, weights).
pub type EdgeIdx = u64;

/// Edge weight as stored. Integer weights are stored exactly (|w| < 2^53).
pub type Weight = f64;

/// The largest number of vertices a graph can hold with [`VertexId`].
pub const MAX_VERTICES: u64 = VertexId::MAX as u64;

/// Converts a `usize` index to a [`VertexId`]. Callers guarantee `v < MAX_VERTICES`.
#[inline(always)]
pub fn vid(v: usize) -> VertexId {
    debug_assert!((v as u64) < MAX_VERTICES);
    v as VertexId
}
