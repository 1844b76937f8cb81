//! `NativeGraph`: one graph (an `Arc<Graph>`, memory-mapped or owned)
//! and the calls the Python layer makes on it.
use std::path::PathBuf;
use std::sync::Arc;

use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1};
use plexus_graph::import::arrays::{from_arrays, EdgeArrays, IdArray};
use plexus_graph::{BuildOptions, DataDir, ExternalId, Graph, IdKind, IdMap, ImportOptions};
use plexus_jobs::{Snapshot, SnapshotId};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::{graph_err, store_err};

/// The data directory: the one given, else `$PLEXUS_DATA`, else
/// `./plexus-data` (the CLI's rule).
pub(crate) fn resolve_data_dir(dir: Option<PathBuf>) -> DataDir {
    let root = dir
        .or_else(|| std::env::var_os("PLEXUS_DATA").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("plexus-data"));
    DataDir::new(root)
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A graph the Python layer holds.
#[pyclass(module = "plexus._plexus", frozen)]
pub struct NativeGraph {
    /// The graph as a job-manager snapshot (version 0), so runs and
    /// batches share it without a copy.
    pub(crate) snap: Arc<Snapshot>,
    pub(crate) name: Option<String>,
}

impl NativeGraph {
    fn new(g: Graph, name: Option<String>) -> Self {
        let label = name.clone().unwrap_or_else(|| "<memory>".into());
        NativeGraph {
            snap: Arc::new(Snapshot::new(label, SnapshotId(0), g)),
            name,
        }
    }

    /// The graph.
    pub(crate) fn graph(&self) -> &Graph {
        self.snap.graph()
    }
}

/// Endpoint ids from Python: an int64 numpy array read in place, or a
/// sequence of `str` (the Python layer converts everything else).
enum Ids<'py> {
    Int(PyReadonlyArray1<'py, i64>),
    Str(Vec<Bound<'py, PyString>>),
}

fn ids_of<'py>(what: &str, x: &Bound<'py, PyAny>) -> PyResult<Ids<'py>> {
    if let Ok(a) = x.cast::<PyArray1<i64>>() {
        return Ok(Ids::Int(a.readonly()));
    }
    if let Ok(list) = x.cast::<PyList>() {
        let mut out = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            match item.cast_into::<PyString>() {
                Ok(s) => out.push(s),
                Err(_) => {
                    return Err(PyTypeError::new_err(format!(
                        "{what}[{i}] is not a string (ids are all integers or all strings)"
                    )))
                }
            }
        }
        return Ok(Ids::Str(out));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be an int64 numpy array or a list of str"
    )))
}

/// Borrowed views of [`Ids`] for the graph crate.
enum Borrowed<'a> {
    Int(&'a [i64]),
    Str(Vec<&'a str>),
}

fn borrow<'a>(what: &str, ids: &'a Ids<'_>) -> PyResult<Borrowed<'a>> {
    Ok(match ids {
        Ids::Int(a) => Borrowed::Int(
            a.as_slice()
                .map_err(|_| PyValueError::new_err(format!("{what} is not contiguous")))?,
        ),
        Ids::Str(v) => Borrowed::Str(v.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?),
    })
}

fn id_array<'a>(b: &'a Borrowed<'a>) -> IdArray<'a> {
    match b {
        Borrowed::Int(s) => IdArray::Int(s),
        Borrowed::Str(v) => IdArray::Str(v),
    }
}

#[pymethods]
impl NativeGraph {
    /// Opens the stored graph `name` (its newest committed version).
    #[staticmethod]
    #[pyo3(signature = (name, data_dir=None))]
    fn open(py: Python<'_>, name: &str, data_dir: Option<PathBuf>) -> PyResult<Self> {
        let data = data_dir_checked(data_dir)?;
        let g = py
            .detach(|| crate::in_pool(|| plexus_store::open_latest(&data, name)))
            .map_err(store_err)?;
        Ok(NativeGraph::new(g, Some(name.to_string())))
    }

    /// Builds a graph from endpoint arrays (int64 numpy arrays or lists
    /// of str), optional float64 weights and optional extra vertices.
    #[staticmethod]
    #[pyo3(signature = (src, dst, weights=None, nodes=None, directed=true, self_loops="keep", duplicates="keep", order=None))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        weights: Option<PyReadonlyArray1<'_, f64>>,
        nodes: Option<&Bound<'_, PyAny>>,
        directed: bool,
        self_loops: &str,
        duplicates: &str,
        order: Option<&str>,
    ) -> PyResult<Self> {
        let named = |what: &str, e: String| PyValueError::new_err(format!("{what}: {e}"));
        let mut opts = BuildOptions {
            directed,
            self_loops: self_loops.parse().map_err(|e| named("self_loops", e))?,
            duplicates: duplicates.parse().map_err(|e| named("duplicates", e))?,
            ..Default::default()
        };
        if let Some(o) = order {
            opts.order = o.parse().map_err(|e| named("order", e))?;
        }
        let (s, d) = (ids_of("src", src)?, ids_of("dst", dst)?);
        let n = nodes.map(|x| ids_of("nodes", x)).transpose()?;
        let (bs, bd) = (borrow("src", &s)?, borrow("dst", &d)?);
        let bn = n.as_ref().map(|x| borrow("nodes", x)).transpose()?;
        let w = match &weights {
            Some(w) => Some(
                w.as_slice()
                    .map_err(|_| PyValueError::new_err("weights is not contiguous"))?,
            ),
            None => None,
        };
        let arrays = EdgeArrays {
            src: id_array(&bs),
            dst: id_array(&bd),
            weights: w,
            nodes: bn.as_ref().map(id_array),
        };
        // String slices point into Python str objects that `s`, `d` and
        // `n` keep alive; nothing touches them while the GIL is released.
        let g = py
            .detach(|| crate::in_pool(|| from_arrays(&arrays, &opts)))
            .map_err(graph_err)?;
        Ok(NativeGraph::new(g, None))
    }

    /// Imports a file as `plexus import` does. `options` holds the import
    /// options by name (`directed`, `weighted`, `format`, `self_loops`,
    /// `duplicates`, `src_col`, `dst_col`, `weight_col`, `ids`, ...).
    #[staticmethod]
    #[pyo3(signature = (path, options))]
    fn read(py: Python<'_>, path: PathBuf, options: &Bound<'_, PyDict>) -> PyResult<Self> {
        let opts = import_options(options)?;
        if path.as_os_str() != "-" && !path.exists() {
            return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
                "{}: no such file",
                path.display()
            )));
        }
        let g = py
            .detach(|| {
                crate::in_pool(|| {
                    plexus_graph::import_file(&path, &opts, &plexus_graph::NoProgress)
                })
            })
            .map_err(graph_err)?;
        Ok(NativeGraph::new(g, None))
    }

    /// Stores the graph as `name`; returns a handle to the stored graph.
    #[pyo3(signature = (name, data_dir=None, replace=false))]
    fn save(
        &self,
        py: Python<'_>,
        name: &str,
        data_dir: Option<PathBuf>,
        replace: bool,
    ) -> PyResult<NativeGraph> {
        plexus_graph::store::check_name(name).map_err(graph_err)?;
        let data = resolve_data_dir(data_dir);
        let prov = plexus_graph::Provenance {
            source: "python".into(),
            options: String::new(),
            build_seconds: 0.0,
            created_unix: now_unix(),
        };
        let g = self.snap.clone();
        py.detach(|| {
            std::fs::create_dir_all(data.root()).map_err(|e| plexus_graph::GraphError::Io {
                path: data.root().to_path_buf(),
                source: e,
            })?;
            data.save(name, g.graph(), &prov, replace)?;
            data.open(name)
        })
        .map(|g| NativeGraph::new(g, Some(name.to_string())))
        .map_err(graph_err)
    }

    #[getter]
    fn name(&self) -> Option<String> {
        self.name.clone()
    }

    #[getter]
    fn num_vertices(&self) -> usize {
        self.graph().num_vertices()
    }

    /// Edges: arcs of a directed graph, undirected edges counted once.
    #[getter]
    fn num_edges(&self) -> u64 {
        self.graph().num_edges()
    }

    #[getter]
    fn directed(&self) -> bool {
        self.graph().is_directed()
    }

    #[getter]
    fn weighted(&self) -> bool {
        self.graph().is_weighted()
    }

    /// `"int"` or `"str"`.
    #[getter]
    fn id_kind(&self) -> &'static str {
        match self.graph().ids().kind() {
            IdKind::Str => "str",
            _ => "int",
        }
    }

    /// The external ids by position (internal id): an int64 array, or a
    /// list of str.
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ids = self.graph().ids();
        let n = self.graph().num_vertices();
        Ok(match ids {
            IdMap::Identity { .. } => (0..n as i64)
                .collect::<Vec<i64>>()
                .into_pyarray(py)
                .into_any(),
            IdMap::Str { .. } => {
                let v: Vec<String> = (0..n as u32).map(|v| ids.external_string(v)).collect();
                PyList::new(py, v)?.into_any()
            }
            _ => (0..n as u32)
                .map(|v| match ids.external(v) {
                    ExternalId::Int(x) => x,
                    ExternalId::Str(_) => 0,
                })
                .collect::<Vec<i64>>()
                .into_pyarray(py)
                .into_any(),
        })
    }

    /// The position (internal id) of external id `id` (an int or a str),
    /// or `None`.
    fn position(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        let s = if let Ok(x) = id.extract::<i64>() {
            x.to_string()
        } else if let Ok(s) = id.extract::<String>() {
            s
        } else {
            return Ok(None);
        };
        Ok(self.graph().ids().lookup_str(&s))
    }

    /// Positions of many external ids at once (int64 array in, uint32
    /// array out, `UNREACHED` where an id is not a vertex).
    fn positions<'py>(
        &self,
        py: Python<'py>,
        ids: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let s = ids
            .as_slice()
            .map_err(|_| PyValueError::new_err("ids is not contiguous"))?;
        let map = self.graph().ids();
        let v: Vec<u32> = s
            .iter()
            .map(|&x| map.lookup_int(x).unwrap_or(u32::MAX))
            .collect();
        Ok(v.into_pyarray(py))
    }

    /// The out-arcs as position arrays `(src, dst, weights or None)`;
    /// for an undirected graph each edge once (`src <= dst`).
    #[allow(clippy::type_complexity)]
    fn edges<'py>(
        &self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u32>>,
        Option<Bound<'py, PyArray1<f64>>>,
    ) {
        let g = self.graph();
        let once = !g.is_directed();
        let (mut s, mut d) = (Vec::new(), Vec::new());
        let mut w = g.is_weighted().then(Vec::new);
        for u in 0..g.num_vertices() as u32 {
            let ws = g.out_weights(u);
            for (i, &v) in g.out_neighbors(u).iter().enumerate() {
                if once && v < u {
                    continue;
                }
                s.push(u);
                d.push(v);
                if let (Some(w), Some(ws)) = (w.as_mut(), ws) {
                    w.push(ws[i]);
                }
            }
        }
        (
            s.into_pyarray(py),
            d.into_pyarray(py),
            w.map(|w| w.into_pyarray(py)),
        )
    }

    /// Out-degrees by position.
    fn out_degrees<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let g = self.graph();
        (0..g.num_vertices() as u32)
            .map(|v| g.out_degree(v) as u64)
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// Betweenness from explicit sources (positions; `None`: every
    /// vertex), normalised or not as `algo::betweenness::Config` states.
    /// For callers that must reproduce another library's sampled sources
    /// (the NetworkX backend); `run("betweenness", ...)` draws its own.
    #[pyo3(signature = (sources=None, normalized=true))]
    fn betweenness_from<'py>(
        &self,
        py: Python<'py>,
        sources: Option<PyReadonlyArray1<'py, u32>>,
        normalized: bool,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        use plexus_engine::algo::betweenness;
        let n = self.graph().num_vertices() as u32;
        let sources = match &sources {
            Some(a) => {
                let s = a
                    .as_slice()
                    .map_err(|_| PyValueError::new_err("sources is not contiguous"))?
                    .to_vec();
                if let Some(bad) = s.iter().find(|&&v| v >= n) {
                    return Err(PyValueError::new_err(format!(
                        "source position {bad} is not below the vertex count {n}"
                    )));
                }
                Some(s)
            }
            None => None,
        };
        let cfg = betweenness::Config {
            sources,
            normalized,
            ..Default::default()
        };
        let g = self.graph();
        let o = py
            .detach(|| crate::in_pool(|| betweenness::run(g, &cfg)))
            .map_err(|e| crate::run::request_err(e.into()))?;
        Ok(o.centrality.into_pyarray(py))
    }

    /// Runs `algorithm` with `params` (registry names); see `run.rs`.
    #[pyo3(signature = (algorithm, params, verify=false, progress=None, executor=None))]
    fn run(
        &self,
        py: Python<'_>,
        algorithm: &str,
        params: &Bound<'_, PyDict>,
        verify: bool,
        progress: Option<Py<PyAny>>,
        executor: Option<&str>,
    ) -> PyResult<Py<PyDict>> {
        crate::run::run(py, self, algorithm, params, verify, progress, executor)
    }
}

/// The data directory for opening: it must exist.
fn data_dir_checked(dir: Option<PathBuf>) -> PyResult<DataDir> {
    let d = resolve_data_dir(dir);
    if !d.root().is_dir() {
        return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
            "no data directory at {} (plexus.open(name, data_dir=...) or $PLEXUS_DATA names it)",
            d.root().display()
        )));
    }
    Ok(d)
}

/// Import options from keyword arguments, by the CLI's option names.
fn import_options(o: &Bound<'_, PyDict>) -> PyResult<ImportOptions> {
    let mut opts = ImportOptions::default();
    for (k, v) in o.iter() {
        let key: String = k.extract()?;
        let text = || -> PyResult<String> {
            v.extract::<String>()
                .map_err(|_| PyTypeError::new_err(format!("{key} must be a str")))
        };
        let parse_err = |e: String| PyValueError::new_err(format!("{key}: {e}"));
        match key.as_str() {
            "directed" => opts.directed = Some(v.extract()?),
            "weighted" => opts.weighted = v.extract()?,
            "format" => opts.format = Some(text()?.parse().map_err(parse_err)?),
            "self_loops" => opts.self_loops = text()?.parse().map_err(parse_err)?,
            "duplicates" => opts.duplicates = text()?.parse().map_err(parse_err)?,
            "order" => opts.order = text()?.parse().map_err(parse_err)?,
            "src_col" => opts.csv.src_col = Some(text()?),
            "dst_col" => opts.csv.dst_col = Some(text()?),
            "weight_col" => opts.csv.weight_col = Some(text()?),
            "node_col" => opts.csv.node_col = Some(text()?),
            "nodes" => opts.csv.nodes = Some(v.extract::<PathBuf>()?),
            "no_header" => opts.csv.no_header = v.extract()?,
            "delimiter" => {
                let t = text()?;
                match t.as_bytes() {
                    [b] => opts.csv.delimiter = *b,
                    _ => return Err(PyValueError::new_err("delimiter must be one character")),
                }
            }
            "ids" => {
                opts.csv.ids = match text()?.as_str() {
                    "auto" => plexus_graph::import::IdType::Auto,
                    "int" => plexus_graph::import::IdType::Int,
                    "str" => plexus_graph::import::IdType::Str,
                    other => {
                        return Err(PyValueError::new_err(format!(
                            "ids must be auto, int or str, got '{other}'"
                        )))
                    }
                }
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "read() takes no option '{other}' (it takes directed, weighted, format, \
                     self_loops, duplicates, order, src_col, dst_col, weight_col, nodes, \
                     node_col, no_header, delimiter, ids)"
                )))
            }
        }
    }
    Ok(opts)
}

/// The registry as JSON (what `plexus algorithms --json` prints).
#[pyfunction]
pub fn algorithms_json() -> String {
    let v: Vec<serde_json::Value> = plexus_engine::registry::ALGORITHMS
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name,
                "about": e.about,
                "params": e.params,
                "columns": e.columns,
                "needs_weights": e.needs_weights,
                "executors": e.executors.iter().map(|x| x.name()).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(v).to_string()
}

/// The stored graphs' names.
#[pyfunction]
#[pyo3(signature = (data_dir=None))]
pub fn list_graphs(data_dir: Option<PathBuf>) -> PyResult<Vec<String>> {
    let d = data_dir_checked(data_dir)?;
    Ok(d.list()
        .map_err(graph_err)?
        .into_iter()
        .map(|e| e.name)
        .collect())
}
