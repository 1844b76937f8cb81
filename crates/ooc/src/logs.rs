//! Per-interval message logs (PartitionedVC §3.2–3.3).
//!
//! A sparse superstep appends each message `(v, m)` to the buffer of `v`'s
//! interval. A full buffer is first combined in place (sorted by
//! destination, messages to one vertex merged with the program's
//! `combine`: slots are order-insensitive, law 3); if it is still more
//! than half full it is appended to the interval's log file. When every
//! source has been read, each interval's log is read back (in buffer-sized
//! pieces) and its messages applied, then the file is emptied.
//!
//! Log files live in one directory per executor, `.ooc-PID-SEQ` beside the
//! graph's directory, removed when the executor is dropped; a directory
//! left by a process that has ended is removed by the next executor made in
//! the same place ([`remove_stale`]).
//!
//! Messages are written as their in-memory bytes and read back into the
//! same type in the same process: a move through the file. Only message
//! types without drop glue are written (a type that owns heap memory, such
//! as CDLP's histograms, stays in memory, combined, since writing it would
//! not free its heap part anyway).
use std::fs::{File, OpenOptions};
use std::mem::{needs_drop, size_of, MaybeUninit};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use plexus_engine::program::VertexProgram;
use plexus_graph::VertexId;

use crate::error::{OocError, Result};
use crate::file::advise;

/// The executor's temporary directory; removed on drop.
#[derive(Debug)]
pub(crate) struct LogDir {
    path: PathBuf,
}

/// Numbers the directories of one process.
static SEQ: AtomicU64 = AtomicU64::new(0);

impl LogDir {
    /// Creates `.ooc-PID-SEQ` in `parent` (after removing stale ones).
    pub fn create(parent: &Path) -> Result<Self> {
        remove_stale(parent);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!(".ooc-{}-{seq}", std::process::id()));
        std::fs::create_dir_all(&path).map_err(|e| OocError::io(&path, e))?;
        Ok(LogDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LogDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes `.ooc-PID-*` directories in `parent` whose process has ended.
pub fn remove_stale(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|s| s.strip_prefix(".ooc-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Counters of the logs.
#[derive(Debug, Default)]
pub struct LogCounters {
    /// Bytes appended to log files.
    pub written: AtomicU64,
    /// Bytes read back from log files.
    pub read: AtomicU64,
    /// Messages merged into another before reaching a slot.
    pub combined: AtomicU64,
}

/// The logs of one sparse superstep.
pub(crate) struct Logs<'a, P: VertexProgram> {
    p: &'a P,
    dir: &'a LogDir,
    counters: &'a LogCounters,
    bufs: Vec<Vec<(VertexId, P::Msg)>>,
    files: Vec<Option<File>>,
    /// Entries in each interval's file.
    spilled: Vec<u64>,
    /// Bytes of each file synced and dropped from the page cache.
    synced: Vec<u64>,
    /// Bytes written since the last sync (dirty in the page cache).
    dirty: u64,
    /// Most dirty bytes allowed before every file is synced and dropped.
    dirty_limit: u64,
    cap: usize,
}

impl<'a, P: VertexProgram> Logs<'a, P> {
    /// Logs for `k` intervals with `buf_bytes` of buffer each, keeping at
    /// most `dirty_limit` written bytes in the page cache.
    pub fn new(
        p: &'a P,
        dir: &'a LogDir,
        counters: &'a LogCounters,
        k: usize,
        buf_bytes: u64,
        dirty_limit: u64,
    ) -> Self {
        let cap = (buf_bytes as usize / size_of::<(VertexId, P::Msg)>().max(1)).max(8);
        Logs {
            p,
            dir,
            counters,
            bufs: (0..k).map(|_| Vec::new()).collect(),
            files: (0..k).map(|_| None).collect(),
            spilled: vec![0; k],
            synced: vec![0; k],
            dirty: 0,
            dirty_limit,
            cap,
        }
    }

    /// Appends message `m` for `v` to interval `i`'s log.
    pub fn push(&mut self, i: usize, v: VertexId, m: P::Msg) -> Result<()> {
        let buf = &mut self.bufs[i];
        if buf.capacity() == 0 {
            buf.reserve_exact(self.cap);
        }
        buf.push((v, m));
        if buf.len() >= self.cap {
            let before = buf.len();
            combine_in_place(self.p, buf);
            self.counters
                .combined
                .fetch_add((before - buf.len()) as u64, Ordering::Relaxed);
            if buf.len() > self.cap / 2 && !needs_drop::<P::Msg>() {
                self.spill(i)?;
            }
        }
        Ok(())
    }

    /// Writes interval `i`'s buffer to its file and empties the buffer.
    fn spill(&mut self, i: usize) -> Result<()> {
        if self.files[i].is_none() {
            let path = self.dir.path().join(format!("{i}.log"));
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .map_err(|e| OocError::io(&path, e))?;
            self.files[i] = Some(f);
        }
        let (Some(f), buf) = (&self.files[i], &mut self.bufs[i]) else {
            return Ok(());
        };
        let at = self.spilled[i] * size_of::<(VertexId, P::Msg)>() as u64;
        let bytes = write_entries(f, at, buf).map_err(|e| OocError::io(self.log_path(i), e))?;
        self.spilled[i] += bytes / size_of::<(VertexId, P::Msg)>() as u64;
        self.counters.written.fetch_add(bytes, Ordering::Relaxed);
        self.dirty += bytes;
        if self.dirty > self.dirty_limit {
            self.clean()?;
        }
        Ok(())
    }

    /// Writes every file's new bytes to disk and drops them from the page
    /// cache, so that logs never hold more than `dirty_limit` of memory.
    fn clean(&mut self) -> Result<()> {
        let entry = size_of::<(VertexId, P::Msg)>() as u64;
        for i in 0..self.files.len() {
            let end = self.spilled[i] * entry;
            let Some(f) = &self.files[i] else { continue };
            if end > self.synced[i] {
                f.sync_data()
                    .map_err(|e| OocError::io(self.log_path(i), e))?;
                let _ = advise(
                    f,
                    self.synced[i],
                    end - self.synced[i],
                    libc::POSIX_FADV_DONTNEED,
                );
                self.synced[i] = end;
            }
        }
        self.dirty = 0;
        Ok(())
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("{i}.log"))
    }

    /// Hands every message of interval `i` to `f` (the file's in pieces of
    /// one buffer, then the buffer's), and empties the log.
    pub fn drain(&mut self, i: usize, f: &mut dyn FnMut(VertexId, P::Msg)) -> Result<()> {
        let mut buf = std::mem::take(&mut self.bufs[i]);
        combine_in_place(self.p, &mut buf);
        if let Some(file) = self.files[i].take() {
            let entry = size_of::<(VertexId, P::Msg)>() as u64;
            let mut piece: Vec<(VertexId, P::Msg)> = Vec::with_capacity(self.cap);
            let mut done = 0u64;
            while done < self.spilled[i] {
                let count = (self.spilled[i] - done).min(self.cap as u64) as usize;
                read_entries(&file, done * entry, count, &mut piece)
                    .map_err(|e| OocError::io(self.log_path(i), e))?;
                let _ = advise(
                    &file,
                    done * entry,
                    count as u64 * entry,
                    libc::POSIX_FADV_DONTNEED,
                );
                self.counters
                    .read
                    .fetch_add(count as u64 * entry, Ordering::Relaxed);
                for (v, m) in piece.drain(..) {
                    f(v, m);
                }
                done += count as u64;
            }
            self.spilled[i] = 0;
            self.synced[i] = 0;
            file.set_len(0)
                .map_err(|e| OocError::io(self.log_path(i), e))?;
        }
        for (v, m) in buf {
            f(v, m);
        }
        Ok(())
    }
}

/// Sorts `buf` by destination and merges each destination's messages into
/// one with `p.combine`.
fn combine_in_place<P: VertexProgram>(p: &P, buf: &mut Vec<(VertexId, P::Msg)>) {
    buf.sort_unstable_by_key(|e| e.0);
    let mut out: Vec<(VertexId, P::Msg)> = Vec::with_capacity(buf.capacity());
    for (v, m) in buf.drain(..) {
        match out.pop() {
            Some((u, a)) if u == v => out.push((v, p.combine(a, m))),
            Some(prev) => {
                out.push(prev);
                out.push((v, m));
            }
            None => out.push((v, m)),
        }
    }
    *buf = out;
}

/// Appends the entries of `buf` to `file` at byte `at` as their in-memory
/// bytes and empties `buf` (the values move into the file); returns the
/// bytes written.
#[allow(unsafe_code)]
fn write_entries<T: Send>(file: &File, at: u64, buf: &mut Vec<T>) -> std::io::Result<u64> {
    debug_assert!(!needs_drop::<T>());
    let total = buf.len() * size_of::<T>();
    let base = buf.as_ptr().cast::<u8>();
    let mut done = 0usize;
    while done < total {
        let off = libc::off_t::try_from(at + done as u64)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: `base + done .. base + total` lies inside `buf`'s
        // initialised elements, which stay borrowed (not moved or freed)
        // for the call. The kernel copies the bytes, padding included,
        // without any Rust reference to them being made; nothing here
        // reads padding as a value.
        let rc = unsafe {
            libc::pwrite(
                file.as_raw_fd(),
                base.add(done).cast::<libc::c_void>(),
                total - done,
                off,
            )
        };
        match rc {
            n if n > 0 => done += n as usize,
            0 => return Err(std::io::Error::from(std::io::ErrorKind::WriteZero)),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    // The values now live in the file; `T` has no drop glue, so forgetting
    // the copies in memory frees nothing twice and leaks nothing.
    buf.clear();
    Ok(total as u64)
}

/// Reads `count` entries written by [`write_entries`] at byte `at` into
/// `out` (emptied first).
#[allow(unsafe_code)]
fn read_entries<T: Send>(
    file: &File,
    at: u64,
    count: usize,
    out: &mut Vec<T>,
) -> std::io::Result<()> {
    out.clear();
    out.reserve(count);
    let total = count * size_of::<T>();
    let spare: &mut [MaybeUninit<T>] = &mut out.spare_capacity_mut()[..count];
    let base = spare.as_mut_ptr().cast::<u8>();
    let mut done = 0usize;
    while done < total {
        let off = libc::off_t::try_from(at + done as u64)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: `base + done .. base + total` lies inside the spare
        // capacity reserved above (`count` elements), which the kernel
        // fills with bytes; no reference to it is alive meanwhile.
        let rc = unsafe {
            libc::pread(
                file.as_raw_fd(),
                base.add(done).cast::<libc::c_void>(),
                total - done,
                off,
            )
        };
        match rc {
            n if n > 0 => done += n as usize,
            0 => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    // SAFETY: the `count` elements now hold exactly the bytes of `count`
    // valid values of `T` that this process wrote with `write_entries`
    // (the log file is private to the executor: created, written and read
    // by it within one superstep, in its own directory), and each value is
    // read back once, completing its move through the file.
    unsafe { out.set_len(count) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_engine::program::InEdges;

    /// A program whose message has padding: `(u8, f64)` pairs summed.
    struct Padded;
    impl VertexProgram for Padded {
        type Msg = (u8, f64);
        fn combine(&self, a: (u8, f64), b: (u8, f64)) -> (u8, f64) {
            (a.0.max(b.0), a.1 + b.1)
        }
        fn sparse_signal(&self, _: VertexId) -> Option<(u8, f64)> {
            None
        }
        fn sparse_slot(&self, _: VertexId, _: (u8, f64)) -> bool {
            false
        }
        fn dense_signal(&self, _: VertexId, _: InEdges<'_>) -> Option<(u8, f64)> {
            None
        }
        fn dense_slot(&self, _: VertexId, _: (u8, f64)) -> bool {
            false
        }
    }

    /// A program whose message owns heap memory.
    struct Owned;
    impl VertexProgram for Owned {
        type Msg = Vec<u32>;
        fn combine(&self, mut a: Vec<u32>, b: Vec<u32>) -> Vec<u32> {
            a.extend(b);
            a
        }
        fn sparse_signal(&self, _: VertexId) -> Option<Vec<u32>> {
            None
        }
        fn sparse_slot(&self, _: VertexId, _: Vec<u32>) -> bool {
            false
        }
        fn dense_signal(&self, _: VertexId, _: InEdges<'_>) -> Option<Vec<u32>> {
            None
        }
        fn dense_slot(&self, _: VertexId, _: Vec<u32>) -> bool {
            false
        }
    }

    #[test]
    fn padded_messages_move_through_the_file_and_come_back_combined() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = LogDir::create(tmp.path()).unwrap();
        let counters = LogCounters::default();
        let mut logs = Logs::new(&Padded, &dir, &counters, 3, 256, 1024);
        let mut want = [0.0f64; 100];
        for i in 0..5000u32 {
            let v = (i * 7919) % 100;
            let m = ((i % 200) as u8, f64::from(i));
            want[v as usize] += m.1;
            logs.push(v as usize % 3, v, m).unwrap();
        }
        assert!(
            counters.written.load(Ordering::Relaxed) > 0,
            "nothing spilled"
        );
        let mut got = [0.0f64; 100];
        for i in 0..3 {
            logs.drain(i, &mut |v, m| got[v as usize] += m.1).unwrap();
        }
        assert_eq!(got, want);
        assert_eq!(
            counters.written.load(Ordering::Relaxed),
            counters.read.load(Ordering::Relaxed)
        );
    }

    #[test]
    fn owning_messages_stay_in_memory_and_arrive_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = LogDir::create(tmp.path()).unwrap();
        let counters = LogCounters::default();
        let mut logs = Logs::new(&Owned, &dir, &counters, 2, 64, 1024);
        for i in 0..1000u32 {
            logs.push((i % 2) as usize, i % 10, vec![i]).unwrap();
        }
        assert_eq!(counters.written.load(Ordering::Relaxed), 0);
        let mut seen = vec![];
        for i in 0..2 {
            logs.drain(i, &mut |_, m| seen.extend(m)).unwrap();
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<u32>>());
    }

    #[test]
    fn a_directory_left_by_an_ended_process_is_removed_by_the_next_one() {
        let tmp = tempfile::tempdir().unwrap();
        // PID 0 is never a user process; u32::MAX - 1 is above pid_max.
        let stale = tmp.path().join(format!(".ooc-{}-0", u32::MAX - 1));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("0.log"), b"x").unwrap();
        let dir = LogDir::create(tmp.path()).unwrap();
        assert!(!stale.exists());
        let mine = dir.path().to_path_buf();
        assert!(mine.exists());
        drop(dir);
        assert!(!mine.exists());
    }
}
