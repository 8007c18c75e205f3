//! What one thread records: its tree, its timed calls under way, its
//! futures, frames and memory book; and what is copied out of it for a
//! snapshot. Plain data: how a thread reaches its own is `state.rs`.

use crate::future_stats::Futures;
use crate::timed_call::TimedFrame;
use crate::tree::{CallTree, DEFAULT_CAP, NodeId, ROOT};

/// WebAssembly without the atomics feature has one thread and so one tree.
/// (`one_thread` is set by the build script.)
pub(crate) const ONE_TREE: bool = cfg!(one_thread);

pub(crate) struct ThreadState {
    pub tree: CallTree,
    /// The node of the innermost call still running on this thread.
    pub current: NodeId,
    /// What one clock read costs, as seen between two reads (ms); negative
    /// until measured.
    pub clock_cost: f64,
    /// What counting one call of a count-only function costs (ms).
    pub probe_cost: f64,
    /// Timed calls so far: a timed call's span holds the clock reads of the
    /// timed calls made within it, which are taken out of its time.
    pub timed_total: u64,
    /// Draws which calls of a node found too short to time are timed all
    /// the same, to see whether they still are.
    pub random: crate::tree::Random,
    /// The timed calls still running, innermost last.
    pub timed: Vec<TimedFrame>,
    /// What the futures of async functions did, per call path.
    pub futures: Futures,
    /// The node of the test the harness is running, and the depth of the
    /// timed calls under it (see `harness.rs`).
    pub harness: Option<(NodeId, usize)>,
    /// The animation frames a page host marked (see `animation_frames.rs`).
    pub frames: crate::animation_frames::record::FrameRecord,
    /// What each path allocated and holds (`--memory`); not there at all
    /// without it.
    #[cfg(wasmprof_memory)]
    pub memory: crate::memory::ledger::Ledger,
    /// The thread's name, taken when it is first seen (`threads.rs`);
    /// `None` on WebAssembly without threads, whose one thread is `main`.
    pub name: Option<String>,
    /// The tag this thread's blocks carry (`--memory`), taken when the
    /// thread is first seen (`threads.rs`).
    #[cfg(all(wasmprof_memory, not(one_thread)))]
    pub tag: u32,
    /// What other threads' blocks this thread freed, by their owner
    /// (`--memory`; see `memory/remote.rs`).
    #[cfg(all(wasmprof_memory, not(one_thread)))]
    pub releases: crate::memory::remote::Releases,
    /// Where this thread's counter of each count-only site it called is:
    /// a thread-local of the site's own, by the site's index (see
    /// [`crate::count::CountSite`]).
    #[cfg(not(one_thread))]
    pub counters: Vec<(u32, *mut u64)>,
}

impl ThreadState {
    pub(crate) const fn new() -> Self {
        ThreadState {
            tree: CallTree::new(DEFAULT_CAP),
            current: ROOT,
            clock_cost: -1.0,
            probe_cost: 0.0,
            timed_total: 0,
            random: crate::tree::Random::new(0x2545_f491_4f6c_dd1d),
            timed: Vec::new(),
            futures: Futures::new(),
            harness: None,
            frames: crate::animation_frames::record::FrameRecord::new(),
            #[cfg(wasmprof_memory)]
            memory: crate::memory::ledger::Ledger::new(),
            name: None,
            #[cfg(all(wasmprof_memory, not(one_thread)))]
            tag: 0,
            #[cfg(all(wasmprof_memory, not(one_thread)))]
            releases: crate::memory::remote::Releases::new(),
            #[cfg(not(one_thread))]
            counters: Vec::new(),
        }
    }
}

/// The running thread's name (`main` for Rust's main thread): the name
/// the program gave it, else `thread N` in the order threads are first
/// seen.
#[cfg(not(one_thread))]
pub(crate) fn current_thread_name() -> String {
    static UNNAMED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    match std::thread::current().name() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => format!(
            "thread {}",
            UNNAMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ),
    }
}

/// What a thread recorded, copied out for a snapshot: by the thread
/// itself when a snapshot asked, or by the snapshot where the thread stood
/// (`threads.rs`).
#[derive(Clone)]
pub(crate) struct ThreadRecord {
    pub name: String,
    pub tree: CallTree,
    /// Its calls of each count-only function, by site index.
    pub counts: Vec<u64>,
    /// How the snapshot came by this record.
    pub read: wasmprof_wire::ThreadRead,
    /// Its book, the tag its blocks carry, and what it freed of other
    /// threads' blocks (`--memory`).
    #[cfg(wasmprof_memory)]
    pub memory: crate::memory::ledger::LedgerView,
    #[cfg(wasmprof_memory)]
    pub tag: u32,
    #[cfg(wasmprof_memory)]
    pub releases: Vec<crate::memory::remote::Release>,
}

#[cfg(not(one_thread))]
impl ThreadState {
    /// The thread's calls of each count-only site, by the site's index, as
    /// its counters stand.
    pub(crate) fn counts(&self) -> Vec<u64> {
        let mut counts = Vec::new();
        for &(index, counter) in &self.counters {
            let index = index as usize;
            if counts.len() <= index {
                counts.resize(index + 1, 0);
            }
            // SAFETY: a thread-local of the thread's, alive while its
            // thread is (a snapshot reading it from another thread has the
            // thread's slot pinned, which its exit waits for); an aligned
            // word, which its thread writes whole.
            counts[index] += unsafe { counter.read_volatile() };
        }
        // The sites found in static data: each counter as far from this
        // state as the running thread's counter is from its own state.
        #[cfg(target_family = "wasm")]
        {
            let here = crate::threads::own_state_address() as isize;
            let this = self as *const ThreadState as isize;
            for (site, counter_here) in crate::count::counted_in_threads() {
                let counter = (this + (counter_here as isize - here)) as *const u64;
                // SAFETY: as above: the thread's thread-local of the site,
                // at its place in the thread's TLS block.
                let calls = unsafe { counter.read_volatile() };
                if calls > 0 {
                    let index = site.index_registered();
                    if counts.len() <= index {
                        counts.resize(index + 1, 0);
                    }
                    counts[index] += calls;
                }
            }
        }
        counts
    }

    /// What the thread has recorded, copied without changing anything of
    /// it (a snapshot may be copying it from another thread); `None` if it
    /// recorded nothing. The calls it is in the middle of have not
    /// returned: they are marked so, and their time is not in yet.
    pub(crate) fn record(&self) -> Option<ThreadRecord> {
        #[cfg(wasmprof_memory)]
        let memory = self.memory.clone().view();
        #[cfg(wasmprof_memory)]
        let allocated = !memory.nodes.is_empty();
        #[cfg(not(wasmprof_memory))]
        let allocated = false;
        let counts = self.counts();
        let counted = counts.iter().skip(1).any(|&c| c > 0);
        if self.tree.nodes().len() <= 1 && !allocated && !counted {
            return None;
        }
        #[cfg(not(test))]
        let mut tree = self.tree.clone();
        // The unit tests slow the copy down, so that a copy made while the
        // thread writes would show it (`threads/tests.rs`).
        #[cfg(test)]
        let mut tree = crate::threads::tests::copy_tree(&self.tree);
        let mut at = self.current;
        while at != crate::tree::ROOT && (at as usize) < tree.nodes().len() {
            tree.mark_abandoned(at);
            at = tree.nodes()[at as usize].parent;
        }
        Some(ThreadRecord {
            name: self.name.clone().unwrap_or_else(|| "thread".to_owned()),
            tree,
            counts,
            read: wasmprof_wire::ThreadRead::Answered,
            #[cfg(wasmprof_memory)]
            memory,
            #[cfg(wasmprof_memory)]
            tag: self.tag,
            #[cfg(wasmprof_memory)]
            releases: self.releases.all().to_vec(),
        })
    }
}

/// Calls of count-only functions so far on this thread, when timed: a
/// timed call's span holds their cost, which is taken out of its time.
/// Only the thread itself reads them, so they are kept apart from its
/// state, and counting one takes no lock (`threads.rs`).
pub(crate) mod counted {
    use std::cell::Cell;

    #[cfg(not(one_thread))]
    thread_local! {
        static COUNTED: Cell<u64> = const { Cell::new(0) };
    }

    #[cfg(one_thread)]
    struct OneThread(Cell<u64>);
    // SAFETY: without the atomics feature there are no other threads.
    #[cfg(one_thread)]
    unsafe impl Sync for OneThread {}
    #[cfg(one_thread)]
    static COUNTED: OneThread = OneThread(Cell::new(0));

    #[inline(always)]
    fn with<R>(f: impl FnOnce(&Cell<u64>) -> R) -> Option<R> {
        #[cfg(not(one_thread))]
        return COUNTED.try_with(f).ok();
        #[cfg(one_thread)]
        Some(f(&COUNTED.0))
    }

    /// One more counted call.
    #[inline(always)]
    pub(crate) fn add() {
        with(|c| c.set(c.get() + 1));
    }

    /// The counted calls so far.
    #[inline(always)]
    pub(crate) fn total() -> u64 {
        with(Cell::get).unwrap_or(0)
    }

    /// Sets the count back (after the calibration's own counted calls).
    pub(crate) fn set(total: u64) {
        with(|c| c.set(total));
    }
}
