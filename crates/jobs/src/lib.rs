//! # plexus-jobs
//!
//! Many analytics jobs on one graph: a job manager that runs them one after
//! another, side by side, or through a shared scan of the topology
//! (GraphM's share–synchronise, Zhao et al., SC'19), with jobs of one
//! algorithm fused into lanes of one traversal.
//!
//! * [`snapshot`]: the graph versions jobs pin ([`Snapshot`], [`Catalog`]).
//! * [`spec`]: what a job asks for ([`JobSpec`], [`Algorithm`]).
//! * [`manager`]: [`JobManager`] (submit, status, cancel, results) and the
//!   three [`ExecMode`]s.
//! * [`scan`]: the chunk table and the shared-scan executor, which drives
//!   the engine's vertex programs (unchanged) chunk by chunk.
//! * [`lanes`]: fused tasks (multi-source BFS, k-wide PageRank lanes and
//!   the damping series, shared WCC and CDLP, SSSP lanes when asked for)
//!   and the jobs run by the engine's own kernels.
//! * [`sched`]: resource-aware scheduling of a job stream (CongraPlus):
//!   profiles, the decision core shared by the real runner and the
//!   simulator, NUMA pinning.
//! * [`cache`]: LLC detection and GraphM's chunk-size formula;
//!   [`memory`]: available memory and resident set from `/proc`.
//!
//! ```
//! use std::sync::Arc;
//! use plexus_graph::{BuildOptions, Graph};
//! use plexus_jobs::{Algorithm, Catalog, ExecMode, JobManager, JobSpec, ManagerConfig, Values};
//!
//! // A directed path 0 → 1 → 2 → 3.
//! let catalog = Catalog::new();
//! let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], &BuildOptions::directed()).unwrap();
//! let snap = catalog.publish("path", g);
//!
//! let mgr = JobManager::new(ManagerConfig { mode: ExecMode::Shared, llc_bytes: Some(1 << 20), ..Default::default() }).unwrap();
//! let bfs = mgr.submit(Arc::clone(&snap), JobSpec::new("bfs", Algorithm::Bfs { source: "1".into() })).unwrap();
//! let pr = mgr.submit(Arc::clone(&snap), JobSpec::new("pr", Algorithm::pagerank(0.85))).unwrap();
//! mgr.wait_all();
//! match bfs.take_result().unwrap().values() {
//!     Values::Bfs { depth, .. } => assert_eq!(depth, &vec![u32::MAX, 0, 1, 2]),
//!     _ => unreachable!(),
//! }
//! assert!(bfs.take_result().is_err()); // results are handed out once
//! assert!(pr.take_result().is_ok());
//! ```

pub mod cache;
pub mod error;
pub mod job;
pub mod lanes;
pub mod manager;
pub mod memory;
pub mod output;
pub mod request;
pub mod scan;
pub mod sched;
pub mod snapshot;
pub mod spec;

pub use error::JobError;
pub use job::{JobHandle, JobId, JobState, JobStatus};
pub use manager::{AdmissionHold, ExecMode, Gather, JobManager, ManagerConfig, ManagerStats};
pub use output::{JobOutput, Values};
pub use snapshot::{Catalog, Snapshot, SnapshotId};
pub use spec::{Algorithm, Fault, JobSpec};
