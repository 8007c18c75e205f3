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
    /// The thread has made sure it is registered, on its first counted
    /// call through this block (see [`SiteBlock::count`]).
    #[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
    ready: std::cell::Cell<bool>,
}

impl<const FULL: usize, const COUNTED: usize> SiteBlock<FULL, COUNTED> {
    /// A thread's block before its first call: all zeros, so that it takes
    /// no bytes in the module (a TLS block's image is copied per thread).
    #[allow(clippy::new_without_default)] // only ever a thread-local's initialiser
    pub const fn new() -> Self {
        SiteBlock {
            full: [const { FullSlot::new() }; FULL],
            counted: [const { ThreadCount::new() }; COUNTED],
            ready: std::cell::Cell::new(false),
        }
    }

    /// One call of a count-only site found by the scan, whose counter is
    /// `counter`, one of this block's. The thread's first counted call
    /// through the block makes sure the thread is known to snapshots (a
    /// thread whose only instrumented calls are counted ones would not be
    /// otherwise).
    ///
    /// The test is the block's, not the site's: after one site's, the
    /// compiler knows the flag is up on every path (it was, or it was just
    /// raised), so the sites inlined after it, up to the next call it
    /// cannot see into, test nothing and call nothing. A test of each
    /// site's own count was a cold call each, and the function they were
    /// inlined into kept its values on the stack around them: in
    /// regex-lite's `PikeVM::search`, 29 such calls, now 6. On `patterns`,
    /// `--timer none` cost 1.16× on threads what it costs without, and
    /// 1.12× with this. The site itself is kept in the module by
    /// `__keep_site!`, since nothing on the call's path refers to it.
    #[cfg(target_family = "wasm")]
    #[inline(always)]
    pub fn count(&self, counter: &ThreadCount) {
        if !self.ready.get() {
            crate::count::first_count_in_block();
            self.ready.set(true);
        }
        crate::count::count_in(counter.calls());
    }
}
