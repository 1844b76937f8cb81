//! The file layer of the log (a real file, or one that fails or stops at a chosen write or sync, for crash tests).
//!
//! The log touches files only through [`FileLayer`] and [`LogFile`], so the
//! same code runs on [`RealFs`] (`std::fs`, `sync_data` = `fdatasync`) and on
//! [`FaultyFs`], an in-memory disk that counts every write, sync, truncation
//! and rename and, at a chosen op, fails it with an errno or stops the
//! machine. Thousands of crash points run in a second.
//!
//! # The disk model of `FaultyFs`
//! Each file has *durable* bytes (what survives a crash) and the *pending*
//! changes since its last `sync_data` (appends and truncations, in order);
//! reads see both. The directory likewise has a durable name table and the
//! creations and renames since its last `sync_dir`. A crash image
//! ([`FaultyFs::crash_image`]) keeps the durable state plus a random prefix of
//! each pending list, the last kept append possibly cut short: the outcome of
//! a power cut in the middle of writeback.
use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Files as the log needs them.
pub trait FileLayer: Send + Sync + fmt::Debug {
    /// The whole content of `path`, or `None` when there is no such file.
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;
    /// Opens `path` for appending, creating it empty when missing (the
    /// creation is durable only after [`FileLayer::sync_dir`]).
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>>;
    /// Opens `path` for appending, emptied (created when missing).
    fn create(&self, path: &Path) -> io::Result<Box<dyn LogFile>>;
    /// Renames `from` to `to`, replacing `to` atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes the creations and renames in `dir` durable (`fsync` on the
    /// directory).
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// One file open for appending.
pub trait LogFile: Send + fmt::Debug {
    /// Appends all of `buf` at the end of the file. On error a prefix of
    /// `buf` may have been written.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
    /// Makes the file's bytes and length durable (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Cuts or extends the file to `len` bytes.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// The file's length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Whether the file holds no bytes.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFs;

#[derive(Debug)]
struct RealFile(File);

impl FileLayer for RealFs {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        match File::open(path) {
            Ok(mut f) => {
                let mut buf = Vec::new();
                f.read_to_end(&mut buf)?;
                Ok(Some(buf))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let f = OpenOptions::new().append(true).create(true).open(path)?;
        Ok(Box::new(RealFile(f)))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let f = OpenOptions::new().append(true).create(true).open(path)?;
        f.set_len(0)?;
        Ok(Box::new(RealFile(f)))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

impl LogFile for RealFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
}

/// What happens at the chosen op of a [`FaultyFs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The op fails with `errno` (e.g. `libc::ENOSPC`, `libc::EIO`); a write
    /// first stores the first `keep` bytes of its buffer (a short write).
    /// Later ops run normally.
    Fail { errno: i32, keep: usize },
    /// The machine stops during the op: a write stores the first `keep`
    /// bytes of its buffer (not durably), then this op and every later one
    /// fail with `EIO`. Take [`FaultyFs::crash_image`] to "reboot".
    Stop { keep: usize },
}

/// A fault at op number `at_op` (1-based, counting every write, sync,
/// truncation and rename since the `FaultyFs` was made).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub at_op: u64,
    pub kind: FaultKind,
}

/// An in-memory disk that fails or stops at a chosen op (see the module
/// docs for its model). Clones share the disk.
#[derive(Clone, Debug, Default)]
pub struct FaultyFs {
    disk: Arc<Mutex<Disk>>,
}

#[derive(Debug, Default)]
struct Disk {
    names: HashMap<PathBuf, usize>,
    durable_names: HashMap<PathBuf, usize>,
    /// Creations and renames since the last `sync_dir`, in order.
    dir_pending: Vec<DirOp>,
    inodes: Vec<Inode>,
    ops: u64,
    fault: Option<Fault>,
    crashed: bool,
    /// The most bytes all files together may hold; writes past it fail
    /// with `ENOSPC` after storing what fits.
    capacity: Option<u64>,
}

#[derive(Clone, Debug)]
enum DirOp {
    Link(PathBuf, usize),
    Rename(PathBuf, PathBuf),
}

#[derive(Clone, Debug, Default)]
struct Inode {
    content: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Pending>,
}

#[derive(Clone, Debug)]
enum Pending {
    Append(Vec<u8>),
    SetLen(u64),
}

/// What the op counter says about the op now starting.
enum Verdict {
    Run,
    Fail(i32, usize),
    Stop(usize),
}

fn crashed_error() -> io::Error {
    io::Error::other("the simulated machine has stopped (Input/output error)")
}

impl Disk {
    fn tick(&mut self) -> io::Result<Verdict> {
        if self.crashed {
            return Err(crashed_error());
        }
        self.ops += 1;
        match self.fault {
            Some(f) if f.at_op == self.ops => {
                self.fault = None;
                Ok(match f.kind {
                    FaultKind::Fail { errno, keep } => Verdict::Fail(errno, keep),
                    FaultKind::Stop { keep } => Verdict::Stop(keep),
                })
            }
            _ => Ok(Verdict::Run),
        }
    }

    fn alive(&self) -> io::Result<()> {
        if self.crashed {
            Err(crashed_error())
        } else {
            Ok(())
        }
    }

    fn used(&self) -> u64 {
        self.inodes.iter().map(|i| i.content.len() as u64).sum()
    }

    fn link_new(&mut self, path: &Path) -> usize {
        self.inodes.push(Inode::default());
        let ino = self.inodes.len() - 1;
        self.names.insert(path.to_path_buf(), ino);
        self.dir_pending.push(DirOp::Link(path.to_path_buf(), ino));
        ino
    }

    fn append(&mut self, ino: usize, buf: &[u8]) {
        if let Some(inode) = self.inodes.get_mut(ino) {
            inode.content.extend_from_slice(buf);
            inode.pending.push(Pending::Append(buf.to_vec()));
        }
    }

    fn write(&mut self, ino: usize, buf: &[u8]) -> io::Result<()> {
        match self.tick()? {
            Verdict::Run => {
                let room = self
                    .capacity
                    .map_or(u64::MAX, |c| c.saturating_sub(self.used()));
                if (buf.len() as u64) > room {
                    self.append(ino, &buf[..room as usize]);
                    return Err(io::Error::from_raw_os_error(libc::ENOSPC));
                }
                self.append(ino, buf);
                Ok(())
            }
            Verdict::Fail(errno, keep) => {
                self.append(ino, &buf[..keep.min(buf.len())]);
                Err(io::Error::from_raw_os_error(errno))
            }
            Verdict::Stop(keep) => {
                self.append(ino, &buf[..keep.min(buf.len())]);
                self.crashed = true;
                Err(crashed_error())
            }
        }
    }

    /// Runs a non-write op: `apply` when it runs, nothing when it fails or
    /// stops.
    fn simple_op(&mut self, apply: impl FnOnce(&mut Disk)) -> io::Result<()> {
        match self.tick()? {
            Verdict::Run => {
                apply(self);
                Ok(())
            }
            Verdict::Fail(errno, _) => Err(io::Error::from_raw_os_error(errno)),
            Verdict::Stop(_) => {
                self.crashed = true;
                Err(crashed_error())
            }
        }
    }
}

impl Inode {
    /// The durable bytes plus the first `ops` pending changes, the last of
    /// them (when an append) cut to `cut` bytes.
    fn image(&self, ops: usize, cut: Option<usize>) -> Vec<u8> {
        let mut bytes = self.durable.clone();
        for (i, p) in self.pending.iter().take(ops).enumerate() {
            apply_pending(&mut bytes, p, if i + 1 == ops { cut } else { None });
        }
        bytes
    }
}

fn apply_pending(bytes: &mut Vec<u8>, p: &Pending, cut: Option<usize>) {
    match p {
        Pending::Append(b) => bytes.extend_from_slice(&b[..cut.unwrap_or(b.len()).min(b.len())]),
        Pending::SetLen(len) => bytes.resize(*len as usize, 0),
    }
}

fn apply_dir(names: &mut HashMap<PathBuf, usize>, op: &DirOp) {
    match op {
        DirOp::Link(p, ino) => {
            names.insert(p.clone(), *ino);
        }
        DirOp::Rename(from, to) => {
            if let Some(ino) = names.remove(from) {
                names.insert(to.clone(), ino);
            }
        }
    }
}

/// A small deterministic generator (SplitMix64) for crash images.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..=n` (n small).
    fn upto(&mut self, n: usize) -> usize {
        (self.next() % (n as u64 + 1)) as usize
    }
}

impl FaultyFs {
    /// An empty disk with no fault planned.
    pub fn new() -> Self {
        Self::default()
    }

    fn disk(&self) -> MutexGuard<'_, Disk> {
        self.disk.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Plans `fault` (replacing any planned one).
    pub fn inject(&self, fault: Fault) {
        self.disk().fault = Some(fault);
    }

    /// The number of counted ops (writes, syncs, truncations, renames) so far.
    pub fn ops(&self) -> u64 {
        self.disk().ops
    }

    /// Whether a [`FaultKind::Stop`] has happened.
    pub fn is_crashed(&self) -> bool {
        self.disk().crashed
    }

    /// Limits all files together to `bytes` (`None`: unlimited).
    pub fn set_capacity(&self, bytes: Option<u64>) {
        self.disk().capacity = bytes;
    }

    /// The bytes all files hold now.
    pub fn used_bytes(&self) -> u64 {
        self.disk().used()
    }

    /// Replaces the content of `path` (creating it), durably: for tests
    /// that plant damaged files.
    pub fn put(&self, path: &Path, bytes: &[u8]) {
        let mut d = self.disk();
        let ino = match d.names.get(path) {
            Some(&ino) => ino,
            None => d.link_new(path),
        };
        d.durable_names = d.names.clone();
        d.dir_pending.clear();
        if let Some(inode) = d.inodes.get_mut(ino) {
            inode.content = bytes.to_vec();
            inode.durable = bytes.to_vec();
            inode.pending.clear();
        }
    }

    /// The disk after a power cut now: durable state plus a random prefix
    /// (chosen by `seed`) of each file's and the directory's pending
    /// changes. The image has no fault planned and its op count is 0.
    pub fn crash_image(&self, seed: u64) -> FaultyFs {
        let d = self.disk();
        let mut rng = SplitMix(seed);
        let mut names = d.durable_names.clone();
        let keep = rng.upto(d.dir_pending.len());
        for op in &d.dir_pending[..keep] {
            apply_dir(&mut names, op);
        }
        let inodes = d
            .inodes
            .iter()
            .map(|inode| {
                let ops = rng.upto(inode.pending.len());
                let cut = match ops.checked_sub(1).map(|i| &inode.pending[i]) {
                    Some(Pending::Append(b)) => Some(rng.upto(b.len())),
                    _ => None,
                };
                let bytes = inode.image(ops, cut);
                Inode {
                    content: bytes.clone(),
                    durable: bytes,
                    pending: Vec::new(),
                }
            })
            .collect();
        FaultyFs {
            disk: Arc::new(Mutex::new(Disk {
                durable_names: names.clone(),
                names,
                inodes,
                ..Disk::default()
            })),
        }
    }
}

#[derive(Debug)]
struct FaultyFile {
    disk: Arc<Mutex<Disk>>,
    ino: usize,
}

impl FaultyFile {
    fn disk(&self) -> MutexGuard<'_, Disk> {
        self.disk.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl FileLayer for FaultyFs {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        let d = self.disk();
        d.alive()?;
        Ok(d.names
            .get(path)
            .and_then(|&ino| d.inodes.get(ino))
            .map(|i| i.content.clone()))
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let mut d = self.disk();
        d.alive()?;
        let ino = match d.names.get(path) {
            Some(&ino) => ino,
            None => d.link_new(path),
        };
        Ok(Box::new(FaultyFile {
            disk: Arc::clone(&self.disk),
            ino,
        }))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let file = self.open_append(path)?;
        let mut d = self.disk();
        let ino = d.names.get(path).copied().unwrap_or_default();
        if let Some(inode) = d.inodes.get_mut(ino) {
            if !inode.content.is_empty() {
                inode.content.clear();
                inode.pending.push(Pending::SetLen(0));
            }
        }
        Ok(file)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut d = self.disk();
        if !d.names.contains_key(from) {
            d.alive()?;
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        }
        d.simple_op(|d| {
            let op = DirOp::Rename(from.to_path_buf(), to.to_path_buf());
            apply_dir(&mut d.names, &op);
            d.dir_pending.push(op);
        })
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        // One flat namespace: syncing any directory makes every pending
        // creation and rename durable.
        self.disk().simple_op(|d| {
            d.durable_names = d.names.clone();
            d.dir_pending.clear();
        })
    }
}

impl LogFile for FaultyFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let ino = self.ino;
        self.disk().write(ino, buf)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        let ino = self.ino;
        self.disk().simple_op(|d| {
            if let Some(inode) = d.inodes.get_mut(ino) {
                for p in std::mem::take(&mut inode.pending) {
                    apply_pending(&mut inode.durable, &p, None);
                }
            }
        })
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let ino = self.ino;
        self.disk().simple_op(|d| {
            if let Some(inode) = d.inodes.get_mut(ino) {
                inode.content.resize(len as usize, 0);
                inode.pending.push(Pending::SetLen(len));
            }
        })
    }

    fn len(&self) -> io::Result<u64> {
        let d = self.disk();
        d.alive()?;
        Ok(d.inodes.get(self.ino).map_or(0, |i| i.content.len() as u64))
    }
}
