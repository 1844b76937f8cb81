//! Errors of the job manager. One line each, saying what failed and what to do.
use std::time::Duration;

/// Why a job could not be submitted, or what became of it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The job's per-vertex state can never fit in the memory there is.
    #[error("job '{job}' needs {needed} bytes of per-vertex state but only {available} bytes are available ({})", human_pair(*needed, *available))]
    WontFit {
        /// The job's name.
        job: String,
        /// Bytes of state the job would allocate.
        needed: u64,
        /// Bytes the manager may use.
        available: u64,
    },
    /// A parameter the algorithm cannot accept (bad damping, unknown root, ...).
    #[error("{0}")]
    InvalidJob(String),
    /// The job was cancelled before it finished.
    #[error("job was cancelled")]
    Cancelled,
    /// The job ran past its deadline and was stopped.
    #[error("deadline of {:.3} s exceeded", .0.as_secs_f64())]
    DeadlineExceeded(Duration),
    /// The job failed while running (a panic inside a kernel, ...).
    #[error("job failed: {0}")]
    Failed(String),
    /// The result was already fetched; results are handed out once.
    #[error("the result of job {0} was already taken")]
    AlreadyTaken(u64),
    /// The job has not finished yet.
    #[error("job {0} has not finished")]
    NotFinished(u64),
    /// The manager is shutting down and takes no more jobs.
    #[error("the job manager is shut down")]
    Shutdown,
    /// Starting the worker threads failed.
    #[error("cannot start worker threads: {0}")]
    Threads(String),
}

fn human_pair(needed: u64, available: u64) -> String {
    format!("{} needed, {} available", human(needed), human(available))
}

/// Bytes as `12.3 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_names_needed_and_available_bytes() {
        let e = JobError::WontFit {
            job: "pr".into(),
            needed: 3 << 30,
            available: 1 << 30,
        };
        let s = e.to_string();
        assert!(s.contains("3.0 GiB needed"), "{s}");
        assert!(s.contains("1.0 GiB available"), "{s}");
        assert_eq!(human(512), "512 B");
    }
}
