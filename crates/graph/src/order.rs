//! Locality-improving vertex orders computed at import.
//!
//! Both return `old_of_new`: `old_of_new[new]` is the vertex that gets id `new`.
//! [`OrderChoice::Auto`] (the CLI's default) applies degree order to graphs
//! that gain from it ([`worth_degree_order`]) and keeps the natural order
//! of the rest.
use std::collections::VecDeque;

use rayon::prelude::*;

use crate::adjacency::Adjacency;
use crate::graph::VertexOrder;
use crate::types::VertexId;

/// The vertex order a build applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderChoice {
    /// Degree order when [`worth_degree_order`] says the graph gains from
    /// it, else the natural order; the stored graph records which.
    Auto,
    /// Exactly this order.
    Exactly(VertexOrder),
}

/// The natural order: what a library caller gets unless it asks.
impl Default for OrderChoice {
    fn default() -> Self {
        OrderChoice::Exactly(VertexOrder::None)
    }
}

impl From<VertexOrder> for OrderChoice {
    fn from(o: VertexOrder) -> Self {
        OrderChoice::Exactly(o)
    }
}

impl std::str::FromStr for OrderChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(OrderChoice::Auto),
            _ => s
                .parse::<VertexOrder>()
                .map(OrderChoice::Exactly)
                .map_err(|_| format!("unknown order '{s}' (expected auto, none, degree or rcm)")),
        }
    }
}

impl std::fmt::Display for OrderChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OrderChoice::Auto => f.write_str("auto"),
            OrderChoice::Exactly(o) => o.fmt(f),
        }
    }
}

/// [`OrderChoice::Auto`] leaves graphs of fewer vertices in their natural
/// order: their per-vertex arrays sit in the cache in any order.
pub const AUTO_MIN_VERTICES: usize = 1 << 17;

/// [`OrderChoice::Auto`] leaves graphs of fewer arcs a vertex in their
/// natural order (road networks, meshes): little to gather per vertex.
pub const AUTO_MIN_MEAN_DEGREE: f64 = 8.0;

/// Endpoints at most this many ids apart count as near in [`near_share`]:
/// 4,096 f32 values are 16 KiB, half of an L1 data cache.
pub const NEAR_IDS: u32 = 4096;

/// [`OrderChoice::Auto`] keeps the natural order when at least this share
/// of the edges is near ([`near_share`]): the input's ids already carry
/// locality (a web crawl, a road network), which degree order would scatter.
/// Ids with no relation to the structure make a share of about
/// `2 · NEAR_IDS / n`, at most 6.25 % from [`AUTO_MIN_VERTICES`] up.
pub const AUTO_MAX_NEAR_SHARE: f64 = 0.15;

/// The share of edges whose endpoints are at most [`NEAR_IDS`] apart, from
/// up to 65,536 edges evenly spaced through the buffer (self-loops left
/// out); 1 when there are none.
pub fn near_share(src: &[VertexId], dst: &[VertexId]) -> f64 {
    let m = src.len().min(dst.len());
    let step = (m / 65_536).max(1);
    let (near, sampled) =
        (0..m)
            .step_by(step)
            .filter(|&i| src[i] != dst[i])
            .fold((0u64, 0u64), |(near, all), i| {
                (
                    near + u64::from(src[i].abs_diff(dst[i]) <= NEAR_IDS),
                    all + 1,
                )
            });
    if sampled == 0 {
        1.0
    } else {
        near as f64 / sampled as f64
    }
}

/// Whether degree order is worth applying to a graph whose vertices have
/// degrees `deg` and whose edges have [`near_share`] `near`: at least
/// [`AUTO_MIN_VERTICES`] vertices, at least [`AUTO_MIN_MEAN_DEGREE`] arcs a
/// vertex, a skewed degree distribution (the mean above 1.3 × the median,
/// GAPBS's test for relabelling before triangle counting) and ids without
/// locality of their own (`near` below [`AUTO_MAX_NEAR_SHARE`]): degree
/// order speeds up every kernel on a Kronecker graph, and slows a web crawl
/// whose ids already follow its hosts.
pub fn worth_degree_order(deg: &[u64], near: f64) -> bool {
    let n = deg.len();
    if n < AUTO_MIN_VERTICES || near >= AUTO_MAX_NEAR_SHARE {
        return false;
    }
    let mean = deg.iter().sum::<u64>() as f64 / n as f64;
    if mean < AUTO_MIN_MEAN_DEGREE {
        return false;
    }
    let mut sorted = deg.to_vec();
    let (_, &mut median, _) = sorted.select_nth_unstable(n / 2);
    mean > 1.3 * median as f64
}

/// Computes the permutation for `order` over the graph with out-edges `out`.
/// For directed graphs the degree is in + out; RCM walks out-edges.
pub fn compute_order(out: &Adjacency, order: VertexOrder, directed: bool) -> Vec<VertexId> {
    let n = out.num_vertices();
    let mut deg: Vec<u64> = (0..n as VertexId).map(|v| out.degree(v) as u64).collect();
    if directed {
        for &t in out.neighbor_array() {
            deg[t as usize] += 1;
        }
    }
    match order {
        VertexOrder::None => (0..n as VertexId).collect(),
        VertexOrder::Degree => degree_order(&deg),
        VertexOrder::Rcm => rcm_order(out, &deg),
    }
}

/// Descending degree; ties keep the natural order (stable).
pub(crate) fn degree_order(deg: &[u64]) -> Vec<VertexId> {
    let mut v: Vec<VertexId> = (0..deg.len() as VertexId).collect();
    v.par_sort_by_key(|&x| std::cmp::Reverse(deg[x as usize]));
    v
}

/// Reverse Cuthill–McKee: BFS from a minimum-degree unvisited vertex of each
/// component, neighbours visited in ascending degree, the whole order reversed.
fn rcm_order(out: &Adjacency, deg: &[u64]) -> Vec<VertexId> {
    let n = deg.len();
    let mut by_degree: Vec<VertexId> = (0..n as VertexId).collect();
    by_degree.par_sort_by_key(|&x| deg[x as usize]);
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut queue = VecDeque::new();
    let mut nbrs: Vec<VertexId> = Vec::new();
    for &start in &by_degree {
        if seen[start as usize] {
            continue;
        }
        seen[start as usize] = true;
        queue.push_back(start);
        while let Some(u) = queue.pop_front() {
            order.push(u);
            nbrs.clear();
            nbrs.extend(
                out.neighbors(u)
                    .iter()
                    .copied()
                    .filter(|&w| !seen[w as usize]),
            );
            nbrs.sort_unstable_by_key(|&w| (deg[w as usize], w));
            nbrs.dedup();
            for &w in &nbrs {
                seen[w as usize] = true;
                queue.push_back(w);
            }
        }
    }
    order.reverse();
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuildOptions, Graph};

    fn is_permutation(p: &[VertexId]) -> bool {
        let mut s = p.to_vec();
        s.sort_unstable();
        s.iter().enumerate().all(|(i, &x)| i as VertexId == x)
    }

    #[test]
    fn near_share_tells_local_ids_from_scattered_ones() {
        // A path 0-1-2-…: every edge near. Self-loops are not counted.
        let src: Vec<VertexId> = (0..100_000).collect();
        let dst: Vec<VertexId> = (1..100_001).collect();
        assert_eq!(near_share(&src, &dst), 1.0);
        assert_eq!(near_share(&[5, 7], &[5, 7]), 1.0);
        // Endpoints spread over 2^22 ids by a multiplicative hash.
        let far: Vec<VertexId> = src
            .iter()
            .map(|&v| v.wrapping_mul(2_654_435_761) >> 10)
            .collect();
        let share = near_share(&src, &far);
        assert!(share < 0.01, "{share}");
    }

    #[test]
    fn degree_order_is_worth_it_only_for_large_skewed_graphs_without_locality() {
        let n = AUTO_MIN_VERTICES;
        // A hub-heavy distribution: mean 16 against a median of 4.
        let skewed: Vec<u64> = (0..n as u64)
            .map(|v| if v % 8 == 0 { 100 } else { 4 })
            .collect();
        assert!(worth_degree_order(&skewed, 0.01));
        assert!(
            !worth_degree_order(&skewed, AUTO_MAX_NEAR_SHARE),
            "ids with locality"
        );
        assert!(
            !worth_degree_order(&skewed[..n - 1], 0.01),
            "too few vertices"
        );
        // Every vertex of degree 16: nothing to gain from sorting by degree.
        assert!(!worth_degree_order(&vec![16; n], 0.01));
        // Skewed but sparse (a road network's mean is 2.5).
        let sparse: Vec<u64> = (0..n as u64)
            .map(|v| if v % 8 == 0 { 20 } else { 1 })
            .collect();
        assert!(!worth_degree_order(&sparse, 0.01));
    }

    #[test]
    fn orders_are_permutations() {
        let g = Graph::from_edges(
            6,
            &[(0, 1), (1, 2), (1, 5), (3, 4), (0, 0)],
            &BuildOptions::undirected(),
        )
        .unwrap();
        for o in [VertexOrder::Degree, VertexOrder::Rcm] {
            let p = compute_order(g.out(), o, false);
            assert!(is_permutation(&p), "{o:?} gave {p:?}");
        }
        let p = compute_order(g.out(), VertexOrder::Degree, false);
        assert_eq!(p[0], 1, "vertex 1 has the highest degree");
    }
}
