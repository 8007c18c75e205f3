//! With threads, the per-thread state of every site of a crate that
//! `cargo wasmprof` instrumented crate-wide, in one thread-local.
//!
//! Each site's state (a full site's cache of nodes, a count-only site's
//! counter) is the running thread's own, so it lives in thread-local
//! storage. A thread-local of each site's own is an address computed from
//! the thread's TLS base and a relocation the compiler cannot see through:
//! LLVM computes each one once per function and keeps it in a local, and a
//! function that calls a dozen instrumented ones keeps a dozen such
//! addresses live across its loop (regex-lite's `PikeVM::epsilon_closure`
//! did, and on a worker thread paid for it in spilled registers). One
//! thread-local per crate, indexed by a constant the rewrite gives each
//! site, is one address per function, and each site's state an offset from
//! it, folded into the load's and the store's immediate.
//!
//! The rewrite sees every function it instruments, so it numbers them and
//! declares the block at each crate root, sized for them (see
//! [`__site_block!`](crate::__site_block)). A site written by hand, outside
//! the rewrite, has no slot and keeps a thread-local of its own.

use crate::count::ThreadCount;
#[cfg(wasmprof_enabled)]
use crate::site::SiteCache;

/// A full site's slot: its cache of nodes; in the bench's floor a counter.
#[cfg(wasmprof_enabled)]
pub(crate) type FullSlot = SiteCache;
#[cfg(not(wasmprof_enabled))]
pub(crate) type FullSlot = ThreadCount;

/// One thread's state of a crate's `FULL` fully instrumented sites and its
/// `COUNTED` count-only ones, each at the index the rewrite gave it.
#[derive(Debug)]
pub struct SiteBlock<const FULL: usize, const COUNTED: usize> {
    pub full: [FullSlot; FULL],
    pub counted: [ThreadCount; COUNTED],
}

impl<const FULL: usize, const COUNTED: usize> SiteBlock<FULL, COUNTED> {
    /// A thread's block before its first call: all zeros, so that it takes
    /// no bytes in the module (a TLS block's image is copied per thread).
    #[allow(clippy::new_without_default)] // only ever a thread-local's initialiser
    pub const fn new() -> Self {
        SiteBlock {
            full: [const { FullSlot::new() }; FULL],
            counted: [const { ThreadCount::new() }; COUNTED],
        }
    }
}
