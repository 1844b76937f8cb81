//! Jobs run by the engine's own whole-graph kernels, as one step outside
//! the chunk scan ([`Plan::Whole`]):
//!
//! * WCC: every WCC job on a snapshot asks the same question (there are no
//!   parameters), so the jobs admitted at one boundary share one run of
//!   `algo::wcc::run` (union–find: Afforest, or by blocks), and each gets
//!   the labels.
//! * SSSP ([`SsspJob`]): one job, `algo::sssp::distances` (delta-stepping
//!   with per-thread buckets and bucket fusion) then `sssp::parents_of`, the
//!   result of `plexus run sssp`. In the scan the same job replays the
//!   engine's vertex program superstep by superstep
//!   (the engine's `sssp::SsspDriver`); that shares chunk loads with other
//!   jobs but pays a scan pass per bucket, so the kernel, which is faster,
//!   is the default ([`crate::ManagerConfig::sssp_in_scan`] restores the
//!   scan).
//!   The kernel reports each superstep to the job (progress) and stops at
//!   the next superstep when the job is cancelled or passes its deadline.
//! * BFS ([`BfsJob`]): one job, `algo::bfs::run` (direction-optimising, the
//!   result of `plexus run bfs`), when too few BFS jobs arrive together for
//!   MS-BFS lanes to pay ([`MIN_BFS_LANES`]): lanes advance one level per
//!   scan pass, which costs more than the engine's kernel below about 8
//!   roots on Kronecker graphs, and far more on a road graph, whose every
//!   level is a pass.
use std::sync::Arc;

use plexus_engine::algo::{bfs, sssp, wcc};
use plexus_engine::progress::{self, Observer};
use plexus_engine::AlgoError;
use plexus_graph::{Graph, VertexId};

use crate::error::JobError;
use crate::job::JobShared;
use crate::output::{JobOutput, Values};
use crate::scan::{Plan, ScanChunk, ScanTask};
use crate::spec::Resolved;

/// WCC jobs sharing one computation.
pub struct WccGroup {
    n: usize,
    jobs: Vec<Arc<JobShared>>,
    result: Option<Result<Values, String>>,
}

impl WccGroup {
    /// An empty group on a graph of `n` vertices.
    pub fn new(n: usize) -> Self {
        WccGroup {
            n,
            jobs: Vec::new(),
            result: None,
        }
    }
}

impl ScanTask for WccGroup {
    fn plan(&mut self, g: &Graph) -> Plan {
        self.jobs.retain(|j| match j.stop_reason() {
            Some(e) => {
                j.finish(Err(e));
                false
            }
            None => true,
        });
        if self.jobs.is_empty() {
            return Plan::Done;
        }
        match &self.result {
            None => {
                for j in &self.jobs {
                    j.mark_running();
                    j.record_step(self.n as u64, g.num_arcs());
                }
                Plan::Whole {
                    bytes: g.topology_bytes(),
                }
            }
            Some(r) => {
                for j in std::mem::take(&mut self.jobs) {
                    j.finish(match r {
                        Ok(values) => Ok(JobOutput {
                            snapshot: Arc::clone(&j.snapshot),
                            values: values.clone(),
                        }),
                        Err(e) => Err(JobError::Failed(e.clone())),
                    });
                }
                Plan::Done
            }
        }
    }

    fn run_chunk(&self, _g: &Graph, _c: &ScanChunk, _a: &[VertexId], _out: &mut Vec<VertexId>) {}

    fn run_whole(&mut self, g: &Graph) {
        for j in &self.jobs {
            j.maybe_fault();
        }
        self.result = Some(
            wcc::run(g, &wcc::Config::default())
                .map(|o| Values::Wcc {
                    component: o.component,
                    count: o.count,
                })
                .map_err(|e| e.to_string()),
        );
    }

    fn end_step(&mut self, _g: &Graph, _activated: Vec<VertexId>) {}

    fn cancelled(&self) -> bool {
        self.jobs.iter().all(|j| j.cancel_requested())
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        self.jobs.clone()
    }

    fn state_bytes(&self) -> u64 {
        8 * self.n as u64
    }

    fn join(&mut self, _g: &Graph, job: &Arc<JobShared>) -> bool {
        if self.result.is_some() || !matches!(job.resolved, Some(Resolved::Wcc)) {
            return false;
        }
        job.set_state_bytes(self.state_bytes() / (self.jobs.len() as u64 + 1));
        self.jobs.push(Arc::clone(job));
        true
    }
}

/// Forwards a kernel's supersteps to its job, and the job's stop requests
/// (cancellation, deadline) to the kernel.
struct JobObserver(Arc<JobShared>);

impl Observer for JobObserver {
    fn superstep(&self, active: u64) {
        // Whole-graph kernels do not count the frontier's edges.
        self.0.record_step(active, 0);
    }
    fn cancel_requested(&self) -> bool {
        self.0.stop_reason().is_some()
    }
}

/// BFS jobs admitted together on one snapshot below this count run as
/// [`BfsJob`]s (the engine's kernel) rather than as MS-BFS lanes; a BFS job
/// joins a running lane group whatever the count.
pub const MIN_BFS_LANES: usize = 8;

/// An engine kernel that runs one job's whole computation in one call.
pub trait Kernel: Send + Sync {
    /// Runs it (reporting supersteps to the current progress observer).
    fn run(&self, g: &Graph) -> Result<Values, AlgoError>;
    /// About the topology bytes one run reads.
    fn bytes(&self, g: &Graph) -> u64;
    /// Bytes of per-vertex state on `n` vertices.
    fn state_bytes(&self, n: u64) -> u64;
}

/// BFS by the engine's direction-optimising kernel (`plexus run bfs`).
pub struct BfsKernel(bfs::Config);

impl Kernel for BfsKernel {
    fn run(&self, g: &Graph) -> Result<Values, AlgoError> {
        bfs::run(g, &self.0).map(|o| Values::Bfs {
            depth: o.depth,
            parent: o.parent,
            iterations: o.iterations,
        })
    }
    fn bytes(&self, g: &Graph) -> u64 {
        // About one read of the out-edges (push levels) or in-edges (pull).
        crate::scan::slice_bytes(g.out().offsets(), 0, g.num_vertices(), false)
    }
    fn state_bytes(&self, n: u64) -> u64 {
        // parent + depth (u32 each), frontier (dense bitmap or id list).
        12 * n
    }
}

/// SSSP distances by the engine's delta-stepping kernel (parents are
/// derived when the result is written, `Values::sssp_parents`).
pub struct SsspKernel(sssp::Config);

impl Kernel for SsspKernel {
    fn run(&self, g: &Graph) -> Result<Values, AlgoError> {
        sssp::distances(g, &self.0).map(|d| Values::Sssp {
            dist: d.dist,
            source: self.0.source,
            iterations: d.iterations,
        })
    }
    fn bytes(&self, g: &Graph) -> u64 {
        // About one read of the out-edges with their weights: each vertex
        // relaxes its edges once per distance it settles at (more than once
        // only when a later bucket lowers it again).
        crate::scan::slice_bytes(g.out().offsets(), 0, g.num_vertices(), true)
    }
    fn state_bytes(&self, n: u64) -> u64 {
        crate::spec::sssp_state_bytes(n)
    }
}

/// One job run by one call of an engine kernel, as one step outside the
/// chunk scan ([`Plan::Whole`]); the result is handed out at the next plan.
pub struct KernelJob<K: Kernel> {
    job: Arc<JobShared>,
    kernel: K,
    n: usize,
    result: Option<Result<Values, JobError>>,
}

/// One BFS job run by the engine's direction-optimising kernel.
pub type BfsJob = KernelJob<BfsKernel>;
/// One SSSP job run by the engine's delta-stepping kernel (module docs).
pub type SsspJob = KernelJob<SsspKernel>;

impl BfsJob {
    /// BFS from `source` (internal id).
    pub(crate) fn new(n: usize, job: &Arc<JobShared>, source: VertexId) -> Self {
        KernelJob::with(
            n,
            job,
            BfsKernel(bfs::Config {
                source,
                ..Default::default()
            }),
        )
    }
}

impl SsspJob {
    /// SSSP from `source` (internal id) with bucket width `delta` (> 0).
    pub(crate) fn new(n: usize, job: &Arc<JobShared>, source: VertexId, delta: f64) -> Self {
        KernelJob::with(
            n,
            job,
            SsspKernel(sssp::Config {
                source,
                delta: Some(delta),
            }),
        )
    }
}

impl<K: Kernel> KernelJob<K> {
    fn with(n: usize, job: &Arc<JobShared>, kernel: K) -> Self {
        KernelJob {
            job: Arc::clone(job),
            kernel,
            n,
            result: None,
        }
    }
}

impl<K: Kernel> ScanTask for KernelJob<K> {
    fn plan(&mut self, g: &Graph) -> Plan {
        if let Some(r) = self.result.take() {
            self.job.finish(r.map(|values| JobOutput {
                snapshot: Arc::clone(&self.job.snapshot),
                values,
            }));
            return Plan::Done;
        }
        if let Some(e) = self.job.stop_reason() {
            self.job.finish(Err(e));
            return Plan::Done;
        }
        self.job.mark_running();
        Plan::Whole {
            bytes: self.kernel.bytes(g),
        }
    }

    fn run_chunk(&self, _g: &Graph, _c: &ScanChunk, _a: &[VertexId], _out: &mut Vec<VertexId>) {}

    fn run_whole(&mut self, g: &Graph) {
        self.job.maybe_fault_whole();
        let observer: Arc<dyn Observer> = Arc::new(JobObserver(Arc::clone(&self.job)));
        let kernel = &self.kernel;
        let r = progress::observe(observer, || kernel.run(g));
        self.result = Some(match r {
            Ok(values) => Ok(values),
            Err(AlgoError::Cancelled) => Err(self.job.stop_reason().unwrap_or(JobError::Cancelled)),
            Err(e) => Err(JobError::Failed(e.to_string())),
        });
    }

    fn end_step(&mut self, _g: &Graph, _activated: Vec<VertexId>) {}

    fn cancelled(&self) -> bool {
        self.job.cancel_requested()
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        vec![Arc::clone(&self.job)]
    }

    fn state_bytes(&self) -> u64 {
        self.kernel.state_bytes(self.n as u64)
    }
}
