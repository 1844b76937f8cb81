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

/// The arrays of [`Lists`]: keys, offsets, other ends, weights.
pub type RawLists<'a> = (
    &'a [VertexId],
    &'a [u64],
    &'a [VertexId],
    Option<&'a [Weight]>,
);

/// Doubly compressed lists: for each key with a non-empty list, its other
/// ends (ascending, as in the graph) and weights.
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// `rank[w]`: the keys below `64·w` (the index of word `w`'s first
    /// key), so a key's index is one popcount away.
    rank: Vec<u32>,
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
        out.ranked()
    }

    /// The lists of `adj` for the keys `range` turned around: for every
    /// arc `k → e` of `adj` with `k` in `range`, the entry `k` in the list
    /// of `e`. A counting sort by `e` (count, prefix sum, scatter in the
    /// arrays' order), so each list ascends by key and duplicates keep
    /// `adj`'s order; O(n + the range's arcs).
    fn transposed(adj: &Adjacency, range: std::ops::Range<VertexId>) -> Lists {
        let n = adj.num_vertices();
        let nb = adj.neighbor_array();
        let ws = adj.weight_array();
        let offs = adj.offsets();
        let slice = offs[range.start as usize] as usize..offs[range.end as usize] as usize;
        // cursor[e]: first the number of entries of e, then where the next
        // one goes.
        let mut cursor = vec![0u64; n];
        for &e in &nb[slice.clone()] {
            cursor[e as usize] += 1;
        }
        let mut out = Lists {
            has: vec![0; n.div_ceil(64)],
            offsets: vec![0],
            weights: ws.map(|_| vec![0.0; slice.len()]),
            ends: vec![0; slice.len()],
            keys: Vec::new(),
            rank: Vec::new(),
        };
        let mut total = 0u64;
        for (e, c) in cursor.iter_mut().enumerate() {
            if *c > 0 {
                out.keys.push(e as VertexId);
                out.has[e / 64] |= 1 << (e % 64);
                let count = *c;
                *c = total;
                total += count;
                out.offsets.push(total);
            }
        }
        for k in range {
            for i in adj.range(k) {
                let at = &mut cursor[nb[i] as usize];
                out.ends[*at as usize] = k;
                if let (Some(w), Some(ws)) = (out.weights.as_mut(), ws) {
                    w[*at as usize] = ws[i];
                }
                *at += 1;
            }
        }
        out.ranked()
    }

    /// These lists with `rank` filled from `has`.
    fn ranked(mut self) -> Lists {
        let mut below = 0u32;
        self.rank = self
            .has
            .iter()
            .map(|w| {
                let r = below;
                below += w.count_ones();
                r
            })
            .collect();
        self
    }

    /// Whether `k` has a list.
    #[inline]
    pub fn contains(&self, k: VertexId) -> bool {
        self.has
            .get(k as usize / 64)
            .is_some_and(|w| w & (1 << (k % 64)) != 0)
    }

    /// The index of `k`'s list among [`Lists::keys`], or `None` when `k`
    /// has none: O(1) (the membership bit, the keys below its word, a
    /// popcount).
    #[inline]
    pub fn index(&self, k: VertexId) -> Option<usize> {
        let w = *self.has.get(k as usize / 64)?;
        let b = 1u64 << (k % 64);
        (w & b != 0)
            .then(|| self.rank[k as usize / 64] as usize + (w & (b - 1)).count_ones() as usize)
    }

    /// The list at index `i` of [`Lists::keys`] and its weights.
    #[inline]
    pub fn at(&self, i: usize) -> (&[VertexId], Option<&[Weight]>) {
        let r = self.offsets[i] as usize..self.offsets[i + 1] as usize;
        (&self.ends[r.clone()], self.weights.as_ref().map(|w| &w[r]))
    }

    /// The list of `k` and its weights (empty when `k` has none).
    #[inline]
    pub fn get(&self, k: VertexId) -> (&[VertexId], Option<&[Weight]>) {
        match self.index(k) {
            Some(i) => self.at(i),
            None => (&[], self.weights.as_ref().map(|_| &[][..])),
        }
    }

    /// The arrays: keys, offsets, other ends, weights.
    pub fn raw(&self) -> RawLists<'_> {
        (
            &self.keys,
            &self.offsets,
            &self.ends,
            self.weights.as_deref(),
        )
    }

    /// Lists over `n` vertices from their arrays (as [`Lists::raw`] gives
    /// them); `Err` names the first broken invariant: keys strictly
    /// ascending and `< n`, `keys.len() + 1` offsets from 0, non-decreasing
    /// (every list non-empty), ending at the number of ends, every end
    /// `< n`, weights (if any) as many as ends.
    pub fn from_raw(
        n: usize,
        keys: Vec<VertexId>,
        offsets: Vec<u64>,
        ends: Vec<VertexId>,
        weights: Option<Vec<Weight>>,
    ) -> std::result::Result<Lists, String> {
        if offsets.len() != keys.len() + 1 || offsets.first() != Some(&0) {
            return Err(format!("{} offsets for {} keys", offsets.len(), keys.len()));
        }
        if offsets.last() != Some(&(ends.len() as u64)) {
            return Err(format!(
                "offsets end before or past the {} ends",
                ends.len()
            ));
        }
        if let Some(i) = offsets.windows(2).position(|w| w[0] >= w[1]) {
            return Err(format!("list {i} is empty or its offsets decrease"));
        }
        if let Some(i) = keys.windows(2).position(|w| w[0] >= w[1]) {
            return Err(format!("key {} is not above key {}", i + 1, i));
        }
        if let Some(&k) = keys.iter().chain(&ends).find(|&&k| k as usize >= n) {
            return Err(format!("vertex {k} is not below {n}"));
        }
        if weights.as_ref().is_some_and(|w| w.len() != ends.len()) {
            return Err("weights and ends differ in length".into());
        }
        let mut has = vec![0u64; n.div_ceil(64)];
        for &k in &keys {
            has[k as usize / 64] |= 1 << (k % 64);
        }
        Ok(Lists {
            keys,
            offsets,
            ends,
            weights,
            has,
            rank: Vec::new(),
        }
        .ranked())
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
            + self.has.len() * 8
            + self.rank.len() * 4) as u64
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
///
/// Two groups of lists hold all four (mode, direction) views: the arcs
/// into the masters keyed by source are both the push lists of stored
/// arcs and the pull lists of reversed arcs, and the arcs out of the
/// masters keyed by target are both the pull lists of stored arcs and the
/// push lists of reversed arcs. On an undirected graph (one symmetric
/// CSR) the two groups are equal and only one is kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    rank: usize,
    cuts: Cuts,
    /// Arcs `u → v` with `v` a master, keyed by `u`.
    into: Lists,
    /// Arcs `u → v` with `u` a master, keyed by `v`; `None` on undirected
    /// graphs (equal to `into`).
    out_of: Option<Lists>,
}

impl Part {
    /// Rank `rank`'s part of `g` under `cuts`, from the whole graph: every
    /// vertex's lists filtered to the masters. The reference the
    /// slice-reading build ([`Part::from_slices`]) is tested against.
    pub fn build(g: &Graph, cuts: Cuts, rank: usize) -> Part {
        let mine = cuts.range(rank);
        let (into, out_of) = rayon::join(
            || Lists::build(g.out(), mine.clone()),
            || g.is_directed().then(|| Lists::build(g.inc(), mine.clone())),
        );
        Part {
            rank,
            cuts,
            into,
            out_of,
        }
    }

    /// Rank `rank`'s part of `g` under `cuts`, reading only the masters'
    /// own lists (their in-lists and out-lists; on a memory-mapped store,
    /// only those pages) and transposing them. Equal to [`Part::build`].
    pub fn from_slices(g: &Graph, cuts: Cuts, rank: usize) -> Part {
        let mine = cuts.range(rank);
        let (into, out_of) = rayon::join(
            || Lists::transposed(g.inc(), mine.clone()),
            || {
                g.is_directed()
                    .then(|| Lists::transposed(g.out(), mine.clone()))
            },
        );
        Part {
            rank,
            cuts,
            into,
            out_of,
        }
    }

    /// A part from its pieces (a part file); `None` unless `rank` is one
    /// of the cuts' ranks.
    pub fn from_pieces(
        rank: usize,
        cuts: Cuts,
        into: Lists,
        out_of: Option<Lists>,
    ) -> Option<Part> {
        (rank < cuts.ranks()).then_some(Part {
            rank,
            cuts,
            into,
            out_of,
        })
    }

    /// Whether every arc of the part touches a master where the layout
    /// says it does: the ends of the lists into the masters, and the ends
    /// of the lists out of them, are masters (true of every part built
    /// here; checked on parts read from files, since the fast paths index
    /// their masters' state by those ends).
    pub fn ends_are_masters(&self) -> bool {
        let r = self.masters();
        let ok = |l: &Lists| l.raw().2.par_iter().all(|v| r.contains(v));
        ok(&self.into) && self.out_of.as_ref().is_none_or(ok)
    }

    /// The two groups of lists: arcs into the masters by source, and arcs
    /// out of them by target (`None` on undirected graphs).
    pub fn pieces(&self) -> (&Lists, Option<&Lists>) {
        (&self.into, self.out_of.as_ref())
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

    fn out_of(&self) -> &Lists {
        self.out_of.as_ref().unwrap_or(&self.into)
    }

    /// The push lists of direction `d`: arcs into this rank's masters (of
    /// the graph with arcs as `d` says), keyed by source.
    pub fn push(&self, d: Arcs) -> &Lists {
        match d {
            Arcs::Out => &self.into,
            Arcs::In => self.out_of(),
        }
    }

    /// The pull lists of direction `d`: arcs out of this rank's masters,
    /// keyed by target (each list ascending by source).
    pub fn pull(&self, d: Arcs) -> &Lists {
        match d {
            Arcs::Out => self.out_of(),
            Arcs::In => &self.into,
        }
    }

    /// Arcs stored (each once per group kept).
    pub fn num_entries(&self) -> u64 {
        self.into.num_entries() + self.out_of.as_ref().map_or(0, Lists::num_entries)
    }

    /// Bytes of edge storage.
    pub fn bytes(&self) -> u64 {
        self.into.bytes() + self.out_of.as_ref().map_or(0, Lists::bytes)
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

    /// Random graphs: directed or not, weighted or not, duplicates and
    /// self-loops kept, degree-ordered or not.
    fn random_graphs() -> Vec<Graph> {
        use plexus_graph::{DuplicatePolicy, VertexOrder};
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut out = Vec::new();
        for i in 0..24 {
            let n = 1 + next(60) as usize;
            let edges: Vec<(VertexId, VertexId, f64)> = (0..next(200))
                .map(|_| {
                    let u = next(n as u64) as VertexId;
                    let v = next(n as u64) as VertexId;
                    (u, v, next(9) as f64 * 0.5)
                })
                .collect();
            let opts = BuildOptions {
                directed: i % 2 == 0,
                duplicates: DuplicatePolicy::Keep,
                order: if i % 3 == 0 {
                    VertexOrder::Degree.into()
                } else {
                    VertexOrder::None.into()
                },
                ..BuildOptions::default()
            };
            let g = if i % 4 < 2 {
                Graph::from_weighted_edges(n, &edges, &opts)
            } else {
                let pairs: Vec<_> = edges.iter().map(|e| (e.0, e.1)).collect();
                Graph::from_edges(n, &pairs, &opts)
            };
            out.push(g.expect("valid test graph"));
        }
        out
    }

    #[test]
    fn parts_read_from_the_masters_slices_equal_parts_from_the_whole_graph() {
        for g in random_graphs() {
            let n = g.num_vertices();
            let deg: Vec<u64> = (0..n as VertexId)
                .map(|v| (g.out_degree(v) + g.in_degree(v)) as u64)
                .collect();
            for p in 1..=4 {
                let cuts = Cuts::balanced(&deg, p);
                for r in 0..p {
                    let whole = Part::build(&g, cuts.clone(), r);
                    let sliced = Part::from_slices(&g, cuts.clone(), r);
                    assert_eq!(whole, sliced, "n {n} p {p} rank {r}");
                    let (into, out_of) = sliced.pieces();
                    let again = |l: &Lists| {
                        let (k, o, e, w) = l.raw();
                        Lists::from_raw(n, k.to_vec(), o.to_vec(), e.to_vec(), w.map(<[_]>::to_vec))
                            .expect("a built part's lists are valid")
                    };
                    assert_eq!(&again(into), into);
                    if let Some(l) = out_of {
                        assert_eq!(&again(l), l);
                    }
                }
            }
        }
    }

    #[test]
    fn lists_from_bad_arrays_are_refused_with_the_broken_rule() {
        let ok = Lists::from_raw(4, vec![1, 3], vec![0, 1, 3], vec![0, 1, 2], None);
        assert!(ok.is_ok());
        let bad =
            |k: Vec<u32>, o: Vec<u64>, e: Vec<u32>| Lists::from_raw(4, k, o, e, None).unwrap_err();
        assert!(bad(vec![3, 1], vec![0, 1, 3], vec![0, 1, 2]).contains("key 1"));
        assert!(bad(vec![1, 3], vec![0, 2, 2], vec![0, 1]).contains("empty"));
        assert!(bad(vec![1, 3], vec![0, 1, 3], vec![0, 1, 9]).contains("vertex 9"));
        assert!(bad(vec![1], vec![0, 1, 3], vec![0, 1, 2]).contains("offsets"));
        assert!(bad(vec![1, 3], vec![0, 1, 4], vec![0, 1, 2]).contains("ends"));
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
            // Every key's list is found by its index, and no other vertex has one.
            for x in &parts {
                for d in [Arcs::Out, Arcs::In] {
                    let l = x.push(d);
                    for v in 0..6 {
                        let i = l.keys().binary_search(&v).ok();
                        assert_eq!(l.index(v), i, "vertex {v}");
                    }
                    assert_eq!(l.index(6), None);
                }
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
