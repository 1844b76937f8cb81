//! One algorithm run from Python: keyword parameters checked by the
//! library's request layer, the computation on a thread of its own with
//! the GIL released, Ctrl-C and the progress callback served from the
//! calling thread between waits, the columns handed to numpy without a
//! copy.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use numpy::IntoPyArray;
use plexus_engine::progress::{observe, Observer};
use plexus_engine::registry::{self, ExecutorKind};
use plexus_engine::AlgoError;
use plexus_jobs::request::{self, Column, Outcome, RequestError, RunRequest};
use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::graph::NativeGraph;
use crate::PlexusError;

/// How often the calling thread looks at signals and reports progress.
const POLL: Duration = Duration::from_millis(50);
/// The least time between two progress callbacks.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// A request error as the exception a Python user expects: parameters
/// and ids `ValueError` (naming the parameter without `--`), cancellation
/// `KeyboardInterrupt`.
pub(crate) fn request_err(e: RequestError) -> PyErr {
    match e {
        RequestError::Algo(AlgoError::Cancelled) => {
            PyKeyboardInterrupt::new_err("the computation was cancelled")
        }
        other => PyValueError::new_err(other.message("")),
    }
}

/// A parameter's value of the wrong type.
fn type_err(name: &str, want: &str, v: &Bound<'_, PyAny>) -> PyErr {
    let got = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!("{name} must be {want}, got {got}"))
}

fn float(name: &str, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(type_err(name, "a number", v));
    }
    v.extract::<f64>()
        .map_err(|_| type_err(name, "a number", v))
}

fn int(name: &str, v: &Bound<'_, PyAny>, max: u64) -> PyResult<u64> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(type_err(name, "an integer", v));
    }
    let x: i128 = v.extract().map_err(|_| type_err(name, "an integer", v))?;
    if x < 0 || x > max as i128 {
        return Err(PyValueError::new_err(format!(
            "{name} must be an integer in 0..={max}, got {x}"
        )));
    }
    Ok(x as u64)
}

fn text(name: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    v.extract::<String>()
        .map_err(|_| type_err(name, "a str", v))
}

/// The request for `algorithm` with the keyword parameters `params`
/// (`None` values are "not given").
pub(crate) fn request_of(
    algorithm: &str,
    graph: &str,
    params: &Bound<'_, PyDict>,
) -> PyResult<RunRequest> {
    let mut r = RunRequest::new(algorithm, graph);
    r.per_vertex = true;
    for (k, v) in params.iter() {
        let key: String = k.extract()?;
        if v.is_none() {
            continue;
        }
        let k = key.as_str();
        match k {
            "source" => {
                r.source = Some(if let Ok(s) = v.extract::<String>() {
                    s
                } else if !v.is_instance_of::<pyo3::types::PyBool>() && v.extract::<i64>().is_ok() {
                    v.extract::<i64>()?.to_string()
                } else {
                    return Err(type_err(k, "a vertex id (int or str)", &v));
                })
            }
            "damping" => r.damping = Some(float(k, &v)?),
            "tolerance" => r.tolerance = Some(float(k, &v)?),
            "delta" => r.delta = Some(float(k, &v)?),
            "iterations" => r.iterations = Some(int(k, &v, u32::MAX as u64)? as usize),
            "samples" => r.samples = Some(int(k, &v, u32::MAX as u64)? as usize),
            "seed" => r.seed = Some(int(k, &v, u64::MAX)?),
            "hops" => r.hops = Some(int(k, &v, u32::MAX as u64)? as u32),
            "k" => r.k = Some(int(k, &v, u32::MAX as u64)? as u32),
            "method" => {
                r.method = Some(
                    text(k, &v)?
                        .parse()
                        .map_err(|e: String| PyValueError::new_err(format!("method: {e}")))?,
                )
            }
            "precision" => {
                r.precision = Some(
                    text(k, &v)?
                        .parse()
                        .map_err(|e: String| PyValueError::new_err(format!("precision: {e}")))?,
                )
            }
            "semantics" => r.semantics = Some(text(k, &v)?),
            other => {
                let takes = registry::find(algorithm)
                    .map(|(e, _)| e.params.join(", "))
                    .unwrap_or_default();
                return Err(PyValueError::new_err(if takes.is_empty() {
                    format!("{algorithm} takes no parameter '{other}'")
                } else {
                    format!("{algorithm} takes no parameter '{other}' (it takes {takes})")
                }));
            }
        }
    }
    Ok(r)
}

/// Supersteps and active vertices of the running kernel, and the stop flag.
#[derive(Default)]
struct Watch {
    steps: AtomicU64,
    active: AtomicU64,
    cancel: AtomicBool,
}

impl Observer for Watch {
    fn superstep(&self, active: u64) {
        self.steps.fetch_add(1, Ordering::Relaxed);
        self.active.store(active, Ordering::Relaxed);
    }
    fn cancel_requested(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Runs `algorithm` on `ng` and returns the result as a dict the Python
/// layer wraps: `columns` (name → numpy array), `kinds` (name → `depth`,
/// `vertex`, `int`, `float` or `bool`), `summary_json`, `iterations`,
/// `compute_seconds`, `verified` (`None`, `True` or the failure).
pub(crate) fn run(
    py: Python<'_>,
    ng: &NativeGraph,
    algorithm: &str,
    params: &Bound<'_, PyDict>,
    verify: bool,
    progress: Option<Py<PyAny>>,
    executor: Option<&str>,
) -> PyResult<Py<PyDict>> {
    let mut req = request_of(algorithm, ng.name.as_deref().unwrap_or("<memory>"), params)?;
    if let Some(x) = executor {
        req.executor = ExecutorKind::parse(x).ok_or_else(|| {
            PyValueError::new_err(format!("executor must be memory or scan, got '{x}'"))
        })?;
    }
    let g = ng.graph();
    let resolved = request::resolve(g, &req).map_err(request_err)?;
    let watch = Arc::new(Watch::default());
    let outcome = py.detach(|| compute(g, &resolved, verify, &watch, progress))?;
    outcome_dict(py, g, outcome)
}

/// The computation on its own thread; the calling thread polls for
/// signals (with the GIL, briefly) and reports progress.
fn compute(
    g: &plexus_graph::Graph,
    resolved: &request::Resolved,
    verify: bool,
    watch: &Arc<Watch>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Outcome> {
    let (tx, rx) = mpsc::channel::<()>();
    let started = Instant::now();
    let mut last_report = started;
    let mut pending: Option<PyErr> = None;
    let joined = std::thread::scope(|s| {
        let obs: Arc<dyn Observer> = watch.clone();
        let h = s.spawn(move || {
            let r = crate::in_pool(|| observe(obs, || request::execute(g, resolved, verify)));
            let _ = tx.send(());
            r
        });
        while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(POLL) {
            if pending.is_some() {
                continue;
            }
            let report = progress.is_some() && last_report.elapsed() >= REPORT_EVERY;
            let r = Python::attach(|py| -> PyResult<()> {
                py.check_signals()?;
                if let (true, Some(cb)) = (report, &progress) {
                    let steps = watch.steps.load(Ordering::Relaxed);
                    let active = watch.active.load(Ordering::Relaxed);
                    cb.call1(py, (steps, active, started.elapsed().as_secs_f64()))?;
                }
                Ok(())
            });
            if report {
                last_report = Instant::now();
            }
            if let Err(e) = r {
                watch.cancel.store(true, Ordering::Relaxed);
                pending = Some(e);
            }
        }
        h.join()
    });
    if let Some(e) = pending {
        return Err(e);
    }
    match joined {
        Ok(r) => r.map_err(request_err),
        Err(_) => Err(PlexusError::new_err(
            "internal error: the computation panicked (please report it)",
        )),
    }
}

fn outcome_dict(py: Python<'_>, g: &plexus_graph::Graph, o: Outcome) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    let cols = PyDict::new(py);
    let kinds = PyDict::new(py);
    for (name, c) in o.columns {
        let (kind, arr): (&str, Bound<'_, PyAny>) = match c {
            Column::Depth(v) => ("depth", v.into_pyarray(py).into_any()),
            Column::Vertex(v) => ("vertex", v.into_pyarray(py).into_any()),
            Column::Natural(v) => (
                "vertex",
                v.iter()
                    .map(|&x| g.from_natural(x))
                    .collect::<Vec<u32>>()
                    .into_pyarray(py)
                    .into_any(),
            ),
            Column::Int(v) => ("int", v.into_pyarray(py).into_any()),
            Column::Float(v) => ("float", v.into_pyarray(py).into_any()),
            Column::Bool(v) => ("bool", v.into_pyarray(py).into_any()),
        };
        cols.set_item(name, arr)?;
        kinds.set_item(name, kind)?;
    }
    d.set_item("columns", cols)?;
    d.set_item("kinds", kinds)?;
    d.set_item(
        "summary_json",
        serde_json::Value::Object(o.summary).to_string(),
    )?;
    d.set_item("iterations", o.iterations)?;
    d.set_item("compute_seconds", o.compute_seconds)?;
    match o.verified {
        None => d.set_item("verified", py.None())?,
        Some(Ok(())) => d.set_item("verified", true)?,
        Some(Err(e)) => d.set_item("verified", e)?,
    }
    Ok(d.unbind())
}
