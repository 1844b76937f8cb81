//! [`LiveGraph`]: the versions of one graph, its commits and (when opened
//! from a data directory) its log.
//!
//! Commit protocol (first committer wins, Grace §5): under the commit lock
//! a transaction's partitions are checked against the head (the newest
//! version assigned, durable or not); if none changed after its snapshot
//! the next version is made from the head with the transaction's copies
//! installed, its record is queued on the log, and the lock is released.
//! The committer then waits for the log's group commit (one fdatasync for
//! every record queued meanwhile) and publishes its version once every
//! earlier version is published, so a snapshot never sees a version whose
//! predecessor is not durable. A failed log write poisons the graph: the
//! head may hold versions that are not durable, so every later commit
//! fails until the graph is reopened (recovery reads what the log holds).
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use plexus_graph::Graph;

use crate::error::{Result, StoreError};
use crate::tx::Transaction;
use crate::version::{Snapshot, VersionData, PART_SIZE};
use crate::wal::{Record, Wal};

/// The versions of one graph.
pub struct LiveGraph {
    pub(crate) head: Mutex<Snapshot>,
    pub(crate) published: Mutex<Snapshot>,
    pub(crate) publish_cv: Condvar,
    pub(crate) poisoned: Mutex<Option<String>>,
    pub(crate) log: Option<Arc<Wal>>,
    /// Where the graph is stored, when it was opened from a data directory.
    pub(crate) home: Option<crate::open::Home>,
    /// Whether a background compaction runs, and how the last one ended.
    pub(crate) compaction: Mutex<Compaction>,
}

/// The background compaction's state.
#[derive(Default)]
pub(crate) struct Compaction {
    pub running: bool,
    pub last: Option<std::result::Result<crate::open::CompactReport, String>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl LiveGraph {
    /// A live graph over `base` with no log (changes live in memory only).
    pub fn in_memory(base: Arc<Graph>) -> LiveGraph {
        LiveGraph::with_log(base, None)
    }

    /// A live graph over `base` whose commits go to `log` first (which is
    /// set to [`Wal::poison_on_write_failure`]: a failed commit poisons
    /// the graph).
    pub fn with_log(base: Arc<Graph>, log: Option<Arc<Wal>>) -> LiveGraph {
        if let Some(w) = &log {
            w.poison_on_write_failure();
        }
        let s = Snapshot::of_base(base);
        LiveGraph {
            head: Mutex::new(s.clone()),
            published: Mutex::new(s),
            publish_cv: Condvar::new(),
            poisoned: Mutex::new(None),
            log,
            home: None,
            compaction: Mutex::default(),
        }
    }

    /// The newest published version, pinned for as long as it is held.
    pub fn snapshot(&self) -> Snapshot {
        lock(&self.published).clone()
    }

    /// A transaction reading the newest published version.
    pub fn begin(&self) -> Transaction {
        Transaction::new(self.snapshot())
    }

    /// Whether the changes since the base exceed `share` of its arcs (the
    /// background compaction's trigger).
    pub fn over_share(&self, share: f64) -> bool {
        let s = self.snapshot();
        s.ops_since_base() as f64 > share * s.base().num_arcs().max(1) as f64
    }

    /// Starts a compaction of the newest published version on a thread of
    /// its own when the changes since the base exceed `share` of its arcs
    /// and none is running; returns whether it started. Commits and snapshots go on meanwhile;
    /// [`LiveGraph::last_compaction`] tells how it ended.
    pub fn compact_in_background(self: &Arc<Self>, share: f64) -> bool {
        if !self.over_share(share) {
            return false;
        }
        {
            let mut c = lock(&self.compaction);
            if c.running {
                return false;
            }
            c.running = true;
        }
        let me = self.clone();
        let snap = self.snapshot();
        std::thread::spawn(move || {
            let r = me.compact_version(snap).map_err(|e| e.to_string());
            let mut c = lock(&me.compaction);
            c.running = false;
            c.last = Some(r);
        });
        true
    }

    /// How the last background compaction ended (`None` while none has).
    pub fn last_compaction(
        &self,
    ) -> Option<std::result::Result<crate::open::CompactReport, String>> {
        lock(&self.compaction).last.clone()
    }

    /// Whether a background compaction is running.
    pub fn compacting(&self) -> bool {
        lock(&self.compaction).running
    }

    /// Discards a transaction (nothing it did is visible anywhere; live ids
    /// it allocated stay unused).
    pub fn abort(&self, tx: Transaction) {
        drop(tx);
    }

    /// Commits `tx` and returns its version (the snapshot's version when it
    /// wrote nothing). Fails with [`StoreError::Conflict`] naming the first
    /// partition another commit changed after `tx`'s snapshot.
    pub fn commit(&self, tx: Transaction) -> Result<u64> {
        if tx.ops.is_empty() {
            return Ok(tx.snap.version());
        }
        if let Some(why) = lock(&self.poisoned).clone() {
            return Err(StoreError::Poisoned(why));
        }
        if self.home.as_ref().is_some_and(|h| h.read_only) {
            return Err(StoreError::ReadOnly);
        }
        let (version, next, ticket) = {
            let mut head = lock(&self.head);
            let (next, ops) = next_version(&head, tx, None)?;
            let version = next.version();
            let ticket = match &self.log {
                Some(log) => Some(log.enqueue(&Record { version, ops })?),
                None => None,
            };
            *head = next.clone();
            (version, next, ticket)
        };
        if let (Some(log), Some(t)) = (&self.log, ticket) {
            if let Err(e) = log.wait_durable(t) {
                *lock(&self.poisoned) = Some(e.to_string());
                // Under the lock that waiters check the poison under, so
                // that none misses the wake-up (compaction waits so).
                let _p = lock(&self.published);
                self.publish_cv.notify_all();
                return Err(e);
            }
        }
        // The record is durable, and so is every version before it (a
        // failed group fails every record queued behind it), so each of
        // their committers publishes: wait for them even if a later commit
        // poisoned the graph meanwhile, rather than report a durable
        // commit as failed.
        let mut p = lock(&self.published);
        while p.version() + 1 != version {
            p = self.publish_cv.wait(p).unwrap_or_else(|e| e.into_inner());
        }
        *p = next;
        self.publish_cv.notify_all();
        Ok(version)
    }

    /// Applies already-logged records (recovery: no log write, no
    /// conflict check) as one step to their last version: the versions in
    /// between are never seen, so their partitions are not copied once per
    /// record. The first record must follow the newest version and each
    /// the one before it ([`StoreError::VersionGap`] otherwise); the ops
    /// must apply as they did when committed.
    pub fn replay(&self, records: impl IntoIterator<Item = Record>) -> Result<u64> {
        let mut tx = self.begin();
        let mut last = tx.snap.version();
        for r in records {
            if r.version != last + 1 {
                return Err(StoreError::VersionGap {
                    version: r.version,
                    after: last,
                });
            }
            for op in r.ops {
                tx.apply(op)?;
            }
            last = r.version;
        }
        if last == tx.snap.version() {
            return Ok(last);
        }
        let mut head = lock(&self.head);
        let (next, _) = next_version(&head, tx, Some(last))?;
        *head = next.clone();
        *lock(&self.published) = next;
        Ok(last)
    }
}

/// The version after `head` with `tx`'s partitions installed, and `tx`'s
/// ops; or the conflict that forbids it.
fn next_version(
    head: &Snapshot,
    tx: Transaction,
    version: Option<u64>,
) -> Result<(Snapshot, Vec<crate::ops::Op>)> {
    let snap_v = tx.snap.version();
    if !Arc::ptr_eq(head.base(), tx.snap.base()) {
        return Err(StoreError::Compacted {
            version: head.base().base_version(),
            snapshot: snap_v,
        });
    }
    let mut touched: Vec<usize> = tx.dirty.keys().copied().collect();
    touched.sort_unstable();
    for &p in &touched {
        let by = head.partition_version(p);
        if by > snap_v {
            return Err(StoreError::Conflict {
                partition: p,
                first: (p * PART_SIZE) as u64,
                end: ((p + 1) * PART_SIZE) as u64,
                by,
                snapshot: snap_v,
            });
        }
    }
    let version = version.unwrap_or(head.version() + 1);
    let h = &head.v;
    let n_ids = h.n_ids.max(tx.id_end);
    let mut parts = h.parts.clone();
    if parts.len() < n_ids.div_ceil(PART_SIZE) {
        parts.resize(n_ids.div_ceil(PART_SIZE), None);
    }
    for (p, mut d) in tx.dirty {
        d.version = version;
        if parts.len() <= p {
            parts.resize(p + 1, None);
        }
        parts[p] = Some(Arc::new(d));
    }
    let next = Snapshot {
        v: Arc::new(VersionData {
            version,
            base: h.base.clone(),
            ids: h.ids.clone(),
            parts,
            n_ids,
            alive: (h.alive as i64 + tx.alive_delta) as u64,
            arcs: (h.arcs as i64 + tx.arcs_delta) as u64,
            ops_since_base: h.ops_since_base + tx.ops.len() as u64,
            materialized: Default::default(),
        }),
    };
    Ok((next, tx.ops))
}
