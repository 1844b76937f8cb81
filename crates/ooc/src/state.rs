//! File-backed per-vertex state: the executor's
//! [`Backing`] for drivers' arrays
//! (PartitionedVC keeps vertex values on disk per interval).
//!
//! Each array is a temporary file in the executor's log directory, mapped
//! shared and read-write, and unlinked as soon as it is mapped: the file
//! lives only as long as the mapping (and this process), so it is removed
//! on every exit, a crash included. Its pages are charged to the memory
//! cgroup like any page cache, and the kernel writes dirty ones back and
//! reclaims them when the cap needs room; [`StateFiles::write_back`],
//! called after every superstep, starts that writeback early so that the
//! pages a step dirtied are clean (reclaimable without waiting) before the
//! next step needs room.
//!
//! The budget counts a resident window of each array, not `n` values: the
//! executor touches a driver's state interval by interval (sparse slots are
//! applied from one interval's log at a time, dense steps and signals go
//! in ascending vertex order), so only the pages of the intervals at hand
//! need to be resident ([`crate::plan`]). An array read in random order
//! (PageRank's contributions) would need all its pages; such arrays stay on
//! the heap and are counted whole.
use std::fs::{File, OpenOptions};
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use memmap2::{MmapMut, MmapOptions};
use plexus_engine::vertex_array::{Backing, Region};

use crate::file::PAGE;

/// Bytes of each file-backed array the plan counts as resident (a few
/// intervals' pages and the fault-around beside them).
pub const STATE_WINDOW: u64 = 4 << 20;

/// The executor's backing: temporary mapped files in one directory.
#[derive(Debug)]
pub struct StateFiles {
    dir: PathBuf,
    seq: AtomicU64,
    /// The files of the arrays alive (for [`StateFiles::write_back`]).
    live: Mutex<Vec<Weak<File>>>,
    /// Bytes of the arrays made so far.
    made: AtomicU64,
}

impl StateFiles {
    /// A backing making its files in `dir` (which must exist).
    pub fn new(dir: PathBuf) -> Self {
        StateFiles {
            dir,
            seq: AtomicU64::new(0),
            live: Mutex::new(Vec::new()),
            made: AtomicU64::new(0),
        }
    }

    /// Bytes of the arrays made so far.
    pub fn bytes_made(&self) -> u64 {
        self.made.load(Ordering::Relaxed)
    }

    /// Arrays alive.
    pub fn live(&self) -> usize {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.len()
    }

    /// Starts writing every live array's dirty pages back (asynchronously:
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so that they can be
    /// reclaimed without a wait. Best effort.
    #[allow(unsafe_code)]
    pub fn write_back(&self) {
        let files: Vec<Arc<File>> = {
            let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            live.retain(|w| w.strong_count() > 0);
            live.iter().filter_map(Weak::upgrade).collect()
        };
        for f in files {
            // SAFETY: a plain system call on a descriptor `f` keeps open;
            // it reads or writes no memory of this process.
            unsafe {
                libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
            }
        }
    }

    /// A zeroed file of `bytes` (whole pages) mapped read-write, unlinked.
    #[allow(unsafe_code)]
    fn make(&self, name: &str, bytes: usize) -> std::io::Result<Mapped> {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("state-{seq}-{name}"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        let len = (bytes as u64).div_ceil(PAGE) * PAGE;
        let mapped = file.set_len(len).and_then(|()| {
            // SAFETY: the file was just created by this process under a
            // fresh name and is unlinked below, so no other process or
            // handle can change or truncate it while mapped; every access
            // goes through the one `VertexArray` that owns the region.
            unsafe { MmapOptions::new().len(len as usize).map_mut(&file) }
        });
        // Unlinked whatever happened: the mapping keeps the data alive.
        let removed = std::fs::remove_file(&path);
        let mut map = mapped?;
        removed?;
        let file = Arc::new(file);
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::downgrade(&file));
        self.made.fetch_add(len, Ordering::Relaxed);
        let ptr = map.as_mut_ptr();
        Ok(Mapped {
            map,
            ptr,
            _file: file,
        })
    }
}

impl Backing for StateFiles {
    fn region(&self, name: &str, bytes: usize) -> Result<Box<dyn Region>, String> {
        self.make(name, bytes)
            .map(|m| Box::new(m) as Box<dyn Region>)
            .map_err(|e| format!("a {bytes}-byte state file in {}: {e}", self.dir.display()))
    }
}

/// One array's mapped file.
#[derive(Debug)]
struct Mapped {
    map: MmapMut,
    /// The map's first byte (taken once, with the map borrowed mutably).
    ptr: *mut u8,
    _file: Arc<File>,
}

// SAFETY: the map is owned by this value alone and is memory like a heap
// allocation; the pointer is into it. Access goes through the owning
// `VertexArray`, which hands out `&[T]` / `&mut [T]` by Rust's rules.
#[allow(unsafe_code)]
unsafe impl Send for Mapped {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl Sync for Mapped {}

impl Region for Mapped {
    fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }
    fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_engine::vertex_array::VertexArray;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn arrays_live_in_unlinked_files_that_go_with_the_array() {
        let tmp = tempfile::tempdir().unwrap();
        let files = StateFiles::new(tmp.path().to_path_buf());
        let n = 300_000;
        let a = VertexArray::from_fn(Some(&files), "a", n, |i| AtomicU32::new(i as u32)).unwrap();
        assert!(a.is_backed());
        assert_eq!(files.live(), 1);
        assert_eq!(files.bytes_made(), (4 * n as u64).div_ceil(PAGE) * PAGE);
        // Nothing is left in the directory, even while the array lives.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        a[5].store(9, Ordering::Relaxed);
        files.write_back();
        let v: Vec<u32> = a
            .into_vec()
            .into_iter()
            .map(AtomicU32::into_inner)
            .collect();
        assert_eq!(v[5], 9);
        assert_eq!(v[n - 1], n as u32 - 1);
        assert_eq!(files.live(), 0);
    }

    #[test]
    fn a_missing_directory_is_an_error_that_names_it() {
        let tmp = tempfile::tempdir().unwrap();
        let gone = tmp.path().join("gone");
        let files = StateFiles::new(gone.clone());
        let e = VertexArray::from_fn(Some(&files), "a", 10, |_| 0u64).unwrap_err();
        assert!(e.to_string().contains(&gone.display().to_string()), "{e}");
    }
}
