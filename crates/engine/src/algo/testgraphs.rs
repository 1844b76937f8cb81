//! Random small graphs for the algorithm proptests: directed and undirected,
//! with isolated vertices, self-loops and duplicate edges, optionally
//! weighted and optionally reordered (so that internal ids differ from
//! natural ids).
use plexus_graph::{BuildOptions, DuplicatePolicy, Graph, VertexId, VertexOrder};
use proptest::prelude::*;

/// The LDBC Graphalytics `example-directed` edges (external ids 1..=10),
/// used by the tests that check an algorithm against its published output.
pub(crate) const GRAPHALYTICS_EXAMPLE_DIRECTED: [(u32, u32); 17] = [
    (1, 3),
    (1, 5),
    (2, 4),
    (2, 5),
    (2, 10),
    (3, 1),
    (3, 5),
    (3, 8),
    (3, 10),
    (5, 3),
    (5, 4),
    (5, 8),
    (6, 3),
    (6, 4),
    (7, 4),
    (8, 1),
    (9, 4),
];

/// Largest vertex count the strategies produce.
pub(crate) const MAX_N: usize = 40;
/// Largest edge count the strategies produce.
pub(crate) const MAX_EDGES: usize = 120;

/// What a test graph is made of, kept so failures print something readable.
#[derive(Clone, Debug)]
pub(crate) struct Spec {
    pub n: usize,
    pub edges: Vec<(VertexId, VertexId, f64)>,
    pub directed: bool,
    pub weighted: bool,
    pub dedup: bool,
    pub reorder: bool,
}

impl Spec {
    /// Builds the graph.
    pub(crate) fn build(&self) -> Graph {
        let opts = BuildOptions {
            directed: self.directed,
            duplicates: if self.dedup {
                DuplicatePolicy::Drop
            } else {
                DuplicatePolicy::Keep
            },
            order: if self.reorder {
                VertexOrder::Degree.into()
            } else {
                VertexOrder::None.into()
            },
            ..BuildOptions::default()
        };
        let g = if self.weighted {
            Graph::from_weighted_edges(self.n, &self.edges, &opts)
        } else {
            let pairs: Vec<(VertexId, VertexId)> = self.edges.iter().map(|e| (e.0, e.1)).collect();
            Graph::from_edges(self.n, &pairs, &opts)
        };
        g.expect("test graph specs are valid")
    }
}

/// Graph specs with `1..=max_n` vertices (0 when `allow_empty`) and up to
/// `max_edges` edges; weights (when `weighted`) are small integers or
/// halves in `0..=10` so sums are exact.
pub(crate) fn specs(max_n: usize, max_edges: usize, weighted: bool) -> impl Strategy<Value = Spec> {
    (1..=max_n, any::<bool>(), any::<bool>(), any::<bool>()).prop_flat_map(
        move |(n, directed, dedup, reorder)| {
            let edge = (0..n as VertexId, 0..n as VertexId, 0u32..=20)
                .prop_map(|(u, v, w)| (u, v, f64::from(w) * 0.5));
            proptest::collection::vec(edge, 0..=max_edges).prop_map(move |edges| Spec {
                n,
                edges,
                directed,
                weighted,
                dedup,
                reorder,
            })
        },
    )
}

/// Random unweighted graphs of up to [`MAX_N`] vertices.
pub(crate) fn graphs() -> impl Strategy<Value = Spec> {
    specs(MAX_N, MAX_EDGES, false)
}

/// Random weighted graphs of up to [`MAX_N`] vertices.
pub(crate) fn weighted_graphs() -> impl Strategy<Value = Spec> {
    specs(MAX_N, MAX_EDGES, true)
}

/// Thread counts every proptest runs the parallel kernel with.
pub(crate) const THREADS: [usize; 3] = [1, 2, 4];
