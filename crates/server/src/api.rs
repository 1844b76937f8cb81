//! The HTTP API: routes, the token check, body limits, and the handlers.
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody as _};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::stream::{self, Stream, StreamExt};
use plexus_graph::DataDir;
use plexus_jobs::{ExecMode, JobManager, JobState, ManagerConfig};
use serde_json::{json, Map, Value};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::graphs::Graphs;
use crate::jobs::{self, Jobs};
use crate::results::Format;
use crate::sched::Sched;
use crate::{submit, ServeError, ServerConfig};

/// What every handler shares.
pub struct AppState {
    pub graphs: Arc<Graphs>,
    pub jobs: Arc<Jobs>,
    token: Option<String>,
    pub max_upload: u64,
    pub max_body: usize,
    pub read_timeout: Duration,
    pub grace: Duration,
    /// Most time to a response's headers.
    pub request_timeout: Duration,
    /// The jobs' memory budget (`None`: `MemAvailable`).
    pub memory_limit: Option<u64>,
    pub started: std::time::Instant,
}

impl AppState {
    /// Opens the store and starts the job manager and workers.
    pub fn new(cfg: &ServerConfig) -> Result<AppState, ServeError> {
        let graphs = Graphs::open(DataDir::new(&cfg.data), &cfg.import_roots)?;
        let mgr = JobManager::new(ManagerConfig {
            mode: ExecMode::Shared,
            // With a scheduler the runner's units run the managed jobs.
            threads: if cfg.scheduler.is_some() {
                1
            } else {
                cfg.threads
            },
            memory_limit_bytes: cfg.memory_limit_bytes,
            gather: cfg.gather,
            ..Default::default()
        })?;
        let sched = match &cfg.scheduler {
            Some(sc) => {
                Some(
                    Sched::start(sc, cfg.memory_limit_bytes).map_err(|e| ServeError::Io {
                        what: "starting the scheduler".into(),
                        source: e,
                    })?,
                )
            }
            None => None,
        };
        let jobs = Jobs::new(mgr, sched, cfg.workers, cfg.limits).map_err(|e| ServeError::Io {
            what: "starting workers".into(),
            source: std::io::Error::other(e.message),
        })?;
        Ok(AppState {
            graphs: Arc::new(graphs),
            jobs,
            token: cfg.token.clone(),
            max_upload: cfg.max_upload_bytes,
            max_body: cfg.max_body_bytes,
            read_timeout: cfg.read_timeout,
            grace: cfg.grace,
            request_timeout: cfg.request_timeout,
            memory_limit: cfg.memory_limit_bytes,
            started: std::time::Instant::now(),
        })
    }
}

impl AppState {
    /// Bytes jobs' state may use now: the configured budget, else
    /// `MemAvailable` (`None` where unknown).
    pub fn available_bytes(&self) -> Option<u64> {
        self.memory_limit
            .or_else(plexus_jobs::memory::available_bytes)
    }
}

type St = State<Arc<AppState>>;

/// The API's routes over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    let api = Router::new()
        .route("/api/graphs", get(list_graphs).post(import_graph))
        .route("/api/graphs/{name}", get(graph_info).delete(delete_graph))
        .route("/api/graphs/{name}/tx", post(graph_tx))
        .route("/api/graphs/{name}/query/{what}", get(graph_query))
        .route("/api/jobs", get(list_jobs).post(submit_job))
        .route("/api/jobs/{id}", get(job_status).delete(delete_job))
        .route("/api/jobs/{id}/events", get(job_events))
        .route("/api/jobs/{id}/result", get(job_result))
        .route("/api/estimate", post(estimate))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&state), auth));
    Router::new()
        .route("/", get(page))
        .route("/openapi.json", get(openapi))
        .route("/api/health", get(health))
        .merge(api)
        .fallback(|| async { ApiError::not_found("no such route") })
        .layer(middleware::from_fn_with_state(Arc::clone(&state), deadline))
        // Bodies are read by the handlers with their own limits.
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

/// 401 unless the request carries the token (when one is set); compared
/// in constant time, never logged or echoed.
async fn auth(State(st): St, req: Request, next: Next) -> Response {
    if let Some(token) = &st.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        let ok: bool = given.as_bytes().ct_eq(token.as_bytes()).into();
        if !ok {
            return ApiError::new(
                StatusCode::UNAUTHORIZED,
                "missing or wrong token: send Authorization: Bearer TOKEN",
            )
            .into_response();
        }
    }
    next.run(req).await
}

/// Bounds the time to a response's headers (a streamed body, an event
/// stream or a download, goes on after them): past it, 408 when the
/// request's body had not all arrived (a slow client), else 503 (a slow
/// server).
async fn deadline(State(st): St, req: Request, next: Next) -> Response {
    // Uploads are bounded per piece (`read_timeout`), not in total.
    if req.method() == axum::http::Method::POST && req.uri().path() == "/api/graphs" {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let received = Arc::new(AtomicBool::new(body.size_hint().exact() == Some(0)));
    let flag = Arc::clone(&received);
    // The body as it arrives, then a marker that it ended.
    let end = stream::once(async move {
        flag.store(true, Ordering::Relaxed);
    })
    .filter_map(|_| async { None::<Result<Bytes, axum::Error>> });
    let body = Body::from_stream(body.into_data_stream().chain(end));
    let req = Request::from_parts(parts, body);
    match tokio::time::timeout(st.request_timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) if !received.load(Ordering::Relaxed) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request's body did not arrive within {} s (--request-timeout)",
                st.request_timeout.as_secs_f64()
            ),
        )
        .into_response(),
        Err(_) => ApiError::unavailable(format!(
            "the request took longer than {} s; retry later",
            st.request_timeout.as_secs_f64()
        ))
        .into_response(),
    }
}

/// Who a request comes from, for the per-client queue limit: the
/// `X-Plexus-Client` header when given, else the peer address.
fn client_of(headers: &HeaderMap, peer: &SocketAddr) -> String {
    headers
        .get("x-plexus-client")
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().chars().take(64).collect::<String>())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| peer.ip().to_string())
}

/// Reads a body of at most `max` bytes, each piece within `timeout`.
async fn read_body(body: Body, max: usize, timeout: Duration) -> Result<Vec<u8>, ApiError> {
    let mut s = body.into_data_stream();
    let mut out = Vec::new();
    loop {
        let piece = tokio::time::timeout(timeout, s.next())
            .await
            .map_err(|_| ApiError::new(StatusCode::REQUEST_TIMEOUT, "request body too slow"))?;
        match piece {
            None => return Ok(out),
            Some(Err(e)) => return Err(ApiError::bad_request(format!("reading the body: {e}"))),
            Some(Ok(b)) => {
                if out.len() + b.len() > max {
                    return Err(ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!("request body over the limit of {max} bytes"),
                    ));
                }
                out.extend_from_slice(&b);
            }
        }
    }
}

/// A JSON object body.
async fn json_body(st: &AppState, body: Body) -> Result<Map<String, Value>, ApiError> {
    let bytes = read_body(body, st.max_body, st.read_timeout).await?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::bad_request("the body must be a JSON object")),
        Err(e) => Err(ApiError::bad_request(format!(
            "the body is not valid JSON: {e}"
        ))),
    }
}

/// Runs blocking work (opening graphs, materialising versions, O(n) work)
/// off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("a request handler failed: {e}")))?
}

async fn page() -> Html<&'static str> {
    Html(include_str!("../assets/index.html"))
}

async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        include_str!("../assets/openapi.json"),
    )
        .into_response()
}

async fn health(State(st): St) -> Json<Value> {
    Json(json!({
        "status": if st.jobs.admitting() { "ok" } else { "stopping" },
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_seconds": st.started.elapsed().as_secs_f64(),
        "auth": st.token.is_some(),
    }))
}

async fn list_graphs(State(st): St) -> Result<Json<Value>, ApiError> {
    let g = Arc::clone(&st.graphs);
    blocking(move || g.list()).await.map(Json)
}

async fn graph_info(State(st): St, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    let g = Arc::clone(&st.graphs);
    blocking(move || g.info(&name)).await.map(Json)
}

async fn delete_graph(State(st): St, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    crate::graphs::check_name(&name)?;
    let readers = st.jobs.readers_of(&name);
    if readers > 0 {
        return Err(ApiError::conflict(format!(
            "graph '{name}' is read by {readers} unfinished job(s); cancel them or wait"
        )));
    }
    let g = Arc::clone(&st.graphs);
    let n = name.clone();
    blocking(move || g.remove(&n)).await?;
    Ok(Json(json!({ "removed": name })))
}

async fn graph_tx(
    State(st): St,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let bytes = read_body(body, st.max_body, st.read_timeout).await?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ApiError::bad_request("the transaction is not UTF-8 text"))?;
    let g = Arc::clone(&st.graphs);
    blocking(move || g.tx(&name, &text)).await.map(Json)
}

async fn graph_query(
    State(st): St,
    Path((name, what)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    let g = Arc::clone(&st.graphs);
    blocking(move || g.query(&name, &what, &q)).await.map(Json)
}

async fn import_graph(
    State(st): St,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: Body,
) -> Result<Response, ApiError> {
    let client = client_of(&headers, &peer);
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let record = if is_json {
        let m = json_body(&st, body).await?;
        submit::import_from_path(&st, m, client).await?
    } else {
        submit::import_upload(&st, q, body, client).await?
    };
    Ok(accepted(&record))
}

/// 202 with the job's status and its URL.
fn accepted(r: &jobs::JobRecord) -> Response {
    let mut resp = (StatusCode::ACCEPTED, Json(jobs::view_json(r, false))).into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("/api/jobs/{}", r.id)) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    resp
}

async fn submit_job(
    State(st): St,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let client = client_of(&headers, &peer);
    let m = json_body(&st, body).await?;
    let st2 = Arc::clone(&st);
    let r = blocking(move || submit::job(&st2, &m, client)).await?;
    Ok(accepted(&r))
}

async fn estimate(State(st): St, body: Body) -> Result<Json<Value>, ApiError> {
    let m = json_body(&st, body).await?;
    let st2 = Arc::clone(&st);
    blocking(move || submit::estimate(&st2, &m)).await.map(Json)
}

#[derive(serde::Deserialize)]
struct ListQuery {
    state: Option<String>,
    graph: Option<String>,
}

async fn list_jobs(State(st): St, Query(q): Query<ListQuery>) -> Json<Value> {
    let all: Vec<Arc<jobs::JobRecord>> = st
        .jobs
        .all()
        .into_iter()
        .filter(|r| {
            q.state
                .as_deref()
                .is_none_or(|s| jobs::state_name(r.state()) == s)
        })
        .filter(|r| q.graph.as_deref().is_none_or(|g| r.graph == g))
        .collect();
    Json(jobs::list_json(&all))
}

fn job_id(s: &str) -> Result<u64, ApiError> {
    s.parse()
        .map_err(|_| ApiError::bad_request(format!("'{s}' is not a job id")))
}

/// `?digest=true` on a job's status or events: add the result's digest.
#[derive(serde::Deserialize, Default)]
struct DigestQuery {
    digest: Option<String>,
}

impl DigestQuery {
    fn wanted(&self) -> Result<bool, ApiError> {
        match self.digest.as_deref() {
            None | Some("false") | Some("0") => Ok(false),
            Some("true") | Some("1") | Some("") => Ok(true),
            Some(x) => Err(ApiError::bad_request(format!(
                "digest must be true or false, not '{x}'"
            ))),
        }
    }
}

async fn job_status(
    State(st): St,
    Path(id): Path<String>,
    Query(q): Query<DigestQuery>,
) -> Result<Json<Value>, ApiError> {
    let r = st.jobs.get(job_id(&id)?)?;
    let done = r.state() == JobState::Done;
    if done && q.wanted()? {
        let r2 = Arc::clone(&r);
        return blocking(move || Ok(jobs::view_json(&r2, true)))
            .await
            .map(Json);
    }
    Ok(Json(jobs::view_json(&r, false)))
}

/// Cancels an unfinished job; forgets a finished one (and its result).
async fn delete_job(State(st): St, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let id = job_id(&id)?;
    let r = st.jobs.get(id)?;
    if r.state().is_terminal() {
        st.jobs.forget(id);
        return Ok(Json(json!({"id": id, "forgotten": true})));
    }
    r.cancel();
    let r2 = Arc::clone(&r);
    blocking(move || {
        r2.wait(Duration::from_secs(2));
        Ok(())
    })
    .await?;
    Ok(Json(jobs::view_json(&r, false)))
}

/// Server-Sent Events: `progress` whenever the status changes (polled
/// every 100 ms), then one `status` event with the final status (and the
/// result digest with `?digest=true`), then the stream ends. A client
/// that goes away only drops its stream.
async fn job_events(
    State(st): St,
    Path(id): Path<String>,
    Query(q): Query<DigestQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let r = st.jobs.get(job_id(&id)?)?;
    let with_digest = q.wanted()?;
    struct S {
        r: Arc<jobs::JobRecord>,
        last: String,
        done: bool,
    }
    let init = S {
        r,
        last: String::new(),
        done: false,
    };
    let s = stream::unfold(init, move |mut s| async move {
        if s.done {
            return None;
        }
        loop {
            let view = s.r.view();
            if view.state.is_terminal() {
                let r = Arc::clone(&s.r);
                let v = tokio::task::spawn_blocking(move || jobs::view_json(&r, with_digest))
                    .await
                    .unwrap_or(Value::Null);
                s.done = true;
                let ev = Event::default().event("status").data(v.to_string());
                return Some((Ok(ev), s));
            }
            let text = serde_json::to_string(&view).unwrap_or_default();
            // Elapsed time changes every poll: compare without it.
            let key = format!(
                "{:?}{}{}{}",
                view.state, view.superstep, view.active_vertices, view.state_bytes
            );
            if key != s.last {
                s.last = key;
                let ev = Event::default().event("progress").data(text);
                return Some((Ok(ev), s));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    Ok(Sse::new(s).keep_alive(KeepAlive::default()))
}

#[derive(serde::Deserialize)]
struct ResultQuery {
    format: Option<String>,
}

/// The result in `format` (default json), streamed in blocks as it is
/// written; a client that goes away stops the writer.
async fn job_result(
    State(st): St,
    Path(id): Path<String>,
    Query(q): Query<ResultQuery>,
) -> Result<Response, ApiError> {
    let r = st.jobs.get(job_id(&id)?)?;
    let name = q.format.as_deref().unwrap_or("json");
    let format = Format::parse(name).ok_or_else(|| {
        ApiError::bad_request(format!(
            "unknown format '{name}' (expected json, csv, parquet or arrow)"
        ))
    })?;
    let table = blocking(move || r.table()).await?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(8);
    tokio::task::spawn_blocking(move || {
        let mut w = ChannelWriter {
            tx,
            buf: Vec::with_capacity(CHUNK),
        };
        let r = table.write(format, &mut w).and_then(|_| w.flush_buf());
        if let Err(e) = r {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                let _ = w.tx.blocking_send(Err(e));
            }
        }
    });
    let body = Body::from_stream(stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (b, rx))
    }));
    let ext = match format {
        Format::Json => "json",
        Format::Csv => "csv",
        Format::Parquet => "parquet",
        Format::Arrow => "arrow",
    };
    let disposition = format!("attachment; filename=\"job-{id}.{ext}\"");
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(resp)
}

/// Bytes per piece of a streamed download.
const CHUNK: usize = 64 * 1024;

/// A `Write` that hands 64 KiB pieces to the response body; an error
/// (`BrokenPipe`) once the client has gone away.
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    fn flush_buf(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let piece = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .blocking_send(Ok(piece))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client went away"))
    }
}

impl std::io::Write for ChannelWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.flush_buf()?;
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Prometheus text: jobs by state, bytes of job state, shared-scan
/// counters, queue length.
async fn metrics(State(st): St) -> Response {
    let all = st.jobs.all();
    let counts = jobs::counts_by_state(&all);
    let mut stats = st.jobs.manager().stats();
    if let Some(s) = st.jobs.scheduler() {
        let r = s.stats();
        stats.passes += r.passes;
        stats.topology_bytes_read += r.topology_bytes_read;
        stats.peak_job_state_bytes = stats.peak_job_state_bytes.max(r.peak_unit_state_bytes);
    }
    let worker_bytes: u64 = all
        .iter()
        .filter(|r| r.route != "shared" && !r.state().is_terminal())
        .map(|r| r.view().state_bytes)
        .sum();
    let mut t = String::new();
    t.push_str(
        "# HELP plexus_jobs Jobs known to the server, by state.\n# TYPE plexus_jobs gauge\n",
    );
    for (s, n) in &counts {
        t.push_str(&format!("plexus_jobs{{state=\"{s}\"}} {n}\n"));
    }
    let mut gauge = |name: &str, help: &str, kind: &str, v: u64| {
        t.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}\n"
        ));
    };
    gauge(
        "plexus_queue_length",
        "Jobs submitted and not yet started.",
        "gauge",
        counts["queued"],
    );
    gauge(
        "plexus_job_state_bytes",
        "Bytes of per-vertex state held by running jobs.",
        "gauge",
        stats.job_state_bytes + worker_bytes,
    );
    gauge(
        "plexus_job_state_peak_bytes",
        "Peak bytes of job state in the shared manager.",
        "gauge",
        stats.peak_job_state_bytes,
    );
    gauge(
        "plexus_graph_versions_mapped",
        "Graph versions held by jobs, kept results or as the newest version.",
        "gauge",
        st.graphs.versions_mapped() as u64,
    );
    gauge(
        "plexus_scan_passes_total",
        "Shared-scan passes over the topology.",
        "counter",
        stats.passes,
    );
    gauge(
        "plexus_scan_task_chunks_total",
        "Chunk visits by tasks in shared passes (above chunks read: scans shared).",
        "counter",
        stats.task_chunks,
    );
    gauge(
        "plexus_topology_bytes_read_total",
        "Topology bytes read by shared scans.",
        "counter",
        stats.topology_bytes_read,
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], t).into_response()
}
