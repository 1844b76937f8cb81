//! One writer process per data directory.
//!
//! [`WriterLock::acquire`] takes an exclusive `flock` on `DATA/.writer.lock`
//! and writes the holder's PID into it. The kernel drops the lock when the
//! holding descriptor is closed, so it is released when the process exits
//! or dies, even by `kill -9`: a stale lock file never blocks anyone.
//! `flock` locks belong to the open file description, so a second
//! `acquire` in the same process (a second descriptor) is refused too. A
//! child forked by the holder shares the lock until it execs (std opens
//! files close-on-exec) or exits.
use crate::error::{Result, StoreError};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock file's name inside the data directory.
pub const LOCK_FILE: &str = ".writer.lock";

/// The writer lock of one data directory, held until dropped.
#[derive(Debug)]
pub struct WriterLock {
    /// Holds the `flock`; closing it (on drop) releases the lock.
    _file: File,
    path: PathBuf,
}

impl WriterLock {
    /// Takes the writer lock of `data_dir` (which must exist) without
    /// waiting. Another holder gives [`StoreError::Locked`] with its PID:
    /// "graph store is locked by PID N (DATA)".
    pub fn acquire(data_dir: &Path) -> Result<WriterLock> {
        Self::acquire_as(data_dir, "")
    }

    /// [`WriterLock::acquire`] for `plexus serve`: other writers are then
    /// told "graph store is served by PID N; use the server".
    pub fn acquire_for_server(data_dir: &Path) -> Result<WriterLock> {
        Self::acquire_as(data_dir, " serve")
    }

    /// Takes the lock, writing the PID and `tag` into the lock file.
    fn acquire_as(data_dir: &Path, tag: &str) -> Result<WriterLock> {
        let path = data_dir.join(LOCK_FILE);
        let ioerr = |e| StoreError::io(&path, e);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(ioerr)?;
        // SAFETY: `flock` takes a descriptor and flags, no pointers; the
        // descriptor is open and owned by `file`, which outlives the call.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let (pid, served) = read_holder(&mut file);
                return Err(StoreError::Locked {
                    pid,
                    dir: data_dir.to_path_buf(),
                    served,
                });
            }
            return Err(ioerr(err));
        }
        file.set_len(0).map_err(ioerr)?;
        file.seek(SeekFrom::Start(0)).map_err(ioerr)?;
        writeln!(file, "{}{tag}", std::process::id()).map_err(ioerr)?;
        Ok(WriterLock { _file: file, path })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The holder's PID as written in the lock file, and whether it is a
/// server (`PID serve`). The holder writes it just after taking the lock,
/// so a few short retries cover that window.
fn read_holder(file: &mut File) -> (Option<u32>, bool) {
    for _ in 0..20 {
        let mut text = String::new();
        let read = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_string(&mut text));
        let mut words = text.split_whitespace();
        let pid = words.next().and_then(|w| w.parse().ok());
        if let (Ok(_), Some(pid)) = (read, pid) {
            return (Some(pid), words.next() == Some("serve"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    (None, false)
}
