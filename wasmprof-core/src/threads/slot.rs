//! One thread's slot: its state, and the few words through which a
//! snapshot on another thread asks for its record and knows when it may
//! read it.
//!
//! The thread brackets each use of its state (a call's entry or exit, an
//! allocation recorded) between two plain stores to its `generation`, odd
//! while it writes; in between it looks at the snapshots' request, and
//! answers it before anything else when it is new. All of that is plain
//! loads and stores, so the price of a call on a worker is the price of a
//! call on one thread.
//!
//! The answer is made on a cold path, where a fence costs nothing worth
//! counting: the thread copies its record into `published` and stores the
//! request's number in `answered`. A snapshot that finds a thread's
//! generation even and unchanged while it waits reads the state itself;
//! it raises `reading` first, and a thread that starts a use of its state
//! meanwhile sees the request, and in its answer waits for `reading` to
//! fall. The fences on both sides of that pair (the thread's after its odd
//! store, the snapshot's after it raises `reading`) make sure that one of
//! them sees the other: either the snapshot sees the generation move and
//! waits for the answer, or the thread waits for the snapshot's copy.

use std::cell::{Cell, UnsafeCell};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering, compiler_fence, fence};

use crate::thread_state::{ThreadRecord, ThreadState};

/// The snapshots' request: raised by one for each snapshot, looked at by
/// every thread at every section of its own (`record_with`), and when
/// [`ASKING`] is up.
pub(super) static REQUEST: AtomicU32 = AtomicU32::new(0);

/// Up while a snapshot waits for the threads' answers: what a call's entry
/// looks at, one load, before it answers the request.
pub(super) static ASKING: AtomicBool = AtomicBool::new(false);

/// Whether a snapshot is asking for the threads' records.
#[inline(always)]
pub(super) fn asking() -> bool {
    ASKING.load(Ordering::Relaxed)
}

/// One thread's slot, in its TLS block: initialised `const` and without a
/// destructor, so that reaching it is an offset from the block's base, and
/// a call's entry needs no state check. What a destructor would do the
/// exit hook does (`registry.rs`), where threads run them at all.
pub(super) struct Slot {
    /// The thread has registered (and has not exited); the thread's own.
    pub(super) registered: Cell<bool>,
    /// The thread has exited: what it calls from other thread-locals'
    /// destructors is not recorded.
    pub(super) exited: Cell<bool>,
    /// Odd while the thread uses its state. The thread's own, written with
    /// plain (volatile) stores; snapshots read it.
    generation: UnsafeCell<u32>,
    /// The last request the thread answered; the thread's own.
    pub(super) seen: Cell<u32>,
    /// The request whose record is in `published`.
    answered: AtomicU32,
    /// A snapshot is copying the thread's state where it stands.
    reading: AtomicBool,
    /// Snapshots reading the slot now: its thread's exit waits for none to
    /// be left before its TLS block goes.
    pub(super) pins: AtomicU32,
    /// The thread is exiting: its state is final.
    pub(super) gone: AtomicBool,
    /// The thread's record, copied by itself for the request `answered`.
    published: UnsafeCell<ManuallyDrop<Option<ThreadRecord>>>,
    pub(super) state: UnsafeCell<ManuallyDrop<ThreadState>>,
}

// SAFETY: the state is written by its thread alone; other threads read it
// only pinned (`pins`), as `read_where_it_stands` says, and `published`
// only once `answered` says it is there (see the module doc).
unsafe impl Sync for Slot {}

impl Slot {
    pub(super) const fn new() -> Slot {
        Slot {
            registered: Cell::new(false),
            exited: Cell::new(false),
            generation: UnsafeCell::new(0),
            seen: Cell::new(0),
            answered: AtomicU32::new(0),
            reading: AtomicBool::new(false),
            pins: AtomicU32::new(0),
            gone: AtomicBool::new(false),
            published: UnsafeCell::new(ManuallyDrop::new(None)),
            state: UnsafeCell::new(ManuallyDrop::new(ThreadState::new())),
        }
    }

    /// Runs `f` on the state, on the slot's own thread: the generation odd
    /// around it, and a new request answered first.
    #[inline(always)]
    pub(super) fn record_with<R>(&self, f: impl FnOnce(&mut ThreadState) -> R) -> R {
        let generation = self.generation.get();
        // SAFETY: the generation and the state are this thread's to write;
        // no caller of `with_own` calls it again while `f` runs, so the
        // borrow of the state is unique.
        unsafe {
            let before = generation.read();
            debug_assert!(before % 2 == 0, "a thread's state used within its own use");
            generation.write_volatile(before.wrapping_add(1));
            compiler_fence(Ordering::SeqCst);
            let request = REQUEST.load(Ordering::Relaxed);
            if request != self.seen.get() {
                self.answer(request);
            }
            let result = f(&mut *self.state.get());
            compiler_fence(Ordering::SeqCst);
            generation.write_volatile(before.wrapping_add(2));
            result
        }
    }

    /// At a call's entry: answers the request if a snapshot is asking and
    /// this thread has not answered it yet.
    #[inline(always)]
    pub(super) fn answer_if_asked(&self) {
        if asking() {
            self.answer_if_new();
        }
    }

    #[cold]
    #[inline(never)]
    fn answer_if_new(&self) {
        let request = REQUEST.load(Ordering::Relaxed);
        if request != self.seen.get() {
            self.answer(request);
        }
    }

    /// The thread's answer to `request`: its record copied into
    /// `published`, while no snapshot copies the state itself.
    #[cold]
    #[inline(never)]
    fn answer(&self, request: u32) {
        let _untracked = crate::memory::untracked::Untracked::begin();
        fence(Ordering::SeqCst);
        self.wait_for_reader();
        // SAFETY: this thread's own state, not written while it is copied;
        // `published` is read by snapshots only once `answered` names this
        // request, and the next request comes after this snapshot's end.
        unsafe {
            **self.published.get() = (*self.state.get()).record();
        }
        self.seen.set(request);
        self.answered.store(request, Ordering::Release);
        // A snapshot that gave up waiting may be copying the state: the
        // thread writes it only once that is over.
        fence(Ordering::SeqCst);
        self.wait_for_reader();
    }

    fn wait_for_reader(&self) {
        while self.reading.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
    }

    /// The generation as the thread last wrote it.
    pub(super) fn generation(&self) -> u32 {
        // SAFETY: a word the thread writes whole; read as it stands.
        unsafe { self.generation.get().read_volatile() }
    }

    /// The thread's record for `request`, if it has answered it.
    pub(super) fn answer_to(&self, request: u32) -> Option<Option<ThreadRecord>> {
        if self.answered.load(Ordering::Acquire) != request {
            return None;
        }
        // SAFETY: published for this request, and not written again before
        // the next one (see `answer`).
        Some(unsafe { (**self.published.get()).clone() })
    }

    /// Copies the state where it stands, from another thread: `expected`
    /// is the even generation seen unchanged while the snapshot waited
    /// (`None` when the thread has stopped for good, in the middle of a
    /// use or not). `None` if the thread moved meanwhile: it will answer.
    /// An answer that came meanwhile is taken instead.
    pub(super) fn read_where_it_stands(
        &self,
        request: u32,
        expected: Option<u32>,
    ) -> Option<Option<ThreadRecord>> {
        self.reading.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let read = match self.answer_to(request) {
            Some(answer) => Some(answer),
            None if expected.is_some_and(|e| e != self.generation()) => None,
            None => {
                // SAFETY: the thread is not writing its state: its
                // generation was even and still while the snapshot waited,
                // and a use it begins now waits in its answer for
                // `reading` to fall (or it has stopped for good).
                let record = unsafe { (*self.state.get()).record() };
                fence(Ordering::SeqCst);
                match expected {
                    Some(e) if e != self.generation() => None,
                    _ => Some(record),
                }
            }
        };
        self.reading.store(false, Ordering::SeqCst);
        read
    }
}
