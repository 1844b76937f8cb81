//! Live progress of the running computation, for displays: executors record
//! each superstep (its number and the active vertices it processed); a
//! display thread reads the counters. Process-wide, because the CLI runs one
//! job at a time; the job manager will keep one [`Progress`] per job.
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters updated by executors. Relaxed atomics: readers want a recent
/// value, not a consistent snapshot.
#[derive(Debug, Default)]
pub struct Progress {
    supersteps: AtomicU64,
    active: AtomicU64,
}

impl Progress {
    /// A zeroed set of counters.
    pub const fn new() -> Self {
        Progress {
            supersteps: AtomicU64::new(0),
            active: AtomicU64::new(0),
        }
    }
    /// Records a superstep over `active` vertices.
    #[inline]
    pub fn record_superstep(&self, active: u64) {
        self.supersteps.fetch_add(1, Ordering::Relaxed);
        self.active.store(active, Ordering::Relaxed);
    }
    /// Supersteps so far and the active vertices of the latest one.
    pub fn read(&self) -> (u64, u64) {
        (
            self.supersteps.load(Ordering::Relaxed),
            self.active.load(Ordering::Relaxed),
        )
    }
    /// Sets both counters to zero (at the start of a job).
    pub fn reset(&self) {
        self.supersteps.store(0, Ordering::Relaxed);
        self.active.store(0, Ordering::Relaxed);
    }
}

/// The process-wide counters the in-memory executor updates.
pub static GLOBAL: Progress = Progress::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supersteps_are_counted_and_reset() {
        let p = Progress::new();
        p.record_superstep(5);
        p.record_superstep(7);
        assert_eq!(p.read(), (2, 7));
        p.reset();
        assert_eq!(p.read(), (0, 0));
    }
}
