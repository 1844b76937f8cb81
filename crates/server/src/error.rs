//! Errors: [`ApiError`], what a request gets back (a status and one line,
//! sent as `{"error": "..."}`), and [`ServeError`], why the server could
//! not start.
use std::path::PathBuf;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// A refused or failed request: an HTTP status and a one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The status sent (4xx for the client's mistakes, 5xx for ours).
    pub status: StatusCode,
    /// One line saying what is wrong (never holds the token).
    pub message: String,
    /// Numbers sent beside the message (507: `needed_bytes`,
    /// `available_bytes`).
    pub figures: Vec<(&'static str, u64)>,
}

impl ApiError {
    /// An error with `status` and `message` (newlines are folded into
    /// spaces so it stays one line).
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        let message: String = message.into();
        let message = message.replace(['\n', '\r'], " ");
        ApiError {
            status,
            message,
            figures: Vec::new(),
        }
    }

    /// 507: a job's state cannot fit in the memory the jobs may use; the
    /// body also carries `needed_bytes` and `available_bytes`.
    pub fn wont_fit(message: impl Into<String>, needed: u64, available: u64) -> Self {
        let mut e = Self::new(StatusCode::INSUFFICIENT_STORAGE, message);
        e.figures = vec![("needed_bytes", needed), ("available_bytes", available)];
        e
    }

    /// 400: a malformed request or a bad parameter.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such graph, job or route.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 409: the request conflicts with the state of a graph or job.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// 429: a queue limit was reached.
    pub fn too_many(message: impl Into<String>) -> Self {
        Self::new(StatusCode::TOO_MANY_REQUESTS, message)
    }

    /// 500: the server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// 503: the server is shutting down.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut m = serde_json::Map::new();
        m.insert("error".into(), self.message.into());
        for (k, v) in self.figures {
            m.insert(k.into(), v.into());
        }
        let body = Json(serde_json::Value::Object(m));
        (self.status, body).into_response()
    }
}

/// Why `plexus serve` could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error("binding {0} (not a loopback address) needs a token: pass --token-file FILE")]
    NeedsToken(std::net::SocketAddr),
    /// The token file is unreadable or empty.
    #[error("token file {}: {reason}", path.display())]
    Token { path: PathBuf, reason: String },
    /// An `--import-root` that is not a readable directory.
    #[error("--import-root {}: {reason}", path.display())]
    ImportRoot { path: PathBuf, reason: String },
    /// The data directory's writer lock or a store error.
    #[error(transparent)]
    Store(#[from] plexus_store::StoreError),
    /// The job manager could not start.
    #[error(transparent)]
    Jobs(#[from] plexus_jobs::JobError),
    /// Binding or serving failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}
