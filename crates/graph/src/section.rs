//! [`Section`]: an immutable array that is either owned in memory or mapped
//! from a store file. Every topology array of a [`crate::Graph`] is one.
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;

/// An immutable `[T]` backed by a `Vec<T>` or by a read-only memory map.
///
/// Invariant: a mapped section's byte range is a multiple of `size_of::<T>()`
/// and starts at an address aligned for `T` (checked in [`Section::mapped`]).
#[derive(Clone)]
pub struct Section<T: Pod> {
    repr: Repr<T>,
}

#[derive(Clone)]
enum Repr<T> {
    Owned(Arc<Vec<T>>),
    Mapped {
        map: Arc<Mmap>,
        start: usize,
        len: usize,
    },
}

impl<T: Pod> Section<T> {
    /// Wraps an owned vector.
    pub fn owned(v: Vec<T>) -> Self {
        Section {
            repr: Repr::Owned(Arc::new(v)),
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
        // Validate alignment once here; `as_slice` relies on it.
        bytemuck::try_cast_slice::<u8, T>(&map[start..end]).ok()?;
        Some(Section {
            repr: Repr::Mapped { map, start, len },
        })
    }

    /// The elements.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v.as_slice(),
            Repr::Mapped { map, start, len } => {
                let bytes = &map[*start..*start + *len * std::mem::size_of::<T>()];
                bytemuck::cast_slice(bytes)
            }
        }
    }

    /// Whether the data lives in a memory map (as opposed to the heap).
    pub fn is_mapped(&self) -> bool {
        matches!(self.repr, Repr::Mapped { .. })
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
