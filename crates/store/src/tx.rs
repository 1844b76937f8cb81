//! Transactions: a snapshot plus the transaction's own writes, applied op
//! by op to private copies of the partitions they touch.
//!
//! An op is checked before it changes anything, so a failed op leaves the
//! transaction as it was (the CLI aborts the whole transaction on one).
//! [`crate::live::LiveGraph::commit`] installs the copies as the next
//! version when no partition they copy changed since the snapshot.
use std::sync::Arc;

use plexus_graph::{ExternalId, IdKind, VertexId, Weight};

use crate::error::{Result, StoreError};
use crate::ops::Op;
use crate::version::{list_of, partition_of, IdMapOf, List, PartDelta, Snapshot, VertexDelta};

/// A transaction under snapshot isolation: reads see its snapshot and its
/// own writes; nothing is visible to others until it commits.
pub struct Transaction {
    pub(crate) snap: Snapshot,
    /// Private copies of the touched partitions (version set at commit).
    pub(crate) dirty: IdMapOf<usize, PartDelta>,
    pub(crate) ops: Vec<Op>,
    pub(crate) alive_delta: i64,
    pub(crate) arcs_delta: i64,
    /// One past the largest live id this transaction made alive.
    pub(crate) id_end: usize,
}

impl Transaction {
    /// A transaction reading `snap`.
    pub fn new(snap: Snapshot) -> Transaction {
        let id_end = snap.id_bound();
        Transaction {
            snap,
            dirty: IdMapOf::default(),
            ops: Vec::new(),
            alive_delta: 0,
            arcs_delta: 0,
            id_end,
        }
    }

    /// The snapshot this transaction reads.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// The ops applied so far, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The partitions written so far (ascending).
    pub fn partitions(&self) -> Vec<usize> {
        let mut p: Vec<usize> = self.dirty.keys().copied().collect();
        p.sort_unstable();
        p
    }

    fn vdelta(&self, v: VertexId) -> Option<&VertexDelta> {
        match self.dirty.get(&partition_of(v)) {
            Some(d) => d.get(v),
            None => self.snap.delta(v),
        }
    }

    /// Whether live vertex `v` exists for this transaction.
    pub fn is_alive(&self, v: VertexId) -> bool {
        match self.vdelta(v) {
            Some(d) => d.alive,
            None => (v as usize) < self.snap.base().num_vertices(),
        }
    }

    /// Out-neighbours of `v` as this transaction sees them.
    pub fn out(&self, v: VertexId) -> (&[VertexId], Option<&[Weight]>) {
        if !self.dirty.contains_key(&partition_of(v)) {
            return self.snap.out(v);
        }
        list_of(self.snap.base(), self.vdelta(v), v, true)
    }

    /// In-neighbours of `v` (out-neighbours on undirected graphs).
    pub fn inc(&self, v: VertexId) -> (&[VertexId], Option<&[Weight]>) {
        if !self.snap.is_directed() {
            return self.out(v);
        }
        if !self.dirty.contains_key(&partition_of(v)) {
            return self.snap.inc(v);
        }
        list_of(self.snap.base(), self.vdelta(v), v, false)
    }

    /// Whether the arc `u → v` exists for this transaction.
    pub fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out(u).0.binary_search(&v).is_ok()
    }

    /// The live id of `x` when it is alive for this transaction.
    pub fn lookup(&self, x: &ExternalId) -> Option<VertexId> {
        self.id_of(x).filter(|&v| self.is_alive(v))
    }

    /// The external id of live vertex `v`.
    pub fn external(&self, v: VertexId) -> ExternalId {
        self.snap.external(v)
    }

    /// The live id of `x`, alive or not, including ids allocated by
    /// transactions not (yet) committed.
    fn id_of(&self, x: &ExternalId) -> Option<VertexId> {
        if let Some(v) = self.snap.lookup_any(x) {
            return Some(v);
        }
        let o = self.snap.v.ids.read().unwrap_or_else(|e| e.into_inner());
        o.of.get(x).copied()
    }

    /// The live id of `x`, allocating one (not yet alive) when it has none.
    fn id_or_new(&mut self, x: &ExternalId) -> Result<VertexId> {
        self.check_kind(x)?;
        if let Some(v) = self.id_of(x) {
            return Ok(v);
        }
        let n_base = self.snap.base().num_vertices();
        let mut o = self.snap.v.ids.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&v) = o.of.get(x) {
            return Ok(v);
        }
        let v = n_base + o.ext.len();
        if v as u64 >= plexus_graph::MAX_VERTICES {
            return Err(StoreError::BadOp(format!(
                "cannot add vertex {x}: the graph has the most vertices this build allows"
            )));
        }
        o.ext.push(x.clone());
        o.of.insert(x.clone(), v as VertexId);
        Ok(v as VertexId)
    }

    fn check_kind(&self, x: &ExternalId) -> Result<()> {
        let str_ids = self.snap.base().ids().kind() == IdKind::Str;
        match (x, str_ids) {
            (ExternalId::Str(_), true) | (ExternalId::Int(_), false) => Ok(()),
            (ExternalId::Str(s), false) => Err(StoreError::BadOp(format!(
                "vertex id '{s}' is not an integer (this graph has integer ids)"
            ))),
            (ExternalId::Int(i), true) => Err(StoreError::BadOp(format!(
                "vertex id {i} is an integer, but this graph has string ids"
            ))),
        }
    }

    fn alive_id(&self, x: &ExternalId) -> Result<VertexId> {
        self.check_kind(x)?;
        self.lookup(x)
            .ok_or_else(|| StoreError::UnknownVertex { id: x.to_string() })
    }

    /// The private copy of `v`'s delta, made on first write.
    fn vd_mut(&mut self, v: VertexId) -> &mut VertexDelta {
        let p = partition_of(v);
        let snap = &self.snap;
        let part = self
            .dirty
            .entry(p)
            .or_insert_with(|| match snap.v.parts.get(p) {
                Some(Some(d)) => PartDelta::clone(d),
                _ => PartDelta::default(),
            });
        let base_alive = (v as usize) < snap.base().num_vertices();
        part.get_mut(v, || VertexDelta {
            alive: base_alive,
            out: None,
            inc: None,
        })
    }

    fn base_list(&self, v: VertexId, out: bool) -> List {
        let base = self.snap.base();
        if (v as usize) >= base.num_vertices() {
            return List::empty(base.is_weighted());
        }
        if out || !base.is_directed() {
            List::of(base.out_neighbors(v), base.out_weights(v))
        } else {
            List::of(base.in_neighbors(v), base.in_weights(v))
        }
    }

    /// `v`'s out-list (`out`) or in-list, copied for writing.
    fn list_mut(&mut self, v: VertexId, out: bool) -> &mut List {
        let has = {
            let d = self.vd_mut(v);
            if out {
                d.out.is_some()
            } else {
                d.inc.is_some()
            }
        };
        let fresh = (!has).then(|| Arc::new(self.base_list(v, out)));
        let d = self.vd_mut(v);
        let slot = if out { &mut d.out } else { &mut d.inc };
        if let Some(l) = fresh {
            *slot = Some(l);
        }
        Arc::make_mut(slot.get_or_insert_with(Arc::default))
    }

    /// The list that mirrors arcs into `v` (its in-list on directed graphs,
    /// its out-list on undirected ones).
    fn mirror_mut(&mut self, v: VertexId) -> &mut List {
        let directed = self.snap.is_directed();
        self.list_mut(v, !directed)
    }

    /// Makes `v` alive with no edges.
    fn revive(&mut self, v: VertexId) {
        let weighted = self.snap.is_weighted();
        let directed = self.snap.is_directed();
        let d = self.vd_mut(v);
        d.alive = true;
        d.out = Some(Arc::new(List::empty(weighted)));
        d.inc = directed.then(|| Arc::new(List::empty(weighted)));
        self.alive_delta += 1;
        self.id_end = self.id_end.max(v as usize + 1);
    }

    /// Applies one op (checked first: a failing op changes nothing).
    pub fn apply(&mut self, op: Op) -> Result<()> {
        match &op {
            Op::AddVertex(x) => {
                let v = self.id_or_new(x)?;
                if self.is_alive(v) {
                    return Err(StoreError::VertexExists { id: x.to_string() });
                }
                self.revive(v);
            }
            Op::RemoveVertex(x) => {
                let v = self.alive_id(x)?;
                self.remove_vertex(v);
            }
            Op::AddEdge { u, v, w } => {
                let w = self.check_weight(*w, false)?;
                self.add_edge(u, v, w)?;
            }
            Op::RemoveEdge { u, v } => {
                let (a, b) = self.edge_ids(u, v)?;
                let k = self.list_mut(a, true).remove_all(b);
                if self.snap.is_directed() {
                    self.list_mut(b, false).remove_all(a);
                } else if a != b {
                    self.list_mut(b, true).remove_all(a);
                }
                self.arcs_delta -= self.arcs_of(a, b, k);
            }
            Op::SetWeight { u, v, w } => {
                let w = self.check_weight(Some(*w), true)?.unwrap_or(1.0);
                let (a, b) = self.edge_ids(u, v)?;
                self.list_mut(a, true).set_weight(b, w);
                if self.snap.is_directed() || a != b {
                    self.mirror_mut(b).set_weight(a, w);
                }
            }
        }
        self.ops.push(op);
        Ok(())
    }

    /// Arcs stored for `k` copies of the edge `a → b`.
    fn arcs_of(&self, a: VertexId, b: VertexId, k: usize) -> i64 {
        let k = k as i64;
        if self.snap.is_directed() || a == b {
            k
        } else {
            2 * k
        }
    }

    /// Both endpoints alive and the edge present.
    fn edge_ids(&self, u: &ExternalId, v: &ExternalId) -> Result<(VertexId, VertexId)> {
        let a = self.alive_id(u)?;
        let b = self.alive_id(v)?;
        if !self.has_edge(a, b) {
            return Err(StoreError::EdgeMissing {
                u: u.to_string(),
                v: v.to_string(),
            });
        }
        Ok((a, b))
    }

    fn check_weight(&self, w: Option<Weight>, setting: bool) -> Result<Option<Weight>> {
        match (self.snap.is_weighted(), w) {
            (true, Some(w)) if w.is_finite() => Ok(Some(w)),
            (true, Some(w)) => Err(StoreError::BadOp(format!(
                "weight {w} is not a finite number"
            ))),
            (true, None) => Err(StoreError::BadOp(
                "this graph is weighted: add-edge needs a weight".into(),
            )),
            (false, Some(_)) if setting => Err(StoreError::BadOp(
                "this graph is unweighted: set-weight does not apply".into(),
            )),
            (false, Some(_)) => Err(StoreError::BadOp(
                "this graph is unweighted: add-edge takes no weight".into(),
            )),
            (false, None) => Ok(None),
        }
    }

    fn add_edge(&mut self, u: &ExternalId, v: &ExternalId, w: Option<Weight>) -> Result<()> {
        // Ids allocated for an op that then fails stay unused (harmless).
        let a = self.id_or_new(u)?;
        let b = self.id_or_new(v)?;
        if self.is_alive(a) && self.is_alive(b) && self.has_edge(a, b) {
            return Err(StoreError::EdgeExists {
                u: u.to_string(),
                v: v.to_string(),
            });
        }
        for x in [a, b] {
            if !self.is_alive(x) {
                self.revive(x);
            }
        }
        self.list_mut(a, true).insert(b, w);
        if self.snap.is_directed() {
            self.list_mut(b, false).insert(a, w);
        } else if a != b {
            self.list_mut(b, true).insert(a, w);
        }
        self.arcs_delta += self.arcs_of(a, b, 1);
        Ok(())
    }

    fn remove_vertex(&mut self, v: VertexId) {
        let directed = self.snap.is_directed();
        let out: Vec<VertexId> = self.out(v).0.to_vec();
        let inc: Vec<VertexId> = if directed {
            self.inc(v).0.to_vec()
        } else {
            Vec::new()
        };
        let mut removed = out.len() as i64;
        let mut last = None;
        for &y in &out {
            if y == v || last == Some(y) {
                continue;
            }
            last = Some(y);
            let k = self.mirror_mut(y).remove_all(v);
            if !directed {
                removed += k as i64;
            }
        }
        let mut last = None;
        for &y in &inc {
            if y == v || last == Some(y) {
                continue;
            }
            last = Some(y);
            removed += self.list_mut(y, true).remove_all(v) as i64;
        }
        let weighted = self.snap.is_weighted();
        let d = self.vd_mut(v);
        d.alive = false;
        d.out = Some(Arc::new(List::empty(weighted)));
        d.inc = directed.then(|| Arc::new(List::empty(weighted)));
        self.alive_delta -= 1;
        self.arcs_delta -= removed;
    }
}
