//! `plexus serve`: the HTTP job server over the data directory
//! (`plexus_server`; docs/server.md).
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use plexus_jobs::sched::Policy;
use plexus_server::{parse_size, read_token, SchedulerConfig, Server, ServerConfig};

use crate::graph_cmds::Ctx;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on. A non-loopback address needs --token-file.
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub bind: SocketAddr,
    /// File whose first line is the token clients send as `Authorization: Bearer TOKEN`.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// A directory imports by path may read from (repeatable; none: only uploads).
    #[arg(long)]
    pub import_root: Vec<PathBuf>,
    /// Most bytes of an uploaded graph file (K, M, G suffixes).
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    pub max_upload: u64,
    /// Most bytes of a JSON or transaction request body.
    #[arg(long, default_value = "1M", value_parser = parse_size)]
    pub max_body: u64,
    /// Unfinished jobs one client may have (429 beyond).
    #[arg(long, default_value_t = 256)]
    pub max_queued_per_client: usize,
    /// Unfinished jobs in all (429 beyond).
    #[arg(long, default_value_t = 4096)]
    pub max_queued: usize,
    /// Seconds running jobs may go on after SIGTERM before they are cancelled.
    #[arg(long, default_value_t = 60.0)]
    pub grace: f64,
    /// Memory the jobs' per-vertex state may use (K, M, G suffixes); a job
    /// that needs more is refused with 507. Default: the memory available.
    #[arg(long, value_parser = parse_size)]
    pub memory_limit: Option<u64>,
    /// Seconds a request may take to its response's headers (408 when its
    /// body had not arrived by then, else 503; uploads excepted).
    #[arg(long, default_value_t = 120.0)]
    pub request_timeout: f64,
    /// Seconds between two pieces of an upload or a request body (408 past it).
    #[arg(long, default_value_t = 30.0)]
    pub read_timeout: f64,
    /// Run the managed jobs of every client through this scheduler (fifo,
    /// all, congra, congra-fixed, ...; as `plexus batch --scheduler`):
    /// it decides when each job starts, with how many threads, and which
    /// share a scan. Default: one shared-scan job manager.
    #[arg(long)]
    pub scheduler: Option<Policy>,
    /// Seconds an idle job manager may wait to gather a burst of
    /// submissions into one wave of fused jobs before it starts them (as a
    /// batch starts its whole queue); it starts them sooner once no job has
    /// arrived for --gather-quiet. 0: start each job at once.
    #[arg(long, default_value_t = 0.5)]
    pub gather: f64,
    /// Seconds without a new submission that end a gather early.
    #[arg(long, default_value_t = 0.005)]
    pub gather_quiet: f64,
    /// Worker threads for algorithms the shared job manager does not run.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// The data directory to serve (default: --data-dir).
    #[arg(long)]
    pub data: Option<PathBuf>,
}

pub fn serve(ctx: &Ctx, threads: usize, a: ServeArgs) -> anyhow::Result<()> {
    let root = a
        .data
        .clone()
        .unwrap_or_else(|| ctx.data.root().to_path_buf());
    let mut cfg = ServerConfig::new(&root);
    cfg.bind = a.bind;
    cfg.token = a.token_file.as_deref().map(read_token).transpose()?;
    cfg.import_roots = a.import_root;
    cfg.max_upload_bytes = a.max_upload;
    cfg.max_body_bytes = usize::try_from(a.max_body).unwrap_or(usize::MAX);
    cfg.limits.per_client = a.max_queued_per_client.max(1);
    cfg.limits.total = a.max_queued.max(1);
    cfg.threads = threads;
    cfg.workers = a.workers.max(1);
    cfg.grace = seconds("--grace", a.grace, 0.0)?;
    cfg.request_timeout = seconds("--request-timeout", a.request_timeout, 1e-3)?;
    cfg.read_timeout = seconds("--read-timeout", a.read_timeout, 1e-3)?;
    cfg.memory_limit_bytes = a.memory_limit;
    let max = seconds("--gather", a.gather, 0.0)?;
    let quiet = seconds("--gather-quiet", a.gather_quiet, 0.0)?;
    cfg.gather = (!max.is_zero() && !quiet.is_zero()).then_some(plexus_jobs::Gather { quiet, max });
    cfg.scheduler = a.scheduler.map(|policy| SchedulerConfig {
        policy,
        machine: crate::profile::this_machine(ctx, threads),
    });
    keep_serving_after_panics();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    rt.block_on(async move {
        let server = Server::bind(cfg).await?;
        let addr = server.local_addr()?;
        eprintln!(
            "plexus serve: http://{addr}/ (data {}, PID {}); SIGTERM or Ctrl-C stops it",
            root.display(),
            std::process::id()
        );
        server.run(plexus_server::shutdown_signal()).await?;
        eprintln!("plexus serve: stopped");
        Ok(())
    })
}

/// A duration option in seconds, at least `least`.
fn seconds(option: &str, s: f64, least: f64) -> anyhow::Result<Duration> {
    if !(s >= least && s.is_finite() && s < 1e9) {
        anyhow::bail!("{option} must be a number of seconds >= {least}, got {s}");
    }
    Ok(Duration::from_secs_f64(s))
}

/// Replaces the CLI's panic hook (which ends the process) for the server's
/// life: a panic inside a job or a request fails that job or request
/// alone (the job manager, the workers and the HTTP runtime catch them),
/// so it is reported on one line and the server goes on. Panics inside the
/// manager's guarded kernels are reported in their job's status only.
fn keep_serving_after_panics() {
    std::panic::set_hook(Box::new(|info| {
        if plexus_jobs::scan::in_guarded_kernel() {
            return;
        }
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("plexus serve: a job or request failed: internal error: {msg}{at}");
    }));
}
