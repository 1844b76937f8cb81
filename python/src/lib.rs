//! `plexus._plexus`, the native half of the `plexus` Python package: a
//! graph handle (`NativeGraph`) over a Rust `Graph` (memory-mapped from the
//! store or built from arrays), and algorithm runs through the library's
//! request layer (`plexus_jobs::request`) whose per-vertex columns reach
//! Python as numpy arrays that own the Rust vectors (no copy).
//!
//! The Python layer (`plexus/__init__.py`) adds the per-algorithm
//! methods, result conversions and the NetworkX backend.
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;

mod batch;
mod graph;
mod run;

create_exception!(
    _plexus,
    PlexusError,
    PyException,
    "An error of the plexus engine or store (a corrupt or locked store, an I/O failure)."
);

/// Runs `f` in the package's worker pool: one thread per CPU the process
/// may use (`$PLEXUS_THREADS` to change), each pinned as the CLI pins its
/// pool. Kernels run inside it so their parallel loops start from a worker,
/// not from a foreign thread that would wait on every one. Where no pool
/// can be built, `f` runs on rayon's global pool.
pub(crate) fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let threads = std::env::var("PLEXUS_THREADS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        plexus_engine::affinity::PoolPinning::new(threads, None)
            .builder()
            .build()
            .ok()
    });
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// A graph-crate error as the Python exception users expect: a missing
/// graph or file is `FileNotFoundError`, bad input or arguments
/// `ValueError`, anything else `PlexusError`.
pub(crate) fn graph_err(e: plexus_graph::GraphError) -> PyErr {
    use plexus_graph::GraphError as G;
    let msg = e.to_string();
    match e {
        G::UnknownGraph { .. } => PyFileNotFoundError::new_err(msg),
        G::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(msg)
        }
        G::Parse { .. }
        | G::BadInput { .. }
        | G::InvalidArgument(_)
        | G::UnknownVertex(_)
        | G::GraphExists { .. }
        | G::TooManyVertices { .. } => PyValueError::new_err(msg),
        _ => PlexusError::new_err(msg),
    }
}

/// A store error as a Python exception (graph errors as [`graph_err`]).
pub(crate) fn store_err(e: plexus_store::StoreError) -> PyErr {
    match e {
        plexus_store::StoreError::Graph(g) => graph_err(g),
        other => PlexusError::new_err(other.to_string()),
    }
}

#[pymodule]
fn _plexus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<graph::NativeGraph>()?;
    m.add("PlexusError", m.py().get_type::<PlexusError>())?;
    m.add("UNREACHED", u32::MAX)?;
    m.add_function(wrap_pyfunction!(graph::algorithms_json, m)?)?;
    m.add_function(wrap_pyfunction!(graph::list_graphs, m)?)?;
    m.add_function(wrap_pyfunction!(batch::run_batch, m)?)?;
    Ok(())
}
