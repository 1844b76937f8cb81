//! The parents that go with the distances: the smallest tight in-neighbour
//! of lower distance, else a BFS over tight edges across zero-weight ties.
use super::*;

/// Claims vertices over *tight* edges (`dist[u] + w == dist[v] < ∞`) level
/// by level: a BFS of the shortest-path subgraph, giving each reached vertex
/// its hop count in that subgraph. An unreachable `v` is never claimed, not
/// even over an arc of weight `+∞` from a reached `u` (`d + ∞ == ∞`).
pub(super) struct TightVisit<'a> {
    dist: &'a [f64],
    hop: Vec<AtomicU32>,
    level: u32,
}

impl EdgeFunctor for TightVisit<'_> {
    fn update(&self, u: VertexId, v: VertexId, w: f64) -> bool {
        let tight = tight(self.dist, u, v, w);
        if tight {
            self.hop[v as usize].store(self.level, Ordering::Relaxed);
        }
        tight
    }
    fn update_atomic(&self, u: VertexId, v: VertexId, w: f64) -> bool {
        tight(self.dist, u, v, w)
            && self.hop[v as usize]
                .compare_exchange(NO_PARENT, self.level, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
    fn cond(&self, v: VertexId) -> bool {
        self.hop[v as usize].load(Ordering::Relaxed) == NO_PARENT
    }
}

/// Whether arc `u → v` of weight `w` is tight: `dist[u] + w == dist[v]`
/// with `v` reached.
#[inline]
fn tight(dist: &[f64], u: VertexId, v: VertexId, w: f64) -> bool {
    let d = dist[v as usize];
    d < f64::INFINITY && dist[u as usize] + w == d
}

/// Parents from distances. Fast path: each reached vertex but the source
/// takes its smallest-id in-neighbour `u` over a tight edge with
/// `dist[u] < dist[v]`; parents then strictly lower the distance, so they
/// form a tree. When some reached vertex has no such in-neighbour (a tight
/// edge of weight 0, or one too small to change the sum in `f64`), all
/// parents come from [`tight_bfs_parents`] instead. Either way the result
/// is a function of the distances alone, independent of the thread count.
pub(super) fn parents(g: &Graph, source: VertexId, dist: &[f64]) -> Vec<u32> {
    let parent: Vec<u32> = (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(64)
        .map(|v| {
            if v == source {
                return source;
            }
            let d = dist[v as usize];
            if d == f64::INFINITY {
                return NO_PARENT;
            }
            let ws = g.in_weights(v).unwrap_or(&[]);
            g.in_neighbors(v)
                .iter()
                .zip(ws)
                .find(|&(&u, &w)| dist[u as usize] < d && dist[u as usize] + w == d)
                .map_or(NO_PARENT, |(&u, _)| u)
        })
        .collect();
    let complete = parent
        .par_iter()
        .zip(dist.par_iter())
        .all(|(&p, &d)| p != NO_PARENT || d == f64::INFINITY);
    if complete {
        parent
    } else {
        tight_bfs_parents(g, source, dist)
    }
}

/// Parents from distances across zero-weight ties: BFS over tight edges
/// gives hop counts (unique), then each reached vertex but the source
/// takes the smallest-id in-neighbour one hop up over a tight edge.
/// Following parents strictly lowers the hop count and ends at the source.
/// Every reached vertex is reached by the BFS: the vertex that last lowered
/// its distance is reached first (by induction on Dijkstra's settle order).
pub(super) fn tight_bfs_parents(g: &Graph, source: VertexId, dist: &[f64]) -> Vec<u32> {
    let n = g.num_vertices();
    let mut visit = TightVisit {
        dist,
        hop: (0..n).map(|_| AtomicU32::new(NO_PARENT)).collect(),
        level: 0,
    };
    visit.hop[source as usize].store(0, Ordering::Relaxed);
    let mut frontier = VertexSubset::from_vertex(n, source);
    while !frontier.is_empty() {
        visit.level += 1;
        frontier = edge_map(g, &frontier, &visit, &EdgeMapOptions::default());
    }
    let hop: Vec<u32> = visit.hop.into_iter().map(AtomicU32::into_inner).collect();
    (0..n as VertexId)
        .into_par_iter()
        .map(|v| {
            if v == source {
                return source;
            }
            let h = hop[v as usize];
            if h == NO_PARENT {
                return NO_PARENT;
            }
            let ws = g.in_weights(v).unwrap_or(&[]);
            g.in_neighbors(v)
                .iter()
                .zip(ws)
                .find(|&(&u, &w)| {
                    hop[u as usize].wrapping_add(1) == h && dist[u as usize] + w == dist[v as usize]
                })
                .map_or(NO_PARENT, |(&u, _)| u)
        })
        .collect()
}
