//! Per-thread profiling state: how the running thread reaches its own.
//!
//! Each thread records into a tree of its own, so guards never wait for
//! one another; on WebAssembly without threads that is simply one tree.
//! With threads (natively, `wasm32-wasip1-threads`, web workers), each
//! thread's state is its own, written with plain stores, and kept where a
//! snapshot can read it (`threads.rs`), so a multi-threaded program
//! neither corrupts nor loses anything, and the snapshot can say which
//! thread did what.

#[cfg(one_thread)]
use std::cell::UnsafeCell;

use crate::thread_state::ThreadState;

/// Runs `f` on this thread's state; `None` once the thread has exited,
/// when calls are simply not recorded. `f` must not call `with_thread`.
#[inline(always)]
pub(crate) fn with_thread<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    // What the runtime allocates while it holds the state is its own.
    let _untracked = crate::memory::untracked::Untracked::begin();
    with_thread_as_is(f)
}

/// [`with_thread`] for the recording allocator, which knows that nothing
/// is running in the runtime: `f` must not allocate but inside an
/// [`Untracked`](crate::memory::untracked::Untracked) section, which saves
/// the flag's two writes on every allocation and free.
#[cfg(not(one_thread))]
#[inline(always)]
pub(crate) fn with_thread_as_is<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    crate::threads::with_own(f)
}

/// WebAssembly without the atomics feature has exactly one thread, so the
/// state is a plain global: no thread-local lookup on the hot path.
#[cfg(one_thread)]
#[inline(always)]
pub(crate) fn with_thread_as_is<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    struct OneThread(UnsafeCell<ThreadState>);
    // SAFETY: without the atomics feature there are no other threads.
    unsafe impl Sync for OneThread {}
    static STATE: OneThread = OneThread(UnsafeCell::new(ThreadState::new()));
    // SAFETY: single-threaded, and no caller of `with_thread` runs user code
    // or calls `with_thread` again while it holds the reference.
    Some(f(unsafe { &mut *STATE.0.get() }))
}

/// For a call's entry: `f` writes single words of what a snapshot reads of
/// the state in place (see `threads::with_own_in_place`), and allocates
/// only inside an untracked section. With one thread, [`with_thread_as_is`].
#[inline(always)]
pub(crate) fn with_thread_in_place<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    #[cfg(not(one_thread))]
    return crate::threads::with_own_in_place(f);
    #[cfg(one_thread)]
    with_thread_as_is(f)
}

/// For an untimed call's exit, which writes the current node alone, on a
/// thread the call's entry registered (see `threads::with_own_quietly`).
/// With one thread, [`with_thread_as_is`].
#[inline(always)]
pub(crate) fn with_thread_quietly<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    #[cfg(not(one_thread))]
    return Some(crate::threads::with_own_quietly(f));
    #[cfg(one_thread)]
    with_thread_as_is(f)
}
