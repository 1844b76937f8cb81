//! Submitting work: algorithm jobs (managed or on a worker), estimates,
//! and imports (from a path under an import root, or an uploaded body).
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use futures_util::StreamExt;
use plexus_engine::progress::{observe, Observer};
use plexus_graph::import::{CsvOptions, IdType, NoProgress};
use plexus_graph::{Graph, ImportOptions, Provenance};
use plexus_jobs::request::{self, RunRequest};
use plexus_jobs::sched::profile::{self, ProfileStatus};
use plexus_jobs::sched::Cost;
use plexus_jobs::{Algorithm, JobSpec};
use serde_json::{json, Map, Value};

use crate::api::AppState;
use crate::error::ApiError;
use crate::jobs::{Finish, JobRecord, NewJob};
use crate::params::{managed_job, request_of};
use crate::results::ResultTable;

/// A job request's fields.
struct JobBody {
    graph: String,
    algorithm: String,
    params: Map<String, Value>,
    deadline: Option<Duration>,
    shared: bool,
}

fn job_body(m: &Map<String, Value>) -> Result<JobBody, ApiError> {
    for k in m.keys() {
        if !["graph", "algorithm", "params", "deadline_seconds", "shared"].contains(&k.as_str()) {
            return Err(ApiError::bad_request(format!(
                "unknown field '{k}' (expected graph, algorithm, params, deadline_seconds, shared)"
            )));
        }
    }
    let field = |k: &str| -> Result<String, ApiError> {
        m.get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| ApiError::bad_request(format!("'{k}' must be given as a string")))
    };
    let params = match m.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(ApiError::bad_request("'params' must be a JSON object")),
    };
    let deadline = match m.get("deadline_seconds") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(d) if d > 0.0 && d.is_finite() && d < 1e9 => Some(Duration::from_secs_f64(d)),
            _ => {
                return Err(ApiError::bad_request(format!(
                    "deadline_seconds must be a positive number, got {v}"
                )))
            }
        },
    };
    let shared = match m.get("shared") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(ApiError::bad_request(format!(
                "shared must be true or false, got {v}"
            )))
        }
    };
    Ok(JobBody {
        graph: field("graph")?,
        algorithm: field("algorithm")?,
        params,
        deadline,
        shared,
    })
}

/// A request checked against the graph's current version.
struct Checked {
    snapshot: Arc<plexus_jobs::Snapshot>,
    resolved: request::Resolved,
    managed: Option<plexus_jobs::Algorithm>,
    body: JobBody,
}

fn check(st: &AppState, m: &Map<String, Value>) -> Result<Checked, ApiError> {
    let body = job_body(m)?;
    crate::graphs::check_name(&body.graph)?;
    let req: RunRequest = request_of(&body.algorithm, &body.graph, &body.params)?;
    let snapshot = st.graphs.pin(&body.graph)?;
    let g = snapshot.graph();
    let resolved = request::resolve(g, &req).map_err(|e| ApiError::bad_request(e.message("")))?;
    let managed = if body.shared {
        managed_job(g, &resolved)
    } else {
        None
    };
    Ok(Checked {
        snapshot,
        resolved,
        managed,
        body,
    })
}

/// Bytes a worker job's result columns take (8 bytes a vertex a column,
/// at most), the estimate of its state.
fn worker_bytes(g: &Graph, r: &request::Resolved) -> u64 {
    8 * g.num_vertices() as u64 * r.entry.columns.len().max(1) as u64
}

/// Handles `POST /api/jobs`.
pub fn job(
    st: &AppState,
    m: &Map<String, Value>,
    client: String,
) -> Result<Arc<JobRecord>, ApiError> {
    st.jobs.admit(&client)?;
    let c = check(st, m)?;
    let new = NewJob {
        algorithm: c.resolved.algorithm.to_string(),
        graph: c.body.graph.clone(),
        version: c.snapshot.id().0,
        client,
        params: Value::Object(c.body.params.clone()),
        deadline: c.body.deadline,
    };
    if let Some(alg) = c.managed {
        let g = c.snapshot.graph();
        let (cost, _) = cost_of(st, &c.body.graph, g, &alg);
        if st.jobs.scheduler().is_some() {
            // The runner's units check again at launch; a job that can
            // never fit is refused now, as the shared manager refuses it.
            let needed = plexus_jobs::spec::estimate_state_bytes(g, &alg)
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
            if let Some(available) = st.available_bytes().filter(|a| needed > *a) {
                return Err(ApiError::wont_fit(
                    format!("job '{}-{}' needs {needed} bytes of per-vertex state but only {available} bytes are available", c.resolved.algorithm, c.body.graph),
                    needed,
                    available,
                ));
            }
        }
        let spec = JobSpec::new(format!("{}-{}", c.resolved.algorithm, c.body.graph), alg);
        return st.jobs.submit_managed(new, c.snapshot, spec, cost);
    }
    let g = c.snapshot.graph();
    let needed = worker_bytes(g, &c.resolved);
    if let Some(available) = st.available_bytes() {
        if needed > available {
            return Err(ApiError::wont_fit(
                format!("the job needs about {needed} bytes of per-vertex state but only {available} bytes are available"),
                needed,
                available,
            ));
        }
    }
    let snapshot = c.snapshot;
    let resolved = c.resolved;
    let work = Box::new(
        move |watch: &Arc<crate::jobs::Watch>| -> Result<Finish, String> {
            let obs: Arc<dyn Observer> = watch.clone();
            let g = snapshot.graph();
            let o = observe(obs, || request::execute(g, &resolved, false))
                .map_err(|e| e.message(""))?;
            let mut summary = o.summary;
            summary.insert("iterations".into(), json!(o.iterations));
            summary.insert("compute_seconds".into(), json!(o.compute_seconds));
            Ok(Finish {
                table: Some(ResultTable::new(
                    Arc::clone(&snapshot),
                    o.columns,
                    resolved.graphalytics,
                )),
                summary: Value::Object(summary),
            })
        },
    );
    st.jobs.submit_work(new, "worker", needed, work)
}

/// A managed job's cost model: from the graph's `plexus profile` when it
/// is fresh, else the default cost model; and which it is.
fn cost_of(st: &AppState, name: &str, g: &Graph, alg: &Algorithm) -> (Cost, &'static str) {
    let dir = st.graphs.data().graph_dir(name);
    let fresh = profile::graph_version(&dir.join(plexus_graph::store::GRAPH_FILE))
        .ok()
        .and_then(
            |v| match profile::load(&dir.join(profile::PROFILE_FILE), &v) {
                ProfileStatus::Fresh(p) => p.cost_of(alg),
                _ => None,
            },
        );
    match fresh {
        Some(cost) => (cost, "profile"),
        None => (
            profile::default_cost(g, alg),
            "default cost model (no fresh `plexus profile`)",
        ),
    }
}

/// Handles `POST /api/estimate`: the bytes a job would hold and a time
/// estimate (from the graph's `plexus profile` when fresh, else the
/// default cost model), before running it.
pub fn estimate(st: &AppState, m: &Map<String, Value>) -> Result<Value, ApiError> {
    let c = check(st, m)?;
    let g = c.snapshot.graph();
    let available = st.available_bytes();
    let threads = match st.jobs.scheduler() {
        Some(s) => s.cores(),
        None => st.jobs.manager().threads(),
    }
    .max(1) as f64;
    let (bytes, seconds, source) = match &c.managed {
        Some(alg) => {
            let bytes = plexus_jobs::spec::estimate_state_bytes(g, alg)
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
            let (cost, source) = cost_of(st, &c.body.graph, g, alg);
            (bytes, Some(cost.seconds(threads)), source)
        }
        None => (
            worker_bytes(g, &c.resolved),
            None,
            "none: runs on a worker, not profiled",
        ),
    };
    Ok(json!({
        "graph": c.body.graph, "version": c.snapshot.id().0, "algorithm": c.resolved.algorithm,
        "route": if c.managed.is_some() { "shared" } else { "worker" },
        "vertices": g.num_vertices(), "edges": g.num_edges(),
        "state_bytes": bytes, "available_bytes": available,
        "fits": available.is_none_or(|a| bytes <= a),
        "seconds": seconds, "seconds_source": source, "threads": threads,
    }))
}

/// Import options from JSON fields or query parameters (as text).
fn import_options(get: &dyn Fn(&str) -> Option<String>) -> Result<(ImportOptions, bool), ApiError> {
    let bad = |k: &str, e: String| ApiError::bad_request(format!("{k}: {e}"));
    let flag = |k: &str| -> Result<bool, ApiError> {
        match get(k).as_deref() {
            None | Some("false") | Some("0") => Ok(false),
            Some("true") | Some("1") | Some("") => Ok(true),
            Some(v) => Err(ApiError::bad_request(format!(
                "{k} must be true or false, got '{v}'"
            ))),
        }
    };
    let mut o = ImportOptions::default();
    if let Some(f) = get("format") {
        o.format = Some(f.parse().map_err(|e| bad("format", e))?);
    }
    o.directed = match get("directed").as_deref() {
        None => None,
        Some("true") | Some("1") => Some(true),
        Some("false") | Some("0") => Some(false),
        Some(v) => {
            return Err(ApiError::bad_request(format!(
                "directed must be true or false, got '{v}'"
            )))
        }
    };
    o.weighted = flag("weighted")?;
    if let Some(v) = get("self_loops") {
        o.self_loops = v.parse().map_err(|e: String| bad("self_loops", e))?;
    }
    if let Some(v) = get("duplicates") {
        o.duplicates = v.parse().map_err(|e: String| bad("duplicates", e))?;
    }
    if let Some(v) = get("order") {
        o.order = v.parse().map_err(|e: String| bad("order", e))?;
    }
    let delimiter = match get("delimiter") {
        None => 0,
        Some(d) if d.len() == 1 && d != "\n" && d != "\"" => d.as_bytes()[0],
        Some(_) => {
            return Err(ApiError::bad_request(
                "delimiter must be one ASCII character other than a newline or a quote",
            ))
        }
    };
    o.csv = CsvOptions {
        src_col: get("src_col"),
        dst_col: get("dst_col"),
        weight_col: get("weight_col"),
        nodes: None,
        node_col: None,
        delimiter,
        ids: match get("ids").as_deref() {
            None | Some("auto") => IdType::Auto,
            Some("int") => IdType::Int,
            Some("string") => IdType::Str,
            Some(v) => {
                return Err(ApiError::bad_request(format!(
                    "ids must be auto, int or string, got '{v}'"
                )))
            }
        },
        no_header: flag("no_header")?,
    };
    Ok((o, flag("force")?))
}

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Checks the name of a graph to import (free unless `force`).
fn check_new_name(st: &AppState, name: &str, force: bool) -> Result<(), ApiError> {
    crate::graphs::check_name(name)?;
    if st.graphs.exists(name) {
        if !force {
            return Err(ApiError::conflict(format!(
                "a graph named '{name}' already exists (set force to replace it)"
            )));
        }
        let readers = st.jobs.readers_of(name);
        if readers > 0 {
            return Err(ApiError::conflict(format!(
                "graph '{name}' is read by {readers} unfinished job(s); cannot replace it now"
            )));
        }
    }
    Ok(())
}

/// An import to run.
struct Import {
    /// The graph's name.
    name: String,
    /// The file to read.
    path: PathBuf,
    /// Whether `path` is an upload, removed after the import.
    temporary: bool,
    opts: ImportOptions,
    /// Replace a graph of that name.
    force: bool,
}

/// Submits the import job: reads the file, builds and saves the graph.
fn submit_import(
    st: &AppState,
    imp: Import,
    client: String,
    params: Value,
) -> Result<Arc<JobRecord>, ApiError> {
    let Import {
        name,
        path,
        temporary,
        opts,
        force,
    } = imp;
    let graphs = Arc::clone(&st.graphs);
    let n = name.clone();
    let work = Box::new(
        move |_: &Arc<crate::jobs::Watch>| -> Result<Finish, String> {
            let t = std::time::Instant::now();
            let g = plexus_graph::import_file(&path, &opts, &NoProgress);
            if temporary {
                let _ = std::fs::remove_file(&path);
            }
            let g = g.map_err(|e| e.to_string())?;
            let prov = Provenance {
                source: if temporary {
                    "upload".into()
                } else {
                    path.display().to_string()
                },
                options: format!("{opts:?}"),
                build_seconds: t.elapsed().as_secs_f64(),
                created_unix: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            };
            graphs.reopen(&n);
            graphs
                .data()
                .save(&n, &g, &prov, force)
                .map_err(|e| e.to_string())?;
            graphs.reopen(&n);
            Ok(Finish {
                table: None,
                summary: json!({"name": n, "vertices": g.num_vertices(), "edges": g.num_edges(),
                "directed": g.is_directed(), "weighted": g.is_weighted(),
                "seconds": t.elapsed().as_secs_f64()}),
            })
        },
    );
    let new = NewJob {
        algorithm: "import".into(),
        graph: name,
        version: 0,
        client,
        params,
        deadline: None,
    };
    st.jobs.submit_work(new, "import", 0, work)
}

/// `POST /api/graphs` with a JSON body: `{"name", "path", options...}`.
pub async fn import_from_path(
    st: &Arc<AppState>,
    m: Map<String, Value>,
    client: String,
) -> Result<Arc<JobRecord>, ApiError> {
    st.jobs.admit(&client)?;
    let get = |k: &str| m.get(k).and_then(text_of);
    let name = get("name").ok_or_else(|| ApiError::bad_request("'name' must be given"))?;
    let given = get("path").ok_or_else(|| {
        ApiError::bad_request("'path' must be given (or upload the file as the body, not JSON)")
    })?;
    let (opts, force) = import_options(&get)?;
    check_new_name(st, &name, force)?;
    let path = st.graphs.import_path(&given)?;
    let imp = Import {
        name,
        path,
        temporary: false,
        opts,
        force,
    };
    submit_import(st, imp, client, Value::Object(m.clone()))
}

/// `POST /api/graphs?name=...&options` with the file as the body: streamed
/// to a temporary file in the data directory, at most `max_upload` bytes,
/// each piece within the read timeout.
pub async fn import_upload(
    st: &Arc<AppState>,
    q: HashMap<String, String>,
    body: Body,
    client: String,
) -> Result<Arc<JobRecord>, ApiError> {
    st.jobs.admit(&client)?;
    let get = |k: &str| q.get(k).cloned();
    let name = get("name")
        .ok_or_else(|| ApiError::bad_request("the query parameter 'name' must be given"))?;
    let (opts, force) = import_options(&get)?;
    check_new_name(st, &name, force)?;
    // The file name's extension tells the format (`filename=x.mtx.gz`).
    let ext: String = get("filename")
        .and_then(|f| f.rsplit('/').next().map(str::to_string))
        .map(|f| {
            f.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect()
        })
        .unwrap_or_default();
    let ext = ext
        .split_once('.')
        .map(|(_, e)| format!(".{e}"))
        .unwrap_or_default();
    let dir = st.graphs.data().root().join(".uploads");
    std::fs::create_dir_all(&dir)
        .map_err(|e| ApiError::internal(format!("cannot create the upload directory: {e}")))?;
    let id = UPLOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("upload-{}-{id}{ext}", std::process::id()));
    if let Err(e) = receive(st, body, &path).await {
        let _ = std::fs::remove_file(&path);
        return Err(e);
    }
    let params = json!(q);
    let imp = Import {
        name,
        path,
        temporary: true,
        opts,
        force,
    };
    submit_import(st, imp, client, params)
}

static UPLOADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

async fn receive(st: &AppState, body: Body, path: &std::path::Path) -> Result<(), ApiError> {
    let mut file = std::fs::File::create(path)
        .map_err(|e| ApiError::internal(format!("cannot create an upload file: {e}")))?;
    let mut s = body.into_data_stream();
    let mut total = 0u64;
    loop {
        let piece = tokio::time::timeout(st.read_timeout, s.next())
            .await
            .map_err(|_| {
                ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "upload too slow: no data within the read timeout",
                )
            })?;
        match piece {
            None => break,
            Some(Err(e)) => return Err(ApiError::bad_request(format!("reading the upload: {e}"))),
            Some(Ok(b)) => {
                total += b.len() as u64;
                if total > st.max_upload {
                    return Err(ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!(
                            "upload over the limit of {} bytes (--max-upload)",
                            st.max_upload
                        ),
                    ));
                }
                file.write_all(&b)
                    .map_err(|e| ApiError::internal(format!("writing the upload: {e}")))?;
            }
        }
    }
    if total == 0 {
        return Err(ApiError::bad_request("the upload is empty"));
    }
    Ok(())
}
