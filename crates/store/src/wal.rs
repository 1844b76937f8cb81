//! The write-ahead log.
//!
//! One file per graph: a 16-byte header, then one checksummed frame per
//! committed transaction ([`codec`] has the byte table). Commits are
//! *group committed*: [`Wal::enqueue`] puts a record in the queue in
//! version order (the caller holds its commit mutex), and
//! [`Wal::wait_durable`] makes the first waiter the leader, which writes
//! every queued frame in one write, calls one `fdatasync`, and wakes every
//! waiter it covered; the others wait. Concurrent committers so share one
//! fdatasync.
//!
//! ```
//! use plexus_graph::ExternalId;
//! use plexus_store::fault::FaultyFs;
//! use plexus_store::wal::{Record, Wal};
//! use plexus_store::Op;
//! use std::sync::Arc;
//!
//! let disk = FaultyFs::new(); // in memory; `Wal::open_real` for files
//! let (wal, recovery) = Wal::open("g.log", Arc::new(disk.clone()))?;
//! assert!(recovery.records.is_empty());
//! let edge = |u, v| Op::AddEdge { u: ExternalId::Int(u), v: ExternalId::Int(v), w: None };
//! let t1 = wal.enqueue(&Record { version: 1, ops: vec![edge(1, 2)] })?;
//! let t2 = wal.enqueue(&Record { version: 2, ops: vec![edge(2, 3), edge(3, 1)] })?;
//! wal.wait_durable(t1)?; // writes and syncs both records at once
//! wal.wait_durable(t2)?;
//! assert_eq!((wal.record_count(), wal.last_version()), (2, Some(2)));
//! drop(wal);
//! // After a power cut, both acknowledged records come back.
//! let (_, recovery) = Wal::open("g.log", Arc::new(disk.crash_image(1)))?;
//! assert_eq!(recovery.records.len(), 2);
//! assert_eq!(recovery.records[1].ops.len(), 2);
//! # Ok::<(), plexus_store::StoreError>(())
//! ```
//!
//! # Invariants
//! - Versions strictly increase along the file; log order = version order.
//! - A commit is acknowledged (`wait_durable` returns `Ok`) only after the
//!   fdatasync that covers its frame returned `Ok`.
//! - The bytes of the file up to `size_bytes()` are whole, good frames.
//!
//! # Failures
//! - A failed write (disk full, EIO) fails its group and everything queued
//!   behind it with [`StoreError::LogWrite`]; the file is cut back to the
//!   offset before the group and synced, so later commits append after good
//!   data. The caller must roll back those versions.
//! - A failed fdatasync, or a failed cut-back, *poisons* the log: after a
//!   failed fsync the file's state is unknown (PostgreSQL's fsync lesson),
//!   so it is never retried; every later call fails with
//!   [`StoreError::LogFailed`] until the graph is reopened, and reopening
//!   recovers from whatever is on disk.
//!
//! # What a crash leaves
//! A crash during a group write leaves a prefix of the group's bytes: whole
//! frames (not acknowledged, but harmless: they are a prefix of the
//! attempted sequence) and at most one torn frame, which [`Wal::open`]
//! drops (see [`scan`] for the exact rule). A crash during
//! [`Wal::rewrite_after`] leaves either the old or the new log, never a mix.
pub mod codec;
mod scan;

pub use codec::{decode_payload, encode_frame, DecodeError, Record};
pub use scan::Damage;

use crate::error::{Result, StoreError};
use crate::fault::{FileLayer, LogFile, RealFs};
use scan::Tail;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// What [`Wal::open`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Recovery {
    /// Every good record, in log (= version) order.
    pub records: Vec<Record>,
    /// The file's length after recovery: the byte offset after the last
    /// good record.
    pub end: u64,
    /// The torn tail that was dropped (the file was cut to `end`), if any.
    pub torn: Option<Damage>,
}

/// A place in the commit queue; redeem it with [`Wal::wait_durable`].
#[must_use = "a commit is durable only once wait_durable returns Ok"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    seq: u64,
    version: u64,
}

impl Ticket {
    /// The version of the record this ticket stands for.
    pub fn version(&self) -> u64 {
        self.version
    }
}

/// A write-ahead log open for appending. `Send + Sync`: share it by
/// reference or `Arc` between committer threads.
#[derive(Debug)]
pub struct Wal {
    path: PathBuf,
    layer: Arc<dyn FileLayer>,
    shared: Mutex<Shared>,
    /// Signalled whenever a group finishes.
    done: Condvar,
    /// The file; held by the group leader while it writes and syncs, and by
    /// `rewrite_after`. Lock order: `io` before `shared`, never the reverse.
    io: Mutex<Io>,
}

#[derive(Debug)]
struct Io {
    file: Box<dyn LogFile>,
    /// Bytes of whole, synced frames (and header): where the next group goes.
    end: u64,
    /// Set when the log is poisoned, so that a leader that took its group
    /// before the poisoning writes nothing.
    failed: Option<Arc<str>>,
}

#[derive(Debug)]
struct Shared {
    /// Encoded frames of the queued records, in ticket order.
    queue: Vec<u8>,
    /// The version of the last queued record.
    queue_last_version: Option<u64>,
    /// The ticket number the next `enqueue` hands out.
    next_seq: u64,
    /// Every ticket below this one is decided (durable or failed).
    done_seq: u64,
    /// A leader is writing a group.
    leader: bool,
    /// Decided tickets that failed; kept so that a late waiter learns it.
    /// Contiguous, increasing ranges (one per failed group, rare).
    failures: Vec<(Range<u64>, Failure)>,
    poisoned: Option<Arc<str>>,
    /// The highest version enqueued and not failed: the next must be above.
    last_assigned: Option<u64>,
    /// The highest version ever durable in this log (survives rewrites).
    high: Option<u64>,
    /// A failed group write poisons the log too (see
    /// [`Wal::poison_on_write_failure`]).
    poison_on_write: bool,
    /// The durable log's length in bytes, record count and last version.
    end: u64,
    records: u64,
    last_version: Option<u64>,
}

#[derive(Clone, Debug)]
enum Failure {
    Write(Arc<io::Error>),
    Failed(Arc<str>),
}

/// How a group write went wrong.
enum GroupError {
    /// The write failed and the file was cut back and synced.
    Write(io::Error),
    /// The file's state is unknown.
    Poison(String),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

impl Wal {
    /// Opens (creating when missing) the log at `path` on the real file
    /// system.
    pub fn open_real(path: impl Into<PathBuf>) -> Result<(Wal, Recovery)> {
        Wal::open(path, Arc::new(RealFs))
    }

    /// Opens the log at `path`, creating it (header written, file and
    /// directory synced) when missing, and reads every record. A torn tail
    /// is dropped and the file cut to the last good record (reported in
    /// [`Recovery::torn`]); a bad record with good data after it, or a
    /// version that does not increase, is [`StoreError::CorruptLog`].
    pub fn open(path: impl Into<PathBuf>, layer: Arc<dyn FileLayer>) -> Result<(Wal, Recovery)> {
        let path = path.into();
        let ioerr = |e| StoreError::io(&path, e);
        let bytes = layer.read(&path).map_err(ioerr)?;
        let scanned = scan::scan(bytes.as_deref().unwrap_or_default());
        let torn = match scanned.tail {
            Tail::Corrupt(d) => return Err(corrupt(&path, d)),
            Tail::Torn(d) => Some(d),
            Tail::Clean => None,
        };
        let mut file = layer.open_append(&path).map_err(ioerr)?;
        if scanned.needs_header {
            file.set_len(0).map_err(ioerr)?;
            file.write_all(&codec::file_header()).map_err(ioerr)?;
            file.sync_data().map_err(ioerr)?;
            layer.sync_dir(parent_dir(&path)).map_err(ioerr)?;
        } else if torn.is_some() {
            file.set_len(scanned.good_end).map_err(ioerr)?;
            file.sync_data().map_err(ioerr)?;
        }
        let end = file.len().map_err(ioerr)?;
        let records: Vec<Record> = scanned.frames.into_iter().map(|f| f.record).collect();
        let last_version = records.last().map(|r| r.version);
        let shared = Shared {
            queue: Vec::new(),
            queue_last_version: None,
            next_seq: 0,
            done_seq: 0,
            leader: false,
            failures: Vec::new(),
            poisoned: None,
            last_assigned: last_version,
            high: last_version,
            poison_on_write: false,
            end,
            records: records.len() as u64,
            last_version,
        };
        let wal = Wal {
            path,
            layer,
            shared: Mutex::new(shared),
            done: Condvar::new(),
            io: Mutex::new(Io {
                file,
                end,
                failed: None,
            }),
        };
        Ok((wal, Recovery { records, end, torn }))
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The durable log's length in bytes (header included).
    pub fn size_bytes(&self) -> u64 {
        lock(&self.shared).end
    }

    /// The number of durable records in the log file.
    pub fn record_count(&self) -> u64 {
        lock(&self.shared).records
    }

    /// The version of the last durable record in the log file (`None` when
    /// it holds none, e.g. after a rewrite that dropped every record).
    pub fn last_version(&self) -> Option<u64> {
        lock(&self.shared).last_version
    }

    /// Makes a failed group write poison the log as a failed fdatasync
    /// does, for a caller that cannot roll back the versions of a failed
    /// group: a live graph numbers each version after the one before, so
    /// a record it enqueues once a group has failed (a commit racing the
    /// failure) would follow a version the log never got, and the log
    /// would no longer replay. The failed group's commits still fail with
    /// [`StoreError::LogWrite`]; every later call fails with
    /// [`StoreError::LogFailed`] until the log is reopened.
    pub fn poison_on_write_failure(&self) {
        lock(&self.shared).poison_on_write = true;
    }

    /// Puts `record` in the commit queue and returns at once (no I/O).
    /// Call it while holding the commit mutex that orders versions: the
    /// version must be above every version enqueued before (and not
    /// failed), else [`StoreError::VersionOrder`]. Fails with
    /// [`StoreError::LogFailed`] once the log is poisoned.
    pub fn enqueue(&self, record: &Record) -> Result<Ticket> {
        let mut frame = Vec::new();
        encode_frame(record, &mut frame)?;
        let mut s = lock(&self.shared);
        if let Some(cause) = &s.poisoned {
            return Err(self.failed(cause));
        }
        if let Some(last) = s.last_assigned.filter(|&l| record.version <= l) {
            return Err(StoreError::VersionOrder {
                path: self.path.clone(),
                version: record.version,
                last,
            });
        }
        if s.queue.is_empty() {
            s.queue = frame;
        } else {
            s.queue.extend_from_slice(&frame);
        }
        s.queue_last_version = Some(record.version);
        s.last_assigned = Some(record.version);
        let seq = s.next_seq;
        s.next_seq += 1;
        Ok(Ticket {
            seq,
            version: record.version,
        })
    }

    /// Blocks until the ticket's record is durable (`Ok`) or its group
    /// failed. The first waiter with no leader at work becomes the leader
    /// and writes and syncs the whole queue.
    pub fn wait_durable(&self, ticket: Ticket) -> Result<()> {
        let mut s = lock(&self.shared);
        loop {
            if ticket.seq < s.done_seq {
                return self.outcome(&s, ticket.seq);
            }
            if let Some(cause) = &s.poisoned {
                return Err(self.failed(cause));
            }
            if ticket.seq >= s.next_seq {
                // A ticket from another log: nothing of ours to wait for.
                return Err(self.failed("a ticket this log did not hand out"));
            }
            s = if s.leader {
                self.done.wait(s).unwrap_or_else(PoisonError::into_inner)
            } else {
                self.lead(s)
            };
        }
    }

    /// [`Wal::enqueue`] then [`Wal::wait_durable`].
    pub fn append(&self, record: &Record) -> Result<()> {
        let ticket = self.enqueue(record)?;
        self.wait_durable(ticket)
    }

    fn failed(&self, cause: &str) -> StoreError {
        StoreError::LogFailed {
            path: self.path.clone(),
            cause: Arc::from(cause),
        }
    }

    /// The result for a decided ticket.
    fn outcome(&self, s: &Shared, seq: u64) -> Result<()> {
        let hit = s.failures.iter().rev().find(|(r, _)| r.contains(&seq));
        match hit {
            None => Ok(()),
            Some((_, Failure::Write(e))) => Err(StoreError::LogWrite {
                path: self.path.clone(),
                source: Arc::clone(e),
            }),
            Some((_, Failure::Failed(cause))) => Err(StoreError::LogFailed {
                path: self.path.clone(),
                cause: Arc::clone(cause),
            }),
        }
    }

    /// Leads one group: takes the queue, writes and syncs it without the
    /// shared lock, then records the outcome and wakes every waiter.
    fn lead<'a>(&'a self, mut s: MutexGuard<'a, Shared>) -> MutexGuard<'a, Shared> {
        s.leader = true;
        let bytes = std::mem::take(&mut s.queue);
        let group = s.done_seq..s.next_seq;
        let last_version = s.queue_last_version.take();
        drop(s);
        let written = {
            let mut io = lock(&self.io);
            let res = io.append_group(&bytes);
            if let Err(GroupError::Poison(cause)) = &res {
                io.failed.get_or_insert_with(|| Arc::from(cause.as_str()));
            }
            // Read the new length under the io lock so that stats and file
            // agree even if a rewrite follows at once.
            res.map(|()| io.end)
        };
        let mut s = lock(&self.shared);
        match written {
            Ok(end) => {
                s.done_seq = group.end;
                s.end = end;
                s.records += group.end - group.start;
                s.last_version = last_version;
                s.high = last_version.max(s.high);
            }
            Err(e) => {
                // The group and everything queued behind it (those commits
                // assumed the group's) fail.
                let failure = match e {
                    GroupError::Write(e) => {
                        if s.poison_on_write {
                            s.poisoned = Some(Arc::from(format!("a write failed: {e}")));
                        }
                        Failure::Write(Arc::new(e))
                    }
                    GroupError::Poison(cause) => {
                        let cause: Arc<str> = Arc::from(cause);
                        s.poisoned = Some(Arc::clone(&cause));
                        Failure::Failed(cause)
                    }
                };
                let failed = group.start..s.next_seq;
                s.failures.push((failed, failure));
                s.queue.clear();
                s.queue_last_version = None;
                s.done_seq = s.next_seq;
                s.last_assigned = s.high;
            }
        }
        s.leader = false;
        self.done.notify_all();
        s
    }

    /// Atomically replaces the log by one holding only the records with a
    /// version above `version` (for compaction once the base holds the
    /// rest): writes `PATH.tmp`, syncs it, renames it over the log and syncs
    /// the directory. Committers may enqueue and wait meanwhile; their
    /// groups go to the new file. Returns the number of records kept.
    ///
    /// A failure before the rename leaves the old log in use; a failure
    /// after it (directory sync, reopening) poisons the log.
    pub fn rewrite_after(&self, version: u64) -> Result<u64> {
        let mut io = lock(&self.io);
        if let Some(cause) = &lock(&self.shared).poisoned {
            return Err(self.failed(cause));
        }
        let ioerr = |e| StoreError::io(&self.path, e);
        let bytes = self
            .layer
            .read(&self.path)
            .map_err(ioerr)?
            .unwrap_or_default();
        let scanned = scan::scan(&bytes);
        if let Tail::Corrupt(d) | Tail::Torn(d) = scanned.tail {
            return Err(corrupt(&self.path, d));
        }
        let kept: Vec<&scan::Frame> = scanned
            .frames
            .iter()
            .filter(|f| f.record.version > version)
            .collect();
        let mut image = codec::file_header().to_vec();
        for f in &kept {
            image.extend_from_slice(&bytes[f.span.start as usize..f.span.end as usize]);
        }
        let tmp = tmp_path(&self.path);
        let tmperr = |e| StoreError::io(&tmp, e);
        let mut out = self.layer.create(&tmp).map_err(tmperr)?;
        out.write_all(&image).map_err(tmperr)?;
        out.sync_data().map_err(tmperr)?;
        drop(out);
        self.layer.rename(&tmp, &self.path).map_err(tmperr)?;
        let reopened = self
            .layer
            .sync_dir(parent_dir(&self.path))
            .map_err(|e| format!("syncing the directory after replacing the log failed: {e}"))
            .and_then(|()| {
                self.layer
                    .open_append(&self.path)
                    .map_err(|e| format!("reopening the replaced log failed: {e}"))
            });
        let mut s = lock(&self.shared);
        match reopened {
            Ok(file) => {
                io.file = file;
                io.end = image.len() as u64;
                s.end = io.end;
                s.records = kept.len() as u64;
                s.last_version = kept.last().map(|f| f.record.version);
                Ok(kept.len() as u64)
            }
            Err(cause) => {
                let err = self.failed(&cause);
                let cause: Arc<str> = Arc::from(cause);
                io.failed = Some(Arc::clone(&cause));
                s.poisoned = Some(cause);
                Err(err)
            }
        }
    }
}

impl Io {
    /// Writes `bytes` at the end in one write and syncs. On a failed write
    /// the file is cut back to where the group started and synced; if that
    /// fails too, or the sync fails, the state is unknown (`Poison`).
    fn append_group(&mut self, bytes: &[u8]) -> std::result::Result<(), GroupError> {
        if let Some(cause) = &self.failed {
            return Err(GroupError::Poison(cause.to_string()));
        }
        let start = self.end;
        if let Err(e) = self.file.write_all(bytes) {
            let cut = self
                .file
                .set_len(start)
                .and_then(|()| self.file.sync_data());
            return Err(match cut {
                Ok(()) => GroupError::Write(e),
                Err(e2) => GroupError::Poison(format!(
                    "writing {} bytes at byte {start} failed: {e}; cutting the log back to byte {start} failed: {e2}",
                    bytes.len()
                )),
            });
        }
        if let Err(e) = self.file.sync_data() {
            return Err(GroupError::Poison(format!("fdatasync failed: {e}")));
        }
        self.end = start + bytes.len() as u64;
        Ok(())
    }
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

fn corrupt(path: &Path, d: Damage) -> StoreError {
    StoreError::CorruptLog {
        path: path.to_path_buf(),
        offset: d.offset,
        reason: d.reason,
    }
}

/// What [`inspect`] found in a log file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogReport {
    /// Good records before any damage.
    pub records: u64,
    pub first_version: Option<u64>,
    pub last_version: Option<u64>,
    /// The file's length in bytes.
    pub bytes: u64,
    /// The offset just after the last good record.
    pub good_bytes: u64,
    /// A torn tail that opening would drop.
    pub torn: Option<Damage>,
    /// Corruption that makes opening refuse (repair truncates there).
    pub corrupt: Option<Damage>,
}

/// What [`repair`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairReport {
    pub kept_records: u64,
    /// The file's length after the repair.
    pub kept_bytes: u64,
    /// Bytes cut off (0 when the log was whole).
    pub dropped_bytes: u64,
    /// Where the cut was made, when one was.
    pub dropped_from_offset: Option<u64>,
}

/// Reads the records of the log at `path` without changing the file (a
/// reader beside the writer): a missing file holds none; a torn tail is
/// left out (it may be a write in progress); corruption is refused as by
/// [`Wal::open`].
pub fn read_records(path: &Path) -> Result<Vec<Record>> {
    let bytes = RealFs.read(path).map_err(|e| StoreError::io(path, e))?;
    let Some(bytes) = bytes else {
        return Ok(Vec::new());
    };
    let scanned = scan::scan(&bytes);
    if let Tail::Corrupt(d) = scanned.tail {
        return Err(corrupt(path, d));
    }
    Ok(scanned.frames.into_iter().map(|f| f.record).collect())
}

/// Reports on a log image in memory. Never fails and never panics.
pub fn inspect_bytes(bytes: &[u8]) -> LogReport {
    let scanned = scan::scan(bytes);
    let (torn, corrupt) = match scanned.tail {
        Tail::Clean => (None, None),
        Tail::Torn(d) => (Some(d), None),
        Tail::Corrupt(d) => (None, Some(d)),
    };
    LogReport {
        records: scanned.frames.len() as u64,
        first_version: scanned.frames.first().map(|f| f.record.version),
        last_version: scanned.frames.last().map(|f| f.record.version),
        bytes: bytes.len() as u64,
        good_bytes: scanned.good_end,
        torn,
        corrupt,
    }
}

/// Reports on the log at `path` (for `plexus log GRAPH`): fails only when
/// the file cannot be read; damage is reported, not refused.
pub fn inspect(path: &Path) -> Result<LogReport> {
    inspect_with(&RealFs, path)
}

/// [`inspect`] through a file layer.
pub fn inspect_with(layer: &dyn FileLayer, path: &Path) -> Result<LogReport> {
    let bytes = layer.read(path).map_err(|e| StoreError::io(path, e))?;
    let bytes =
        bytes.ok_or_else(|| StoreError::io(path, io::Error::from(io::ErrorKind::NotFound)))?;
    Ok(inspect_bytes(&bytes))
}

/// Truncates the log at `path` after its last good record (torn or
/// corrupt tail alike) and syncs it. Run it with the writer lock held and
/// after telling the user what [`inspect`] says will be lost. Refuses
/// (`CorruptLog`) a file that is not a Plexus log or of another format.
pub fn repair(path: &Path) -> Result<RepairReport> {
    repair_with(&RealFs, path)
}

/// [`repair`] through a file layer.
pub fn repair_with(layer: &dyn FileLayer, path: &Path) -> Result<RepairReport> {
    let ioerr = |e| StoreError::io(path, e);
    let bytes = layer.read(path).map_err(ioerr)?;
    let bytes = bytes.ok_or_else(|| ioerr(io::Error::from(io::ErrorKind::NotFound)))?;
    let scanned = scan::scan(&bytes);
    let damage = match scanned.tail {
        Tail::Clean => None,
        Tail::Torn(d) => Some(d),
        Tail::Corrupt(d) if d.offset < codec::HEADER_LEN => return Err(corrupt(path, d)),
        Tail::Corrupt(d) => Some(d),
    };
    let mut kept_bytes = bytes.len() as u64;
    if let Some(d) = &damage {
        let mut file = layer.open_append(path).map_err(ioerr)?;
        if scanned.needs_header {
            file.set_len(0).map_err(ioerr)?;
            file.write_all(&codec::file_header()).map_err(ioerr)?;
        } else {
            file.set_len(d.offset).map_err(ioerr)?;
        }
        file.sync_data().map_err(ioerr)?;
        kept_bytes = file.len().map_err(ioerr)?;
    }
    Ok(RepairReport {
        kept_records: scanned.frames.len() as u64,
        kept_bytes,
        dropped_bytes: damage.as_ref().map_or(0, |d| d.bytes),
        dropped_from_offset: damage.map(|d| d.offset),
    })
}
