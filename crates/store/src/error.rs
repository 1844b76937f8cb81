//! Errors of the live-graph store.
use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What went wrong, naming the file, byte offset, partition or id.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// An I/O error on a file of the store.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A graph-crate error (opening the base, ids).
    #[error(transparent)]
    Graph(#[from] plexus_graph::GraphError),
    /// A vertex id that is not in the graph (at this version).
    #[error("vertex {id} does not exist")]
    UnknownVertex { id: String },
    /// `add-vertex` of a vertex that exists.
    #[error("vertex {id} already exists")]
    VertexExists { id: String },
    /// `add-edge` of an edge that exists.
    #[error("edge {u} {v} already exists (set-weight changes its weight)")]
    EdgeExists { u: String, v: String },
    /// `remove-edge` or `set-weight` of an edge that does not exist.
    #[error("edge {u} {v} does not exist")]
    EdgeMissing { u: String, v: String },
    /// An op that does not fit the graph (a weight on an unweighted graph,
    /// a missing or non-finite weight, an id of the wrong kind).
    #[error("{0}")]
    BadOp(String),
    /// First committer wins: a partition this transaction wrote was
    /// changed by a commit after its snapshot.
    #[error("write-write conflict on partition {partition} (vertices {first}..{end}): changed by version {by} after this transaction's snapshot {snapshot}; retry the transaction")]
    Conflict {
        partition: usize,
        first: u64,
        end: u64,
        by: u64,
        snapshot: u64,
    },
    /// The graph was compacted after this transaction's snapshot (its
    /// vertex numbering is gone); retry the transaction.
    #[error("the graph was compacted to version {version} after this transaction's snapshot {snapshot}; retry the transaction")]
    Compacted { version: u64, snapshot: u64 },
    /// A commit failed to reach the log; the graph refuses further writes.
    #[error("the live graph refuses writes after a failed commit ({0}); reopen it")]
    Poisoned(String),
}

impl StoreError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }
}
