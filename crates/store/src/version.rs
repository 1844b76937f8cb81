//! Versions of a live graph: copy-on-write partitions over an immutable base
//! (Grace §6.1.2: changes shared by all versions, a pointer array per
//! version).
//!
//! Live vertex ids: `0..n_base` are the base's internal ids; vertices added
//! later get ids from `n_base` up, never reused (a removed vertex keeps its
//! id, dead; adding its external id again revives it). Compaction writes a
//! new base and renumbers.
//!
//! A partition is the block of [`PART_SIZE`] consecutive live ids. A
//! version holds, per partition, `None` (as in the base) or a shared
//! [`PartDelta`]: the vertices of the partition whose lists or liveness
//! changed, each with its whole new list (copy on write per vertex). A
//! commit copies the pointer array and replaces the deltas of the
//! partitions it touched; every other partition is shared with the
//! version before it. A partition's delta carries the version that made
//! it, which is what conflict detection compares.
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use plexus_graph::{ExternalId, Graph, IdKind, VertexId, Weight};

use crate::error::{Result, StoreError};

/// A hasher for integer keys (vertex and partition ids): one multiply,
/// as FxHash does; the keys are not adversarial (ids the store assigns).
#[derive(Clone, Copy, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// A map keyed by vertex or partition ids.
pub type IdMapOf<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// log2 of the vertices of a partition.
pub const PART_SHIFT: u32 = 12;
/// Vertices of a partition (the unit of copy-on-write and of conflicts).
pub const PART_SIZE: usize = 1 << PART_SHIFT;

/// The partition of live vertex `v`.
#[inline]
pub fn partition_of(v: VertexId) -> usize {
    (v >> PART_SHIFT) as usize
}

/// A changed neighbour list: sorted by neighbour (copies of one edge by
/// weight); `weights`, on weighted graphs, parallel to `nbrs`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct List {
    pub nbrs: Vec<VertexId>,
    pub weights: Option<Vec<Weight>>,
}

impl List {
    /// A list copied from slices.
    pub fn of(nbrs: &[VertexId], weights: Option<&[Weight]>) -> List {
        List {
            nbrs: nbrs.to_vec(),
            weights: weights.map(<[Weight]>::to_vec),
        }
    }

    /// An empty list (weighted when `weighted`).
    pub fn empty(weighted: bool) -> List {
        List {
            nbrs: Vec::new(),
            weights: weighted.then(Vec::new),
        }
    }

    /// Inserts `x` (with `w` on weighted lists) at its sorted place.
    pub fn insert(&mut self, x: VertexId, w: Option<Weight>) {
        let at = match (&self.weights, w) {
            (Some(ws), Some(w)) => {
                let lo = self.nbrs.partition_point(|&y| y < x);
                let hi = self.nbrs.partition_point(|&y| y <= x);
                lo + ws[lo..hi].partition_point(|&z| z <= w)
            }
            _ => self.nbrs.partition_point(|&y| y <= x),
        };
        self.nbrs.insert(at, x);
        if let Some(ws) = &mut self.weights {
            ws.insert(at, w.unwrap_or(1.0));
        }
    }

    /// Removes every copy of `x`; returns how many there were.
    pub fn remove_all(&mut self, x: VertexId) -> usize {
        let lo = self.nbrs.partition_point(|&y| y < x);
        let hi = self.nbrs.partition_point(|&y| y <= x);
        self.nbrs.drain(lo..hi);
        if let Some(ws) = &mut self.weights {
            ws.drain(lo..hi);
        }
        hi - lo
    }

    /// Sets the weight of every copy of `x`; returns how many there were.
    pub fn set_weight(&mut self, x: VertexId, w: Weight) -> usize {
        let lo = self.nbrs.partition_point(|&y| y < x);
        let hi = self.nbrs.partition_point(|&y| y <= x);
        if let Some(ws) = &mut self.weights {
            ws[lo..hi].iter_mut().for_each(|z| *z = w);
        }
        hi - lo
    }

    /// Whether `x` is in the list.
    pub fn contains(&self, x: VertexId) -> bool {
        self.nbrs.binary_search(&x).is_ok()
    }
}

/// A vertex whose liveness or lists differ from the base. `None` lists are
/// the base's (only for base vertices; an added vertex always has both).
#[derive(Clone, Debug)]
pub(crate) struct VertexDelta {
    pub alive: bool,
    pub out: Option<Arc<List>>,
    /// In-edges of directed graphs (unused for undirected ones).
    pub inc: Option<Arc<List>>,
}

/// log2 of the vertices of a block, the unit of copy-on-write inside a
/// partition's delta.
const BLOCK_SHIFT: u32 = 6;

/// The changed vertices of one partition, made by commit `version`, in
/// blocks of 64 consecutive ids shared between versions: a transaction
/// copies the partition's block pointers and only the blocks it writes, so
/// a commit costs what it touched, not what the partition accumulated.
#[derive(Clone, Debug, Default)]
pub(crate) struct PartDelta {
    pub version: u64,
    blocks: Vec<Option<Arc<Block>>>,
}

/// The changed vertices of one block, sorted by id.
#[derive(Clone, Debug, Default)]
struct Block {
    verts: Vec<(VertexId, VertexDelta)>,
}

impl PartDelta {
    fn block_of(v: VertexId) -> usize {
        (v as usize & (PART_SIZE - 1)) >> BLOCK_SHIFT
    }

    /// The delta of vertex `v` (of this partition), if it changed.
    pub fn get(&self, v: VertexId) -> Option<&VertexDelta> {
        let b = self.blocks.get(Self::block_of(v))?.as_ref()?;
        let i = b.verts.binary_search_by_key(&v, |e| e.0).ok()?;
        Some(&b.verts[i].1)
    }

    /// Every changed vertex of the partition with its delta, by id.
    pub fn iter(&self) -> impl Iterator<Item = (VertexId, &VertexDelta)> {
        self.blocks
            .iter()
            .flatten()
            .flat_map(|b| b.verts.iter().map(|(v, d)| (*v, d)))
    }

    /// The delta of `v` for writing (its block copied when shared),
    /// inserted as `init()` when absent.
    pub fn get_mut(&mut self, v: VertexId, init: impl FnOnce() -> VertexDelta) -> &mut VertexDelta {
        let k = Self::block_of(v);
        if self.blocks.len() <= k {
            self.blocks.resize(k + 1, None);
        }
        let b = Arc::make_mut(self.blocks[k].get_or_insert_with(Arc::default));
        let i = match b.verts.binary_search_by_key(&v, |e| e.0) {
            Ok(i) => i,
            Err(i) => {
                b.verts.insert(i, (v, init()));
                i
            }
        };
        &mut b.verts[i].1
    }
}

/// External ids of the vertices added after the base, shared (append-only)
/// by every version over that base. An id listed here exists in a version
/// only when that version marks it alive.
#[derive(Debug, Default)]
pub(crate) struct IdOverlay {
    pub ext: Vec<ExternalId>,
    pub of: HashMap<ExternalId, VertexId>,
}

/// One version: the base, the partitions' deltas and the counts.
pub(crate) struct VersionData {
    pub version: u64,
    pub base: Arc<Graph>,
    pub ids: Arc<RwLock<IdOverlay>>,
    pub parts: Vec<Option<Arc<PartDelta>>>,
    /// Live ids `0..n_ids` may be alive in this version.
    pub n_ids: usize,
    /// Vertices alive.
    pub alive: u64,
    /// Arcs stored (as the base counts them: two per undirected edge
    /// between distinct vertices, one per self-loop).
    pub arcs: u64,
    /// Ops applied since the base (what compaction would merge).
    pub ops_since_base: u64,
    pub materialized: OnceLock<Arc<Graph>>,
}

/// A consistent, immutable view of one version of a live graph: it reads
/// the same graph for as long as it is held, whatever commits follow.
/// Cheap to clone (shared).
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) v: Arc<VersionData>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("version", &self.v.version)
            .field("vertices", &self.v.alive)
            .field("arcs", &self.v.arcs)
            .finish()
    }
}

impl Snapshot {
    /// The first version over `base`: the base itself, as version
    /// `base.base_version()`.
    pub fn of_base(base: Arc<Graph>) -> Snapshot {
        let n = base.num_vertices();
        let arcs = base.num_arcs();
        Snapshot {
            v: Arc::new(VersionData {
                version: base.base_version(),
                parts: vec![None; n.div_ceil(PART_SIZE)],
                ids: Arc::default(),
                n_ids: n,
                alive: n as u64,
                arcs,
                ops_since_base: 0,
                materialized: OnceLock::new(),
                base,
            }),
        }
    }

    /// The version number.
    pub fn version(&self) -> u64 {
        self.v.version
    }

    /// The base this version is over.
    pub fn base(&self) -> &Arc<Graph> {
        &self.v.base
    }

    /// Whether edges are directed.
    pub fn is_directed(&self) -> bool {
        self.v.base.is_directed()
    }

    /// Whether edges carry weights.
    pub fn is_weighted(&self) -> bool {
        self.v.base.is_weighted()
    }

    /// Vertices alive in this version.
    pub fn num_vertices(&self) -> u64 {
        self.v.alive
    }

    /// Stored arcs (see [`plexus_graph::Graph::num_arcs`]).
    pub fn num_arcs(&self) -> u64 {
        self.v.arcs
    }

    /// Ops committed since the base (the changes compaction would merge).
    pub fn ops_since_base(&self) -> u64 {
        self.v.ops_since_base
    }

    /// The bound of live ids: every live vertex id is below it.
    pub fn id_bound(&self) -> usize {
        self.v.n_ids
    }

    pub(crate) fn delta(&self, v: VertexId) -> Option<&VertexDelta> {
        self.v.parts.get(partition_of(v))?.as_ref()?.get(v)
    }

    /// The version that last changed partition `p` (the base's version if
    /// none did).
    pub fn partition_version(&self, p: usize) -> u64 {
        match self.v.parts.get(p) {
            Some(Some(d)) => d.version,
            _ => self.v.base.base_version(),
        }
    }

    /// Whether live vertex `v` exists in this version.
    pub fn is_alive(&self, v: VertexId) -> bool {
        match self.delta(v) {
            Some(d) => d.alive,
            None => (v as usize) < self.v.base.num_vertices(),
        }
    }

    /// Out-neighbours of `v` (sorted) and their weights on weighted graphs;
    /// empty for a vertex that is not alive.
    pub fn out(&self, v: VertexId) -> (&[VertexId], Option<&[Weight]>) {
        list_of(&self.v.base, self.delta(v), v, true)
    }

    /// In-neighbours of `v` (the out-neighbours on undirected graphs).
    pub fn inc(&self, v: VertexId) -> (&[VertexId], Option<&[Weight]>) {
        if !self.is_directed() {
            return self.out(v);
        }
        list_of(&self.v.base, self.delta(v), v, false)
    }

    /// Whether the arc `u → v` exists (either direction on undirected
    /// graphs).
    pub fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out(u).0.binary_search(&v).is_ok()
    }

    /// The external id of live vertex `v` (`v` below [`Self::id_bound`]).
    pub fn external(&self, v: VertexId) -> ExternalId {
        let n = self.v.base.num_vertices();
        if (v as usize) < n {
            return self.v.base.ids().external(v);
        }
        let ids = self.v.ids.read().unwrap_or_else(|e| e.into_inner());
        ids.ext[v as usize - n].clone()
    }

    /// The live id of external id `x` when the vertex is alive here.
    pub fn lookup(&self, x: &ExternalId) -> Option<VertexId> {
        self.lookup_any(x).filter(|&v| self.is_alive(v))
    }

    /// The live id of `x`, alive or not (ids of removed or never-committed
    /// vertices included).
    pub(crate) fn lookup_any(&self, x: &ExternalId) -> Option<VertexId> {
        let ids = self.v.base.ids();
        let in_base = match x {
            ExternalId::Int(i) if ids.kind() != IdKind::Str => ids.lookup_int(*i),
            ExternalId::Str(s) if ids.kind() == IdKind::Str => ids.lookup_str(s),
            _ => None,
        };
        if in_base.is_some() {
            return in_base;
        }
        let o = self.v.ids.read().unwrap_or_else(|e| e.into_inner());
        o.of.get(x)
            .copied()
            .filter(|&v| (v as usize) < self.v.n_ids)
    }

    /// Parses a user's vertex id as this graph's kind of external id.
    pub fn parse_id(&self, s: &str) -> Result<ExternalId> {
        parse_id(self.v.base.ids().kind(), s)
    }

    /// The live id of a user's vertex id (text), or an error naming it.
    pub fn resolve(&self, s: &str) -> Result<VertexId> {
        let x = self.parse_id(s)?;
        self.lookup(&x)
            .ok_or_else(|| StoreError::UnknownVertex { id: s.to_string() })
    }
}

/// Vertex `v`'s out-list (`out`) or in-list as `d`, its delta if it has
/// one, and `base` give it: the delta's copy, nothing for a vertex that is
/// not alive, else the base's (nothing for an added vertex).
pub(crate) fn list_of<'a>(
    base: &'a Graph,
    d: Option<&'a VertexDelta>,
    v: VertexId,
    out: bool,
) -> (&'a [VertexId], Option<&'a [Weight]>) {
    let copy = d.and_then(|d| if out { d.out.as_ref() } else { d.inc.as_ref() });
    match (copy, d) {
        (Some(l), _) => (&l.nbrs, l.weights.as_deref()),
        (None, Some(VertexDelta { alive: false, .. })) => (&[], None),
        _ if (v as usize) >= base.num_vertices() => (&[], None),
        _ if out => (base.out_neighbors(v), base.out_weights(v)),
        _ => (base.in_neighbors(v), base.in_weights(v)),
    }
}

/// Parses `s` as an external id of `kind` (integers for identity and
/// integer maps).
pub fn parse_id(kind: IdKind, s: &str) -> Result<ExternalId> {
    match kind {
        IdKind::Str => Ok(ExternalId::Str(s.to_string())),
        IdKind::Int | IdKind::Identity => {
            s.trim().parse::<i64>().map(ExternalId::Int).map_err(|_| {
                StoreError::BadOp(format!(
                    "vertex id '{s}' is not an integer (this graph has integer ids)"
                ))
            })
        }
    }
}
