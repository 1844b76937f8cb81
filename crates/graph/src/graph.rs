//! [`Graph`]: the read-only topology every executor reads.
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::adjacency::Adjacency;
use crate::chunks::Chunk;
use crate::ids::IdMap;
use crate::section::Section;
use crate::types::{VertexId, Weight};

/// A locality-improving vertex order applied at import.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VertexOrder {
    /// Ids in ascending external-id order (or first-seen order for generated graphs).
    #[default]
    None,
    /// Descending total degree, ties by the natural order.
    Degree,
    /// Reverse Cuthill–McKee on the undirected view.
    Rcm,
}

impl std::str::FromStr for VertexOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(VertexOrder::None),
            "degree" => Ok(VertexOrder::Degree),
            "rcm" => Ok(VertexOrder::Rcm),
            _ => Err(format!(
                "unknown order '{s}' (expected none, degree or rcm)"
            )),
        }
    }
}

impl std::fmt::Display for VertexOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VertexOrder::None => "none",
            VertexOrder::Degree => "degree",
            VertexOrder::Rcm => "rcm",
        })
    }
}

/// Facts about a graph that are not arrays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphMeta {
    /// Whether edges are directed. An undirected graph stores each edge
    /// `{u, v}` (u ≠ v) as two arcs and a self-loop as one arc.
    pub directed: bool,
    /// Whether edges carry weights.
    pub weighted: bool,
    /// Whether every weight is an integer.
    pub integral_weights: bool,
    /// The vertex order applied at import.
    pub order: VertexOrder,
    /// Number of self-loop arcs stored.
    pub self_loops: u64,
}

/// A graph: out-edges (CSR), in-edges (CSC; the same arrays for undirected
/// graphs), the id map, the vertex-order permutation and the chunk table.
///
/// Invariants: both adjacencies have the same `n`; every neighbour is `< n`;
/// neighbour lists are sorted; for undirected graphs `out` is symmetric;
/// the chunk table covers `0..n`.
#[derive(Clone, Debug)]
pub struct Graph {
    pub(crate) meta: GraphMeta,
    pub(crate) out: Adjacency,
    pub(crate) inc: Option<Adjacency>,
    pub(crate) ids: IdMap,
    pub(crate) old_of_new: Option<Section<VertexId>>,
    pub(crate) new_of_old: Option<Section<VertexId>>,
    pub(crate) chunks: Section<Chunk>,
    /// Weight statistics, computed on first use and kept for the graph's
    /// lifetime (every job on an opened graph shares them).
    pub(crate) weight_stats: std::sync::OnceLock<WeightStats>,
    /// Whether every out-list is strictly increasing, computed on first
    /// use and kept (see [`Graph::out_lists_strictly_increasing`]).
    pub(crate) strictly_increasing: std::sync::OnceLock<bool>,
    /// The in-edges as tiles ([`crate::tiles`]), when the store holds them.
    pub(crate) tiles: Option<crate::tiles::Tiles>,
    /// The live-graph version this topology is (0 for an imported graph;
    /// a compaction writes the version it merged, see `plexus-store`).
    pub(crate) base_version: u64,
}

/// The arrays of a graph built outside the builder (a live graph's
/// snapshot), for [`Graph::from_parts`].
#[derive(Clone, Debug)]
pub struct GraphParts {
    /// Whether edges are directed.
    pub directed: bool,
    /// Out-edges; for undirected graphs symmetric (each edge `{u, v}`,
    /// u ≠ v, as two arcs).
    pub out: Adjacency,
    /// In-edges of a directed graph (`None`: computed by transposing).
    pub inc: Option<Adjacency>,
    /// External ids of `0..n`.
    pub ids: IdMap,
    /// `(old_of_new, new_of_old)`: natural ids of the internal ids and
    /// back, when the internal order is not the natural one.
    pub permutation: Option<(Section<VertexId>, Section<VertexId>)>,
    /// The order the internal ids follow.
    pub order: VertexOrder,
    /// The version the graph is (see [`Graph::base_version`]).
    pub base_version: u64,
}

/// One pass over the out-edge weights, in fixed blocks so the sum does not
/// depend on the thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightStats {
    /// Index (into the out-edge arrays) of the first NaN or negative weight.
    pub first_invalid: Option<usize>,
    /// Sum of the finite weights, summed block by block in order.
    pub finite_sum: f64,
    /// Number of finite weights.
    pub finite_count: u64,
    /// The largest finite weight (0 when there is none).
    pub max_finite: f64,
}

impl WeightStats {
    fn of(weights: &[Weight]) -> Self {
        use rayon::prelude::*;
        const BLOCK: usize = 1 << 14;
        let blocks: Vec<(Option<usize>, f64, u64, f64)> = weights
            .par_chunks(BLOCK)
            .enumerate()
            .map(|(b, ws)| {
                let bad = ws
                    .iter()
                    .position(|w| w.is_nan() || *w < 0.0)
                    .map(|i| b * BLOCK + i);
                let (mut sum, mut count, mut max) = (0.0, 0u64, 0.0f64);
                for &w in ws {
                    if w.is_finite() {
                        sum += w;
                        count += 1;
                        max = max.max(w);
                    }
                }
                (bad, sum, count, max)
            })
            .collect();
        WeightStats {
            first_invalid: blocks.iter().find_map(|b| b.0),
            finite_sum: blocks.iter().map(|b| b.1).sum(),
            finite_count: blocks.iter().map(|b| b.2).sum(),
            max_finite: blocks.iter().map(|b| b.3).fold(0.0, f64::max),
        }
    }
}

/// A summary of the out-degrees, stored beside the topology at save so that
/// `plexus info` need not scan the offsets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DegreeSummary {
    /// Smallest out-degree (0 for an empty graph).
    pub min: u64,
    /// Largest out-degree.
    pub max: u64,
    /// Stored arcs ÷ vertices (0 for an empty graph).
    pub mean: f64,
    /// The five largest out-degrees as (internal id, degree), by degree
    /// descending, ties by id.
    pub top: Vec<(VertexId, u64)>,
}

impl DegreeSummary {
    /// The summary of the out-degrees that CSR offsets `offs` (`n + 1`
    /// entries) give, in one parallel pass (O(n)).
    pub fn of_offsets(offs: &[u64]) -> DegreeSummary {
        use rayon::prelude::*;
        const TOP: usize = 5;
        let n = offs.len().saturating_sub(1);
        if n == 0 {
            return DegreeSummary {
                min: 0,
                max: 0,
                mean: 0.0,
                top: Vec::new(),
            };
        }
        let by_degree =
            |a: &(u64, VertexId), b: &(u64, VertexId)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        let (min, max, mut top) = (0..n)
            .into_par_iter()
            .fold(
                || (u64::MAX, 0u64, Vec::with_capacity(TOP + 1)),
                |(lo, hi, mut top): (u64, u64, Vec<(u64, VertexId)>), v| {
                    let d = offs[v + 1] - offs[v];
                    if top.len() < TOP || d > top[top.len() - 1].0 {
                        top.push((d, v as VertexId));
                        top.sort_by(by_degree);
                        top.truncate(TOP);
                    }
                    (lo.min(d), hi.max(d), top)
                },
            )
            .reduce(
                || (u64::MAX, 0, Vec::new()),
                |a, b| {
                    let mut top = a.2;
                    top.extend(b.2);
                    top.sort_by(by_degree);
                    top.truncate(TOP);
                    (a.0.min(b.0), a.1.max(b.1), top)
                },
            );
        top.sort_by(by_degree);
        DegreeSummary {
            min,
            max,
            mean: offs[n] as f64 / n as f64,
            top: top.into_iter().map(|(d, v)| (v, d)).collect(),
        }
    }
}

impl Graph {
    /// The out-degree summary, computed in one parallel pass (O(n)).
    pub fn degree_summary(&self) -> DegreeSummary {
        DegreeSummary::of_offsets(self.out.offsets())
    }

    /// Statistics of the out-edge weights (`None` for an unweighted graph),
    /// computed in parallel on the first call and cached.
    pub fn weight_stats(&self) -> Option<&WeightStats> {
        let w = self.out.weight_array()?;
        Some(self.weight_stats.get_or_init(|| WeightStats::of(w)))
    }

    /// Whether every out-list is strictly increasing (sorted, as always,
    /// and without duplicate arcs). Checked in parallel on the first call
    /// and cached for the graph's lifetime; kernels that need simple lists
    /// (triangles, k-core, lcc) borrow the adjacency when it holds.
    pub fn out_lists_strictly_increasing(&self) -> bool {
        *self.strictly_increasing.get_or_init(|| {
            let out = &self.out;
            (0..out.num_vertices() as VertexId)
                .into_par_iter()
                .with_min_len(1024)
                .all(|v| out.neighbors(v).windows(2).all(|w| w[0] < w[1]))
        })
    }

    /// Number of vertices `n`.
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.out.num_vertices()
    }
    /// Number of stored arcs (out-edges). For an undirected graph, each edge
    /// `{u, v}` with u ≠ v counts twice and a self-loop once.
    #[inline]
    pub fn num_arcs(&self) -> u64 {
        self.out.num_edges()
    }
    /// Number of edges as a user counts them: arcs for a directed graph,
    /// `{u, v}` pairs (self-loops once) for an undirected one.
    pub fn num_edges(&self) -> u64 {
        if self.meta.directed {
            self.num_arcs()
        } else {
            (self.num_arcs() + self.meta.self_loops) / 2
        }
    }
    /// Whether edges are directed.
    #[inline]
    pub fn is_directed(&self) -> bool {
        self.meta.directed
    }
    /// Whether edges carry weights.
    #[inline]
    pub fn is_weighted(&self) -> bool {
        self.meta.weighted
    }
    /// Non-array facts.
    pub fn meta(&self) -> &GraphMeta {
        &self.meta
    }
    /// Out-edges (CSR).
    #[inline]
    pub fn out(&self) -> &Adjacency {
        &self.out
    }
    /// In-edges (CSC). For undirected graphs this is [`Graph::out`].
    #[inline]
    pub fn inc(&self) -> &Adjacency {
        self.inc.as_ref().unwrap_or(&self.out)
    }
    /// The in-edges cut into tiles for pull gathers, when the graph was
    /// opened from a store that holds them ([`crate::tiles::Tiles::worthwhile`]).
    #[inline]
    pub fn tiles(&self) -> Option<&crate::tiles::Tiles> {
        self.tiles.as_ref()
    }
    /// The graph with tiles built from its in-edges, segments of
    /// `2^shift` sources and blocks of at most `block_targets` targets
    /// ([`crate::tiles::Tiles::build_with`]; the store uses
    /// [`crate::tiles::Tiles::build`]).
    pub fn with_tiles(mut self, shift: u32, block_targets: usize) -> Graph {
        self.tiles = Some(crate::tiles::Tiles::build_with(
            self.inc(),
            shift,
            block_targets,
        ));
        self
    }

    /// The graph with tiles when they pay ([`crate::tiles::Tiles::worthwhile`],
    /// the store's rule; built as the store builds them), else as it is.
    pub fn with_tiles_if_worthwhile(mut self) -> Graph {
        if self.tiles.is_none()
            && crate::tiles::Tiles::worthwhile(self.num_vertices(), self.num_arcs())
        {
            self.tiles = Some(crate::tiles::Tiles::build(self.inc()));
        }
        self
    }

    /// The live-graph version this topology is: 0 for an imported or
    /// generated graph, the merged version for a compacted one.
    pub fn base_version(&self) -> u64 {
        self.base_version
    }

    /// This graph labelled as version `v` (written into the store file).
    pub fn with_base_version(mut self, v: u64) -> Graph {
        self.base_version = v;
        self
    }

    /// The vertex-order permutation `(old_of_new, new_of_old)` as shared
    /// sections (no copy), when the graph has one.
    pub fn permutation(&self) -> Option<(Section<VertexId>, Section<VertexId>)> {
        match (&self.old_of_new, &self.new_of_old) {
            (Some(a), Some(b)) => Some((a.clone(), b.clone())),
            _ => None,
        }
    }

    /// Assembles a graph from arrays built elsewhere, checking what the
    /// builder guarantees: equal vertex counts, ids and permutation of
    /// length `n`, the permutation and its inverse agreeing, every
    /// neighbour below `n`, every list sorted (ties by weight need not
    /// hold), in-edges exactly for directed graphs. Linear, in parallel.
    pub fn from_parts(p: GraphParts) -> crate::Result<Graph> {
        let bad = |m: String| crate::GraphError::InvalidArgument(format!("graph parts: {m}"));
        let n = p.out.num_vertices();
        if p.ids.len() != n {
            return Err(bad(format!("{} ids for {n} vertices", p.ids.len())));
        }
        let inc = match (p.directed, p.inc) {
            (true, Some(inc)) => Some(inc),
            (true, None) => Some(crate::builder::transpose(&p.out)),
            (false, None) => None,
            (false, Some(_)) => return Err(bad("in-edges given for an undirected graph".into())),
        };
        for (name, adj) in [("out", Some(&p.out)), ("in", inc.as_ref())] {
            let Some(adj) = adj else { continue };
            if adj.num_vertices() != n {
                return Err(bad(format!(
                    "{name}-edges cover {} vertices, not {n}",
                    adj.num_vertices()
                )));
            }
            if let Some(v) = first_unsorted_list(adj) {
                return Err(bad(format!(
                    "{name}-list of vertex {v} is unsorted or names a vertex >= {n}"
                )));
            }
        }
        if let Some((old_of_new, new_of_old)) = &p.permutation {
            let ok = old_of_new.len() == n
                && new_of_old.len() == n
                && (0..n).into_par_iter().all(|v| {
                    let o = old_of_new[v] as usize;
                    o < n && new_of_old[o] as usize == v
                });
            if !ok {
                return Err(bad("the permutation and its inverse disagree".into()));
            }
        }
        let mut g = crate::builder::assemble(p.out, inc, p.ids, p.permutation, p.directed, p.order);
        g.base_version = p.base_version;
        Ok(g)
    }

    /// The graph with every arc reversed, sharing this graph's arrays (no
    /// copy of the edges): its out-edges are these in-edges and its
    /// in-edges these out-edges, so a push along its out-edges follows
    /// this graph's arcs backwards. Same vertices, ids and order; the
    /// chunk table's edge counts are swapped; no tiles (they hold the
    /// in-edges of this graph). An undirected graph is its own reverse.
    pub fn reversed(&self) -> Graph {
        let Some(inc) = &self.inc else {
            return self.clone();
        };
        let chunks: Vec<Chunk> = self
            .chunks
            .iter()
            .map(|c| Chunk {
                out_edges: c.in_edges,
                in_edges: c.out_edges,
                ..*c
            })
            .collect();
        Graph {
            meta: self.meta.clone(),
            out: inc.clone(),
            inc: Some(self.out.clone()),
            ids: self.ids.clone(),
            old_of_new: self.old_of_new.clone(),
            new_of_old: self.new_of_old.clone(),
            chunks: Section::owned(chunks),
            weight_stats: std::sync::OnceLock::new(),
            strictly_increasing: std::sync::OnceLock::new(),
            tiles: None,
            base_version: self.base_version,
        }
    }
    /// Out-neighbours of `v`, sorted.
    #[inline]
    pub fn out_neighbors(&self, v: VertexId) -> &[VertexId] {
        self.out.neighbors(v)
    }
    /// In-neighbours of `v`, sorted.
    #[inline]
    pub fn in_neighbors(&self, v: VertexId) -> &[VertexId] {
        self.inc().neighbors(v)
    }
    /// Weights of `v`'s out-edges.
    #[inline]
    pub fn out_weights(&self, v: VertexId) -> Option<&[Weight]> {
        self.out.weights(v)
    }
    /// Weights of `v`'s in-edges.
    #[inline]
    pub fn in_weights(&self, v: VertexId) -> Option<&[Weight]> {
        self.inc().weights(v)
    }
    /// Out-degree of `v`.
    #[inline]
    pub fn out_degree(&self, v: VertexId) -> usize {
        self.out.degree(v)
    }
    /// In-degree of `v`.
    #[inline]
    pub fn in_degree(&self, v: VertexId) -> usize {
        self.inc().degree(v)
    }
    /// The external-id map.
    pub fn ids(&self) -> &IdMap {
        &self.ids
    }
    /// For a reordered graph, `old_of_new()[v]` is the position `v` had in
    /// the natural order (ascending external id).
    pub fn old_of_new(&self) -> Option<&[VertexId]> {
        self.old_of_new.as_deref()
    }
    /// The vertex's rank in the natural order (ascending external id): the
    /// identity unless the graph was reordered at import.
    #[inline]
    pub fn natural_id(&self, v: VertexId) -> VertexId {
        self.old_of_new.as_ref().map_or(v, |p| p[v as usize])
    }
    /// The internal id of the vertex whose natural id is `r` (inverse of
    /// [`Graph::natural_id`]).
    #[inline]
    pub fn from_natural(&self, r: VertexId) -> VertexId {
        self.new_of_old.as_ref().map_or(r, |p| p[r as usize])
    }
    /// The chunk table (see [`crate::chunks`]).
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }
    /// Bytes of topology held (CSR, CSC, weights), without ids.
    pub fn topology_bytes(&self) -> u64 {
        self.out.size_bytes() + self.inc.as_ref().map_or(0, |a| a.size_bytes())
    }
    /// Iterates every stored arc `(src, dst, weight)` in CSR order.
    pub fn arcs(&self) -> impl Iterator<Item = (VertexId, VertexId, Option<Weight>)> + '_ {
        (0..self.num_vertices() as VertexId).flat_map(move |u| {
            let ws = self.out_weights(u);
            self.out_neighbors(u)
                .iter()
                .enumerate()
                .map(move |(i, &v)| (u, v, ws.map(|w| w[i])))
        })
    }
}

/// The first vertex whose list is not non-decreasing or names a vertex
/// `>= n`.
fn first_unsorted_list(adj: &Adjacency) -> Option<usize> {
    let n = adj.num_vertices();
    (0..n).into_par_iter().find_first(|&v| {
        let nb = adj.neighbors(v as VertexId);
        nb.windows(2).any(|w| w[0] > w[1]) || nb.last().is_some_and(|&x| x as usize >= n)
    })
}
