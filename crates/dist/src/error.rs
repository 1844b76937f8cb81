//! Errors of the distributed executor.
use thiserror::Error;

/// What can go wrong between ranks.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DistError {
    /// A peer did not answer within the transport's timeout.
    #[error("rank {rank}: no message from rank {peer} within {secs} s (lost rank {peer}?)")]
    Timeout {
        /// This rank.
        rank: usize,
        /// The rank waited for.
        peer: usize,
        /// The timeout, in seconds.
        secs: u64,
    },
    /// A peer has gone (its end of the channel closed, or the launcher
    /// reported it dead).
    #[error("rank {rank}: lost rank {peer}")]
    Lost {
        /// This rank.
        rank: usize,
        /// The rank that went away.
        peer: usize,
    },
    /// A message that does not decode (a different build, or corruption).
    #[error("rank {rank}: malformed message from rank {peer}: {what}")]
    Malformed {
        /// This rank.
        rank: usize,
        /// The sender.
        peer: usize,
        /// What did not decode.
        what: String,
    },
    /// Ranks disagree on something they must share (graph, build, rank
    /// count).
    #[error("rank {rank}: ranks disagree: {what}")]
    Mismatch {
        /// This rank.
        rank: usize,
        /// What differs.
        what: String,
    },
    /// A part file that cannot be read or written, or is damaged.
    #[error("part file {path}: {what}")]
    PartFile {
        /// The file.
        path: String,
        /// What is wrong.
        what: String,
    },
    /// A bad argument (rank count, rank number).
    #[error("{0}")]
    Invalid(String),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, DistError>;

/// Why a fast path of this crate ([`crate::pagerank`], [`crate::sssp`])
/// did not return a result: the algorithm refused its parameters or the
/// graph, or the transport failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RunError {
    /// The algorithm's own refusal (as its driver would give).
    #[error(transparent)]
    Algo(#[from] plexus_engine::AlgoError),
    /// A transport fault (lost rank, timeout, malformed message).
    #[error(transparent)]
    Dist(#[from] DistError),
}
