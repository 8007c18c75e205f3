//! Every thread's state, where a snapshot can read it: the threads still
//! running as well as those that have exited.
//!
//! A thread pool's workers (rayon's, wasm-bindgen-rayon's web workers)
//! never exit, so a snapshot that waited for threads to finish would miss
//! all their work. Each thread's state therefore sits behind a lock word of
//! its own: the thread holds it for the few instructions of each guard
//! operation, and a snapshot holds it while it copies the thread's tree.
//! The thread never waits on another thread of the program, only on a
//! snapshot, and only for the length of one copy.
//!
//! When a thread exits, its record moves from the live list to the finished
//! one under the registry's lock, so a snapshot sees it exactly once.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::thread_state::{ThreadRecord, ThreadState};
use crate::tree::{CallTree, DEFAULT_CAP};

/// The lock word's states.
const FREE: u32 = 0;
const OWNER: u32 = 1;
const READER: u32 = 2;

/// How often a snapshot tries a busy thread's lock before it gives up on
/// the thread: far longer than any guard operation holds it, so only a
/// thread stopped in the middle of one (killed by a trap) is left out.
const READ_TRIES: u32 = 50_000_000;

/// One thread's state and its lock.
struct Slot {
    lock: AtomicU32,
    /// Whether the slot is in [`REGISTRY`]; only its thread reads it.
    registered: Cell<bool>,
    state: UnsafeCell<ThreadState>,
}

/// A slot's address, which stays valid while it is in the registry: a slot
/// leaves the registry in its thread's destructor, under the registry's
/// lock, which a reader holds while it reads.
#[derive(Clone, Copy, PartialEq)]
struct SlotRef(*const Slot);

// SAFETY: a `SlotRef` is only dereferenced under the registry's lock, and
// the state behind it only under the slot's lock word (see above).
unsafe impl Send for SlotRef {}

/// The threads that recorded something.
pub(crate) struct Registry {
    live: Vec<SlotRef>,
    /// Threads that have exited, in the order they did.
    finished: Vec<ThreadRecord>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: Vec::new(),
    finished: Vec::new(),
});

thread_local! {
    static SLOT: Slot = const {
        Slot {
            lock: AtomicU32::new(FREE),
            registered: Cell::new(false),
            state: UnsafeCell::new(ThreadState::new()),
        }
    };
}

/// Locks the registry: while it is held no thread enters or leaves it.
pub(crate) fn lock() -> MutexGuard<'static, Registry> {
    crate::spin::lock(&REGISTRY)
}

/// Runs `f` on this thread's state; `None` while the thread is being torn
/// down, when calls are simply not recorded.
#[inline(always)]
pub(crate) fn with_own<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    SLOT.try_with(|slot| {
        if !slot.registered.get() {
            slot.register();
        }
        if !slot.acquire() {
            return None;
        }
        let _held = Held(&slot.lock);
        // SAFETY: the lock word is ours, so no reader looks at the state,
        // and no caller of `with_thread` runs user code or calls it again
        // while it holds the reference, so the borrow is unique.
        Some(f(unsafe { &mut *slot.state.get() }))
    })
    .ok()
    .flatten()
}

/// A lock word held, let go when dropped, on unwinding as well.
struct Held<'a>(&'a AtomicU32);

impl Drop for Held<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.swap(FREE, Ordering::Release);
    }
}

impl Slot {
    /// Puts this thread's slot in the registry, the first time the thread
    /// records anything. Done before the lock word is taken: a reader holds
    /// the registry's lock while it waits for a lock word.
    #[cold]
    #[inline(never)]
    fn register(&self) {
        let _untracked = crate::memory::untracked::Untracked::begin();
        self.registered.set(true);
        // Named now, so that a snapshot names it whatever it recorded
        // (a pool worker may allocate before it makes a call).
        let name = crate::thread_state::current_thread_name();
        // SAFETY: this thread's own state, not yet in the registry, so no
        // reader can see it.
        let state = unsafe { &mut *self.state.get() };
        state.name = Some(name);
        #[cfg(wasmprof_memory)]
        {
            state.tag = crate::memory::remote::thread_tag();
        }
        lock().live.push(SlotRef(self));
        if let Some((clock_cost, probe_cost)) = crate::calibration::costs() {
            with_own(|state| {
                state.clock_cost = clock_cost;
                state.probe_cost = probe_cost;
            });
        }
    }

    /// Takes the lock word for this slot's own thread, waiting out a
    /// reader. `false` if the thread holds it already: a nested use, which
    /// the runtime never makes, is not recorded rather than deadlocked.
    #[inline(always)]
    fn acquire(&self) -> bool {
        loop {
            match self
                .lock
                .compare_exchange_weak(FREE, OWNER, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(OWNER) => {
                    debug_assert!(
                        false,
                        "the runtime used a thread's state within its own use"
                    );
                    return false;
                }
                Err(_) => std::hint::spin_loop(),
            }
        }
    }

    /// Runs `f` on the state of the slot's thread, from another thread.
    /// `None` if the thread kept its lock word through all the tries.
    fn read<R>(&self, f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
        for _ in 0..READ_TRIES {
            if self
                .lock
                .compare_exchange_weak(FREE, READER, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                let _held = Held(&self.lock);
                // SAFETY: the lock word is ours, so the thread is not using
                // its state; the registry's lock, held by our caller, keeps
                // the slot alive.
                return Some(f(unsafe { &mut *self.state.get() }));
            }
            std::hint::spin_loop();
        }
        None
    }
}

impl Drop for Slot {
    /// The thread exits: its record moves from the live list to the
    /// finished one in one step, so every snapshot sees it exactly once.
    fn drop(&mut self) {
        if !self.registered.get() {
            return;
        }
        let _untracked = crate::memory::untracked::Untracked::begin();
        let mut registry = lock();
        let me = SlotRef(self);
        registry.live.retain(|slot| *slot != me);
        if let Some(record) = self.state.get_mut().record(true) {
            registry.finished.push(record);
        }
    }
}

/// What the threads still running recorded, other than this one, in the
/// order they were first seen; `registry` is the registry's lock, held.
/// A thread that could not be read is named with the reason and left
/// empty, so it is never silently missing.
pub(crate) fn running(registry: &Registry) -> Vec<ThreadRecord> {
    let own = SLOT
        .try_with(|slot| SlotRef(slot))
        .unwrap_or(SlotRef(std::ptr::null()));
    let mut records = Vec::new();
    for &slot in registry.live.iter().filter(|&&slot| slot != own) {
        // SAFETY: the slot is in the registry, whose lock our caller holds.
        let slot = unsafe { &*slot.0 };
        match slot.read(|state| state.record(false)) {
            Some(Some(record)) => records.push(record),
            Some(None) => {}
            None => records.push(ThreadRecord::unread()),
        }
    }
    records
}

impl Registry {
    /// The threads that have exited, in the order they did.
    pub(crate) fn finished(&self) -> &[ThreadRecord] {
        &self.finished
    }
}

impl ThreadRecord {
    /// A thread a snapshot could not read: it held its state through all
    /// the snapshot's tries, stopped in the middle of recording a call.
    pub(crate) fn unread() -> Self {
        ThreadRecord {
            name: "a thread stopped while recording (its calls are not in this profile)".to_owned(),
            tree: CallTree::new(DEFAULT_CAP),
            #[cfg(wasmprof_memory)]
            memory: Default::default(),
            #[cfg(wasmprof_memory)]
            tag: u32::MAX,
        }
    }
}

impl ThreadState {
    /// What the thread recorded, or `None` if it recorded nothing.
    /// `take` moves the tree out (the thread is exiting); else it is
    /// copied, with the calls still running marked as not returned.
    pub(crate) fn record(&mut self, take: bool) -> Option<ThreadRecord> {
        #[cfg(wasmprof_memory)]
        let memory = self.memory.view();
        #[cfg(wasmprof_memory)]
        let allocated = !memory.nodes.is_empty();
        #[cfg(not(wasmprof_memory))]
        let allocated = false;
        if self.tree.nodes().len() <= 1 && !allocated {
            return None;
        }
        let name = self.name.clone().unwrap_or_else(|| "thread".to_owned());
        let tree = if take {
            std::mem::replace(&mut self.tree, CallTree::new(DEFAULT_CAP))
        } else {
            // The calls it is in the middle of have not returned: marked
            // so, their time is not in yet.
            let mut tree = self.tree.clone();
            let mut at = self.current;
            while at != crate::tree::ROOT && (at as usize) < tree.nodes().len() {
                tree.mark_abandoned(at);
                at = tree.nodes()[at as usize].parent;
            }
            tree
        };
        Some(ThreadRecord {
            name,
            tree,
            #[cfg(wasmprof_memory)]
            memory,
            #[cfg(wasmprof_memory)]
            tag: self.tag,
        })
    }
}

#[cfg(test)]
mod tests;
