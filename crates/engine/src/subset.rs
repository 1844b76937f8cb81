//! [`VertexSubset`]: a set of vertices (a frontier), held either sparse (a
//! list of ids) or dense (a bitmap of `u64` words with a cached count).
//!
//! The representation follows Ligra (Shun & Blelloch, PPoPP'13, §4): a
//! subset whose vertices plus out-edges exceed a threshold (by default
//! `|E| / 20`, see [`crate::edge_map::DEFAULT_THRESHOLD_DIVISOR`]) is best
//! processed dense (pull), a smaller one sparse (push). The edge-map converts
//! a subset to whichever form the chosen direction needs; conversions are
//! parallel and cost `O(n / 64 + len)`.
//!
//! Invariants: every id is `< num_vertices()`; a sparse list holds no
//! duplicates (constructors that accept duplicates remove them); a dense
//! bitmap has `ceil(n / 64)` words, no bit set at or beyond `n`, and `count`
//! equals its number of set bits.
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

/// Lists shorter than this are converted sequentially.
const PAR_CUTOFF: usize = 1 << 14;

/// Number of `u64` words a bitmap over `n` vertices needs.
#[inline]
pub fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// Whether bit `v` of `words` is set.
#[inline(always)]
pub fn bit(words: &[u64], v: VertexId) -> bool {
    (words[(v >> 6) as usize] >> (v & 63)) & 1 == 1
}

/// A subset of the vertices `0..n` of a graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexSubset {
    n: usize,
    repr: Repr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    /// Distinct ids, in any order (see [`VertexSubset::is_sorted_hint`]).
    Sparse { ids: Vec<VertexId>, sorted: bool },
    /// One bit per vertex plus the number of set bits.
    Dense { words: Vec<u64>, count: usize },
}

impl VertexSubset {
    /// The empty subset of `0..n`.
    pub fn empty(n: usize) -> Self {
        VertexSubset {
            n,
            repr: Repr::Sparse {
                ids: Vec::new(),
                sorted: true,
            },
        }
    }

    /// The subset `{v}` of `0..n`. Callers check `v < n`; an id out of range
    /// gives the empty subset.
    pub fn from_vertex(n: usize, v: VertexId) -> Self {
        if (v as usize) < n {
            VertexSubset {
                n,
                repr: Repr::Sparse {
                    ids: vec![v],
                    sorted: true,
                },
            }
        } else {
            Self::empty(n)
        }
    }

    /// Every vertex of `0..n`, dense.
    pub fn all(n: usize) -> Self {
        let mut words = vec![u64::MAX; words_for(n)];
        clear_tail(&mut words, n);
        VertexSubset {
            n,
            repr: Repr::Dense { words, count: n },
        }
    }

    /// A sparse subset from distinct ids (in any order). Ids `>= n` and
    /// duplicates are removed, so the invariants hold for any input.
    pub fn from_ids(n: usize, ids: Vec<VertexId>) -> Self {
        let mut ids = ids;
        ids.retain(|&v| (v as usize) < n);
        if ids.len() > 1 {
            if ids.len() >= PAR_CUTOFF {
                ids.par_sort_unstable();
            } else {
                ids.sort_unstable();
            }
            ids.dedup();
        }
        VertexSubset {
            n,
            repr: Repr::Sparse { ids, sorted: true },
        }
    }

    /// This subset with each vertex once: a sparse list that may repeat a
    /// vertex (a push lists a vertex once per message that changed it) is
    /// sorted and deduplicated; a dense subset is returned as it is.
    pub fn deduplicated(self) -> Self {
        match self.repr {
            Repr::Sparse { ids, .. } => VertexSubset::from_ids(self.n, ids),
            Repr::Dense { .. } => self,
        }
    }

    /// A sparse subset from ids the caller guarantees distinct and `< n`
    /// (for example the output of an edge-map whose updates return `true`
    /// once per vertex). Checked in debug builds only.
    pub fn from_distinct_ids(n: usize, ids: Vec<VertexId>) -> Self {
        debug_assert!(ids.iter().all(|&v| (v as usize) < n));
        VertexSubset {
            n,
            repr: Repr::Sparse { ids, sorted: false },
        }
    }

    /// A dense subset from a bitmap. Bits at or beyond `n` are cleared; a
    /// bitmap of the wrong length is padded or cut to `ceil(n / 64)` words.
    pub fn from_bitmap(n: usize, words: Vec<u64>) -> Self {
        let mut words = words;
        words.resize(words_for(n), 0);
        clear_tail(&mut words, n);
        let count = popcount(&words);
        VertexSubset {
            n,
            repr: Repr::Dense { words, count },
        }
    }

    /// A dense subset from a bitmap whose count the caller already knows.
    pub(crate) fn from_bitmap_counted(n: usize, words: Vec<u64>, count: usize) -> Self {
        debug_assert_eq!(words.len(), words_for(n));
        debug_assert_eq!(popcount(&words), count);
        VertexSubset {
            n,
            repr: Repr::Dense { words, count },
        }
    }

    /// The vertices `v` in `0..n` with `pred(v)`, computed in parallel, dense.
    pub fn from_fn(n: usize, pred: impl Fn(VertexId) -> bool + Sync) -> Self {
        let mut words = vec![0u64; words_for(n)];
        let count = words
            .par_iter_mut()
            .enumerate()
            .map(|(i, w)| {
                let lo = i * 64;
                let hi = (lo + 64).min(n);
                let mut x = 0u64;
                for v in lo..hi {
                    if pred(v as VertexId) {
                        x |= 1 << (v - lo);
                    }
                }
                *w = x;
                x.count_ones() as usize
            })
            .sum();
        VertexSubset {
            n,
            repr: Repr::Dense { words, count },
        }
    }

    /// Size of the universe `n`.
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.n
    }

    /// Number of vertices in the subset.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Sparse { ids, .. } => ids.len(),
            Repr::Dense { count, .. } => *count,
        }
    }

    /// Whether the subset is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the subset is held as a bitmap.
    #[inline]
    pub fn is_dense(&self) -> bool {
        matches!(self.repr, Repr::Dense { .. })
    }

    /// Whether a sparse subset's list is known to be sorted ascending
    /// (always true for dense subsets, whose iteration is ascending).
    pub fn is_sorted_hint(&self) -> bool {
        match &self.repr {
            Repr::Sparse { sorted, .. } => *sorted,
            Repr::Dense { .. } => true,
        }
    }

    /// Whether `v` is in the subset: `O(1)` dense, `O(log len)` sorted
    /// sparse, `O(len)` unsorted sparse. Ids `>= n` are never members.
    pub fn contains(&self, v: VertexId) -> bool {
        if v as usize >= self.n {
            return false;
        }
        match &self.repr {
            Repr::Sparse { ids, sorted: true } => ids.binary_search(&v).is_ok(),
            Repr::Sparse { ids, sorted: false } => ids.contains(&v),
            Repr::Dense { words, .. } => bit(words, v),
        }
    }

    /// The id list of a sparse subset.
    pub fn as_sparse(&self) -> Option<&[VertexId]> {
        match &self.repr {
            Repr::Sparse { ids, .. } => Some(ids),
            Repr::Dense { .. } => None,
        }
    }

    /// The bitmap of a dense subset (`ceil(n / 64)` words).
    pub fn as_bitmap(&self) -> Option<&[u64]> {
        match &self.repr {
            Repr::Sparse { .. } => None,
            Repr::Dense { words, .. } => Some(words),
        }
    }

    /// Converts to a bitmap in place (parallel for long lists).
    pub fn make_dense(&mut self) {
        if let Repr::Sparse { ids, .. } = &self.repr {
            let words = ids_to_bitmap(self.n, ids);
            let count = ids.len();
            self.repr = Repr::Dense { words, count };
        }
    }

    /// Converts to a sorted id list in place (parallel over words).
    pub fn make_sparse(&mut self) {
        if let Repr::Dense { words, count } = &self.repr {
            let ids = bitmap_to_ids(words, *count);
            self.repr = Repr::Sparse { ids, sorted: true };
        }
    }

    /// This subset as a bitmap.
    pub fn to_dense(&self) -> VertexSubset {
        let mut s = self.clone();
        s.make_dense();
        s
    }

    /// This subset as an id list (sorted when converted from a bitmap).
    pub fn to_sparse(&self) -> VertexSubset {
        let mut s = self.clone();
        s.make_sparse();
        s
    }

    /// Iterates the members: ascending for dense and sorted subsets, list
    /// order otherwise.
    pub fn iter(&self) -> Iter<'_> {
        match &self.repr {
            Repr::Sparse { ids, .. } => Iter::Sparse(ids.iter()),
            Repr::Dense { words, .. } => Iter::Dense {
                words,
                index: 0,
                current: words.first().copied().unwrap_or(0),
            },
        }
    }

    /// The members as a sorted vector.
    pub fn to_sorted_vec(&self) -> Vec<VertexId> {
        match &self.repr {
            Repr::Sparse { ids, sorted } => {
                let mut v = ids.clone();
                if !sorted {
                    v.sort_unstable();
                }
                v
            }
            Repr::Dense { words, count } => bitmap_to_ids(words, *count),
        }
    }

    /// Sum of the out-degrees of the members in `g` (Ligra's `|E_active|`),
    /// computed in parallel.
    pub fn out_degree_sum(&self, g: &Graph) -> u64 {
        let out = g.out();
        match &self.repr {
            Repr::Sparse { ids, .. } => ids
                .par_iter()
                .with_min_len(1024)
                .map(|&v| out.degree(v) as u64)
                .sum(),
            Repr::Dense { words, count } => {
                if *count == self.n {
                    return g.num_arcs();
                }
                let offs = out.offsets();
                words
                    .par_iter()
                    .enumerate()
                    .with_min_len(64)
                    .map(|(i, &w)| {
                        let mut x = w;
                        let mut s = 0u64;
                        while x != 0 {
                            let v = i * 64 + x.trailing_zeros() as usize;
                            s += offs[v + 1] - offs[v];
                            x &= x - 1;
                        }
                        s
                    })
                    .sum()
            }
        }
    }
}

impl<'a> IntoIterator for &'a VertexSubset {
    type Item = VertexId;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over a [`VertexSubset`].
pub enum Iter<'a> {
    /// Over an id list.
    Sparse(std::slice::Iter<'a, VertexId>),
    /// Over a bitmap, ascending.
    Dense {
        words: &'a [u64],
        index: usize,
        current: u64,
    },
}

impl Iterator for Iter<'_> {
    type Item = VertexId;
    fn next(&mut self) -> Option<VertexId> {
        match self {
            Iter::Sparse(it) => it.next().copied(),
            Iter::Dense {
                words,
                index,
                current,
            } => loop {
                if *current != 0 {
                    let v = (*index * 64) as u32 + current.trailing_zeros();
                    *current &= *current - 1;
                    return Some(v);
                }
                *index += 1;
                *current = *words.get(*index)?;
            },
        }
    }
}

/// Clears the bits at and beyond `n` in the last word.
fn clear_tail(words: &mut [u64], n: usize) {
    if n & 63 != 0 {
        if let Some(last) = words.last_mut() {
            *last &= (1u64 << (n % 64)) - 1;
        }
    }
}

fn popcount(words: &[u64]) -> usize {
    words
        .par_iter()
        .with_min_len(1024)
        .map(|w| w.count_ones() as usize)
        .sum()
}

/// Builds a bitmap from distinct ids `< n`.
fn ids_to_bitmap(n: usize, ids: &[VertexId]) -> Vec<u64> {
    if ids.len() < PAR_CUTOFF {
        let mut words = vec![0u64; words_for(n)];
        for &v in ids {
            words[(v >> 6) as usize] |= 1 << (v & 63);
        }
        words
    } else {
        use std::sync::atomic::{AtomicU64, Ordering};
        let words: Vec<AtomicU64> = (0..words_for(n))
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        ids.par_iter().with_min_len(1024).for_each(|&v| {
            words[(v >> 6) as usize].fetch_or(1 << (v & 63), Ordering::Relaxed);
        });
        words.into_par_iter().map(AtomicU64::into_inner).collect()
    }
}

/// Lists the set bits of `words` ascending; `count` is their number.
fn bitmap_to_ids(words: &[u64], count: usize) -> Vec<VertexId> {
    let expand = |i: usize, mut x: u64, out: &mut Vec<VertexId>| {
        while x != 0 {
            out.push((i * 64) as u32 + x.trailing_zeros());
            x &= x - 1;
        }
    };
    if words.len() * 64 < PAR_CUTOFF * 4 {
        let mut out = Vec::with_capacity(count);
        for (i, &w) in words.iter().enumerate() {
            expand(i, w, &mut out);
        }
        return out;
    }
    // Parallel: blocks of words, each expanded into its own vector at the
    // offset given by a prefix sum of the blocks' popcounts.
    const BLOCK: usize = 1024;
    let counts: Vec<usize> = words
        .par_chunks(BLOCK)
        .map(|b| b.iter().map(|w| w.count_ones() as usize).sum())
        .collect();
    let mut out = vec![0 as VertexId; count];
    let mut slices = Vec::with_capacity(counts.len());
    let mut rest: &mut [VertexId] = &mut out;
    for &c in &counts {
        let (head, tail) = rest.split_at_mut(c);
        slices.push(head);
        rest = tail;
    }
    words
        .par_chunks(BLOCK)
        .zip(slices.into_par_iter())
        .enumerate()
        .for_each(|(b, (ws, dst))| {
            let mut k = 0;
            for (j, &w) in ws.iter().enumerate() {
                let mut x = w;
                while x != 0 {
                    dst[k] = ((b * BLOCK + j) * 64) as u32 + x.trailing_zeros();
                    k += 1;
                    x &= x - 1;
                }
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_trip_small_and_large() {
        for n in [0usize, 1, 63, 64, 65, 1000, 300_000] {
            let ids: Vec<VertexId> = (0..n as u32)
                .filter(|v| v % 7 == 3 || v % 64 == 63)
                .collect();
            let s = VertexSubset::from_ids(n, ids.iter().rev().copied().collect());
            assert_eq!(s.len(), ids.len());
            let d = s.to_dense();
            assert!(d.is_dense());
            assert_eq!(d.len(), ids.len());
            assert_eq!(d.to_sorted_vec(), ids);
            assert_eq!(d.iter().collect::<Vec<_>>(), ids);
            assert_eq!(d.to_sparse().as_sparse().unwrap(), &ids[..]);
            for &v in ids.iter().take(50) {
                assert!(s.contains(v) && d.contains(v));
            }
            assert!(!d.contains(n as u32));
        }
    }

    #[test]
    fn all_and_from_vertex_and_from_fn_agree() {
        let n = 130;
        let a = VertexSubset::all(n);
        assert_eq!(a.len(), n);
        assert_eq!(a.iter().count(), n);
        let f = VertexSubset::from_fn(n, |v| v % 2 == 0);
        assert_eq!(f.len(), 65);
        let one = VertexSubset::from_vertex(n, 129);
        assert_eq!(one.to_dense().to_sorted_vec(), vec![129]);
        assert!(VertexSubset::from_vertex(n, 130).is_empty());
    }

    #[test]
    fn from_ids_removes_duplicates_and_out_of_range_ids() {
        let s = VertexSubset::from_ids(5, vec![4, 1, 4, 9, 1]);
        assert_eq!(s.to_sorted_vec(), vec![1, 4]);
        let d = VertexSubset::from_bitmap(3, vec![u64::MAX, 5]);
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn out_degree_sum_counts_active_out_edges() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (0, 2), (1, 2), (3, 0)],
            &plexus_graph::BuildOptions::directed(),
        )
        .unwrap();
        let s = VertexSubset::from_ids(4, vec![0, 3]);
        assert_eq!(s.out_degree_sum(&g), 3);
        assert_eq!(s.to_dense().out_degree_sum(&g), 3);
        assert_eq!(VertexSubset::all(4).out_degree_sum(&g), 4);
    }
}
