//! # plexus-dist
//!
//! The distributed executor (Gemini, Zhu et al., OSDI'16): the engine's
//! drivers run unchanged (`algo::NAME::run_on(&exec, cfg)`) on every rank
//! of a group, SPMD, with the graph cut into contiguous master ranges
//! ([`part`]), sparse/dense signal–slot messaging and collectives through
//! a small transport trait ([`comm::Comm`]).
//!
//! Transports: [`comm::ThreadComm`] (ranks as threads of one process;
//! always built, used by the tests and `plexus run --executor dist
//! --ranks N`) and, with the cargo feature `mpi`, `mpi::MpiComm` (rsmpi
//! over OpenMPI, one rank per process under `mpirun`).
//!
//! ```
//! use std::time::Duration;
//! use plexus_dist::{comm::run_threads, DistExecutor};
//! use plexus_engine::algo::bfs;
//! use plexus_graph::{BuildOptions, Graph};
//!
//! let g = Graph::from_edges(5, &[(0, 1), (1, 2), (2, 3), (3, 0)], &BuildOptions::directed()).unwrap();
//! let depths = run_threads(3, Duration::from_secs(30), |comm| {
//!     let exec = DistExecutor::new(&comm, &g).unwrap();
//!     let out = bfs::run_on(&exec, &bfs::Config { source: 0, ..Default::default() }).unwrap();
//!     assert!(exec.fault().is_none());
//!     out.depth
//! })
//! .unwrap();
//! for d in depths {
//!     assert_eq!(d.unwrap(), vec![0, 1, 2, 3, u32::MAX]);
//! }
//! ```
pub mod comm;
pub mod error;
pub mod exec;
pub mod file;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod pagerank;
pub mod part;
pub mod sssp;
pub mod view;
pub mod wcc;

pub use error::{DistError, Result, RunError};
pub use exec::{DistExecutor, StepStats};

/// Test helpers shared by the modules' tests.
#[cfg(test)]
pub(crate) mod testutil {
    /// `xorshift64` from `seed`, reduced below `m`.
    pub(crate) fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |m| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        }
    }
}
