//! The adversarial executor every driver is held to, and that the
//! out-of-core and MPI executors must behave like.
//!
//! [`Adversary`] runs supersteps the way a distributed or out-of-core
//! executor may, within the contract's laws (see [`crate::program`]):
//! - it picks push or pull at random each superstep, unless the
//!   program's [`Modes`] or the options' direction fix one;
//! - a push step computes every active vertex's signal first, then
//!   delivers the messages per destination in random order, combined in
//!   random groups (an interval's message log, an MPI rank's mirrors);
//! - a pull step splits every vertex's gathered edges into 1–3 random
//!   parts (MPI ranks), computes each part's signal and combines the parts
//!   in random order before the slot;
//! - vertex steps run in random order and hand back sparse or dense
//!   subsets at random; sums are taken in a random block order (so they
//!   match [`crate::program::InMemory`]'s up to rounding only).
//!
//! Randomness comes from a seed and a step counter, hashed per vertex, so
//! a run is reproducible at any thread count.
use std::sync::atomic::{AtomicU64, Ordering};

use plexus_graph::{Graph, VertexId, Weight};
use rayon::prelude::*;

use crate::edge_map::{Direction, Mode};
use crate::program::{
    Active, Executor, GraphView, InEdges, Modes, Step, StepOptions, Traversal, VertexProgram,
    Vertices,
};
use crate::subset::VertexSubset;

/// SplitMix64: a well-mixed hash of one word.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An executor that exercises every freedom the contract gives executors.
#[derive(Debug)]
pub struct Adversary<'g> {
    g: &'g Graph,
    seed: u64,
    /// Calls made so far (each draws fresh randomness).
    calls: AtomicU64,
    /// Supersteps run in each mode: `[sparse, dense]`.
    modes: [AtomicU64; 2],
}

impl<'g> Adversary<'g> {
    /// An adversary over `g` whose choices follow from `seed`.
    pub fn new(g: &'g Graph, seed: u64) -> Self {
        Adversary {
            g,
            seed,
            calls: AtomicU64::new(0),
            modes: [AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// Supersteps run so far as `(sparse, dense)`.
    pub fn modes_used(&self) -> (u64, u64) {
        (
            self.modes[0].load(Ordering::Relaxed),
            self.modes[1].load(Ordering::Relaxed),
        )
    }

    /// A fresh salt for one call.
    fn salt(&self) -> u64 {
        let c = self.calls.fetch_add(1, Ordering::Relaxed);
        mix(self.seed ^ mix(c))
    }

    fn sparse_step<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        t: Traversal,
        salt: u64,
    ) -> Vec<VertexId> {
        let (forward, backward) = t.lists(self.g);
        let mut ids = frontier.to_sorted_vec();
        ids.sort_by_key(|&u| mix(salt ^ u64::from(u)));
        // Every signal first, as an executor that logs messages does.
        let mut msgs: Vec<(VertexId, u64, P::Msg)> = ids
            .par_iter()
            .flat_map_iter(|&u| {
                let m = p.sparse_signal(u);
                let mut out = Vec::new();
                if let Some(m) = m {
                    let lists = if t.symmetric {
                        vec![forward, backward]
                    } else {
                        vec![forward]
                    };
                    for adj in lists {
                        let ws = adj.weights(u);
                        for (i, &v) in adj.neighbors(u).iter().enumerate() {
                            let w: Weight = ws.map_or(1.0, |ws| ws[i]);
                            let key = mix(salt ^ (u64::from(u) << 32) ^ i as u64);
                            out.push((v, key, p.over_edge(m.clone(), w)));
                        }
                    }
                }
                out
            })
            .collect();
        msgs.par_sort_by_key(|&(v, key, _)| (v, key));
        // Per destination: random groups, each combined, applied in turn.
        let starts: Vec<usize> = (0..msgs.len())
            .filter(|&i| i == 0 || msgs[i - 1].0 != msgs[i].0)
            .collect();
        let msgs = &msgs;
        starts
            .par_iter()
            .enumerate()
            .filter_map(|(k, &s)| {
                let e = starts.get(k + 1).copied().unwrap_or(msgs.len());
                let v = msgs[s].0;
                let mut woke = false;
                let mut acc: Option<P::Msg> = None;
                for (j, (_, key, m)) in msgs[s..e].iter().enumerate() {
                    acc = Some(match acc {
                        Some(a) => p.combine(a, m.clone()),
                        None => m.clone(),
                    });
                    let last = s + j + 1 == e;
                    if last || mix(*key).is_multiple_of(3) {
                        if let Some(a) = acc.take() {
                            woke |= p.sparse_slot(v, a);
                        }
                    }
                }
                woke.then_some(v)
            })
            .collect()
    }

    fn dense_step<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        t: Traversal,
        salt: u64,
    ) -> Vec<VertexId> {
        let n = self.g.num_vertices();
        let converted;
        let active = if frontier.len() == n {
            Active::All
        } else {
            converted = frontier.to_dense();
            Active::Bitmap(converted.as_bitmap().unwrap_or(&[]))
        };
        let (forward, backward) = t.lists(self.g);
        let weighted = self.g.is_weighted();
        let mut order: Vec<VertexId> = (0..n as VertexId).collect();
        order.sort_by_key(|&v| mix(salt ^ u64::from(v)));
        order
            .par_iter()
            .filter_map(|&v| {
                if !p.cond(v) {
                    return None;
                }
                let mut edges: Vec<(VertexId, Weight)> =
                    InEdges::of(backward, v, active).iter().collect();
                if t.symmetric {
                    edges.extend(InEdges::of(forward, v, active).iter());
                }
                let h = mix(salt ^ u64::from(v));
                let parts = 1 + (h % 3) as usize;
                let mut split: Vec<Vec<(VertexId, Weight)>> = vec![Vec::new(); parts];
                for (i, e) in edges.into_iter().enumerate() {
                    split[(mix(h ^ i as u64) % parts as u64) as usize].push(e);
                }
                if h & 8 != 0 {
                    split.reverse();
                }
                let mut msg: Option<P::Msg> = None;
                for mut part in split {
                    part.sort_by_key(|&(u, _)| u);
                    let sources: Vec<VertexId> = part.iter().map(|e| e.0).collect();
                    let ws: Vec<Weight> = part.iter().map(|e| e.1).collect();
                    let view = InEdges::new(&sources, weighted.then_some(&ws[..]), active);
                    if let Some(m) = p.dense_signal(v, view) {
                        msg = Some(match msg {
                            Some(a) => p.combine(a, m),
                            None => m,
                        });
                    }
                }
                msg.and_then(|m| p.dense_slot(v, m).then_some(v))
            })
            .collect()
    }
}

impl Vertices for Adversary<'_> {
    fn view(&self) -> &dyn GraphView {
        self.g
    }

    fn process_vertices<F: Fn(VertexId) -> bool + Sync>(
        &self,
        subset: &VertexSubset,
        f: F,
    ) -> VertexSubset {
        let salt = self.salt();
        let mut ids = subset.to_sorted_vec();
        ids.sort_by_key(|&v| mix(salt ^ u64::from(v)));
        let kept: Vec<VertexId> = ids.par_iter().copied().filter(|&v| f(v)).collect();
        let out = VertexSubset::from_ids(subset.num_vertices(), kept);
        if salt & 1 == 0 {
            out.to_dense()
        } else {
            out
        }
    }

    fn vertex_sum<F: Fn(VertexId) -> f64 + Sync>(&self, f: F) -> f64 {
        let salt = self.salt();
        let n = self.g.num_vertices();
        let block = 1 + (salt % 64) as usize;
        let mut sums: Vec<(u64, f64)> = (0..n.div_ceil(block))
            .into_par_iter()
            .map(|b| {
                let r = b * block..((b + 1) * block).min(n);
                (
                    mix(salt ^ b as u64),
                    r.fold(0.0, |s, v| s + f(v as VertexId)),
                )
            })
            .collect();
        sums.sort_by_key(|&(k, _)| k);
        sums.iter().map(|&(_, s)| s).sum()
    }
}

impl Executor for Adversary<'_> {
    fn superstep<P: VertexProgram>(
        &self,
        p: &P,
        frontier: &VertexSubset,
        opts: &StepOptions,
    ) -> Step {
        let salt = self.salt();
        let n = self.g.num_vertices();
        let t = Traversal::new(self.g.is_directed(), opts);
        let mode = match P::MODES {
            Modes::SparseOnly => Mode::Sparse,
            Modes::DenseOnly => Mode::Dense,
            Modes::Both => match opts.direction {
                Direction::Push => Mode::Sparse,
                Direction::Pull => Mode::Dense,
                Direction::Auto if salt & 2 == 0 => Mode::Sparse,
                Direction::Auto => Mode::Dense,
            },
        };
        crate::progress::superstep(frontier.len() as u64);
        let woke = match mode {
            Mode::Sparse => self.sparse_step(p, frontier, t, salt),
            Mode::Dense => self.dense_step(p, frontier, t, salt),
        };
        self.modes[usize::from(mode == Mode::Dense)].fetch_add(1, Ordering::Relaxed);
        let next = VertexSubset::from_ids(n, woke);
        let next = if salt & 4 == 0 { next.to_dense() } else { next };
        Step { next, mode }
    }
}

/// `Ok` when `got == want`, else an error naming `what`.
pub fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &T, want: &T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: driver gave {got:?}, the kernel {want:?}"))
    }
}

/// `Ok` when every `got[i]` is within `bound` of `want[i]`, else an error
/// naming the first vertex that is not.
pub fn close(what: &str, got: &[f64], want: &[f64], bound: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} values against {}",
            got.len(),
            want.len()
        ));
    }
    let within = |i: usize| (got[i] - want[i]).abs() <= bound;
    match (0..got.len()).find(|&i| !within(i)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what} of vertex {i}: driver gave {}, the kernel {} (bound {bound:e})",
            got[i], want[i]
        )),
    }
}

/// Runs `algorithm`'s conformance check on `exec` over `g`: its driver's
/// result must agree with the fast in-memory kernel by the algorithm's
/// rule (exact, or within its stated bound) and pass its verifier.
/// Algorithms without a driver (in-memory only) pass trivially. A new
/// executor is held to this over random graphs, as the adversary is.
pub fn check<E: Executor>(
    algorithm: crate::registry::Algorithm,
    g: &Graph,
    exec: &E,
    seed: u64,
) -> Result<(), String> {
    use crate::algo::*;
    use crate::registry::Algorithm as A;
    match algorithm {
        A::Bfs => bfs::check_on(g, exec, seed),
        A::Nhop => nhop::check_on(g, exec, seed),
        A::Sssp => sssp::check_on(g, exec, seed),
        A::PageRank | A::Ppr => pagerank::check_on(g, exec, seed),
        A::Wcc => wcc::check_on(g, exec, seed),
        A::Scc => scc::check_on(g, exec, seed),
        A::Betweenness => betweenness::check_on(g, exec, seed),
        A::Kcore => kcore::check_on(g, exec, seed),
        A::Cdlp => cdlp::check_on(g, exec, seed),
        A::Coloring => coloring::check_on(g, exec, seed),
        A::Mis => mis::check_on(g, exec, seed),
        A::Triangles | A::Lcc => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::specs;
    use crate::program::InMemory;
    use crate::registry::{ExecutorKind, ALGORITHMS};
    use proptest::prelude::*;

    /// Every driver of the registry, on the adversary at 1–4 threads and on
    /// the in-memory executor, over one graph.
    fn check_all(g: &Graph, seed: u64, threads: usize) -> Result<(), TestCaseError> {
        for e in ALGORITHMS.iter().filter(|e| e.runs_on(ExecutorKind::Scan)) {
            let adversary = Adversary::new(g, seed);
            let r = crate::with_threads(threads, || check(e.algorithm, g, &adversary, seed))
                .map_err(|x| TestCaseError::fail(x.to_string()))?;
            if let Err(msg) = r {
                return Err(TestCaseError::fail(format!(
                    "{} on the adversary: {msg}",
                    e.name
                )));
            }
            if let Err(msg) = check(e.algorithm, g, &InMemory::new(g), seed) {
                return Err(TestCaseError::fail(format!("{} in memory: {msg}", e.name)));
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn every_driver_agrees_with_its_kernel_on_the_adversary(
            spec in specs(30, 90, false),
            seed in any::<u64>(),
            threads in 1usize..=4,
        ) {
            check_all(&spec.build(), seed, threads)?;
        }

        #[test]
        fn every_driver_agrees_with_its_kernel_on_weighted_graphs(
            spec in specs(30, 90, true),
            seed in any::<u64>(),
            threads in 1usize..=4,
        ) {
            check_all(&spec.build(), seed, threads)?;
        }
    }

    #[test]
    fn the_adversary_runs_both_modes_and_splits_messages() {
        let g = Graph::from_edges(
            8,
            &[(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 5), (1, 2)],
            &plexus_graph::BuildOptions::directed(),
        )
        .unwrap();
        let a = Adversary::new(&g, 7);
        for s in 0..20 {
            let cfg = crate::algo::bfs::Config {
                source: s % 8,
                ..Default::default()
            };
            crate::algo::bfs::run_on(&a, &cfg).unwrap();
        }
        let (sparse, dense) = a.modes_used();
        assert!(sparse > 0 && dense > 0, "{sparse} sparse, {dense} dense");
    }
}
