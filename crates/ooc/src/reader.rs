//! Reading the lists of chosen vertices by page ranges.
//!
//! A [`Walk`] visits vertices in ascending order and hands each one's
//! list, on each side it walks (out-, in-, or both), to a callback. It
//! plans batches of vertices whose lists' pages fit one read buffer (per
//! stream: neighbours and weights of each side), coalescing a batch's pages
//! into runs of consecutive pages. A reader thread plans each batch while
//! the one before it is being read, then reads it into one of two buffers
//! while the calling thread computes on the other (double buffering): its
//! runs cut into requests of at most a MiB, several in flight at once on a
//! few threads (`O_DIRECT` where the file system allows, else buffered and
//! dropped from the page cache). The callback gets every vertex of a batch
//! at once. A vertex whose list does not fit a buffer is read and handed
//! over in pieces (the executor combines the pieces: dense signals split,
//! law 4; sparse slots are per edge). Batch tables and item lists are
//! reused from batch to batch.
//!
//! Only the pages that hold a visited vertex's list are read, so visiting
//! the active vertices reads the active pages; visiting every vertex reads
//! every page once, sequentially (`--io full`).
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::ScopedJoinHandle;
use std::time::Instant;

use plexus_graph::VertexId;

use crate::cost::{TARGETS_PER_PAGE, WEIGHTS_PER_PAGE};
use crate::error::{OocError, Result};
use crate::file::{Page, Side, StoredGraph, PAGE};

/// Most lists in one batch: vertices with empty lists take no pages, so
/// without a bound a batch (and its entry table) could hold millions of
/// them (half of a Kronecker graph's vertices are isolated).
const MAX_ENTRIES: usize = 1 << 16;
/// Most threads reading one job at once: requests in flight, so that the
/// device works on several while a thread waits for its CPU.
const READERS: usize = 4;
/// Bytes of one read request at most.
const PIECE: u64 = 1 << 20;
/// Job tables kept for reuse (two in buffers, one being planned).
const SPARE_JOBS: usize = 3;

/// One read buffer (whole aligned pages) per stream.
#[derive(Default)]
struct Buffers {
    targets: [Vec<Page>; 2],
    weights: [Vec<Page>; 2],
}

/// A run of consecutive pages of one stream and where it lands in the buffer.
#[derive(Clone, Copy, Debug)]
struct Run {
    first_page: u64,
    pages: u64,
    buf_page: u64,
}

/// The runs of one stream (neighbours or weights of one side) in a batch.
#[derive(Debug, Default)]
struct Stream {
    runs: Vec<Run>,
    used: u64,
}

impl Stream {
    /// Pages that adding elements `a..b` (with `per_page` to a page) needs.
    fn new_pages(&self, a: u64, b: u64, per_page: u64) -> u64 {
        if a == b {
            return 0;
        }
        let (p0, p1) = (a / per_page, b.div_ceil(per_page));
        match self.runs.last() {
            Some(r) if p0 <= r.first_page + r.pages => p1.saturating_sub(r.first_page + r.pages),
            _ => p1 - p0,
        }
    }

    /// Adds elements `a..b` and returns the buffer index of element `a`.
    fn add(&mut self, a: u64, b: u64, per_page: u64) -> usize {
        if a == b {
            return 0;
        }
        let p0 = a / per_page;
        let extend = matches!(self.runs.last(), Some(r) if p0 <= r.first_page + r.pages);
        if !extend {
            self.runs.push(Run {
                first_page: p0,
                pages: 0,
                buf_page: self.used,
            });
        }
        let new = self.new_pages(a, b, per_page);
        let Some(r) = self.runs.last_mut() else {
            return 0;
        };
        r.pages += new;
        self.used += new;
        (r.buf_page * per_page + (a - r.first_page * per_page)) as usize
    }
}

/// A buffer's pages as neighbours.
fn targets_of(pages: &[Page]) -> &[u32] {
    bytemuck::cast_slice(pages)
}

/// A buffer's pages as weights.
fn weights_of(pages: &[Page]) -> &[f64] {
    bytemuck::cast_slice(pages)
}

/// One vertex's list (or a piece of it) on one side, placed in the buffers.
#[derive(Clone, Copy, Debug)]
struct Entry {
    v: VertexId,
    side: usize,
    t: usize,
    w: usize,
    len: usize,
    whole: bool,
}

/// One buffer fill: the page runs of each stream and the lists they hold.
#[derive(Debug)]
struct Job {
    streams: Vec<Stream>,
    entries: Vec<Entry>,
}

impl Job {
    fn new(sides: usize) -> Self {
        Job {
            streams: (0..2 * sides).map(|_| Stream::default()).collect(),
            entries: Vec::new(),
        }
    }

    /// Empties the job, keeping its allocations for the next one.
    fn clear(&mut self) {
        for st in &mut self.streams {
            st.runs.clear();
            st.used = 0;
        }
        self.entries.clear();
    }
}

/// One vertex's list (or a piece of it) on one side of a walk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item<'b> {
    /// The vertex.
    pub v: VertexId,
    /// The side's index in the walk.
    pub side: usize,
    /// Its neighbours (sorted).
    pub targets: &'b [u32],
    /// Parallel weights, when the walk reads them.
    pub weights: Option<&'b [f64]>,
    /// Whether this is the whole list (else a piece of a list longer than
    /// the buffer; the pieces of one vertex come in consecutive calls, one
    /// item each).
    pub whole: bool,
}

/// What the callback of a walk gets: a batch of items, ascending by vertex
/// (a vertex's sides consecutive, in the walk's order).
pub(crate) type Visit<'f> = dyn FnMut(&[Item<'_>]) + 'f;

/// A walk over some vertices' lists on one or two sides.
pub(crate) struct Walk<'a> {
    pub g: &'a StoredGraph,
    pub sides: Vec<&'a Side>,
    pub weights: bool,
    /// Pages each stream's buffer holds.
    pub cap_pages: u64,
}

impl Walk<'_> {
    /// The pages each stream's buffer holds for `read_bytes` of buffers
    /// (two buffers, double-buffered).
    pub fn cap_for(read_bytes: u64, sides: usize, weights: bool) -> u64 {
        let streams = sides as u64 * (1 + u64::from(weights));
        (read_bytes / 2 / PAGE / streams.max(1)).max(2)
    }

    /// Refuses a list holding an id that is not a vertex (a corrupt file
    /// would otherwise index the program's state out of bounds).
    fn check(&self, t: &[u32]) -> Result<()> {
        use plexus_engine::program::GraphView;
        let n = self.g.num_vertices();
        // The largest id, without an early exit, so that the loop vectorises.
        let x = t.iter().copied().fold(0, u32::max);
        if t.is_empty() || (x as usize) < n {
            return Ok(());
        }
        Err(OocError::corrupt(
            self.g.path(),
            format!("a neighbour list holds vertex {x}, but the graph has {n} vertices"),
        ))
    }

    /// Visits `verts` (ascending) in batches; see the module docs.
    pub fn run(
        &self,
        verts: impl Iterator<Item = VertexId> + Send,
        f: &mut Visit<'_>,
    ) -> Result<()> {
        std::thread::scope(|scope| {
            let (full_tx, full_rx) = sync_channel::<Result<(Job, Buffers)>>(1);
            let (empty_tx, empty_rx) = sync_channel::<Buffers>(2);
            let (spare_tx, spare_rx) = sync_channel::<Job>(SPARE_JOBS);
            for _ in 0..2 {
                let _ = empty_tx.send(Buffers::default());
            }
            scope.spawn(move || self.produce(verts, &empty_rx, &spare_rx, &full_tx));
            let mut result = Ok(());
            let mut items = Vec::new();
            for msg in full_rx.iter() {
                let delivered = msg.and_then(|(job, b)| {
                    self.deliver(&job, &b, &mut items, f)?;
                    Ok((job, b))
                });
                match delivered {
                    Ok((mut job, b)) => {
                        job.clear();
                        let _ = spare_tx.try_send(job);
                        let _ = empty_tx.send(b);
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            // Dropping the ends stops a reader still planning (after an
            // error) before the scope joins it.
            drop(empty_tx);
            drop(spare_tx);
            drop(full_rx);
            result
        })
    }

    /// The reader's side of [`Walk::run`]: plans each job while the one
    /// before it is being read, then hands the read one over and starts
    /// reading the planned one into the next free buffer.
    fn produce(
        &self,
        verts: impl Iterator<Item = VertexId>,
        empty_rx: &Receiver<Buffers>,
        spare_rx: &Receiver<Job>,
        full_tx: &SyncSender<Result<(Job, Buffers)>>,
    ) {
        std::thread::scope(|io| {
            let mut pending: Option<ScopedJoinHandle<'_, Result<(Job, Buffers)>>> = None;
            let fresh = || {
                spare_rx
                    .try_recv()
                    .unwrap_or_else(|_| Job::new(self.sides.len()))
            };
            self.plan(verts, &fresh, &mut |job| {
                if !hand_over(pending.take(), full_tx) {
                    return false;
                }
                let Ok(mut b) = empty_rx.recv() else {
                    return false;
                };
                pending = Some(io.spawn(move || self.read(&job, &mut b).map(|()| (job, b))));
                true
            });
            hand_over(pending.take(), full_tx);
        });
    }

    /// Cuts `verts` into jobs and hands each to `emit`, which returns
    /// whether to go on.
    /// Job tables come from `fresh` (recycled ones when there are).
    fn plan(
        &self,
        verts: impl Iterator<Item = VertexId>,
        fresh: &dyn Fn() -> Job,
        emit: &mut dyn FnMut(Job) -> bool,
    ) {
        let mut job = fresh();
        for v in verts {
            // A vertex with no list on any side takes no pages.
            let empty = self.sides.iter().all(|s| {
                let (a, b) = s.range(v);
                a == b
            });
            if job.entries.len() >= MAX_ENTRIES || (!empty && !self.fits(&job, v)) {
                if !job.entries.is_empty() {
                    let full = std::mem::replace(&mut job, fresh());
                    if !emit(full) {
                        return;
                    }
                }
                if !self.fits(&job, v) {
                    if !self.giant(v, fresh, emit) {
                        return;
                    }
                    continue;
                }
            }
            for (s, side) in self.sides.iter().enumerate() {
                let (a, b) = side.range(v);
                let t = job.streams[2 * s].add(a, b, TARGETS_PER_PAGE);
                let w = match self.weights {
                    true => job.streams[2 * s + 1].add(a, b, WEIGHTS_PER_PAGE),
                    false => 0,
                };
                job.entries.push(Entry {
                    v,
                    side: s,
                    t,
                    w,
                    len: (b - a) as usize,
                    whole: true,
                });
            }
        }
        if !job.entries.is_empty() {
            emit(job);
        }
    }

    /// Whether `v`'s lists fit `job`'s buffers beside what it holds.
    fn fits(&self, job: &Job, v: VertexId) -> bool {
        let cap = self.cap_pages;
        let st = &job.streams;
        self.sides.iter().enumerate().all(|(s, side)| {
            let (a, b) = side.range(v);
            st[2 * s].used + st[2 * s].new_pages(a, b, TARGETS_PER_PAGE) <= cap
                && (!self.weights
                    || st[2 * s + 1].used + st[2 * s + 1].new_pages(a, b, WEIGHTS_PER_PAGE) <= cap)
        })
    }

    /// Jobs of one piece each for `v`, whose lists do not fit a buffer.
    fn giant(
        &self,
        v: VertexId,
        fresh: &dyn Fn() -> Job,
        emit: &mut dyn FnMut(Job) -> bool,
    ) -> bool {
        let per_piece = (self.cap_pages - 1)
            * match self.weights {
                true => WEIGHTS_PER_PAGE,
                false => TARGETS_PER_PAGE,
            };
        for (s, side) in self.sides.iter().enumerate() {
            let (a, b) = side.range(v);
            let mut x = a;
            loop {
                let y = (x + per_piece).min(b);
                let mut job = fresh();
                let t = job.streams[2 * s].add(x, y, TARGETS_PER_PAGE);
                let w = match self.weights {
                    true => job.streams[2 * s + 1].add(x, y, WEIGHTS_PER_PAGE),
                    false => 0,
                };
                job.entries.push(Entry {
                    v,
                    side: s,
                    t,
                    w,
                    len: (y - x) as usize,
                    whole: false,
                });
                if !emit(job) {
                    return false;
                }
                x = y;
                if x >= b {
                    break;
                }
            }
        }
        true
    }

    /// Reads a job's runs into `bufs` (grown to the job's pages, at most
    /// the walk's capacity: a small step touches little memory). Runs are
    /// cut into requests of at most [`PIECE`] bytes, read by up to
    /// [`READERS`] threads at once so that several requests are in flight;
    /// the job's wall time counts as I/O time once.
    fn read(&self, job: &Job, bufs: &mut Buffers) -> Result<()> {
        let t = Instant::now();
        let mut dsts: Vec<&mut Vec<Page>> = Vec::with_capacity(4);
        for (t, w) in bufs.targets.iter_mut().zip(bufs.weights.iter_mut()) {
            dsts.push(t);
            dsts.push(w);
        }
        let mut tasks: Vec<(u64, &mut [u8])> = Vec::new();
        for (i, (st, pages)) in job.streams.iter().zip(dsts).enumerate() {
            let side = self.sides[i / 2];
            let base = match i % 2 {
                1 => side.weights.unwrap_or(0),
                _ => side.targets,
            };
            if pages.len() < st.used as usize {
                pages.resize(st.used as usize, Page([0; PAGE as usize]));
            }
            let mut rest: &mut [u8] = bytemuck::cast_slice_mut(&mut pages[..st.used as usize]);
            for r in &st.runs {
                let (run, tail) = std::mem::take(&mut rest).split_at_mut((r.pages * PAGE) as usize);
                rest = tail;
                let at = base + r.first_page * PAGE;
                for (k, piece) in run.chunks_mut(PIECE as usize).enumerate() {
                    tasks.push((at + k as u64 * PIECE, piece));
                }
            }
        }
        let result = read_all(self.g, tasks);
        self.g.add_io_time(t.elapsed());
        result
    }

    /// Hands a read job's lists to `f`, in `spare`'s allocation (kept
    /// for the next job).
    fn deliver(
        &self,
        job: &Job,
        bufs: &Buffers,
        spare: &mut Vec<Item<'static>>,
        f: &mut Visit<'_>,
    ) -> Result<()> {
        let mut items = recycle(std::mem::take(spare));
        for e in &job.entries {
            let t = &targets_of(&bufs.targets[e.side])[e.t..e.t + e.len];
            self.check(t)?;
            let w = self
                .weights
                .then(|| &weights_of(&bufs.weights[e.side])[e.w..e.w + e.len]);
            items.push(Item {
                v: e.v,
                side: e.side,
                targets: t,
                weights: w,
                whole: e.whole,
            });
        }
        f(&items);
        *spare = recycle(items);
        Ok(())
    }
}

/// Hands the read in flight (if any) to the consumer; whether to go on.
fn hand_over(
    pending: Option<ScopedJoinHandle<'_, Result<(Job, Buffers)>>>,
    full_tx: &SyncSender<Result<(Job, Buffers)>>,
) -> bool {
    let Some(h) = pending else {
        return true;
    };
    let read = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
    let ok = read.is_ok();
    full_tx.send(read).is_ok() && ok
}

/// Reads every `(file offset, destination)` request, spread over up to
/// [`READERS`] threads in contiguous groups of about equal bytes; returns
/// the first error.
fn read_all(g: &StoredGraph, tasks: Vec<(u64, &mut [u8])>) -> Result<()> {
    let total: usize = tasks.iter().map(|t| t.1.len()).sum();
    let threads = READERS.min(tasks.len());
    if threads <= 1 {
        return tasks
            .into_iter()
            .try_for_each(|(at, buf)| g.read_pages(at, buf));
    }
    let share = total.div_ceil(threads);
    let mut groups: Vec<Vec<(u64, &mut [u8])>> = vec![Vec::new()];
    let mut bytes = 0usize;
    for t in tasks {
        if bytes >= share && groups.len() < threads {
            groups.push(Vec::new());
            bytes = 0;
        }
        bytes += t.1.len();
        if let Some(g) = groups.last_mut() {
            g.push(t);
        }
    }
    std::thread::scope(|s| {
        let mut groups = groups.into_iter();
        let first = groups.next().unwrap_or_default();
        let handles: Vec<_> = groups
            .map(|grp| {
                s.spawn(move || {
                    grp.into_iter()
                        .try_for_each(|(at, buf)| g.read_pages(at, buf))
                })
            })
            .collect();
        let mut result = first
            .into_iter()
            .try_for_each(|(at, buf)| g.read_pages(at, buf));
        for h in handles {
            let r = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            if result.is_ok() {
                result = r;
            }
        }
        result
    })
}

/// An empty vector of items in `v`'s allocation (in-place collect: no
/// item is kept, so only the lifetime changes).
// A `filter` would keep the lifetime `'x`; the `filter_map` names `'y`.
#[allow(clippy::unnecessary_filter_map)]
fn recycle<'x, 'y>(mut v: Vec<Item<'x>>) -> Vec<Item<'y>> {
    v.clear();
    v.into_iter().filter_map(|_| None::<Item<'y>>).collect()
}
