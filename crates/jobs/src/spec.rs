//! What a job asks for: an algorithm, its parameters (vertex ids external,
//! as the user writes them), an optional deadline, and the checks and
//! resolution done at submission.
use std::time::Duration;

use plexus_engine::algo::{cdlp, pagerank, sssp};
use plexus_engine::registry;
use plexus_graph::{Graph, VertexId};

use crate::error::JobError;

/// An algorithm with its parameters. Vertex ids are external ids (text).
#[derive(Clone, Debug, PartialEq)]
pub enum Algorithm {
    /// Breadth-first search from `source`.
    Bfs { source: String },
    /// Single-source shortest paths (delta-stepping) from `source`; needs weights.
    Sssp {
        source: String,
        /// Bucket width; `None`: the engine's default (`sssp::default_delta`, as `plexus run sssp`).
        delta: Option<f64>,
    },
    /// PageRank, personalised when `personalization` names sources.
    PageRank {
        /// Damping `d` in `[0, 1)`.
        damping: f64,
        /// A fixed iteration count, or `None` to stop by tolerance.
        iterations: Option<usize>,
        /// Stop when the L1 change is below `|V| · tolerance`.
        tolerance: f64,
        /// Most iterations when stopping by tolerance.
        max_iterations: usize,
        /// Teleport sources (external ids), or `None` for uniform.
        personalization: Option<Vec<String>>,
        /// Storage of contributions (f64 by default; f32 as `plexus run
        /// pagerank --precision single`). Fused lanes store the rows in the
        /// same type, so a lane's ranks stay the engine's bit for bit.
        precision: pagerank::Precision,
    },
    /// Weakly connected components (labels: smallest internal id).
    Wcc,
    /// Community detection by label propagation (Graphalytics CDLP).
    Cdlp { iterations: usize },
}

impl Algorithm {
    /// PageRank with the engine's defaults and damping `d`.
    pub fn pagerank(damping: f64) -> Self {
        Algorithm::PageRank {
            damping,
            iterations: None,
            tolerance: pagerank::DEFAULT_TOLERANCE,
            max_iterations: pagerank::DEFAULT_MAX_ITERATIONS,
            personalization: None,
            precision: pagerank::Precision::Double,
        }
    }

    /// CDLP with the engine's default iteration count.
    pub fn cdlp() -> Self {
        Algorithm::Cdlp {
            iterations: cdlp::DEFAULT_ITERATIONS,
        }
    }

    /// The registry's algorithm this job runs (personalised PageRank is a
    /// PageRank job with teleport sources).
    pub fn kind(&self) -> registry::Algorithm {
        match self {
            Algorithm::Bfs { .. } => registry::Algorithm::Bfs,
            Algorithm::Sssp { .. } => registry::Algorithm::Sssp,
            Algorithm::PageRank { .. } => registry::Algorithm::PageRank,
            Algorithm::Wcc => registry::Algorithm::Wcc,
            Algorithm::Cdlp { .. } => registry::Algorithm::Cdlp,
        }
    }

    /// The algorithm's short name, the registry's (`bfs`, `sssp`,
    /// `pagerank`, `wcc`, `cdlp`).
    pub fn name(&self) -> &'static str {
        registry::entry(self.kind()).name
    }
}

/// The algorithms a job mix and a profile take, by name, in the registry's
/// order: every registry entry marked `batch`, except `ppr` (a PageRank job
/// with teleport sources, not a kind of its own).
pub fn job_algorithms() -> Vec<&'static str> {
    registry::ALGORITHMS
        .iter()
        .filter(|e| e.batch && e.algorithm != registry::Algorithm::Ppr)
        .map(|e| e.name)
        .collect()
}

/// A deliberate fault, for testing that a failing job fails alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Panic inside the kernel (while processing a chunk) in this superstep (1-based).
    PanicAtSuperstep(u64),
}

/// A job to submit.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    /// A name for displays and errors (need not be unique).
    pub name: String,
    /// What to compute.
    pub algorithm: Algorithm,
    /// Stop the job (status failed, "deadline exceeded") when it has not
    /// finished this long after submission.
    pub deadline: Option<Duration>,
    /// An injected fault (tests only; `None` in real use).
    pub fault: Option<Fault>,
}

impl JobSpec {
    /// A job named `name` running `algorithm`, no deadline, no fault.
    pub fn new(name: impl Into<String>, algorithm: Algorithm) -> Self {
        JobSpec {
            name: name.into(),
            algorithm,
            deadline: None,
            fault: None,
        }
    }
}

/// An algorithm with its parameters checked and vertex ids internal.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Resolved {
    Bfs {
        source: VertexId,
    },
    Sssp {
        source: VertexId,
        /// Bucket width, > 0.
        delta: f64,
    },
    PageRank(pagerank::Config),
    Wcc,
    Cdlp {
        iterations: usize,
    },
}

fn vertex(g: &Graph, what: &str, id: &str) -> Result<VertexId, JobError> {
    g.ids()
        .lookup_str(id)
        .ok_or_else(|| JobError::InvalidJob(format!("unknown {what} vertex '{id}'")))
}

/// Checks `alg` against `g` and resolves its vertex ids. The checks are the
/// engine's (damping range, weights for sssp, ...), done before any state
/// is allocated, so a bad job fails at once and alone.
pub(crate) fn resolve(g: &Graph, alg: &Algorithm) -> Result<Resolved, JobError> {
    if g.num_vertices() == 0 {
        return Err(JobError::InvalidJob("the graph has no vertices".into()));
    }
    Ok(match alg {
        Algorithm::Bfs { source } => Resolved::Bfs {
            source: vertex(g, "source", source)?,
        },
        Algorithm::Sssp { source, delta } => {
            let source = vertex(g, "source", source)?;
            let delta = sssp_delta(g, source, *delta)?;
            Resolved::Sssp { source, delta }
        }
        Algorithm::PageRank {
            damping,
            iterations,
            tolerance,
            max_iterations,
            personalization,
            precision,
        } => {
            if !(0.0..1.0).contains(damping) {
                return Err(JobError::InvalidJob(format!(
                    "damping must be in [0, 1), got {damping}"
                )));
            }
            if !(*tolerance >= 0.0 && tolerance.is_finite()) {
                return Err(JobError::InvalidJob(format!(
                    "tolerance must be a finite number >= 0, got {tolerance}"
                )));
            }
            let personalization = match personalization {
                None => None,
                Some(ids) if ids.is_empty() => {
                    return Err(JobError::InvalidJob(
                        "personalization needs at least one source vertex".into(),
                    ))
                }
                Some(ids) => Some(
                    ids.iter()
                        .map(|s| vertex(g, "personalization", s))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            Resolved::PageRank(pagerank::Config {
                damping: *damping,
                iterations: *iterations,
                tolerance: *tolerance,
                max_iterations: *max_iterations,
                personalization,
                precision: *precision,
                ..Default::default()
            })
        }
        Algorithm::Wcc => Resolved::Wcc,
        Algorithm::Cdlp { iterations } => Resolved::Cdlp {
            iterations: *iterations,
        },
    })
}

/// The engine's SSSP checks and default bucket width ([`sssp::prepare`]),
/// from the graph's cached weight statistics (one pass per opened graph,
/// shared by all its jobs), as `plexus run sssp`.
fn sssp_delta(g: &Graph, source: VertexId, delta: Option<f64>) -> Result<f64, JobError> {
    sssp::prepare(g, &sssp::Config { source, delta })
        .map_err(|e| JobError::InvalidJob(e.to_string()))
}

/// Bytes of per-vertex state of an SSSP job on `n` vertices: the engine
/// kernel's distances and last-relaxed distances (f64 each), frontier and
/// bucket lists (about one u32 per vertex), and at the end parents and hop
/// counts (u32 each).
pub(crate) fn sssp_state_bytes(n: u64) -> u64 {
    8 * n + 8 * n + 4 * n + 4 * n + 4 * n
}

/// Bytes of per-vertex state a job of this kind allocates on `g` when it
/// runs alone (arrays of `n` entries, frontiers at their dense size). The
/// manager refuses a job whose state exceeds its memory budget.
pub(crate) fn state_bytes(g: &Graph, r: &Resolved) -> u64 {
    let n = g.num_vertices() as u64;
    let bitmap = n.div_ceil(64) * 8;
    match r {
        // parent + depth (u32 each), frontier (dense bitmap or id list).
        Resolved::Bfs { .. } => 8 * n + 4 * n,
        Resolved::Sssp { .. } => sssp_state_bytes(n),
        // rank and next (f64), contributions (f64, or f32 for Single).
        Resolved::PageRank(cfg) => match cfg.precision {
            pagerank::Precision::Double => 24 * n + bitmap,
            pagerank::Precision::Single => 20 * n + bitmap,
        },
        // union-find parents and labels.
        Resolved::Wcc => 8 * n,
        // label, next, changed flags, plus each worker's label counts.
        Resolved::Cdlp { .. } => {
            9 * n + cdlp::tally_bytes(g) * rayon::current_num_threads().max(1) as u64
        }
    }
}

/// Bytes of per-vertex state a job running `alg` would allocate on `g`
/// (as [`crate::JobManager::submit`] counts them against its budget), or
/// the reason its parameters do not resolve.
pub fn estimate_state_bytes(g: &Graph, alg: &Algorithm) -> Result<u64, JobError> {
    resolve(g, alg).map(|r| state_bytes(g, &r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every job kind the registry marks `batch` has a job here, under the
    /// registry's name, and no job kind is missing from the registry.
    #[test]
    fn job_kinds_are_the_registry_batch_entries() {
        let jobs = [
            Algorithm::Bfs { source: "0".into() },
            Algorithm::Sssp {
                source: "0".into(),
                delta: None,
            },
            Algorithm::pagerank(0.85),
            Algorithm::Wcc,
            Algorithm::cdlp(),
        ];
        let names: Vec<&str> = jobs.iter().map(Algorithm::name).collect();
        assert_eq!(names, job_algorithms());
        for j in &jobs {
            assert!(registry::entry(j.kind()).batch, "{}", j.name());
        }
    }
}
