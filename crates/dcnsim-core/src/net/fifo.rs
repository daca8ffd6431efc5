//! The FIFO of an egress queue: a growable ring buffer whose header takes 16 bytes, so that
//! a queue's depth, FIFO header and per-packet counters share one cache line (`PktQueue`).
//! `VecDeque`'s header is 32 bytes, which pushed the queue onto a second line that every
//! queued packet touched twice (enqueue and dequeue); on large fabrics each is a miss.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

/// A growable ring of `T` (plain data) in 16 bytes: the buffer's address with the log2 of its
/// capacity (a power of two) in the address's low bits, which its alignment leaves zero;
/// the head's index and the length.
pub(super) struct Fifo<T: Copy> {
    /// Buffer address | log2(capacity); null (and capacity 0) before the first push.
    tagged: *mut T,
    head: u32,
    len: u32,
}

/// Buffers are aligned to a cache line, which leaves the address's low 6 bits for the log2
/// of the capacity (at most 2^31 entries: `head` and `len` are u32).
const ALIGN: usize = 64;
const TAG: usize = ALIGN - 1;
const FIRST_CAP_LOG2: usize = 3;
const MAX_CAP_LOG2: usize = 31;

// SAFETY: a Fifo owns its buffer as a Vec would; T is plain data.
unsafe impl<T: Copy + Send> Send for Fifo<T> {}
unsafe impl<T: Copy + Sync> Sync for Fifo<T> {}

impl<T: Copy> Default for Fifo<T> {
    fn default() -> Self {
        Fifo { tagged: std::ptr::null_mut(), head: 0, len: 0 }
    }
}

impl<T: Copy> Fifo<T> {
    #[inline(always)]
    fn buf(&self) -> *mut T {
        self.tagged.map_addr(|a| a & !TAG)
    }
    #[inline(always)]
    fn cap_log2(&self) -> usize {
        self.tagged.addr() & TAG
    }
    /// Capacity: 0 before the first push.
    #[inline(always)]
    fn cap(&self) -> usize {
        if self.tagged.is_null() {
            0
        } else {
            1 << self.cap_log2()
        }
    }
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head as usize + i) & ((1 << self.cap_log2()) - 1)
    }
    fn layout(cap_log2: usize) -> Layout {
        Layout::from_size_align(std::mem::size_of::<T>() << cap_log2, ALIGN.max(std::mem::align_of::<T>())).expect("FIFO buffer layout")
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.len as usize == self.cap() {
            self.grow();
        }
        let at = self.slot(self.len as usize);
        // SAFETY: at < capacity
        unsafe { self.buf().add(at).write(x) };
        self.len += 1;
    }
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: head < capacity and holds an element
        let x = unsafe { self.buf().add(self.head as usize).read() };
        self.head = self.slot(1) as u32;
        self.len -= 1;
        Some(x)
    }
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }
    /// The address of the head element, if any (for a prefetch).
    #[inline(always)]
    pub fn front_ptr(&self) -> Option<*const T> {
        (self.len > 0).then(|| self.buf().wrapping_add(self.head as usize) as *const T)
    }
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        // SAFETY: i < len, so the slot holds an element
        (i < self.len as usize).then(|| unsafe { &*self.buf().add(self.slot(i)) })
    }
    /// Overwrite element `i` (panics past the length).
    pub fn set(&mut self, i: usize, x: T) {
        assert!(i < self.len as usize, "FIFO index {i} past its length {}", self.len);
        // SAFETY: i < len
        unsafe { self.buf().add(self.slot(i)).write(x) };
    }
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len as usize).map(move |i| self.get(i).unwrap())
    }
    #[cold]
    fn grow(&mut self) {
        let old_cap = self.cap();
        let log2 = if old_cap == 0 { FIRST_CAP_LOG2 } else { self.cap_log2() + 1 };
        assert!(log2 <= MAX_CAP_LOG2, "a queue of more than 2^{MAX_CAP_LOG2} packets");
        let layout = Self::layout(log2);
        // SAFETY: the layout's size is non-zero (T is not zero-sized: checked below)
        assert!(std::mem::size_of::<T>() > 0);
        let new = unsafe { alloc(layout) } as *mut T;
        let Some(new) = NonNull::new(new) else { handle_alloc_error(layout) };
        let new = new.as_ptr();
        for i in 0..self.len as usize {
            // SAFETY: i < len <= old capacity < new capacity
            unsafe { new.add(i).write(self.buf().add(self.slot(i)).read()) };
        }
        if old_cap > 0 {
            // SAFETY: allocated with this layout by an earlier grow
            unsafe { dealloc(self.buf() as *mut u8, Self::layout(self.cap_log2())) };
        }
        self.tagged = new.map_addr(|a| a | log2);
        self.head = 0;
    }
}

impl<T: Copy> Drop for Fifo<T> {
    fn drop(&mut self) {
        if !self.tagged.is_null() {
            // SAFETY: allocated with this layout by grow
            unsafe { dealloc(self.buf() as *mut u8, Self::layout(self.cap_log2())) };
        }
    }
}

impl<T: Copy> Clone for Fifo<T> {
    fn clone(&self) -> Self {
        let mut c = Fifo::default();
        for &x in self.iter() {
            c.push_back(x);
        }
        c
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for Fifo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn header_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Fifo<(u32, u32)>>(), 16);
    }

    proptest! {
        // every operation sequence leaves the same contents as VecDeque, across wraps and grows
        #[test]
        fn behaves_as_vecdeque(ops in proptest::collection::vec((0u8..5, any::<u32>()), 0..400)) {
            let (mut f, mut v) = (Fifo::<(u32, u32)>::default(), VecDeque::new());
            for (op, x) in ops {
                match op {
                    0 | 1 => { f.push_back((x, !x)); v.push_back((x, !x)); }
                    2 => prop_assert_eq!(f.pop_front(), v.pop_front()),
                    3 if !v.is_empty() => {
                        let i = x as usize % v.len();
                        f.set(i, (x, x)); v[i] = (x, x);
                    }
                    _ => { let c = f.clone(); prop_assert_eq!(c.iter().collect::<Vec<_>>(), v.iter().collect::<Vec<_>>()); }
                }
                prop_assert_eq!(f.len(), v.len());
                prop_assert_eq!(f.front(), v.front());
                prop_assert_eq!(f.front_ptr().map(|p| unsafe { *p }), v.front().copied());
                prop_assert_eq!(f.get(v.len()), None);
            }
            prop_assert_eq!(f.iter().collect::<Vec<_>>(), v.iter().collect::<Vec<_>>());
        }
    }
}
