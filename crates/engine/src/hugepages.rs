//! Per-vertex arrays on transparent huge pages.
//!
//! Kernels that read a per-vertex array in the random order of neighbour
//! lists (PageRank's contributions, the job manager's PageRank rows) miss
//! the TLB on nearly every edge once the array outgrows the TLB's reach
//! (a few MiB with 4 KiB pages): each miss adds a page walk to the cache
//! miss. Linux backs such an array with 2 MiB pages when asked
//! (`madvise(MADV_HUGEPAGE)`, the setting "madvise" of
//! `/sys/kernel/mm/transparent_hugepage/enabled`, common on distributions),
//! provided the pages are not touched before the advice. [`filled`]
//! allocates, advises and then writes the array in parallel.
//!
//! The advice is a hint: where the kernel has no huge pages (or another
//! system), the array is an ordinary one.
use rayon::prelude::*;

/// Arrays smaller than this are left on ordinary pages (a huge page would
/// be mostly empty, and the TLB covers them anyway).
pub const MIN_BYTES: usize = 4 << 20;

/// Elements written per parallel task when filling.
const FILL_BLOCK: usize = 1 << 14;

/// A vector of `n` copies of `value`, asked to live on transparent huge
/// pages when it is at least [`MIN_BYTES`] long. Same contents as
/// `vec![value; n]`.
pub fn filled<T: Copy + Send + Sync>(n: usize, value: T) -> Vec<T> {
    from_fn(n, |_| value)
}

/// The vector `[f(0), f(1), …, f(n − 1)]` (computed in parallel), asked to
/// live on transparent huge pages when it is at least [`MIN_BYTES`] long.
pub fn from_fn<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if bytes < MIN_BYTES {
        return (0..n).into_par_iter().map(&f).collect();
    }
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise(v.spare_capacity_mut().as_mut_ptr().cast::<u8>(), bytes);
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(FILL_BLOCK)
        .enumerate()
        .for_each(|(b, c)| {
            for (i, e) in c.iter_mut().enumerate() {
                e.write(f(b * FILL_BLOCK + i));
            }
        });
    // SAFETY: the capacity is at least `n` and every one of the first `n`
    // elements was initialised by the loop above (a panic in `f` unwinds
    // before this line, leaving the length 0).
    #[allow(unsafe_code)]
    unsafe {
        v.set_len(n)
    };
    v
}

/// Advises the 2 MiB-aligned interior of `[start, start + len)` for huge
/// pages. A no-op off Linux and for ranges with no whole huge page.
fn advise(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let lo = (start as usize).next_multiple_of(HUGE);
        let hi = (start as usize + len) & !(HUGE - 1);
        if hi > lo {
            // SAFETY: `[lo, hi)` lies inside an allocation this process
            // owns; MADV_HUGEPAGE changes how the kernel backs it, never
            // its contents or validity, and its failure is harmless.
            #[allow(unsafe_code)]
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_equals_vec_macro_small_and_large() {
        for n in [0usize, 1, 1000, MIN_BYTES / 8 + 12345] {
            let v = filled(n, 0.25f64);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0.25));
        }
        let v = filled(MIN_BYTES / 4 * 3 + 7, 7u32);
        assert!(v.iter().all(|&x| x == 7));
        for n in [0usize, 5, MIN_BYTES / 4 + 99_999] {
            let v = from_fn(n, |i| i as u32 * 3);
            assert_eq!(v.len(), n);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 * 3));
        }
    }
}
