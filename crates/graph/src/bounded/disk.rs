//! Files written and read without keeping their pages in the page cache:
//! scratch files (sequential records) and the sections of the final file
//! (positioned writes with a running XXH3). Every [`DROP_EVERY`] bytes the
//! range behind is written back and dropped from the cache, so the cache
//! that an import leaves resident stays within a few of those windows.
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use xxhash_rust::xxh3::Xxh3;

use crate::{GraphError, Result};

/// Bytes written or read between two drops of the page cache behind.
pub(crate) const DROP_EVERY: u64 = 32 << 20;

/// Set by [`interrupt`]: bounded builds stop at their next check.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Makes every bounded build of this process fail at its next check (each
/// window of [`DROP_EVERY`] bytes, each section flush, the end of each
/// scratch file) with "interrupted", so that its temporary files are
/// removed on the way out. One atomic store: async-signal-safe.
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

#[allow(unsafe_code)]
extern "C" fn on_signal(sig: libc::c_int) {
    interrupt();
    // SAFETY: `signal` is async-signal-safe; restoring the default action
    // lets a second signal end a process blocked where no check comes
    // (a read from a silent pipe).
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}

/// Turns the first SIGINT or SIGTERM into [`interrupt`] (a bounded build
/// then cleans up and fails instead of dying with its scratch files on
/// disk); a second one ends the process as usual.
#[allow(unsafe_code)]
pub fn interrupt_on_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `on_signal` is an `extern "C"` function of the handler's
        // signature that only performs an atomic store and restores the
        // default action, both async-signal-safe; installing it touches no
        // memory of ours.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// The error of an interrupted build, if [`interrupt`] was called.
pub(crate) fn check_interrupted(path: &Path) -> Result<()> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err(GraphError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"),
        ));
    }
    Ok(())
}

/// Writes back `len` bytes of `file` from `offset` and waits for them, then
/// asks the kernel to drop them from the page cache. Best effort for the
/// drop; a failed write-back is an error (a disk full shows here or at the
/// write).
#[allow(unsafe_code)]
pub(crate) fn drop_behind(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    if len == 0 {
        return Ok(());
    }
    let fd = file.as_raw_fd();
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: `fd` is an open descriptor owned by `file`, which outlives the
    // call; sync_file_range reads no memory of ours.
    let r = unsafe { libc::sync_file_range(fd, offset as i64, len as i64, flags) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    drop_cached(file, offset, len);
    Ok(())
}

/// Asks the kernel to drop clean cached pages of `file` in `offset..+len`
/// (no effect on dirty pages; best effort).
#[allow(unsafe_code)]
pub(crate) fn drop_cached(file: &File, offset: u64, len: u64) {
    // SAFETY: as in `drop_behind`: a valid descriptor, no memory passed.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as i64,
            len as i64,
            libc::POSIX_FADV_DONTNEED,
        );
    }
}

/// A scratch file written front to back.
pub(crate) struct ScratchWriter {
    path: PathBuf,
    w: BufWriter<File>,
    written: u64,
    dropped: u64,
}

impl ScratchWriter {
    /// Creates (truncates) `path` with a write buffer of `buf` bytes.
    pub(crate) fn create(path: PathBuf, buf: usize) -> Result<Self> {
        let f = File::create(&path).map_err(|e| GraphError::io(&path, e))?;
        Ok(ScratchWriter {
            path,
            w: BufWriter::with_capacity(buf.max(4096), f),
            written: 0,
            dropped: 0,
        })
    }

    /// Appends `bytes`.
    #[inline]
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if let Err(e) = self.w.write_all(bytes) {
            return Err(GraphError::io(&self.path, e));
        }
        self.written += bytes.len() as u64;
        if self.written - self.dropped >= DROP_EVERY {
            check_interrupted(&self.path)?;
            self.w.flush().map_err(|e| GraphError::io(&self.path, e))?;
            let (from, len) = (self.dropped, self.written - self.dropped);
            drop_behind(self.w.get_ref(), from, len).map_err(|e| GraphError::io(&self.path, e))?;
            self.dropped = self.written;
        }
        Ok(())
    }

    /// Flushes, writes back and drops the cache; returns the path and length.
    pub(crate) fn finish(mut self) -> Result<(PathBuf, u64)> {
        check_interrupted(&self.path)?;
        self.w.flush().map_err(|e| GraphError::io(&self.path, e))?;
        let len = self.written - self.dropped;
        drop_behind(self.w.get_ref(), self.dropped, len)
            .map_err(|e| GraphError::io(&self.path, e))?;
        Ok((self.path, self.written))
    }
}

/// A scratch file read front to back, its pages dropped behind the reader;
/// removed when dropped.
pub(crate) struct ScratchReader {
    path: PathBuf,
    r: BufReader<File>,
    read: u64,
    dropped: u64,
    /// Remove the file when dropped.
    remove: bool,
}

impl ScratchReader {
    /// Opens `path` with a read buffer of `buf` bytes.
    pub(crate) fn open(path: PathBuf, buf: usize) -> Result<Self> {
        let f = File::open(&path).map_err(|e| GraphError::io(&path, e))?;
        Ok(ScratchReader {
            path,
            r: BufReader::with_capacity(buf.max(4096), f),
            read: 0,
            dropped: 0,
            remove: true,
        })
    }

    /// Opens `path` like [`ScratchReader::open`] but leaves the file in
    /// place when dropped (it is read again).
    pub(crate) fn open_kept(path: PathBuf, buf: usize) -> Result<Self> {
        let mut r = ScratchReader::open(path, buf)?;
        r.remove = false;
        Ok(r)
    }

    /// Fills `out` whole; `Ok(false)` at the end of the file (a partial
    /// record at the end is an error).
    #[inline]
    pub(crate) fn take(&mut self, out: &mut [u8]) -> Result<bool> {
        let mut got = 0;
        while got < out.len() {
            match self.r.read(&mut out[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => {
                    return Err(GraphError::io(
                        &self.path,
                        std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "scratch file ends inside a record",
                        ),
                    ))
                }
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(GraphError::io(&self.path, e)),
            }
        }
        self.read += out.len() as u64;
        if self.read - self.dropped >= DROP_EVERY {
            check_interrupted(&self.path)?;
            drop_cached(self.r.get_ref(), self.dropped, self.read - self.dropped);
            self.dropped = self.read;
        }
        Ok(true)
    }
}

impl Drop for ScratchReader {
    fn drop(&mut self) {
        drop_cached(self.r.get_ref(), 0, 0);
        if self.remove {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// One section of the final file, written at increasing positions from
/// `start` with its XXH3-64 computed on the way.
pub(crate) struct SectionOut<'a> {
    file: &'a File,
    path: &'a Path,
    start: u64,
    pos: u64,
    buf: Vec<u8>,
    hash: Xxh3,
    dropped: u64,
}

/// Bytes a [`SectionOut`] gathers before each positioned write.
const SECTION_BUF: usize = 1 << 20;

impl<'a> SectionOut<'a> {
    pub(crate) fn new(file: &'a File, path: &'a Path, start: u64) -> Self {
        SectionOut {
            file,
            path,
            start,
            pos: start,
            buf: Vec::with_capacity(SECTION_BUF),
            hash: Xxh3::new(),
            dropped: start,
        }
    }

    /// Appends `bytes` to the section.
    #[inline]
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= SECTION_BUF {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        check_interrupted(self.path)?;
        self.hash.update(&self.buf);
        self.file
            .write_all_at(&self.buf, self.pos)
            .map_err(|e| GraphError::io(self.path, e))?;
        self.pos += self.buf.len() as u64;
        self.buf.clear();
        if self.pos - self.dropped >= DROP_EVERY {
            drop_behind(self.file, self.dropped, self.pos - self.dropped)
                .map_err(|e| GraphError::io(self.path, e))?;
            self.dropped = self.pos;
        }
        Ok(())
    }

    /// Writes what is left; returns the section's length and checksum.
    pub(crate) fn finish(mut self) -> Result<(u64, u64)> {
        self.flush()?;
        drop_behind(self.file, self.dropped, self.pos - self.dropped)
            .map_err(|e| GraphError::io(self.path, e))?;
        Ok((self.pos - self.start, self.hash.digest()))
    }

    /// Copies the scratch file `from` (removed after) into the section.
    pub(crate) fn copy_from(&mut self, from: PathBuf) -> Result<()> {
        let mut r = ScratchReader::open(from, SECTION_BUF)?;
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            let k =
                r.r.read(&mut chunk)
                    .map_err(|e| GraphError::io(&r.path, e))?;
            if k == 0 {
                return Ok(());
            }
            r.read += k as u64;
            if r.read - r.dropped >= DROP_EVERY {
                drop_cached(r.r.get_ref(), r.dropped, r.read - r.dropped);
                r.dropped = r.read;
            }
            self.put(&chunk[..k])?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    #[test]
    fn scratch_and_section_files_read_back_what_was_written_after_the_cache_drops() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..(3 * DROP_EVERY as usize / 2 + 17))
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        let mut w = ScratchWriter::create(dir.path().join("s"), 1 << 16).unwrap();
        for c in bytes.chunks(1000) {
            w.put(c).unwrap();
        }
        let (path, len) = w.finish().unwrap();
        assert_eq!(len, bytes.len() as u64);
        let f = File::create(dir.path().join("out")).unwrap();
        let out_path = dir.path().join("out");
        let mut s = SectionOut::new(&f, &out_path, 4096);
        s.copy_from(path.clone()).unwrap();
        let (n, sum) = s.finish().unwrap();
        assert!(!path.exists(), "the scratch file is removed once read");
        assert_eq!((n, sum), (bytes.len() as u64, xxh3_64(&bytes)));
        let back = std::fs::read(&out_path).unwrap();
        assert_eq!(&back[4096..], &bytes[..]);
        assert!(back[..4096].iter().all(|&b| b == 0));
    }
}
