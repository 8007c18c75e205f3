//! Every thread's state, where a snapshot can read it, without an atomic
//! or a lock on the path of a call.
//!
//! Each thread records into a state of its own ([`slot`]), reached through
//! a thread-local pointer that is initialised `const` and has no
//! destructor, so that reaching it is a load from the thread's TLS block.
//! A thread's first call registers the state, on a cold path
//! ([`registry`]). The thread writes its state with plain stores: on
//! WebAssembly every atomic store or read-modify-write is sequentially
//! consistent, a fence on x86 (`mfence`, `lock cmpxchg`), so one on every
//! call cost a worker several times what a call costs on one thread.
//!
//! A snapshot cannot lock a thread, then; it asks instead ([`reading`]).
//! It raises a request that each thread looks for, with one load, at the
//! entry and exit of every call it records. A thread that sees it copies
//! its own record there, between two calls, and says so. A thread that
//! makes no call while the snapshot waits (a pool's idle worker, a thread
//! blocked or in a long stretch of code that is not instrumented) is not
//! writing its state, and the snapshot reads it where it stands. A
//! thread's calls are all in every snapshot: nothing waits for a thread to
//! exit, which the workers of a pool never do.
//!
//! [`with_own`] is how the runtime's code reaches the running thread's
//! state; [`count`] is the count-only tier's increment.

mod reading;
mod registry;
mod slot;

use std::cell::Cell;

pub(crate) use reading::others;
pub(crate) use registry::stopped;

use crate::thread_state::ThreadState;
use slot::Slot;

thread_local! {
    /// This thread's slot, once it has recorded something; never freed.
    static OWN: Cell<*const Slot> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` on this thread's state, registering the thread on its first
/// use; `None` once the thread has exited, when calls are simply not
/// recorded. `f` must not call back in here.
#[inline(always)]
pub(crate) fn with_own<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    let mut slot = OWN.with(Cell::get);
    if slot.is_null() {
        // Out of line, and without `f`: a closure handed to a call would
        // be built in memory, a stack frame in every instrumented function.
        slot = registry::register()? as *const Slot;
    }
    // SAFETY: a registered slot is leaked: it lives as long as the program.
    Some(unsafe { &*slot }.record_with(f))
}

/// Counts one call of the count-only site of `index` (plus one; 0 when
/// the site has no index yet) on this thread, with a plain increment of
/// the thread's own counter. `false` when it could not: the site or the
/// thread is new here, and [`count_cold`] does it.
#[inline(always)]
pub(crate) fn count(index_plus_one: u32) -> bool {
    let slot = OWN.with(Cell::get);
    if slot.is_null() {
        return false;
    }
    // SAFETY: as in `with_own`. The counters are this thread's alone to
    // write; a snapshot reading them where the thread stands sees each as
    // a count the thread had (an aligned word, written whole), and the
    // vector only grows inside a recorded section (`count_cold`), which a
    // snapshot's read excludes.
    let counts = unsafe { &mut (*(*slot).state.get()).counts };
    match counts.get_mut(index_plus_one.wrapping_sub(1) as usize) {
        Some(calls) => {
            *calls += 1;
            true
        }
        None => false,
    }
}

/// [`count`]'s cold path: makes room for the site of `index` in this
/// thread's counters, then counts the call.
#[cold]
#[inline(never)]
pub(crate) fn count_cold(index: u32) {
    with_own(|state| {
        let index = index as usize;
        if state.counts.len() <= index {
            let _untracked = crate::memory::untracked::Untracked::begin();
            let len = (index + 1).max(state.counts.len() * 2).max(64);
            state.counts.resize(len, 0);
        }
        state.counts[index] += 1;
    });
}

#[cfg(test)]
pub(crate) mod tests;
