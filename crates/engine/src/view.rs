//! The graph as a vertex program's driver sees it: counts, degrees and
//! per-graph facts, never the adjacency arrays.
//!
//! Programs read edges only through the [`crate::program::InEdges`] an
//! executor hands a dense signal, or the out-edges an executor walks for a
//! sparse slot; everything else a driver needs (how many vertices, each
//! vertex's whole-graph degree, the weight facts) comes through a
//! [`GraphView`]. The immutable store implements it; a versioned snapshot,
//! an out-of-core interval set and an MPI partition implement it too, each
//! answering with whole-graph values (degrees are replicated, as Gemini
//! replicates them on every rank).
use plexus_graph::{Graph, VertexId, Weight, WeightStats};

/// The narrow view of a graph that drivers and programs use.
///
/// Invariants: vertices are `0..num_vertices()`; `out_degree(v)` and
/// `in_degree(v)` count arcs of the whole graph (duplicates and self-loops
/// included), so `Σ out_degree = Σ in_degree = num_arcs()`; an undirected
/// graph stores each edge as two arcs and has `in_degree == out_degree`.
pub trait GraphView: Sync {
    /// Number of vertices.
    fn num_vertices(&self) -> usize;
    /// Number of stored arcs (an undirected edge counts twice, a self-loop once).
    fn num_arcs(&self) -> u64;
    /// Whether arcs are one-way.
    fn is_directed(&self) -> bool;
    /// Whether arcs carry weights.
    fn is_weighted(&self) -> bool;
    /// Out-arcs of `v` in the whole graph.
    fn out_degree(&self, v: VertexId) -> usize;
    /// In-arcs of `v` in the whole graph.
    fn in_degree(&self, v: VertexId) -> usize;
    /// Weight facts computed once per graph and shared by every job on it
    /// (`None` when unweighted).
    fn weight_stats(&self) -> Option<&WeightStats>;
    /// The arc `(src, dst, weight)` behind `WeightStats::first_invalid`, so
    /// that an error can name it; `None` when every weight is valid.
    fn first_invalid_arc(&self) -> Option<(VertexId, VertexId, Weight)>;
    /// Whether every out-list is strictly increasing (no duplicate arcs).
    fn no_duplicate_arcs(&self) -> bool;
    /// The natural id of `v`: its rank in ascending external id (`v`
    /// itself unless the store applied a vertex order). CDLP's labels and
    /// ties follow it.
    fn natural_id(&self, v: VertexId) -> VertexId;
}

impl GraphView for Graph {
    fn num_vertices(&self) -> usize {
        Graph::num_vertices(self)
    }
    fn num_arcs(&self) -> u64 {
        Graph::num_arcs(self)
    }
    fn is_directed(&self) -> bool {
        Graph::is_directed(self)
    }
    fn is_weighted(&self) -> bool {
        Graph::is_weighted(self)
    }
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        Graph::out_degree(self, v)
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        Graph::in_degree(self, v)
    }
    fn weight_stats(&self) -> Option<&WeightStats> {
        Graph::weight_stats(self)
    }
    fn first_invalid_arc(&self) -> Option<(VertexId, VertexId, Weight)> {
        let i = self.weight_stats()?.first_invalid?;
        let out = self.out();
        let offs = out.offsets();
        let src = offs.partition_point(|&o| o <= i as u64).checked_sub(1)?;
        let dst = *out.neighbor_array().get(i)?;
        let w = *out.weight_array()?.get(i)?;
        Some((src as VertexId, dst, w))
    }
    fn no_duplicate_arcs(&self) -> bool {
        self.out_lists_strictly_increasing()
    }
    fn natural_id(&self, v: VertexId) -> VertexId {
        Graph::natural_id(self, v)
    }
}
