//! Per-port tables taken zeroed from the operating system, so that a record nobody writes
//! costs no memory.
//!
//! Every partition of a run split over threads (engine/parallel.rs) indexes its per-port
//! tables by the fabric's port ids, and writes only its own ports' records. Written with
//! their defaults, as `vec![T::default(); n]` does, every page of every table became
//! resident in every partition: at k = 74 on 16 threads the queue, counter and control
//! tables took 1.9 GB, 15/16 of it records no thread ever read. A table here is one
//! zeroed allocation (`calloc`, which for a large table maps fresh pages: the kernel gives
//! a page only when it is first written, and reads of an untouched one share a single
//! zero page), and its records' default is all-zero bytes, so it is `vec![T::default();
//! n]` to every reader, sized in memory by the ports a thread writes. Sizing the tables to
//! a partition's own ports instead would map port ids on every hop of the packet path.
//!
//! A table of [`MAPPED_FROM`] bytes or more is mapped from the kernel here, not taken from
//! the allocator: that its untouched pages cost nothing is then this module's doing, not an
//! allocator's habit, and how its pages are backed is its own to say. It asks for large
//! pages (`sim::large_pages`: a large fabric's per-port records are read at random places
//! on every hop), except where a split run's partition writes only in places
//! (`back_sparsely`): there a record written once would make 2 MiB resident. k = 74 on 16
//! partitions held 3.1-3.7 GB with the whole of these tables in large pages, 1.7 GB this way.

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

/// A record whose `Default` is all-zero bytes, and for which all-zero bytes are a valid
/// value.
///
/// # Safety
/// All-zero bytes must be a valid value of the type, equal to `Default::default()` (the
/// test `zeroed_records_are_their_defaults` checks the second for every implementation).
pub unsafe trait ZeroDefault: Default {}

// SAFETY: an integer of zero bytes is 0
unsafe impl ZeroDefault for u64 {}

/// `n` records of `T`, each its default, in one zeroed allocation (see the module doc).
pub struct ZeroedVec<T: ZeroDefault> {
    /// What the allocator gave (over-sized by `T`'s alignment, which `calloc`'s path of
    /// the system allocator does not honour above 16 bytes), and where the records start.
    raw: NonNull<u8>,
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
}

// SAFETY: the table owns its records as a Vec does.
unsafe impl<T: ZeroDefault + Send> Send for ZeroedVec<T> {}
unsafe impl<T: ZeroDefault + Sync> Sync for ZeroedVec<T> {}

impl<T: ZeroDefault> ZeroedVec<T> {
    /// `n` records, each `T::default()`.
    pub fn new(n: usize) -> Self {
        let size = std::mem::size_of::<T>().checked_mul(n).expect("table size overflows");
        if size == 0 {
            let ptr = NonNull::dangling();
            return ZeroedVec { raw: NonNull::dangling(), ptr, len: n, layout: Layout::new::<()>() };
        }
        let align = std::mem::align_of::<T>();
        #[cfg(target_os = "linux")]
        if size >= MAPPED_FROM && align <= 4096 {
            return ZeroedVec::mapped(n, size);
        }
        // 16: the largest alignment the system allocator serves with calloc (a larger one
        // would be allocated, then written with zeros, every page)
        let layout = Layout::from_size_align(size + align, 16).expect("table layout");
        // SAFETY: the layout has a non-zero size
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(raw) = NonNull::new(raw) else { handle_alloc_error(layout) };
        let off = raw.as_ptr().align_offset(align);
        // SAFETY: off < align, and the allocation holds size + align bytes
        let ptr = unsafe { NonNull::new_unchecked(raw.as_ptr().add(off) as *mut T) };
        ZeroedVec { raw, ptr, len: n, layout }
    }

    /// `n` records of `size` bytes in all, in pages mapped for them alone (the module doc).
    #[cfg(target_os = "linux")]
    fn mapped(n: usize, size: usize) -> Self {
        // SAFETY: a fresh private anonymous mapping (zeroed by the kernel), of a non-zero
        // size; its advice changes how it is backed, not what it holds
        let raw = unsafe {
            let p = libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0);
            if p == libc::MAP_FAILED {
                handle_alloc_error(Layout::from_size_align(size, 4096).expect("table layout"));
            }
            p as *mut u8
        };
        crate::sim::large_pages::advise(raw, size, true);
        let raw = NonNull::new(raw).expect("a mapping is never at address 0");
        // the layout's alignment marks a mapping for `drop` (the allocator's are 16)
        ZeroedVec { raw, ptr: raw.cast(), len: n, layout: Layout::from_size_align(size, 4096).expect("table layout") }
    }

    /// Back the table in 4 KiB pages except where the records in `dense` (ranges of
    /// indices) fill at least half of a large page: a split run's partition writes its own
    /// ports' records and a few of its peers' (the module doc), in runs of ids mostly
    /// shorter than a large page, so a page is judged by how much of it is written, which
    /// bounds what a large page holds unwritten to what is written in it. A table too small
    /// to be mapped has no large pages to give back.
    pub fn back_sparsely(&self, dense: &[std::ops::Range<usize>]) {
        use crate::sim::large_pages::{advise, LARGE_PAGE};
        if self.layout.align() != 4096 {
            return;
        }
        let (base, size) = (self.ptr.as_ptr() as usize, self.len * std::mem::size_of::<T>());
        advise(base as *const u8, size, false);
        // the written bytes of each large page the table spans (by its page number)
        let first = base / LARGE_PAGE;
        let mut written = vec![0usize; (base + size).div_ceil(LARGE_PAGE) - first];
        for r in dense {
            let (mut lo, hi) = (base + r.start.min(self.len) * std::mem::size_of::<T>(), base + r.end.min(self.len) * std::mem::size_of::<T>());
            while lo < hi {
                let end = ((lo / LARGE_PAGE + 1) * LARGE_PAGE).min(hi);
                written[lo / LARGE_PAGE - first] += end - lo;
                lo = end;
            }
        }
        // whole large pages inside the table only, consecutive ones in one call
        let mut run: Option<usize> = None;
        for (i, &w) in written.iter().enumerate().chain(std::iter::once((written.len(), &0))) {
            let page = (first + i) * LARGE_PAGE;
            let whole = page >= base && page + LARGE_PAGE <= base + size;
            match (whole && 2 * w >= LARGE_PAGE, run) {
                (true, None) => run = Some(page),
                (false, Some(from)) => {
                    advise(from as *const u8, page - from, true);
                    run = None;
                }
                _ => {}
            }
        }
    }
}

/// The size from which a table is mapped from the kernel (one large page: below it, no
/// large page can hold the table's records, and a mapping per table would only add calls).
pub const MAPPED_FROM: usize = crate::sim::large_pages::LARGE_PAGE;

impl<T: ZeroDefault> Default for ZeroedVec<T> {
    fn default() -> Self {
        ZeroedVec::new(0)
    }
}

impl<T: ZeroDefault> std::ops::Deref for ZeroedVec<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` records, each valid (zeroed, `ZeroDefault`, or written since)
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroDefault> std::ops::DerefMut for ZeroedVec<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is the only access
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroDefault> Drop for ZeroedVec<T> {
    fn drop(&mut self) {
        // SAFETY: the records are valid and dropped once; `raw` came from `mapped` (a
        // layout aligned to 4096) or from `alloc_zeroed` with `layout` when the layout's size
        // is not zero
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len));
            #[cfg(target_os = "linux")]
            if self.layout.align() == 4096 {
                libc::munmap(self.raw.as_ptr() as *mut libc::c_void, self.layout.size());
                return;
            }
            if self.layout.size() > 0 {
                dealloc(self.raw.as_ptr(), self.layout);
            }
        }
    }
}

impl<T: ZeroDefault + Clone> Clone for ZeroedVec<T> {
    fn clone(&self) -> Self {
        let mut c = ZeroedVec::new(self.len);
        c.clone_from_slice(self);
        c
    }
}

impl<T: ZeroDefault + std::fmt::Debug> std::fmt::Debug for ZeroedVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record kept in a zeroed table reads, zeroed, as its default (each field, by
    /// its `Debug`), so a zeroed table is the table of defaults.
    #[test]
    fn zeroed_records_are_their_defaults() {
        use crate::net::port::{Egress, PortCtl};
        use crate::net::{PktQueue, QueueStats};
        fn same<T: ZeroDefault + std::fmt::Debug>() {
            assert_eq!(format!("{:?}", ZeroedVec::<T>::new(1)[0]), format!("{:?}", T::default()), "{}", std::any::type_name::<T>());
        }
        same::<PktQueue>();
        same::<QueueStats>();
        same::<PortCtl>();
        same::<Egress>();
    }

    /// A table is aligned for its records, reads as defaults, keeps what is written, clones
    /// and drops what its records own (a queue's buffer).
    #[test]
    fn a_zeroed_table_is_a_table_of_defaults() {
        use crate::net::PktQueue;
        let mut t: ZeroedVec<PktQueue> = ZeroedVec::new(1000);
        assert_eq!(t.as_ptr() as usize % 64, 0);
        assert!(t.iter().all(|q| q.is_empty() && q.bytes == 0));
        for id in 0..100 {
            t[999].push(id, 1500, 3, crate::sim::SimTime::ZERO);
        }
        let c = t.clone();
        assert_eq!((c[999].len(), c[999].bytes, c[0].len()), (100, 150_000, 0));
        assert_eq!(ZeroedVec::<PktQueue>::new(0).len(), 0);
    }
}
