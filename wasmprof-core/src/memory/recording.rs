//! The recording allocator.

use std::alloc::{GlobalAlloc, Layout};

/// A global allocator that charges what the program allocates to the call
/// path it allocates on, when the build records memory (`cargo wasmprof …
/// --memory`); otherwise it only forwards to `A`.
///
/// `cargo wasmprof --memory` wraps std's allocator by itself. A program
/// that declares its own wraps it in one line, and builds as before
/// without `--memory`:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOCATOR: wasmprof::Recording<talc::TalckWasm> =
///     wasmprof::Recording::new(unsafe { talc::TalckWasm::new_global() });
/// ```
pub struct Recording<A> {
    inner: A,
}

impl<A> Recording<A> {
    pub const fn new(inner: A) -> Self {
        Recording { inner }
    }
}

// SAFETY: without `wasmprof_memory` every call is forwarded to `inner`
// unchanged. With it, each block is `inner`'s block for a layout grown by a
// header in front (see `record`), and the pointer handed out is past the
// header, aligned as asked; dealloc and realloc undo exactly that.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Recording<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        #[cfg(wasmprof_memory)]
        // SAFETY: the caller's contract, passed on.
        return unsafe { record::alloc(&self.inner, layout, false) };
        #[cfg(not(wasmprof_memory))]
        // SAFETY: the caller's contract, passed on.
        unsafe {
            self.inner.alloc(layout)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        #[cfg(wasmprof_memory)]
        // SAFETY: the caller's contract, passed on.
        return unsafe { record::alloc(&self.inner, layout, true) };
        #[cfg(not(wasmprof_memory))]
        // SAFETY: the caller's contract, passed on.
        unsafe {
            self.inner.alloc_zeroed(layout)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        #[cfg(wasmprof_memory)]
        // SAFETY: the caller's contract, passed on.
        unsafe {
            record::dealloc(&self.inner, ptr, layout)
        }
        #[cfg(not(wasmprof_memory))]
        // SAFETY: the caller's contract, passed on.
        unsafe {
            self.inner.dealloc(ptr, layout)
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        #[cfg(wasmprof_memory)]
        // SAFETY: the caller's contract, passed on.
        return unsafe { record::realloc(&self.inner, ptr, layout, new_size) };
        #[cfg(not(wasmprof_memory))]
        // SAFETY: the caller's contract, passed on.
        unsafe {
            self.inner.realloc(ptr, layout, new_size)
        }
    }
}

/// The recording itself, out of line: inlined into the allocator shim
/// that rustc generates, in a build with LTO, the program went wrong
/// (memory corrupted, seen with `examples/memory churn` in release), which
/// out of line it never did. Each block carries, just before the pointer the
/// program gets, the node of the path that allocated it (or
/// [`RUNTIME`](record::RUNTIME) for the runtime's own), so that a free
/// finds its owner with one load, where a table of addresses would cost a
/// hash lookup on every allocation and free: 4 bytes more per block (the
/// block's alignment, when that is larger), which the figures leave out.

#[cfg(wasmprof_memory)]
mod record {
    use std::alloc::{GlobalAlloc, Layout};

    use super::{RUNTIME_LIVE, memory_pages};
    use crate::memory::untracked::untracked_now;
    use crate::state::with_thread_as_is as with_thread;
    use crate::tree::NodeId;

    /// The owner of a block the runtime allocated for itself.
    const RUNTIME: NodeId = u32::MAX;

    /// Linear memory's size after the last allocation (0: not read yet).
    /// Only allocations grow it, so one read after each tells whether it
    /// grew, where a read before and after would take two. With threads,
    /// another thread's allocation grows it too, and a word all threads
    /// stored would be an atomic store on every allocation: both reads
    /// are made.
    #[cfg(one_thread)]
    static PAGES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

    /// The size before an allocation.
    #[inline(always)]
    fn pages_before() -> u32 {
        #[cfg(one_thread)]
        return match PAGES.load(std::sync::atomic::Ordering::Relaxed) {
            0 => memory_pages(),
            known => known,
        };
        #[cfg(not(one_thread))]
        memory_pages()
    }

    /// The size after an allocation, kept for the next.
    #[inline(always)]
    fn pages_after() -> u32 {
        let now = memory_pages();
        #[cfg(one_thread)]
        PAGES.store(now, std::sync::atomic::Ordering::Relaxed);
        now
    }

    /// The outer layout of a block handed out for `layout`.
    ///
    /// # Safety
    /// A block was made for `layout` (so [`outer`] gave a layout for it).
    #[inline(always)]
    unsafe fn outer_of_live(layout: Layout, size: usize) -> Layout {
        let header = header(layout);
        // SAFETY: `outer` checked this size and alignment when the block
        // was made.
        unsafe { Layout::from_size_align_unchecked(size + header, header) }
    }

    /// The header's size for `layout`: room for the owner (and, where
    /// there are threads, the thread whose book it is in), keeping the
    /// program's pointer aligned as `layout` asks.
    #[inline(always)]
    fn header(layout: Layout) -> usize {
        layout.align().max(HEADER)
    }

    #[cfg(one_thread)]
    const HEADER: usize = 4;
    #[cfg(not(one_thread))]
    const HEADER: usize = 8;

    /// The tag of the thread whose book holds the block at `ptr`.
    ///
    /// # Safety
    /// `ptr` was handed out by [`hand_out`].
    #[cfg(not(one_thread))]
    #[inline(always)]
    unsafe fn tag_of(ptr: *mut u8) -> u32 {
        // SAFETY: see `hand_out`.
        unsafe { ptr.sub(8).cast::<u32>().read_unaligned() }
    }

    /// The layout of the whole block: header, then the program's bytes.
    /// The header's size is a power of two (an alignment, or 4 or 8), so
    /// only the size needs checking: a layout's size rounded up to its
    /// alignment may not pass `isize::MAX`.
    #[inline(always)]
    fn outer(layout: Layout, size: usize) -> Option<Layout> {
        let header = header(layout);
        if size > isize::MAX as usize - 2 * header {
            return None;
        }
        // SAFETY: `header` is a power of two, and `size + header` rounded
        // up to it stays within `isize::MAX` (checked above).
        Some(unsafe { Layout::from_size_align_unchecked(size + header, header) })
    }

    /// Writes `owner`, and the `tag` of the thread whose book charged the
    /// block, into the header of the block at `block` and returns the
    /// program's pointer.
    ///
    /// # Safety
    /// `block` is a live block of the outer layout of `layout`.
    #[inline(always)]
    unsafe fn hand_out(block: *mut u8, layout: Layout, owner: NodeId, tag: u32) -> *mut u8 {
        // SAFETY: the header is inside the block, and its last 4 bytes are
        // where `owner_of` reads, the 4 before them `tag_of`.
        unsafe {
            let ptr = block.add(header(layout));
            ptr.sub(4).cast::<NodeId>().write_unaligned(owner);
            #[cfg(not(one_thread))]
            ptr.sub(8).cast::<u32>().write_unaligned(tag);
            #[cfg(one_thread)]
            let _ = tag;
            ptr
        }
    }

    /// The owner in the header of the program's block at `ptr`.
    ///
    /// # Safety
    /// `ptr` was handed out by [`hand_out`].
    #[inline(always)]
    unsafe fn owner_of(ptr: *mut u8) -> NodeId {
        // SAFETY: see `hand_out`.
        unsafe { ptr.sub(4).cast::<NodeId>().read_unaligned() }
    }

    /// The tag of the block at `ptr` (0 without threads).
    ///
    /// # Safety
    /// `ptr` was handed out by [`hand_out`].
    #[inline(always)]
    unsafe fn block_tag(ptr: *mut u8) -> u32 {
        #[cfg(one_thread)]
        {
            let _ = ptr;
            0
        }
        #[cfg(not(one_thread))]
        // SAFETY: the caller's contract.
        unsafe {
            tag_of(ptr)
        }
    }

    /// This thread's tag (0 without threads).
    #[inline(always)]
    fn own_tag(thread: &crate::thread_state::ThreadState) -> u32 {
        #[cfg(one_thread)]
        {
            let _ = thread;
            0
        }
        #[cfg(not(one_thread))]
        thread.tag
    }

    /// Notes in `thread`'s list that it freed a block of `bytes` that
    /// `owner` of the thread tagged `tag` allocated (threads only).
    #[inline(always)]
    fn note_release(
        thread: &mut crate::thread_state::ThreadState,
        tag: u32,
        owner: NodeId,
        bytes: u64,
    ) {
        #[cfg(not(one_thread))]
        thread.releases.add(tag, owner, bytes);
        #[cfg(one_thread)]
        let _ = (thread, tag, owner, bytes);
    }

    /// # Safety
    /// `GlobalAlloc::alloc`'s contract.
    #[inline(never)]
    pub(super) unsafe fn alloc(inner: &impl GlobalAlloc, layout: Layout, zeroed: bool) -> *mut u8 {
        let Some(whole) = outer(layout, layout.size()) else {
            return std::ptr::null_mut();
        };
        let untracked = untracked_now();
        let before = pages_before();
        // SAFETY: `whole` is not zero-sized: it holds the header.
        let block = unsafe {
            if zeroed {
                inner.alloc_zeroed(whole)
            } else {
                inner.alloc(whole)
            }
        };
        let bytes = layout.size() as u64;
        let after = pages_after();
        if untracked {
            if block.is_null() {
                return block;
            }
            RUNTIME_LIVE.add(bytes as i64);
            // SAFETY: `block` is a live block of `whole`.
            return unsafe { hand_out(block, layout, RUNTIME, 0) };
        }
        let charged = with_thread(|thread| {
            let node = thread.current;
            let ledger = &mut thread.memory;
            if block.is_null() {
                ledger.failed(node, bytes);
            } else {
                ledger.alloc(node, bytes);
            }
            if after > before {
                ledger.grow(node, before, after, bytes);
            }
            (node, own_tag(thread))
        });
        if block.is_null() {
            return block;
        }
        // A thread that has exited: nobody to charge, so the runtime's.
        let (owner, tag) = charged.unwrap_or((RUNTIME, 0));
        if owner == RUNTIME {
            RUNTIME_LIVE.add(bytes as i64);
        }
        // SAFETY: `block` is a live block of `whole`.
        unsafe { hand_out(block, layout, owner, tag) }
    }

    /// # Safety
    /// `GlobalAlloc::dealloc`'s contract.
    #[inline(never)]
    pub(super) unsafe fn dealloc(inner: &impl GlobalAlloc, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` or `realloc`.
        let owner = unsafe { owner_of(ptr) };
        let bytes = layout.size() as u64;
        if owner == RUNTIME {
            RUNTIME_LIVE.add(-(bytes as i64));
        // SAFETY: `ptr` came from `alloc` or `realloc`.
        } else if !untracked_now() {
            // (A program's block the runtime frees keeps its owner's
            // figures.)
            // SAFETY: `ptr` came from `alloc` or `realloc`.
            let tag = unsafe { block_tag(ptr) };
            with_thread(|thread| {
                let node = thread.current;
                if tag == own_tag(thread) {
                    thread.memory.free(node, owner, bytes);
                } else {
                    // Another thread's block: this path's free, and a
                    // release of the owner's.
                    thread.memory.free_foreign(node, bytes);
                    note_release(thread, tag, owner, bytes);
                }
            });
        }
        // SAFETY: the block and its outer layout, as `alloc` made them.
        unsafe {
            let whole = outer_of_live(layout, layout.size());
            inner.dealloc(ptr.sub(header(layout)), whole)
        }
    }

    /// # Safety
    /// `GlobalAlloc::realloc`'s contract.
    #[inline(never)]
    pub(super) unsafe fn realloc(
        inner: &impl GlobalAlloc,
        ptr: *mut u8,
        layout: Layout,
        new_size: usize,
    ) -> *mut u8 {
        let Some(new_whole) = outer(layout, new_size) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the block was made for `layout`.
        let old_whole = unsafe { outer_of_live(layout, layout.size()) };
        // SAFETY: `ptr` came from `alloc` or `realloc`.
        let owner = unsafe { owner_of(ptr) };
        // SAFETY: as above; read before the block moves.
        let old_tag = unsafe { block_tag(ptr) };
        let untracked = untracked_now();
        let before = pages_before();
        // SAFETY: the block and its outer layout, as `alloc` made them; the
        // header keeps its place, so the owner moves with the bytes.
        let block = unsafe { inner.realloc(ptr.sub(header(layout)), old_whole, new_whole.size()) };
        let after = pages_after();
        if block.is_null() {
            if !untracked {
                // The old block is still there, still its owner's.
                with_thread(|thread| {
                    let node = thread.current;
                    thread.memory.failed(node, new_size as u64);
                });
            }
            return block;
        }
        let (old_bytes, new_bytes) = (layout.size() as u64, new_size as u64);
        let charged = if untracked {
            None
        } else {
            with_thread(|thread| {
                let node = thread.current;
                let tag = own_tag(thread);
                let foreign = owner != RUNTIME && old_tag != tag;
                let ledger = &mut thread.memory;
                match owner {
                    RUNTIME => ledger.realloc_from_runtime(node, new_bytes),
                    _ if foreign => ledger.realloc_foreign(node, old_bytes, new_bytes),
                    owner => ledger.realloc(node, owner, old_bytes, new_bytes),
                }
                if after > before {
                    ledger.grow(node, before, after, new_bytes);
                }
                if foreign {
                    note_release(thread, old_tag, owner, old_bytes);
                }
                (node, tag)
            })
        };
        let (new_owner, new_tag) = charged.unwrap_or((RUNTIME, 0));
        match (owner == RUNTIME, new_owner == RUNTIME) {
            (true, true) => RUNTIME_LIVE.add(new_bytes as i64 - old_bytes as i64),
            (true, false) => RUNTIME_LIVE.add(-(old_bytes as i64)),
            (false, true) => RUNTIME_LIVE.add(new_bytes as i64),
            (false, false) => {}
        }
        // SAFETY: `block` is a live block of `new_whole`.
        unsafe { hand_out(block, layout, new_owner, new_tag) }
    }
}

/// Bytes the runtime itself holds (its tree, tables, last snapshot), which
/// no path is charged with.
#[cfg(wasmprof_memory)]
pub(crate) fn runtime_live_bytes() -> u64 {
    RUNTIME_LIVE.get().max(0) as u64
}

/// The size of linear memory in 64 KiB pages; 0 where there is no such
/// thing.
#[cfg(wasmprof_memory)]
#[inline]
pub(crate) fn memory_pages() -> u32 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) as u32
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}

/// The runtime's live bytes: a plain cell with one thread, an atomic
/// otherwise.
#[cfg(wasmprof_memory)]
static RUNTIME_LIVE: RuntimeLive = RuntimeLive(std::sync::atomic::AtomicI64::new(0));

#[cfg(wasmprof_memory)]
struct RuntimeLive(std::sync::atomic::AtomicI64);

#[cfg(wasmprof_memory)]
impl RuntimeLive {
    #[inline(always)]
    fn add(&self, bytes: i64) {
        self.0
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    fn get(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}
