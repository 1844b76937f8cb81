//! [`Method::Chebyshev`]: the fused kernel with the Chebyshev three-term
//! recurrence, and the schedule that engages and abandons it.
use super::*;

/// Whether [`Method::Chebyshev`] applies to `g` with `cfg`, and why not.
pub(super) fn chebyshev_applies(cfg: &Config) -> Result<(), AlgoError> {
    if cfg.personalization.is_some() {
        return Err(AlgoError::InvalidParameter(
            "the chebyshev method computes global PageRank; personalised PageRank needs push, jacobi or gauss-seidel".into(),
        ));
    }
    Ok(())
}

/// [`Method::Chebyshev`]: the fused kernel with the three-term recurrence,
/// then, in the rare case that the returned `F(x)` has a negative entry
/// (the recurrence's iterates overshoot; `F` of a near-fixed point is
/// positive because every vertex keeps its teleport share `(1 - d)/|V|`),
/// plain Jacobi iterations from it until none is left.
pub(super) fn chebyshev(g: &Graph, cfg: &Config, teleport: &Teleport) -> Result<Output, AlgoError> {
    chebyshev_applies(cfg)?;
    let mut out = fused_in_precision::<false, true, JACOBI_BLOCK>(g, cfg, teleport, None, None);
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    while out.iterations < limit && out.rank.iter().any(|&r| r < 0.0) {
        let one = Config {
            iterations: Some(1),
            ..cfg.clone()
        };
        let next = fused_in_precision::<false, false, JACOBI_BLOCK>(
            g,
            &one,
            teleport,
            None,
            Some(&out.rank),
        );
        out = Output {
            iterations: out.iterations + 1,
            converged: next.change < g.num_vertices() as f64 * cfg.tolerance,
            ..next
        };
    }
    Ok(out)
}

/// Tests: a Chebyshev pass never keeps `y` ahead of time, so that a run
/// stopping by tolerance always ends in the replay pass (results are the
/// same either way, so tests running at the same time are not disturbed).
#[cfg(test)]
pub(super) static NO_FORESIGHT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);
/// Tests: replay passes run.
#[cfg(test)]
pub(super) static REPLAYS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether the tests switched off the Chebyshev passes' foresight.
#[inline]
pub(super) fn no_foresight() -> bool {
    #[cfg(test)]
    {
        NO_FORESIGHT.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// When [`Method::Chebyshev`] uses its recurrence, and with which `ω`.
///
/// Passes start as Jacobi (`ω = 1`). The recurrence engages after the
/// first pass (from the second on) whose change is more than `1.1 × ρ`
/// times the last one (`ρ = d / (1 + √(1 - d²))`, its rate on a spectrum in
/// `[-d, d]`), and it is given up for good, back to Jacobi from the
/// current iterate, if after `j` of its passes the change is above
/// `1.5 × c·r^j` (`c` and `r` the change and its shrink ratio when it
/// engaged): on a directed graph whose spectrum is far from real
/// (cnr-2000) the recurrence diverges, and this stops it after 3 passes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChebSchedule {
    d: f64,
    rate: f64,
    pub(super) engaged: bool,
    pub(super) abandoned: bool,
    steps: usize,
    pub(super) omega: f64,
    last_change: f64,
    ratio: f64,
    engaged_change: f64,
    engaged_ratio: f64,
}

impl ChebSchedule {
    pub(super) fn new(d: f64) -> ChebSchedule {
        ChebSchedule {
            d,
            rate: d / (1.0 + (1.0 - d * d).sqrt()),
            engaged: false,
            abandoned: false,
            steps: 0,
            omega: 1.0,
            last_change: f64::INFINITY,
            ratio: 1.0,
            engaged_change: 0.0,
            engaged_ratio: 0.0,
        }
    }

    /// `ω` for the next pass (1: a Jacobi pass).
    pub(super) fn next_omega(&mut self) -> f64 {
        let d2 = self.d * self.d;
        self.omega = match (self.engaged, self.steps) {
            (false, _) => 1.0,
            (true, 0) => 1.0 / (1.0 - d2 / 2.0),
            (true, _) => 1.0 / (1.0 - d2 * self.omega / 4.0),
        };
        self.omega
    }

    /// The change one pass ahead, extrapolated from the last two.
    pub(super) fn predicted(&self) -> f64 {
        self.last_change * self.ratio
    }

    /// Records the change of pass number `passes` (counted from 1), which
    /// did not stop the run.
    pub(super) fn observe(&mut self, passes: usize, change: f64) {
        self.ratio = change / self.last_change;
        if self.engaged {
            self.steps += 1;
            let expected = self.engaged_change * self.engaged_ratio.powi(self.steps as i32);
            if change > 1.5 * expected || change.is_nan() {
                self.engaged = false;
                self.abandoned = true;
            }
        } else if !self.abandoned && passes >= 2 && self.ratio > 1.1 * self.rate {
            self.engaged = true;
            self.engaged_change = change;
            self.engaged_ratio = self.ratio;
        }
        self.last_change = change;
    }
}
