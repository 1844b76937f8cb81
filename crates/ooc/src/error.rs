//! Errors of the out-of-core executor: one enum, one-line messages that say
//! what failed, where, and what to do.
use std::path::PathBuf;

/// Every error the out-of-core executor returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OocError {
    /// An operating-system I/O error on a named file (the graph or a log).
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The stored graph's header or sections are unusable.
    #[error(transparent)]
    Graph(#[from] plexus_graph::GraphError),
    /// The stored graph failed a check made while reading it.
    #[error("corrupt store {path}: {msg}")]
    Corrupt { path: PathBuf, msg: String },
    /// The memory budget cannot hold one interval's state.
    #[error(
        "--memory {budget} bytes is too small for this graph: its per-vertex arrays and one \
         interval's buffers need at least {minimum} bytes ({readable}); give at least that"
    )]
    BudgetTooSmall {
        budget: u64,
        minimum: u64,
        readable: String,
    },
    /// A memory size that does not parse.
    #[error("'{0}' is not a memory size (a number of bytes with an optional K, M, G or T suffix, powers of 1024)")]
    BadSize(String),
}

impl OocError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        OocError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn corrupt(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        OocError::Corrupt {
            path: path.into(),
            msg: msg.into(),
        }
    }
}

/// Result alias for the out-of-core executor.
pub type Result<T, E = OocError> = std::result::Result<T, E>;

/// Parses a memory size: bytes, or a number with a `K`, `M`, `G` or `T`
/// suffix (powers of 1024; an optional trailing `B` or `iB`).
///
/// ```
/// assert_eq!(plexus_ooc::parse_size("64M").unwrap(), 64 << 20);
/// assert_eq!(plexus_ooc::parse_size("1.5GiB").unwrap(), 3 << 29);
/// assert!(plexus_ooc::parse_size("lots").is_err());
/// ```
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, shift) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 30),
        Some('T' | 't') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let x: f64 = num
        .trim()
        .parse()
        .map_err(|_| OocError::BadSize(s.to_string()))?;
    let bytes = x * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(OocError::BadSize(s.to_string()));
    }
    Ok(bytes as u64)
}

/// `bytes` for people: `1.5 GiB`, `64.0 MiB`, `512 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}
