//! The graphs the server owns: the data directory under its writer lock,
//! each graph opened once as a live graph (so `tx` commits go through the
//! server), the version jobs pin, imports, removal, transactions and point
//! queries with `plexus tx` / `plexus query`'s semantics.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use plexus_graph::store::{dir_size, GRAPH_FILE};
use plexus_graph::{DataDir, ExternalId, Graph};
use plexus_jobs::{Snapshot as JobSnapshot, SnapshotId};
use plexus_store::query::{self, Direction};
use plexus_store::{LiveGraph, Op, Snapshot, StoreError, WriterLock};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::jobs::lock;
use crate::results::log2_histogram;

/// One served graph: its live versions and the newest one as a job
/// snapshot, built once per version.
struct Served {
    live: LiveGraph,
    pinned: Mutex<Option<Arc<JobSnapshot>>>,
}

/// The data directory and its graphs.
pub struct Graphs {
    data: DataDir,
    /// The writer lock, until [`Graphs::release`].
    lock: Mutex<Option<WriterLock>>,
    open: Mutex<HashMap<String, Arc<Served>>>,
    import_roots: Vec<PathBuf>,
    /// Every version handed to jobs, not pinned: a version stays mapped
    /// while a job, a kept result or the newest pin holds it.
    versions: Mutex<Vec<std::sync::Weak<JobSnapshot>>>,
}

fn store_err(e: StoreError) -> ApiError {
    match e {
        StoreError::Graph(g) => graph_err(g),
        other => ApiError::bad_request(other.to_string()),
    }
}

fn graph_err(e: plexus_graph::GraphError) -> ApiError {
    ApiError::bad_request(e.to_string())
}

/// Checks a graph name (no paths, no leading dot): 400 otherwise.
pub fn check_name(name: &str) -> Result<(), ApiError> {
    plexus_graph::store::check_name(name).map_err(graph_err)
}

fn json_id(x: &ExternalId) -> Value {
    match x {
        ExternalId::Int(i) => json!(i),
        ExternalId::Str(s) => json!(s),
    }
}

impl Graphs {
    /// Takes the writer lock of `data` (created if missing) and checks the
    /// import roots (canonical directories).
    pub fn open(data: DataDir, import_roots: &[PathBuf]) -> Result<Graphs, crate::ServeError> {
        std::fs::create_dir_all(data.root()).map_err(|e| crate::ServeError::Io {
            what: format!("creating {}", data.root().display()),
            source: e,
        })?;
        let lock = WriterLock::acquire_for_server(data.root())?;
        let mut roots = Vec::new();
        for r in import_roots {
            let c = std::fs::canonicalize(r).map_err(|e| crate::ServeError::ImportRoot {
                path: r.clone(),
                reason: e.to_string(),
            })?;
            if !c.is_dir() {
                return Err(crate::ServeError::ImportRoot {
                    path: r.clone(),
                    reason: "not a directory".into(),
                });
            }
            roots.push(c);
        }
        Ok(Graphs {
            data,
            lock: Mutex::new(Some(lock)),
            open: Mutex::new(HashMap::new()),
            import_roots: roots,
            versions: Mutex::new(Vec::new()),
        })
    }

    /// Closes every graph and releases the writer lock (at shutdown, once
    /// no job or request uses the store).
    pub fn release(&self) {
        lock(&self.open).clear();
        lock(&self.lock).take();
    }

    /// The data directory.
    pub fn data(&self) -> &DataDir {
        &self.data
    }

    fn served(&self, name: &str) -> Result<Arc<Served>, ApiError> {
        check_name(name)?;
        let mut open = lock(&self.open);
        if let Some(s) = open.get(name) {
            return Ok(Arc::clone(s));
        }
        if !self.data.exists(name) {
            return Err(ApiError::not_found(format!("no graph named '{name}'")));
        }
        let held = lock(&self.lock);
        let Some(writer) = held.as_ref() else {
            return Err(ApiError::unavailable("the server is shutting down"));
        };
        let (live, _) = LiveGraph::open_held(&self.data, name, writer).map_err(store_err)?;
        let s = Arc::new(Served {
            live,
            pinned: Mutex::new(None),
        });
        open.insert(name.to_string(), Arc::clone(&s));
        Ok(s)
    }

    /// The newest committed version of `name` as a job snapshot (built
    /// once per version: later jobs on the same version share it).
    pub fn pin(&self, name: &str) -> Result<Arc<JobSnapshot>, ApiError> {
        let s = self.served(name)?;
        let snap = s.live.snapshot();
        let version = snap.version();
        let mut pinned = lock(&s.pinned);
        if let Some(p) = pinned.as_ref().filter(|p| p.id().0 == version) {
            return Ok(Arc::clone(p));
        }
        let g = snap.graph().map_err(store_err)?;
        // Weight statistics (SSSP's checks) once per version, as `batch` does.
        let _ = g.weight_stats();
        let p = Arc::new(JobSnapshot::new(
            name,
            SnapshotId(version),
            Arc::unwrap_or_clone(g),
        ));
        *pinned = Some(Arc::clone(&p));
        let mut vs = lock(&self.versions);
        vs.retain(|w| w.strong_count() > 0);
        vs.push(Arc::downgrade(&p));
        Ok(p)
    }

    /// Graph versions still mapped (held by a job, a kept result or as
    /// the newest version of a graph served).
    pub fn versions_mapped(&self) -> usize {
        let mut vs = lock(&self.versions);
        vs.retain(|w| w.strong_count() > 0);
        vs.len()
    }

    /// `GET /api/graphs`: every stored graph with its counts, size and version.
    pub fn list(&self) -> Result<Value, ApiError> {
        let rows = self
            .data
            .list()
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let mut out = Vec::new();
        for r in rows {
            let mut v = serde_json::to_value(&r).unwrap_or(Value::Null);
            if !r.incomplete {
                if let Ok(s) = self.served(&r.name) {
                    let snap = s.live.snapshot();
                    v["version"] = json!(snap.version());
                    v["vertices"] = json!(snap.num_vertices());
                    v["arcs"] = json!(snap.num_arcs());
                }
            }
            out.push(v);
        }
        Ok(json!({ "graphs": out }))
    }

    /// `GET /api/graphs/{name}`: `plexus info --json`'s fields for the
    /// newest version, and the out-degree distribution (log2 bins).
    pub fn info(&self, name: &str) -> Result<Value, ApiError> {
        let p = self.pin(name)?;
        let s = self.served(name)?;
        let snap = s.live.snapshot();
        let g: &Graph = p.graph();
        let m = g.meta();
        let weights = if !m.weighted {
            "none"
        } else if m.integral_weights {
            "integer"
        } else {
            "float"
        };
        let d = g.degree_summary();
        let top: Vec<Value> = d
            .top
            .iter()
            .map(|&(v, deg)| json!({"id": g.ids().external_string(v), "degree": deg}))
            .collect();
        let degrees: Vec<u64> = (0..g.num_vertices() as u32)
            .map(|v| g.out_degree(v) as u64)
            .collect();
        let isolated = degrees.iter().filter(|&&x| x == 0).count();
        let dir = self.data.graph_dir(name);
        let format_version = plexus_graph::store::read_header(&dir.join(GRAPH_FILE))
            .map(|h| h.version)
            .ok();
        Ok(json!({
            "name": name, "vertices": g.num_vertices(), "edges": g.num_edges(), "arcs": g.num_arcs(),
            "directed": m.directed, "weights": weights, "self_loops": m.self_loops, "order": m.order,
            "ids": format!("{:?}", g.ids().kind()).to_lowercase(), "format_version": format_version,
            "bytes_on_disk": dir_size(&dir), "chunks": g.chunks().len(),
            "out_degree": {"min": d.min, "max": d.max, "mean": d.mean, "top": top,
                           "histogram": log2_histogram(&degrees), "zero": isolated},
            "version": snap.version(), "base_version": snap.base().base_version(),
            "changes_since_base": snap.ops_since_base(), "log_bytes": s.live.log_bytes(),
        }))
    }

    /// Removes graph `name` (the caller has checked that no job reads it).
    pub fn remove(&self, name: &str) -> Result<(), ApiError> {
        check_name(name)?;
        if !self.data.exists(name) && !self.data.is_incomplete(name) {
            return Err(ApiError::not_found(format!("no graph named '{name}'")));
        }
        lock(&self.open).remove(name);
        self.data
            .remove(name)
            .map_err(|e| ApiError::internal(e.to_string()))
    }

    /// Whether `name` exists.
    pub fn exists(&self, name: &str) -> bool {
        self.data.exists(name)
    }

    /// Forgets the open live graph of `name` (after a replacing import).
    pub fn reopen(&self, name: &str) {
        lock(&self.open).remove(name);
    }

    /// An import path: under one of the `--import-root`s once symlinks and
    /// `..` are resolved (relative paths are taken under the first root).
    pub fn import_path(&self, given: &str) -> Result<PathBuf, ApiError> {
        if self.import_roots.is_empty() {
            return Err(ApiError::new(
                axum::http::StatusCode::FORBIDDEN,
                "imports from server paths are off: start the server with --import-root DIR",
            ));
        }
        let p = Path::new(given);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.import_roots[0].join(p)
        };
        let c = std::fs::canonicalize(&joined).map_err(|e| {
            ApiError::bad_request(format!("cannot read import path '{given}': {e}"))
        })?;
        if !self.import_roots.iter().any(|r| c.starts_with(r)) || !c.is_file() {
            return Err(ApiError::new(
                axum::http::StatusCode::FORBIDDEN,
                format!("import path '{given}' is not a file under an --import-root"),
            ));
        }
        Ok(c)
    }

    /// `POST /api/graphs/{name}/tx`: one transaction in `plexus tx`'s line
    /// format, applied whole or not at all; the new version.
    pub fn tx(&self, name: &str, text: &str) -> Result<Value, ApiError> {
        let s = self.served(name)?;
        let mut tx = s.live.begin();
        let mut count = 0usize;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = i + 1;
            let op = Op::parse_line(line, tx.snapshot())
                .map_err(|e| ApiError::bad_request(format!("line {at}: {e}")))?;
            tx.apply(op)
                .map_err(|e| ApiError::bad_request(format!("line {at}: {e}")))?;
            count += 1;
        }
        let t = std::time::Instant::now();
        let version = s.live.commit(tx).map_err(|e| match e {
            StoreError::Conflict { .. } => ApiError::conflict(e.to_string()),
            other => ApiError::internal(other.to_string()),
        })?;
        let snap = s.live.snapshot();
        Ok(json!({
            "graph": name, "version": version, "ops": count,
            "commit_ms": t.elapsed().as_secs_f64() * 1e3,
            "vertices": snap.num_vertices(), "arcs": snap.num_arcs(),
            "ops_since_base": snap.ops_since_base(),
        }))
    }

    /// `GET /api/graphs/{name}/query/{what}`: `plexus query --json`'s
    /// objects (`neighbors`, `degree`, `has-edge`, `khop`, `path`).
    pub fn query(
        &self,
        name: &str,
        what: &str,
        q: &HashMap<String, String>,
    ) -> Result<Value, ApiError> {
        let s = self.served(name)?.live.snapshot();
        let arg = |k: &str| -> Result<&str, ApiError> {
            q.get(k).map(String::as_str).ok_or_else(|| {
                ApiError::bad_request(format!("{what} needs the query parameter '{k}'"))
            })
        };
        let vertex = |k: &str| -> Result<u32, ApiError> { s.resolve(arg(k)?).map_err(store_err) };
        let flag = |k: &str| {
            q.get(k)
                .is_some_and(|v| v == "true" || v == "1" || v.is_empty())
        };
        let qerr = |e: query::QueryError| ApiError::bad_request(e.to_string());
        let (dir, dname) = if flag("in") {
            (Direction::In, "in")
        } else {
            (Direction::Out, "out")
        };
        let version = s.version();
        Ok(match what {
            "neighbors" => {
                let v = vertex("vertex")?;
                let weights = flag("weights");
                if weights && !s.is_weighted() {
                    return Err(ApiError::bad_request(
                        "graph has no edge weights (weights needs a weighted graph)",
                    ));
                }
                let nb = query::neighbors(&s, v, dir).map_err(qerr)?;
                let mut rows: Vec<(ExternalId, f64)> = nb
                    .ids
                    .iter()
                    .enumerate()
                    .map(|(i, &y)| (s.external(y), nb.weights.map_or(1.0, |w| w[i])))
                    .collect();
                rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
                let mut o = json!({"vertex": json_id(&s.external(v)), "direction": dname,
                    "version": version, "neighbors": rows.iter().map(|r| json_id(&r.0)).collect::<Vec<_>>()});
                if weights {
                    o["weights"] = json!(rows.iter().map(|r| r.1).collect::<Vec<_>>());
                }
                o
            }
            "degree" => {
                let v = vertex("vertex")?;
                let d = query::degree(&s, v, dir).map_err(qerr)?;
                json!({"vertex": json_id(&s.external(v)), "direction": dname, "degree": d, "version": version})
            }
            "has-edge" => {
                let (x, y) = (vertex("u")?, vertex("v")?);
                let e = query::has_edge(&s, x, y).map_err(qerr)?;
                json!({"u": json_id(&s.external(x)), "v": json_id(&s.external(y)), "exists": e, "version": version})
            }
            "khop" => khop(&s, vertex("vertex")?, arg("hops")?, flag("count"))?,
            "path" => {
                let (x, y) = (vertex("u")?, vertex("v")?);
                let p = query::path(&s, x, y).map_err(qerr)?;
                let mut o = json!({"u": json_id(&s.external(x)), "v": json_id(&s.external(y)), "version": version});
                match p {
                    Some(p) => {
                        o["found"] = json!(true);
                        o["hops"] = json!(p.hops);
                        o["length"] = json!(p.length);
                        o["vertices"] = p
                            .vertices
                            .iter()
                            .map(|&z| json_id(&s.external(z)))
                            .collect();
                    }
                    None => o["found"] = json!(false),
                }
                o
            }
            other => {
                return Err(ApiError::not_found(format!(
                    "unknown query '{other}' (expected neighbors, degree, has-edge, khop, path)"
                )))
            }
        })
    }
}

fn khop(s: &Snapshot, v: u32, hops: &str, count: bool) -> Result<Value, ApiError> {
    let hops: u32 = hops.parse().map_err(|_| {
        ApiError::bad_request(format!("hops must be an integer >= 0, got '{hops}'"))
    })?;
    let qerr = |e: query::QueryError| ApiError::bad_request(e.to_string());
    let mut o = json!({"vertex": json_id(&s.external(v)), "hops": hops, "version": s.version()});
    if count {
        o["count"] = json!(query::khop_count(s, v, hops).map_err(qerr)?);
        return Ok(o);
    }
    let mut rows: Vec<(u32, ExternalId)> = query::khop(s, v, hops)
        .map_err(qerr)?
        .into_iter()
        .map(|(y, h)| (h, s.external(y)))
        .collect();
    rows.sort_unstable();
    o["count"] = json!(rows.len());
    o["vertices"] = rows
        .iter()
        .map(|(h, x)| json!({"id": json_id(x), "hops": h}))
        .collect();
    Ok(o)
}
