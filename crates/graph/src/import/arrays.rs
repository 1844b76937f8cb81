//! Graphs from endpoint arrays already in memory (the Python package's
//! `from_edges`): the vertex set, natural order (ascending external id)
//! and build are those of importing the same edges from a file, so the
//! graph equals `plexus import` of the same edge list or CSV.
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::builder::{build, BuildOptions, EdgeBuffer};
use crate::error::{GraphError, Result};
use crate::ids::IdMap;
use crate::types::{VertexId, Weight, MAX_VERTICES};
use crate::Graph;

/// One array of external ids.
#[derive(Clone, Copy, Debug)]
pub enum IdArray<'a> {
    /// Integer ids.
    Int(&'a [i64]),
    /// String ids.
    Str(&'a [&'a str]),
}

impl IdArray<'_> {
    /// Number of ids.
    pub fn len(&self) -> usize {
        match self {
            IdArray::Int(v) => v.len(),
            IdArray::Str(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Edges `src[i] → dst[i]` with optional `weights[i]`, and optional
/// further vertices (`nodes`, isolated ones included).
#[derive(Clone, Copy, Debug)]
pub struct EdgeArrays<'a> {
    pub src: IdArray<'a>,
    pub dst: IdArray<'a>,
    pub weights: Option<&'a [Weight]>,
    pub nodes: Option<IdArray<'a>>,
}

/// Builds the graph of `a` with `opts`. Errors name what is wrong: arrays
/// of different lengths, integer and string ids mixed, a weight that is
/// not a finite number (with its edge's position), too many vertices.
pub fn from_arrays(a: &EdgeArrays<'_>, opts: &BuildOptions) -> Result<Graph> {
    let m = a.src.len();
    if a.dst.len() != m {
        return Err(GraphError::InvalidArgument(format!(
            "src has {m} ids but dst has {}",
            a.dst.len()
        )));
    }
    if let Some(w) = a.weights {
        if w.len() != m {
            return Err(GraphError::InvalidArgument(format!(
                "src and dst have {m} ids but weights has {}",
                w.len()
            )));
        }
        if let Some(i) = w.par_iter().position_first(|x| !x.is_finite()) {
            return Err(GraphError::InvalidArgument(format!(
                "weight {} of edge {i} is not a finite number",
                w[i]
            )));
        }
    }
    if m == 0 && a.nodes.is_none_or(|n| n.is_empty()) {
        return Err(GraphError::InvalidArgument(
            "no edges and no nodes: a graph needs at least one vertex".into(),
        ));
    }
    let weights = a.weights.map(<[Weight]>::to_vec);
    match (a.src, a.dst, a.nodes) {
        (IdArray::Int(s), IdArray::Int(d), None) => from_ints(s, d, &[], weights, opts),
        (IdArray::Int(s), IdArray::Int(d), Some(IdArray::Int(n))) => {
            from_ints(s, d, n, weights, opts)
        }
        (IdArray::Str(s), IdArray::Str(d), None) => from_strs(s, d, &[], weights, opts),
        (IdArray::Str(s), IdArray::Str(d), Some(IdArray::Str(n))) => {
            from_strs(s, d, n, weights, opts)
        }
        _ => Err(GraphError::InvalidArgument(
            "src, dst and nodes must all hold integer ids or all hold string ids".into(),
        )),
    }
}

fn too_many(count: usize) -> GraphError {
    GraphError::TooManyVertices {
        count: count as u64,
        limit: MAX_VERTICES - 1,
    }
}

/// Integer ids: a dense rank table when every id is a small non-negative
/// integer (the importers' rule), else sort and binary search.
fn from_ints(
    src: &[i64],
    dst: &[i64],
    nodes: &[i64],
    weights: Option<Vec<Weight>>,
    opts: &BuildOptions,
) -> Result<Graph> {
    let parts = [src, dst, nodes];
    let lo = parts
        .iter()
        .filter_map(|p| p.par_iter().copied().min())
        .min()
        .unwrap_or(0);
    let hi = parts
        .iter()
        .filter_map(|p| p.par_iter().copied().max())
        .max()
        .unwrap_or(0);
    let total = src.len() + dst.len() + nodes.len();
    let small = lo >= 0 && hi < u32::MAX as i64;
    let dense = small && (hi as u64 + 1) <= (1u64 << 26).max(2 * total as u64 + 4);
    let (ext, rank): (Vec<i64>, Option<Vec<u32>>) = if dense {
        let present: Vec<AtomicBool> = (0..=hi as usize).map(|_| AtomicBool::new(false)).collect();
        for p in parts {
            p.par_iter()
                .for_each(|&x| present[x as usize].store(true, Ordering::Relaxed));
        }
        let mut rank = vec![u32::MAX; present.len()];
        let mut ext = Vec::new();
        for (x, p) in present.iter().enumerate() {
            if p.load(Ordering::Relaxed) {
                rank[x] = ext.len() as u32;
                ext.push(x as i64);
            }
        }
        (ext, Some(rank))
    } else {
        let mut ids: Vec<i64> = Vec::with_capacity(total);
        for p in parts {
            ids.extend_from_slice(p);
        }
        ids.par_sort_unstable();
        ids.dedup();
        (ids, None)
    };
    if ext.len() as u64 >= MAX_VERTICES {
        return Err(too_many(ext.len()));
    }
    // Every id is in `ext` by construction, so the look-ups cannot miss.
    let find = |x: i64| -> VertexId {
        match &rank {
            Some(r) => r[x as usize],
            None => ext.binary_search(&x).map_or(0, |i| i as VertexId),
        }
    };
    let map = |p: &[i64]| -> Vec<VertexId> { p.par_iter().map(|&x| find(x)).collect() };
    let buf = EdgeBuffer {
        src: map(src),
        dst: map(dst),
        weights,
    };
    let n = ext.len();
    let ids = if ext.iter().enumerate().all(|(i, &x)| x == i as i64) {
        IdMap::Identity { n }
    } else {
        IdMap::from_ints(ext)
    };
    build(n, buf, ids, opts)
}

/// String ids, in ascending byte order (the CSV importer's rule).
fn from_strs<'a>(
    src: &[&'a str],
    dst: &[&'a str],
    nodes: &[&'a str],
    weights: Option<Vec<Weight>>,
    opts: &BuildOptions,
) -> Result<Graph> {
    let mut seen: HashMap<&'a str, u32> = HashMap::new();
    let mut intern = |s: &'a str| -> u32 {
        let next = seen.len() as u32;
        *seen.entry(s).or_insert(next)
    };
    let s: Vec<u32> = src.iter().map(|&x| intern(x)).collect();
    let d: Vec<u32> = dst.iter().map(|&x| intern(x)).collect();
    for &x in nodes {
        intern(x);
    }
    if seen.len() as u64 >= MAX_VERTICES {
        return Err(too_many(seen.len()));
    }
    let mut by_name: Vec<(&str, u32)> = seen.into_iter().collect();
    by_name.par_sort_unstable();
    let mut rank = vec![0u32; by_name.len()];
    for (r, (_, first_seen)) in by_name.iter().enumerate() {
        rank[*first_seen as usize] = r as u32;
    }
    let buf = EdgeBuffer {
        src: s.par_iter().map(|&x| rank[x as usize]).collect(),
        dst: d.par_iter().map(|&x| rank[x as usize]).collect(),
        weights,
    };
    let names: Vec<String> = by_name.into_iter().map(|(s, _)| s.to_string()).collect();
    let n = names.len();
    build(n, buf, IdMap::from_strings(&names), opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrays<'a>(src: &'a [i64], dst: &'a [i64]) -> EdgeArrays<'a> {
        EdgeArrays {
            src: IdArray::Int(src),
            dst: IdArray::Int(dst),
            weights: None,
            nodes: None,
        }
    }

    #[test]
    fn integer_ids_keep_natural_order_sparse_or_dense() {
        for big in [0i64, 1 << 40] {
            let src = [10 + big, 30 + big, 20 + big];
            let dst = [20 + big, 10 + big, 30 + big];
            let g = from_arrays(&arrays(&src, &dst), &BuildOptions::directed()).unwrap();
            assert_eq!(g.num_vertices(), 3);
            assert_eq!(g.ids().lookup_int(10 + big), Some(0));
            assert_eq!(g.ids().lookup_int(30 + big), Some(2));
            assert_eq!(g.out_neighbors(0), &[1]);
            assert_eq!(g.out_neighbors(2), &[0]);
        }
    }

    #[test]
    fn string_ids_sort_and_nodes_add_isolated_vertices() {
        let (s, d, n) = (["b", "a"], ["a", "c"], ["z"]);
        let a = EdgeArrays {
            src: IdArray::Str(&s),
            dst: IdArray::Str(&d),
            weights: Some(&[1.5, 2.0]),
            nodes: Some(IdArray::Str(&n)),
        };
        let g = from_arrays(&a, &BuildOptions::undirected()).unwrap();
        assert_eq!(g.num_vertices(), 4);
        assert_eq!(g.ids().lookup_str("z"), Some(3));
        assert_eq!(g.out_degree(3), 0);
        assert_eq!(g.out_neighbors(0), &[1, 2]);
    }

    #[test]
    fn bad_arrays_are_named() {
        let e = from_arrays(&arrays(&[1, 2], &[1]), &BuildOptions::directed()).unwrap_err();
        assert!(e.to_string().contains("src has 2 ids but dst has 1"), "{e}");
        let mut a = arrays(&[1, 2], &[2, 1]);
        a.weights = Some(&[1.0, f64::NAN]);
        let e = from_arrays(&a, &BuildOptions::directed()).unwrap_err();
        assert!(e.to_string().contains("weight NaN of edge 1"), "{e}");
        let e = from_arrays(&arrays(&[], &[]), &BuildOptions::directed()).unwrap_err();
        assert!(e.to_string().contains("no edges and no nodes"), "{e}");
        let s = ["a"];
        let mixed = EdgeArrays {
            src: IdArray::Str(&s),
            dst: IdArray::Int(&[1]),
            weights: None,
            nodes: None,
        };
        assert!(from_arrays(&mixed, &BuildOptions::directed()).is_err());
    }

    #[test]
    fn equals_the_edge_list_import() {
        let src = [5i64, 7, 7, 9, 5];
        let dst = [7i64, 9, 5, 9, 11];
        let g = from_arrays(&arrays(&src, &dst), &BuildOptions::directed()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e.el");
        let text: String = src
            .iter()
            .zip(&dst)
            .map(|(a, b)| format!("{a} {b}\n"))
            .collect();
        std::fs::write(&p, text).unwrap();
        let opts = crate::ImportOptions {
            directed: Some(true),
            ..Default::default()
        };
        let h = crate::import_file(&p, &opts, &crate::NoProgress).unwrap();
        assert_eq!(g.num_vertices(), h.num_vertices());
        for v in 0..g.num_vertices() as u32 {
            assert_eq!(g.out_neighbors(v), h.out_neighbors(v));
            assert_eq!(g.ids().external(v), h.ids().external(v));
        }
    }
}
