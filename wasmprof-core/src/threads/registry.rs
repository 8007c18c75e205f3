//! The threads that recorded something: each one's slot, registered on its
//! first use of its state, and, once it has exited, its final record.
//!
//! A slot lives in its thread's TLS block, which goes when the thread
//! exits. A snapshot therefore pins the slots it reads (`pins`), under the
//! registry's lock; a thread's exit, where threads run their thread-locals'
//! destructors (natively, `wasm32-wasip1-threads`), leaves its final record
//! in the registry in its slot's place and waits for the pins to go before
//! its block does. A web worker never runs destructors, and its block
//! stays where it was: it is read as a thread still running.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::OWN;
use super::slot::{REQUEST, Slot};
use crate::thread_state::ThreadRecord;

/// A slot in a TLS block, valid while its thread lives, and while pinned.
#[derive(Clone, Copy)]
pub(super) struct SlotRef(pub(super) &'static Slot);

// SAFETY: a `SlotRef` is only followed under the registry's lock or pinned
// (see the module doc).
unsafe impl Send for SlotRef {}

/// A registered thread.
enum Entry {
    Running(SlotRef),
    /// Exited: what it recorded (nothing, `None`).
    Finished(Option<&'static ThreadRecord>),
}

struct Registry {
    /// Every thread, in the order they first recorded something.
    entries: Vec<Entry>,
    /// The entries of the threads that have exited, in the order they did.
    finished: Vec<usize>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    entries: Vec::new(),
    finished: Vec::new(),
});

/// Set by the host (`__wasmprof_threads_stopped`) once no thread but the
/// one that takes the snapshots will run again: snapshots then read every
/// thread as it stands, without waiting for answers that cannot come.
static STOPPED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Ends the thread's slot when it exits, where threads run their
    /// thread-locals' destructors. Touched once, when the thread registers:
    /// never on a call's path.
    static EXIT: ExitHook = const { ExitHook };
}

/// The running thread's slot, registering it on its first use of its
/// state; `None` once the thread has exited.
#[cold]
#[inline(never)]
pub(super) fn register() -> Option<&'static Slot> {
    // SAFETY: the slot lives as long as the thread, which is as long as
    // the thread can reach it; others reach it only as the module says.
    let slot: &'static Slot = OWN.with(|slot| unsafe { &*(slot as *const Slot) });
    if slot.exited.get() {
        return None;
    }
    if slot.registered.get() {
        return Some(slot);
    }
    let _untracked = crate::memory::untracked::Untracked::begin();
    // SAFETY: the thread's own state, not yet registered: nobody reads it.
    let state = unsafe { &mut **slot.state.get() };
    // Named now, so that a snapshot names it whatever it recorded (a pool
    // worker may allocate before it makes a call).
    state.name = Some(crate::thread_state::current_thread_name());
    #[cfg(wasmprof_memory)]
    {
        state.tag = crate::memory::remote::new_thread_tag();
    }
    // Requests made before the thread existed need no answer.
    slot.seen.set(REQUEST.load(Ordering::Relaxed));
    slot.registered.set(true);
    EXIT.with(|_| {});
    lock().entries.push(Entry::Running(SlotRef(slot)));
    // Measured on this thread, outside any use of the state: counting a
    // call, which the measure does, uses it.
    if let Some((clock_cost, probe_cost)) = crate::calibration::costs() {
        slot.record_with(|state| {
            state.clock_cost = clock_cost;
            state.probe_cost = probe_cost;
        });
    }
    Some(slot)
}

struct ExitHook;

impl Drop for ExitHook {
    /// The thread exits: its final record takes its slot's place in the
    /// registry, then the snapshots reading the slot are waited for.
    fn drop(&mut self) {
        let Ok(slot) = OWN.try_with(|slot| slot as *const Slot) else {
            return;
        };
        // SAFETY: this thread's slot, alive until this function returns.
        let slot = unsafe { &*slot };
        if !slot.registered.get() {
            return;
        }
        slot.registered.set(false);
        slot.exited.set(true);
        let _untracked = crate::memory::untracked::Untracked::begin();
        // SAFETY: the thread's own state; it records nothing more.
        let record = unsafe { (*slot.state.get()).record() };
        let record = record.map(|r| &*Box::leak(Box::new(r)));
        // What the thread calls from here on (other thread-locals'
        // destructors) finds no node to count through (see
        // `with_own_if_plain`), and is not recorded.
        // SAFETY: the thread's own state, a word a snapshot reads whole.
        unsafe { (&mut *slot.state.get()).current = super::EXITED };
        {
            let mut registry = lock();
            let own = std::ptr::from_ref(slot);
            let index = registry
                .entries
                .iter()
                .position(|entry| matches!(entry, Entry::Running(s) if std::ptr::eq(s.0, own)));
            if let Some(index) = index {
                registry.entries[index] = Entry::Finished(record);
                registry.finished.push(index);
            }
        }
        slot.gone.store(true, Ordering::SeqCst);
        while slot.pins.load(Ordering::SeqCst) > 0 {
            std::hint::spin_loop();
        }
    }
}

/// The registry stays usable even if a thread panicked while holding it.
fn lock() -> std::sync::MutexGuard<'static, Registry> {
    crate::spin::lock(&REGISTRY)
}

/// Another thread, as a snapshot finds it.
pub(super) enum Other {
    /// Running (or exiting), its slot pinned until [`unpin`].
    Running(SlotRef),
    /// Exited, with what it recorded.
    Finished(&'static ThreadRecord),
}

/// Every thread but this one: those that finished, in the order they did,
/// then those still running, in the order they first recorded, pinned.
pub(super) fn others() -> Vec<Other> {
    let own = OWN.with(|slot| slot as *const Slot);
    let registry = lock();
    let finished = registry
        .finished
        .iter()
        .filter_map(|&index| match registry.entries[index] {
            Entry::Finished(Some(record)) => Some(Other::Finished(record)),
            _ => None,
        });
    let running = registry.entries.iter().filter_map(|entry| match entry {
        Entry::Running(slot) if !std::ptr::eq(slot.0, own) => {
            slot.0.pins.fetch_add(1, Ordering::SeqCst);
            Some(Other::Running(*slot))
        }
        _ => None,
    });
    finished.chain(running).collect()
}

/// Lets go of a slot [`others`] pinned.
pub(super) fn unpin(slot: SlotRef) {
    slot.0.pins.fetch_sub(1, Ordering::SeqCst);
}

/// Whether the host said that no other thread will run again.
pub(crate) fn stopped() -> bool {
    STOPPED.load(Ordering::Acquire)
}

/// The export a host calls once every thread of the program but the one
/// it takes the snapshot on has stopped, or will never run again (wasmtime
/// after the program's end, a page that terminated its workers after a
/// trap): snapshots then wait for no thread's answer.
#[cfg(all(target_family = "wasm", wasmprof_enabled))]
#[unsafe(no_mangle)]
pub(crate) extern "C" fn __wasmprof_threads_stopped() {
    STOPPED.store(true, Ordering::Release);
}
