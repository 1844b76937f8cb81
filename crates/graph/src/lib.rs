//! # plexus-graph
//!
//! The topology room of Plexus: compressed out-edges (CSR) and in-edges
//! (CSC), the external-id map, the vertex order, the chunk table, the
//! builders that make them, the memory-mapped on-disk store, importers,
//! exporters and generators.
//!
//! ```
//! use plexus_graph::{BuildOptions, Graph};
//! // A triangle plus an isolated vertex, undirected.
//! let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 0)], &BuildOptions::undirected()).unwrap();
//! assert_eq!(g.num_vertices(), 4);
//! assert_eq!(g.num_edges(), 3);
//! assert_eq!(g.num_arcs(), 6);
//! assert_eq!(g.out_neighbors(0), &[1, 2]);
//! assert_eq!(g.out_degree(3), 0);
//! ```
#![deny(unsafe_op_in_unsafe_fn)]

pub mod adjacency;
pub mod bounded;
pub mod builder;
pub mod caches;
pub mod chunks;
pub mod error;
pub mod export;
pub mod generate;
pub mod graph;
pub mod ids;
pub mod import;
pub mod order;
pub mod section;
pub mod store;
pub mod tiles;
pub mod trace;
pub mod types;

pub use adjacency::Adjacency;
pub use builder::{build, BuildOptions, DuplicatePolicy, EdgeBuffer, LoopPolicy};
pub use chunks::Chunk;
pub use error::{GraphError, Result};
pub use graph::{DegreeSummary, Graph, GraphMeta, GraphParts, VertexOrder, WeightStats};
pub use ids::{ExternalId, IdKind, IdMap};
pub use import::{import_file, Format, ImportOptions, NoProgress, Progress};
pub use order::OrderChoice;
pub use section::Section;
pub use store::{DataDir, Provenance};
pub use types::{vid, EdgeIdx, VertexId, Weight, MAX_VERTICES};
