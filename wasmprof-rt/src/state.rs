//! Per-thread profiling state, and the trees of threads that have finished.
//!
//! Each thread records into a tree of its own, so guards never take a lock;
//! on WebAssembly without threads that is simply one tree. Natively, a
//! thread's tree is merged into [`FINISHED`] when the thread exits, so a
//! multi-threaded program neither corrupts nor loses anything.

use std::cell::UnsafeCell;
use std::sync::Mutex;

use crate::tree::{CallTree, NodeId, DEFAULT_CAP, ROOT};

pub(crate) struct ThreadState {
    pub tree: CallTree,
    /// The node of the innermost call still running on this thread.
    pub current: NodeId,
}

impl ThreadState {
    const fn new() -> Self {
        ThreadState {
            tree: CallTree::new(DEFAULT_CAP),
            current: ROOT,
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        lock_finished().merge_from(&self.tree);
    }
}

thread_local! {
    static THREAD: UnsafeCell<ThreadState> = const { UnsafeCell::new(ThreadState::new()) };
}

/// Trees of threads that have exited.
static FINISHED: Mutex<CallTree> = Mutex::new(CallTree::new(DEFAULT_CAP));

pub(crate) fn lock_finished() -> std::sync::MutexGuard<'static, CallTree> {
    FINISHED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f` on this thread's state; `None` while the thread is being torn
/// down, when calls are simply not recorded.
#[inline(always)]
pub(crate) fn with_thread<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    THREAD
        .try_with(|cell| {
            // SAFETY: the state is this thread's alone, and no caller of
            // `with_thread` runs user code or calls `with_thread` again while
            // it holds the reference, so the borrow is unique.
            f(unsafe { &mut *cell.get() })
        })
        .ok()
}
