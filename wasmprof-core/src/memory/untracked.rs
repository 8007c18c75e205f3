//! The runtime's untracked sections: while the runtime is at work (the
//! tree growing, a site registering, a snapshot being encoded), what is
//! allocated is its own and not charged to the program's call paths.

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

/// Whether the runtime is at work on this thread: what it allocates now is
/// its own.
#[cfg(wasmprof_memory)]
#[inline(always)]
pub(super) fn untracked_now() -> bool {
    flag::get()
}

/// Whether the runtime is at work on this thread.
///
/// Read and written volatile: the compiler takes allocation calls for
/// calls that touch no memory of the program's, so it could drop the
/// flag's setting before an allocation the runtime makes (the flag is
/// restored right after) or move it across the call; the allocator would
/// then record the runtime's allocation while the runtime holds its state.
#[cfg(all(wasmprof_memory, one_thread))]
mod flag {
    use std::cell::UnsafeCell;

    struct OneThread(UnsafeCell<bool>);
    // SAFETY: without the atomics feature there are no other threads.
    unsafe impl Sync for OneThread {}
    static UNTRACKED: OneThread = OneThread(UnsafeCell::new(false));

    #[inline(always)]
    pub(super) fn replace(value: bool) -> bool {
        // SAFETY: one thread, and the cell is only accessed here.
        unsafe {
            let was = UNTRACKED.0.get().read_volatile();
            UNTRACKED.0.get().write_volatile(value);
            was
        }
    }

    #[inline(always)]
    pub(super) fn get() -> bool {
        // SAFETY: as above.
        unsafe { UNTRACKED.0.get().read_volatile() }
    }
}

/// Whether the runtime is at work on this thread (volatile, as above).
#[cfg(all(wasmprof_memory, not(one_thread)))]
mod flag {
    use std::cell::Cell;

    thread_local! {
        static UNTRACKED: Cell<bool> = const { Cell::new(false) };
    }

    #[inline(always)]
    pub(super) fn replace(value: bool) -> bool {
        // SAFETY: the cell is this thread's, and only accessed here.
        UNTRACKED.with(|flag| unsafe {
            let was = flag.as_ptr().read_volatile();
            flag.as_ptr().write_volatile(value);
            was
        })
    }

    #[inline(always)]
    pub(super) fn get() -> bool {
        // SAFETY: as above.
        UNTRACKED.with(|flag| unsafe { flag.as_ptr().read_volatile() })
    }
}
