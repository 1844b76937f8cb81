//! `plexus.batch`: many jobs through the job manager (one after another,
//! side by side, or one shared scan per superstep with fused lanes), on
//! the snapshots of the graphs the Python layer passes.
use std::sync::Arc;

use numpy::IntoPyArray;
use plexus_engine::algo::{cdlp, pagerank};
use plexus_jobs::manager::{ExecMode, JobManager, ManagerConfig};
use plexus_jobs::output::Values;
use plexus_jobs::spec::{Algorithm, JobSpec};
use plexus_jobs::JobState;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::graph::NativeGraph;
use crate::run::request_of;
use crate::PlexusError;

/// The job algorithm of one job dict's request.
fn job_algorithm(
    ng: &NativeGraph,
    algorithm: &str,
    params: &Bound<'_, PyDict>,
) -> PyResult<Algorithm> {
    let req = request_of(algorithm, ng.name.as_deref().unwrap_or("<memory>"), params)?;
    let r = plexus_jobs::request::resolve(ng.graph(), &req).map_err(crate::run::request_err)?;
    let source = || {
        let v = r.source;
        ng.graph().ids().external_string(v)
    };
    Ok(match r.algorithm {
        "bfs" => Algorithm::Bfs { source: source() },
        "sssp" => Algorithm::Sssp {
            source: source(),
            delta: req.delta,
        },
        "pagerank" | "ppr" => Algorithm::PageRank {
            damping: req.damping.unwrap_or(pagerank::DEFAULT_DAMPING),
            iterations: req.iterations,
            tolerance: req.tolerance.unwrap_or(pagerank::DEFAULT_TOLERANCE),
            max_iterations: pagerank::DEFAULT_MAX_ITERATIONS,
            personalization: (r.algorithm == "ppr").then(|| vec![source()]),
            precision: req.precision.unwrap_or(pagerank::Precision::Double),
        },
        "wcc" => Algorithm::Wcc,
        "cdlp" => Algorithm::Cdlp {
            iterations: req.iterations.unwrap_or(cdlp::DEFAULT_ITERATIONS),
        },
        other => {
            return Err(PyValueError::new_err(format!(
                "batch runs bfs, sssp, pagerank, ppr, wcc and cdlp jobs, not {other} \
                 (run it with Graph.run)"
            )))
        }
    })
}

/// A job's values as the dict `run` returns (columns, kinds, summary).
fn values_dict<'py>(
    py: Python<'py>,
    ng: &NativeGraph,
    v: Values,
    summary: String,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let cols = PyDict::new(py);
    let kinds = PyDict::new(py);
    let put = |name: &str, kind: &str, arr: Bound<'py, PyAny>| -> PyResult<()> {
        cols.set_item(name, arr)?;
        kinds.set_item(name, kind)
    };
    let mut iterations = None;
    match v {
        Values::Bfs {
            depth,
            parent,
            iterations: it,
        } => {
            put("depth", "depth", depth.into_pyarray(py).into_any())?;
            put("parent", "vertex", parent.into_pyarray(py).into_any())?;
            iterations = Some(it);
        }
        Values::Sssp {
            dist,
            iterations: it,
            ..
        } => {
            put("distance", "float", dist.into_pyarray(py).into_any())?;
            iterations = Some(it);
        }
        Values::PageRank {
            rank,
            iterations: it,
            ..
        } => {
            put("rank", "float", rank.into_pyarray(py).into_any())?;
            iterations = Some(it);
        }
        Values::Wcc { component, .. } => {
            put("component", "vertex", component.into_pyarray(py).into_any())?;
        }
        Values::Cdlp {
            label,
            iterations: it,
        } => {
            let g = ng.graph();
            let pos: Vec<u32> = label.iter().map(|&x| g.from_natural(x)).collect();
            put("label", "vertex", pos.into_pyarray(py).into_any())?;
            iterations = Some(it);
        }
    }
    d.set_item("columns", cols)?;
    d.set_item("kinds", kinds)?;
    d.set_item("summary_json", summary)?;
    d.set_item("iterations", iterations)?;
    d.set_item("compute_seconds", py.None())?;
    d.set_item("verified", py.None())?;
    Ok(d)
}

/// Runs `jobs`, a list of `(name, graph, algorithm, params)`, in `mode`
/// (`sequential`, `independent` or `shared`) on `threads` threads (0: all
/// cores); returns `(results by name, stats dict as JSON)`. Every job is
/// checked before any runs.
#[pyfunction]
#[pyo3(signature = (jobs, mode="shared", threads=0))]
pub fn run_batch<'py>(
    py: Python<'py>,
    jobs: &Bound<'py, PyList>,
    mode: &str,
    threads: usize,
) -> PyResult<(Bound<'py, PyDict>, String)> {
    let mode: ExecMode = mode.parse().map_err(PyValueError::new_err)?;
    let mut planned = Vec::new();
    for (i, item) in jobs.iter().enumerate() {
        let (name, g, algorithm, params): (
            String,
            Bound<'py, NativeGraph>,
            String,
            Bound<'py, PyDict>,
        ) = item.extract()?;
        let ng = g.get();
        let alg = job_algorithm(ng, &algorithm, &params)
            .map_err(|e| PyValueError::new_err(format!("job {i} ('{name}'): {}", e.value(py))))?;
        planned.push((name, g.clone().unbind(), alg));
    }
    let snaps: Vec<_> = planned
        .iter()
        .map(|(_, g, _)| g.get().snap.clone())
        .collect();
    let specs: Vec<JobSpec> = planned
        .iter()
        .map(|(n, _, a)| JobSpec::new(n.clone(), a.clone()))
        .collect();
    let outcome = py.detach(|| -> Result<_, String> {
        let mgr = JobManager::new(ManagerConfig {
            mode,
            threads,
            ..Default::default()
        })
        .map_err(|e| e.to_string())?;
        let handles = {
            let _hold = mgr.hold_admission();
            let mut hs = Vec::new();
            for (s, spec) in snaps.iter().zip(specs) {
                hs.push(mgr.submit(Arc::clone(s), spec).map_err(|e| e.to_string())?);
            }
            hs
        };
        mgr.wait_all();
        let stats = serde_json::to_string(&mgr.stats()).unwrap_or_default();
        let outs: Vec<_> = handles
            .iter()
            .map(|h| match h.wait(None) {
                JobState::Done => h.take_result().map_err(|e| e.to_string()),
                _ => Err(h
                    .status()
                    .error
                    .unwrap_or_else(|| "job did not finish".into())),
            })
            .collect();
        mgr.shutdown();
        Ok((outs, stats))
    });
    let (outs, stats) = outcome.map_err(PlexusError::new_err)?;
    let results = PyDict::new(py);
    for ((name, g, _), out) in planned.iter().zip(outs) {
        let out = out.map_err(|e| PlexusError::new_err(format!("job '{name}': {e}")))?;
        let summary = out.summary().to_string();
        let d = values_dict(py, g.get(), out.into_values(), summary)?;
        results.set_item(name, d)?;
    }
    Ok((results, stats))
}
