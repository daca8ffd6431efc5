//! Large tables in 2 MiB pages.
//!
//! A large fabric's run is bound by the memory system: the next event's packet, port,
//! queue and flow records lie at random places in tables of hundreds of MB (k = 74: 578 MB
//! on one thread), and with 4 KiB pages nearly every such read also misses the TLB, whose
//! page walk is itself a chain of reads (two-dimensional under a hypervisor). In 2 MiB
//! pages the same tables need 512 times fewer TLB entries. Linux backs memory with such
//! pages ("transparent huge pages") either always or, as many distributions configure it,
//! only where a program asks (`madvise(MADV_HUGEPAGE)`;
//! /sys/kernel/mm/transparent_hugepage/enabled = madvise).
//!
//! The programs (the Python extension, the examples) allocate through mimalloc, which asks
//! for large pages for the regions it takes from the kernel (its `allow_thp` option, on by
//! default). The per-port tables a split run's partitions write in places
//! (`net::zeroed`) map their own pages and say here which of their records are written
//! densely: a page a partition writes once would otherwise become resident 2 MiB at a time.
//! Outputs do not depend on where memory lies; only speed and memory do.

/// The allocator the programs install (`#[global_allocator]`): mimalloc, whose regions
/// are backed in large pages where the kernel offers them (the module doc).
pub use mimalloc::MiMalloc as Allocator;

/// The size of the pages asked for (x86-64's and most arm64 kernels' huge page).
pub const LARGE_PAGE: usize = 2 << 20;

/// Advise the kernel how to back the pages of `[at, at + bytes)` (rounded out to whole
/// 4 KiB pages, inside one mapping the caller owns): in large pages where `dense`, else in
/// 4 KiB pages. The advice applies to pages not yet touched; where it fails (a kernel
/// without transparent huge pages) nothing changes but speed.
pub fn advise(at: *const u8, bytes: usize, dense: bool) {
    let start = at as usize / 4096 * 4096;
    let end = (at as usize + bytes).next_multiple_of(4096);
    if end <= start {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: MADV_HUGEPAGE and MADV_NOHUGEPAGE change how a range is backed, never its
    // contents
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, if dense { libc::MADV_HUGEPAGE } else { libc::MADV_NOHUGEPAGE });
    }
}

#[cfg(test)]
mod tests {
    /// The field `key` of the mapping holding `p` in /proc/self/smaps (its first number).
    #[cfg(target_os = "linux")]
    fn smaps_field(p: *const u8, key: &str) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = head.split_once('-').filter(|_| !head.ends_with(':')) {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                    inside = (a..b).contains(&(p as usize));
                    continue;
                }
            }
            if inside {
                if let Some(v) = line.strip_prefix(key).and_then(|v| v.strip_prefix(':')) {
                    return v.split_whitespace().next()?.parse().ok();
                }
            }
        }
        None
    }

    /// Where the kernel backs memory in large pages only on request (madvise), a table's
    /// dense records are eligible for them and its sparse ones are not.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tables_dense_records_ask_for_large_pages_and_its_sparse_ones_do_not() {
        use crate::net::zeroed::ZeroedVec;
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        // the kernel's choice is bracketed: "always [madvise] never"
        if !mode.contains("[madvise]") {
            return;
        }
        // records of 8 B: a table of 8 large pages
        let n = super::LARGE_PAGE;
        let mut t: ZeroedVec<u64> = ZeroedVec::new(n);
        assert_eq!(smaps_field(t.as_ptr().cast(), "THPeligible"), Some(1), "a table is dense unless told");
        t.back_sparsely(&[n / 2..n]);
        let probe = 3 * n / 4;
        t[1] = 1;
        t[n - 1] = 2;
        assert_eq!(smaps_field(t.as_ptr().cast(), "THPeligible"), Some(0), "its first half is sparse");
        assert_eq!(smaps_field(t[probe..].as_ptr().cast(), "THPeligible"), Some(1), "its second half is dense");
        assert_eq!((t[0], t[1], t[n - 2], t[n - 1]), (0, 1, 0, 2));
        // a large page three quarters written is one; a quarter written, not
        let per_page = super::LARGE_PAGE / 8;
        let at = |i: usize| t.as_ptr().wrapping_add(i) as *const u8;
        let i0 = ((t.as_ptr() as usize).next_multiple_of(super::LARGE_PAGE) - t.as_ptr() as usize) / 8;
        let i1 = i0 + 2 * per_page;
        t.back_sparsely(&[i0..i0 + 3 * per_page / 4, i1 + per_page / 2..i1 + 3 * per_page / 4]);
        assert_eq!(smaps_field(at(i0), "THPeligible"), Some(1), "three quarters written");
        assert_eq!(smaps_field(at(i1), "THPeligible"), Some(0), "a quarter written");
        assert_eq!(smaps_field(at(i0 + per_page), "THPeligible"), Some(0), "nothing written");
    }
}
