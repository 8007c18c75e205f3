//! The count-only tier: `#[wasmprof::instrument(count)]`, which crate-wide
//! instrumentation gives the functions below `--min-size`.
//!
//! A counted call costs a few instructions and never reads the clock nor
//! makes itself the current node: its time stays in its caller's self time.
//! It is still counted against its caller's node, so the call graph keeps
//! the arc. Each site keeps a small table of pending counts, one slot per
//! caller node (the slot the caller's id picks): the hot path is a load of
//! the current node, a compare with the slot's caller and an increment. A
//! caller that finds its slot taken by another moves the other's count into
//! the tree, out of line. The snapshot moves every pending count in first.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use crate::site::{register_function, register_once, Tier};
use crate::state::{with_thread, ThreadState, ONE_TREE};
use crate::tree::NodeId;

/// Slots per site: a power of two. Callers whose node ids agree in these
/// low bits share a slot and take turns in it.
const SLOTS: usize = 8;

/// No caller: an empty slot.
const EMPTY: NodeId = u32::MAX;

/// The static behind one count-only function.
#[derive(Debug)]
pub struct CountSite {
    module_path: &'static str,
    name: &'static str,
    file: &'static str,
    line: u32,
    /// Function id plus one; zero until the first call.
    id: AtomicU32,
    callers: [AtomicU32; SLOTS],
    pending: [AtomicU64; SLOTS],
}

/// Every count site that was called, so that the snapshot can find the
/// counts still pending in them.
static SITES: Mutex<Vec<&'static CountSite>> = Mutex::new(Vec::new());

impl CountSite {
    /// Built by the attribute's expansion in a `static`.
    pub const fn new(
        module_path: &'static str,
        name: &'static str,
        file: &'static str,
        line: u32,
    ) -> Self {
        CountSite {
            module_path,
            name,
            file,
            line,
            id: AtomicU32::new(0),
            callers: [const { AtomicU32::new(EMPTY) }; SLOTS],
            pending: [const { AtomicU64::new(0) }; SLOTS],
        }
    }

    fn id(&'static self, self_type: Option<fn() -> &'static str>) -> u32 {
        match self.id.load(Relaxed) {
            0 => register_once(&self.id, || {
                lock_sites().push(self);
                register_function(
                    self.module_path,
                    self_type,
                    self.name,
                    self.file,
                    self.line,
                    Tier::Counted,
                )
            }),
            id => id - 1,
        }
    }

    /// Moves the count pending in `slot` into the tree.
    fn flush_slot(&'static self, thread: &mut ThreadState, slot: usize) {
        let caller = self.callers[slot].load(Relaxed);
        let pending = self.pending[slot].swap(0, Relaxed);
        if caller != EMPTY && pending > 0 {
            let function = self.id.load(Relaxed).wrapping_sub(1);
            let node = thread.tree.child(caller, function);
            thread.tree.add_calls(node, pending);
        }
    }
}

/// Counts one call of the function of `site`.
#[inline(always)]
pub fn count(site: &'static CountSite, self_type: Option<fn() -> &'static str>) {
    with_thread(|thread| {
        let caller = thread.current;
        let slot = caller as usize & (SLOTS - 1);
        if ONE_TREE && site.callers[slot].load(Relaxed) == caller {
            // Not `fetch_add`: with one thread a load and a store are
            // enough, and cheaper where atomics are real.
            let pending = &site.pending[slot];
            pending.store(pending.load(Relaxed) + 1, Relaxed);
        } else {
            count_slow(thread, site, self_type, caller, slot);
        }
    });
}

/// A caller that is not the one in its slot (or the first call, or a
/// program with threads, whose trees are per thread).
#[cold]
#[inline(never)]
fn count_slow(
    thread: &mut ThreadState,
    site: &'static CountSite,
    self_type: Option<fn() -> &'static str>,
    caller: NodeId,
    slot: usize,
) {
    let function = site.id(self_type);
    if !ONE_TREE {
        let node = thread.tree.child(caller, function);
        thread.tree.add_calls(node, 1);
        return;
    }
    site.flush_slot(thread, slot);
    // A caller past the tree's capacity has no node of its own to come
    // back to: count it at once, in the function's overflow node.
    if thread.tree.is_overflow(caller) {
        let node = thread.tree.child(caller, function);
        thread.tree.add_calls(node, 1);
        return;
    }
    site.callers[slot].store(caller, Relaxed);
    site.pending[slot].store(1, Relaxed);
}

/// Moves every pending count into this thread's tree: before a snapshot.
pub(crate) fn flush_pending(thread: &mut ThreadState) {
    let sites = lock_sites().clone();
    for site in sites {
        for slot in 0..SLOTS {
            site.flush_slot(thread, slot);
        }
    }
}

/// What one counted call costs, in the clock's unit (ms): measured once, with
/// the clock's cost, so that the callers' self time can be given it back.
pub(crate) fn measure_probe_cost(clock_cost: f64) -> f64 {
    static PROBE: CountSite = CountSite::new("wasmprof", "<calibration>", "", 0);
    const PROBES: u32 = 20_000;
    // The calibration site stands outside the function table: its slot is
    // claimed for the root by hand, so every probe takes the fast path.
    PROBE.callers[0].store(crate::tree::ROOT, Relaxed);
    let start = crate::clock::now();
    for _ in 0..PROBES {
        let pending = &PROBE.pending[std::hint::black_box(0)];
        pending.store(pending.load(Relaxed) + 1, Relaxed);
    }
    let end = crate::clock::now();
    PROBE.pending[0].store(0, Relaxed);
    ((end - start - clock_cost) / f64::from(PROBES)).max(0.0)
}

fn lock_sites() -> std::sync::MutexGuard<'static, Vec<&'static CountSite>> {
    SITES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::enter;
    use crate::site::Site;
    use crate::snapshot::take;

    static CALLER_A: Site = Site::new("count_tests", "a", "src/count.rs", 1);
    static CALLER_B: Site = Site::new("count_tests", "b", "src/count.rs", 2);
    static SMALL: CountSite = CountSite::new("count_tests", "small", "src/count.rs", 3);

    fn small() {
        count(&SMALL, None);
    }

    fn a(n: u32) {
        let _g = enter(&CALLER_A, None);
        for _ in 0..n {
            small();
        }
    }

    fn b(n: u32) {
        let _g = enter(&CALLER_B, None);
        for _ in 0..n {
            small();
            a(1);
        }
    }

    #[test]
    fn counted_calls_are_exact_per_caller() {
        std::thread::spawn(|| {
            a(5);
            b(3);
            small();
            let s = take();
            let calls = |path: &[&str]| -> u64 {
                (0..s.nodes.len())
                    .filter(|&i| s.path_names(i) == path)
                    .map(|i| s.nodes[i].calls)
                    .sum()
            };
            assert_eq!(calls(&["count_tests::a", "count_tests::small"]), 5);
            assert_eq!(calls(&["count_tests::b", "count_tests::small"]), 3);
            assert_eq!(
                calls(&["count_tests::b", "count_tests::a", "count_tests::small"]),
                3
            );
            assert_eq!(calls(&["count_tests::small"]), 1);
            let f = s
                .functions
                .iter()
                .find(|f| f.name == "count_tests::small")
                .unwrap();
            assert_eq!(f.tier, Tier::Counted);
        })
        .join()
        .unwrap();
    }
}
