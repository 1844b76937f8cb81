//! Locality-improving vertex orders computed at import.
//!
//! Both return `old_of_new`: `old_of_new[new]` is the vertex that gets id `new`.
use std::collections::VecDeque;

use rayon::prelude::*;

use crate::adjacency::Adjacency;
use crate::graph::VertexOrder;
use crate::types::VertexId;

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
fn degree_order(deg: &[u64]) -> Vec<VertexId> {
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
