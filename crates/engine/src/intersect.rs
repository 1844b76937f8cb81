//! Intersections of sorted vertex lists, the inner loop of triangle
//! counting and local clustering.
//!
//! Both lists must be **strictly increasing** (sets, as the simple view's
//! and the rank-space lists are). On x86-64 with AVX2 (checked at run
//! time), the lists are compared 8 × 8 at a time: a block of 8 from each,
//! all 64 pairs compared by rotating one block (Schlegel, Willhalm &
//! Lehner's block-wise all-pairs compare, "Fast sorted-set intersection
//! using SIMD instructions", ADMS 2011, widened to 256 bits), then the
//! block with the smaller last element moves on (both, when they end
//! equal). Each pair of blocks is compared at most once, and two equal
//! elements' blocks are always current together, so every common element
//! is found exactly once. What is left when either list has fewer than 8
//! elements is merged by scalar code. Elsewhere everything is scalar.

use plexus_graph::VertexId;

/// Lists shorter than this (either one) are merged by scalar code: a block
/// compare needs 8 from each.
const BLOCK: usize = 8;

/// `|a ∩ b|` of two strictly increasing lists.
#[inline]
pub fn count_common(a: &[VertexId], b: &[VertexId]) -> u64 {
    if a.len() < BLOCK || b.len() < BLOCK {
        return count_scalar(a, b);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only
        // requirement of a `#[target_feature(enable = "avx2")]` function.
        #[allow(unsafe_code)]
        let (c, i, j) = unsafe { avx2::blocks::<false>(a, b, &mut |_| {}) };
        return c + count_scalar(&a[i..], &b[j..]);
    }
    count_scalar(a, b)
}

/// Calls `found(x)` for every `x` in both strictly increasing lists (in no
/// particular order) and returns how many there were.
#[inline]
pub fn for_each_common(a: &[VertexId], b: &[VertexId], mut found: impl FnMut(VertexId)) -> u64 {
    if a.len() < BLOCK || b.len() < BLOCK {
        return for_each_scalar(a, b, found);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: as in `count_common`: AVX2 is present.
        #[allow(unsafe_code)]
        let (c, i, j) = unsafe { avx2::blocks::<true>(a, b, &mut found) };
        return c + for_each_scalar(&a[i..], &b[j..], found);
    }
    for_each_scalar(a, b, found)
}

/// `|a ∩ b|` by a branch-free merge (equal elements move both cursors).
#[inline]
fn count_scalar(a: &[VertexId], b: &[VertexId]) -> u64 {
    let (mut i, mut j, mut c) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        i += (x <= y) as usize;
        j += (y <= x) as usize;
        c += (x == y) as u64;
    }
    c
}

/// [`for_each_common`] by a plain merge.
#[inline]
fn for_each_scalar(a: &[VertexId], b: &[VertexId], mut found: impl FnMut(VertexId)) -> u64 {
    let (mut i, mut j, mut c) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        if x < y {
            i += 1;
        } else if y < x {
            j += 1;
        } else {
            found(x);
            c += 1;
            i += 1;
            j += 1;
        }
    }
    c
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use std::arch::x86_64::*;

    use plexus_graph::VertexId;

    use super::BLOCK;

    /// Lanes of `a` equal to a lane of `b` in the same 128-bit half, as
    /// all-ones lanes: `a` against `b` and its 3 rotations within each half.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn in_half_matches(a: __m256i, b: __m256i) -> __m256i {
        let eq = |x: __m256i| _mm256_cmpeq_epi32(a, x);
        _mm256_or_si256(
            _mm256_or_si256(eq(b), eq(_mm256_shuffle_epi32::<0b00_11_10_01>(b))),
            _mm256_or_si256(
                eq(_mm256_shuffle_epi32::<0b01_00_11_10>(b)),
                eq(_mm256_shuffle_epi32::<0b10_01_00_11>(b)),
            ),
        )
    }

    /// Lanes of `a` (a bit each, bit `k` for `a[k]`) equal to some lane of
    /// `b`: [`in_half_matches`] against `b` and against `b` with its halves
    /// swapped, which together compare all 64 pairs.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn matches(a: __m256i, b: __m256i) -> u32 {
        let swapped = _mm256_permute2x128_si256::<0x01>(b, b);
        let m = _mm256_or_si256(in_half_matches(a, b), in_half_matches(a, swapped));
        _mm256_movemask_ps(_mm256_castsi256_ps(m)) as u32
    }

    /// Block-compares `a` and `b` while both have 8 elements left; returns
    /// the common elements found and the cursors where it stopped (the
    /// rest, `a[i..]` × `b[j..]`, is still to be merged). With `EACH`,
    /// calls `found` for each common element; without, only counts.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn blocks<const EACH: bool>(
        a: &[VertexId],
        b: &[VertexId],
        found: &mut impl FnMut(VertexId),
    ) -> (u64, usize, usize) {
        let (mut i, mut j, mut c) = (0usize, 0usize, 0u64);
        while i + BLOCK <= a.len() && j + BLOCK <= b.len() {
            // SAFETY: `i + 8 ≤ a.len()` and `j + 8 ≤ b.len()` (the loop
            // condition), so both 32-byte unaligned loads and the reads of
            // the blocks' last elements stay inside the slices.
            let (va, vb, a_last, b_last) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().add(i).cast::<__m256i>()),
                    _mm256_loadu_si256(b.as_ptr().add(j).cast::<__m256i>()),
                    *a.get_unchecked(i + BLOCK - 1),
                    *b.get_unchecked(j + BLOCK - 1),
                )
            };
            let mut m = matches(va, vb);
            c += u64::from(m.count_ones());
            if EACH {
                while m != 0 {
                    found(a[i + m.trailing_zeros() as usize]);
                    m &= m - 1;
                }
            }
            i += BLOCK * usize::from(a_last <= b_last);
            j += BLOCK * usize::from(b_last <= a_last);
        }
        (c, i, j)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    fn set(xs: &[u32]) -> Vec<u32> {
        xs.iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    fn expected(a: &[u32], b: &[u32]) -> Vec<u32> {
        let b: BTreeSet<u32> = b.iter().copied().collect();
        a.iter().copied().filter(|x| b.contains(x)).collect()
    }

    fn check(a: &[u32], b: &[u32]) {
        let want = expected(a, b);
        assert_eq!(count_common(a, b), want.len() as u64, "{a:?} ∩ {b:?}");
        assert_eq!(count_scalar(a, b), want.len() as u64);
        let mut got = Vec::new();
        assert_eq!(for_each_common(a, b, |x| got.push(x)), want.len() as u64);
        got.sort_unstable();
        assert_eq!(got, want, "{a:?} ∩ {b:?}");
    }

    #[test]
    fn blocks_ending_equal_and_tails_are_counted_once() {
        let a: Vec<u32> = (0..40).collect();
        check(&a, &a);
        let evens: Vec<u32> = (0..80).step_by(2).collect();
        check(&a, &evens);
        check(&evens, &a);
        // Matches at every block boundary, in both lists' last lanes.
        let sevens: Vec<u32> = (0..200).filter(|x| x % 8 == 7).collect();
        check(&a, &sevens);
        check(&[], &a);
        check(&a, &[u32::MAX]);
        let top: Vec<u32> = (u32::MAX - 20..=u32::MAX).collect();
        check(&top, &top[3..]);
    }

    #[test]
    fn the_block_path_runs_where_the_cpu_has_avx2() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let a: Vec<u32> = (0..64).map(|x| x * 3).collect();
            let b: Vec<u32> = (0..64).map(|x| x * 5).collect();
            // SAFETY: AVX2 is present (checked above).
            #[allow(unsafe_code)]
            let (c, i, j) = unsafe { avx2::blocks::<false>(&a, &b, &mut |_| {}) };
            assert!(i > 0 && j > 0, "no block compared");
            assert_eq!(c + count_scalar(&a[i..], &b[j..]), 13);
            return;
        }
        eprintln!("skipped: this CPU has no AVX2, the scalar path is the only one");
    }

    proptest! {
        #[test]
        fn equals_a_set_intersection(
            a in proptest::collection::vec(0u32..300, 0..120),
            b in proptest::collection::vec(0u32..300, 0..120),
        ) {
            check(&set(&a), &set(&b));
        }

        #[test]
        fn equals_a_set_intersection_of_lopsided_lists(
            a in proptest::collection::vec(0u32..5000, 0..16),
            b in proptest::collection::vec(0u32..5000, 100..400),
        ) {
            let (a, b) = (set(&a), set(&b));
            check(&a, &b);
            check(&b, &a);
        }
    }
}
