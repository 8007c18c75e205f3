//! The snapshot: the whole profile as bytes in linear memory, in the wire
//! format of `wasmprof-wire` (re-exported here), gathered from every
//! thread's tree by [`take`] and handed to the host by the module's
//! exports.
//!
//! A host calls the module's `__wasmprof_snapshot` export whenever it wants
//! the data — after the program returns, after a trap, on a timeout — and
//! copies the bytes out. Nothing is pushed to the host while the program
//! runs, so a host needs no more than the `getTime` import and this export.

pub use wasmprof_wire::{
    DecodeError, MAGIC, NEVER_RETURNED, NodeTiming, Snapshot, SnapshotFunction, SnapshotFuture,
    SnapshotNode, SnapshotThread, ThreadNode, Tier, VERSION,
};

use crate::clock::TIMED;
use crate::site::functions;
use crate::state::with_thread;
use crate::thread_state::ThreadRecord;
use crate::tree::{CallTree, ROOT};

/// A node's flags in the snapshot: some calls too short to time, one that
/// never returned.
fn node_flags(untimed_short: bool, abandoned: bool) -> u32 {
    use wasmprof_wire::node_flags::{NEVER_RETURNED, PARTLY_TIMED};
    (if untimed_short { PARTLY_TIMED } else { 0 }) | if abandoned { NEVER_RETURNED } else { 0 }
}

/// What the thread taking a snapshot has of its own.
struct Own {
    tree: CallTree,
    current: crate::tree::NodeId,
    clock_cost: f64,
    frames: Option<wasmprof_wire::SnapshotFrames>,
    name: Option<String>,
    /// Its calls of each count-only function, by site index (threads).
    counts: Vec<u64>,
    #[cfg(wasmprof_memory)]
    memory: Option<crate::memory::ledger::LedgerView>,
    #[cfg(wasmprof_memory)]
    releases: Vec<crate::memory::remote::Release>,
    /// The tag its blocks carry.
    #[cfg(wasmprof_memory)]
    tag: u32,
}

/// Takes a snapshot of every thread's tree: this thread's as it stands,
/// with the trees of the other threads, finished or still running, merged
/// in, and each thread's share when more than one recorded calls.
pub fn take() -> Snapshot {
    // The snapshot's own allocations are the runtime's.
    let _untracked = crate::memory::untracked::Untracked::begin();
    // This thread's first, outside the request the others answer.
    let own = with_thread(|t| Own {
        tree: t.tree.clone(),
        current: t.current,
        clock_cost: t.clock_cost,
        frames: t.frames.snapshot(),
        name: t.name.clone(),
        #[cfg(not(one_thread))]
        counts: t.counts(),
        #[cfg(one_thread)]
        counts: Vec::new(),
        #[cfg(wasmprof_memory)]
        memory: Some(t.memory.view()),
        #[cfg(all(wasmprof_memory, not(one_thread)))]
        releases: t.releases.all().to_vec(),
        #[cfg(all(wasmprof_memory, one_thread))]
        releases: Vec::new(),
        #[cfg(all(wasmprof_memory, not(one_thread)))]
        tag: t.tag,
        #[cfg(all(wasmprof_memory, one_thread))]
        tag: 0,
    })
    .unwrap_or_else(|| Own {
        tree: CallTree::new(crate::tree::DEFAULT_CAP),
        current: ROOT,
        clock_cost: 0.0,
        frames: None,
        name: None,
        counts: Vec::new(),
        #[cfg(wasmprof_memory)]
        memory: None,
        #[cfg(wasmprof_memory)]
        releases: Vec::new(),
        #[cfg(wasmprof_memory)]
        tag: 0,
    });
    #[cfg(all(not(one_thread), wasmprof_oracle))]
    let (others, oracle) = settled_others();
    #[cfg(all(not(one_thread), not(wasmprof_oracle)))]
    let others: Vec<ThreadRecord> = crate::threads::others();
    #[cfg(one_thread)]
    let others: Vec<ThreadRecord> = Vec::new();
    #[cfg(any(one_thread, not(wasmprof_oracle)))]
    let oracle = oracle();
    let mut counted: Vec<u64> = Vec::new();
    let per_thread: Vec<&[u64]> = std::iter::once(own.counts.as_slice())
        .chain(others.iter().map(|t| t.counts.as_slice()))
        .collect();
    for (id, calls) in crate::count::counted_calls(&per_thread) {
        let id = id as usize;
        if counted.len() <= id {
            counted.resize(id + 1, 0);
        }
        counted[id] = calls;
    }
    let mut tree = own.tree;
    let (current, clock_cost, frames) = (own.current, own.clock_cost, own.frames);
    let (threads, maps) = merge_others(&mut tree, own.name, &others);
    let nodes: Vec<SnapshotNode> = tree
        .nodes()
        .iter()
        .map(|n| SnapshotNode {
            parent: n.parent,
            function: n.function,
            calls: n.calls,
            timed_calls: n.timed_calls,
            flags: node_flags(n.untimed_short, n.abandoned),
            inclusive: n.inclusive,
        })
        .collect();
    Snapshot {
        timed: TIMED,
        functions: functions()
            .into_iter()
            .enumerate()
            .map(|(id, f)| SnapshotFunction {
                name: f.name,
                file: f.file.to_owned(),
                line: f.line,
                tier: f.tier,
                is_async: f.is_async,
                calls: counted.get(id).copied().unwrap_or(0),
                marker: f.marker,
                name_given: f.name_given,
                is_test: f.is_test,
            })
            .collect(),
        futures: crate::future::stats()
            .into_iter()
            .map(|f| SnapshotFuture {
                node: f.node,
                polls: f.polls,
                completions: f.completions,
                cancellations: f.cancellations,
                pending_ms: f.pending_time.max(0.0),
                latency_count: f.latency.count,
                latency_total_ms: f.latency.total,
                latency_median_ms: f.latency.median(),
                latency_max_ms: f.latency.max,
            })
            .collect(),
        memory: memory(
            #[cfg(wasmprof_memory)]
            (own.memory, own.releases, own.tag),
            nodes.len(),
            &others,
            &maps,
        ),
        oracle,
        frames,
        threads,
        nodes,
        current,
        overflow: tree.overflow(),
        cap: tree.cap() as u32,
        clock_cost: clock_cost.max(0.0),
    }
}

/// Merges the other threads' trees into `tree` (this thread's), and says
/// what each thread did on its paths: `None` when only this thread
/// recorded calls.
/// The second value is, for each other thread, where its nodes went.
fn merge_others(
    tree: &mut CallTree,
    name: Option<String>,
    finished: &[ThreadRecord],
) -> (Option<Vec<SnapshotThread>>, Vec<Vec<u32>>) {
    if finished.is_empty() {
        return (None, Vec::new());
    }
    let share = |nodes: &[crate::tree::Node], map: &dyn Fn(usize) -> u32| {
        nodes
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, n)| n.calls > 0)
            .map(|(index, n)| ThreadNode {
                node: map(index),
                flags: node_flags(n.untimed_short, n.abandoned),
                calls: n.calls,
                timed_calls: n.timed_calls,
                inclusive: n.inclusive,
            })
            .collect::<Vec<_>>()
    };
    // This thread's nodes keep their places: merging only adds to them.
    // Like every thread, it is listed only if it recorded calls: a page
    // that reads a program running on its workers is not one of its
    // threads.
    let own = share(tree.nodes(), &|index| index as u32);
    let mut threads = Vec::with_capacity(finished.len() + 1);
    if !own.is_empty() {
        threads.push(SnapshotThread {
            name: name.unwrap_or_else(|| "main".to_owned()),
            read: wasmprof_wire::ThreadRead::Answered,
            nodes: own,
        });
    }
    let mut maps = Vec::with_capacity(finished.len());
    for thread in finished {
        let map = tree.merge_from(&thread.tree);
        threads.push(SnapshotThread {
            name: thread.name.clone(),
            read: thread.read,
            nodes: share(thread.tree.nodes(), &|index| map[index]),
        });
        maps.push(map);
    }
    (Some(threads), maps)
}

/// How long a snapshot with the oracle waits for the other threads to
/// make no instrumented call while it reads them, in ms.
#[cfg(all(not(one_thread), wasmprof_oracle))]
const SETTLE: f64 = 500.0;

/// The other threads' records and the oracle's counts, read until no
/// instrumented call was made while the records were read (the oracle's
/// counts the same before and after), for at most [`SETTLE`]: then the
/// two agree, as `--verify-counts` checks. A pool's workers go on calling
/// in its idle loop for a moment after the program's end (rayon-core
/// instrumented), and one may just be starting: read while they do, the
/// oracle counts calls that came after a worker's record, or a whole
/// worker that registered after the others were listed.
#[cfg(all(not(one_thread), wasmprof_oracle))]
fn settled_others() -> (Vec<ThreadRecord>, Option<Vec<wasmprof_wire::OracleCount>>) {
    let deadline = crate::clock::wait_now() + SETTLE;
    loop {
        let before = crate::oracle::counts();
        let others = crate::threads::others();
        let after = crate::oracle::counts();
        if before == after || crate::clock::wait_now() > deadline {
            return (others, Some(after));
        }
    }
}

/// The oracle's counts, when the build has it (`--verify-counts`), on
/// one thread.
#[cfg(all(wasmprof_oracle, one_thread))]
fn oracle() -> Option<Vec<wasmprof_wire::OracleCount>> {
    Some(crate::oracle::counts())
}

/// The oracle is not in this build.
#[cfg(not(wasmprof_oracle))]
fn oracle() -> Option<Vec<wasmprof_wire::OracleCount>> {
    None
}

/// Memory per call path, when the build records memory: this thread's
/// book and the other threads' (`maps` says where their nodes went in
/// the merged tree), less what other threads freed of each path's blocks.
#[cfg(wasmprof_memory)]
fn memory(
    (own, own_releases, own_tag): (
        Option<crate::memory::ledger::LedgerView>,
        Vec<crate::memory::remote::Release>,
        u32,
    ),
    n_nodes: usize,
    finished: &[ThreadRecord],
    maps: &[Vec<u32>],
) -> Option<wasmprof_wire::SnapshotMemory> {
    use crate::memory::{ThreadBook, merge};
    use wasmprof_wire::{FailedAlloc, MemoryGrow, PathMemory, SnapshotMemory};
    let own = own?;
    let same = |node: u32| node;
    let mut books = vec![ThreadBook {
        thread: own_tag,
        view: &own,
        map: &same,
    }];
    let mapped: Vec<_> = maps
        .iter()
        .map(|map| move |node: u32| map.get(node as usize).copied().unwrap_or(ROOT))
        .collect();
    for (thread, map) in finished.iter().zip(&mapped) {
        books.push(ThreadBook {
            thread: thread.tag,
            view: &thread.memory,
            map,
        });
    }
    let releases = crate::memory::remote::merged(
        std::iter::once(own_releases.as_slice())
            .chain(finished.iter().map(|t| t.releases.as_slice())),
    );
    let view = merge(&books, &releases);
    // A node the tree does not have (none should be missing) is the root's.
    let known = |node: u32| {
        if (node as usize) < n_nodes {
            node
        } else {
            ROOT
        }
    };
    let pages = crate::memory::memory_pages();
    Some(SnapshotMemory {
        first_pages: view.first_pages.unwrap_or(pages),
        pages,
        live_blocks: view.live_blocks,
        live_bytes: view.live_bytes,
        peak_blocks: view.peak_blocks,
        peak_bytes: view.peak_bytes,
        runtime_bytes: crate::memory::runtime_live_bytes(),
        failed: view.failed.map(|f| FailedAlloc {
            node: known(f.node),
            ..f
        }),
        paths: view
            .nodes
            .iter()
            .map(|&(node, path)| PathMemory {
                node: known(node),
                ..path
            })
            .collect(),
        grows: view
            .grows
            .iter()
            .map(|g| MemoryGrow {
                node: known(g.node),
                ..*g
            })
            .collect(),
        grows_dropped: view.grows_dropped,
    })
}

/// Memory is not recorded in this build.
#[cfg(not(wasmprof_memory))]
fn memory(
    _n_nodes: usize,
    _finished: &[ThreadRecord],
    _maps: &[Vec<u32>],
) -> Option<wasmprof_wire::SnapshotMemory> {
    None
}

/// The export a host calls to read the profile: returns a pointer to the
/// snapshot bytes, which start with `WPRF` and their total length. The bytes
/// stay valid until the next call.
#[cfg(all(target_family = "wasm", wasmprof_enabled))]
#[unsafe(no_mangle)]
pub extern "C" fn __wasmprof_snapshot() -> *const u8 {
    use std::sync::Mutex;
    static LAST: Mutex<Vec<u8>> = Mutex::new(Vec::new());
    let mut last = crate::spin::lock(&LAST);
    *last = take().encode();
    last.as_ptr()
}

/// The export a host calls to know whether the program is still at work:
/// how many futures of instrumented async functions are pending (created,
/// neither completed nor dropped).
#[cfg(all(target_family = "wasm", wasmprof_enabled))]
#[unsafe(no_mangle)]
pub extern "C" fn __wasmprof_pending_futures() -> u32 {
    crate::future::pending() as u32
}

/// How many polls of instrumented futures there have been (wrapping): the
/// browser host takes a change as a sign that the program is still at
/// work, as it takes console output.
#[cfg(all(target_family = "wasm", wasmprof_enabled))]
#[unsafe(no_mangle)]
pub extern "C" fn __wasmprof_future_polls() -> u32 {
    crate::future::polls() as u32
}

/// Threads: each finished thread's share of the merged tree, by its name.
#[cfg(test)]
mod thread_tests {
    use crate::guard::enter;
    use crate::site::{Site, test_cache};

    use super::*;

    static WORK: Site = Site::new("thread_tests", "work", "src/snapshot.rs", 1);

    fn work(n: u32) {
        for _ in 0..n {
            let _g = enter(&WORK, test_cache(&WORK), None);
        }
    }

    fn spawn_named(name: &str, n: u32) {
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || work(n))
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn each_thread_s_calls_are_its_own_and_the_merged_tree_sums_them() {
        spawn_named("wasmprof-test-a", 3);
        spawn_named("wasmprof-test-b", 5);
        // Taken on a thread that recorded nothing itself.
        let s = std::thread::spawn(take).join().unwrap();
        let work_node = (0..s.nodes.len())
            .find(|&i| s.path_names(i) == ["thread_tests::work"])
            .expect("the path");
        assert_eq!(s.nodes[work_node].calls, 8);
        let threads = s.threads.expect("threads recorded calls");
        let share = |name: &str| {
            let thread = threads.iter().find(|t| t.name == name).expect(name);
            thread
                .nodes
                .iter()
                .filter(|n| n.node as usize == work_node)
                .map(|n| n.calls)
                .sum::<u64>()
        };
        assert_eq!(share("wasmprof-test-a"), 3);
        assert_eq!(share("wasmprof-test-b"), 5);
        // The wire carries them.
        let read = Snapshot::decode(&take().encode()).unwrap();
        assert!(
            read.threads
                .unwrap()
                .iter()
                .any(|t| t.name == "wasmprof-test-b")
        );
    }
}

/// Counted functions: exact calls, and no node.
#[cfg(test)]
mod counted_tests {
    use crate::count::CountSite;
    use crate::guard::enter;
    use crate::site::{Site, test_cache};
    use crate::snapshot::take;
    use wasmprof_wire::Tier;

    static CALLER: Site = Site::new("count_tests", "caller", "src/count.rs", 1);
    static SMALL: CountSite = CountSite::new("count_tests", "small", "src/count.rs", 3);

    fn small() {
        crate::__count_calls!(SMALL, count, None);
    }

    fn caller(n: u32) {
        let _g = enter(&CALLER, test_cache(&CALLER), None);
        for _ in 0..n {
            small();
        }
    }

    #[test]
    fn counted_calls_are_exact_and_make_no_node() {
        caller(5);
        small();
        std::thread::spawn(|| caller(3)).join().unwrap();
        let s = take();
        let id = s
            .functions
            .iter()
            .position(|f| f.name == "count_tests::small")
            .unwrap();
        assert_eq!(s.functions[id].tier, Tier::Counted);
        assert_eq!(s.functions[id].calls, 9);
        assert!(s.nodes.iter().all(|n| n.function != id as u32));
    }
}

/// Counted sites on one thread: the list that stands in for registration,
/// and the scan of static data (run on
/// wasm32-wasip1 by `cargo-wasmprof/tests/e2e/runtime_on_wasm.rs`).
#[cfg(all(test, one_thread))]
mod one_thread_tests {
    use crate::count::{CountSite, count, count_bare};
    use crate::snapshot::take;

    static FIRST: CountSite = CountSite::new("pending", "first", "src/count.rs", 1);
    static LATER: CountSite = CountSite::new("pending", "later", "src/count.rs", 2);

    struct Owner;

    fn calls_of(snapshot: &crate::snapshot::Snapshot, suffix: &str) -> Vec<u64> {
        snapshot
            .functions
            .iter()
            .filter(|f| f.name.ends_with(suffix))
            .map(|f| f.calls)
            .collect()
    }

    #[test]
    fn a_site_first_called_after_a_snapshot_is_registered_at_the_next() {
        count(&FIRST, None);
        count(&FIRST, None);
        let before = take();
        assert_eq!(calls_of(&before, "pending::first"), [2]);
        assert!(calls_of(&before, "::later").is_empty());

        count(&LATER, Some(|| std::any::type_name::<Owner>()));
        count(&FIRST, None);
        let after = take();
        // Each registered once, the method under its `Self` type.
        assert_eq!(calls_of(&after, "pending::first"), [3]);
        assert_eq!(calls_of(&after, "one_thread_tests::Owner::later"), [1]);
        assert_eq!(take().functions.len(), after.functions.len());
    }

    // Built as `#[wasmprof::instrument(count)]` builds them: a marker that
    // returns the site's address, and the site knowing it.
    static BARE: CountSite = CountSite::new("scan", "bare", "src/count.rs", 3)
        .marked(bare_here, false)
        .at(&BARE);
    static BARE_LATER: CountSite = CountSite::new("scan", "bare_later", "src/count.rs", 4)
        .marked(bare_later_here, false)
        .at(&BARE_LATER);
    static NEVER: CountSite = CountSite::new("scan", "never", "src/count.rs", 5)
        .marked(never_here, false)
        .at(&NEVER);

    fn bare_here() -> usize {
        std::ptr::addr_of!(BARE) as usize
    }
    fn bare_later_here() -> usize {
        std::ptr::addr_of!(BARE_LATER) as usize
    }
    fn never_here() -> usize {
        std::ptr::addr_of!(NEVER) as usize
    }

    #[test]
    fn bare_counted_sites_are_found_in_static_data_when_called() {
        for _ in 0..3 {
            count_bare(std::hint::black_box(&BARE), None);
        }
        // Referenced, so that the linker keeps it, but never called.
        std::hint::black_box(&NEVER);
        let before = take();
        assert_eq!(calls_of(&before, "scan::bare"), [3]);
        assert!(calls_of(&before, "scan::bare_later").is_empty());
        assert!(calls_of(&before, "scan::never").is_empty());

        count_bare(std::hint::black_box(&BARE_LATER), None);
        count_bare(std::hint::black_box(&BARE), None);
        let after = take();
        assert_eq!(calls_of(&after, "scan::bare"), [4]);
        assert_eq!(calls_of(&after, "scan::bare_later"), [1]);
        // The calibration's site, which has no marker, is not a function.
        assert!(calls_of(&after, "<calibration>").is_empty());
        assert_eq!(take().functions.len(), after.functions.len());
    }
}
