//! WCC jobs: every WCC job on a snapshot asks the same question (there are
//! no parameters), so the jobs admitted at one boundary share one run of
//! the engine's own kernel (`algo::wcc::run`, Afforest union–find), a
//! whole-graph step outside the chunk scan, and each gets the labels.
use std::sync::Arc;

use plexus_engine::algo::wcc;
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
