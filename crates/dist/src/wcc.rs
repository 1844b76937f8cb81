//! WCC on the distributed executor by union–find: the executor's fast path
//! for `wcc` (as Afforest is the in-memory executor's), with the labels of
//! `plexus_engine::algo::wcc::run`: the smallest internal id of each
//! component.
//!
//! Every rank keeps a forest over all vertex ids (`parent`, replicated
//! like the drivers' state) and links its own arcs into it with the
//! lock-free hooking of Shiloach & Vishkin (a root is only ever hung under
//! a smaller id, so every root is its tree's minimum, whatever the order
//! of the links). Afforest's sampling (Sutton, Ben-Nun & Barak, IPDPS'18)
//! decides which arcs need linking:
//!
//! 1. **sampling rounds:** each rank links the first arc of each of its
//!    lists (then the second), and the ranks *merge* their forests;
//! 2. **giant:** the most frequent root among a fixed sample of 1024
//!    vertices, the same on every rank (the merged forests are equal);
//! 3. **the rest:** each rank links the remaining arcs of every list whose
//!    key is outside the giant component, and the ranks merge once more.
//!
//! Across the ranks every arc is held in both orientations (an undirected
//! edge `{u, v}` is `u → v` on `v`'s master and `v → u` on `u`'s; a
//! directed arc is in the push lists of its head's master and in the pull
//! lists of its tail's master), so an edge with one end in the giant
//! component is linked from the other end's list, on some rank. A rank
//! judges "in the giant component" by its own forest, which holds only
//! true connections: a vertex skipped there is connected to the giant
//! root.
//!
//! **Merge** (collective): every rank points each cell at its root and
//! all-gathers the pairs `(r, root)` of the vertices `r` that were roots
//! after the previous merge (every vertex, before the first) and are not
//! now (little-endian `u32` pairs): after a merge every rank holds the
//! same forest, so a rank's own links since then show only as such roots
//! hung under new ones. Each rank links the other ranks' pairs into its
//! forest and compresses again. The forests then describe the same
//! components, and, roots being minima, hold the same cells. One rank
//! merges nothing.
//! Each phase is reported as one step (`mode` "union-find").
use std::sync::atomic::{AtomicU32, Ordering};

use plexus_engine::algo::wcc::{compress, find, link, Output};
use plexus_engine::program::GraphView;
use plexus_engine::subset::bit;
use plexus_graph::VertexId;
use rayon::prelude::*;

use crate::comm::Comm;
use crate::error::{DistError, Result};
use crate::exec::DistExecutor;
use crate::part::Lists;

/// List entries per key linked in a sampling round (Afforest's rounds).
const NEIGHBOR_ROUNDS: usize = 2;
/// Vertices sampled to find the giant component.
const SAMPLES: usize = 1024;
/// The sampling rounds stop once the giant component holds at least
/// `GIANT_NUM / GIANT_DEN` of the sample.
const GIANT_NUM: usize = 4;
/// See [`GIANT_NUM`].
const GIANT_DEN: usize = 5;
/// The mode of this module's steps in the executor's statistics.
const MODE: &str = "union-find";
/// The seed of the sample (xorshift64).
const SAMPLE_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// The weakly connected components of the graph `exec` runs on, by
/// union–find (see the module docs); collective: every rank calls it and
/// gets the same output. `Err` with the transport's fault when a rank is
/// lost or a message is malformed.
pub fn run<C: Comm>(exec: &DistExecutor<'_, C>) -> Result<Output> {
    let n = exec.dist_view().num_vertices();
    let parent: Vec<AtomicU32> = (0..n as u32).into_par_iter().map(AtomicU32::new).collect();
    let (into, out_of) = exec.part().pieces();
    let groups: Vec<&Lists> = std::iter::once(into).chain(out_of).collect();
    let mut roots = vec![u64::MAX; n.div_ceil(64)];
    let mut rounds = 0;
    let mut giant = None;
    for round in 0..NEIGHBOR_ROUNDS {
        exec.stage(n as u64, || {
            for l in &groups {
                link_entry(l, &parent, round);
            }
            (merge(exec, &parent, &mut roots), MODE)
        });
        rounds += 1;
        let (root, held) = largest(&parent);
        giant = root;
        if held * GIANT_DEN >= SAMPLES.min(n) * GIANT_NUM {
            break;
        }
    }
    exec.stage(n as u64, || {
        for l in &groups {
            link_rest(l, &parent, rounds, giant);
        }
        (merge(exec, &parent, &mut roots), MODE)
    });
    if let Some(e) = exec.fault() {
        return Err(e);
    }
    let component: Vec<u32> = parent.into_iter().map(AtomicU32::into_inner).collect();
    let count = component
        .par_iter()
        .enumerate()
        .filter(|&(v, &c)| c as usize == v)
        .count() as u64;
    Ok(Output { component, count })
}

/// Links each key of `l` to the `round`-th entry of its list, if any.
fn link_entry(l: &Lists, parent: &[AtomicU32], round: usize) {
    let (keys, offsets, ends, _) = l.raw();
    keys.par_iter()
        .enumerate()
        .with_min_len(256)
        .for_each(|(i, &u)| {
            let at = offsets[i] as usize + round;
            if at < offsets[i + 1] as usize {
                link(parent, u, ends[at]);
            }
        });
}

/// Links the entries of each list of `l` past the first `skip`, for the
/// keys outside the component rooted at `giant`.
fn link_rest(l: &Lists, parent: &[AtomicU32], skip: usize, giant: Option<VertexId>) {
    let (keys, offsets, ends, _) = l.raw();
    keys.par_iter()
        .enumerate()
        .with_min_len(64)
        .for_each(|(i, &u)| {
            if Some(find(parent, u)) == giant {
                return;
            }
            let from = offsets[i] as usize + skip;
            let to = offsets[i + 1] as usize;
            for &v in ends.get(from..to).unwrap_or(&[]) {
                link(parent, u, v);
            }
        });
}

/// Every rank's forest linked into this one, and every cell pointing at
/// its root (see the module docs); `roots` has a bit set for each root
/// after the previous merge, and after this one on return. On a fault the
/// forest is left as it is (the fault is recorded on `exec`).
fn merge<C: Comm>(exec: &DistExecutor<'_, C>, parent: &[AtomicU32], roots: &mut [u64]) {
    compress(parent);
    let (me, ranks) = (exec.comm().rank(), exec.comm().size());
    if ranks == 1 {
        return;
    }
    let mine: Vec<u8> = parent
        .par_iter()
        .enumerate()
        .with_min_len(1024)
        .filter_map(|(v, r)| {
            let r = r.load(Ordering::Relaxed);
            (r != v as u32 && bit(roots, v as VertexId)).then_some((v as u32, r))
        })
        .flat_map_iter(|(v, r)| v.to_le_bytes().into_iter().chain(r.to_le_bytes()))
        .collect();
    let Some(all) = exec.gather(mine) else {
        return;
    };
    let n = parent.len();
    for (peer, bytes) in all.iter().enumerate() {
        if peer == me {
            continue;
        }
        if !valid_pairs(bytes, n) {
            exec.fail(DistError::Malformed {
                rank: me,
                peer,
                what: "a forest of (vertex, root) pairs".into(),
            });
            return;
        }
        bytes.par_chunks_exact(8).with_min_len(1024).for_each(|c| {
            let (v, r) = pair(c);
            link(parent, v, r);
        });
    }
    compress(parent);
    roots.par_iter_mut().enumerate().for_each(|(j, w)| {
        let lo = j * 64;
        let cells = &parent[lo..(lo + 64).min(n)];
        *w = cells.iter().enumerate().fold(0u64, |x, (i, c)| {
            let root = c.load(Ordering::Relaxed) == (lo + i) as u32;
            x | u64::from(root) << i
        });
    });
}

/// A `(vertex, root)` pair from 8 little-endian bytes.
#[inline]
fn pair(c: &[u8]) -> (u32, u32) {
    let word = |i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
    (word(0), word(4))
}

/// Whether `bytes` are whole pairs, each naming a vertex below `n` and a
/// root below it (roots are their trees' minima).
fn valid_pairs(bytes: &[u8], n: usize) -> bool {
    bytes.len().is_multiple_of(8)
        && bytes.par_chunks_exact(8).all(|c| {
            let (v, r) = pair(c);
            (v as usize) < n && r < v
        })
}

/// The most frequent root among [`SAMPLES`] fixed pseudo-random vertices,
/// and how many of them it holds; `(None, 0)` on an empty graph.
fn largest(parent: &[AtomicU32]) -> (Option<VertexId>, usize) {
    let n = parent.len();
    let mut counts = std::collections::HashMap::<u32, usize>::new();
    let mut x = SAMPLE_SEED;
    for _ in 0..SAMPLES.min(n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *counts
            .entry(find(parent, (x % n as u64) as VertexId))
            .or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(r, c)| (c, std::cmp::Reverse(r)))
        .map_or((None, 0), |(r, c)| (Some(r), c))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use plexus_engine::algo::wcc;
    use plexus_graph::{BuildOptions, DuplicatePolicy, Graph, VertexId, VertexOrder};

    use crate::comm::run_threads;
    use crate::DistExecutor;

    use crate::testutil::rng;

    fn build(n: usize, edges: &[(VertexId, VertexId)], directed: bool, i: usize) -> Graph {
        let opts = BuildOptions {
            directed,
            duplicates: if i.is_multiple_of(2) {
                DuplicatePolicy::Keep
            } else {
                DuplicatePolicy::Drop
            },
            order: if i.is_multiple_of(3) {
                VertexOrder::Degree.into()
            } else {
                VertexOrder::None.into()
            },
            ..BuildOptions::default()
        };
        Graph::from_edges(n, edges, &opts).expect("valid test graph")
    }

    /// Small random graphs, and larger ones with a giant component, chains
    /// and isolated vertices (so the giant is skipped and the rest of the
    /// lists crosses ranks).
    fn graphs() -> Vec<Graph> {
        let mut next = rng(0x2545_f491_4f6c_dd1d);
        let mut out = Vec::new();
        for i in 0..32 {
            let n = 1 + next(60) as usize;
            let edges: Vec<(VertexId, VertexId)> = (0..next(80))
                .map(|_| (next(n as u64) as VertexId, next(n as u64) as VertexId))
                .collect();
            out.push(build(n, &edges, i % 2 == 0, i));
        }
        for i in 0..4 {
            let n = 3000;
            let mut edges: Vec<(VertexId, VertexId)> = (0..6000)
                .map(|_| (next(2000) as VertexId, next(2000) as VertexId))
                .collect();
            // Chains of 3 among 2000..2900, linked from the high end.
            for c in (2000..2900).step_by(3) {
                edges.push((c + 2, c + 1));
                edges.push((c, c + 1));
            }
            // One chain joins the giant component through its last vertex.
            edges.push((2899, 7));
            out.push(build(n, &edges, i % 2 == 1, i));
        }
        out
    }

    #[test]
    fn union_find_labels_equal_the_in_memory_kernel_on_1_to_4_ranks() {
        for (i, g) in graphs().iter().enumerate() {
            let want = wcc::run(g, &wcc::Config::default()).expect("in-memory wcc");
            for ranks in 1..=4 {
                let got = run_threads(ranks, Duration::from_secs(60), |comm| {
                    let exec = DistExecutor::new(&comm, g).expect("executor");
                    let o = super::run(&exec).expect("no fault");
                    let steps = exec.steps();
                    assert!(steps.iter().all(|s| s.mode == "union-find"));
                    (o, steps.len(), exec.bytes())
                })
                .expect("threads");
                for (r, res) in got.into_iter().enumerate() {
                    let (o, steps, (sent, _)) = res.expect("rank ran");
                    assert_eq!(o, want, "graph {i} on {ranks} ranks, rank {r}");
                    assert!((2..=3).contains(&steps), "{steps} steps");
                    if ranks == 1 {
                        assert_eq!(sent, 0);
                    }
                }
            }
        }
    }

    #[test]
    fn a_forest_naming_a_vertex_out_of_range_is_refused() {
        // Stands in for a peer's malformed message: the pairs must name a
        // vertex below n and a smaller root.
        let ok = |bytes: &[u8], n: usize| super::valid_pairs(bytes, n);
        let pair = |v: u32, r: u32| [v.to_le_bytes(), r.to_le_bytes()].concat();
        assert!(ok(&pair(5, 2), 6));
        assert!(!ok(&pair(6, 2), 6));
        assert!(!ok(&pair(2, 5), 6));
        assert!(!ok(&pair(3, 3), 6));
        assert!(!ok(&pair(5, 2)[..7], 6));
    }
}
