//! Software prefetch for kernels that read a per-vertex array in the random
//! order of a neighbour list (PageRank's pull, the job manager's PageRank
//! lanes): the list is known ahead, so the kernel asks for the entry it
//! will read some edges later while it adds the current one, and the
//! cache misses overlap instead of queueing behind the add chain.

/// Asks the cache for the line holding `values[i]`. A hint: nothing is
/// read, nothing faults, and an `i` out of range is ignored. A no-op off
/// x86-64.
#[inline(always)]
pub fn prefetch<T>(values: &[T], i: usize) {
    ask::<T, { hint::L1 }>(values, i)
}

/// Asks for the line holding `values[i]` as [`prefetch`] does, with the
/// hint that it is wanted a little later (`_MM_HINT_T1`: the outer
/// caches rather than L1), so it does not push out of L1 what is being
/// read now. The tiled gather asks for the next tile's segment so.
#[inline(always)]
pub fn prefetch_later<T>(values: &[T], i: usize) {
    ask::<T, { hint::L2 }>(values, i)
}

/// The `_mm_prefetch` hints used here (plain numbers off x86-64, unused).
mod hint {
    #[cfg(target_arch = "x86_64")]
    pub const L1: i32 = std::arch::x86_64::_MM_HINT_T0;
    #[cfg(target_arch = "x86_64")]
    pub const L2: i32 = std::arch::x86_64::_MM_HINT_T1;
    #[cfg(not(target_arch = "x86_64"))]
    pub const L1: i32 = 3;
    #[cfg(not(target_arch = "x86_64"))]
    pub const L2: i32 = 2;
}

#[inline(always)]
fn ask<T, const HINT: i32>(values: &[T], i: usize) {
    if i >= values.len() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let p = values[i..].as_ptr();
        // SAFETY: `_mm_prefetch` only hints the cache hierarchy; it reads
        // nothing into the program and never faults, whatever the address
        // (and `p` points at an element of `values`, checked above).
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<HINT>(p.cast::<i8>())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetching_any_index_is_harmless() {
        let v: Vec<f64> = (0..100).map(f64::from).collect();
        for i in [0, 1, 63, 99, 100, usize::MAX] {
            prefetch(&v, i);
        }
        prefetch::<u32>(&[], 0);
        for i in [0, 99, 100, usize::MAX] {
            prefetch_later(&v, i);
        }
        prefetch_later::<u32>(&[], 0);
        assert_eq!(v[99], 99.0);
    }
}
