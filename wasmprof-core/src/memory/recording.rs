//! The recording allocator, and the runtime's untracked sections.

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

// SAFETY: every call is forwarded to `inner` with the caller's arguments,
// and its result returned unchanged; recording only reads them.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Recording<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let allocate = || unsafe { self.inner.alloc(layout) };
        #[cfg(wasmprof_memory)]
        return record::allocation(layout.size(), allocate);
        #[cfg(not(wasmprof_memory))]
        allocate()
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let allocate = || unsafe { self.inner.alloc_zeroed(layout) };
        #[cfg(wasmprof_memory)]
        return record::allocation(layout.size(), allocate);
        #[cfg(not(wasmprof_memory))]
        allocate()
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        #[cfg(wasmprof_memory)]
        record::free(ptr as usize, layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { self.inner.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let reallocate = || unsafe { self.inner.realloc(ptr, layout, new_size) };
        #[cfg(wasmprof_memory)]
        return record::reallocation(ptr as usize, layout.size(), new_size, reallocate);
        #[cfg(not(wasmprof_memory))]
        reallocate()
    }
}

/// The recording itself: the ledger of the thread, charged with the node
/// current on it.
#[cfg(wasmprof_memory)]
mod record {
    use super::{RUNTIME_LIVE, untracked_now};
    use crate::memory::memory_pages;
    use crate::state::with_thread;

    /// An allocation of `bytes` made by `allocate`.
    #[inline]
    pub(super) fn allocation(bytes: usize, allocate: impl FnOnce() -> *mut u8) -> *mut u8 {
        if untracked_now() {
            let block = allocate();
            if !block.is_null() {
                RUNTIME_LIVE.add(bytes as i64);
            }
            return block;
        }
        let before = memory_pages();
        let block = allocate();
        let after = memory_pages();
        let bytes = bytes as u64;
        with_thread(|thread| {
            let node = thread.current;
            let ledger = &mut thread.memory;
            ledger.note_pages(before);
            if block.is_null() {
                ledger.failed(node, bytes);
            } else {
                ledger.alloc(node, block as usize, bytes);
            }
            if after > before {
                ledger.grow(node, before, after, bytes);
            }
        });
        block
    }

    /// A free of the block of `bytes` at `address`.
    #[inline]
    pub(super) fn free(address: usize, bytes: usize) {
        if untracked_now() {
            RUNTIME_LIVE.add(-(bytes as i64));
            return;
        }
        let known = with_thread(|thread| {
            let node = thread.current;
            thread.memory.free(node, address, bytes as u64)
        });
        // A block the ledger never saw is the runtime's own.
        if known == Some(false) {
            RUNTIME_LIVE.add(-(bytes as i64));
        }
    }

    /// A reallocation of the block of `old_bytes` at `address` to
    /// `new_bytes`, made by `reallocate`.
    #[inline]
    pub(super) fn reallocation(
        address: usize,
        old_bytes: usize,
        new_bytes: usize,
        reallocate: impl FnOnce() -> *mut u8,
    ) -> *mut u8 {
        if untracked_now() {
            let block = reallocate();
            if !block.is_null() {
                RUNTIME_LIVE.add(new_bytes as i64 - old_bytes as i64);
            }
            return block;
        }
        let before = memory_pages();
        let block = reallocate();
        let after = memory_pages();
        let new_bytes = new_bytes as u64;
        with_thread(|thread| {
            let node = thread.current;
            let ledger = &mut thread.memory;
            ledger.note_pages(before);
            if block.is_null() {
                // The old block is still there, still its owner's.
                ledger.failed(node, new_bytes);
            } else {
                ledger.realloc(node, address, old_bytes as u64, block as usize, new_bytes);
            }
            if after > before {
                ledger.grow(node, before, after, new_bytes);
            }
        });
        block
    }
}

/// Bytes the runtime itself holds (its tree, tables, last snapshot), which
/// no path is charged with.
#[cfg(wasmprof_memory)]
pub(crate) fn runtime_live_bytes() -> u64 {
    RUNTIME_LIVE.get().max(0) as u64
}

/// Marks the runtime at work while alive: allocations are its own, not
/// the program's. Nests.
#[must_use]
pub(crate) struct Untracked {
    #[cfg(wasmprof_memory)]
    was: bool,
}

impl Untracked {
    #[inline(always)]
    pub(crate) fn begin() -> Self {
        Untracked {
            #[cfg(wasmprof_memory)]
            was: flag::replace(true),
        }
    }
}

impl Drop for Untracked {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(wasmprof_memory)]
        flag::replace(self.was);
    }
}

/// Runs `f` as the runtime's own work (see [`Untracked`]).
#[inline(always)]
pub(crate) fn untracked<R>(f: impl FnOnce() -> R) -> R {
    let _untracked = Untracked::begin();
    f()
}

#[cfg(wasmprof_memory)]
#[inline(always)]
fn untracked_now() -> bool {
    flag::get()
}

/// Whether the runtime is at work on this thread.
#[cfg(all(wasmprof_memory, one_thread))]
mod flag {
    use std::cell::Cell;

    struct OneThread(Cell<bool>);
    // SAFETY: without the atomics feature there are no other threads.
    unsafe impl Sync for OneThread {}
    static UNTRACKED: OneThread = OneThread(Cell::new(false));

    #[inline(always)]
    pub(super) fn replace(value: bool) -> bool {
        UNTRACKED.0.replace(value)
    }

    #[inline(always)]
    pub(super) fn get() -> bool {
        UNTRACKED.0.get()
    }
}

/// Whether the runtime is at work on this thread.
#[cfg(all(wasmprof_memory, not(one_thread)))]
mod flag {
    use std::cell::Cell;

    thread_local! {
        static UNTRACKED: Cell<bool> = const { Cell::new(false) };
    }

    #[inline(always)]
    pub(super) fn replace(value: bool) -> bool {
        UNTRACKED.with(|flag| flag.replace(value))
    }

    #[inline(always)]
    pub(super) fn get() -> bool {
        UNTRACKED.with(Cell::get)
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
