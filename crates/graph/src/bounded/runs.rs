//! Arcs sorted in memory-sized runs, spilled to scratch files and merged
//! back in order (k-way, in several passes when there are more runs than
//! read buffers fit the budget).
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::PathBuf;

use rayon::prelude::*;

use super::disk::{ScratchReader, ScratchWriter};
use crate::types::{VertexId, Weight};
use crate::Result;

/// An arc `u → v` with weight `w` (0 when unweighted).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arc {
    pub u: VertexId,
    pub v: VertexId,
    pub w: Weight,
}

/// The order of the lists: by source, target, then weight by
/// `total_cmp` (the in-memory builder's order of kept duplicates).
/// Arcs that compare equal have the same bits, so any sort gives the
/// same sequence.
#[inline]
pub(crate) fn arc_order(a: &Arc, b: &Arc) -> Ordering {
    a.u.cmp(&b.u).then(a.v.cmp(&b.v)).then(a.w.total_cmp(&b.w))
}

/// Bytes of an arc on disk: 8 without a weight, 16 with one.
pub(crate) fn record_bytes(weighted: bool) -> usize {
    if weighted {
        16
    } else {
        8
    }
}

/// Writes `a` as a record.
#[inline]
pub(crate) fn put_arc(w: &mut ScratchWriter, a: &Arc, weighted: bool) -> Result<()> {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&a.u.to_le_bytes());
    b[4..8].copy_from_slice(&a.v.to_le_bytes());
    b[8..].copy_from_slice(&a.w.to_le_bytes());
    w.put(&b[..record_bytes(weighted)])
}

/// Reads the next record, `None` at the end.
#[inline]
pub(crate) fn take_arc(r: &mut ScratchReader, weighted: bool) -> Result<Option<Arc>> {
    let mut b = [0u8; 16];
    if !r.take(&mut b[..record_bytes(weighted)])? {
        return Ok(None);
    }
    let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let w = if weighted {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[8..]);
        f64::from_le_bytes(x)
    } else {
        0.0
    };
    Ok(Some(Arc {
        u: word(0),
        v: word(4),
        w,
    }))
}

/// Arcs gathered into sorted runs of at most `cap` arcs in scratch files
/// named `dir/.scratch-TAG-K`.
pub(crate) struct Runs {
    dir: PathBuf,
    tag: &'static str,
    weighted: bool,
    cap: usize,
    buf: Vec<Arc>,
    files: Vec<PathBuf>,
    made: usize,
    /// Bytes of each run's write buffer.
    io_buf: usize,
}

/// How a merge may use memory: at most `fan_in` runs at once, each read
/// through `read_buf` bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MergePlan {
    pub fan_in: usize,
    pub read_buf: usize,
}

impl Runs {
    /// Runs of at most `cap ≥ 1` arcs.
    pub(crate) fn new(dir: PathBuf, tag: &'static str, weighted: bool, cap: usize) -> Self {
        Runs {
            dir,
            tag,
            weighted,
            cap: cap.max(1),
            buf: Vec::new(),
            files: Vec::new(),
            made: 0,
            io_buf: 1 << 20,
        }
    }

    /// Adds an arc; a full buffer is sorted and spilled.
    #[inline]
    pub(crate) fn push(&mut self, a: Arc) -> Result<()> {
        if self.buf.len() == self.cap {
            self.spill()?;
        }
        if self.buf.len() == self.buf.capacity() {
            // Grow by doubling, but never past `cap`.
            let more = self.buf.len().max(1024).min(self.cap - self.buf.len());
            self.buf.reserve_exact(more);
        }
        self.buf.push(a);
        Ok(())
    }

    fn next_path(&mut self) -> PathBuf {
        self.made += 1;
        self.dir
            .join(format!(".scratch-{}-{}", self.tag, self.made))
    }

    fn spill(&mut self) -> Result<()> {
        self.buf.par_sort_unstable_by(arc_order);
        let path = self.next_path();
        let mut w = ScratchWriter::create(path, self.io_buf)?;
        for a in &self.buf {
            put_arc(&mut w, a, self.weighted)?;
        }
        self.files.push(w.finish()?.0);
        self.buf.clear();
        Ok(())
    }

    /// Arcs held in memory (not yet spilled).
    pub(crate) fn in_memory(&self) -> usize {
        self.buf.len()
    }

    /// Runs spilled so far.
    pub(crate) fn spilled(&self) -> usize {
        self.files.len()
    }

    /// Calls `sink` on every arc in [`arc_order`]. Arcs that never left
    /// memory are sorted there; otherwise the last buffer is spilled too
    /// and runs are merged `plan.fan_in` at a time until one pass remains.
    pub(crate) fn merge(
        mut self,
        plan: MergePlan,
        mut sink: impl FnMut(Arc) -> Result<()>,
    ) -> Result<()> {
        if self.files.is_empty() {
            self.buf.par_sort_unstable_by(arc_order);
            for a in std::mem::take(&mut self.buf) {
                sink(a)?;
            }
            return Ok(());
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        self.buf = Vec::new();
        let fan_in = plan.fan_in.max(2);
        while self.files.len() > fan_in {
            let group: Vec<PathBuf> = self.files.drain(..fan_in).collect();
            let path = self.next_path();
            let mut w = ScratchWriter::create(path, plan.read_buf)?;
            let weighted = self.weighted;
            merge_files(group, weighted, plan.read_buf, |a| {
                put_arc(&mut w, &a, weighted)
            })?;
            self.files.push(w.finish()?.0);
        }
        let files = std::mem::take(&mut self.files);
        merge_files(files, self.weighted, plan.read_buf, sink)
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// An arc at the head of run `run`, ordered for a min-heap.
struct Head {
    arc: Arc,
    run: usize,
}
impl PartialEq for Head {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Head {
    fn cmp(&self, o: &Self) -> Ordering {
        arc_order(&o.arc, &self.arc).then(o.run.cmp(&self.run))
    }
}

/// Merges sorted run files (each removed once read) into `sink`.
fn merge_files(
    files: Vec<PathBuf>,
    weighted: bool,
    read_buf: usize,
    mut sink: impl FnMut(Arc) -> Result<()>,
) -> Result<()> {
    let mut readers = Vec::with_capacity(files.len());
    for f in files {
        readers.push(ScratchReader::open(f, read_buf)?);
    }
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (run, r) in readers.iter_mut().enumerate() {
        if let Some(arc) = take_arc(r, weighted)? {
            heap.push(Head { arc, run });
        }
    }
    while let Some(mut top) = heap.peek_mut() {
        sink(top.arc)?;
        match take_arc(&mut readers[top.run], weighted)? {
            Some(arc) => top.arc = arc,
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_in_order_in_memory_and_through_many_passes() {
        let dir = tempfile::tempdir().unwrap();
        let arcs: Vec<Arc> = (0..5000u32)
            .map(|i| Arc {
                u: (i * 7919) % 97,
                v: (i * 104_729) % 89,
                w: f64::from(i % 7) - 3.0,
            })
            .collect();
        let mut want = arcs.clone();
        want.sort_by(arc_order);
        for (cap, fan_in) in [(usize::MAX, 2), (100, 3), (7, 2), (4999, 64)] {
            let mut r = Runs::new(dir.path().to_path_buf(), "t", true, cap.min(1 << 20));
            for a in &arcs {
                r.push(*a).unwrap();
            }
            let mut got = Vec::new();
            let plan = MergePlan {
                fan_in,
                read_buf: 4096,
            };
            r.merge(plan, |a| {
                got.push(a);
                Ok(())
            })
            .unwrap();
            assert_eq!(got.len(), want.len());
            assert!(got
                .iter()
                .zip(&want)
                .all(|(a, b)| arc_order(a, b) == Ordering::Equal));
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }
}
