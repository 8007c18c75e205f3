//! Memory per call path (`cargo wasmprof … --memory`).
//!
//! [`Recording`] wraps the program's global allocator and charges each
//! allocation, reallocation and deallocation to the calling-context node
//! current at that moment, in a [`Ledger`] of the thread's state. Nothing
//! calls out of the module. Without `--memory` the build script leaves the
//! `wasmprof_memory` cfg unset: the runtime installs no allocator, and a
//! `Recording` that a program wraps around its own allocator by hand only
//! forwards.
//!
//! The runtime's own allocations (the tree growing, a site registering, a
//! snapshot being encoded) are not the program's: they happen while the
//! runtime is [`untracked`], and are passed through uncharged.

// Without `--memory` the book is kept in the state but never written.
#[cfg_attr(not(wasmprof_memory), allow(dead_code))]
pub(crate) mod ledger;
#[cfg(wasmprof_memory)]
mod merge;
mod recording;
// Without threads no block is freed on another thread.
#[cfg(wasmprof_memory)]
#[cfg_attr(one_thread, allow(dead_code))]
pub(crate) mod remote;
pub(crate) mod untracked;

pub use recording::Recording;

#[cfg(wasmprof_memory)]
pub(crate) use merge::{ThreadBook, merge};
#[cfg(wasmprof_memory)]
pub(crate) use recording::{memory_pages, runtime_live_bytes};
pub(crate) use untracked::untracked;

/// With `--memory` and std's allocator (the program declares none of its
/// own): std's allocator, recorded.
#[cfg(all(wasmprof_memory, not(wasmprof_memory_own)))]
#[global_allocator]
static RECORDING_SYSTEM: Recording<std::alloc::System> = Recording::new(std::alloc::System);

/// The recording allocator installed in this very test binary: built with
/// `WASMPROF_INSTRUMENT=host WASMPROF_INSTRUMENT_NATIVE=1
/// WASMPROF_MEMORY=system` (`cargo-wasmprof`'s unit tests do).
#[cfg(all(test, wasmprof_memory))]
mod recorded_tests;
