//! Per-vertex arrays a driver allocates through its executor.
//!
//! A driver's state (BFS parents and depths, PageRank's ranks, ...) is one
//! value a vertex. In memory it is a heap vector; an executor whose budget
//! cannot hold `n` values (out of core) backs the array with something else
//! through a [`Backing`] (a mapped temporary file whose pages the kernel
//! writes back and reclaims), handed to drivers by
//! [`crate::program::Vertices::backing`]. A [`VertexArray`] derefs to a
//! slice either way, so a program's code does not change with the backing:
//! the executor differs, the driver does not.
//!
//! Invariants: the array's `len` elements are initialised for its whole
//! life; the memory behind it is owned by the array alone (a heap vector it
//! never touches again, or a [`Region`] no one else holds) and stays where
//! it is until the array is dropped or consumed by
//! [`VertexArray::into_vec`].
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of, ManuallyDrop};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};

use rayon::prelude::*;

use crate::error::AlgoError;
use crate::program::AtomicF64;

/// A value that may live in a [`Region`].
///
/// # Safety
///
/// Every bit pattern of `size_of::<Self>()` bytes is a valid value (zeroed
/// pages and bytes copied out of a region are values), the type has no
/// drop glue, and its alignment divides 4096 (a region's alignment).
#[allow(unsafe_code)]
pub unsafe trait Cell: Send + Sync + 'static {}

macro_rules! cells {
    ($($t:ty),*) => {
        $(
            // SAFETY: plain integers, floats and their atomic cells: any
            // bits are a value, no drop glue, alignment at most 8.
            #[allow(unsafe_code)]
            unsafe impl Cell for $t {}
        )*
    };
}
cells!(u8, u32, u64, i32, i64, f32, f64, AtomicU32, AtomicU64, AtomicF64);

/// Bytes outside the heap that back one [`VertexArray`]: page-aligned,
/// zeroed when made, valid and not moved until dropped.
pub trait Region: Send + Sync + fmt::Debug {
    /// The first byte (aligned to 4096).
    fn as_mut_ptr(&self) -> *mut u8;
    /// Bytes in the region.
    fn len(&self) -> usize;
    /// Whether the region holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where an executor puts per-vertex arrays that should not be on the heap.
pub trait Backing: Sync {
    /// A zeroed region of at least `bytes` bytes for the array `name`, or a
    /// one-line reason why none could be made.
    fn region(&self, name: &str, bytes: usize) -> Result<Box<dyn Region>, String>;
}

/// Who owns the memory behind a [`VertexArray`].
enum Owner<T> {
    /// A heap vector (never touched again until [`VertexArray::into_vec`]).
    Heap(ManuallyDrop<Vec<T>>),
    /// An executor's region.
    Region(Box<dyn Region>),
}

/// `n` values of `T`, one per vertex, on the heap or in a [`Region`]; derefs
/// to `[T]` (see the module docs).
pub struct VertexArray<T: Cell> {
    ptr: NonNull<T>,
    len: usize,
    owner: Owner<T>,
    _t: PhantomData<T>,
}

// SAFETY: the array owns its elements (the pointer is into memory only it
// holds), and `T: Cell` is `Send + Sync`, so it moves and shares as a
// `Vec<T>` does.
#[allow(unsafe_code)]
unsafe impl<T: Cell> Send for VertexArray<T> {}
// SAFETY: as above; shared access gives `&[T]` only.
#[allow(unsafe_code)]
unsafe impl<T: Cell> Sync for VertexArray<T> {}

impl<T: Cell> VertexArray<T> {
    /// The heap array `v` (no copy).
    pub fn heap(v: Vec<T>) -> Self {
        let mut v = ManuallyDrop::new(v);
        VertexArray {
            // A vector's pointer is never null (dangling when empty).
            ptr: NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling()),
            len: v.len(),
            owner: Owner::Heap(v),
            _t: PhantomData,
        }
    }

    /// `[f(0), …, f(n − 1)]`, computed in parallel: on transparent huge
    /// pages when `backing` is `None` (as [`crate::hugepages::from_fn`]),
    /// else in a region of `backing` named `name`.
    pub fn from_fn(
        backing: Option<&dyn Backing>,
        name: &str,
        n: usize,
        f: impl Fn(usize) -> T + Sync,
    ) -> Result<Self, AlgoError> {
        let bytes = n.saturating_mul(size_of::<T>());
        let Some(b) = backing.filter(|_| bytes > 0) else {
            return Ok(Self::heap(crate::hugepages::from_fn(n, f)));
        };
        let region = b
            .region(name, bytes)
            .map_err(|e| AlgoError::StateStorage(format!("{name}: {e}")))?;
        let base = region.as_mut_ptr();
        if region.len() < bytes || !(base as usize).is_multiple_of(align_of::<T>()) {
            return Err(AlgoError::StateStorage(format!(
                "{name}: the region of {} bytes at {base:p} cannot hold {n} values",
                region.len()
            )));
        }
        let ptr = NonNull::new(base.cast::<T>())
            .ok_or_else(|| AlgoError::StateStorage(format!("{name}: a null region")))?;
        let at = SendPtr(ptr);
        (0..n).into_par_iter().with_min_len(1 << 14).for_each(|i| {
            // SAFETY: `i < n` and the region holds `n` aligned values (checked
            // above); each index is written by one task, before any read.
            #[allow(unsafe_code)]
            unsafe {
                at.get().add(i).write(f(i))
            }
        });
        Ok(VertexArray {
            ptr,
            len: n,
            owner: Owner::Region(region),
            _t: PhantomData,
        })
    }

    /// Whether the values live in an executor's region (not on the heap).
    pub fn is_backed(&self) -> bool {
        matches!(self.owner, Owner::Region(_))
    }

    /// The values as a heap vector: the vector itself when on the heap, a
    /// copy (then the region is released) otherwise.
    pub fn into_vec(self) -> Vec<T> {
        let me = ManuallyDrop::new(self);
        let len = me.len;
        // SAFETY: `me` is never used or dropped again, so its owner is
        // moved out exactly once.
        #[allow(unsafe_code)]
        let owner = unsafe { std::ptr::read(&me.owner) };
        match owner {
            Owner::Heap(v) => ManuallyDrop::into_inner(v),
            Owner::Region(region) => {
                let mut v: Vec<T> = Vec::with_capacity(len);
                // SAFETY: the region holds `len` initialised values of `T`
                // (module invariant) and the vector's spare capacity `len`
                // slots; they do not overlap. `T: Cell` has no drop glue, so
                // the bytes left in the region (released below) own nothing.
                #[allow(unsafe_code)]
                unsafe {
                    std::ptr::copy_nonoverlapping(me.ptr.as_ptr(), v.as_mut_ptr(), len);
                    v.set_len(len);
                }
                drop(region);
                v
            }
        }
    }
}

impl<T: Cell> Drop for VertexArray<T> {
    fn drop(&mut self) {
        if let Owner::Heap(v) = &mut self.owner {
            // SAFETY: dropped once, here; nothing reads the vector after.
            #[allow(unsafe_code)]
            unsafe {
                ManuallyDrop::drop(v)
            }
        }
    }
}

impl<T: Cell> Deref for VertexArray<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` initialised values owned by `self`
        // (module invariant), alive and unmoved while `self` is borrowed.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.ptr.as_ptr(), self.len)
        }
    }
}

impl<T: Cell> DerefMut for VertexArray<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len)
        }
    }
}

impl<T: Cell> fmt::Debug for VertexArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.is_backed() { "region" } else { "heap" };
        write!(f, "VertexArray({} values, {at})", self.len)
    }
}

/// A pointer the parallel fill shares across tasks.
struct SendPtr<T>(NonNull<T>);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtr<T> {}

impl<T> SendPtr<T> {
    #[inline(always)]
    fn get(self) -> *mut T {
        self.0.as_ptr()
    }
}

// SAFETY: the fill's tasks write disjoint indices through it.
#[allow(unsafe_code)]
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl<T: Send> Sync for SendPtr<T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Mutex;

    #[repr(align(4096))]
    struct Page([u8; 4096]);

    /// A heap region for tests: aligned pages, counted when released.
    #[derive(Debug)]
    struct TestRegion {
        pages: Vec<Page>,
        ptr: *mut u8,
        released: &'static AtomicU64,
    }
    impl std::fmt::Debug for Page {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Page")
        }
    }
    // SAFETY: the pointer is into `pages`, owned by the region.
    #[allow(unsafe_code)]
    unsafe impl Send for TestRegion {}
    // SAFETY: as above.
    #[allow(unsafe_code)]
    unsafe impl Sync for TestRegion {}
    impl Region for TestRegion {
        fn as_mut_ptr(&self) -> *mut u8 {
            self.ptr
        }
        fn len(&self) -> usize {
            self.pages.iter().map(|p| p.0.len()).sum()
        }
    }
    impl Drop for TestRegion {
        fn drop(&mut self) {
            self.released.fetch_add(1, Ordering::Relaxed);
        }
    }

    struct TestBacking {
        released: &'static AtomicU64,
        names: Mutex<Vec<String>>,
    }
    impl Backing for TestBacking {
        fn region(&self, name: &str, bytes: usize) -> Result<Box<dyn Region>, String> {
            if name == "refused" {
                return Err("no room".into());
            }
            self.names.lock().unwrap().push(name.to_string());
            let mut pages: Vec<Page> = (0..bytes.div_ceil(4096)).map(|_| Page([0; 4096])).collect();
            let ptr = pages.as_mut_ptr().cast::<u8>();
            Ok(Box::new(TestRegion {
                pages,
                ptr,
                released: self.released,
            }))
        }
    }

    #[test]
    fn heap_and_region_arrays_hold_the_same_values_and_regions_are_released() {
        static RELEASED: AtomicU64 = AtomicU64::new(0);
        let b = TestBacking {
            released: &RELEASED,
            names: Mutex::new(Vec::new()),
        };
        let n = 100_000;
        let heap = VertexArray::from_fn(None, "x", n, |i| AtomicU32::new(i as u32 * 3)).unwrap();
        let reg = VertexArray::from_fn(Some(&b), "x", n, |i| AtomicU32::new(i as u32 * 3)).unwrap();
        assert!(!heap.is_backed() && reg.is_backed());
        reg[7].store(21, Ordering::Relaxed);
        assert!(heap
            .iter()
            .zip(reg.iter())
            .all(|(a, b)| a.load(Ordering::Relaxed) == b.load(Ordering::Relaxed)));
        let v: Vec<u32> = reg.into_vec().into_iter().map(|a| a.into_inner()).collect();
        assert_eq!(RELEASED.load(Ordering::Relaxed), 1);
        assert_eq!(v, (0..n as u32).map(|i| i * 3).collect::<Vec<_>>());
        let dropped = VertexArray::from_fn(Some(&b), "y", 10, |_| 1.5f64).unwrap();
        drop(dropped);
        assert_eq!(RELEASED.load(Ordering::Relaxed), 2);
        assert_eq!(*b.names.lock().unwrap(), ["x", "y"]);
        let e = VertexArray::from_fn(Some(&b), "refused", 10, |_| 0u32).unwrap_err();
        assert!(e.to_string().contains("no room"), "{e}");
        // Empty arrays stay on the heap.
        assert!(!VertexArray::from_fn(Some(&b), "z", 0, |_| 0u8)
            .unwrap()
            .is_backed());
    }
}
