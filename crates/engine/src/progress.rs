//! Live progress of the running computation, for displays: executors record
//! each superstep (its number and the active vertices it processed) with
//! [`superstep`]; a display thread reads the counters.
//!
//! Two listeners: the process-wide [`GLOBAL`] counters (the CLI runs one job
//! at a time), and an [`Observer`] that a caller installs on its own thread
//! with [`observe`] around a kernel call (the job manager keeps one per job).
//! The observer can also ask a kernel to stop: kernels that support it check
//! [`cancel_requested`] at each superstep and return
//! [`crate::AlgoError::Cancelled`].
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

/// Listens to the supersteps of the kernels run by one thread (see [`observe`]).
pub trait Observer: Send + Sync {
    /// A superstep starts over `active` vertices.
    fn superstep(&self, active: u64);
    /// Whether the computation should stop (checked once per superstep).
    fn cancel_requested(&self) -> bool {
        false
    }
}

thread_local! {
    static OBSERVER: RefCell<Option<Arc<dyn Observer>>> = const { RefCell::new(None) };
}

/// Runs `f` with `observer` listening to the supersteps that kernels called
/// from this thread record (kernels record on the calling thread, outside
/// their parallel loops). The previous observer, if any, is restored after.
pub fn observe<R>(observer: Arc<dyn Observer>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<dyn Observer>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            OBSERVER.with(|o| *o.borrow_mut() = prev);
        }
    }
    let prev = OBSERVER.with(|o| o.borrow_mut().replace(observer));
    let _restore = Restore(prev);
    f()
}

/// The observer listening on this thread, if any: a kernel that records
/// its supersteps from another thread (a team's leader, see
/// [`crate::team`]) installs it there with [`observe`].
pub fn current() -> Option<Arc<dyn Observer>> {
    OBSERVER.with(|o| o.borrow().clone())
}

/// Runs `f` with `observer` (from [`current`]) listening on this thread, or
/// as it is when there is none.
pub fn observe_if<R>(observer: Option<&Arc<dyn Observer>>, f: impl FnOnce() -> R) -> R {
    match observer {
        Some(o) => observe(Arc::clone(o), f),
        None => f(),
    }
}

/// Records a superstep over `active` vertices: in [`GLOBAL`] and in this
/// thread's observer.
#[inline]
pub fn superstep(active: u64) {
    GLOBAL.record_superstep(active);
    OBSERVER.with(|o| {
        if let Some(obs) = o.borrow().as_ref() {
            obs.superstep(active);
        }
    });
}

/// Whether this thread's observer asks the running kernel to stop.
#[inline]
pub fn cancel_requested() -> bool {
    OBSERVER.with(|o| {
        o.borrow()
            .as_ref()
            .is_some_and(|obs| obs.cancel_requested())
    })
}

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

    #[derive(Default)]
    struct Counting {
        steps: AtomicU64,
        stop: std::sync::atomic::AtomicBool,
    }
    impl Observer for Counting {
        fn superstep(&self, _active: u64) {
            self.steps.fetch_add(1, Ordering::Relaxed);
        }
        fn cancel_requested(&self) -> bool {
            self.stop.load(Ordering::Relaxed)
        }
    }

    #[test]
    fn an_observer_sees_its_threads_supersteps_and_is_removed_after() {
        let obs = Arc::new(Counting::default());
        assert!(!cancel_requested());
        observe(obs.clone(), || {
            superstep(3);
            superstep(4);
            assert!(!cancel_requested());
            obs.stop.store(true, Ordering::Relaxed);
            assert!(cancel_requested());
            // Another thread has no observer.
            std::thread::spawn(|| {
                superstep(1);
                assert!(!cancel_requested());
            })
            .join()
            .unwrap();
        });
        superstep(5);
        assert_eq!(obs.steps.load(Ordering::Relaxed), 2);
        assert!(!cancel_requested());
    }
}
