//! [`Adjacency`]: one direction of a graph's edges in compressed sparse form
//! (CSR for out-edges, CSC for in-edges).
use crate::section::Section;
use crate::types::{EdgeIdx, VertexId, Weight};

/// Compressed adjacency: `offsets` has `n + 1` entries, `neighbors` has
/// `offsets[n]` entries, and the neighbours of `v` are
/// `neighbors[offsets[v]..offsets[v + 1]]`, sorted ascending (ties, i.e. kept
/// duplicate edges, ordered by weight). `weights`, when present, is parallel
/// to `neighbors`.
#[derive(Clone, Debug, Default)]
pub struct Adjacency {
    pub(crate) offsets: Section<EdgeIdx>,
    pub(crate) neighbors: Section<VertexId>,
    pub(crate) weights: Option<Section<Weight>>,
}

impl Adjacency {
    /// Assembles an adjacency from its arrays; checks the shape invariants.
    pub fn new(
        offsets: Section<EdgeIdx>,
        neighbors: Section<VertexId>,
        weights: Option<Section<Weight>>,
    ) -> Result<Self, String> {
        if offsets.is_empty() {
            return Err("offsets must have n + 1 entries".into());
        }
        if offsets[0] != 0 || *offsets.last().unwrap_or(&0) != neighbors.len() as u64 {
            return Err(format!(
                "offsets end at {} but there are {} neighbours",
                offsets.last().copied().unwrap_or(0),
                neighbors.len()
            ));
        }
        if let Some(w) = &weights {
            if w.len() != neighbors.len() {
                return Err("weights and neighbours differ in length".into());
            }
        }
        Ok(Adjacency {
            offsets,
            neighbors,
            weights,
        })
    }

    /// Number of vertices.
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of stored edges (arcs).
    #[inline]
    pub fn num_edges(&self) -> u64 {
        self.neighbors.len() as u64
    }

    /// The `n + 1` offsets.
    #[inline]
    pub fn offsets(&self) -> &[EdgeIdx] {
        &self.offsets
    }

    /// All neighbours, vertex after vertex.
    #[inline]
    pub fn neighbor_array(&self) -> &[VertexId] {
        &self.neighbors
    }

    /// All weights, parallel to [`Adjacency::neighbor_array`].
    #[inline]
    pub fn weight_array(&self) -> Option<&[Weight]> {
        self.weights.as_deref()
    }

    /// Edge index range of `v`.
    #[inline]
    pub fn range(&self, v: VertexId) -> std::ops::Range<usize> {
        let v = v as usize;
        self.offsets[v] as usize..self.offsets[v + 1] as usize
    }

    /// Neighbours of `v`, sorted ascending.
    #[inline]
    pub fn neighbors(&self, v: VertexId) -> &[VertexId] {
        &self.neighbors[self.range(v)]
    }

    /// Weights of the edges of `v`, parallel to [`Adjacency::neighbors`].
    #[inline]
    pub fn weights(&self, v: VertexId) -> Option<&[Weight]> {
        let r = self.range(v);
        self.weights.as_ref().map(|w| &w[r])
    }

    /// Degree of `v` in this direction.
    #[inline]
    pub fn degree(&self, v: VertexId) -> usize {
        let v = v as usize;
        (self.offsets[v + 1] - self.offsets[v]) as usize
    }

    /// Bytes held by the arrays.
    pub fn size_bytes(&self) -> u64 {
        self.offsets.size_bytes()
            + self.neighbors.size_bytes()
            + self.weights.as_ref().map_or(0, |w| w.size_bytes())
    }
}
