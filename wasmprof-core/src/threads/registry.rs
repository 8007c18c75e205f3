//! The threads that recorded something: each one's slot, registered on its
//! first use of its state, and the order in which they exited.
//!
//! A slot is leaked when it registers, so that a snapshot may read it at
//! any time, whether its thread runs, has exited or was killed: a web
//! worker never runs its thread-locals' destructors, and a thread that
//! exits frees its TLS block. Where destructors run, one marks the thread
//! finished, so that snapshots read it without waiting.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::OWN;
use super::slot::Slot;
use crate::thread_state::ThreadState;

/// A registered slot, alive for good.
#[derive(Clone, Copy)]
pub(super) struct SlotRef(pub(super) &'static Slot);

impl PartialEq for SlotRef {
    fn eq(&self, other: &SlotRef) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

struct Registry {
    /// Every slot, in the order their threads first recorded something.
    slots: Vec<SlotRef>,
    /// The slots of threads that have exited, in the order they did.
    finished: Vec<SlotRef>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: Vec::new(),
    finished: Vec::new(),
});

/// Set by the host (`__wasmprof_threads_stopped`) once no thread but the
/// one that takes the snapshots will run again: snapshots then read every
/// thread as it stands, without waiting for answers that cannot come.
static STOPPED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set once the thread has exited: what it calls from other
    /// thread-locals' destructors after that is not recorded.
    static EXITED: Cell<bool> = const { Cell::new(false) };
    /// Marks the thread finished when it exits, where threads run their
    /// thread-locals' destructors (natively and on `wasm32-wasip1-threads`).
    /// Touched once, when the thread registers: never on a call's path.
    static EXIT: ExitHook = const { ExitHook };
}

/// Registers this thread's slot, on its first use of its state; `None` if
/// the thread has exited.
#[cold]
#[inline(never)]
pub(super) fn register() -> Option<&'static Slot> {
    if EXITED.with(Cell::get) {
        return None;
    }
    let _untracked = crate::memory::untracked::Untracked::begin();
    let mut state = ThreadState::new();
    // Named now, so that a snapshot names it whatever it recorded (a pool
    // worker may allocate before it makes a call).
    state.name = Some(crate::thread_state::current_thread_name());
    #[cfg(wasmprof_memory)]
    {
        state.tag = crate::memory::remote::new_thread_tag();
    }
    let slot: &'static Slot = Box::leak(Box::new(Slot::new(state)));
    OWN.with(|own| own.set(slot));
    EXIT.with(|_| {});
    lock().slots.push(SlotRef(slot));
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
    fn drop(&mut self) {
        let _ = EXITED.try_with(|exited| exited.set(true));
        let Ok(slot) = OWN.try_with(|own| own.replace(std::ptr::null())) else {
            return;
        };
        if slot.is_null() {
            return;
        }
        let _untracked = crate::memory::untracked::Untracked::begin();
        // SAFETY: registered slots are leaked.
        let slot = unsafe { &*slot };
        let mut registry = lock();
        slot.finished.store(true, Ordering::Release);
        registry.finished.push(SlotRef(slot));
    }
}

/// The registry stays usable even if a thread panicked while holding it.
fn lock() -> std::sync::MutexGuard<'static, Registry> {
    crate::spin::lock(&REGISTRY)
}

/// Every slot but this thread's: those that finished, in the order they
/// did, then those still running, in the order they first recorded.
pub(super) fn others() -> Vec<SlotRef> {
    let own = OWN.with(Cell::get);
    let registry = lock();
    let running = registry
        .slots
        .iter()
        .filter(|slot| !registry.finished.contains(slot));
    registry
        .finished
        .iter()
        .chain(running)
        .filter(|slot| !std::ptr::eq(slot.0, own))
        .copied()
        .collect()
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
