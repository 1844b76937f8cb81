//! [`DistView`]: the whole-graph facts a driver reads, replicated on every
//! rank (Gemini replicates degrees too), so that a rank can drop the graph
//! once its [`crate::part::Part`] is built.
use plexus_engine::program::GraphView;
use plexus_graph::{Graph, VertexId, Weight, WeightStats};

use crate::error::{DistError, Result};

/// Counts, degrees and facts of a graph (see [`GraphView`]).
#[derive(Clone, Debug)]
pub struct DistView {
    out_degree: Vec<u32>,
    /// `None` on undirected graphs (equal to the out-degrees).
    in_degree: Option<Vec<u32>>,
    num_arcs: u64,
    directed: bool,
    weighted: bool,
    weight_stats: Option<WeightStats>,
    first_invalid_arc: Option<(VertexId, VertexId, Weight)>,
    no_duplicate_arcs: bool,
    /// `None` when every vertex is its own natural id.
    natural: Option<Vec<VertexId>>,
}

impl DistView {
    /// The view of `g`; refuses a vertex with 2^32 arcs or more.
    pub fn of(g: &Graph) -> Result<DistView> {
        let n = g.num_vertices();
        let degrees = |f: &dyn Fn(VertexId) -> usize| -> Result<Vec<u32>> {
            (0..n as VertexId)
                .map(|v| {
                    u32::try_from(f(v)).map_err(|_| {
                        DistError::Invalid(format!("vertex {v} has 2^32 arcs or more"))
                    })
                })
                .collect()
        };
        let out_degree = degrees(&|v| g.out_degree(v))?;
        let in_degree = if g.is_directed() {
            Some(degrees(&|v| g.in_degree(v))?)
        } else {
            None
        };
        let natural: Vec<VertexId> = (0..n as VertexId).map(|v| g.natural_id(v)).collect();
        let identity = natural.iter().enumerate().all(|(i, &v)| i as VertexId == v);
        Ok(DistView {
            out_degree,
            in_degree,
            num_arcs: g.num_arcs(),
            directed: g.is_directed(),
            weighted: g.is_weighted(),
            weight_stats: g.weight_stats().cloned(),
            first_invalid_arc: GraphView::first_invalid_arc(g),
            no_duplicate_arcs: GraphView::no_duplicate_arcs(g),
            natural: (!identity).then_some(natural),
        })
    }

    /// A checksum of the facts every rank must agree on (counts, flags and
    /// every degree), for the start-up handshake.
    pub fn checksum(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |x: u64| {
            h ^= x;
            h = h.wrapping_mul(0x0000_0100_0000_01b3).rotate_left(17);
        };
        eat(self.out_degree.len() as u64);
        eat(self.num_arcs);
        eat(u64::from(self.directed) | u64::from(self.weighted) << 1);
        for &d in &self.out_degree {
            eat(u64::from(d));
        }
        for &d in self.in_degree.iter().flatten() {
            eat(u64::from(d));
        }
        h
    }
}

impl GraphView for DistView {
    fn num_vertices(&self) -> usize {
        self.out_degree.len()
    }
    fn num_arcs(&self) -> u64 {
        self.num_arcs
    }
    fn is_directed(&self) -> bool {
        self.directed
    }
    fn is_weighted(&self) -> bool {
        self.weighted
    }
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.out_degree[v as usize] as usize
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.in_degree.as_ref().unwrap_or(&self.out_degree)[v as usize] as usize
    }
    fn weight_stats(&self) -> Option<&WeightStats> {
        self.weight_stats.as_ref()
    }
    fn first_invalid_arc(&self) -> Option<(VertexId, VertexId, Weight)> {
        self.first_invalid_arc
    }
    fn no_duplicate_arcs(&self) -> bool {
        self.no_duplicate_arcs
    }
    fn natural_id(&self, v: VertexId) -> VertexId {
        self.natural.as_ref().map_or(v, |p| p[v as usize])
    }
}
