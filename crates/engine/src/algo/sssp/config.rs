//! SSSP's parameters (`Config`, the bucket width `Δ`), its result (`Output`)
//! and their sentinels.
use super::*;

/// Sentinel for "no parent".
pub const NO_PARENT: u32 = u32::MAX;
/// Default source vertex (internal id).
pub const DEFAULT_SOURCE: VertexId = 0;
/// Relative tolerance of the verifier's triangle and tightness checks.
pub const VERIFY_EPSILON: f64 = 1e-9;

/// SSSP parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Source vertex (internal id). Default [`DEFAULT_SOURCE`].
    pub source: VertexId,
    /// Bucket width `Δ > 0`, in weight units. `None` (default):
    /// [`default_delta`], `4 · w̄ / d̄` with `w̄` the mean finite edge weight
    /// and `d̄` the mean out-degree (at least 1): Meyer and Sanders' `Θ(1/d)`
    /// for random weights, a middle ground between Dijkstra (`Δ → 0`) and
    /// Bellman–Ford (`Δ → ∞`) that grows with sparsity. The constant 4 is
    /// measured: on Kronecker scale 22 (weights 1–255,
    /// `d̄` 53.6) it gives Δ ≈ 9.6 where Δ 2–8 run about 2× faster than
    /// the mean weight (128); on USA-road-FLA (`d̄` 2.4) Δ ≈ 213, near the
    /// best measured (256).
    pub delta: Option<f64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            source: DEFAULT_SOURCE,
            delta: None,
        }
    }
}

/// SSSP result, indexed by internal id.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// Shortest-path distance; `f64::INFINITY` when unreachable.
    pub dist: Vec<f64>,
    /// Predecessor on a shortest path (see the module docs); [`NO_PARENT`] when unreachable.
    pub parent: Vec<u32>,
    /// Relaxation supersteps run.
    pub iterations: usize,
}

/// Checks the graph and parameters (source in range, weights present,
/// none negative or NaN, `Δ` finite and > 0) and returns `Δ`: the given one,
/// or [`default_delta`] from the graph's cached weight statistics. Other executors and the job manager
/// call it so that every path applies the same rules.
pub fn prepare(g: &dyn GraphView, cfg: &Config) -> Result<f64, AlgoError> {
    if (cfg.source as usize) >= g.num_vertices() {
        return Err(AlgoError::NoSuchVertex(u64::from(cfg.source)));
    }
    let (true, Some(stats)) = (g.is_weighted(), g.weight_stats()) else {
        return Err(AlgoError::UnsupportedGraph(
            "sssp needs edge weights; import with --weighted".into(),
        ));
    };
    if stats.first_invalid.is_some() {
        let (src, dst, w) = g.first_invalid_arc().unwrap_or((0, 0, f64::NAN));
        if w.is_nan() {
            return Err(AlgoError::UnsupportedGraph(format!(
                "sssp: edge {src} -> {dst} has weight NaN"
            )));
        }
        return Err(AlgoError::NegativeWeight {
            algorithm: "sssp",
            src: u64::from(src),
            dst: u64::from(dst),
            weight: w,
        });
    }
    match cfg.delta {
        Some(d) if d > 0.0 && d.is_finite() => Ok(d),
        Some(d) => Err(AlgoError::InvalidParameter(format!(
            "delta must be a finite number > 0, got {d}"
        ))),
        None => Ok(default_delta(
            stats.finite_sum / stats.finite_count.max(1) as f64,
            g.num_arcs() as f64 / g.num_vertices().max(1) as f64,
        )),
    }
}

/// The default bucket width for mean finite weight `mean_weight` and mean
/// out-degree `mean_degree`: `4 · mean_weight / max(mean_degree, 1)`, or 1.0
/// when that is not a positive finite number (no or zero weights).
pub fn default_delta(mean_weight: f64, mean_degree: f64) -> f64 {
    let d = 4.0 * mean_weight / mean_degree.max(1.0);
    if d > 0.0 && d.is_finite() {
        d
    } else {
        1.0
    }
}
