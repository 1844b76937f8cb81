//! Point queries on a snapshot (issue 47 §4): neighbours, degrees, edge
//! tests, k-hop neighbourhoods and shortest paths.
//!
//! Every function reads one [`Snapshot`], so a query sees one version
//! whatever commits follow. Ids in and out are live ids (the snapshot's
//! internal ids); callers map external ids with [`Snapshot::resolve`] and
//! [`Snapshot::external`]. A vertex that is not alive in the snapshot is
//! [`QueryError::UnknownVertex`].
//!
//! Methods:
//! - [`khop`]: a BFS along out-edges, level by level, each level sorted, so
//!   the answer is ascending by hop, then by id. [`khop_count`] counts
//!   without building the list: one hop is the distinct out-neighbours (no
//!   visited set), and the last level is counted, not stored.
//! - [`path`]: on unweighted graphs a bidirectional BFS (forward from `u`
//!   on out-edges, backward from `v` on in-edges, each round expanding the
//!   frontier with fewer edges); on weighted graphs Dijkstra with a binary
//!   heap, stopped when `v` is settled. Dijkstra needs weights that are
//!   neither negative nor NaN: the snapshot's weights are checked first
//!   (the base's once per opened graph, [`plexus_graph::Graph::weight_stats`],
//!   then the changed lists), and a bad one is
//!   [`QueryError::InvalidWeight`], naming the edge.
//!
//! Visited sets: a [`QueryScratch`] holds them between queries. It starts
//! as a hash map sized to what a query visits; once a query visits more
//! than 1/32 of the live ids it switches to generation-stamped arrays of
//! the id bound, which later queries through the same scratch reuse
//! without clearing. The functions without `_with` make a fresh scratch.
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Arc, Weak};

use plexus_graph::{VertexId, Weight};

use crate::version::{Snapshot, VersionData};

/// What a point query can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// A live id that is not alive in the snapshot.
    #[error("vertex with internal id {v} does not exist at version {version}")]
    UnknownVertex { v: VertexId, version: u64 },
    /// A negative or NaN weight where Dijkstra needs non-negative ones.
    #[error("edge {u} -> {v} (internal ids) has weight {w}; shortest paths need weights that are not negative or NaN")]
    InvalidWeight { u: VertexId, v: VertexId, w: Weight },
}

/// Result alias of the queries.
pub type QueryResult<T> = std::result::Result<T, QueryError>;

/// Which edges of a vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Out-edges (all edges on undirected graphs).
    Out,
    /// In-edges (the out-edges on undirected graphs).
    In,
}

/// A vertex's neighbours, borrowed from the snapshot: sorted by live id
/// (copies of one edge kept, as stored), with weights on weighted graphs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbors<'a> {
    pub ids: &'a [VertexId],
    pub weights: Option<&'a [Weight]>,
}

/// A shortest path.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// From `u` to `v`, both included.
    pub vertices: Vec<VertexId>,
    /// Edges on the path (`vertices.len() - 1`).
    pub hops: u32,
    /// The sum of the weights on weighted graphs (`None` on unweighted
    /// ones, where `hops` is the length).
    pub length: Option<f64>,
}

fn alive(s: &Snapshot, v: VertexId) -> QueryResult<()> {
    if (v as usize) < s.id_bound() && s.is_alive(v) {
        Ok(())
    } else {
        Err(QueryError::UnknownVertex {
            v,
            version: s.version(),
        })
    }
}

fn list(s: &Snapshot, v: VertexId, dir: Direction) -> (&[VertexId], Option<&[Weight]>) {
    match dir {
        Direction::Out => s.out(v),
        Direction::In => s.inc(v),
    }
}

/// The neighbours of `v` in direction `dir`.
pub fn neighbors(s: &Snapshot, v: VertexId, dir: Direction) -> QueryResult<Neighbors<'_>> {
    alive(s, v)?;
    let (ids, weights) = list(s, v, dir);
    Ok(Neighbors { ids, weights })
}

/// The degree of `v` in direction `dir` (stored arcs; a self-loop of an
/// undirected graph counts once).
pub fn degree(s: &Snapshot, v: VertexId, dir: Direction) -> QueryResult<usize> {
    alive(s, v)?;
    Ok(list(s, v, dir).0.len())
}

/// Whether the edge `u → v` exists (`{u, v}` on undirected graphs).
pub fn has_edge(s: &Snapshot, u: VertexId, v: VertexId) -> QueryResult<bool> {
    alive(s, u)?;
    alive(s, v)?;
    Ok(s.has_edge(u, v))
}

type IdMap<T> = crate::version::IdMapOf<VertexId, T>;

/// A map from live ids to `T`: a hash map while small, then arrays of the
/// id bound whose entries count only when stamped with the current
/// generation (cleared in O(1)).
struct Marks<T> {
    sparse: IdMap<T>,
    dense: bool,
    generation: u32,
    stamp: Vec<u32>,
    val: Vec<T>,
}

/// Below this many entries a map stays sparse whatever the id bound.
const DENSE_MIN: usize = 1 << 12;

impl<T: Copy + Default> Marks<T> {
    fn new() -> Self {
        Marks {
            sparse: IdMap::default(),
            dense: false,
            generation: 1,
            stamp: Vec::new(),
            val: Vec::new(),
        }
    }

    /// Empties the map for a query on ids below `bound`.
    fn reset(&mut self, bound: usize) {
        self.sparse.clear();
        if !self.dense {
            return;
        }
        if self.stamp.len() < bound {
            self.stamp.resize(bound, 0);
            self.val.resize(bound, T::default());
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.iter_mut().for_each(|x| *x = 0);
            self.generation = 1;
        }
    }

    fn get(&self, v: VertexId) -> Option<T> {
        if self.dense {
            let i = v as usize;
            (self.stamp.get(i) == Some(&self.generation)).then(|| self.val[i])
        } else {
            self.sparse.get(&v).copied()
        }
    }

    fn get_mut(&mut self, v: VertexId) -> Option<&mut T> {
        if self.dense {
            let i = v as usize;
            if self.stamp.get(i) == Some(&self.generation) {
                Some(&mut self.val[i])
            } else {
                None
            }
        } else {
            self.sparse.get_mut(&v)
        }
    }

    /// Sets `v`'s entry; `bound` is the id bound of the query's snapshot.
    fn set(&mut self, v: VertexId, t: T, bound: usize) {
        if self.dense {
            let i = v as usize;
            if i >= self.stamp.len() {
                self.stamp.resize(bound.max(i + 1), 0);
                self.val.resize(bound.max(i + 1), T::default());
            }
            self.stamp[i] = self.generation;
            self.val[i] = t;
            return;
        }
        self.sparse.insert(v, t);
        if self.sparse.len() > DENSE_MIN.max(bound / 32) {
            self.go_dense(bound);
        }
    }

    fn go_dense(&mut self, bound: usize) {
        let need = bound.max(
            self.sparse
                .keys()
                .map(|&k| k as usize + 1)
                .max()
                .unwrap_or(0),
        );
        if self.stamp.len() < need {
            self.stamp.resize(need, 0);
            self.val.resize(need, T::default());
        }
        self.dense = true;
        self.reset_generation_only();
        for (&k, &t) in &self.sparse {
            self.stamp[k as usize] = self.generation;
            self.val[k as usize] = t;
        }
        self.sparse = IdMap::default();
    }

    fn reset_generation_only(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.iter_mut().for_each(|x| *x = 0);
            self.generation = 1;
        }
    }
}

/// A vertex's state in a bidirectional BFS: the side that reached it and
/// its parent on that side (itself for `u` and `v`).
#[derive(Clone, Copy, Default)]
struct Reached {
    backward: bool,
    parent: VertexId,
}

/// A vertex's state on one side of a bidirectional Dijkstra: its
/// tentative distance from that side's root, the neighbour it was reached
/// from (itself for the root) and the weight of the arc between them.
#[derive(Clone, Copy, Default)]
struct Label {
    dist: f64,
    parent: VertexId,
    w: f64,
    settled: bool,
}

impl Label {
    fn new(dist: f64, parent: VertexId, w: f64) -> Self {
        Label {
            dist,
            parent,
            w,
            settled: false,
        }
    }

    fn root(x: VertexId) -> Self {
        Label::new(0.0, x, 0.0)
    }
}

/// Reusable visited sets and frontiers for repeated queries (one per
/// thread). Any snapshot may be queried through any scratch.
pub struct QueryScratch {
    seen: Marks<()>,
    reached: Marks<Reached>,
    labels: Marks<Label>,
    labels_back: Marks<Label>,
    frontier: Vec<VertexId>,
    next: Vec<VertexId>,
    other: Vec<VertexId>,
    heap: BinaryHeap<Entry>,
    heap_back: BinaryHeap<Entry>,
    /// The version whose weights were last found valid (held weakly, so
    /// its address is not reused while it is remembered).
    weights_ok: Weak<VersionData>,
}

impl Default for QueryScratch {
    fn default() -> Self {
        Self::new()
    }
}

impl QueryScratch {
    /// An empty scratch (allocates nothing until used).
    pub fn new() -> Self {
        QueryScratch {
            seen: Marks::new(),
            reached: Marks::new(),
            labels: Marks::new(),
            labels_back: Marks::new(),
            frontier: Vec::new(),
            next: Vec::new(),
            other: Vec::new(),
            heap: BinaryHeap::new(),
            heap_back: BinaryHeap::new(),
            weights_ok: Weak::new(),
        }
    }

    /// A scratch whose visited sets are arrays of the id bound from the
    /// first query on (for many queries on one large graph; a single query
    /// then costs an array of the id bound).
    pub fn dense() -> Self {
        let mut sc = QueryScratch::new();
        sc.seen.dense = true;
        sc.reached.dense = true;
        sc.labels.dense = true;
        sc.labels_back.dense = true;
        sc
    }
}

/// The vertices within `k` hops of `v` along out-edges, `v` excluded, with
/// their hop counts: ascending by hop, then by id.
pub fn khop(s: &Snapshot, v: VertexId, k: u32) -> QueryResult<Vec<(VertexId, u32)>> {
    khop_with(s, v, k, &mut QueryScratch::new())
}

/// [`khop`] through a reusable scratch.
pub fn khop_with(
    s: &Snapshot,
    v: VertexId,
    k: u32,
    sc: &mut QueryScratch,
) -> QueryResult<Vec<(VertexId, u32)>> {
    alive(s, v)?;
    let bound = s.id_bound();
    let mut out = Vec::new();
    sc.seen.reset(bound);
    sc.seen.set(v, (), bound);
    sc.frontier.clear();
    sc.frontier.push(v);
    for hop in 1..=k {
        sc.next.clear();
        for &x in &sc.frontier {
            for &y in s.out(x).0 {
                if sc.seen.get(y).is_none() {
                    sc.seen.set(y, (), bound);
                    sc.next.push(y);
                }
            }
        }
        if sc.next.is_empty() {
            break;
        }
        sc.next.sort_unstable();
        out.extend(sc.next.iter().map(|&y| (y, hop)));
        std::mem::swap(&mut sc.frontier, &mut sc.next);
    }
    Ok(out)
}

/// How many vertices are within `k` hops of `v` along out-edges, `v`
/// excluded ([`khop`]'s length, without building it).
pub fn khop_count(s: &Snapshot, v: VertexId, k: u32) -> QueryResult<u64> {
    khop_count_with(s, v, k, &mut QueryScratch::new())
}

/// [`khop_count`] through a reusable scratch.
pub fn khop_count_with(
    s: &Snapshot,
    v: VertexId,
    k: u32,
    sc: &mut QueryScratch,
) -> QueryResult<u64> {
    alive(s, v)?;
    if k == 0 {
        return Ok(0);
    }
    if k == 1 {
        // The distinct out-neighbours other than `v`: the list is sorted.
        let nb = s.out(v).0;
        let distinct = nb
            .iter()
            .enumerate()
            .filter(|&(i, &y)| i == 0 || nb[i - 1] != y);
        return Ok(distinct.filter(|&(_, &y)| y != v).count() as u64);
    }
    let bound = s.id_bound();
    sc.seen.reset(bound);
    sc.seen.set(v, (), bound);
    sc.frontier.clear();
    sc.frontier.push(v);
    let mut count = 0u64;
    for hop in 1..=k {
        let last = hop == k;
        sc.next.clear();
        for &x in &sc.frontier {
            for &y in s.out(x).0 {
                if sc.seen.get(y).is_none() {
                    sc.seen.set(y, (), bound);
                    count += 1;
                    if !last {
                        sc.next.push(y);
                    }
                }
            }
        }
        if sc.next.is_empty() {
            break;
        }
        std::mem::swap(&mut sc.frontier, &mut sc.next);
    }
    Ok(count)
}

/// A shortest path from `u` to `v` (along edge directions), or `None` when
/// `v` is unreachable: fewest edges on unweighted graphs, least weight on
/// weighted ones. Ties are broken arbitrarily.
pub fn path(s: &Snapshot, u: VertexId, v: VertexId) -> QueryResult<Option<Path>> {
    path_with(s, u, v, &mut QueryScratch::new())
}

/// [`path`] through a reusable scratch.
pub fn path_with(
    s: &Snapshot,
    u: VertexId,
    v: VertexId,
    sc: &mut QueryScratch,
) -> QueryResult<Option<Path>> {
    alive(s, u)?;
    alive(s, v)?;
    if s.is_weighted() {
        check_weights(s, sc)?;
        return Ok(dijkstra(s, u, v, sc));
    }
    if u == v {
        return Ok(Some(Path {
            vertices: vec![u],
            hops: 0,
            length: None,
        }));
    }
    Ok(bidirectional_bfs(s, u, v, sc))
}

/// The out-edges (`backward` false) or in-edges summed over a frontier.
fn frontier_edges(s: &Snapshot, f: &[VertexId], backward: bool) -> usize {
    let dir = if backward {
        Direction::In
    } else {
        Direction::Out
    };
    f.iter().map(|&x| list(s, x, dir).0.len()).sum()
}

fn bidirectional_bfs(
    s: &Snapshot,
    u: VertexId,
    v: VertexId,
    sc: &mut QueryScratch,
) -> Option<Path> {
    let bound = s.id_bound();
    let r = &mut sc.reached;
    r.reset(bound);
    r.set(
        u,
        Reached {
            backward: false,
            parent: u,
        },
        bound,
    );
    r.set(
        v,
        Reached {
            backward: true,
            parent: v,
        },
        bound,
    );
    let (fwd, bwd) = (&mut sc.frontier, &mut sc.other);
    fwd.clear();
    fwd.push(u);
    bwd.clear();
    bwd.push(v);
    let next = &mut sc.next;
    while !fwd.is_empty() && !bwd.is_empty() {
        let backward = frontier_edges(s, bwd, true) < frontier_edges(s, fwd, false);
        let (frontier, dir) = if backward {
            (&mut *bwd, Direction::In)
        } else {
            (&mut *fwd, Direction::Out)
        };
        next.clear();
        for &x in frontier.iter() {
            for &y in list(s, x, dir).0 {
                match r.get(y) {
                    None => {
                        r.set(
                            y,
                            Reached {
                                backward,
                                parent: x,
                            },
                            bound,
                        );
                        next.push(y);
                    }
                    Some(m) if m.backward != backward => {
                        let (a, b) = if backward { (y, x) } else { (x, y) };
                        return Some(join(r, a, b));
                    }
                    Some(_) => {}
                }
            }
        }
        std::mem::swap(frontier, next);
    }
    None
}

/// The path through the meeting edge `a → b`: `a` reached forward, `b`
/// backward.
fn join(r: &Marks<Reached>, a: VertexId, b: VertexId) -> Path {
    let mut vertices = Vec::new();
    let mut x = a;
    loop {
        vertices.push(x);
        match r.get(x) {
            Some(m) if m.parent != x => x = m.parent,
            _ => break,
        }
    }
    vertices.reverse();
    let mut x = b;
    loop {
        vertices.push(x);
        match r.get(x) {
            Some(m) if m.parent != x => x = m.parent,
            _ => break,
        }
    }
    Path {
        hops: (vertices.len() - 1) as u32,
        vertices,
        length: None,
    }
}

/// A heap entry: a tentative distance (smallest first) and its vertex.
#[derive(Clone, Copy, PartialEq)]
struct Entry {
    dist: f64,
    v: VertexId,
}

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        o.dist.total_cmp(&self.dist).then_with(|| o.v.cmp(&self.v))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// One side of a bidirectional Dijkstra: its labels, heap and direction.
struct Side<'a> {
    labels: &'a mut Marks<Label>,
    heap: &'a mut BinaryHeap<Entry>,
    backward: bool,
}

impl Side<'_> {
    /// Drops heap entries of settled or superseded labels; the smallest
    /// tentative distance left, or `None` when the side is exhausted.
    fn top(&mut self) -> Option<f64> {
        while let Some(&Entry { dist, v }) = self.heap.peek() {
            match self.labels.get(v) {
                Some(l) if !l.settled && l.dist == dist => return Some(dist),
                _ => {
                    self.heap.pop();
                }
            }
        }
        None
    }
}

/// The best meeting found so far: the arc `a → b` with `a` labelled
/// forward and `b` backward, and the path length through it.
#[derive(Clone, Copy)]
struct Meet {
    len: f64,
    a: VertexId,
    b: VertexId,
    /// The weight of `a → b`.
    w: f64,
}

/// Bidirectional Dijkstra: forward from `u` on out-edges, backward from
/// `v` on in-edges, each round settling one vertex on the side with the
/// fewer heap entries. Every relaxed arc whose far end is labelled by the
/// other side offers a path; the search stops when the two heaps' smallest
/// distances sum to at least the best offer (no unsettled path can be
/// shorter), as in Goldberg and Harrelson's rule.
fn dijkstra(s: &Snapshot, u: VertexId, v: VertexId, sc: &mut QueryScratch) -> Option<Path> {
    if u == v {
        return Some(Path {
            vertices: vec![u],
            hops: 0,
            length: Some(0.0),
        });
    }
    let bound = s.id_bound();
    let mut fwd = Side {
        labels: &mut sc.labels,
        heap: &mut sc.heap,
        backward: false,
    };
    let mut bwd = Side {
        labels: &mut sc.labels_back,
        heap: &mut sc.heap_back,
        backward: true,
    };
    for (side, x) in [(&mut fwd, u), (&mut bwd, v)] {
        side.labels.reset(bound);
        side.heap.clear();
        side.labels.set(x, Label::root(x), bound);
        side.heap.push(Entry { dist: 0.0, v: x });
    }
    let mut best: Option<Meet> = None;
    while let (Some(tf), Some(tb)) = (fwd.top(), bwd.top()) {
        if best.is_some_and(|m| tf + tb >= m.len) {
            break;
        }
        let (this, other) = if bwd.heap.len() < fwd.heap.len() {
            (&mut bwd, &mut fwd)
        } else {
            (&mut fwd, &mut bwd)
        };
        settle_one(s, this, other, bound, &mut best);
    }
    fwd.heap.clear();
    bwd.heap.clear();
    best.map(|m| trace(&sc.labels, &sc.labels_back, u, v, m))
}

/// Settles the smallest entry of `this` (its top is fresh) and relaxes
/// its arcs, offering a path for every arc that reaches a vertex labelled
/// by `other`.
fn settle_one(
    s: &Snapshot,
    this: &mut Side<'_>,
    other: &mut Side<'_>,
    bound: usize,
    best: &mut Option<Meet>,
) {
    let Some(Entry { dist, v: x }) = this.heap.pop() else {
        return;
    };
    if let Some(l) = this.labels.get_mut(x) {
        l.settled = true;
    }
    let (nb, ws) = if this.backward { s.inc(x) } else { s.out(x) };
    for (i, &y) in nb.iter().enumerate() {
        let w = ws.map_or(1.0, |w| w[i]);
        let d = dist + w;
        match this.labels.get_mut(y) {
            Some(l) if l.settled || l.dist <= d => {}
            Some(l) => {
                *l = Label::new(d, x, w);
                this.heap.push(Entry { dist: d, v: y });
            }
            None => {
                this.labels.set(y, Label::new(d, x, w), bound);
                this.heap.push(Entry { dist: d, v: y });
            }
        }
        if let Some(o) = other.labels.get(y) {
            let len = d + o.dist;
            if best.is_none_or(|m| len < m.len) {
                let (a, b) = if this.backward { (y, x) } else { (x, y) };
                *best = Some(Meet { len, a, b, w });
            }
        }
    }
}

/// The path `u → … → a → b → … → v` of a meeting, its length summed along
/// the path in order (as a one-sided search from `u` would have summed it).
fn trace(fwd: &Marks<Label>, bwd: &Marks<Label>, u: VertexId, v: VertexId, m: Meet) -> Path {
    let mut vertices = vec![m.a];
    let mut x = m.a;
    while x != u {
        match fwd.get(x) {
            Some(l) => x = l.parent,
            None => break,
        }
        vertices.push(x);
    }
    vertices.reverse();
    let mut length = fwd.get(m.a).map_or(0.0, |l| l.dist) + m.w;
    let mut y = m.b;
    vertices.push(y);
    while y != v {
        match bwd.get(y) {
            Some(l) => {
                length += l.w;
                y = l.parent;
            }
            None => break,
        }
        vertices.push(y);
    }
    Path {
        hops: (vertices.len() - 1) as u32,
        vertices,
        length: Some(length),
    }
}

/// Fails when a weight of the snapshot is negative or NaN. The base's
/// weights are checked once per opened graph (cached in the graph); the
/// changed lists on every call, unless `sc` checked this version already.
fn check_weights(s: &Snapshot, sc: &mut QueryScratch) -> QueryResult<()> {
    if std::ptr::eq(sc.weights_ok.as_ptr(), Arc::as_ptr(&s.v)) {
        return Ok(());
    }
    let bad = |w: &Weight| w.is_nan() || *w < 0.0;
    let base_bad = s
        .base()
        .weight_stats()
        .is_some_and(|st| st.first_invalid.is_some());
    let first = if base_bad {
        // Rare: find the edge (it may have been changed since) by a scan.
        (0..s.id_bound() as VertexId).find_map(|x| first_bad_in(s.out(x), x, &bad))
    } else {
        s.v.parts.iter().flatten().find_map(|p| {
            p.iter().find_map(|(x, d)| {
                let l = d.out.as_ref().filter(|_| d.alive)?;
                first_bad_in((&l.nbrs, l.weights.as_deref()), x, &bad)
            })
        })
    };
    match first {
        Some((u, v, w)) => Err(QueryError::InvalidWeight { u, v, w }),
        None => {
            sc.weights_ok = Arc::downgrade(&s.v);
            Ok(())
        }
    }
}

fn first_bad_in(
    (nb, ws): (&[VertexId], Option<&[Weight]>),
    x: VertexId,
    bad: &impl Fn(&Weight) -> bool,
) -> Option<(VertexId, VertexId, Weight)> {
    let ws = ws?;
    let i = ws.iter().position(bad)?;
    Some((x, nb[i], ws[i]))
}
