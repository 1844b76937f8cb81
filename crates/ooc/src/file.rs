//! The stored graph as the out-of-core executor sees it: the header, the
//! O(n) per-vertex arrays (offsets, the natural-id permutation) mapped
//! read-only, and the O(m) arrays (neighbours, weights) left on disk, read
//! by page ranges (`O_DIRECT`, or `pread` and then dropped from the page
//! cache with `posix_fadvise(DONTNEED)`), so that the cache never holds the
//! adjacency.
//!
//! The per-vertex arrays are mapped, not read onto the heap: their pages
//! are clean file pages, read in as a walk reaches them (ascending vertex
//! order: a walk, the direction rule's pull pass) and reclaimed by the
//! kernel when the memory cap needs room, so they take a resident window
//! of the budget ([`MAPPED_WINDOW`] each), not `8 n` bytes. Opening checks
//! them in one pass and then drops their pages. The adjacency is never
//! mapped.
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytemuck::Pod;
use memmap2::MmapOptions;
use plexus_engine::program::GraphView;
use plexus_graph::store::{read_header, SectionEntry, SectionKind};
use plexus_graph::{GraphMeta, IdMap, Section, VertexId, VertexOrder, Weight, WeightStats};
use rayon::prelude::*;

use crate::error::{OocError, Result};

/// Bytes of one page: the unit of every adjacency read.
pub const PAGE: u64 = 4096;

/// Bytes read per `pread` when a whole array is streamed (offsets, weight
/// facts).
const STREAM_BYTES: usize = 1 << 20;

/// Bytes of each mapped per-vertex array the plan counts as resident: the
/// pages a walk or the direction rule's pass is reading (a few pages per
/// thread, in ascending order) with room for the kernel's fault-around and
/// the reclaim that trails them.
pub const MAPPED_WINDOW: u64 = 2 << 20;

/// One page of a read buffer, aligned for `O_DIRECT`.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(4096))]
pub(crate) struct Page(pub [u8; PAGE as usize]);

/// One direction of the stored edges: offsets mapped, neighbours and
/// weights on disk.
#[derive(Debug)]
pub(crate) struct Side {
    /// `n + 1` offsets into the neighbour array (mapped from the file).
    pub offsets: Section<u64>,
    /// File offset of the neighbour section (`u32` elements).
    pub targets: u64,
    /// File offset of the weight section (`f64` elements), when weighted.
    pub weights: Option<u64>,
}

impl Side {
    /// The element range of `v`'s list.
    #[inline]
    pub fn range(&self, v: VertexId) -> (u64, u64) {
        (self.offsets[v as usize], self.offsets[v as usize + 1])
    }
}

/// Counters of what the executor read from the graph file.
#[derive(Debug, Default)]
pub struct IoCounters {
    /// Adjacency bytes read (whole pages).
    pub bytes: AtomicU64,
    /// Adjacency pages read.
    pub pages: AtomicU64,
    /// `pread` calls for adjacency.
    pub reads: AtomicU64,
    /// Nanoseconds of adjacency reading (wall time of each job's reads,
    /// concurrent requests counted once).
    pub nanos: AtomicU64,
    /// Bytes read once for the per-vertex arrays and the graph's facts.
    pub setup_bytes: AtomicU64,
}

/// A stored `graph.plx` opened for out-of-core reading.
#[derive(Debug)]
pub struct StoredGraph {
    path: PathBuf,
    file: File,
    /// The same file opened with `O_DIRECT` (reads bypass the page cache
    /// entirely), while the file system takes it; `None` or switched off:
    /// buffered reads dropped from the cache after use.
    direct: Option<File>,
    direct_ok: std::sync::atomic::AtomicBool,
    file_len: u64,
    n: usize,
    m: u64,
    meta: GraphMeta,
    out: Side,
    /// In-edges of a directed graph (`None`: the out-edges serve).
    inc: Option<Side>,
    /// Natural id of each internal id when the store applied an order
    /// (mapped from the file).
    natural: Option<Section<VertexId>>,
    weight_stats: OnceLock<Option<WeightStats>>,
    strictly_increasing: OnceLock<bool>,
    /// The header's id kind and sections, for [`StoredGraph::ids`].
    id_kind: u32,
    sections: Vec<SectionEntry>,
    pub(crate) io: IoCounters,
    /// The first I/O error met where no error can be returned (a
    /// [`GraphView`] method, a superstep); see [`StoredGraph::take_fault`].
    fault: Mutex<Option<OocError>>,
}

impl StoredGraph {
    /// Opens `path` (a `graph.plx`): reads and checks the header, checks
    /// that every section lies inside the file, and maps and checks the
    /// offsets (and the natural-id permutation of a reordered store). The
    /// neighbour and weight arrays are not read.
    pub fn open(path: &Path) -> Result<Self> {
        let h = read_header(path)?;
        let file = File::open(path).map_err(|e| OocError::io(path, e))?;
        let file_len = file.metadata().map_err(|e| OocError::io(path, e))?.len();
        advise(&file, 0, 0, libc::POSIX_FADV_RANDOM).map_err(|e| OocError::io(path, e))?;
        let n = usize::try_from(h.num_vertices)
            .ok()
            .filter(|&n| n < u32::MAX as usize)
            .ok_or_else(|| OocError::corrupt(path, "vertex count exceeds 32-bit ids"))?;
        let m = h.num_arcs;
        let find = |k: SectionKind, elem: u64, len: Option<u64>| -> Result<SectionEntry> {
            let e = h
                .sections
                .iter()
                .find(|e| e.kind == k)
                .copied()
                .ok_or_else(|| OocError::corrupt(path, format!("missing section {}", k.name())))?;
            let fits = e.offset % PAGE == 0
                && e.offset
                    .checked_add(e.len_bytes)
                    .is_some_and(|end| end <= file_len);
            let sized = len.is_none_or(|l| l.checked_mul(elem) == Some(e.len_bytes));
            if !fits || !sized {
                return Err(OocError::corrupt(
                    path,
                    format!(
                        "section {} ({} bytes at offset {}) does not fit the {}-byte file or its length",
                        k.name(),
                        e.len_bytes,
                        e.offset,
                        file_len
                    ),
                ));
            }
            Ok(e)
        };
        let mut g = StoredGraph {
            path: path.to_path_buf(),
            file,
            direct: open_direct(path),
            direct_ok: std::sync::atomic::AtomicBool::new(true),
            file_len,
            n,
            m,
            meta: h.meta.clone(),
            out: Side {
                offsets: Section::default(),
                targets: 0,
                weights: None,
            },
            inc: None,
            natural: None,
            weight_stats: OnceLock::new(),
            strictly_increasing: OnceLock::new(),
            id_kind: h.id_kind,
            sections: h.sections.clone(),
            io: IoCounters::default(),
            fault: Mutex::new(None),
        };
        use SectionKind::*;
        let side = |o: SectionKind, t: SectionKind, w: SectionKind| -> Result<Side> {
            let oe = find(o, 8, Some(n as u64 + 1))?;
            let te = find(t, 4, Some(m))?;
            let we = match h.meta.weighted {
                true => Some(find(w, 8, Some(m))?.offset),
                false => None,
            };
            let offsets = g.map_section(&oe, n + 1, |xs: &[u64]| {
                xs.first() == Some(&0)
                    && xs.last() == Some(&m)
                    && xs.par_windows(2).all(|w| w[0] <= w[1])
            })?;
            let Some(offsets) = offsets else {
                return Err(OocError::corrupt(
                    path,
                    format!("section {} is not non-decreasing from 0 to {m}", o.name()),
                ));
            };
            Ok(Side {
                offsets,
                targets: te.offset,
                weights: we,
            })
        };
        let out = side(OutOffsets, OutTargets, OutWeights)?;
        let inc = match h.meta.directed {
            true => Some(side(InOffsets, InSources, InWeights)?),
            false => None,
        };
        let natural = match h.meta.order {
            VertexOrder::None => None,
            _ => {
                let e = find(OldOfNew, 4, Some(n as u64))?;
                let xs =
                    g.map_section(&e, n, |xs: &[u32]| xs.par_iter().all(|&x| (x as usize) < n))?;
                match xs {
                    Some(xs) => Some(xs),
                    None => {
                        return Err(OocError::corrupt(
                            path,
                            "section old-of-new holds an id >= n",
                        ))
                    }
                }
            }
        };
        g.out = out;
        g.inc = inc;
        g.natural = natural;
        Ok(g)
    }

    /// The external ids, read into memory (O(n): callers load them to
    /// resolve a source vertex or name vertices in a result, then drop them).
    pub fn ids(&self) -> Result<IdMap> {
        let n = self.n;
        let bad = |msg: String| OocError::corrupt(&self.path, msg);
        let find = |k: SectionKind, elem: u64| -> Result<SectionEntry> {
            self.sections
                .iter()
                .find(|e| e.kind == k && e.len_bytes % elem == 0)
                .copied()
                .filter(|e| e.offset.saturating_add(e.len_bytes) <= self.file_len)
                .ok_or_else(|| bad(format!("missing or misplaced section {}", k.name())))
        };
        let sorted = |this: &Self| -> Result<Section<u32>> {
            let e = find(SectionKind::IdSorted, 4)?;
            let xs: Vec<u32> = this.read_array(e.offset, n)?;
            if xs.iter().any(|&x| x as usize >= n) {
                return Err(bad("section id-sorted holds an id >= n".into()));
            }
            Ok(Section::owned(xs))
        };
        match self.id_kind {
            0 => Ok(IdMap::Identity { n }),
            1 => {
                let e = find(SectionKind::IdInts, 8)?;
                Ok(IdMap::Int {
                    ext: Section::owned(self.read_array(e.offset, n)?),
                    sorted: sorted(self)?,
                })
            }
            2 => {
                let o = find(SectionKind::IdStrOffsets, 8)?;
                let offsets: Vec<u64> = self.read_array(o.offset, n + 1)?;
                let b = find(SectionKind::IdStrBytes, 1)?;
                let bytes: Vec<u8> = self.read_array(b.offset, b.len_bytes as usize)?;
                if offsets.windows(2).any(|w| w[0] > w[1])
                    || offsets.last().is_some_and(|&l| l > bytes.len() as u64)
                {
                    return Err(bad("section id-str-offsets is not within its bytes".into()));
                }
                Ok(IdMap::Str {
                    offsets: Section::owned(offsets),
                    bytes: Section::owned(bytes),
                    sorted: sorted(self)?,
                })
            }
            k => Err(bad(format!("unknown id kind {k}"))),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The graph's metadata (directed, weighted, order, self-loops).
    pub fn meta(&self) -> &GraphMeta {
        &self.meta
    }

    /// The out-edges.
    pub(crate) fn out(&self) -> &Side {
        &self.out
    }

    /// The in-edges (the out-edges of an undirected graph).
    pub(crate) fn inc(&self) -> &Side {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// Bytes of the mapped per-vertex arrays the budget counts: each
    /// array's resident window ([`MAPPED_WINDOW`], or the array when
    /// smaller).
    pub fn resident_bytes(&self) -> u64 {
        let window = |bytes: u64| bytes.min(MAPPED_WINDOW);
        let sides = 1 + u64::from(self.inc.is_some());
        sides * window(8 * (self.n as u64 + 1))
            + self
                .natural
                .as_ref()
                .map_or(0, |x| window(4 * x.len() as u64))
    }

    /// Maps `len` elements of `T` of the section `e` read-only (counted as
    /// setup bytes) and checks them with `ok` in one pass, after which
    /// their pages are dropped (unmapped from this process, then out of the
    /// page cache): a map, or `None` when `ok` refused the elements.
    #[allow(unsafe_code)]
    fn map_section<T: Pod>(
        &self,
        e: &SectionEntry,
        len: usize,
        ok: impl FnOnce(&[T]) -> bool,
    ) -> Result<Option<Section<T>>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>());
        let map = match bytes {
            Some(0) => return Ok(ok(&[]).then(Section::default)),
            Some(b) => {
                // SAFETY: a published store file is written once (to a
                // temporary directory, then renamed) and never modified in
                // place; it is mapped read-only. A file truncated by another
                // process would fault on access, which the store's contract
                // (no writers to a published graph) rules out.
                unsafe { MmapOptions::new().offset(e.offset).len(b).map(&self.file) }
                    .map_err(|err| OocError::io(&self.path, err))?
            }
            None => return Err(OocError::corrupt(&self.path, "a section too large to map")),
        };
        self.io
            .setup_bytes
            .fetch_add(e.len_bytes, Ordering::Relaxed);
        let section = Section::mapped(Arc::new(map), 0, len)
            .ok_or_else(|| OocError::corrupt(&self.path, "a misaligned section"))?;
        if !ok(&section) {
            return Ok(None);
        }
        // Best effort: pages left resident only cost memory the kernel
        // reclaims anyway. `madvise(DONTNEED)` on a read-only shared map
        // only unmaps clean pages (they read back from the file).
        let (ptr, span) = (
            section.as_ptr() as *mut libc::c_void,
            std::mem::size_of_val(&*section),
        );
        // SAFETY: `ptr..ptr + span` is exactly the mapping made above (held
        // by `section`, page-aligned); the advice changes no contents.
        unsafe { libc::madvise(ptr, span, libc::MADV_DONTNEED) };
        self.drop_cache(e.offset, e.len_bytes);
        Ok(Some(section))
    }

    /// Bytes of adjacency (neighbours and weights, both directions of a
    /// directed graph) in the file.
    pub fn adjacency_bytes(&self) -> u64 {
        let per_arc = 4 + if self.meta.weighted { 8 } else { 0 };
        let sides = 1 + u64::from(self.inc.is_some());
        sides * per_arc * self.m
    }

    /// Reads `len` elements of `T` at byte `offset`, streaming and dropping
    /// the pages from the cache as it goes.
    pub(crate) fn read_array<T: Pod>(&self, offset: u64, len: usize) -> Result<Vec<T>> {
        let mut v = vec![T::zeroed(); len];
        self.read_span(offset, bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }

    /// Reads `dst.len()` bytes from byte `offset` (a multiple of [`PAGE`])
    /// through a page-aligned bounce buffer, so that the reads can bypass
    /// the page cache; counted as setup bytes.
    fn read_span(&self, offset: u64, dst: &mut [u8]) -> Result<()> {
        let mut bounce = vec![Page([0; PAGE as usize]); STREAM_BYTES / PAGE as usize];
        for (i, chunk) in dst.chunks_mut(STREAM_BYTES).enumerate() {
            let at = offset + (i * STREAM_BYTES) as u64;
            let whole = (chunk.len() as u64).div_ceil(PAGE) * PAGE;
            let b = &mut bytemuck::cast_slice_mut::<Page, u8>(&mut bounce)[..whole as usize];
            self.read_raw(at, b)?;
            chunk.copy_from_slice(&b[..chunk.len()]);
            self.io.setup_bytes.fetch_add(whole, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Reads whole pages into `buf` (whose length is a multiple of
    /// [`PAGE`]) from byte `offset` (a multiple of [`PAGE`]); bytes past the
    /// end of the file read as zeros. Counts the pages and the call (the
    /// caller counts the time: reads run concurrently).
    pub(crate) fn read_pages(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.read_raw(offset, buf)?;
        let io = &self.io;
        io.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        io.pages
            .fetch_add(buf.len() as u64 / PAGE, Ordering::Relaxed);
        io.reads.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Adds `t` of adjacency reading (wall time, concurrent reads once).
    pub(crate) fn add_io_time(&self, t: std::time::Duration) {
        let ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        self.io.nanos.fetch_add(ns, Ordering::Relaxed);
    }

    /// [`StoredGraph::read_pages`] without the counters: `O_DIRECT` when
    /// offset, length and buffer are page-aligned and the file system takes
    /// it, else a buffered read dropped from the cache.
    fn read_raw(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let avail = self.file_len.saturating_sub(offset).min(buf.len() as u64) as usize;
        let (head, tail) = buf.split_at_mut(avail);
        let aligned = offset.is_multiple_of(PAGE)
            && (avail as u64).is_multiple_of(PAGE)
            && (head.as_ptr() as usize).is_multiple_of(PAGE as usize);
        let direct = match (
            &self.direct,
            aligned && self.direct_ok.load(Ordering::Relaxed),
        ) {
            (Some(f), true) => match f.read_exact_at(head, offset) {
                Ok(()) => true,
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    // The file system refuses direct reads after all.
                    self.direct_ok.store(false, Ordering::Relaxed);
                    false
                }
                Err(e) => return Err(OocError::io(&self.path, e)),
            },
            _ => false,
        };
        if !direct {
            self.file
                .read_exact_at(head, offset)
                .map_err(|e| OocError::io(&self.path, e))?;
            self.drop_cache(offset, avail as u64);
        }
        tail.fill(0);
        Ok(())
    }

    /// Turns `O_DIRECT` reads off (buffered reads dropped from the cache
    /// after use) or back on where the file system allows them.
    pub fn use_direct_io(&self, on: bool) {
        self.direct_ok.store(on, Ordering::Relaxed);
    }

    /// Whether adjacency reads bypass the page cache (`O_DIRECT`).
    pub fn direct_io(&self) -> bool {
        self.direct.is_some() && self.direct_ok.load(Ordering::Relaxed)
    }

    /// Asks the kernel to drop `len` bytes from `offset` out of the page
    /// cache (best effort: a failure only costs memory).
    pub(crate) fn drop_cache(&self, offset: u64, len: u64) {
        let _ = advise(&self.file, offset, len, libc::POSIX_FADV_DONTNEED);
    }

    /// Records `e` as the executor's fault unless one is recorded already.
    pub(crate) fn record(&self, e: OocError) {
        let mut f = self.fault.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e);
        }
    }

    /// Whether a fault was recorded.
    pub(crate) fn faulted(&self) -> bool {
        self.fault
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Takes the first I/O error met where none could be returned (a
    /// superstep, a weight fact). After one, supersteps do nothing and the
    /// algorithm's result is meaningless: callers check this after a run.
    pub fn take_fault(&self) -> Option<OocError> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// The weight facts, streamed once over the out-weights in the blocks
    /// the in-memory graph sums in (so the sum is bit-identical).
    fn compute_weight_stats(&self) -> Result<Option<WeightStats>> {
        const BLOCK: usize = 1 << 14;
        let Some(at) = self.out.weights else {
            return Ok(None);
        };
        let mut blocks: Vec<(Option<usize>, f64, u64, f64)> = Vec::new();
        let per_read = STREAM_BYTES / 8;
        let mut buf = vec![0f64; per_read];
        let mut done = 0usize;
        while (done as u64) < self.m {
            let len = per_read.min(self.m as usize - done);
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf[..len]);
            self.read_span(at + 8 * done as u64, bytes)?;
            for (b, ws) in buf[..len].chunks(BLOCK).enumerate() {
                let first = done + b * BLOCK;
                let bad = ws.iter().position(|w| w.is_nan() || *w < 0.0);
                let (mut sum, mut count, mut max) = (0.0, 0u64, 0.0f64);
                for &w in ws {
                    if w.is_finite() {
                        sum += w;
                        count += 1;
                        max = max.max(w);
                    }
                }
                blocks.push((bad.map(|i| first + i), sum, count, max));
            }
            done += len;
        }
        Ok(Some(WeightStats {
            first_invalid: blocks.iter().find_map(|b| b.0),
            finite_sum: blocks.iter().map(|b| b.1).sum(),
            finite_count: blocks.iter().map(|b| b.2).sum(),
            max_finite: blocks.iter().map(|b| b.3).fold(0.0, f64::max),
        }))
    }

    /// Whether every out-list is strictly increasing, streamed once.
    fn compute_strictly_increasing(&self) -> Result<bool> {
        let per_read = STREAM_BYTES / 4;
        let mut buf = vec![0u32; per_read];
        let offs = &self.out.offsets;
        let (mut v, mut prev, mut done) = (0usize, 0u32, 0u64);
        while done < self.m {
            let len = per_read.min((self.m - done) as usize);
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf[..len]);
            self.read_span(self.out.targets + 4 * done, bytes)?;
            for (i, &t) in buf[..len].iter().enumerate() {
                let e = done + i as u64;
                while offs[v + 1] <= e {
                    v += 1;
                }
                if e > offs[v] && t <= prev {
                    return Ok(false);
                }
                prev = t;
            }
            done += len as u64;
        }
        Ok(true)
    }

    /// Computes the weight facts now (one pass over the out-weights), so
    /// that an I/O error is returned here rather than recorded as a fault.
    pub fn prepare_weight_stats(&self) -> Result<()> {
        if self.weight_stats.get().is_none() {
            let s = self.compute_weight_stats()?;
            let _ = self.weight_stats.set(s);
        }
        Ok(())
    }
}

impl GraphView for StoredGraph {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn num_arcs(&self) -> u64 {
        self.m
    }
    fn is_directed(&self) -> bool {
        self.meta.directed
    }
    fn is_weighted(&self) -> bool {
        self.meta.weighted
    }
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        let (a, b) = self.out.range(v);
        (b - a) as usize
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        let (a, b) = self.inc().range(v);
        (b - a) as usize
    }
    fn weight_stats(&self) -> Option<&WeightStats> {
        self.weight_stats
            .get_or_init(|| {
                self.compute_weight_stats().unwrap_or_else(|e| {
                    self.record(e);
                    None
                })
            })
            .as_ref()
    }
    fn first_invalid_arc(&self) -> Option<(VertexId, VertexId, Weight)> {
        let i = self.weight_stats()?.first_invalid? as u64;
        let offs = &self.out.offsets;
        let src = offs.partition_point(|&o| o <= i).checked_sub(1)?;
        let mut t = [0u8; 4];
        let mut w = [0u8; 8];
        self.file
            .read_exact_at(&mut t, self.out.targets + 4 * i)
            .ok()?;
        self.file
            .read_exact_at(&mut w, self.out.weights? + 8 * i)
            .ok()?;
        Some((
            src as VertexId,
            u32::from_le_bytes(t),
            f64::from_le_bytes(w),
        ))
    }
    fn no_duplicate_arcs(&self) -> bool {
        *self.strictly_increasing.get_or_init(|| {
            self.compute_strictly_increasing().unwrap_or_else(|e| {
                self.record(e);
                false
            })
        })
    }
    fn natural_id(&self, v: VertexId) -> VertexId {
        self.natural.as_ref().map_or(v, |x| x[v as usize])
    }
}

/// `path` opened for `O_DIRECT` reads, or `None` where the file system
/// refuses (tmpfs, some overlays).
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()
}

/// `posix_fadvise(fd, offset, len, advice)`.
#[allow(unsafe_code)]
pub(crate) fn advise(
    file: &File,
    offset: u64,
    len: u64,
    advice: libc::c_int,
) -> std::io::Result<()> {
    let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    };
    // SAFETY: `posix_fadvise` takes an open descriptor (borrowed from
    // `file`, alive for the call) and plain integers; it reads or writes no
    // memory of this process, and at worst returns an error code.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), off, len, advice) };
    match rc {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_on_an_open_file_succeeds_and_a_huge_offset_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 3 * PAGE as usize]).unwrap();
        let f = File::open(&p).unwrap();
        advise(&f, 0, 0, libc::POSIX_FADV_RANDOM).unwrap();
        advise(&f, 0, PAGE, libc::POSIX_FADV_DONTNEED).unwrap();
        assert!(advise(&f, u64::MAX, 1, libc::POSIX_FADV_DONTNEED).is_err());
    }
}
