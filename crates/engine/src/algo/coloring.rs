//! Greedy graph colouring.
//!
//! **Returns** [`Output`]: `color[v]` in `0..num_colors` such that no two
//! adjacent vertices share a colour; `num_colors` is the number of colours
//! used (0 for the empty graph). The colouring is *greedy* (Grundy): a vertex
//! of colour `c` has a neighbour of every colour below `c`.
//!
//! **Input.** Coloured on the *undirected simple view* of any graph (distinct
//! in- and out-neighbours other than `v`): direction and duplicate edges are
//! ignored, and self-loops are ignored (a vertex with a loop is coloured as if
//! it had none; no proper colouring could honour a loop). Isolated vertices
//! get colour 0. Weights are ignored.
//!
//! **Method.** Jones & Plassmann, "A parallel graph coloring heuristic"
//! (SIAM J. Sci. Comput. 1993): every vertex gets a pseudo-random priority
//! derived from [`Config::seed`] and its internal id (ties broken by id); a
//! vertex is coloured, with the smallest colour its already coloured
//! neighbours do not use, once all its higher-priority neighbours are
//! coloured. Each round colours an independent set in parallel. The result
//! equals sequential greedy colouring in decreasing priority order, so it
//! depends on the seed (and the internal numbering), never on the thread
//! count. Expected rounds `O(log n / log log n)` on bounded-degree graphs.
//!
//! **Executor fit.** [`ColoringDriver`] runs the same Jones–Plassmann
//! rounds as a vertex program that every executor runs: a pull step in
//! which each candidate gathers its neighbours' colours (or learns that a
//! higher-priority neighbour is still uncoloured), then a push or pull step
//! from the newly coloured vertices that makes their uncoloured neighbours
//! the next candidates. Where `run` counts pending higher neighbours down
//! (a count is not idempotent, so duplicate arcs and a symmetric step's two
//! directions would miscount it), the driver re-checks each candidate; both
//! compute the one greedy colouring of the seed's order, so `run`, the
//! in-memory specialisation that scans the simple view's lists directly,
//! must return exactly the driver's colours; the conformance harness
//! ([`crate::conformance`]) holds them to that.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::triangles::{plain_lists, SimpleView};
use crate::driver::{drive, Driver};
use crate::edge_map::Direction;
use crate::error::{AlgoError, VerifyError};
use crate::program::{Executor, GraphView, InEdges, StepOptions, VertexProgram, Vertices};
use crate::subset::VertexSubset;

/// Default seed of the priorities.
pub const DEFAULT_SEED: u64 = 0x5EED_C010_4EED;

/// Colour of a vertex not (yet) coloured; never present in a finished output.
pub const UNCOLORED: u32 = u32::MAX;

/// Parameters of the colouring.
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

/// A colouring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Colour of each vertex, in `0..num_colors`, indexed by internal id.
    pub color: Vec<u32>,
    /// Number of colours used (`max color + 1`, 0 for the empty graph).
    pub num_colors: u32,
}

/// The pseudo-random priority of vertex `v` under `seed` (SplitMix64 of the
/// seed and the id). Compare `(priority(seed, v), v)` for a strict order.
pub(crate) fn priority(seed: u64, v: VertexId) -> u64 {
    let mut z = seed ^ (u64::from(v).wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Smallest colour not in `used` (colours of some neighbours); `scratch`
/// is a reusable buffer.
fn smallest_free(used: impl Iterator<Item = u32>, degree: usize, scratch: &mut Vec<bool>) -> u32 {
    // A vertex of degree d always finds a free colour in 0..=d.
    scratch.clear();
    scratch.resize(degree + 1, false);
    for c in used {
        if (c as usize) <= degree {
            scratch[c as usize] = true;
        }
    }
    scratch.iter().position(|&t| !t).unwrap_or(degree) as u32
}

/// Colours the graph in parallel (Jones–Plassmann).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let view = SimpleView::new(g);
    let n = g.num_vertices();
    let key = |v: VertexId| (priority(cfg.seed, v), v);
    let pending: Vec<AtomicU32> = (0..n as VertexId)
        .into_par_iter()
        .map(|v| {
            let kv = key(v);
            AtomicU32::new(view.neighbors(v).iter().filter(|&&u| key(u) > kv).count() as u32)
        })
        .collect();
    let color: Vec<AtomicU32> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU32::new(UNCOLORED))
        .collect();
    let mut frontier: Vec<VertexId> = (0..n as VertexId)
        .into_par_iter()
        .filter(|&v| pending[v as usize].load(Ordering::Relaxed) == 0)
        .collect();
    while !frontier.is_empty() {
        // The frontier is independent (of two adjacent vertices, the lower
        // one waits for the higher), and all higher-priority neighbours of
        // its vertices were coloured in earlier rounds.
        frontier.par_iter().for_each_init(Vec::new, |scratch, &v| {
            let nb = view.neighbors(v);
            let used = nb
                .iter()
                .map(|&u| color[u as usize].load(Ordering::Relaxed));
            let c = smallest_free(used, nb.len(), scratch);
            color[v as usize].store(c, Ordering::Relaxed);
        });
        frontier = frontier
            .par_iter()
            .with_max_len(64)
            .flat_map_iter(|&v| {
                let kv = key(v);
                let pending = &pending;
                view.neighbors(v).iter().copied().filter(move |&u| {
                    key(u) < kv && pending[u as usize].fetch_sub(1, Ordering::Relaxed) == 1
                })
            })
            .collect();
    }
    let color: Vec<u32> = color.into_iter().map(AtomicU32::into_inner).collect();
    let num_colors = color.par_iter().map(|&c| c + 1).max().unwrap_or(0);
    Ok(Output { color, num_colors })
}

/// Colours the graph sequentially: greedy in decreasing priority order.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let adj = plain_lists(g);
    let n = adj.len();
    let mut order: Vec<VertexId> = (0..n as VertexId).collect();
    order.sort_unstable_by_key(|&v| std::cmp::Reverse((priority(cfg.seed, v), v)));
    let mut color = vec![UNCOLORED; n];
    let mut scratch = Vec::new();
    for v in order {
        let nb = &adj[v as usize];
        let used = nb.iter().map(|&u| color[u as usize]);
        color[v as usize] = smallest_free(used, nb.len(), &mut scratch);
    }
    let num_colors = color.iter().map(|&c| c + 1).max().unwrap_or(0);
    Ok(Output { color, num_colors })
}

/// Checks `out` on any graph: every vertex coloured below `num_colors`,
/// `num_colors` is the number used, no edge `u–v` (`u ≠ v`) joins equal
/// colours, and every vertex of colour `c` has neighbours of all colours
/// below `c` (the greedy property). Names the vertex or edge that fails.
pub fn verify(g: &Graph, _cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.color.len() != n {
        return Err(VerifyError::new(format!(
            "color has {} entries for {n} vertices",
            out.color.len()
        )));
    }
    if let Some(v) = (0..n).find(|&v| out.color[v] >= out.num_colors) {
        return Err(VerifyError::new(format!(
            "vertex {v} has colour {} but num_colors is {}",
            out.color[v], out.num_colors
        )));
    }
    let used = out.color.iter().map(|&c| c + 1).max().unwrap_or(0);
    if used != out.num_colors {
        return Err(VerifyError::new(format!(
            "num_colors is {} but colours 0..{used} are used",
            out.num_colors
        )));
    }
    let adj = plain_lists(g);
    let mut seen = Vec::new();
    for (v, nb) in adj.iter().enumerate() {
        let c = out.color[v];
        if let Some(&u) = nb.iter().find(|&&u| out.color[u as usize] == c) {
            return Err(VerifyError::new(format!(
                "edge {v} - {u} joins two vertices of colour {c}"
            )));
        }
        seen.clear();
        seen.resize(c as usize, false);
        for &u in nb {
            if let Some(s) = seen.get_mut(out.color[u as usize] as usize) {
                *s = true;
            }
        }
        if let Some(missing) = seen.iter().position(|&s| !s) {
            return Err(VerifyError::new(format!(
                "vertex {v} has colour {c} but no neighbour of colour {missing}, so the colouring is not greedy"
            )));
        }
    }
    Ok(())
}

/// Colouring on any executor through [`ColoringDriver`]: the same colours
/// as [`run`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, ColoringDriver::new(exec.view(), cfg)?)
}

/// The phases of [`ColoringDriver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Each candidate whose higher-priority neighbours are all coloured
    /// takes the smallest colour they do not use (pull only).
    Colour,
    /// The uncoloured neighbours of the newly coloured vertices become the
    /// next candidates (push or pull).
    Notify,
}

/// The message of [`JonesPlassmann`]: what a vertex learns from (a part
/// of) its neighbours.
///
/// `combine` is associative, commutative and idempotent ([`Gather::Blocked`]
/// absorbs; colour sets unite), so duplicate arcs, the two directions of a
/// symmetric step and any split of the edges give the same combined
/// message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gather {
    /// Some higher-priority neighbour is still uncoloured.
    Blocked,
    /// The colours of the coloured neighbours seen, as a bitset (bit `c`
    /// of word `c / 64`); in the notify phase, empty.
    Used(Vec<u64>),
}

/// Byte form: tag 0 (blocked), or tag 1 and the colour words.
impl crate::wire::Wire for Gather {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Gather::Blocked => out.push(0),
            Gather::Used(words) => {
                out.push(1);
                words.encode(out);
            }
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        match u8::decode(input)? {
            0 => Some(Gather::Blocked),
            1 => Some(Gather::Used(Vec::decode(input)?)),
            _ => None,
        }
    }
}

impl Gather {
    /// Adds colour `c` to a [`Gather::Used`] set.
    fn add(words: &mut Vec<u64>, c: u32) {
        let w = c as usize / 64;
        if words.len() <= w {
            words.resize(w + 1, 0);
        }
        words[w] |= 1 << (c % 64);
    }

    /// The smallest colour not in the set.
    fn smallest_free(words: &[u64]) -> u32 {
        match words.iter().position(|&w| w != u64::MAX) {
            Some(i) => 64 * i as u32 + words[i].trailing_ones(),
            None => 64 * words.len() as u32,
        }
    }
}

/// The program of [`ColoringDriver`]: Jones–Plassmann over the priorities
/// of [`run`], with a colour and a candidate flag per vertex.
///
/// Self-loops are skipped by the signals (a vertex is never its own
/// neighbour). A vertex's colour changes once, from [`UNCOLORED`] to its
/// final value, so a signal that reads a neighbour's colour reads either
/// "uncoloured" (and, for a higher neighbour, blocks) or the final colour.
#[derive(Debug)]
pub struct JonesPlassmann {
    color: Vec<AtomicU32>,
    candidate: Vec<AtomicBool>,
    seed: u64,
    phase: Phase,
}

impl JonesPlassmann {
    #[inline]
    fn key(&self, v: VertexId) -> (u64, VertexId) {
        (priority(self.seed, v), v)
    }
    #[inline]
    fn color(&self, v: VertexId) -> u32 {
        self.color[v as usize].load(Ordering::Relaxed)
    }
    /// Makes uncoloured `v` a candidate; whether this call did.
    #[inline]
    fn nominate(&self, v: VertexId) -> bool {
        let flag = &self.candidate[v as usize];
        self.color(v) == UNCOLORED
            && !flag.load(Ordering::Relaxed)
            && !flag.swap(true, Ordering::Relaxed)
    }
}

impl VertexProgram for JonesPlassmann {
    type Msg = Gather;

    fn combine(&self, a: Gather, b: Gather) -> Gather {
        match (a, b) {
            (Gather::Used(mut x), Gather::Used(y)) => {
                if x.len() < y.len() {
                    return self.combine(Gather::Used(y), Gather::Used(x));
                }
                for (a, b) in x.iter_mut().zip(&y) {
                    *a |= b;
                }
                Gather::Used(x)
            }
            _ => Gather::Blocked,
        }
    }

    fn cond(&self, v: VertexId) -> bool {
        match self.phase {
            Phase::Colour => {
                self.color(v) == UNCOLORED && self.candidate[v as usize].load(Ordering::Relaxed)
            }
            Phase::Notify => {
                self.color(v) == UNCOLORED && !self.candidate[v as usize].load(Ordering::Relaxed)
            }
        }
    }

    fn sparse_signal(&self, _src: VertexId) -> Option<Gather> {
        match self.phase {
            Phase::Notify => Some(Gather::Used(Vec::new())),
            // Pull-only phase (the driver forces pull).
            Phase::Colour => None,
        }
    }

    fn sparse_slot(&self, dst: VertexId, _m: Gather) -> bool {
        // A newly coloured vertex's own self-loop finds it coloured.
        self.phase == Phase::Notify && self.nominate(dst)
    }

    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<Gather> {
        match self.phase {
            Phase::Colour => {
                let kv = self.key(v);
                let mut used = Vec::new();
                for (u, _) in edges.iter().filter(|&(u, _)| u != v) {
                    match self.color(u) {
                        // A lower neighbour waits for `v` and is never
                        // coloured before it; a higher one blocks `v`.
                        UNCOLORED if self.key(u) > kv => return Some(Gather::Blocked),
                        UNCOLORED => {}
                        c => Gather::add(&mut used, c),
                    }
                }
                // Even with no edges: the slot must run to colour `v`.
                Some(Gather::Used(used))
            }
            // The active sources are the newly coloured vertices.
            Phase::Notify => edges
                .active()
                .any(|(u, _)| u != v)
                .then(|| Gather::Used(Vec::new())),
        }
    }

    fn dense_slot(&self, v: VertexId, m: Gather) -> bool {
        match (self.phase, m) {
            (Phase::Colour, Gather::Used(words)) => {
                let c = Gather::smallest_free(&words);
                self.color[v as usize].store(c, Ordering::Relaxed);
                true
            }
            (Phase::Colour, Gather::Blocked) => false,
            (Phase::Notify, _) => self.nominate(v),
        }
    }
}

/// Colouring as a step machine that any executor runs: Jones–Plassmann
/// rounds with the priorities of [`run`]. A round is a pull step over the
/// candidates (each one whose higher-priority neighbours are all coloured
/// takes the smallest colour its coloured neighbours do not use), then a
/// step from the newly coloured vertices that makes their uncoloured
/// neighbours the next candidates. All vertices are candidates in the first
/// round. Every step follows both directions of every arc (the undirected
/// view).
///
/// Invariants: a vertex is coloured only after all its higher-priority
/// neighbours and before any lower one (the lower one is blocked by it
/// until then), so its colour is the smallest one unused by its higher
/// neighbours: the sequential greedy colour in decreasing priority order,
/// which is unique for the seed and equals [`run`]'s. A vertex becomes a
/// candidate in the round after its last higher neighbour is coloured (or
/// in the first), so it is coloured then, and every round colours at least
/// the highest uncoloured vertex.
#[derive(Debug)]
pub struct ColoringDriver {
    p: JonesPlassmann,
    /// The frontier of the step just run.
    current: VertexSubset,
    /// The activated vertices of the last superstep.
    last: Option<VertexSubset>,
}

impl ColoringDriver {
    /// The colouring of a graph seen through `view` under `cfg.seed`.
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let n = view.num_vertices();
        Ok(ColoringDriver {
            p: JonesPlassmann {
                color: (0..n).map(|_| AtomicU32::new(UNCOLORED)).collect(),
                candidate: (0..n).map(|_| AtomicBool::new(true)).collect(),
                seed: cfg.seed,
                phase: Phase::Notify,
            },
            current: VertexSubset::empty(n),
            last: Some(VertexSubset::all(n)),
        })
    }
}

impl Driver for ColoringDriver {
    type Program = JonesPlassmann;
    type Output = Output;

    fn program(&self) -> &JonesPlassmann {
        &self.p
    }

    fn options(&self) -> StepOptions {
        StepOptions {
            symmetric: true,
            direction: match self.p.phase {
                Phase::Colour => Direction::Pull,
                Phase::Notify => Direction::Auto,
            },
            ..StepOptions::default()
        }
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let next = self.last.take().filter(|s| !s.is_empty())?;
        match self.p.phase {
            Phase::Colour => {
                // The candidates were heard; blocked ones wait for the
                // next higher neighbour to be coloured.
                let p = &self.p;
                ops.process_vertices(&self.current, |v| {
                    p.candidate[v as usize].store(false, Ordering::Relaxed);
                    false
                });
                self.p.phase = Phase::Notify;
            }
            Phase::Notify => self.p.phase = Phase::Colour,
        }
        self.current = next.clone();
        Some(next)
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        self.last = Some(next);
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        let color: Vec<u32> = self
            .p
            .color
            .into_iter()
            .map(AtomicU32::into_inner)
            .collect();
        let num_colors = color.iter().map(|&c| c.wrapping_add(1)).max().unwrap_or(0);
        Output { color, num_colors }
    }

    fn state_bytes(&self) -> u64 {
        5 * self.p.color.len() as u64
    }
}

/// The conformance check of [`ColoringDriver`] on `exec` (see
/// [`crate::conformance`]): with a seed drawn from `seed`, the colours
/// equal [`run`]'s and pass [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let cfg = Config { seed };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("color", &got, &fast)
}

#[cfg(test)]
mod tests {
    use super::super::testgraphs::{graphs, THREADS};
    use super::super::triangles::testkit::graph;
    use super::*;
    use crate::with_threads;
    use proptest::prelude::*;

    #[test]
    fn k4_needs_four_colours_and_isolated_vertices_get_zero() {
        let e = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
        let g = graph(5, &e, false);
        let out = run(&g, &Config::default()).unwrap();
        assert_eq!(out.num_colors, 4);
        assert_eq!(out.color[4], 0);
        let mut c = out.color[..4].to_vec();
        c.sort_unstable();
        assert_eq!(c, vec![0, 1, 2, 3]);
        verify(&g, &Config::default(), &out).unwrap();
    }

    #[test]
    fn an_even_cycle_with_loops_and_duplicates_is_properly_coloured() {
        let g = graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 0), (1, 2)], true);
        for seed in 0..8 {
            let cfg = Config { seed };
            let out = run(&g, &cfg).unwrap();
            verify(&g, &cfg, &out).unwrap();
            assert!(out.num_colors <= 3);
            assert_eq!(out, reference(&g, &cfg).unwrap());
        }
    }

    #[test]
    fn verifier_rejects_improper_and_non_greedy_colourings() {
        let g = graph(3, &[(0, 1), (1, 2)], false);
        let cfg = Config::default();
        let bad = Output {
            color: vec![0, 0, 1],
            num_colors: 2,
        };
        let err = verify(&g, &cfg, &bad).unwrap_err();
        assert!(err.0.contains("edge 0 - 1"), "{err}");
        let lazy = Output {
            color: vec![0, 1, 2],
            num_colors: 3,
        };
        let err = verify(&g, &cfg, &lazy).unwrap_err();
        assert!(err.0.contains("vertex 2"), "{err}");
        let short = Output {
            color: vec![0, 1, 0],
            num_colors: 1,
        };
        assert!(verify(&g, &cfg, &short).is_err());
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
