//! A snapshot as an ordinary in-memory [`Graph`], so that every executor and
//! fast kernel runs on it unchanged (GraphM: one topology copy shared by
//! every job of that version).
//!
//! Alive vertices are numbered in live-id order (base vertices keep their
//! relative order, so the base's vertex order and locality carry over;
//! added vertices follow), lists are copied from the base or the deltas and
//! renumbered (order-preserving, so they stay sorted), the external ids and
//! the natural-order permutation are rebuilt when the vertex set changed,
//! and tiles are built when the base has them. A version with no change is
//! the base itself.
use std::sync::Arc;

use plexus_graph::{
    Adjacency, EdgeIdx, ExternalId, Graph, GraphParts, IdKind, IdMap, Section, VertexId, Weight,
};
use rayon::prelude::*;

use crate::error::Result;
use crate::version::Snapshot;

/// Vertices per parallel block when filling lists.
const BLOCK: usize = 1 << 14;

impl Snapshot {
    /// This version as a [`Graph`], built on first call and shared by every
    /// later call on any clone of the snapshot.
    pub fn graph(&self) -> Result<Arc<Graph>> {
        if let Some(g) = self.v.materialized.get() {
            return Ok(g.clone());
        }
        let g = materialize(self)?;
        Ok(self.v.materialized.get_or_init(|| g).clone())
    }
}

/// Builds the graph of `s` (see the module docs).
pub fn materialize(s: &Snapshot) -> Result<Arc<Graph>> {
    let base = s.base();
    if s.v.parts.iter().all(Option::is_none) && s.id_bound() == base.num_vertices() {
        return Ok(base.clone());
    }
    let bound = s.id_bound();
    let alive: Vec<bool> = (0..bound as VertexId)
        .into_par_iter()
        .map(|v| s.is_alive(v))
        .collect();
    let same_vertices = bound == base.num_vertices() && alive.iter().all(|&a| a);
    // new id of each live id (u32::MAX when not alive).
    let (new_of_live, live_of_new) = if same_vertices {
        (None, None)
    } else {
        let mut new_of_live = vec![VertexId::MAX; bound];
        let mut live_of_new = Vec::with_capacity(s.num_vertices() as usize);
        for (v, &a) in alive.iter().enumerate() {
            if a {
                new_of_live[v] = live_of_new.len() as VertexId;
                live_of_new.push(v as VertexId);
            }
        }
        (Some(new_of_live), Some(live_of_new))
    };
    let n = live_of_new.as_ref().map_or(bound, Vec::len);
    let live = |i: usize| -> VertexId { live_of_new.as_ref().map_or(i as VertexId, |l| l[i]) };
    let renumber = new_of_live.as_deref();
    let out = build_adjacency(n, s.is_weighted(), &live, renumber, |v| s.out(v));
    let inc = s
        .is_directed()
        .then(|| build_adjacency(n, s.is_weighted(), &live, renumber, |v| s.inc(v)));
    let (ids, permutation) = if same_vertices {
        (base.ids().clone(), base.permutation())
    } else {
        ids_of(s, n, &live)
    };
    let g = Graph::from_parts(GraphParts {
        directed: s.is_directed(),
        out,
        inc,
        ids,
        permutation,
        order: base.meta().order,
        base_version: s.version(),
    })?;
    let g = if base.tiles().is_some() {
        g.with_tiles_if_worthwhile()
    } else {
        g
    };
    Ok(Arc::new(g))
}

/// One direction's lists, vertex `i` of the result reading live vertex
/// `live(i)`'s list through `list`, neighbours renumbered.
fn build_adjacency<'a>(
    n: usize,
    weighted: bool,
    live: &(dyn Fn(usize) -> VertexId + Sync),
    renumber: Option<&[VertexId]>,
    list: impl Fn(VertexId) -> (&'a [VertexId], Option<&'a [Weight]>) + Sync,
) -> Adjacency {
    let degrees: Vec<EdgeIdx> = (0..n)
        .into_par_iter()
        .map(|i| list(live(i)).0.len() as EdgeIdx)
        .collect();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut sum = 0;
    for d in &degrees {
        sum += d;
        offsets.push(sum);
    }
    drop(degrees);
    let mut nbrs = vec![0 as VertexId; sum as usize];
    let mut weights = weighted.then(|| vec![0.0 as Weight; sum as usize]);
    // Cut the arrays at block boundaries, so each block writes its own part.
    let mut pieces = Vec::new();
    let mut rest_n: &mut [VertexId] = &mut nbrs;
    let mut rest_w: Option<&mut [Weight]> = weights.as_deref_mut();
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let len = (offsets[end] - offsets[start]) as usize;
        let (a, b) = std::mem::take(&mut rest_n).split_at_mut(len);
        rest_n = b;
        let wa = match rest_w.take() {
            Some(w) => {
                let (wa, wb) = w.split_at_mut(len);
                rest_w = Some(wb);
                Some(wa)
            }
            None => None,
        };
        pieces.push((start..end, a, wa));
    }
    pieces
        .into_par_iter()
        .for_each(|(range, out_n, mut out_w)| {
            let mut at = 0;
            for i in range {
                let (nb, ws) = list(live(i));
                let dst = &mut out_n[at..at + nb.len()];
                match renumber {
                    Some(r) => dst
                        .iter_mut()
                        .zip(nb)
                        .for_each(|(d, &x)| *d = r[x as usize]),
                    None => dst.copy_from_slice(nb),
                }
                if let (Some(w), Some(ws)) = (out_w.as_deref_mut(), ws) {
                    w[at..at + nb.len()].copy_from_slice(ws);
                }
                at += nb.len();
            }
        });
    Adjacency::new(
        Section::owned(offsets),
        Section::owned(nbrs),
        weights.map(Section::owned),
    )
    .unwrap_or_else(|e| unreachable!("lists laid out by their own degrees: {e}"))
}

/// External ids of the result's vertices, and the natural-order
/// permutation (ascending external id) when it is not the identity.
type IdsAndOrder = (IdMap, Option<(Section<VertexId>, Section<VertexId>)>);

fn ids_of(s: &Snapshot, n: usize, live: &(dyn Fn(usize) -> VertexId + Sync)) -> IdsAndOrder {
    let ext: Vec<ExternalId> = (0..n).map(|i| s.external(live(i))).collect();
    let ids = match s.base().ids().kind() {
        IdKind::Str => {
            let names: Vec<String> = ext
                .iter()
                .map(|x| match x {
                    ExternalId::Str(s) => s.clone(),
                    ExternalId::Int(i) => i.to_string(),
                })
                .collect();
            IdMap::from_strings(&names)
        }
        IdKind::Int | IdKind::Identity => {
            let ints: Vec<i64> = ext
                .iter()
                .map(|x| match x {
                    ExternalId::Int(i) => *i,
                    ExternalId::Str(_) => unreachable!("ops on integer graphs carry integer ids"),
                })
                .collect();
            if ints.iter().enumerate().all(|(i, &x)| x == i as i64) {
                IdMap::Identity { n }
            } else {
                IdMap::from_ints(ints)
            }
        }
    };
    let mut by_ext: Vec<VertexId> = (0..n as VertexId).collect();
    by_ext.par_sort_unstable_by(|&a, &b| ext[a as usize].cmp(&ext[b as usize]));
    if by_ext.iter().enumerate().all(|(i, &v)| v as usize == i) {
        return (ids, None);
    }
    let mut old_of_new = vec![0 as VertexId; n];
    for (rank, &v) in by_ext.iter().enumerate() {
        old_of_new[v as usize] = rank as VertexId;
    }
    (
        ids,
        Some((Section::owned(old_of_new), Section::owned(by_ext))),
    )
}
