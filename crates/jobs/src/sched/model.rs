//! The machine and the cost of a job as the scheduler models them.
//!
//! A job's time at `t` threads is its profiled time where measured (`t =
//! 1..=p`, interpolated linearly in `1/t` between thread counts), `T(1)/t`
//! below one thread (a time-shared fraction of a core), and past `p` the
//! Amdahl curve `a + b/t` fitted to the measured times (least squares in
//! `1/t`; `a` clamped at 0 for superlinear profiles; with one point,
//! [`DEFAULT_SERIAL_FRACTION`] of it serial; with two, at least
//! [`UNIDENTIFIED_SERIAL_FRACTION`] of it serial) scaled to pass through `T(p)`.
//! Its memory traffic is `bytes = topology_bytes + state_bytes` per run, so
//! its bandwidth demand at `t` threads is `bytes / T(t)`. See docs/scheduler.md.
use serde::{Deserialize, Serialize};

/// Memory bandwidth per node assumed when `plexus probe` was never run, GB/s.
pub const DEFAULT_BANDWIDTH_GBS: f64 = 10.0;
/// Remote-access factor of the simulator: a byte read from another node's
/// memory costs this many bytes of a node's bandwidth (a 2-socket Xeon reads
/// remote memory at about 0.6–0.7 of the local rate, so 1.5).
pub const DEFAULT_REMOTE_FACTOR: f64 = 1.5;
/// Oversubscription penalty `π` of the simulator: with `Σ threads / cores =
/// x > 1` on a node, every unit there runs `1 + π·(x − 1)` times slower on
/// top of time sharing (context switches, cache and TLB refills). Calibrated
/// on this machine: `all` (x up to 16) measured at or above `fifo`, which
/// time sharing alone predicts equal, so no penalty is supported and `π = 0`
/// (docs/scheduler.md, "Calibration"); a machine file may set another value.
pub const DEFAULT_OVERSUBSCRIPTION_PENALTY: f64 = 0.0;
/// Seconds a re-allocated unit stalls while its new pool starts (the
/// simulator's cost of a resize on top of the wait for the unit's next
/// superstep boundary): the measured start of a pinned rayon pool, with
/// room for cold caches on the moved threads.
pub const DEFAULT_RESIZE_SECONDS: f64 = 0.001;
/// Serial fraction assumed when a profile has a single thread count.
pub const DEFAULT_SERIAL_FRACTION: f64 = 0.1;
/// Fewest measured thread counts from which the serial fraction `a / (a + b)`
/// of the Amdahl curve is taken as fitted; with fewer it is at least
/// [`UNIDENTIFIED_SERIAL_FRACTION`].
pub const MIN_POINTS_FOR_SERIAL_FIT: usize = 3;
/// Least serial fraction assumed past the measured thread counts when a
/// profile has fewer than [`MIN_POINTS_FOR_SERIAL_FIT`] of them. Two points
/// are fitted exactly, so the fraction is `2/s₂ − 1` for a 1→2 speedup `s₂`:
/// ±20% on `T(1)` moves it from below 0 (clamped: perfect scaling to any
/// core count, with the 1→2 superlinearity kept as a constant bonus) to 0.3.
/// The floor is the fraction already assumed for a one-point profile
/// ([`DEFAULT_SERIAL_FRACTION`]); see docs/scheduler.md, "The cost model".
pub const UNIDENTIFIED_SERIAL_FRACTION: f64 = DEFAULT_SERIAL_FRACTION;
/// Measured thread counts a [`Cost`] keeps (more are used for the fit only).
pub const MAX_MEASURED_THREADS: usize = 8;

/// A machine: NUMA nodes of equal size, each with its own memory bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// NUMA nodes (sockets), ≥ 1.
    pub nodes: usize,
    /// Cores per node, ≥ 1.
    pub cores_per_node: usize,
    /// Sustainable memory bandwidth of one node (STREAM triad), GB/s (10⁹ B/s).
    pub bandwidth_gbs_per_node: f64,
    /// Simulator only: see [`DEFAULT_REMOTE_FACTOR`].
    pub remote_factor: f64,
    /// Simulator only: see [`DEFAULT_OVERSUBSCRIPTION_PENALTY`].
    pub oversubscription_penalty: f64,
    /// Seconds a resized unit stalls ([`DEFAULT_RESIZE_SECONDS`]); the
    /// decision core re-allocates only units whose remaining run is long
    /// against it (see `policy`).
    pub resize_seconds: f64,
    /// CPU ids of each node (`cpus.len() == nodes` on a real machine; empty
    /// in a model, where nothing is pinned).
    pub cpus: Vec<Vec<usize>>,
}

impl Machine {
    /// A modelled machine with the default simulator constants and no CPU ids.
    pub fn model(nodes: usize, cores_per_node: usize, bandwidth_gbs_per_node: f64) -> Self {
        Machine {
            nodes: nodes.max(1),
            cores_per_node: cores_per_node.max(1),
            bandwidth_gbs_per_node,
            remote_factor: DEFAULT_REMOTE_FACTOR,
            oversubscription_penalty: DEFAULT_OVERSUBSCRIPTION_PENALTY,
            resize_seconds: DEFAULT_RESIZE_SECONDS,
            cpus: Vec::new(),
        }
    }

    /// All cores of the machine.
    pub fn cores(&self) -> usize {
        self.nodes * self.cores_per_node
    }

    /// The bandwidth limit of one node in bytes per second.
    pub fn node_bandwidth_bytes(&self) -> f64 {
        self.bandwidth_gbs_per_node * 1e9
    }
}

/// What running one job (or one fused unit of jobs) costs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Seconds that do not shrink with threads (`a` of `a + b/t`), ≥ 0.
    pub serial_seconds: f64,
    /// Seconds that divide among threads (`b`), ≥ 0.
    pub parallel_seconds: f64,
    /// Bytes of topology read per run.
    pub topology_bytes: f64,
    /// Bytes of per-vertex state read or written per run.
    pub state_bytes: f64,
    /// Profiled seconds at `i + 1` threads for `i < measured_threads`.
    pub measured: [f64; MAX_MEASURED_THREADS],
    /// How many of `measured` hold times (0: the Amdahl curve alone).
    pub measured_threads: usize,
    /// Supersteps per run (0: unknown); a unit's threads change only at a
    /// superstep boundary, on average half a superstep after it is asked.
    pub supersteps: f64,
    /// Co-run slowdown `σ ≥ 0`: with every other core of its node running
    /// other units, the job takes `1 + σ` times longer (shared cache and
    /// memory controller); with a fraction `f` of them busy, `1 + σ·f`
    /// ([`Cost::corun_factor`]). Measured by `plexus profile` (copies at one
    /// thread each on every core); 0 when not measured.
    #[serde(default)]
    pub corun_slowdown: f64,
    /// What fusing jobs of this one's algorithm into one shared scan costs
    /// (measured by `plexus profile`); `None`: not measured, and
    /// [`Cost::fused`] scales time with bytes.
    #[serde(default)]
    pub lanes: Option<LaneCost>,
}

/// The time of `k ≥ 2` jobs fused into one shared scan, relative to one
/// job's time alone `T`: `T·(base + per_lane·(k − 1))` for jobs of equal
/// size. Fitted by `plexus profile` from 2 and 4 jobs fused:
/// `per_lane = (T₄ − T₂) / 2T` and `base = T₂/T − per_lane`. `base` is
/// more than 1 when the fused kernel is slower than the job's own
/// (MS-BFS lanes against direction-optimising BFS), so fusing pays only
/// from some `k` on ([`Cost::fusing_pays`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaneCost {
    /// The fused scan's fixed part, as a fraction of `T` (≥ 0).
    pub base: f64,
    /// What each further job adds, as a fraction of its own `T` (≥ 0).
    pub per_lane: f64,
}

impl Cost {
    /// A cost given by the Amdahl curve alone (no measured times).
    pub fn amdahl(
        serial_seconds: f64,
        parallel_seconds: f64,
        topology_bytes: f64,
        state_bytes: f64,
    ) -> Cost {
        Cost {
            serial_seconds,
            parallel_seconds,
            topology_bytes,
            state_bytes,
            measured: [0.0; MAX_MEASURED_THREADS],
            measured_threads: 0,
            supersteps: 0.0,
            corun_slowdown: 0.0,
            lanes: None,
        }
    }

    /// The co-run factor `1 + σ·f` with `f` (clamped to `[0, 1]`) the
    /// fraction of the other cores of the unit's node busy with other units.
    pub fn corun_factor(&self, busy_others: f64) -> f64 {
        1.0 + self.corun_slowdown.max(0.0) * busy_others.clamp(0.0, 1.0)
    }

    /// Seconds of one superstep at `t` threads (`T(t) / supersteps`; 0 when
    /// the supersteps are unknown).
    pub fn superstep_seconds(&self, t: f64) -> f64 {
        if self.supersteps > 0.0 {
            self.seconds(t) / self.supersteps
        } else {
            0.0
        }
    }

    /// Fits `a + b/t` to `seconds[i]` measured at `i + 1` threads.
    /// Returns `None` when there is no finite positive time.
    pub fn fit(seconds: &[f64], topology_bytes: f64, state_bytes: f64) -> Option<Cost> {
        let pts: Vec<(f64, f64)> = seconds
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_finite() && **s > 0.0)
            .map(|(i, s)| (1.0 / (i + 1) as f64, *s))
            .collect();
        let (a, b) = match pts.len() {
            0 => return None,
            1 => {
                // T(t0) = a + b/t0 with a = f·T(1).
                let (x, y) = pts[0];
                let t1 = y / (DEFAULT_SERIAL_FRACTION + (1.0 - DEFAULT_SERIAL_FRACTION) * x);
                (
                    DEFAULT_SERIAL_FRACTION * t1,
                    (1.0 - DEFAULT_SERIAL_FRACTION) * t1,
                )
            }
            _ => {
                // Least squares of y = a + b·x.
                let n = pts.len() as f64;
                let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
                let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
                let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
                let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
                let b = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
                let a = my - b * mx;
                let (a, b) = if a < 0.0 {
                    // Superlinear: all parallel, through the mean point.
                    (0.0, my / mx)
                } else {
                    (a, b)
                };
                let f = UNIDENTIFIED_SERIAL_FRACTION;
                if pts.len() < MIN_POINTS_FOR_SERIAL_FIT && a < f * (a + b) {
                    // Two points are fitted exactly: a serial fraction under
                    // the floor is not told apart from noise in T(1). The
                    // curve only shapes the times past the last measured
                    // count (it is scaled through that time), so its
                    // normalisation does not matter.
                    let (x, y) = pts[pts.len() - 1];
                    let t1 = y / (f + (1.0 - f) * x);
                    (f * t1, (1.0 - f) * t1)
                } else {
                    (a, b)
                }
            }
        };
        let mut c = Cost::amdahl(a, b, topology_bytes.max(0.0), state_bytes.max(0.0));
        let valid = seconds
            .iter()
            .take(MAX_MEASURED_THREADS)
            .take_while(|s| s.is_finite() && **s > 0.0)
            .count();
        c.measured[..valid].copy_from_slice(&seconds[..valid]);
        c.measured_threads = valid;
        Some(c)
    }

    /// The fitted Amdahl curve `a + b/t`.
    fn curve(&self, t: f64) -> f64 {
        self.serial_seconds + self.parallel_seconds / t.max(1e-9)
    }

    /// Seconds at `t` threads (`t` may be fractional: a time-shared share).
    pub fn seconds(&self, t: f64) -> f64 {
        let p = self.measured_threads;
        if p == 0 {
            return self.curve(t);
        }
        let m = &self.measured;
        if t <= 1.0 {
            return m[0] / t.max(1e-9);
        }
        if t <= p as f64 {
            let i = t.floor() as usize;
            if i >= p || (t - i as f64).abs() < 1e-12 {
                return m[i.min(p) - 1];
            }
            let (x0, x1, x) = (1.0 / i as f64, 1.0 / (i + 1) as f64, 1.0 / t);
            return m[i - 1] + (m[i] - m[i - 1]) * (x - x0) / (x1 - x0);
        }
        let at_p = self.curve(p as f64);
        if at_p > 0.0 {
            m[p - 1] * self.curve(t) / at_p
        } else {
            m[p - 1] * p as f64 / t
        }
    }

    /// Bytes of memory traffic per run.
    pub fn bytes(&self) -> f64 {
        self.topology_bytes + self.state_bytes
    }

    /// Bandwidth demand at `t` threads running alone, bytes per second.
    pub fn bandwidth(&self, t: f64) -> f64 {
        let s = self.seconds(t);
        if s > 0.0 {
            self.bytes() / s
        } else {
            0.0
        }
    }

    /// Bandwidth demand at `t` threads in GB/s.
    pub fn bandwidth_gbs(&self, t: f64) -> f64 {
        self.bandwidth(t) / 1e9
    }

    /// The time drop of one more thread: `T(t) − T(t + 1)` (CongraPlus eq. 3).
    pub fn gain(&self, t: usize) -> f64 {
        self.seconds(t as f64) - self.seconds(t as f64 + 1.0)
    }

    /// Every figure multiplied by `k` (a job with `k` times the iterations,
    /// so `k` times the supersteps too).
    pub fn scaled(&self, k: f64) -> Cost {
        let mut c = *self;
        c.serial_seconds *= k;
        c.parallel_seconds *= k;
        c.topology_bytes *= k;
        c.state_bytes *= k;
        c.measured.iter_mut().for_each(|x| *x *= k);
        c.supersteps *= k;
        c
    }

    /// The least core-seconds of a run at 1..=`max_threads` threads,
    /// `min t·T(t)` (`T(1)` unless the profile is superlinear).
    pub fn least_core_seconds(&self, max_threads: usize) -> f64 {
        (1..=max_threads.max(1))
            .map(|t| t as f64 * self.seconds(t as f64))
            .fold(f64::INFINITY, f64::min)
    }

    /// Work done per second at `t` threads in cores' worth at the job's
    /// best efficiency: `least_core_seconds / T(t)` (the speedup `T(1)/T(t)`
    /// unless the profile is superlinear, where one thread counts less).
    pub fn work_rate(&self, t: f64, max_threads: usize) -> f64 {
        let s = self.seconds(t);
        if s > 0.0 {
            self.least_core_seconds(max_threads) / s
        } else {
            1.0
        }
    }

    /// The speedup at `t` threads, `T(1) / T(t)`.
    pub fn speedup(&self, t: f64) -> f64 {
        let s = self.seconds(t);
        if s > 0.0 {
            self.seconds(1.0) / s
        } else {
            1.0
        }
    }

    /// The cost of the jobs `costs` fused into one shared scan: topology
    /// read once (the largest), states summed; supersteps: the most of any
    /// job (the group runs until its longest job ends). Time: with a
    /// measured [`LaneCost`] of the largest job and more than one job,
    /// `T = T_big·base + per_lane·Σ T_other`; without one, time grows with
    /// bytes (`T ∝ bytes` from the largest job). `None` when `costs` is empty.
    pub fn fused(costs: &[Cost]) -> Option<Cost> {
        let (bi, big) = costs
            .iter()
            .copied()
            .enumerate()
            .max_by(|x, y| x.1.bytes().total_cmp(&y.1.bytes()))?;
        let topology = costs.iter().map(|c| c.topology_bytes).fold(0.0, f64::max);
        let state: f64 = costs.iter().map(|c| c.state_bytes).sum();
        let k = match big.lanes {
            Some(_) if costs.len() == 1 => 1.0,
            Some(l) => {
                let t_big = big.seconds(1.0).max(1e-12);
                let others: f64 = costs
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != bi)
                    .map(|(_, c)| c.seconds(1.0) / t_big)
                    .sum();
                l.base.max(0.0) + l.per_lane.max(0.0) * others
            }
            None if big.bytes() > 0.0 => (topology + state) / big.bytes(),
            None => 1.0,
        };
        let mut c = big.scaled(k);
        c.topology_bytes = topology;
        c.state_bytes = state;
        c.supersteps = costs.iter().map(|c| c.supersteps).fold(0.0, f64::max);
        Some(c)
    }

    /// Whether fusing `costs` into one scan takes less time at `t` threads
    /// than running them one after another (false for fewer than two).
    pub fn fusing_pays(costs: &[Cost], t: f64) -> bool {
        costs.len() > 1
            && Cost::fused(costs)
                .is_some_and(|f| f.seconds(t) < costs.iter().map(|c| c.seconds(t)).sum::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_points_are_fitted_exactly() {
        let c = Cost::fit(&[10.0, 6.0], 1e9, 1e8).unwrap();
        assert!((c.seconds(1.0) - 10.0).abs() < 1e-9);
        assert!((c.seconds(2.0) - 6.0).abs() < 1e-9);
        // Amdahl: a = 2, b = 8; 8 threads → 3 s.
        assert!((c.seconds(8.0) - 3.0).abs() < 1e-9);
        assert!((c.bandwidth(8.0) - 1.1e9 / 3.0).abs() < 1.0);
    }

    #[test]
    fn no_speedup_means_all_serial_and_superlinear_all_parallel() {
        let c = Cost::fit(&[4.0, 4.5], 0.0, 0.0).unwrap();
        assert_eq!(c.parallel_seconds, 0.0);
        // Three points: the least-squares fit is taken as it is.
        let c = Cost::fit(&[4.0, 1.5, 1.0], 0.0, 0.0).unwrap();
        assert_eq!(c.serial_seconds, 0.0);
        let c = Cost::fit(&[4.0, 1.5], 0.0, 0.0).unwrap();
        // Measured times are kept (superlinear 1 → 2); past them, two points
        // give at least the unidentified serial fraction.
        assert_eq!(c.seconds(2.0), 1.5);
        let f = UNIDENTIFIED_SERIAL_FRACTION;
        let past = 1.5 * (f + (1.0 - f) / 4.0) / (f + (1.0 - f) / 2.0);
        assert!((c.seconds(4.0) - past).abs() < 1e-12);
        assert!((c.speedup(2.0) - 4.0 / 1.5).abs() < 1e-12);
        // Between thread counts: linear in 1/t; below one thread: time-shared.
        let c = Cost::fit(&[4.0, 3.0, 2.0], 0.0, 0.0).unwrap();
        assert!(
            (c.seconds(2.4) - (3.0 - (1.0 / 2.0 - 1.0 / 2.4) / (1.0 / 2.0 - 1.0 / 3.0))).abs()
                < 1e-12
        );
        assert_eq!(c.seconds(0.5), 8.0);
        assert!(Cost::fit(&[], 0.0, 0.0).is_none());
        assert!(Cost::fit(&[f64::NAN], 0.0, 0.0).is_none());
    }

    #[test]
    fn two_point_extrapolation_does_not_flip_with_noise_on_t1() {
        // The same T(2) with T(1) 20% apart (1→2 speedups 2.45 and 1.96):
        // the fitted fractions were −0.18 (clamped to 0: speedup 19.6 at 16
        // threads) and 0.02 (12.1). Under the floor both extrapolate alike.
        let hi = Cost::fit(&[0.058, 0.0237], 1e8, 0.0).unwrap();
        let lo = Cost::fit(&[0.0464, 0.0237], 1e8, 0.0).unwrap();
        assert!((hi.seconds(16.0) - lo.seconds(16.0)).abs() < 1e-12);
        let f = UNIDENTIFIED_SERIAL_FRACTION;
        let ratio = (f + (1.0 - f) / 2.0) / (f + (1.0 - f) / 16.0);
        assert!((0.0237 / hi.seconds(16.0) - ratio).abs() < 1e-9);
        // Below the measured counts nothing changes.
        assert_eq!(hi.seconds(1.0), 0.058);
        assert_eq!(lo.seconds(2.0), 0.0237);
        // Monotone: more threads never take longer, and past 2 the speedup
        // per added thread is below 1 (no growing superlinearity).
        let mut prev = hi.seconds(2.0);
        for t in 3..=16 {
            let s = hi.seconds(t as f64);
            assert!(s < prev);
            assert!(hi.seconds(2.0) / s < t as f64 / 2.0);
            prev = s;
        }
        // A fitted fraction above the floor is kept (10 s → 6 s: a = 0.2·10).
        let c = Cost::fit(&[10.0, 6.0], 0.0, 0.0).unwrap();
        assert!((c.serial_seconds - 2.0).abs() < 1e-9);
    }

    #[test]
    fn fused_jobs_read_the_topology_once() {
        let c = Cost::fit(&[10.0, 6.0], 8e8, 2e8).unwrap();
        let f = Cost::fused(&[c, c]).unwrap();
        assert_eq!(f.topology_bytes, 8e8);
        assert_eq!(f.state_bytes, 4e8);
        assert!((f.seconds(1.0) - 12.0).abs() < 1e-9);
    }

    #[test]
    fn measured_lanes_price_each_further_job_by_its_own_time() {
        let mut c = Cost::fit(&[10.0, 6.0], 8e8, 2e8).unwrap();
        c.lanes = Some(LaneCost {
            base: 1.2,
            per_lane: 0.5,
        });
        // A job with half the iterations adds half as much.
        let f = Cost::fused(&[c, c.scaled(0.5), c]).unwrap();
        assert!((f.seconds(1.0) - 10.0 * (1.2 + 0.5 * 1.5)).abs() < 1e-9);
        assert!((f.seconds(2.0) - 6.0 * 1.95).abs() < 1e-9);
        assert_eq!(f.topology_bytes, 8e8);
        assert_eq!(Cost::fused(&[c]).unwrap().seconds(1.0), 10.0);
        assert!(Cost::fusing_pays(&[c, c], 2.0));
        assert!(!Cost::fusing_pays(&[c], 2.0));
        // A fused kernel 4× slower than the job's own pays from 7 jobs on.
        c.lanes = Some(LaneCost {
            base: 4.0,
            per_lane: 0.5,
        });
        assert!(!Cost::fusing_pays(&[c; 6], 2.0));
        assert!(Cost::fusing_pays(&[c; 8], 2.0));
    }

    #[test]
    fn the_corun_factor_grows_with_the_busy_share_of_the_other_cores() {
        let mut c = Cost::fit(&[10.0, 6.0], 0.0, 0.0).unwrap();
        assert_eq!(c.corun_factor(1.0), 1.0);
        c.corun_slowdown = 0.2;
        assert_eq!(c.corun_factor(0.0), 1.0);
        assert!((c.corun_factor(0.5) - 1.1).abs() < 1e-12);
        assert!((c.corun_factor(3.0) - 1.2).abs() < 1e-12);
    }
}
