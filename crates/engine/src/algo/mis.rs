//! Maximal independent set (MIS).
//!
//! **Returns** [`Output`]: `in_set[v]` says whether `v` is in the set, `size`
//! how many are. No two vertices of the set are adjacent, and every vertex
//! outside it has a neighbour inside (maximal, not maximum).
//!
//! **Input.** On the *undirected simple view* of any graph (distinct in- and
//! out-neighbours other than `v`): direction and duplicate edges are
//! ignored, and self-loops are ignored (a vertex with a loop may be in the
//! set). Isolated vertices are always in the set. Weights are ignored.
//!
//! **Method.** Luby's algorithm ("A simple parallel algorithm for the
//! maximal independent set problem", STOC 1985) with priorities fixed once
//! per run, as analysed by Blelloch, Fineman & Shun ("Greedy sequential
//! maximal independent set and matching are parallel on average", SPAA
//! 2012): every vertex gets a pseudo-random priority from [`Config::seed`]
//! and its internal id (ties by id); each round, every undecided vertex whose
//! priority beats all its undecided neighbours joins the set, and their
//! neighbours leave. The result is the greedy (lexicographically first) MIS
//! in decreasing priority order, so it depends only on the seed and the
//! internal numbering, never on the thread count. Expected `O(log n)` rounds.
//!
//! **Executor fit.** [`MisDriver`] runs the same Luby rounds as a vertex
//! program that every executor runs: a pull step in which each undecided
//! vertex gathers the highest rank among its neighbours not yet out (and
//! joins when its own is higher), then a push or pull step from the joiners
//! that excludes their undecided neighbours. Both it and `run` compute the
//! one greedy set of the seed's order, so `run`, the in-memory
//! specialisation that scans the simple view's lists directly, must return
//! exactly the driver's set; the conformance harness
//! ([`crate::conformance`]) holds them to that.

use std::sync::atomic::{AtomicU8, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::coloring::priority;
use super::triangles::{plain_lists, SimpleView};
use crate::driver::{drive, Driver};
use crate::edge_map::Direction;
use crate::error::{AlgoError, VerifyError};
use crate::program::{Executor, GraphView, InEdges, StepOptions, VertexProgram, Vertices};
use crate::subset::VertexSubset;

/// Default seed of the priorities.
pub const DEFAULT_SEED: u64 = 0x5EED_0015_4EED;

const UNDECIDED: u8 = 0;
const IN: u8 = 1;
const OUT: u8 = 2;

/// Parameters of the MIS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Seed of the vertex priorities; default [`DEFAULT_SEED`].
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { seed: DEFAULT_SEED }
    }
}

/// A maximal independent set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Membership of each vertex, indexed by internal id.
    pub in_set: Vec<bool>,
    /// Number of vertices in the set.
    pub size: usize,
}

/// Computes the MIS in parallel (Luby rounds with fixed priorities).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let view = SimpleView::new(g);
    let n = g.num_vertices();
    let key = |v: VertexId| (priority(cfg.seed, v), v);
    let state: Vec<AtomicU8> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU8::new(UNDECIDED))
        .collect();
    let mut undecided: Vec<VertexId> = (0..n as VertexId).collect();
    while !undecided.is_empty() {
        // Read-only phase: local maxima among undecided vertices.
        let joiners: Vec<VertexId> = undecided
            .par_iter()
            .copied()
            .filter(|&v| {
                let kv = key(v);
                view.neighbors(v)
                    .iter()
                    .all(|&u| state[u as usize].load(Ordering::Relaxed) != UNDECIDED || key(u) < kv)
            })
            .collect();
        joiners
            .par_iter()
            .for_each(|&v| state[v as usize].store(IN, Ordering::Relaxed));
        // Joiners are pairwise non-adjacent, so these stores never hit one.
        joiners.par_iter().with_max_len(64).for_each(|&v| {
            for &u in view.neighbors(v) {
                state[u as usize].store(OUT, Ordering::Relaxed);
            }
        });
        undecided = undecided
            .par_iter()
            .copied()
            .filter(|&v| state[v as usize].load(Ordering::Relaxed) == UNDECIDED)
            .collect();
    }
    let in_set: Vec<bool> = state
        .into_par_iter()
        .map(|s| s.into_inner() == IN)
        .collect();
    let size = in_set.par_iter().filter(|&&b| b).count();
    Ok(Output { in_set, size })
}

/// Computes the MIS sequentially: greedy in decreasing priority order.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let adj = plain_lists(g);
    let n = adj.len();
    let mut order: Vec<VertexId> = (0..n as VertexId).collect();
    order.sort_unstable_by_key(|&v| std::cmp::Reverse((priority(cfg.seed, v), v)));
    let mut in_set = vec![false; n];
    for v in order {
        if !adj[v as usize].iter().any(|&u| in_set[u as usize]) {
            in_set[v as usize] = true;
        }
    }
    let size = in_set.iter().filter(|&&b| b).count();
    Ok(Output { in_set, size })
}

/// Checks `out` on any graph: `size` matches, no edge `u–v` (`u ≠ v`) lies
/// inside the set, and every vertex outside has a neighbour inside. Names
/// the edge or vertex that fails.
pub fn verify(g: &Graph, _cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.in_set.len() != n {
        return Err(VerifyError::new(format!(
            "in_set has {} entries for {n} vertices",
            out.in_set.len()
        )));
    }
    let size = out.in_set.iter().filter(|&&b| b).count();
    if size != out.size {
        return Err(VerifyError::new(format!(
            "size is {} but {size} vertices are in the set",
            out.size
        )));
    }
    for (v, nb) in plain_lists(g).iter().enumerate() {
        let inside = nb.iter().find(|&&u| out.in_set[u as usize]);
        match (out.in_set[v], inside) {
            (true, Some(&u)) => {
                return Err(VerifyError::new(format!(
                    "edge {v} - {u} has both ends in the set"
                )))
            }
            (false, None) => {
                return Err(VerifyError::new(format!(
                "vertex {v} is outside the set and so is every neighbour: the set is not maximal"
            )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// MIS on any executor through [`MisDriver`]: the same set as [`run`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, MisDriver::new(exec.view(), cfg)?)
}

/// A vertex's rank: its priority under the seed, ties broken by id, so
/// that no two vertices rank equal.
type Key = (u64, VertexId);

/// The phases of [`MisDriver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Each undecided vertex ranked above all its undecided neighbours
    /// joins the set (pull only).
    Join,
    /// The joiners' undecided neighbours leave (push or pull).
    Exclude,
}

/// The program of [`MisDriver`]: one decision byte per vertex.
///
/// Messages are [`Key`]s (or `None`, "no rival"), combined by maximum
/// (associative, commutative and idempotent, so duplicate arcs and the two
/// directions of a symmetric step change nothing). Self-loops are skipped
/// by the signals: a vertex is never its own neighbour.
#[derive(Debug)]
pub struct Luby {
    state: Vec<AtomicU8>,
    seed: u64,
    phase: Phase,
}

impl Luby {
    #[inline]
    fn key(&self, v: VertexId) -> Key {
        (priority(self.seed, v), v)
    }
    #[inline]
    fn state(&self, v: VertexId) -> u8 {
        self.state[v as usize].load(Ordering::Relaxed)
    }
    /// Moves undecided `v` out of the set; whether this call did.
    #[inline]
    fn exclude(&self, v: VertexId) -> bool {
        self.state(v) == UNDECIDED
            && self.state[v as usize]
                .compare_exchange(UNDECIDED, OUT, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

impl VertexProgram for Luby {
    /// Join: the highest rival's key (`None`: no rival). Exclude: a
    /// joiner's key (any `Some` excludes).
    type Msg = Option<Key>;

    fn combine(&self, a: Option<Key>, b: Option<Key>) -> Option<Key> {
        a.max(b)
    }

    fn cond(&self, v: VertexId) -> bool {
        self.state(v) == UNDECIDED
    }

    fn sparse_signal(&self, src: VertexId) -> Option<Option<Key>> {
        match self.phase {
            Phase::Exclude => Some(Some(self.key(src))),
            // Pull-only phase (the driver forces pull).
            Phase::Join => None,
        }
    }

    fn sparse_slot(&self, dst: VertexId, m: Option<Key>) -> bool {
        match self.phase {
            // A joiner's own self-loop finds it IN, not undecided.
            Phase::Exclude => m.is_some() && self.exclude(dst),
            Phase::Join => false,
        }
    }

    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<Option<Key>> {
        match self.phase {
            // Rivals are the neighbours not yet out: undecided ones, and
            // those joining in this very step (so a step that sees a
            // neighbour's slot already run still sees it as a rival). No
            // vertex that joined in an earlier round has an undecided
            // neighbour, so none is counted here.
            Phase::Join => Some(
                edges
                    .iter()
                    .filter(|&(u, _)| u != v && self.state(u) != OUT)
                    .map(|(u, _)| self.key(u))
                    .max(),
            ),
            // The active sources are this round's joiners.
            Phase::Exclude => edges
                .active()
                .find(|&(u, _)| u != v)
                .map(|(u, _)| Some(self.key(u))),
        }
    }

    fn dense_slot(&self, v: VertexId, m: Option<Key>) -> bool {
        match self.phase {
            Phase::Join => {
                let wins = m.is_none_or(|rival| rival < self.key(v));
                if wins {
                    self.state[v as usize].store(IN, Ordering::Relaxed);
                }
                wins
            }
            Phase::Exclude => m.is_some() && self.exclude(v),
        }
    }
}

/// MIS as a step machine that any executor runs: Luby rounds with the
/// priorities of [`run`] fixed once. A round is a pull step over the
/// undecided vertices (each one ranked above every undecided neighbour
/// joins; joiners are pairwise non-adjacent, as the lower of two adjacent
/// ones sees the higher as a rival) and a step from the joiners that
/// excludes their undecided neighbours. Every step follows both directions
/// of every arc (the undirected view).
///
/// Invariant after each round: a vertex is IN exactly when the greedy scan
/// in decreasing rank order ([`reference`]) puts it in the set, and
/// decided vertices stay decided; so the set is that unique greedy set for
/// the seed, the set [`run`] returns, on any executor and thread count.
/// The highest-ranked undecided vertex always joins, so every round
/// decides at least one vertex.
#[derive(Debug)]
pub struct MisDriver {
    p: Luby,
    /// Vertices undecided at the start of the current round.
    undecided: VertexSubset,
    /// The activated vertices of the last superstep.
    last: Option<VertexSubset>,
}

impl MisDriver {
    /// The MIS of a graph seen through `view` under `cfg.seed`.
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let n = view.num_vertices();
        Ok(MisDriver {
            p: Luby {
                state: (0..n).map(|_| AtomicU8::new(UNDECIDED)).collect(),
                seed: cfg.seed,
                phase: Phase::Exclude,
            },
            undecided: VertexSubset::all(n),
            last: None,
        })
    }
}

impl Driver for MisDriver {
    type Program = Luby;
    type Output = Output;

    fn program(&self) -> &Luby {
        &self.p
    }

    fn options(&self) -> StepOptions {
        StepOptions {
            symmetric: true,
            direction: match self.p.phase {
                Phase::Join => Direction::Pull,
                Phase::Exclude => Direction::Auto,
            },
            ..StepOptions::default()
        }
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        match self.p.phase {
            Phase::Join => {
                // No joiner can only mean an executor that broke the laws:
                // stop rather than loop (verify then rejects the set).
                let joiners = self.last.take().filter(|j| !j.is_empty())?;
                self.p.phase = Phase::Exclude;
                Some(joiners)
            }
            Phase::Exclude => {
                let p = &self.p;
                self.undecided = ops.process_vertices(&self.undecided, |v| p.cond(v));
                self.p.phase = Phase::Join;
                Some(self.undecided.clone()).filter(|u| !u.is_empty())
            }
        }
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        self.last = Some(next);
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        let in_set: Vec<bool> = self
            .p
            .state
            .into_iter()
            .map(|s| s.into_inner() == IN)
            .collect();
        let size = in_set.iter().filter(|&&b| b).count();
        Output { in_set, size }
    }

    fn state_bytes(&self) -> u64 {
        self.p.state.len() as u64
    }
}

/// The conformance check of [`MisDriver`] on `exec` (see
/// [`crate::conformance`]): with a seed drawn from `seed`, the set equals
/// [`run`]'s and passes [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let cfg = Config { seed };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("in_set", &got, &fast)
}

#[cfg(test)]
mod tests {
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::with_threads;
    use proptest::prelude::*;

    #[test]
    fn a_star_takes_the_centre_or_all_leaves() {
        let g = graph(5, &[(0, 1), (0, 2), (0, 3), (0, 4)], false);
        for seed in 0..16 {
            let cfg = Config { seed };
            let out = run(&g, &cfg).unwrap();
            assert!(out.size == 1 && out.in_set[0] || out.size == 4 && !out.in_set[0]);
            verify(&g, &cfg, &out).unwrap();
        }
    }

    #[test]
    fn isolated_and_looped_vertices_join() {
        let g = graph(3, &[(1, 1), (1, 1)], true);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.in_set, vec![true, true, true]);
        assert_eq!(out.size, 3);
    }

    #[test]
    fn verifier_rejects_dependent_and_non_maximal_sets() {
        let g = graph(3, &[(0, 1), (1, 2)], true);
        let cfg = Config::default();
        let both = Output {
            in_set: vec![true, true, false],
            size: 2,
        };
        let err = verify(&g, &cfg, &both).unwrap_err();
        assert!(err.0.contains("edge 0 - 1"), "{err}");
        let sparse = Output {
            in_set: vec![true, false, false],
            size: 1,
        };
        let err = verify(&g, &cfg, &sparse).unwrap_err();
        assert!(err.0.contains("vertex 2"), "{err}");
        let miscounted = Output {
            in_set: vec![true, false, true],
            size: 3,
        };
        assert!(verify(&g, &cfg, &miscounted).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn run_matches_reference_at_any_thread_count(spec in graphs(), seed in any::<u64>()) {
            let g = spec.build();
            let cfg = Config { seed };
            let want = reference(&g, &cfg).unwrap();
            for t in THREADS {
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                prop_assert_eq!(&got, &want);
            }
            prop_assert!(verify(&g, &cfg, &want).is_ok());
        }

        #[test]
        fn the_driver_agrees_with_run_on_any_executor(
            spec in graphs(),
            seed in any::<u64>(),
            threads in 1usize..=4,
        ) {
            let g = spec.build();
            let adversary = crate::conformance::Adversary::new(&g, seed);
            let r = with_threads(threads, || check_on(&g, &adversary, seed)).unwrap();
            prop_assert!(r.is_ok(), "adversary: {:?}", r);
            let r = check_on(&g, &crate::program::InMemory::new(&g), seed);
            prop_assert!(r.is_ok(), "in memory: {:?}", r);
        }
    }
}
