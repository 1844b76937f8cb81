//! Tasks that fuse jobs of one algorithm on one snapshot, and the choice of
//! task for a job.
//!
//! | algorithm | fused (shared mode) | alone |
//! |---|---|---|
//! | bfs | [`msbfs::MsBfs`]: up to 64 roots as bit lanes, when [`whole::MIN_BFS_LANES`] or more arrive together (or a group runs); fewer: the engine's kernel ([`whole::BfsJob`]) | the engine's `bfs::BfsDriver` in the scan |
//! | sssp | one task per job: the engine's kernel ([`whole::SsspJob`]); [`sssp::SsspLanes`] (up to 8 roots, delta-stepping per lane) when `fuse_sssp` is set | the engine's kernel ([`whole::SsspJob`]); the engine's `sssp::SsspDriver` in the scan when `sssp_in_scan` is set |
//! | pagerank | [`pagerank_series::PageRankSeries`]: any number of jobs with the uniform teleport (plain Jacobi) that arrive together, from one damping-free power series (jobs arriving after it started begin another); other PageRank jobs: [`pagerank::PageRankLanes`], up to 16 variants, k values per vertex | the same lanes task with one lane |
//! | wcc | [`whole::WccGroup`]: one Afforest run for all | the same task with one job |
//! | cdlp | [`cdlp::CdlpGroup`]: one propagation up to the largest count | the same task with one job |
use std::sync::Arc;

use plexus_graph::Graph;

use plexus_engine::algo::{bfs, sssp as engine_sssp};

use crate::job::JobShared;
use crate::output::Values;
use crate::scan::{ProgramTask, ScanTask};
use crate::spec::Resolved;

pub mod cdlp;
pub mod msbfs;
pub mod pagerank;
pub mod pagerank_series;
pub mod sssp;
pub mod whole;

/// A new task for `job` on `g`: a fusing group (which later jobs may join)
/// when `fuse`, else a task of its own. `series`: a PageRank job starts a
/// damping series ([`pagerank_series`]) rather than lanes; the manager asks
/// for one for each wave of PageRank jobs that [`pagerank_series::fits`]
/// (the series' `join` checks it again and refuses the others). `None` for
/// a job that failed to resolve (it has no parameters to run).
pub(crate) fn new_task(
    g: &Graph,
    job: &Arc<JobShared>,
    fuse: bool,
    sssp_in_scan: bool,
    series: bool,
) -> Option<Box<dyn ScanTask>> {
    let n = g.num_vertices();
    let resolved = job.resolved.as_ref()?;
    let mut task: Box<dyn ScanTask> = match resolved {
        Resolved::Bfs { source } if !fuse => {
            let cfg = bfs::Config {
                source: *source,
                ..bfs::Config::default()
            };
            let driver = bfs::BfsDriver::new(g, &cfg).ok()?;
            return Some(Box::new(ProgramTask::new(
                driver,
                Box::new(bfs_values),
                Arc::clone(job),
            )));
        }
        Resolved::Sssp { source, delta } if !fuse && sssp_in_scan => {
            let cfg = engine_sssp::Config {
                source: *source,
                delta: Some(*delta),
            };
            let driver = engine_sssp::SsspDriver::new(g, &cfg).ok()?;
            let source = *source;
            return Some(Box::new(ProgramTask::new(
                driver,
                Box::new(move |o: engine_sssp::Output| Values::Sssp {
                    dist: o.dist,
                    source,
                    iterations: o.iterations,
                }),
                Arc::clone(job),
            )));
        }
        Resolved::Sssp { source, delta } if !fuse => {
            return Some(Box::new(whole::SsspJob::new(n, job, *source, *delta)))
        }
        Resolved::Sssp { .. } => Box::new(sssp::SsspLanes::new(n)),
        Resolved::Bfs { .. } => Box::new(msbfs::MsBfs::new(n)),
        Resolved::PageRank(cfg) if fuse && series => {
            Box::new(pagerank_series::PageRankSeries::new(n, cfg.precision))
        }
        Resolved::PageRank(cfg) => Box::new(pagerank::PageRankLanes::new(n, cfg.precision)),
        Resolved::Wcc => Box::new(whole::WccGroup::new(n)),
        Resolved::Cdlp { .. } => Box::new(cdlp::CdlpGroup::new(g)),
    };
    if task.join(g, job) {
        Some(task)
    } else {
        None
    }
}

/// A BFS driver's result as a job's values.
fn bfs_values(o: bfs::Output) -> Values {
    Values::Bfs {
        depth: o.depth,
        parent: o.parent,
        iterations: o.iterations,
    }
}

/// A bitmap over `0..n` with the bits of `ids` set.
pub(crate) fn union_bitmap(n: usize, ids: &[plexus_graph::VertexId]) -> Vec<u64> {
    let mut words = vec![0u64; n.div_ceil(64)];
    for &v in ids {
        words[v as usize >> 6] |= 1 << (v & 63);
    }
    words
}
