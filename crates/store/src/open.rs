//! Opening a stored graph as a live graph (recovery), and compaction.
//!
//! Files in the graph's directory (FORMAT.md, "Live graphs"): `graph.plx`,
//! the base, whose header holds the version it contains; `wal.log`, the
//! records of the versions after it. Opening maps the base and replays
//! every logged record above the base's version.
//!
//! Compaction merges the newest published version into a new base: the
//! version materialized, rebuilt in the base's vertex order with tiles,
//! written beside the old file and renamed over it, then the log rewritten
//! to the records above the merged version. A crash between the two
//! leaves a new base and an old log whose records at or below its version
//! are skipped on open. Snapshots of the old base keep reading it (its
//! file stays mapped) until they end.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use plexus_graph::{
    build, BuildOptions, DataDir, DuplicatePolicy, EdgeBuffer, Graph, OrderChoice, VertexId,
};

use crate::error::{Result, StoreError};
use crate::live::{lock, LiveGraph};
use crate::lock::WriterLock;
use crate::version::Snapshot;
use crate::wal::{self, Record, Wal};

/// The log's file name in a graph's directory.
pub const LOG_FILE: &str = "wal.log";

/// How to open a live graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// The one writer of the data directory: takes its writer lock, opens
    /// the log for appending (dropping a torn tail).
    Write,
    /// A reader: no lock, the log read as it is; commits are refused.
    Read,
}

/// Where a live graph is stored.
pub(crate) struct Home {
    pub data: DataDir,
    pub name: String,
    pub read_only: bool,
    pub _lock: Option<WriterLock>,
}

/// What [`LiveGraph::open`] found.
#[derive(Clone, Debug, Default)]
pub struct OpenReport {
    /// The base's version.
    pub base_version: u64,
    /// Log records replayed (those above the base's version).
    pub replayed: u64,
    /// Ops in them.
    pub replayed_ops: u64,
    /// A torn final record dropped: (offset, bytes).
    pub torn: Option<(u64, u64)>,
    /// Seconds spent replaying.
    pub replay_seconds: f64,
}

/// What [`LiveGraph::compact`] did.
#[derive(Clone, Debug, Default)]
pub struct CompactReport {
    /// The version merged into the new base.
    pub version: u64,
    /// Ops merged.
    pub merged_ops: u64,
    /// Log bytes before and after.
    pub log_bytes_before: u64,
    pub log_bytes_after: u64,
    /// Seconds to materialize, rebuild in order, write.
    pub seconds: f64,
}

impl LiveGraph {
    /// Opens graph `name` of `data` at its newest durable version.
    pub fn open(data: &DataDir, name: &str, access: Access) -> Result<(LiveGraph, OpenReport)> {
        // A reader racing a compaction can see the new log with the old
        // base (a gap in versions): it opens again.
        let mut tries = 0;
        loop {
            match open_once(data, name, access, false) {
                Err(StoreError::VersionGap { .. }) if access == Access::Read && tries < 3 => {
                    tries += 1;
                }
                other => return other,
            }
        }
    }

    /// Opens graph `name` of `data` for writing under the data directory's
    /// writer lock that the caller already holds (`held`, taken with
    /// [`WriterLock::acquire`] on `data`): a server holds the lock for its
    /// whole life and opens each graph it serves this way.
    pub fn open_held(
        data: &DataDir,
        name: &str,
        held: &WriterLock,
    ) -> Result<(LiveGraph, OpenReport)> {
        let _ = held;
        open_once(data, name, Access::Write, true)
    }

    /// The path of this graph's log, when it has a home.
    pub fn log_path(&self) -> Option<PathBuf> {
        self.home
            .as_ref()
            .map(|h| h.data.graph_dir(&h.name).join(LOG_FILE))
    }

    /// Bytes in the log (0 without one).
    pub fn log_bytes(&self) -> u64 {
        self.log.as_ref().map_or(0, |w| w.size_bytes())
    }

    /// Merges the newest published version into a new base (see the
    /// module docs). Commits may continue meanwhile; they are carried
    /// over to the new base. Only for graphs opened with [`Access::Write`].
    pub fn compact(&self) -> Result<CompactReport> {
        self.compact_version(self.snapshot())
    }

    /// [`LiveGraph::compact`] of `snap`, a published version of this graph.
    pub(crate) fn compact_version(&self, snap: Snapshot) -> Result<CompactReport> {
        let Some(home) = self.home.as_ref().filter(|h| !h.read_only) else {
            return Err(StoreError::ReadOnly);
        };
        if let Some(why) = lock(&self.poisoned).clone() {
            return Err(StoreError::Poisoned(why));
        }
        let t = Instant::now();
        let log_bytes_before = self.log_bytes();
        let mut report = CompactReport {
            version: snap.version(),
            merged_ops: snap.ops_since_base(),
            log_bytes_before,
            log_bytes_after: log_bytes_before,
            seconds: 0.0,
        };
        if snap.ops_since_base() == 0 {
            return Ok(report);
        }
        let rebuilt = rebuild(&snap)?;
        home.data.replace_graph_file(&home.name, &rebuilt)?;
        drop(rebuilt);
        let base = Arc::new(home.data.open(&home.name)?);
        // Carry the versions committed meanwhile over to the new base.
        let mut head = lock(&self.head);
        let mut published = lock(&self.published);
        while published.version() != head.version() {
            // A failed commit leaves a version in the head that is never
            // published: give up (the new base holds a durable version, so
            // the store opens as it is).
            if let Some(why) = lock(&self.poisoned).clone() {
                return Err(StoreError::Poisoned(why));
            }
            published = self
                .publish_cv
                .wait(published)
                .unwrap_or_else(|e| e.into_inner());
        }
        let later: Vec<Record> = match &self.log {
            Some(wal) => {
                wal.rewrite_after(snap.version())?;
                report.log_bytes_after = wal.size_bytes();
                wal::read_records(wal.path())?
            }
            None => Vec::new(),
        };
        let carried = LiveGraph::in_memory(base);
        carried.replay(later.into_iter().filter(|r| r.version > snap.version()))?;
        let s = carried.snapshot();
        *head = s.clone();
        *published = s;
        report.seconds = t.elapsed().as_secs_f64();
        Ok(report)
    }
}

fn open_once(
    data: &DataDir,
    name: &str,
    access: Access,
    lock_held: bool,
) -> Result<(LiveGraph, OpenReport)> {
    let lock = match access {
        Access::Write if !lock_held => {
            std::fs::create_dir_all(data.root()).map_err(|e| StoreError::io(data.root(), e))?;
            Some(WriterLock::acquire(data.root())?)
        }
        _ => None,
    };
    let base = Arc::new(data.open(name)?);
    let path = data.graph_dir(name).join(LOG_FILE);
    let mut report = OpenReport {
        base_version: base.base_version(),
        ..Default::default()
    };
    let (wal, records) = match access {
        Access::Write => {
            let (wal, rec) = Wal::open_real(&path)?;
            report.torn = rec.torn.as_ref().map(|d| (d.offset, d.bytes));
            (Some(Arc::new(wal)), rec.records)
        }
        Access::Read => (None, wal::read_records(&path)?),
    };
    let mut live = LiveGraph::in_memory(base);
    let t = Instant::now();
    let records: Vec<Record> = records
        .into_iter()
        .filter(|r| r.version > report.base_version)
        .collect();
    report.replayed = records.len() as u64;
    report.replayed_ops = records.iter().map(|r| r.ops.len() as u64).sum();
    live.replay(records)?;
    report.replay_seconds = t.elapsed().as_secs_f64();
    if let Some(w) = &wal {
        w.poison_on_write_failure();
    }
    live.log = wal;
    live.home = Some(Home {
        data: data.clone(),
        name: name.to_string(),
        read_only: access == Access::Read,
        _lock: lock,
    });
    Ok((live, report))
}

/// The snapshot's graph rebuilt as a fresh import would build it: in the
/// base's vertex order, labelled with the snapshot's version (tiles are
/// added by the store's writer when worthwhile).
fn rebuild(snap: &Snapshot) -> Result<Graph> {
    let g = snap.graph()?;
    let directed = g.is_directed();
    let mut buf = EdgeBuffer {
        src: Vec::new(),
        dst: Vec::new(),
        weights: g.is_weighted().then(Vec::new),
    };
    for (u, v, w) in g.arcs() {
        if !directed && v < u {
            continue;
        }
        buf.src.push(u);
        buf.dst.push(v);
        if let (Some(ws), Some(w)) = (buf.weights.as_mut(), w) {
            ws.push(w);
        }
    }
    let opts = BuildOptions {
        directed,
        duplicates: DuplicatePolicy::Keep,
        order: OrderChoice::Exactly(g.meta().order),
        ..Default::default()
    };
    // The builder numbers vertices by the buffer's ids; give it the
    // natural order so that it applies the order from scratch.
    let n = g.num_vertices();
    let rank = |v: VertexId| g.natural_id(v);
    buf.src.iter_mut().for_each(|v| *v = rank(*v));
    buf.dst.iter_mut().for_each(|v| *v = rank(*v));
    let ids = natural_ids(&g);
    let built = build(n, buf, ids, &opts)?;
    Ok(built.with_base_version(snap.version()))
}

/// The id map of `g` in natural order (external id of natural rank `r`).
fn natural_ids(g: &Graph) -> plexus_graph::IdMap {
    use plexus_graph::{ExternalId, IdMap};
    let n = g.num_vertices();
    let ext: Vec<ExternalId> = (0..n as VertexId)
        .map(|r| g.ids().external(g.from_natural(r)))
        .collect();
    match g.ids() {
        IdMap::Identity { .. } => IdMap::Identity { n },
        IdMap::Int { .. } => IdMap::from_ints(
            ext.into_iter()
                .map(|x| match x {
                    ExternalId::Int(i) => i,
                    ExternalId::Str(_) => 0,
                })
                .collect(),
        ),
        IdMap::Str { .. } => {
            IdMap::from_strings(&ext.iter().map(|x| x.to_string()).collect::<Vec<_>>())
        }
    }
}

/// The newest committed version of the stored graph `name` as a [`Graph`]:
/// the base file, memory-mapped, when the graph has no log, else the base
/// with the log replayed (read-only: no lock is taken, a writer may be
/// committing meanwhile).
pub fn open_latest(data: &DataDir, name: &str) -> Result<Graph> {
    if !data.graph_dir(name).join(LOG_FILE).exists() {
        return Ok(data.open(name)?);
    }
    let (live, _) = LiveGraph::open(data, name, Access::Read)?;
    Ok(Arc::unwrap_or_clone(live.snapshot().graph()?))
}
