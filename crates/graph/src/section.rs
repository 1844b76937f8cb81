//! [`Section`]: an immutable array that is either owned in memory or mapped
//! from a store file. Every topology array of a [`crate::Graph`] is one.
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;

/// An immutable `[T]` backed by a `Vec<T>` or by a read-only memory map.
///
/// Invariant: `ptr`/`len` describe the elements of `_owner` (the vector's
/// buffer, or a byte range of the map that is a multiple of
/// `size_of::<T>()` and aligned for `T`, checked in [`Section::mapped`]).
/// They are computed once, so [`Section::as_slice`], called for every vertex
/// in the hot loops, costs no branch or check.
pub struct Section<T: Pod> {
    ptr: *const T,
    len: usize,
    _owner: Owner<T>,
}

/// What keeps the elements alive; never read, only held.
#[derive(Clone)]
#[allow(dead_code)]
enum Owner<T> {
    Owned(Arc<Vec<T>>),
    Mapped(Arc<Mmap>),
}

// SAFETY: a Section is an immutable view of memory kept alive by `_owner`
// (an `Arc<Vec<T>>` or an `Arc<Mmap>`, both Send + Sync); nothing is ever
// written through `ptr`, so sharing or sending it is as safe as sharing `&[T]`
// (T: Pod is Send + Sync data).
#[allow(unsafe_code)]
unsafe impl<T: Pod> Send for Section<T> {}
// SAFETY: see the Send impl above: read-only access to memory owned by `_owner`.
#[allow(unsafe_code)]
unsafe impl<T: Pod> Sync for Section<T> {}

impl<T: Pod> Clone for Section<T> {
    fn clone(&self) -> Self {
        // The clone shares the same owner, so the same pointer stays valid.
        Section {
            ptr: self.ptr,
            len: self.len,
            _owner: self._owner.clone(),
        }
    }
}

impl<T: Pod> Section<T> {
    /// Wraps an owned vector.
    pub fn owned(v: Vec<T>) -> Self {
        let v = Arc::new(v);
        Section {
            ptr: v.as_ptr(),
            len: v.len(),
            _owner: Owner::Owned(v),
        }
    }

    /// Views `len` elements of `map` starting at byte `start`. Returns `None`
    /// when the range is out of bounds or misaligned for `T`.
    pub fn mapped(map: Arc<Mmap>, start: usize, len: usize) -> Option<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let end = start.checked_add(bytes)?;
        if end > map.len() {
            return None;
        }
        // Validate bounds and alignment once here; `as_slice` relies on it.
        let elems: &[T] = bytemuck::try_cast_slice::<u8, T>(&map[start..end]).ok()?;
        let ptr = elems.as_ptr();
        Some(Section {
            ptr,
            len,
            _owner: Owner::Mapped(map),
        })
    }

    /// The elements.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: by the struct invariant `ptr` points to `len` initialised,
        // aligned `T`s inside the allocation or map held by `_owner`, which
        // lives as long as `self` and is never mutated.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Whether the data lives in a memory map (as opposed to the heap).
    pub fn is_mapped(&self) -> bool {
        matches!(self._owner, Owner::Mapped(_))
    }

    /// Size of the elements in bytes.
    pub fn size_bytes(&self) -> u64 {
        std::mem::size_of_val(self.as_slice()) as u64
    }
}

impl<T: Pod> std::ops::Deref for Section<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Pod> Default for Section<T> {
    fn default() -> Self {
        Section::owned(Vec::new())
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Section<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.as_slice();
        write!(f, "Section(len={}, mapped={})", s.len(), self.is_mapped())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_and_cloned_sections_read_their_elements() {
        let s = Section::owned(vec![1u32, 2, 3]);
        let c = s.clone();
        drop(s);
        assert_eq!(c.as_slice(), &[1, 2, 3]);
        assert!(!c.is_mapped());
        assert_eq!(Section::<u64>::default().as_slice(), &[] as &[u64]);
    }

    #[test]
    #[allow(unsafe_code)]
    fn mapped_sections_check_bounds_and_alignment_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        let vals: Vec<u64> = (0..100).collect();
        let mut bytes = vec![0u8; 8];
        bytes.extend_from_slice(bytemuck::cast_slice(&vals));
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the test owns the file and does not modify it while mapped.
        let map = Arc::new(unsafe { Mmap::map(&file) }.unwrap());
        let s = Section::<u64>::mapped(map.clone(), 8, 100).unwrap();
        let c = s.clone();
        drop(s);
        drop(map);
        assert_eq!(c.as_slice(), vals.as_slice());
        assert!(c.is_mapped());
        // SAFETY: as above, the file is not modified while mapped.
        let map = Arc::new(unsafe { Mmap::map(&file) }.unwrap());
        assert!(
            Section::<u64>::mapped(map.clone(), 8, 101).is_none(),
            "out of bounds"
        );
        assert!(Section::<u64>::mapped(map, 4, 10).is_none(), "misaligned");
    }
}
