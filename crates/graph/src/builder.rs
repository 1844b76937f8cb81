//! Building a [`Graph`] from an edge buffer, as named steps (GAPBS
//! `builder.h` style): degrees → (degree order: endpoints renamed) → prefix
//! sum → scatter → sort/dedup per vertex → (RCM: relabel) → transpose (CSC)
//! → chunk table.

use rayon::prelude::*;

use crate::adjacency::Adjacency;
use crate::chunks::chunk_table;
use crate::graph::{Graph, GraphMeta, VertexOrder};
use crate::ids::IdMap;
use crate::order::{compute_order, degree_order, near_share, worth_degree_order, OrderChoice};
use crate::section::Section;
use crate::types::{EdgeIdx, VertexId, Weight, MAX_VERTICES};
use crate::{GraphError, Result};

/// What to do with self-loops `(v, v)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopPolicy {
    /// Store them.
    #[default]
    Keep,
    /// Leave them out.
    Drop,
}

/// What to do with several edges between the same ordered pair `(u, v)`
/// (for undirected graphs: the same unordered pair).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DuplicatePolicy {
    /// Store every copy (a multigraph).
    #[default]
    Keep,
    /// Store one copy; for weighted graphs the smallest weight is kept.
    Drop,
    /// Store one copy with the smallest weight (same as `Drop`).
    Min,
    /// Store one copy whose weight is the sum of the copies' weights.
    Sum,
}

impl std::str::FromStr for LoopPolicy {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "keep" => Ok(LoopPolicy::Keep),
            "drop" => Ok(LoopPolicy::Drop),
            _ => Err(format!(
                "unknown self-loop policy '{s}' (expected keep or drop)"
            )),
        }
    }
}

impl std::str::FromStr for DuplicatePolicy {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "keep" => Ok(DuplicatePolicy::Keep),
            "drop" => Ok(DuplicatePolicy::Drop),
            "min" => Ok(DuplicatePolicy::Min),
            "sum" => Ok(DuplicatePolicy::Sum),
            _ => Err(format!(
                "unknown duplicate policy '{s}' (expected keep, drop, min or sum)"
            )),
        }
    }
}

/// How to build a graph.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Directed graph (CSR + CSC) or undirected (one symmetric CSR).
    pub directed: bool,
    /// Self-loop policy.
    pub self_loops: LoopPolicy,
    /// Duplicate-edge policy.
    pub duplicates: DuplicatePolicy,
    /// Vertex order to apply (the natural one by default).
    pub order: OrderChoice,
}

impl BuildOptions {
    /// Directed, keep everything, natural order.
    pub fn directed() -> Self {
        BuildOptions {
            directed: true,
            ..Default::default()
        }
    }
    /// Undirected, keep everything, natural order.
    pub fn undirected() -> Self {
        BuildOptions::default()
    }
}

/// Edges in internal ids (`src[i] → dst[i]`, optional `weights[i]`), as
/// produced by the importers and generators.
#[derive(Clone, Debug, Default)]
pub struct EdgeBuffer {
    pub src: Vec<VertexId>,
    pub dst: Vec<VertexId>,
    pub weights: Option<Vec<Weight>>,
}

impl EdgeBuffer {
    /// An unweighted buffer from pairs.
    pub fn from_pairs(pairs: &[(VertexId, VertexId)]) -> Self {
        EdgeBuffer {
            src: pairs.iter().map(|p| p.0).collect(),
            dst: pairs.iter().map(|p| p.1).collect(),
            weights: None,
        }
    }
    /// A weighted buffer from triples.
    pub fn from_triples(t: &[(VertexId, VertexId, Weight)]) -> Self {
        EdgeBuffer {
            src: t.iter().map(|p| p.0).collect(),
            dst: t.iter().map(|p| p.1).collect(),
            weights: Some(t.iter().map(|p| p.2).collect()),
        }
    }
    /// Number of edges.
    pub fn len(&self) -> usize {
        self.src.len()
    }
    /// Whether there are no edges.
    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }
}

impl Graph {
    /// Builds a graph on vertices `0..n` (external id = internal id) from
    /// `(src, dst)` pairs. Convenient for tests and small programs.
    ///
    /// ```
    /// use plexus_graph::{Graph, BuildOptions};
    /// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 0)], &BuildOptions::directed()).unwrap();
    /// assert_eq!(g.num_vertices(), 4);
    /// assert_eq!(g.num_arcs(), 3);
    /// assert_eq!(g.in_neighbors(0), &[2]);
    /// ```
    pub fn from_edges(
        n: usize,
        pairs: &[(VertexId, VertexId)],
        opts: &BuildOptions,
    ) -> Result<Graph> {
        build(
            n,
            EdgeBuffer::from_pairs(pairs),
            IdMap::Identity { n },
            opts,
        )
    }

    /// Like [`Graph::from_edges`] with a weight per edge.
    pub fn from_weighted_edges(
        n: usize,
        triples: &[(VertexId, VertexId, Weight)],
        opts: &BuildOptions,
    ) -> Result<Graph> {
        build(
            n,
            EdgeBuffer::from_triples(triples),
            IdMap::Identity { n },
            opts,
        )
    }
}

/// Builds a graph on `n` vertices from `edges` (internal ids, every id `< n`)
/// with external ids `ids`.
pub fn build(n: usize, edges: EdgeBuffer, ids: IdMap, opts: &BuildOptions) -> Result<Graph> {
    if n as u64 >= MAX_VERTICES {
        return Err(GraphError::TooManyVertices {
            count: n as u64,
            limit: MAX_VERTICES - 1,
        });
    }
    if ids.len() != n {
        return Err(GraphError::InvalidArgument(format!(
            "id map has {} entries for {n} vertices",
            ids.len()
        )));
    }
    if let Some(bad) = edges
        .src
        .par_iter()
        .chain(edges.dst.par_iter())
        .find_any(|&&v| v as usize >= n)
    {
        return Err(GraphError::InvalidArgument(format!(
            "edge endpoint {bad} is not below the vertex count {n}"
        )));
    }
    let weighted = edges.weights.is_some();
    let drop_loops = opts.self_loops == LoopPolicy::Drop;
    let EdgeBuffer {
        mut src,
        mut dst,
        weights,
    } = edges;
    let m = src.len();
    let symmetric = !opts.directed;
    let by_degree = match opts.order {
        OrderChoice::Auto | OrderChoice::Exactly(VertexOrder::Degree) => n > 0,
        OrderChoice::Exactly(_) => false,
    };
    let near = (opts.order == OrderChoice::Auto).then(|| near_share(&src, &dst));

    // Steps 1–3: degrees, (degree order,) prefix sum, scatter (both
    // directions for undirected).
    let bounds = chunk_bounds(m, n, |i| i as u64 * if symmetric { 2 } else { 1 });
    let chunks = ranges(&bounds);
    let t = std::time::Instant::now();
    // A directed arc adds to its target's degree too.
    let count_targets = by_degree && !symmetric;
    let arcs = EdgeArcs::new(&src, &dst, weights.as_deref(), drop_loops, symmetric);
    let (mut counts, into) = count_arcs(n, &chunks, &arcs, count_targets);
    let t = crate::trace::phase("count degrees", t);
    // Degree order, from each vertex's arcs in the input (duplicates
    // counted), is applied before the scatter: the counts follow their
    // vertices and the endpoints are renamed in place, so arcs land in their
    // new lists at once and no relabelling pass follows.
    let scattered_order = by_degree
        .then(|| {
            let deg: Vec<u64> = (0..n)
                .into_par_iter()
                .map(|v| counts.iter().chain(&into).map(|c| c[v]).sum())
                .collect();
            near.is_none_or(|near| worth_degree_order(&deg, near))
                .then(|| with_inverse(degree_order(&deg)))
        })
        .flatten();
    drop(into);
    if let Some((old_of_new, new_of_old)) = &scattered_order {
        for c in counts.iter_mut() {
            *c = old_of_new.par_iter().map(|&old| c[old as usize]).collect();
        }
        src.par_iter_mut()
            .chain(dst.par_iter_mut())
            .for_each(|v| *v = new_of_old[*v as usize]);
        crate::trace::phase("degree order", t);
    }
    let arcs = EdgeArcs::new(&src, &dst, weights.as_deref(), drop_loops, symmetric);
    let mut out = place(n, weighted, &chunks, counts, &arcs);
    drop((src, dst, weights));
    let t = std::time::Instant::now();
    // Step 4: sort each list, apply the duplicate policy.
    sort_lists(&mut out);
    let t = crate::trace::phase("sort lists", t);
    if opts.duplicates != DuplicatePolicy::Keep {
        out = dedup_lists(out, opts.duplicates);
    }
    let t = crate::trace::phase("duplicates", t);
    let mut out = into_adjacency(out);

    // Step 5: an order other than degree's, on the built lists. An empty
    // graph has no permutation to store, so it records no order.
    let (perm, order) = match (scattered_order, opts.order) {
        (Some(p), _) => (Some(p), VertexOrder::Degree),
        (None, OrderChoice::Exactly(o @ VertexOrder::Rcm)) if n > 0 => {
            let (old_of_new, new_of_old) = with_inverse(compute_order(&out, o, opts.directed));
            out = relabel(&out, &old_of_new, &new_of_old);
            (Some((old_of_new, new_of_old)), o)
        }
        _ => (None, VertexOrder::None),
    };
    let (ids, perm) = match perm {
        Some((old_of_new, new_of_old)) => (
            ids.permuted(&old_of_new),
            Some((Section::owned(old_of_new), Section::owned(new_of_old))),
        ),
        None => (ids, None),
    };
    let t = crate::trace::phase("order", t);
    // Step 6: in-edges.
    let inc = opts.directed.then(|| transpose(&out));
    let t = crate::trace::phase("in-edges", t);
    let g = assemble(out, inc, ids, perm, opts.directed, order);
    crate::trace::phase("assemble", t);
    Ok(g)
}

/// `(old_of_new, new_of_old)` from `old_of_new`.
fn with_inverse(old_of_new: Vec<VertexId>) -> (Vec<VertexId>, Vec<VertexId>) {
    let mut new_of_old = vec![0 as VertexId; old_of_new.len()];
    for (new, &old) in old_of_new.iter().enumerate() {
        new_of_old[old as usize] = new as VertexId;
    }
    (old_of_new, new_of_old)
}

/// Computes the derived facts (self-loops, integrality, chunks) and returns
/// the graph. Shared by the builder and the store's reader for owned data.
pub(crate) fn assemble(
    out: Adjacency,
    inc: Option<Adjacency>,
    ids: IdMap,
    perm: Option<(Section<VertexId>, Section<VertexId>)>,
    directed: bool,
    order: VertexOrder,
) -> Graph {
    let n = out.num_vertices();
    let self_loops: u64 = (0..n as VertexId)
        .into_par_iter()
        .map(|v| {
            let nb = out.neighbors(v);
            let first = nb.partition_point(|&x| x < v);
            nb[first..].iter().take_while(|&&x| x == v).count() as u64
        })
        .sum();
    let weighted = out.weights.is_some();
    let integral_weights = weighted
        && out
            .weight_array()
            .unwrap_or(&[])
            .par_iter()
            .all(|w| w.fract() == 0.0);
    let chunks = Section::owned(chunk_table(&out, inc.as_ref()));
    Graph {
        meta: GraphMeta {
            directed,
            weighted,
            integral_weights,
            order,
            self_loops,
        },
        out,
        inc,
        ids,
        old_of_new: perm.as_ref().map(|p| p.0.clone()),
        new_of_old: perm.map(|p| p.1),
        chunks,
        weight_stats: Default::default(),
        strictly_increasing: Default::default(),
        tiles: None,
        base_version: 0,
    }
}

/// Adjacency under construction (owned vectors).
struct Lists {
    offsets: Vec<EdgeIdx>,
    nbrs: Vec<VertexId>,
    weights: Option<Vec<Weight>>,
}

fn into_adjacency(l: Lists) -> Adjacency {
    Adjacency {
        offsets: Section::owned(l.offsets),
        neighbors: Section::owned(l.nbrs),
        weights: l.weights.map(Section::owned),
    }
}

/// A slice that several threads write at distinct indices.
struct DisjointWriter<T> {
    ptr: *mut T,
    len: usize,
}
// SAFETY: `DisjointWriter` only hands out writes to distinct indices (in
// `scatter` each chunk writes only the slots of its own cursor ranges, which
// the prefix sum makes disjoint), so sharing it across threads cannot create
// two live writes to one element.
#[allow(unsafe_code)]
unsafe impl<T: Send> Sync for DisjointWriter<T> {}

impl<T> DisjointWriter<T> {
    fn new(v: &mut [T]) -> Self {
        DisjointWriter {
            ptr: v.as_mut_ptr(),
            len: v.len(),
        }
    }
    /// Writes `val` at `i`. Each `i` must be written by at most one thread.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn write(&self, i: usize, val: T) {
        assert!(i < self.len, "scatter index out of bounds");
        // SAFETY: `i < len` is checked above, the buffer outlives `self`
        // (borrowed for the scatter's duration), and the caller owns slot
        // `i` alone (its cursor range in `scatter`), so no other thread
        // touches element `i`.
        unsafe { self.ptr.add(i).write(val) }
    }
}

/// Steps 1–3 of the build: count degrees, prefix-sum them into offsets and
/// scatter the arcs into place. The input is items `0..items` (edges, or
/// vertices for a transpose) cut at `bounds` (increasing, from 0 to
/// `items`) into chunks; `arcs(range)` yields the arcs `(u, v, w)` that the
/// items of `range` make, the same ones each time it is called (a trait
/// with a generic callback, not an iterator: a `flat_map` of per-edge
/// `Chain`s ran the scatter several times slower than the callback loop).
///
/// Each chunk counts and writes with its own cursor per vertex, so no write
/// waits on an atomic: a locked `fetch_add` per arc drained the store
/// buffer before every scatter write, which left the writes' cache misses
/// one at a time.
/// A vertex's arcs land in chunk order and, within a chunk, in the order
/// `arcs` yields them; lists come out unsorted for [`sort_lists`].
fn scatter(n: usize, weighted: bool, bounds: &[usize], arcs: &impl ArcSource) -> Lists {
    let chunks = ranges(bounds);
    let t = std::time::Instant::now();
    let (counts, _) = count_arcs(n, &chunks, arcs, false);
    crate::trace::phase("count degrees", t);
    place(n, weighted, &chunks, counts, arcs)
}

/// The chunks `bounds` cut.
fn ranges(bounds: &[usize]) -> Vec<std::ops::Range<usize>> {
    bounds.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Per chunk, its arcs per source vertex, and, when `count_targets`, per
/// target vertex (else no chunk's).
type ChunkCounts = (Vec<Vec<EdgeIdx>>, Vec<Vec<EdgeIdx>>);

/// Counts, per chunk of `arcs`, the arcs of every source vertex, and of
/// every target vertex when `count_targets`.
fn count_arcs(
    n: usize,
    chunks: &[std::ops::Range<usize>],
    arcs: &impl ArcSource,
    count_targets: bool,
) -> ChunkCounts {
    let (counts, mut into): ChunkCounts = chunks
        .par_iter()
        .with_max_len(1)
        .map(|r| {
            let mut count = vec![0 as EdgeIdx; n];
            let mut into = vec![0 as EdgeIdx; if count_targets { n } else { 0 }];
            arcs.for_each_arc(r.clone(), |u, v, _| {
                count[u as usize] += 1;
                if count_targets {
                    into[v as usize] += 1;
                }
            });
            (count, into)
        })
        .unzip();
    into.retain(|c| !c.is_empty());
    (counts, into)
}

/// The scatter's second half: offsets from the per-chunk counts of
/// [`count_arcs`], then every arc written at its chunk's cursor.
fn place(
    n: usize,
    weighted: bool,
    chunks: &[std::ops::Range<usize>],
    mut cursors: Vec<Vec<EdgeIdx>>,
    arcs: &impl ArcSource,
) -> Lists {
    let t = std::time::Instant::now();
    // Offsets, and each chunk's first slot per vertex: the vertex's offset
    // plus the arcs the chunks before it hold.
    let mut offsets = Vec::with_capacity(n + 1);
    let mut total: EdgeIdx = 0;
    offsets.push(0);
    for v in 0..n {
        for c in cursors.iter_mut() {
            let k = c[v];
            c[v] = total;
            total += k;
        }
        offsets.push(total);
    }
    let t = crate::trace::phase("offsets", t);
    let mut nbrs = vec![0 as VertexId; total as usize];
    let mut weights = weighted.then(|| vec![0.0 as Weight; total as usize]);
    {
        let nw = DisjointWriter::new(&mut nbrs);
        let ww = weights.as_mut().map(|w| DisjointWriter::new(w));
        chunks
            .par_iter()
            .zip(cursors.par_iter_mut())
            .with_max_len(1)
            .for_each(|(r, cursor)| {
                arcs.for_each_arc(r.clone(), |u, v, w| {
                    let slot = cursor[u as usize] as usize;
                    cursor[u as usize] += 1;
                    nw.write(slot, v);
                    if let Some(ww) = &ww {
                        ww.write(slot, w);
                    }
                });
            });
    }
    crate::trace::phase("place arcs", t);
    Lists {
        offsets,
        nbrs,
        weights,
    }
}

/// The arcs that items (edges, vertices) make, for [`scatter`].
trait ArcSource: Sync {
    /// Calls `f(u, v, w)` for every arc that the items in `range` make, in
    /// the same order every time.
    fn for_each_arc(
        &self,
        range: std::ops::Range<usize>,
        f: impl FnMut(VertexId, VertexId, Weight),
    );
}

/// The arcs of an edge buffer: `u → v` per kept edge, and `v → u` too when
/// the graph is symmetric (not for a self-loop, stored once).
struct EdgeArcs<'a> {
    src: &'a [VertexId],
    dst: &'a [VertexId],
    weights: Option<&'a [Weight]>,
    drop_loops: bool,
    symmetric: bool,
}

impl<'a> EdgeArcs<'a> {
    fn new(
        src: &'a [VertexId],
        dst: &'a [VertexId],
        weights: Option<&'a [Weight]>,
        drop_loops: bool,
        symmetric: bool,
    ) -> Self {
        EdgeArcs {
            src,
            dst,
            weights,
            drop_loops,
            symmetric,
        }
    }
}

impl ArcSource for EdgeArcs<'_> {
    fn for_each_arc(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(VertexId, VertexId, Weight),
    ) {
        for i in range {
            let (u, v) = (self.src[i], self.dst[i]);
            if self.drop_loops && u == v {
                continue;
            }
            let w = self.weights.map_or(0.0, |w| w[i]);
            f(u, v, w);
            if self.symmetric && u != v {
                f(v, u, w);
            }
        }
    }
}

/// The arcs of an adjacency reversed: `v → u` for every arc `u → v` of the
/// vertices in the range.
struct ReversedArcs<'a>(&'a Adjacency);

impl ArcSource for ReversedArcs<'_> {
    fn for_each_arc(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(VertexId, VertexId, Weight),
    ) {
        let a = self.0;
        let w = a.weight_array();
        for u in range {
            let u = u as VertexId;
            for i in a.range(u) {
                f(a.neighbors[i], u, w.map_or(0.0, |w| w[i]));
            }
        }
    }
}

/// Chunk bounds for [`scatter`]: `0..items` cut into about as many chunks
/// as worker threads, fewer when one cursor array per chunk (8 B a vertex)
/// would outgrow a quarter of the 12 B an arc that the lists take; `cost`
/// is the running arc count before each item (`cost(items)` the total), so
/// chunks hold about equal arcs.
fn chunk_bounds(items: usize, n: usize, cost: impl Fn(usize) -> u64) -> Vec<usize> {
    let total = cost(items);
    let by_memory = (total.saturating_mul(3) / (8 * n.max(1) as u64)).max(1) as usize;
    let chunks = rayon::current_num_threads().min(by_memory).max(1);
    let mut bounds = vec![0usize];
    for c in 1..chunks {
        let want = total * c as u64 / chunks as u64;
        // The first item at or after the wanted share of arcs.
        let (mut lo, mut hi) = (*bounds.last().unwrap_or(&0), items);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cost(mid) < want {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        bounds.push(lo);
    }
    bounds.push(items);
    bounds
}

/// Vertex-range blocks of roughly equal edge counts, for parallel per-vertex
/// work on disjoint slices.
fn blocks(offsets: &[EdgeIdx]) -> Vec<usize> {
    let m = offsets[offsets.len() - 1];
    let min_arcs = (m / (rayon::current_num_threads() as u64 * 64)).max(4096);
    vertex_blocks(offsets, min_arcs, 65536)
}

/// Block bounds `0 = b_0 < b_1 < … = n` over the vertices of `offsets`: a
/// block closes once it holds `min_arcs` arcs or `max_vertices` vertices
/// (`max_vertices ≥ 1`). Empty for `n = 0` but for the leading 0.
pub(crate) fn vertex_blocks(offsets: &[EdgeIdx], min_arcs: u64, max_vertices: usize) -> Vec<usize> {
    let n = offsets.len() - 1;
    let mut b = vec![0usize];
    let mut last = 0u64;
    for (v, &off) in offsets[..n].iter().enumerate() {
        if off - last >= min_arcs || (v - b[b.len() - 1]) >= max_vertices {
            b.push(v);
            last = off;
        }
    }
    if n > 0 {
        b.push(n);
    }
    b.dedup();
    b
}

/// Splits `data` (indexed by edge) at the block boundaries.
fn split_by_blocks<'a, T>(
    mut data: &'a mut [T],
    offsets: &[EdgeIdx],
    bounds: &[usize],
) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(bounds.len());
    for w in bounds.windows(2) {
        let len = (offsets[w[1]] - offsets[w[0]]) as usize;
        let (head, tail) = data.split_at_mut(len);
        parts.push(head);
        data = tail;
    }
    parts
}

fn sort_lists(l: &mut Lists) {
    let bounds = blocks(&l.offsets);
    let offsets = &l.offsets;
    let nparts = split_by_blocks(&mut l.nbrs, offsets, &bounds);
    match &mut l.weights {
        None => nparts.into_par_iter().enumerate().for_each(|(b, part)| {
            let base = offsets[bounds[b]];
            for v in bounds[b]..bounds[b + 1] {
                let r = (offsets[v] - base) as usize..(offsets[v + 1] - base) as usize;
                part[r].sort_unstable();
            }
        }),
        Some(w) => {
            let wparts = split_by_blocks(w, offsets, &bounds);
            nparts
                .into_par_iter()
                .zip(wparts)
                .enumerate()
                .for_each(|(b, (np, wp))| {
                    let base = offsets[bounds[b]];
                    let mut tmp: Vec<(VertexId, Weight)> = Vec::new();
                    for v in bounds[b]..bounds[b + 1] {
                        let r = (offsets[v] - base) as usize..(offsets[v + 1] - base) as usize;
                        tmp.clear();
                        tmp.extend(
                            np[r.clone()]
                                .iter()
                                .copied()
                                .zip(wp[r.clone()].iter().copied()),
                        );
                        tmp.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
                        for (k, (t, x)) in tmp.iter().enumerate() {
                            np[r.start + k] = *t;
                            wp[r.start + k] = *x;
                        }
                    }
                });
        }
    }
}

/// Removes repeated neighbours from sorted lists by `policy`, compacting the
/// arrays in place (the write position never passes the read position), so
/// no second copy of the edges is needed.
fn dedup_lists(mut l: Lists, policy: DuplicatePolicy) -> Lists {
    let n = l.offsets.len() - 1;
    let mut write = 0usize;
    let mut start = l.offsets[0] as usize;
    for v in 0..n {
        let end = l.offsets[v + 1] as usize;
        let list_start = write;
        for i in start..end {
            let t = l.nbrs[i];
            if write > list_start && l.nbrs[write - 1] == t {
                if let (Some(w), DuplicatePolicy::Sum) = (l.weights.as_mut(), policy) {
                    w[write - 1] += w[i];
                }
                continue;
            }
            l.nbrs[write] = t;
            if let Some(w) = l.weights.as_mut() {
                w[write] = w[i];
            }
            write += 1;
        }
        start = end;
        l.offsets[v + 1] = write as u64;
    }
    l.nbrs.truncate(write);
    l.nbrs.shrink_to_fit();
    if let Some(w) = l.weights.as_mut() {
        w.truncate(write);
        w.shrink_to_fit();
    }
    l
}

/// The in-edge adjacency (CSC) of `out`, lists sorted.
pub(crate) fn transpose(out: &Adjacency) -> Adjacency {
    let n = out.num_vertices();
    let w = out.weight_array();
    let offsets = out.offsets();
    let bounds = chunk_bounds(n, n, |v| offsets[v]);
    let mut l = scatter(n, w.is_some(), &bounds, &ReversedArcs(out));
    sort_lists(&mut l);
    into_adjacency(l)
}

/// Renames every vertex `old` to `new_of_old[old]`; lists sorted again.
fn relabel(a: &Adjacency, old_of_new: &[VertexId], new_of_old: &[VertexId]) -> Adjacency {
    let n = a.num_vertices();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    let mut total = 0;
    for &old in old_of_new {
        total += a.degree(old) as u64;
        offsets.push(total);
    }
    let mut l = Lists {
        nbrs: vec![0; total as usize],
        weights: a.weights.as_ref().map(|_| vec![0.0; total as usize]),
        offsets,
    };
    let bounds = blocks(&l.offsets);
    {
        let offsets = &l.offsets;
        let nparts = split_by_blocks(&mut l.nbrs, offsets, &bounds);
        let mut wparts: Vec<Option<&mut [Weight]>> = match &mut l.weights {
            Some(w) => split_by_blocks(w, offsets, &bounds)
                .into_iter()
                .map(Some)
                .collect(),
            None => (0..nparts.len()).map(|_| None).collect(),
        };
        nparts
            .into_par_iter()
            .zip(wparts.par_iter_mut())
            .enumerate()
            .for_each(|(b, (np, wp))| {
                let base = offsets[bounds[b]];
                for new in bounds[b]..bounds[b + 1] {
                    let old = old_of_new[new];
                    let s = (offsets[new] - base) as usize;
                    for (k, &t) in a.neighbors(old).iter().enumerate() {
                        np[s + k] = new_of_old[t as usize];
                    }
                    if let (Some(wp), Some(ws)) = (wp.as_mut(), a.weights(old)) {
                        wp[s..s + ws.len()].copy_from_slice(ws);
                    }
                }
            });
    }
    sort_lists(&mut l);
    into_adjacency(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undirected_build_stores_both_arcs_and_loops_once() {
        let g =
            Graph::from_edges(3, &[(0, 1), (1, 1), (2, 1)], &BuildOptions::undirected()).unwrap();
        assert_eq!(g.out_neighbors(1), &[0, 1, 2]);
        assert_eq!(g.num_arcs(), 5);
        assert_eq!(g.num_edges(), 3);
        assert_eq!(g.meta().self_loops, 1);
    }

    #[test]
    fn strictly_increasing_lists_are_told_apart_from_duplicate_arcs() {
        let edges = [(0, 1), (1, 2), (0, 1)];
        let mut o = BuildOptions::undirected();
        o.duplicates = DuplicatePolicy::Keep;
        let multi = Graph::from_edges(3, &edges, &o).unwrap();
        assert!(!multi.out_lists_strictly_increasing());
        // Cached: the second call answers the same.
        assert!(!multi.out_lists_strictly_increasing());
        o.duplicates = DuplicatePolicy::Drop;
        let simple = Graph::from_edges(3, &edges, &o).unwrap();
        assert!(simple.out_lists_strictly_increasing());
        let empty = Graph::from_edges(2, &[], &o).unwrap();
        assert!(empty.out_lists_strictly_increasing());
    }

    #[test]
    fn duplicate_policies_combine_weights() {
        let t = [(0, 1, 3.0), (0, 1, 2.0), (0, 1, 5.0), (1, 0, 1.0)];
        let mut o = BuildOptions::directed();
        o.duplicates = DuplicatePolicy::Keep;
        let g = Graph::from_weighted_edges(2, &t, &o).unwrap();
        assert_eq!(g.out_weights(0).unwrap(), &[2.0, 3.0, 5.0]);
        o.duplicates = DuplicatePolicy::Min;
        let g = Graph::from_weighted_edges(2, &t, &o).unwrap();
        assert_eq!(g.out_weights(0).unwrap(), &[2.0]);
        o.duplicates = DuplicatePolicy::Sum;
        let g = Graph::from_weighted_edges(2, &t, &o).unwrap();
        assert_eq!(g.out_weights(0).unwrap(), &[10.0]);
        assert_eq!(g.in_weights(0).unwrap(), &[1.0]);
    }

    #[test]
    fn scatter_writes_every_slot_once_under_parallel_load() {
        // Exercises the DisjointWriter unsafe block with many threads writing.
        let n = 1000u32;
        let pairs: Vec<(u32, u32)> = (0..200_000u32).map(|i| (i % n, (i * 7919) % n)).collect();
        let g = Graph::from_edges(n as usize, &pairs, &BuildOptions::directed()).unwrap();
        let mut want = pairs.clone();
        want.sort_unstable();
        let got: Vec<(u32, u32)> = g.arcs().map(|(u, v, _)| (u, v)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_build_is_the_same_with_any_number_of_scatter_chunks() {
        // One cursor array per chunk (as many as threads): every chunk count
        // must give the same arrays, weights, duplicates and loops included,
        // for the out-lists and for the transpose of a directed graph.
        let n = 500u32;
        let t: Vec<(u32, u32, f64)> = (0..20_000u32)
            .map(|i| {
                let u = (i * 7919) % n;
                let v = if i % 97 == 0 {
                    u
                } else {
                    (i * 104_729) % (n / 2 + i % 3)
                };
                (u, v, f64::from(i % 5))
            })
            .collect();
        for directed in [true, false] {
            let mut o = if directed {
                BuildOptions::directed()
            } else {
                BuildOptions::undirected()
            };
            o.duplicates = DuplicatePolicy::Sum;
            let build_with = |threads| {
                tests_support::with_threads(threads, || {
                    Graph::from_weighted_edges(n as usize, &t, &o).unwrap()
                })
            };
            let one = build_with(1);
            for threads in [2, 3, 7] {
                let g = build_with(threads);
                assert_eq!(g.out().offsets(), one.out().offsets(), "{threads} threads");
                assert_eq!(g.out().neighbor_array(), one.out().neighbor_array());
                assert_eq!(g.out().weight_array(), one.out().weight_array());
                assert_eq!(g.inc().offsets(), one.inc().offsets());
                assert_eq!(g.inc().neighbor_array(), one.inc().neighbor_array());
                assert_eq!(g.inc().weight_array(), one.inc().weight_array());
            }
        }
    }

    #[test]
    fn scatter_chunks_cover_the_items_in_order_within_the_memory_cap() {
        for threads in [1, 2, 5] {
            tests_support::with_threads(threads, || {
                // Equal arcs per item: equal chunks, one per thread.
                let b = chunk_bounds(1000, 10, |i| 2 * i as u64);
                assert_eq!(b.len(), threads + 1);
                assert_eq!((b[0], b[threads]), (0, 1000));
                assert!(b.windows(2).all(|w| w[0] <= w[1]));
                // Nothing to cut.
                assert_eq!(chunk_bounds(0, 0, |_| 0), vec![0, 0]);
                // Far more vertices than arcs: one chunk, one cursor array.
                assert_eq!(chunk_bounds(10, 1 << 20, |i| i as u64), vec![0, 10]);
            });
        }
    }

    #[test]
    fn out_of_range_endpoint_is_an_error() {
        assert!(Graph::from_edges(2, &[(0, 5)], &BuildOptions::directed()).is_err());
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    /// Runs `f` on a pool of `n` threads.
    pub fn with_threads<R: Send>(n: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(f)
    }
}
