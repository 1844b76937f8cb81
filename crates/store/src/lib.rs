//! # plexus-store
//!
//! Live graphs (Grace, Prabhakaran et al., USENIX ATC'12, §5–6): a stored
//! graph is a base (the immutable `graph.plx`) plus committed changes.
//!
//! - [`ops`]: the changes a transaction makes, in external ids.
//! - [`wal`]: the write-ahead log beside the base (checksummed records,
//!   group commit, recovery, repair) over the file layer of [`fault`].
//! - [`version`]: versions as copy-on-write partitions over the base;
//!   snapshots pin one.
//! - [`tx`]: snapshot-isolated transactions with per-partition
//!   first-committer-wins conflict detection.
//! - [`materialize`]: a snapshot as an ordinary `Graph` for the analytics
//!   executors.
//! - [`query`]: point queries on a snapshot.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod error;
pub mod fault;
pub mod live;
pub mod lock;
pub mod materialize;
pub mod open;
pub mod ops;
pub mod query;
pub mod tx;
pub mod version;
pub mod wal;

pub use error::{Result, StoreError};
pub use live::LiveGraph;
pub use lock::WriterLock;
pub use open::{open_latest, Access, CompactReport, OpenReport, LOG_FILE};
pub use ops::Op;
pub use tx::Transaction;
pub use version::Snapshot;
pub use wal::{Record, Wal};
