//! # plexus-ooc
//!
//! The out-of-core executor: the engine's vertex programs (every driver
//! with a `run_on`, unchanged) over a stored graph that need not fit in
//! memory, after PartitionedVC (Matam et al.; `shared/papers`, seed 002).
//!
//! - The O(n) per-vertex arrays of the store (offsets, the natural-id
//!   permutation) are mapped read-only, so the kernel reclaims them under
//!   the cap and the budget counts a resident window of each; the neighbour
//!   and weight arrays are never mapped: read by page ranges (`O_DIRECT`,
//!   or `pread` then dropped from the page cache, [`file`]), so the budget
//!   holds the cache too.
//! - A driver that allocates its per-vertex arrays through the executor
//!   (BFS) gets them in temporary mapped files ([`state`]), also counted
//!   as a resident window.
//! - Vertex intervals and buffers are sized from a memory budget
//!   ([`plan`]); a budget too small for one interval is refused up front,
//!   naming the least that fits.
//! - A superstep reads only the pages holding the lists it needs (active
//!   sources' out-lists when pushing, the in-lists of vertices that still
//!   take messages when pulling), or every page with [`IoMode::Full`]
//!   ([`reader`]); pushed messages go through per-interval logs in
//!   page-sized buffers, combined on the way ([`logs`]).
//!
//! ```
//! use plexus_engine::algo::bfs;
//! use plexus_graph::{BuildOptions, DataDir, Graph, Provenance};
//! use plexus_ooc::{OocExecutor, OocOptions};
//!
//! // A directed path 0 → 1 → 2 → 3, stored, then searched out of core.
//! let tmp = tempfile::tempdir().unwrap();
//! let data = DataDir::new(tmp.path());
//! let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], &BuildOptions::directed()).unwrap();
//! let dir = data.save("path", &g, &Provenance::default(), false).unwrap();
//! let opts = OocOptions { memory: 1 << 20, ..Default::default() };
//! let exec = OocExecutor::open(&dir.join("graph.plx"), &opts).unwrap();
//! let out = bfs::run_on(&exec, &bfs::Config::default()).unwrap();
//! assert!(exec.take_fault().is_none());
//! assert_eq!(out.depth, vec![0, 1, 2, 3]);
//! assert!(exec.report().bytes_read > 0);
//! ```
pub mod cost;
pub mod error;
pub mod exec;
pub mod file;
pub mod logs;
pub mod plan;
pub mod reader;
pub mod shared;
pub mod state;
mod step;

pub use cost::Estimate;
pub use error::{human_bytes, parse_size, OocError, Result};
pub use exec::{
    state_bytes, state_bytes_per_vertex, IoMode, OocExecutor, OocOptions, Report, StepStats,
};
pub use file::StoredGraph;
pub use plan::Plan;
