//! # plexus-engine
//!
//! The engine room of Plexus: frontiers ([`subset`]), the push/pull edge-map
//! ([`edge_map`]), the vertex-program contract every executor runs
//! ([`program`]), and the algorithm library ([`algo`]), one file per
//! algorithm with its verifier and a plain sequential reference beside it.
//!
//! Parallelism: every kernel runs on the *current* rayon pool; callers pick
//! the thread count by installing a pool (see [`with_threads`]) built with
//! [`affinity::PoolPinning`], so that its workers own their CPUs.
//!
//! ```
//! use plexus_engine::algo::{bfs, pagerank, wcc};
//! use plexus_engine::with_threads;
//! use plexus_graph::{BuildOptions, Graph};
//!
//! // A directed 4-cycle 0 → 1 → 2 → 3 → 0 plus an isolated vertex 4.
//! let g = Graph::from_edges(5, &[(0, 1), (1, 2), (2, 3), (3, 0)], &BuildOptions::directed()).unwrap();
//!
//! // Breadth-first search from vertex 0, on two threads.
//! let cfg = bfs::Config { source: 0, ..Default::default() };
//! let out = with_threads(2, || bfs::run(&g, &cfg)).unwrap().unwrap();
//! assert_eq!(out.depth, vec![0, 1, 2, 3, u32::MAX]);
//! bfs::verify(&g, &cfg, &out).unwrap();
//!
//! // Two weakly connected components, labelled by their smallest vertex.
//! let cc = wcc::run(&g, &wcc::Config::default()).unwrap();
//! assert_eq!((cc.component, cc.count), (vec![0, 0, 0, 0, 4], 2));
//!
//! // PageRank: the cycle's vertices share the rank evenly.
//! let pr = pagerank::run(&g, &pagerank::Config::default()).unwrap();
//! assert!((pr.rank[0] - pr.rank[2]).abs() < 1e-9);
//! assert!((pr.rank.iter().sum::<f64>() - 1.0).abs() < 1e-12);
//! ```

pub mod affinity;
pub mod algo;
pub mod conformance;
pub mod driver;
pub mod edge_map;
pub mod error;
pub mod hugepages;
pub mod intersect;
pub mod prefetch;
pub mod program;
pub mod progress;
pub mod registry;
pub mod subset;
pub mod team;
pub mod tiled;
pub mod vertex_array;
pub mod view;
pub mod wire;

pub use error::{AlgoError, VerifyError};

/// Runs `f` on a rayon pool of `threads` threads (0 = one per CPU the
/// process may use) on the process's CPUs, whatever thread calls it
/// ([`affinity::PoolPinning`]).
pub fn with_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> Result<R, AlgoError> {
    let pool = affinity::PoolPinning::new(threads, None)
        .builder()
        .build()
        .map_err(|e| AlgoError::InvalidParameter(format!("cannot start {threads} threads: {e}")))?;
    Ok(pool.install(f))
}
