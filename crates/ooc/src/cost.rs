//! The out-of-core push/pull rule: the direction that moves fewer bytes.
//!
//! In memory, Ligra's rule compares edges: pull when the frontier and its
//! out-edges exceed `|E| / 20`, because a pull step may stop scanning a
//! vertex's in-list early. Out of core that saving does not exist: a pull
//! step reads every page of the gathered lists of every vertex whose `cond`
//! holds, whether or not its signal stops early, and a push step reads the
//! pages of the frontier's lists and moves its messages through the
//! interval logs. So the executor estimates, from the offsets it holds in
//! memory, the bytes each direction would move and takes the cheaper one:
//!
//! - **push:** the distinct pages (neighbours, and weights when the walk
//!   reads them) holding the frontier's lists on the sides a push walks,
//!   plus the log bytes its messages could spill: one entry per edge, less
//!   what the interval buffers hold, written once and read back once
//!   ([`Estimate::log_bytes`]; combining is not counted, so the estimate
//!   is an upper bound);
//! - **pull:** the distinct pages holding the gathered lists of the
//!   vertices whose `cond` holds (one pass over every vertex's `cond`,
//!   stopped as soon as the pull is known to cost more than the push).
//!
//! A pull needs that O(n) pass, which costs about as much as reading one
//! byte per vertex; a push estimated at no more than that pushes without
//! the pass. Equal estimates fall back to Ligra's rule. Either direction
//! gives the same result by the contract (law 3 and 4; the conformance
//! adversary picks directions at random), so the rule changes only cost.
use std::mem::{needs_drop, size_of};
use std::sync::atomic::{AtomicU64, Ordering};

use plexus_engine::program::VertexProgram;
use plexus_engine::subset::VertexSubset;
use plexus_graph::VertexId;
use rayon::prelude::*;
use serde::Serialize;

use crate::file::{Side, PAGE};

/// Neighbours (`u32`) per page.
pub(crate) const TARGETS_PER_PAGE: u64 = PAGE / 4;
/// Weights (`f64`) per page.
pub(crate) const WEIGHTS_PER_PAGE: u64 = PAGE / 8;
/// Vertices per piece of the parallel `cond` pass.
const PULL_CHUNK: usize = 1 << 16;

/// What the rule estimated for one superstep, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Estimate {
    /// Bytes of the distinct pages holding the frontier's lists on the
    /// sides a push walks (the active vertices' lists).
    pub frontier_bytes: u64,
    /// Log bytes a push could write and read back: `2 × max(0, edges ×
    /// entry − buffered)`, where `buffered` is every interval's buffer
    /// (0 for a message type that never spills).
    pub log_bytes: u64,
    /// Bytes of the distinct pages a pull would read, when the pass ran
    /// to the end; `None` when the push was cheaper than the pass, or the
    /// pass stopped once the pull was known to cost more than the push.
    pub pull_bytes: Option<u64>,
}

impl Estimate {
    /// What the push moves: its pages and its logs.
    pub fn push_bytes(&self) -> u64 {
        self.frontier_bytes.saturating_add(self.log_bytes)
    }
}

/// A set of pages of one stream, counted as they are added.
struct PageSet {
    words: Vec<u64>,
    count: u64,
}

impl PageSet {
    /// A set over the pages of `elements` elements, `per_page` to a page.
    fn new(elements: u64, per_page: u64) -> Self {
        PageSet {
            words: vec![0; elements.div_ceil(per_page).div_ceil(64) as usize],
            count: 0,
        }
    }

    /// Adds the pages holding elements `a..b`.
    fn add(&mut self, a: u64, b: u64, per_page: u64) {
        for p in a / per_page..b.div_ceil(per_page) {
            let (w, bit) = ((p / 64) as usize, 1u64 << (p % 64));
            if self.words[w] & bit == 0 {
                self.words[w] |= bit;
                self.count += 1;
            }
        }
    }
}

/// Pages of `a..b` past the page `end` (exclusive) already counted, for
/// ranges visited in ascending order; moves `end` past them.
#[inline]
fn new_pages(a: u64, b: u64, per_page: u64, end: &mut u64) -> u64 {
    if a == b {
        return 0;
    }
    let (p0, p1) = ((a / per_page).max(*end), b.div_ceil(per_page));
    *end = (*end).max(p1);
    p1.saturating_sub(p0)
}

/// The push side of the estimate: `(bytes of the distinct pages holding
/// the lists of `frontier` on `sides`, edges on those lists)`, weights'
/// pages counted when `weights`.
pub(crate) fn frontier_pages(
    sides: &[&Side],
    weights: bool,
    frontier: &VertexSubset,
) -> (u64, u64) {
    let mut pages = 0u64;
    let mut edges = 0u64;
    for side in sides {
        let m = side.offsets.last().copied().unwrap_or(0);
        let mut t = PageSet::new(m, TARGETS_PER_PAGE);
        let mut w = weights.then(|| PageSet::new(m, WEIGHTS_PER_PAGE));
        for v in frontier.iter() {
            let (a, b) = side.range(v);
            edges += b - a;
            t.add(a, b, TARGETS_PER_PAGE);
            if let Some(w) = w.as_mut() {
                w.add(a, b, WEIGHTS_PER_PAGE);
            }
        }
        pages += t.count + w.map_or(0, |w| w.count);
    }
    (pages * PAGE, edges)
}

/// Log bytes a push of `edges` messages of `P` could write and read back
/// with `buffered` bytes of interval buffers (see [`Estimate::log_bytes`]).
pub(crate) fn log_bytes<P: VertexProgram>(edges: u64, buffered: u64) -> u64 {
    if needs_drop::<P::Msg>() {
        return 0;
    }
    let entry = size_of::<(VertexId, P::Msg)>() as u64;
    2 * edges.saturating_mul(entry).saturating_sub(buffered)
}

/// The pull side of the estimate: bytes of the distinct pages holding the
/// lists on `sides` of the vertices whose `cond` holds, or `None` once the
/// count reaches `limit` (the pass stops there). Pieces of the pass run in
/// parallel; a page shared by two pieces counts twice (at most one page a
/// piece and stream more than exact).
pub(crate) fn pull_pages<P: VertexProgram>(
    p: &P,
    sides: &[&Side],
    weights: bool,
    n: usize,
    limit: u64,
) -> Option<u64> {
    let total = AtomicU64::new(0);
    (0..n.div_ceil(PULL_CHUNK)).into_par_iter().for_each(|c| {
        if total.load(Ordering::Relaxed) >= limit {
            return;
        }
        let mut ends = vec![0u64; 2 * sides.len()];
        let mut pages = 0u64;
        for v in c * PULL_CHUNK..((c + 1) * PULL_CHUNK).min(n) {
            let v = v as VertexId;
            if sides.iter().all(|s| s.range(v).0 == s.range(v).1) || !p.cond(v) {
                continue;
            }
            for (s, side) in sides.iter().enumerate() {
                let (a, b) = side.range(v);
                pages += new_pages(a, b, TARGETS_PER_PAGE, &mut ends[2 * s]);
                if weights {
                    pages += new_pages(a, b, WEIGHTS_PER_PAGE, &mut ends[2 * s + 1]);
                }
            }
        }
        total.fetch_add(pages * PAGE, Ordering::Relaxed);
    });
    let total = total.into_inner();
    (total < limit).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(degrees: &[u64]) -> Side {
        let mut offsets = vec![0u64];
        for d in degrees {
            offsets.push(offsets.last().unwrap() + d);
        }
        Side {
            offsets: plexus_graph::Section::owned(offsets),
            targets: 0,
            weights: None,
        }
    }

    #[test]
    fn pages_shared_by_several_lists_count_once() {
        // Ten lists of 100 neighbours: 1,000 elements on one page, and a
        // list of 2,048 from element 1,000 (pages 0 to 2).
        let mut d = vec![100u64; 10];
        d.push(2048);
        let s = side(&d);
        let f = VertexSubset::from_ids(11, (0..10).collect());
        assert_eq!(frontier_pages(&[&s], false, &f), (PAGE, 1000));
        let f = VertexSubset::from_ids(11, vec![10, 3]);
        assert_eq!(frontier_pages(&[&s], false, &f), (3 * PAGE, 2148));
        // Weights: 512 to a page, elements 0..3,048 on pages 0 to 5.
        let f = VertexSubset::from_ids(11, (0..11).collect());
        assert_eq!(frontier_pages(&[&s], true, &f), ((3 + 6) * PAGE, 3048));
    }

    #[test]
    fn ascending_ranges_count_each_page_once() {
        let mut end = 0;
        assert_eq!(new_pages(0, 10, 1024, &mut end), 1);
        assert_eq!(new_pages(10, 20, 1024, &mut end), 0);
        assert_eq!(new_pages(20, 3000, 1024, &mut end), 2);
        assert_eq!(new_pages(3000, 3000, 1024, &mut end), 0);
        assert_eq!(new_pages(5000, 5001, 1024, &mut end), 1);
    }

    #[test]
    fn logs_cost_what_the_buffers_cannot_hold_twice() {
        struct Bfsish;
        impl VertexProgram for Bfsish {
            type Msg = u32;
            fn combine(&self, a: u32, b: u32) -> u32 {
                a.min(b)
            }
            fn sparse_signal(&self, v: VertexId) -> Option<u32> {
                Some(v)
            }
            fn sparse_slot(&self, _: VertexId, _: u32) -> bool {
                false
            }
            fn dense_signal(
                &self,
                _: VertexId,
                _: plexus_engine::program::InEdges<'_>,
            ) -> Option<u32> {
                None
            }
            fn dense_slot(&self, _: VertexId, _: u32) -> bool {
                false
            }
        }
        assert_eq!(log_bytes::<Bfsish>(100, 1000), 0);
        assert_eq!(log_bytes::<Bfsish>(1000, 1000), 2 * 7000);
    }
}
