//! Errors of the graph crate: one enum, messages that say what failed and where.
use std::path::PathBuf;

/// Every error the graph crate returns. Messages are one line and name the
/// file (and line or byte offset) involved, so a CLI can print them as they are.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// An operating-system I/O error on a named file.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A syntax or value error in an input file at a given line.
    #[error("{path}:{line}: {msg}")]
    Parse {
        path: PathBuf,
        line: u64,
        msg: String,
    },
    /// An input file is unusable as a whole (empty, truncated, wrong kind).
    #[error("{path}: {msg}")]
    BadInput { path: PathBuf, msg: String },
    /// A stored graph failed a consistency check (magic, version, size, checksum).
    #[error("corrupt store {path}: {msg}")]
    Corrupt { path: PathBuf, msg: String },
    /// A named graph does not exist in the data directory.
    #[error("no graph named '{name}' in {dir} (see `plexus list`)")]
    UnknownGraph { name: String, dir: PathBuf },
    /// A graph with that name already exists.
    #[error("a graph named '{name}' already exists in {dir} (use --force to replace it)")]
    GraphExists { name: String, dir: PathBuf },
    /// An external vertex id that is not in the graph.
    #[error("unknown vertex id '{0}'")]
    UnknownVertex(String),
    /// A parameter outside what the operation accepts.
    #[error("{0}")]
    InvalidArgument(String),
    /// The graph has more vertices than [`crate::VertexId`] can address.
    #[error("too many vertices: {count} exceeds the limit of {limit} for 32-bit vertex ids")]
    TooManyVertices { count: u64, limit: u64 },
}

impl GraphError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        GraphError::Io {
            path: path.into(),
            source,
        }
    }
    pub(crate) fn parse(path: impl Into<PathBuf>, line: u64, msg: impl Into<String>) -> Self {
        GraphError::Parse {
            path: path.into(),
            line,
            msg: msg.into(),
        }
    }
    pub(crate) fn bad_input(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        GraphError::BadInput {
            path: path.into(),
            msg: msg.into(),
        }
    }
    pub(crate) fn corrupt(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        GraphError::Corrupt {
            path: path.into(),
            msg: msg.into(),
        }
    }
}

/// Result alias for the graph crate.
pub type Result<T, E = GraphError> = std::result::Result<T, E>;
