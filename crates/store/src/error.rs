//! Errors of the live-graph store.
use std::path::PathBuf;
use std::sync::Arc;

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
    /// The log has a bad record with good data after it (or a version that
    /// does not increase): opening refuses, since dropping the tail would
    /// lose acknowledged commits. `offset` is the byte offset in the file.
    #[error(
        "the log {path} is corrupt at byte {offset}: {reason}; repairing it truncates the log at that byte and loses every record from there on"
    )]
    CorruptLog {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    /// Writing a group of records failed (e.g. the disk is full); the log
    /// was cut back to the last good record, so none of the group's commits
    /// (nor those queued behind them) happened. Later commits may succeed.
    #[error("writing the log {path} failed ({source}); the commit did not happen")]
    LogWrite {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The log is in an unknown state (an fdatasync failed, or cutting back
    /// a failed write did); every later commit fails until the graph is
    /// reopened, which recovers from what is on disk.
    #[error("the log at {path} failed ({cause}); reopen the graph")]
    LogFailed { path: PathBuf, cause: Arc<str> },
    /// A record's version is not above the last one enqueued.
    #[error("version {version} is not above the last version {last} in the log {path}")]
    VersionOrder {
        path: PathBuf,
        version: u64,
        last: u64,
    },
    /// A record too large for one frame.
    #[error(
        "a log record of {bytes} bytes (or ops, or string id bytes) is over the limit of {max}"
    )]
    RecordTooLarge { bytes: u64, max: u64 },
    /// Another process holds the writer lock of the data directory.
    /// When the holder is `plexus serve`: "graph store is served by PID N;
    /// use the server (DATA)".
    #[error("{}", locked_words(*pid, dir, *served))]
    Locked {
        pid: Option<u32>,
        dir: PathBuf,
        /// The holder is a server (`WriterLock::acquire_for_server`).
        served: bool,
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
    /// The log's next record is not the version after the graph's newest
    /// (a reader raced a compaction, or the log belongs to another base).
    #[error("the log's record of version {version} does not follow version {after}")]
    VersionGap { version: u64, after: u64 },
    /// A commit on a graph opened for reading.
    #[error("the graph was opened read-only (another process may hold the writer lock)")]
    ReadOnly,
    /// A commit failed to reach the log; the graph refuses further writes.
    #[error("the live graph refuses writes after a failed commit ({0}); reopen it")]
    Poisoned(String),
}

fn locked_words(pid: Option<u32>, dir: &std::path::Path, served: bool) -> String {
    if served {
        format!(
            "graph store is served by {}; use the server ({})",
            pid_words(pid),
            dir.display()
        )
    } else {
        format!(
            "graph store is locked by {} ({})",
            pid_words(pid),
            dir.display()
        )
    }
}

fn pid_words(pid: Option<u32>) -> String {
    match pid {
        Some(p) => format!("PID {p}"),
        None => "another process (PID unknown)".to_owned(),
    }
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
