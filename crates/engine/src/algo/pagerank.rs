//! PageRank and personalised PageRank by power iteration.
//!
//! **Returns** [`Output`]: `rank[v] ≥ 0` with `Σ rank = 1`, the number of
//! iterations run, and whether the tolerance test passed.
//!
//! **Definition.** With teleport vector `t` (uniform `1/|V|`, or uniform over
//! the personalisation sources) and damping `d`, every iteration computes
//!
//! ```text
//! PR'(v) = (1 - d)·t(v) + d·( Σ_{u→v} PR(u) / outdeg(u) + t(v)·Σ_{dangling u} PR(u) )
//! ```
//!
//! from `PR_0 = 1/|V|` (uniform, also when personalised, as NetworkX does).
//! Dangling vertices (out-degree 0) hand their mass to `t`, so `Σ PR = 1`
//! holds exactly in exact arithmetic and no final normalisation is needed.
//! Multi-edges count with multiplicity (in `outdeg` and in the sum), a
//! self-loop is an ordinary out-edge, undirected graphs use out-degree =
//! degree; weights are ignored. This is NetworkX's `pagerank(G, weight=None)`
//! (with `personalization={s: 1 for s in sources}` and its default
//! `dangling=None`, i.e. dangling mass follows the personalisation) and
//! LDBC Graphalytics PR when [`Config::iterations`] fixes the count.
//!
//! **Stopping.** With `iterations: Some(k)`, exactly `k` iterations
//! (Graphalytics). Otherwise, as NetworkX: stop after the first iteration
//! whose change `Σ_v |PR'(v) - PR(v)| < |V|·tolerance`, or after
//! `max_iterations` (then `converged = false`; NetworkX raises instead).
//!
//! **Method.** A dense-only [`VertexProgram`] (pull along in-edges, every
//! vertex active), as Gemini runs PageRank: a vertex step computes each
//! vertex's contribution `PR(u)/outdeg(u)`, the dense signal sums the
//! contributions of `v`'s in-neighbours in CSC order, the dense slot applies
//! the formula. Sums over vertices (dangling mass, change) use fixed blocks,
//! so results are bit-identical for any number of threads.
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::error::{AlgoError, VerifyError};
use crate::program::{AtomicF64, Executor, InEdges, InMemory, Modes, StepOptions, VertexProgram};
use crate::subset::VertexSubset;

/// Default damping factor `d`.
pub const DEFAULT_DAMPING: f64 = 0.85;
/// Default tolerance: stop when the L1 change is below `|V| · tolerance` (NetworkX's default).
pub const DEFAULT_TOLERANCE: f64 = 1e-6;
/// Default cap on iterations when stopping by tolerance (NetworkX's default).
pub const DEFAULT_MAX_ITERATIONS: usize = 100;

/// PageRank parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Damping factor `d`, in `[0, 1)`. Default [`DEFAULT_DAMPING`].
    pub damping: f64,
    /// A fixed number of iterations (Graphalytics semantics), or `None` to
    /// stop by tolerance. Default `None`.
    pub iterations: Option<usize>,
    /// Stop when `Σ |ΔPR| < |V| · tolerance`; `≥ 0`. Default [`DEFAULT_TOLERANCE`].
    pub tolerance: f64,
    /// Most iterations when stopping by tolerance. Default [`DEFAULT_MAX_ITERATIONS`].
    pub max_iterations: usize,
    /// Personalised PageRank: teleport and dangling mass go uniformly to
    /// these vertices (internal ids; duplicates count once). `None`: all vertices.
    pub personalization: Option<Vec<VertexId>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            damping: DEFAULT_DAMPING,
            iterations: None,
            tolerance: DEFAULT_TOLERANCE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            personalization: None,
        }
    }
}

/// PageRank result, indexed by internal id.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The rank of each vertex; non-negative, summing to 1.
    pub rank: Vec<f64>,
    /// Iterations run.
    pub iterations: usize,
    /// Whether the last iteration changed the ranks by less than `|V| · tolerance` (L1).
    pub converged: bool,
}

/// The teleport vector: uniform, or uniform over a set of sources.
#[derive(Clone, Debug)]
enum Teleport {
    Uniform(f64),
    Sources { member: Vec<bool>, share: f64 },
}

impl Teleport {
    #[inline]
    fn at(&self, v: VertexId) -> f64 {
        match self {
            Teleport::Uniform(x) => *x,
            Teleport::Sources { member, share } => {
                if member[v as usize] {
                    *share
                } else {
                    0.0
                }
            }
        }
    }
}

/// Checks the parameters and builds the teleport vector.
fn prepare(g: &Graph, cfg: &Config) -> Result<Teleport, AlgoError> {
    if !(0.0..1.0).contains(&cfg.damping) {
        return Err(AlgoError::InvalidParameter(format!(
            "damping must be in [0, 1), got {}",
            cfg.damping
        )));
    }
    if !(cfg.tolerance >= 0.0 && cfg.tolerance.is_finite()) {
        return Err(AlgoError::InvalidParameter(format!(
            "tolerance must be a finite number >= 0, got {}",
            cfg.tolerance
        )));
    }
    let n = g.num_vertices();
    match &cfg.personalization {
        None => Ok(Teleport::Uniform(if n == 0 { 0.0 } else { 1.0 / n as f64 })),
        Some(sources) => {
            if sources.is_empty() {
                return Err(AlgoError::InvalidParameter(
                    "personalized PageRank needs at least one source vertex".into(),
                ));
            }
            let mut member = vec![false; n];
            let mut k = 0usize;
            for &s in sources {
                let slot = member
                    .get_mut(s as usize)
                    .ok_or(AlgoError::NoSuchVertex(u64::from(s)))?;
                if !*slot {
                    *slot = true;
                    k += 1;
                }
            }
            Ok(Teleport::Sources {
                member,
                share: 1.0 / k as f64,
            })
        }
    }
}

/// The PageRank vertex program: one synchronous power iteration per superstep.
struct Program<'g> {
    g: &'g Graph,
    damping: f64,
    teleport: Teleport,
    /// `PR(u)` of the previous iteration.
    rank: Vec<AtomicF64>,
    /// `PR(u) / outdeg(u)`, 0 for dangling vertices.
    contrib: Vec<AtomicF64>,
    /// The new ranks being computed.
    next: Vec<AtomicF64>,
    /// `Σ PR(u)` over dangling `u`, set before each superstep.
    dangling: f64,
}

impl VertexProgram for Program<'_> {
    /// A partial sum of contributions.
    type Msg = f64;
    const MODES: Modes = Modes::DenseOnly;

    fn combine(&self, a: f64, b: f64) -> f64 {
        a + b
    }

    // PageRank is dense-only (MODES); the sparse pair is never called.
    fn sparse_signal(&self, _src: VertexId) -> Option<f64> {
        None
    }

    fn sparse_slot(&self, _dst: VertexId, _msg: f64) -> bool {
        false
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<f64> {
        // Every vertex is active in PageRank; sum in CSC order so the result
        // is the same on any thread.
        Some(
            edges
                .sources()
                .iter()
                .map(|&u| self.contrib[u as usize].load())
                .sum(),
        )
    }

    fn dense_slot(&self, v: VertexId, sum: f64) -> bool {
        let t = self.teleport.at(v);
        let d = self.damping;
        self.next[v as usize].store(d * (sum + self.dangling * t) + (1.0 - d) * t);
        true
    }
}

/// Runs PageRank (personalised when `cfg.personalization` is set) in
/// parallel on the current rayon pool.
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let teleport = prepare(g, cfg)?;
    run_on(&InMemory::new(g), g, cfg, teleport)
}

/// Personalised PageRank from one source: [`run`] with
/// `personalization = Some(vec![source])` and the other fields of `cfg`.
pub fn run_personalized(g: &Graph, cfg: &Config, source: VertexId) -> Result<Output, AlgoError> {
    let cfg = Config {
        personalization: Some(vec![source]),
        ..cfg.clone()
    };
    run(g, &cfg)
}

fn run_on<E: Executor>(
    exec: &E,
    g: &Graph,
    cfg: &Config,
    teleport: Teleport,
) -> Result<Output, AlgoError> {
    let n = g.num_vertices();
    if n == 0 {
        return Ok(Output {
            rank: Vec::new(),
            iterations: 0,
            converged: true,
        });
    }
    let start = 1.0 / n as f64;
    let mut p = Program {
        g,
        damping: cfg.damping,
        teleport,
        rank: (0..n).map(|_| AtomicF64::new(start)).collect(),
        contrib: (0..n).map(|_| AtomicF64::new(0.0)).collect(),
        next: (0..n).map(|_| AtomicF64::new(0.0)).collect(),
        dangling: 0.0,
    };
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    let all = VertexSubset::all(n);
    let opts = StepOptions::default();
    let mut iterations = 0;
    let mut converged = false;
    while iterations < limit {
        // Vertex step: contributions; then the dangling mass (deterministic sum).
        exec.process_vertices(&all, |u| {
            let deg = p.g.out_degree(u);
            let c = if deg == 0 {
                0.0
            } else {
                p.rank[u as usize].load() / deg as f64
            };
            p.contrib[u as usize].store(c);
            false
        });
        p.dangling = exec.vertex_sum(|u| {
            if p.g.out_degree(u) == 0 {
                p.rank[u as usize].load()
            } else {
                0.0
            }
        });
        exec.superstep(&p, &all, &opts);
        let change =
            exec.vertex_sum(|v| (p.next[v as usize].load() - p.rank[v as usize].load()).abs());
        std::mem::swap(&mut p.rank, &mut p.next);
        iterations += 1;
        converged = change < n as f64 * cfg.tolerance;
        if converged && cfg.iterations.is_none() {
            break;
        }
    }
    Ok(Output {
        rank: p.rank.into_par_iter().map(AtomicF64::into_inner).collect(),
        iterations,
        converged,
    })
}

/// One power iteration, sequentially: returns `PR'` for `x`.
fn iterate(g: &Graph, damping: f64, teleport: &Teleport, x: &[f64]) -> Vec<f64> {
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

/// Plain sequential power iteration with the same definition and stopping rule.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let teleport = prepare(g, cfg)?;
    let n = g.num_vertices();
    if n == 0 {
        return Ok(Output {
            rank: Vec::new(),
            iterations: 0,
            converged: true,
        });
    }
    let mut x = vec![1.0 / n as f64; n];
    let limit = cfg.iterations.unwrap_or(cfg.max_iterations);
    let (mut iterations, mut converged) = (0, false);
    while iterations < limit {
        let y = iterate(g, cfg.damping, &teleport, &x);
        let change: f64 = y.iter().zip(&x).map(|(a, b)| (a - b).abs()).sum();
        x = y;
        iterations += 1;
        converged = change < n as f64 * cfg.tolerance;
        if converged && cfg.iterations.is_none() {
            break;
        }
    }
    Ok(Output {
        rank: x,
        iterations,
        converged,
    })
}

/// Checks that `out.rank` is a probability vector and a fixed point of the
/// iteration within what the run's own stopping rule guarantees: with
/// `F` one iteration, `Σ |F(x) - x| ≤ |V|·tolerance` when it converged
/// (the change of the last step bounds the residual, `F` being a
/// `d`-contraction in L1), and `≤ 2(1 + d)·d^k` after `k` iterations from
/// any start (the distance to the fixed point shrinks by `d` per step).
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
    let sum: f64 = out.rank.iter().sum();
    let slack = 1e-9 + n as f64 * 1e-14;
    if (sum - 1.0).abs() > slack {
        return Err(VerifyError::new(format!("ranks sum to {sum}, not 1")));
    }
    let d = cfg.damping;
    let mut bound = 2.0 * (1.0 + d) * d.powi(out.iterations.min(i32::MAX as usize) as i32);
    if out.converged {
        bound = bound.min(n as f64 * cfg.tolerance);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::{graphs, THREADS};
    use crate::with_threads;
    use plexus_graph::BuildOptions;
    use proptest::prelude::*;

    /// The LDBC Graphalytics `example-directed` graph (external ids 1..=10
    /// map to internal 0..=9) and its published PR output (d = 0.85, 2 iterations).
    #[test]
    fn graphalytics_example_directed_matches_the_published_output() {
        let pairs: Vec<(u32, u32)> = crate::algo::testgraphs::GRAPHALYTICS_EXAMPLE_DIRECTED
            .iter()
            .map(|&(u, v)| (u - 1, v - 1))
            .collect();
        let g = Graph::from_edges(10, &pairs, &BuildOptions::directed()).unwrap();
        let cfg = Config {
            iterations: Some(2),
            ..Config::default()
        };
        let out = run(&g, &cfg).unwrap();
        let want = [
            0.1477629166666667,
            0.04753375,
            0.1550469444444444,
            0.1597573611111111,
            0.14624,
            0.04753375,
            0.04753375,
            0.1135740277777778,
            0.04753375,
            0.08748375000000001,
        ];
        assert_eq!(out.iterations, 2);
        for (v, (&a, &b)) in out.rank.iter().zip(&want).enumerate() {
            assert!((a - b).abs() <= 1e-4 * b, "vertex {v}: {a} vs {b}");
        }
        verify(&g, &cfg, &out).unwrap();
    }

    #[test]
    fn a_symmetric_cycle_has_uniform_rank_and_converges_at_once() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 2), (2, 3), (3, 0)],
            &BuildOptions::directed(),
        )
        .unwrap();
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.iterations, 1);
        assert!(out.converged);
        assert!(out.rank.iter().all(|&r| (r - 0.25).abs() < 1e-15));
    }

    #[test]
    fn personalized_rank_concentrates_on_the_source() {
        // 0 → 1, 2 isolated; dangling 1 hands its mass back to the source 0.
        let g = Graph::from_edges(3, &[(0, 1)], &BuildOptions::directed()).unwrap();
        let cfg = Config {
            tolerance: 1e-14,
            max_iterations: 1000,
            ..Config::default()
        };
        let out = run_personalized(&g, &cfg, 0).unwrap();
        // Fixed point: x0 = 0.15 + 0.85·x1, x1 = 0.85·x0, x2 = 0.
        let x0 = 0.15 / (1.0 - 0.85 * 0.85);
        assert!((out.rank[0] - x0).abs() < 1e-12);
        assert!((out.rank[1] - 0.85 * x0).abs() < 1e-12);
        assert!(out.rank[2].abs() < 1e-12);
        verify(&g, &cfg.clone(), &out).unwrap_err();
        verify(
            &g,
            &Config {
                personalization: Some(vec![0]),
                ..cfg
            },
            &out,
        )
        .unwrap();
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let g = Graph::from_edges(2, &[(0, 1)], &BuildOptions::directed()).unwrap();
        let bad = |c: Config| run(&g, &c).unwrap_err();
        assert!(matches!(
            bad(Config {
                damping: 1.0,
                ..Config::default()
            }),
            AlgoError::InvalidParameter(_)
        ));
        assert!(matches!(
            bad(Config {
                tolerance: f64::NAN,
                ..Config::default()
            }),
            AlgoError::InvalidParameter(_)
        ));
        assert_eq!(
            bad(Config {
                personalization: Some(vec![5]),
                ..Config::default()
            }),
            AlgoError::NoSuchVertex(5)
        );
        assert!(matches!(
            bad(Config {
                personalization: Some(vec![]),
                ..Config::default()
            }),
            AlgoError::InvalidParameter(_)
        ));
    }

    #[test]
    fn verifier_rejects_corrupted_outputs() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 2), (2, 0), (3, 0)],
            &BuildOptions::directed(),
        )
        .unwrap();
        let cfg = Config::default();
        let good = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &good).unwrap();
        let mut bad = good.clone();
        bad.rank.swap(0, 3);
        assert!(verify(&g, &cfg, &bad)
            .unwrap_err()
            .0
            .contains("fixed point"));
        let mut bad = good.clone();
        bad.rank[2] += 0.01;
        assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("sum"));
        let mut bad = good;
        bad.rank[1] = -bad.rank[1];
        assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("vertex 1"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_reference_and_is_identical_at_any_thread_count(
            spec in graphs(),
            fixed in proptest::option::of(0usize..6),
            source in proptest::option::of(0usize..1000),
        ) {
            let g = spec.build();
            let cfg = Config {
                iterations: fixed,
                tolerance: 1e-10,
                personalization: source.map(|s| vec![(s % g.num_vertices()) as VertexId]),
                ..Config::default()
            };
            let want = reference(&g, &cfg).unwrap();
            verify(&g, &cfg, &want).unwrap();
            let first = with_threads(1, || run(&g, &cfg)).unwrap().unwrap();
            prop_assert_eq!(first.iterations, want.iterations);
            prop_assert_eq!(first.converged, want.converged);
            for (a, b) in first.rank.iter().zip(&want.rank) {
                prop_assert!((a - b).abs() <= 1e-12, "{} vs {}", a, b);
            }
            if let Err(e) = verify(&g, &cfg, &first) {
                return Err(TestCaseError::fail(e.to_string()));
            }
            for t in THREADS {
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                let same = got.rank.iter().zip(&first.rank).all(|(a, b)| a.to_bits() == b.to_bits());
                prop_assert!(same, "{} threads differ from 1 thread", t);
            }
        }
    }
}
