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
//! [`with_own`] and its two lighter kinds are how the runtime's code
//! reaches the running thread's state; the count-only tier counts in
//! thread-locals of its sites' own, whose places [`counter_here`] gives.

mod reading;
mod registry;
mod slot;

pub(crate) use reading::others;
pub(crate) use registry::stopped;

use crate::thread_state::ThreadState;
use slot::Slot;

/// The current node of a thread that has exited: no node's parent, so
/// that a call's entry finds no node to count through, and goes the way
/// that leaves it unrecorded (see [`with_own_if_plain`]).
pub(crate) const EXITED: crate::tree::NodeId = u32::MAX - 1;

thread_local! {
    /// This thread's slot: registered on its first use (`registry.rs`).
    static OWN: Slot = const { Slot::new() };
}

/// This thread's slot, registered on its first use; `None` once the thread
/// has exited, when calls are simply not recorded.
#[inline(always)]
fn own() -> Option<&'static Slot> {
    // SAFETY: the slot lives as long as its thread, which is as long as
    // the thread can use the reference.
    let slot: &'static Slot = OWN.with(|slot| unsafe { &*(slot as *const Slot) });
    if slot.registered.get() {
        return Some(slot);
    }
    // Out of line, and without the caller's closure: a closure handed to a
    // call would be built in memory, a stack frame in every instrumented
    // function.
    registry::register()
}

/// Runs `f` on this thread's state, in a section a snapshot does not read
/// across (see `slot.rs`): for whatever moves memory (a new node, a timed
/// call's frame, an allocation recorded) or writes words that must agree.
/// `f` must not call back in here.
#[inline(always)]
pub(crate) fn with_own<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    Some(own()?.record_with(f))
}

/// Runs `f` on this thread's state once a snapshot's request, if one is
/// asking, is answered: for a call's entry, which every call makes. A
/// load of one flag, when no snapshot is asking. `f` may only write
/// single words in place (a node's count, the current node), each of
/// which a snapshot reading the thread where it stands sees whole, as a
/// value the thread had; anything more goes through [`with_own`].
#[inline(always)]
pub(crate) fn with_own_in_place<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    let slot = own()?;
    slot.answer_if_asked();
    // SAFETY: this thread's own state, not borrowed elsewhere (no caller
    // of these functions calls them again while `f` runs).
    Some(f(unsafe { &mut *slot.state.get() }))
}

/// [`with_own_in_place`] on the path of almost every call, which calls
/// nothing: `None` when a snapshot is asking, which [`with_own_in_place`]
/// sees to.
///
/// It does not look at whether the thread has registered: `f` finds
/// nothing to record into on a thread that has not (its tree has no node
/// yet, and a new node is made only once the thread is registered) or has
/// exited (its current node is [`EXITED`], no node's parent), and then
/// goes the way that registers. One test fewer on every call's entry.
#[inline(always)]
pub(crate) fn with_own_if_plain<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    // SAFETY: as in `own`.
    let slot: &'static Slot = OWN.with(|slot| unsafe { &*(slot as *const Slot) });
    if slot::asking() {
        return None;
    }
    // SAFETY: as in `with_own_in_place`.
    Some(f(unsafe { &mut *slot.state.get() }))
}

/// Runs `f` on this thread's state, which it may only write single words
/// of, in place (see [`with_own_in_place`]): an untimed call's exit, which
/// makes the caller's node current again, on a thread whose entry of the
/// call registered it. No request is answered here: a thread that only
/// returns for a while is read where it stands.
#[inline(always)]
pub(crate) fn with_own_quietly<R>(f: impl FnOnce(&mut ThreadState) -> R) -> R {
    // SAFETY: as in `own`, and as in `with_own_in_place`: a thread that
    // has exited still has its TLS block while it runs.
    OWN.with(|slot| f(unsafe { &mut *slot.state.get() }))
}

/// Registers the running thread if it has not recorded anything yet: a
/// thread whose only instrumented calls are counted ones (see
/// `count::ThreadCount`) is read by snapshots like any other.
#[cfg(target_family = "wasm")]
#[inline(always)]
pub(crate) fn ensure_registered() {
    if !OWN.with(|slot| slot.registered.get()) {
        registry::register();
    }
}

/// Where the running thread's state is (in its TLS block).
#[cfg(target_family = "wasm")]
pub(crate) fn own_state_address() -> usize {
    OWN.with(|slot| slot.state.get() as usize)
}

/// Gives this thread's state the place of its counter of the count-only
/// site of `index`, a thread-local of the site's own (`__count_calls!`),
/// on the site's first call on the thread: snapshots read it there.
#[cold]
#[inline(never)]
pub(crate) fn counter_here(index: u32, calls: &std::cell::Cell<u64>) {
    with_own(|state| {
        let _untracked = crate::memory::untracked::Untracked::begin();
        state.counters.push((index, calls.as_ptr()));
    });
}

#[cfg(test)]
pub(crate) mod tests;
