//! Resource-aware scheduling of concurrent jobs (CongraPlus, Pan and Li,
//! TPDS'18): profiles of each algorithm's time and memory bandwidth per
//! thread count, one pure decision core, and two drivers of it.
//!
//! * [`model`]: the machine ([`Machine`]) and a job's cost model ([`Cost`]:
//!   seconds at `t` threads, bytes touched, bandwidth demand).
//! * [`policy`]: [`decide`], the decision core shared by both drivers, and
//!   the policies `fifo`, `all`, `congra` (look-ahead on) and `congra-nola`.
//! * [`profile`]: `profile.json` beside a stored graph (versioned, checked
//!   against the graph file) and the profiler that writes it.
//! * [`counters`]: hardware event counts (`perf_event_open`) for profiles.
//! * [`numa`]: NUMA nodes from sysfs and thread pinning (`sched_setaffinity`).
//! * [`sim`]: the discrete-event simulator (fluid progress, bandwidth
//!   roofline, time-shared cores) that replays a job stream through a policy.
//! * [`runner`]: the real driver: each launched unit is a [`crate::JobManager`]
//!   with its own pool of `T` threads pinned to its node.
//!
//! The model, its equations and every constant are written out in
//! `docs/scheduler.md`.
pub mod counters;
pub mod model;
pub mod numa;
pub mod policy;
pub mod profile;
pub mod runner;
pub mod sim;

pub use model::{Cost, LaneCost, Machine};
pub use policy::{decide, Action, Decision, Policy, QueuedJob, RunningUnit, SchedState};
pub use profile::{GraphProfile, ProfileStatus};
pub use runner::{Runner, RunnerConfig};
pub use sim::{simulate, SimJob, SimReport};

/// The nearest-rank percentile `p` (0–100) of `xs`; `None` when empty.
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&xs, 50.0), Some(10.0));
        assert_eq!(percentile(&xs, 95.0), Some(19.0));
        assert_eq!(percentile(&[3.0], 95.0), Some(3.0));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
