//! # plexus-engine
//!
//! The engine room of Plexus: frontiers ([`subset`]), the push/pull edge-map
//! ([`edge_map`]), the vertex-program contract every executor runs
//! ([`program`]), and the algorithm library ([`algo`]), one file per
//! algorithm with its verifier and a plain sequential reference beside it.
//!
//! Parallelism: every kernel runs on the *current* rayon pool; callers pick
//! the thread count by installing a pool (see [`with_threads`]).

pub mod algo;
pub mod edge_map;
pub mod error;
pub mod program;
pub mod subset;

pub use error::{AlgoError, VerifyError};

/// Runs `f` on a rayon pool of `threads` threads (0 = all cores).
pub fn with_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> Result<R, AlgoError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| AlgoError::InvalidParameter(format!("cannot start {threads} threads: {e}")))?;
    Ok(pool.install(f))
}
