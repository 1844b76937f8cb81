//! Reading the lists of chosen vertices by page ranges.
//!
//! A [`Walk`] visits vertices in ascending order and hands each one's
//! list, on each side it walks (out-, in-, or both), to a callback. It
//! gathers vertices into a batch while the pages their lists touch fit the
//! read buffer (per stream: neighbours and weights of each side), coalesces
//! the pages of a batch into runs of consecutive pages, reads each run with
//! one `pread` (`O_DIRECT` where the file system allows, else buffered and
//! dropped from the page cache), and calls back for every vertex of the batch. A vertex whose list does not fit the buffer is read
//! and handed over in pieces (the executor combines the pieces: dense
//! signals split, law 4; sparse slots are per edge).
//!
//! Only the pages that hold a visited vertex's list are read, so visiting
//! the active vertices reads the active pages; visiting every vertex reads
//! every page once, sequentially (`--io full`).
use plexus_graph::VertexId;

use crate::error::{OocError, Result};
use crate::file::{Page, Side, StoredGraph, PAGE};

/// Neighbours per page.
const TARGETS_PER_PAGE: u64 = PAGE / 4;
/// Weights per page.
const WEIGHTS_PER_PAGE: u64 = PAGE / 8;
/// Most lists in one batch: vertices with empty lists take no pages, so
/// without a bound a batch (and its entry table) could hold millions of
/// them (half of a Kronecker graph's vertices are isolated).
const MAX_ENTRIES: usize = 1 << 16;

/// The read buffers (whole aligned pages), kept between supersteps.
#[derive(Default)]
pub(crate) struct Buffers {
    targets: [Vec<Page>; 2],
    weights: [Vec<Page>; 2],
}

impl std::fmt::Debug for Buffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pages: usize = self.targets.iter().chain(&self.weights).map(Vec::len).sum();
        write!(f, "Buffers({pages} pages)")
    }
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

/// One vertex's list on one side, placed in the buffers.
#[derive(Clone, Copy, Debug)]
struct Entry {
    v: VertexId,
    side: usize,
    t: usize,
    w: usize,
    len: usize,
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
    /// The walk's streams' page capacity for `read_bytes` of buffers.
    pub fn cap_for(read_bytes: u64, sides: usize, weights: bool) -> u64 {
        let streams = sides as u64 * (1 + u64::from(weights));
        (read_bytes / PAGE / streams.max(1)).max(2)
    }

    /// Refuses a list holding an id that is not a vertex (a corrupt file
    /// would otherwise index the program's state out of bounds).
    fn check(&self, t: &[u32]) -> Result<()> {
        use plexus_engine::program::GraphView;
        let n = self.g.num_vertices();
        match t.iter().find(|&&x| x as usize >= n) {
            None => Ok(()),
            Some(x) => Err(OocError::corrupt(
                self.g.path(),
                format!("a neighbour list holds vertex {x}, but the graph has {n} vertices"),
            )),
        }
    }

    /// Visits `verts` (ascending) in batches; see the module docs.
    pub fn run(
        &self,
        bufs: &mut Buffers,
        verts: impl Iterator<Item = VertexId>,
        f: &mut Visit<'_>,
    ) -> Result<()> {
        let cap = self.cap_pages;
        for s in 0..self.sides.len() {
            bufs.targets[s].resize(cap as usize, Page([0; PAGE as usize]));
            if self.weights {
                bufs.weights[s].resize(cap as usize, Page([0; PAGE as usize]));
            }
        }
        let mut streams: Vec<Stream> = (0..2 * self.sides.len())
            .map(|_| Stream::default())
            .collect();
        let mut entries: Vec<Entry> = Vec::new();
        for v in verts {
            let fits = |streams: &[Stream]| {
                self.sides.iter().enumerate().all(|(s, side)| {
                    let (a, b) = side.range(v);
                    streams[2 * s].used + streams[2 * s].new_pages(a, b, TARGETS_PER_PAGE) <= cap
                        && (!self.weights
                            || streams[2 * s + 1].used
                                + streams[2 * s + 1].new_pages(a, b, WEIGHTS_PER_PAGE)
                                <= cap)
                })
            };
            if entries.len() >= MAX_ENTRIES || !fits(&streams) {
                self.flush(bufs, &mut streams, &mut entries, f)?;
                if !fits(&streams) {
                    self.giant(bufs, v, f)?;
                    continue;
                }
            }
            for (s, side) in self.sides.iter().enumerate() {
                let (a, b) = side.range(v);
                let t = streams[2 * s].add(a, b, TARGETS_PER_PAGE);
                let w = match self.weights {
                    true => streams[2 * s + 1].add(a, b, WEIGHTS_PER_PAGE),
                    false => 0,
                };
                entries.push(Entry {
                    v,
                    side: s,
                    t,
                    w,
                    len: (b - a) as usize,
                });
            }
        }
        self.flush(bufs, &mut streams, &mut entries, f)
    }

    /// Reads the batch's runs, calls back for its entries, drops the pages.
    fn flush(
        &self,
        bufs: &mut Buffers,
        streams: &mut [Stream],
        entries: &mut Vec<Entry>,
        f: &mut Visit<'_>,
    ) -> Result<()> {
        for (i, st) in streams.iter().enumerate() {
            let (side, is_w) = (self.sides[i / 2], i % 2 == 1);
            for r in &st.runs {
                let range = (r.buf_page * PAGE) as usize..((r.buf_page + r.pages) * PAGE) as usize;
                if is_w {
                    let base = side.weights.unwrap_or(0);
                    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut bufs.weights[i / 2]);
                    self.g
                        .read_pages(base + r.first_page * PAGE, &mut bytes[range])?;
                } else {
                    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut bufs.targets[i / 2]);
                    self.g
                        .read_pages(side.targets + r.first_page * PAGE, &mut bytes[range])?;
                }
            }
        }
        let mut items = Vec::with_capacity(entries.len());
        for e in entries.iter() {
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
                whole: true,
            });
        }
        if !items.is_empty() {
            f(&items);
        }
        for st in streams.iter_mut() {
            st.runs.clear();
            st.used = 0;
        }
        entries.clear();
        Ok(())
    }

    /// Hands `v`'s lists over in pieces that fit the buffers.
    fn giant(&self, bufs: &mut Buffers, v: VertexId, f: &mut Visit<'_>) -> Result<()> {
        let per_piece = (self.cap_pages - 1)
            * match self.weights {
                true => WEIGHTS_PER_PAGE,
                false => TARGETS_PER_PAGE,
            };
        for (s, side) in self.sides.iter().enumerate() {
            let (a, b) = side.range(v);
            if a == b {
                f(&[Item {
                    v,
                    side: s,
                    targets: &[],
                    weights: self.weights.then_some(&[]),
                    whole: false,
                }]);
                continue;
            }
            let mut x = a;
            while x < b {
                let y = (x + per_piece).min(b);
                let piece = |per_page: u64, base: u64, bytes: &mut [u8]| -> Result<usize> {
                    let (p0, p1) = (x / per_page, y.div_ceil(per_page));
                    let len = ((p1 - p0) * PAGE) as usize;
                    self.g.read_pages(base + p0 * PAGE, &mut bytes[..len])?;
                    Ok((x - p0 * per_page) as usize)
                };
                let t = piece(
                    TARGETS_PER_PAGE,
                    side.targets,
                    bytemuck::cast_slice_mut(&mut bufs.targets[s]),
                )?;
                let w = match self.weights {
                    true => piece(
                        WEIGHTS_PER_PAGE,
                        side.weights.unwrap_or(0),
                        bytemuck::cast_slice_mut(&mut bufs.weights[s]),
                    )?,
                    false => 0,
                };
                let len = (y - x) as usize;
                let ws = self
                    .weights
                    .then(|| &weights_of(&bufs.weights[s])[w..w + len]);
                let ts = &targets_of(&bufs.targets[s])[t..t + len];
                self.check(ts)?;
                f(&[Item {
                    v,
                    side: s,
                    targets: ts,
                    weights: ws,
                    whole: false,
                }]);
                x = y;
            }
        }
        Ok(())
    }
}
