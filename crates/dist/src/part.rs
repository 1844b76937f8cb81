//! Partitioning (Gemini §4): contiguous vertex ranges balanced by
//! `α·|V_i| + |E_i|` with `α = 8(p − 1)`, and each rank's edges in
//! doubly compressed lists, so that a rank's edge work is
//! O(its edges + the frontier), never O(|V|).
//!
//! Rank `i` is the *master* of the vertices `cuts.range(i)`. It stores:
//! - for sparse (push) steps, the arcs `u → v` whose target `v` it
//!   masters, grouped by source `u` (Gemini's `E_i^S`): the rank holding
//!   such an arc is a *mirror* of `u`;
//! - for dense (pull) steps, the arcs `u → v` whose source `u` it
//!   masters, grouped by target `v` (Gemini's `E_i^D`): the rank computes
//!   a partial dense signal of `v` over them (a mirror of `v`) and sends
//!   it to `v`'s master.
//!
//! Each group of lists is [`Lists`]: the keys that have a list (sorted),
//! offsets, the other ends and weights, and a bitmap over all vertices for
//! the membership test (Gemini's bitmap-assisted compressed lists; a
//! simpler layout than its per-socket chunking). Directed graphs keep the
//! lists of both arc directions, since reverse and symmetric steps walk
//! arcs backwards.
use plexus_graph::{Adjacency, Graph, VertexId, Weight};
use rayon::prelude::*;

/// Gemini's `α` for `p` ranks: a vertex costs `8(p − 1)` edges.
pub fn alpha(p: usize) -> u64 {
    8 * (p as u64).saturating_sub(1)
}

/// The master ranges: rank `i` masters `bounds[i]..bounds[i + 1]`.
///
/// Invariants: `bounds.len() == p + 1`, `bounds[0] == 0`,
/// `bounds[p] == n`, non-decreasing (a rank may master no vertex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cuts {
    bounds: Vec<VertexId>,
}

impl Cuts {
    /// Cuts of `n = degree.len()` vertices into `p` ranges of about equal
    /// cost `α·|V_i| + Σ_{v ∈ V_i} degree[v]`, `α = alpha(p)`, where
    /// `degree[v]` is the vertex's arc count (out plus in). `p ≥ 1`.
    pub fn balanced(degree: &[u64], p: usize) -> Cuts {
        let p = p.max(1);
        let n = degree.len();
        let a = alpha(p);
        // cum[v] = cost of vertices 0..v.
        let mut cum = Vec::with_capacity(n + 1);
        cum.push(0u64);
        for &d in degree {
            let last = *cum.last().unwrap_or(&0);
            cum.push(last + a + d);
        }
        let total = cum[n];
        let mut bounds = vec![0 as VertexId];
        for i in 1..p {
            // The first v whose prefix cost reaches i/p of the total.
            let goal = (u128::from(total) * i as u128 / p as u128) as u64;
            let v = cum.partition_point(|&c| c < goal).min(n);
            let prev = *bounds.last().unwrap_or(&0);
            bounds.push((v as VertexId).max(prev));
        }
        bounds.push(n as VertexId);
        Cuts { bounds }
    }

    /// Cuts from explicit bounds (see the type's invariants); `None` when
    /// they break them.
    pub fn from_bounds(bounds: Vec<VertexId>) -> Option<Cuts> {
        let ok = bounds.len() >= 2 && bounds[0] == 0 && bounds.windows(2).all(|w| w[0] <= w[1]);
        ok.then_some(Cuts { bounds })
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The vertices rank `r` masters.
    pub fn range(&self, r: usize) -> std::ops::Range<VertexId> {
        self.bounds[r]..self.bounds[r + 1]
    }

    /// The master of `v` (`v < n`).
    #[inline]
    pub fn owner(&self, v: VertexId) -> usize {
        // The last bound <= v, among bounds[..p]; empty ranks share a
        // bound, and the partition point skips past them.
        self.bounds[1..].partition_point(|&b| b <= v)
    }

    /// The bounds (`p + 1` of them).
    pub fn bounds(&self) -> &[VertexId] {
        &self.bounds
    }
}

/// Doubly compressed lists: for each key with a non-empty list, its other
/// ends (ascending, as in the graph) and weights.
#[derive(Clone, Debug, Default)]
pub struct Lists {
    /// Keys with a list, ascending.
    keys: Vec<VertexId>,
    /// `offsets[i]..offsets[i + 1]`: the list of `keys[i]`.
    offsets: Vec<u64>,
    /// The other ends.
    ends: Vec<VertexId>,
    /// Weights parallel to `ends` (weighted graphs only).
    weights: Option<Vec<Weight>>,
    /// Bit `k` set when `k` has a list (`ceil(n/64)` words).
    has: Vec<u64>,
}

impl Lists {
    /// For every vertex `k` (all `n`), the entries of `adj.neighbors(k)` in
    /// `keep` (a vertex range), with their weights.
    fn build(adj: &Adjacency, keep: std::ops::Range<VertexId>) -> Lists {
        let n = adj.num_vertices();
        let parts: Vec<(VertexId, Vec<VertexId>, Vec<Weight>)> = (0..n as VertexId)
            .into_par_iter()
            .with_min_len(1024)
            .filter_map(|k| {
                let nb = adj.neighbors(k);
                let ws = adj.weights(k);
                let mut ends = Vec::new();
                let mut wts = Vec::new();
                for (i, &e) in nb.iter().enumerate() {
                    if keep.contains(&e) {
                        ends.push(e);
                        if let Some(ws) = ws {
                            wts.push(ws[i]);
                        }
                    }
                }
                (!ends.is_empty()).then_some((k, ends, wts))
            })
            .collect();
        let weighted = adj.weight_array().is_some();
        let mut out = Lists {
            has: vec![0; n.div_ceil(64)],
            offsets: vec![0],
            weights: weighted.then(Vec::new),
            ..Lists::default()
        };
        for (k, ends, wts) in parts {
            out.has[k as usize / 64] |= 1 << (k % 64);
            out.keys.push(k);
            out.ends.extend_from_slice(&ends);
            if let Some(w) = out.weights.as_mut() {
                w.extend_from_slice(&wts);
            }
            out.offsets.push(out.ends.len() as u64);
        }
        out
    }

    /// Whether `k` has a list.
    #[inline]
    pub fn contains(&self, k: VertexId) -> bool {
        self.has
            .get(k as usize / 64)
            .is_some_and(|w| w & (1 << (k % 64)) != 0)
    }

    /// The list of `k` and its weights (empty when `k` has none).
    #[inline]
    pub fn get(&self, k: VertexId) -> (&[VertexId], Option<&[Weight]>) {
        if !self.contains(k) {
            return (&[], self.weights.as_ref().map(|_| &[][..]));
        }
        let i = self.keys.partition_point(|&x| x < k);
        let r = self.offsets[i] as usize..self.offsets[i + 1] as usize;
        (&self.ends[r.clone()], self.weights.as_ref().map(|w| &w[r]))
    }

    /// Keys with a list, ascending.
    pub fn keys(&self) -> &[VertexId] {
        &self.keys
    }

    /// Number of entries.
    pub fn num_entries(&self) -> u64 {
        self.ends.len() as u64
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        (self.keys.len() * 4
            + self.offsets.len() * 8
            + self.ends.len() * 4
            + self.weights.as_ref().map_or(0, |w| w.len() * 4)
            + self.has.len() * 8) as u64
    }
}

/// Which stored direction of arcs: as stored (`Out`, `u → v` from `u`'s
/// out-list) or backwards (`In`, from the in-lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arcs {
    /// Arcs as they are.
    Out = 0,
    /// Arcs reversed.
    In = 1,
}

/// One rank's share of the graph's edges (see the module docs).
#[derive(Clone, Debug)]
pub struct Part {
    rank: usize,
    cuts: Cuts,
    /// `push[d]`: arcs of direction `d` into this rank's masters, by source.
    push: [Lists; 2],
    /// `pull[d]`: arcs of direction `d` out of this rank's masters, by
    /// target (each list ascending by source).
    pull: [Lists; 2],
}

impl Part {
    /// Rank `rank`'s part of `g` under `cuts`. Reads the whole graph once
    /// (each rank of a shared-store run builds its own part).
    pub fn build(g: &Graph, cuts: Cuts, rank: usize) -> Part {
        let mine = cuts.range(rank);
        let directed = g.is_directed();
        let both = |a: &Adjacency, b: &Adjacency| {
            let (x, y) = rayon::join(
                || Lists::build(a, mine.clone()),
                || {
                    if directed {
                        Lists::build(b, mine.clone())
                    } else {
                        Lists::default()
                    }
                },
            );
            [x, y]
        };
        // Push along out-lists, keeping targets this rank masters; pull
        // over in-lists (keyed by target, entries are sources), keeping
        // sources this rank masters. Reversed: the other lists.
        let (push, pull) = rayon::join(|| both(g.out(), g.inc()), || both(g.inc(), g.out()));
        Part {
            rank,
            cuts,
            push,
            pull,
        }
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The cuts.
    pub fn cuts(&self) -> &Cuts {
        &self.cuts
    }

    /// The vertices this rank masters.
    pub fn masters(&self) -> std::ops::Range<VertexId> {
        self.cuts.range(self.rank)
    }

    /// The push lists of direction `d`.
    pub fn push(&self, d: Arcs) -> &Lists {
        &self.push[d as usize]
    }

    /// The pull lists of direction `d`.
    pub fn pull(&self, d: Arcs) -> &Lists {
        &self.pull[d as usize]
    }

    /// Arcs stored (each once per mode, per direction kept).
    pub fn num_entries(&self) -> u64 {
        self.push
            .iter()
            .chain(&self.pull)
            .map(Lists::num_entries)
            .sum()
    }

    /// Bytes of edge storage.
    pub fn bytes(&self) -> u64 {
        self.push.iter().chain(&self.pull).map(Lists::bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_graph::BuildOptions;

    #[test]
    fn cuts_cover_every_vertex_once_and_balance_cost() {
        let deg: Vec<u64> = (0..1000).map(|v| if v < 10 { 500 } else { 2 }).collect();
        for p in 1..=5 {
            let c = Cuts::balanced(&deg, p);
            assert_eq!(c.ranks(), p);
            assert_eq!(c.bounds()[p], 1000);
            for v in 0..1000 {
                assert!(c.range(c.owner(v)).contains(&v));
            }
            let a = alpha(p);
            let cost = |r: usize| c.range(r).map(|v| a + deg[v as usize]).sum::<u64>();
            let total: u64 = (0..p).map(cost).sum();
            for r in 0..p {
                // Within one vertex's cost of the ideal share.
                assert!(cost(r) <= total / p as u64 + a + 500, "p {p} rank {r}");
            }
        }
        // More ranks than vertices: some ranks master nothing.
        let c = Cuts::balanced(&[1, 1], 4);
        assert_eq!((0..2).map(|v| c.owner(v)).collect::<Vec<_>>().len(), 2);
        assert_eq!((0..4).map(|r| c.range(r).len()).sum::<usize>(), 2);
    }

    #[test]
    fn parts_hold_every_arc_once_per_mode() {
        let g = Graph::from_edges(
            6,
            &[
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 0),
                (4, 5),
                (5, 5),
                (1, 2),
                (0, 5),
            ],
            &BuildOptions::directed(),
        )
        .unwrap();
        for p in 1..=4 {
            let deg: Vec<u64> = (0..6)
                .map(|v| (g.out_degree(v) + g.in_degree(v)) as u64)
                .collect();
            let cuts = Cuts::balanced(&deg, p);
            let parts: Vec<Part> = (0..p).map(|r| Part::build(&g, cuts.clone(), r)).collect();
            for d in [Arcs::Out, Arcs::In] {
                let push: u64 = parts.iter().map(|x| x.push(d).num_entries()).sum();
                let pull: u64 = parts.iter().map(|x| x.pull(d).num_entries()).sum();
                assert_eq!((push, pull), (8, 8));
            }
            // Vertex 1's out-arcs: to 2 twice, on 2's master.
            let o = cuts.owner(2);
            assert_eq!(parts[o].push(Arcs::Out).get(1).0, &[2, 2]);
            // Vertex 5's in-arcs over the pull lists of 0's and 4's and 5's masters.
            let mut srcs: Vec<VertexId> = parts
                .iter()
                .flat_map(|x| x.pull(Arcs::Out).get(5).0.to_vec())
                .collect();
            srcs.sort();
            assert_eq!(srcs, vec![0, 4, 5]);
        }
    }
}
