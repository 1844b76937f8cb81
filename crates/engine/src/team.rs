//! A team of the pool's threads kept busy across many small rounds.
//!
//! A rayon parallel loop wakes sleeping workers each time it starts; on
//! this KVM guest a wake-up costs tens of microseconds, as much as a whole
//! round of a high-diameter traversal (a road graph's BFS runs 1,445 levels
//! of a few hundred edges). GAPBS keeps its OpenMP threads spinning between
//! rounds instead. [`SpinBarrier`] gives the same to a loop run inside
//! `rayon::broadcast`: every thread runs the rounds and meets the others at
//! the barrier, spinning briefly, then yielding, so that a loaded machine
//! (more runnable threads than cores) still makes progress.
//!
//! A team holds every thread of its pool until it ends, and a thread that
//! spins at a barrier runs no other rayon work: two teams in one pool at
//! once could each hold one thread and wait for the other forever. So one
//! team runs at a time in the process ([`exclusive`]); a caller that
//! cannot have it runs its rounds the ordinary way.
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Spins before a waiting thread starts yielding its core. Short: when two
/// team threads share one CPU (the kernel stacked them, or the machine is
/// oversubscribed), every spin delays the thread that would release the
/// barrier; on a CPU of its own, `yield_now` returns at once and the wait
/// goes on polling. 64 against 4,096 on a 2-vCPU guest, workers pinned:
/// road BFS 25–27 against 27–33 ms, email-Enron 0.38–0.40 against
/// 0.39–0.46 ms.
const SPIN_LIMIT: u32 = 1 << 6;

static TEAM_RUNNING: AtomicBool = AtomicBool::new(false);

/// The right to run a team; released when dropped.
#[derive(Debug)]
pub struct TeamGuard(());

impl Drop for TeamGuard {
    fn drop(&mut self) {
        TEAM_RUNNING.store(false, Ordering::Release);
    }
}

/// The right to run a team now, unless another team is running.
pub fn exclusive() -> Option<TeamGuard> {
    TEAM_RUNNING
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .ok()
        .map(|_| TeamGuard(()))
}

/// A reusable barrier for a fixed number of threads that spins, then yields.
#[derive(Debug)]
pub struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    /// A barrier for `threads` threads (at least 1).
    pub fn new(threads: usize) -> Self {
        SpinBarrier {
            threads: threads.max(1),
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Waits until all threads have called `wait` for this round. Writes
    /// made by any thread before its `wait` are visible to every thread
    /// after it returns.
    pub fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            if spins < SPIN_LIMIT {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn no_thread_passes_a_round_before_all_arrive() {
        let threads = 4;
        let barrier = Arc::new(SpinBarrier::new(threads));
        let counter = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (b, c) = (Arc::clone(&barrier), Arc::clone(&counter));
                std::thread::spawn(move || {
                    for round in 0..200 {
                        c.fetch_add(1, Ordering::Relaxed);
                        b.wait();
                        // Everyone has added for this round.
                        assert!(c.load(Ordering::Relaxed) >= (round + 1) * threads);
                        b.wait();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::Relaxed), 200 * threads);
        // One thread alone never waits.
        SpinBarrier::new(1).wait();
    }

    #[test]
    fn one_team_at_a_time() {
        let first = exclusive();
        // Another test may hold it; then this one just sees it taken.
        if first.is_some() {
            assert!(exclusive().is_none());
        }
    }
}
