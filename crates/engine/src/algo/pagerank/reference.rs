//! The plain sequential reference, the verifier (the fixed-point property)
//! and the conformance check of the driver against the fast kernel.
use super::*;

/// One Jacobi iteration, sequentially, in f64: returns `F(x)`.
pub(super) fn iterate(g: &Graph, damping: f64, teleport: &Teleport, x: &[f64]) -> Vec<f64> {
    let n = g.num_vertices();
    let dangling: f64 = (0..n as VertexId)
        .filter(|&u| g.out_degree(u) == 0)
        .map(|u| x[u as usize])
        .sum();
    (0..n as VertexId)
        .map(|v| {
            let sum: f64 = g
                .in_neighbors(v)
                .iter()
                .map(|&u| x[u as usize] / g.out_degree(u) as f64)
                .sum();
            let t = teleport.at(v);
            damping * (sum + dangling * t) + (1.0 - damping) * t
        })
        .collect()
}

/// Plain sequential iteration with the same definition, method, precision
/// and stopping rule as [`run`]: one loop over the vertices per iteration.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let teleport = prepare(g, cfg)?;
    if cfg.method == Method::Chebyshev {
        chebyshev_applies(cfg)?;
    }
    Ok(match cfg.precision {
        Precision::Double => reference_with::<f64>(g, cfg, &teleport),
        Precision::Single => reference_with::<f32>(g, cfg, &teleport),
    })
}

pub(super) fn reference_with<C: Contribution>(
    g: &Graph,
    cfg: &Config,
    teleport: &Teleport,
) -> Output {
    let n = g.num_vertices();
    if n == 0 {
        return Output {
            rank: Vec::new(),
            iterations: 0,
            converged: true,
            change: 0.0,
        };
    }
    let d = cfg.damping;
    let isolated = Isolated::with_teleport(g, cfg, teleport);
    let lone = |u: usize| Isolated::is_isolated(g, u as VertexId);
    let mut x: Vec<f64> = (0..n).map(start_vector(g, cfg, teleport, None)).collect();
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    let (mut iterations, mut converged, mut change) = (0, false, 0.0);
    // Chebyshev: `x_{k-1}`, the last plain step, and the recurrence's state.
    let cheb = cfg.method == Method::Chebyshev;
    let mut older = x.clone();
    let mut plain = x.clone();
    let mut schedule = ChebSchedule::new(d);
    while iterations < limit {
        let omega = schedule.next_omega();
        let engaged = cheb && schedule.engaged;
        let contrib: Vec<C> = (0..n)
            .map(|u| contribution(x[u], g.out_degree(u as VertexId)))
            .collect();
        let mut fresh = contrib.clone();
        let dangling_of = |u: usize| g.out_degree(u as VertexId) == 0;
        let step = match isolated {
            None => Step::plain((0..n).filter(|&u| dangling_of(u)).map(|u| x[u]).sum()),
            Some(iso) => {
                let mass: f64 = (0..n).filter(|&u| !lone(u)).map(|u| x[u]).sum();
                let rest: f64 = (0..n)
                    .filter(|&u| !lone(u) && dangling_of(u))
                    .map(|u| x[u])
                    .sum();
                iso.step(d, rest, mass)
            }
        };
        let mut y = vec![0.0; n];
        for u in 0..n {
            let block = u - u % GS_BLOCK;
            let sum: f64 = g
                .in_neighbors(u as VertexId)
                .iter()
                .map(|&v| {
                    let v = v as usize;
                    let gauss_seidel = cfg.method == Method::GaussSeidel;
                    if gauss_seidel && v >= block && v < u {
                        fresh[v].to_f64()
                    } else {
                        contrib[v].to_f64()
                    }
                })
                .sum();
            let t = teleport.at(u as VertexId);
            y[u] = step.update(d, sum, t);
            fresh[u] = contribution(y[u], g.out_degree(u as VertexId));
        }
        change = (0..n)
            .map(|u| (y[u] - step.prior(lone(u), x[u], teleport.at(u as VertexId))).abs())
            .sum();
        if cheb {
            let z: Vec<f64> = if engaged {
                (0..n)
                    .map(|u| older[u] + omega * (y[u] - older[u]))
                    .collect()
            } else {
                y.clone()
            };
            older = std::mem::replace(&mut x, z);
            plain = y;
        } else {
            x = y;
        }
        iterations += 1;
        converged = change < n as f64 * cfg.tolerance;
        if converged && cfg.iterations.is_none() {
            break;
        }
        if cheb {
            schedule.observe(iterations, change);
        }
    }
    if cheb {
        x = plain;
    }
    Output {
        rank: x,
        iterations,
        converged,
        change,
    }
}

/// What f32 contributions may move ranks by in L1 at damping `d`, with a
/// margin ([`verify`]'s allowance for [`Precision::Single`]).
pub(super) fn single_precision_slack(d: f64) -> f64 {
    4.0 * f64::from(f32::EPSILON) / (1.0 - d)
}

/// Checks that `out.rank` is a probability vector and a fixed point of the
/// iteration `F` (one Jacobi step, f64) within what the run guarantees:
///
/// * for Jacobi and Gauss–Seidel, `Σ |F(x) - x| ≤ d · change`, `change`
///   being the last iteration's L1 change (`F` is a `d`-contraction in L1,
///   and a Gauss–Seidel sweep's residual is bounded by `d` times its change,
///   whatever mixture of old and new values it read); for push,
///   `Σ |F(x) - x| ≤ change` (equal when the push finished alone);
/// * when it converged, `change < |V|·tolerance`;
/// * for Jacobi, also `≤ 2(1 + d)·d^k` after `k` iterations from any start
///   (`≤ 2d` when isolated vertices are eliminated, see [`Isolated`]);
/// * the ranks sum to 1: exactly for Jacobi, within `d·change/(1 - d)` for
///   Gauss–Seidel (from `Σ F(x) - Σ x = (1 - d)(1 - Σ x)`), within
///   `change/(1 - d)` for push (its residual mass is not in the ranks).
///
/// With [`Precision::Single`] the sums allow for f32 rounding of the
/// contributions (about `4·2⁻²³/(1 - d)` in L1).
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let teleport =
        prepare(g, cfg).map_err(|e| VerifyError::new(format!("bad configuration: {e}")))?;
    let n = g.num_vertices();
    if out.rank.len() != n {
        return Err(VerifyError::new(format!(
            "{} ranks for {n} vertices",
            out.rank.len()
        )));
    }
    if n == 0 {
        return Ok(());
    }
    if let Some(v) = out.rank.iter().position(|&r| !(r >= 0.0 && r.is_finite())) {
        return Err(VerifyError::new(format!(
            "vertex {v} has rank {}",
            out.rank[v]
        )));
    }
    let d = cfg.damping;
    let mut slack = 1e-9 + n as f64 * 1e-14;
    if cfg.precision == Precision::Single {
        slack += single_precision_slack(d);
    }
    if !(out.change >= 0.0 && out.change.is_finite()) {
        return Err(VerifyError::new(format!(
            "the reported last change {} is not a finite number >= 0",
            out.change
        )));
    }
    // Jacobi conserves mass exactly; a Gauss–Seidel sweep does not, but
    // `Σ F(x) - Σ x = (1 - d)(1 - Σ x)`, so `|1 - Σ x| ≤ d·change / (1 - d)`.
    let mut sum_slack = slack;
    if cfg.method == Method::GaussSeidel && out.iterations > 0 {
        sum_slack += d * out.change / (1.0 - d);
    }
    // A push result holds `1 - Σ r = 1 - change / (1 - d)`.
    if cfg.method == Method::Push {
        sum_slack += out.change / (1.0 - d);
    }
    let sum: f64 = out.rank.iter().sum();
    if (sum - 1.0).abs() > sum_slack {
        return Err(VerifyError::new(format!(
            "ranks sum to {sum}, not 1 (allowed deviation {sum_slack:e})"
        )));
    }
    if out.converged && out.iterations > 0 && out.change >= n as f64 * cfg.tolerance {
        return Err(VerifyError::new(format!(
            "reported converged, but the last change {:e} is not below |V|·tolerance = {:e}",
            out.change,
            n as f64 * cfg.tolerance
        )));
    }
    let mut bound = if out.iterations == 0 {
        f64::INFINITY
    } else if cfg.method == Method::Push {
        // `F(p) - p = (1 - d)·r` exactly when the push finished; `d·change`
        // when the power iteration took over.
        out.change
    } else {
        d * out.change
    };
    // Plain Jacobi from the uniform start: an error shrinks by `d` per
    // iteration. With the isolated vertices eliminated each iterate is
    // `F` of a probability vector, which only bounds the residual by `2d`.
    if cfg.method == Method::Jacobi {
        let k = out.iterations.min(i32::MAX as usize) as i32;
        bound = bound.min(match Isolated::with_teleport(g, cfg, &teleport) {
            None => 2.0 * (1.0 + d) * d.powi(k),
            Some(_) => 2.0 * d,
        });
    }
    bound += slack;
    let y = iterate(g, d, &teleport, &out.rank);
    let residual: f64 = y.iter().zip(&out.rank).map(|(a, b)| (a - b).abs()).sum();
    if residual > bound {
        let (v, _) = y
            .iter()
            .zip(&out.rank)
            .map(|(a, b)| (a - b).abs())
            .enumerate()
            .fold(
                (0, -1.0),
                |best, (v, e)| if e > best.1 { (v, e) } else { best },
            );
        return Err(VerifyError::new(format!(
            "not a fixed point: one more iteration moves the ranks by {residual:e} in total (allowed {bound:e}); \
             vertex {v} moves from {} to {}",
            out.rank[v], y[v]
        )));
    }
    Ok(())
}

/// Largest difference per rank between [`PageRankDriver`] on any executor
/// and [`run`]'s Jacobi kernel in double precision after the same
/// iterations: the sums differ only in the order an executor adds them.
pub const DRIVER_RANK_BOUND: f64 = 1e-12;

/// The conformance check of [`PageRankDriver`] on `exec` (see
/// [`crate::conformance`]): global or personalised (by `seed`), a fixed
/// iteration count or a tolerance, against [`run`]'s Jacobi kernel in
/// double precision: within [`DRIVER_RANK_BOUND`] per rank after the same
/// iterations, and passing [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let n = g.num_vertices().max(1) as u64;
    let cfg = Config {
        method: Method::Jacobi,
        precision: Precision::Double,
        iterations: (seed & 1 == 0).then_some(1 + (seed >> 4) as usize % 20),
        personalization: (seed & 2 == 0).then(|| vec![((seed >> 8) % n) as VertexId]),
        tolerance: 1e-9,
        ..Config::default()
    };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    if got.iterations != fast.iterations {
        // Only a change within rounding of the stopping rule may differ.
        let edge = (got.change - n as f64 * cfg.tolerance).abs() < 1e-12;
        if !edge {
            return Err(format!(
                "iterations {} against the kernel's {}",
                got.iterations, fast.iterations
            ));
        }
        return Ok(());
    }
    crate::conformance::close("rank", &got.rank, &fast.rank, DRIVER_RANK_BOUND)
}
