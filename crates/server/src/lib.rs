//! # plexus-server
//!
//! `plexus serve`: one process owns a data directory (its writer lock) and
//! runs every client's jobs through one [`plexus_jobs::JobManager`], so
//! jobs from different clients share scans and fused lanes; an HTTP/JSON
//! API (graphs, jobs with live progress over Server-Sent Events, results
//! as JSON, CSV, Parquet or Arrow, estimates, live-graph transactions and
//! point queries, Prometheus metrics, an OpenAPI document) and a web page
//! at `/`. docs/server.md describes the API.
//!
//! * [`api`]: the routes, the token check and the request limits.
//! * [`jobs`]: one job id space over managed and worker jobs.
//! * [`graphs`]: the served graphs (live, under the writer lock).
//! * [`params`]: JSON parameters as the library's `RunRequest`.
//! * [`results`]: result tables and their streamed formats.
//! * [`sched`]: `--scheduler`, managed jobs through one CongraPlus runner.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub mod api;
pub mod error;
pub mod graphs;
pub mod jobs;
pub mod params;
pub mod results;
pub mod sched;
mod submit;

pub use error::{ApiError, ServeError};
pub use jobs::QueueLimits;
pub use sched::SchedulerConfig;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Address to listen on (port 0: any free port).
    pub bind: SocketAddr,
    /// The data directory (its writer lock is held while serving).
    pub data: PathBuf,
    /// The token clients must send as `Authorization: Bearer TOKEN`;
    /// required to bind a non-loopback address. Never logged.
    pub token: Option<String>,
    /// Directories imports by path may read from (none: imports by path
    /// are refused, uploads still work).
    pub import_roots: Vec<PathBuf>,
    /// Most bytes of an uploaded graph.
    pub max_upload_bytes: u64,
    /// Most bytes of a JSON or transaction request body.
    pub max_body_bytes: usize,
    /// Queue limits (429 beyond).
    pub limits: QueueLimits,
    /// Threads of the shared job manager (0: every CPU of the process).
    pub threads: usize,
    /// Worker threads for the jobs the manager does not run.
    pub workers: usize,
    /// How long running jobs may go on after a shutdown is asked for
    /// before they are cancelled.
    pub grace: Duration,
    /// Most seconds between two pieces of an upload (slow-client
    /// protection) and of a JSON body.
    pub read_timeout: Duration,
    /// Most time from a request to its response's headers: 408 when its
    /// body had not all arrived by then, else 503; uploads are bounded by
    /// `read_timeout` per piece instead.
    pub request_timeout: Duration,
    /// Memory the jobs' per-vertex state may use, in bytes (a job that
    /// needs more is refused with 507); `None`: `MemAvailable`.
    pub memory_limit_bytes: Option<u64>,
    /// Run managed jobs through this scheduler (`--scheduler`) instead of
    /// one shared-scan manager.
    pub scheduler: Option<SchedulerConfig>,
    /// How the shared manager, idle, gathers a burst of submissions into
    /// one wave before admitting it (`None`: admit each at once).
    pub gather: Option<plexus_jobs::Gather>,
}

impl ServerConfig {
    /// Defaults: loopback port 7878, no token, no import roots, uploads up
    /// to 1 GiB, JSON bodies up to 1 MiB, 60 s of grace; an idle manager
    /// admits a burst once submissions pause for 5 ms (at most 500 ms).
    pub fn new(data: impl Into<PathBuf>) -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 7878)),
            data: data.into(),
            token: None,
            import_roots: Vec::new(),
            max_upload_bytes: 1 << 30,
            max_body_bytes: 1 << 20,
            limits: QueueLimits::default(),
            threads: 0,
            workers: 1,
            grace: Duration::from_secs(60),
            read_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(120),
            memory_limit_bytes: None,
            scheduler: None,
            gather: Some(plexus_jobs::Gather {
                quiet: Duration::from_millis(5),
                max: Duration::from_millis(500),
            }),
        }
    }
}

/// Reads a token file: its first line, trimmed; refused when empty.
pub fn read_token(path: &std::path::Path) -> Result<String, ServeError> {
    let text = std::fs::read_to_string(path).map_err(|e| ServeError::Token {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(ServeError::Token {
            path: path.to_path_buf(),
            reason: "the file is empty".into(),
        });
    }
    Ok(token)
}

/// Parses `123`, `64K`, `32M`, `1G` (binary multiples) as bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("'{s}' is not a size (a number of bytes, or with K, M or G)"))
}

/// A bound server, not yet serving.
pub struct Server {
    listener: tokio::net::TcpListener,
    state: Arc<api::AppState>,
}

impl Server {
    /// Checks the configuration, takes the data directory's writer lock,
    /// starts the job manager and binds the address. Must be called inside
    /// a tokio runtime.
    pub async fn bind(cfg: ServerConfig) -> Result<Server, ServeError> {
        if cfg.token.is_none() && !cfg.bind.ip().is_loopback() {
            return Err(ServeError::NeedsToken(cfg.bind));
        }
        let state = api::AppState::new(&cfg)?;
        let listener =
            tokio::net::TcpListener::bind(cfg.bind)
                .await
                .map_err(|e| ServeError::Io {
                    what: format!("cannot bind {}", cfg.bind),
                    source: e,
                })?;
        Ok(Server {
            listener,
            state: Arc::new(state),
        })
    }

    /// The address it listens on (with the port chosen for port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener.local_addr().map_err(|e| ServeError::Io {
            what: "local address".into(),
            source: e,
        })
    }

    /// Serves until `shutdown` completes; then stops admitting jobs, lets
    /// running ones finish within the grace period (clients can still
    /// watch them and fetch results), cancels the rest, and returns with
    /// the store intact (the writer lock is released on drop).
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let state = Arc::clone(&self.state);
        let app = api::router(Arc::clone(&self.state));
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let drain = {
            let state = Arc::clone(&state);
            async move {
                shutdown.await;
                let grace = state.grace;
                let s = Arc::clone(&state);
                let _ = tokio::task::spawn_blocking(move || s.jobs.shutdown(grace)).await;
                let _ = stop_tx.send(());
            }
        };
        tokio::spawn(drain);
        let serve = axum::serve(
            self.listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let _ = stop_rx.await;
        });
        serve.await.map_err(|e| ServeError::Io {
            what: "serving".into(),
            source: e,
        })?;
        state.graphs.release();
        Ok(())
    }
}

/// Completes on SIGTERM or Ctrl-C (SIGINT).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
