//! The registry with real threads: workers that stay alive (a pool's) are
//! read where they stand, and each thread is in a snapshot exactly once,
//! whether it is running, exiting or gone.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier};

use crate::guard::enter;
use crate::site::Site;
use crate::site::test_cache;
use crate::snapshot::{Snapshot, take};

/// Spins a copy of a tree waits after each node (`copy_tree`): 0 but in
/// the test that wants snapshots' copies slow.
static SLOW_COPIES: AtomicU32 = AtomicU32::new(0);

/// How a thread's tree is copied for a snapshot in these tests: slowly,
/// when a test asks, so that a copy made while the thread records would
/// read some levels of a round and not others.
pub(crate) fn copy_tree(tree: &crate::tree::CallTree) -> crate::tree::CallTree {
    match SLOW_COPIES.load(Ordering::Relaxed) {
        0 => tree.clone(),
        spins => tree.clone_slowly(spins),
    }
}

static POOLED: Site = Site::new("registry_tests", "pooled", "src/threads/tests.rs", 1);
static BUSY: Site = Site::new("registry_tests", "busy", "src/threads/tests.rs", 2);

fn pooled(n: u64) {
    for _ in 0..n {
        let _g = enter(&POOLED, test_cache(&POOLED), None);
    }
}

/// The calls of the one-function path `name` in the merged tree, and in
/// each thread whose name starts with `prefix`.
fn calls(s: &Snapshot, name: &str, prefix: &str) -> (u64, Vec<(String, u64)>) {
    let Some(node) = (0..s.nodes.len()).find(|&i| s.path_names(i) == [name]) else {
        return (0, Vec::new());
    };
    let mut threads: Vec<(String, u64)> = s
        .threads
        .iter()
        .flatten()
        .filter(|t| t.name.starts_with(prefix))
        .map(|t| {
            let calls = t
                .nodes
                .iter()
                .filter(|n| n.node as usize == node)
                .map(|n| n.calls)
                .sum();
            (t.name.clone(), calls)
        })
        .collect();
    threads.sort();
    (s.nodes[node].calls, threads)
}

#[test]
fn idle_workers_are_read_where_they_stand_and_counted_once_after_they_exit() {
    const WORKERS: u64 = 3;
    let done = Arc::new(Barrier::new(WORKERS as usize + 1));
    let release = Arc::new(Barrier::new(WORKERS as usize + 1));
    let workers: Vec<_> = (0..WORKERS)
        .map(|i| {
            let (done, release) = (done.clone(), release.clone());
            std::thread::Builder::new()
                .name(format!("registry-pool-{i}"))
                .spawn(move || {
                    pooled(100 * (i + 1));
                    done.wait();
                    // Idle in the pool, as rayon's workers are when the
                    // program's main returns.
                    release.wait();
                })
                .unwrap()
        })
        .collect();
    done.wait();

    let expected = vec![
        ("registry-pool-0".to_owned(), 100),
        ("registry-pool-1".to_owned(), 200),
        ("registry-pool-2".to_owned(), 300),
    ];
    let running = take();
    assert_eq!(
        calls(&running, "registry_tests::pooled", "registry-pool-"),
        (600, expected.clone()),
        "the workers are alive and idle"
    );

    release.wait();
    for worker in workers {
        worker.join().unwrap();
    }
    let finished = take();
    assert_eq!(
        calls(&finished, "registry_tests::pooled", "registry-pool-"),
        (600, expected),
        "the workers have exited: each is there once"
    );
}

#[test]
fn snapshots_taken_while_threads_record_see_counts_that_only_grow_and_end_exact() {
    const THREADS: u64 = 4;
    const CALLS: u64 = 20_000;
    let start = Arc::new(Barrier::new(THREADS as usize + 1));
    let threads: Vec<_> = (0..THREADS)
        .map(|i| {
            let start = start.clone();
            std::thread::Builder::new()
                .name(format!("registry-busy-{i}"))
                .spawn(move || {
                    start.wait();
                    for _ in 0..CALLS {
                        let _g = enter(&BUSY, test_cache(&BUSY), None);
                    }
                })
                .unwrap()
        })
        .collect();
    start.wait();
    let mut last = 0;
    for _ in 0..50 {
        let (merged, per_thread) = calls(&take(), "registry_tests::busy", "registry-busy-");
        assert_eq!(merged, per_thread.iter().map(|(_, c)| c).sum::<u64>());
        assert!(merged >= last, "{merged} calls after {last}");
        assert!(merged <= THREADS * CALLS);
        last = merged;
    }
    for thread in threads {
        thread.join().unwrap();
    }
    let (merged, per_thread) = calls(&take(), "registry_tests::busy", "registry-busy-");
    assert_eq!(merged, THREADS * CALLS);
    assert!(
        per_thread.iter().all(|(_, c)| *c == CALLS),
        "{per_thread:?}"
    );
}

static WAITING: Site = Site::new("registry_tests", "waiting", "src/threads/tests.rs", 3);

#[test]
fn a_call_a_running_thread_is_in_is_counted_and_marked_as_not_returned() {
    let inside = Arc::new(Barrier::new(2));
    let release = Arc::new(Barrier::new(2));
    let worker = {
        let (inside, release) = (inside.clone(), release.clone());
        std::thread::Builder::new()
            .name("registry-waiting".to_owned())
            .spawn(move || {
                let _g = enter(&WAITING, test_cache(&WAITING), None);
                inside.wait();
                release.wait();
            })
            .unwrap()
    };
    inside.wait();
    let s = take();
    release.wait();
    worker.join().unwrap();

    let node = (0..s.nodes.len())
        .find(|&i| s.path_names(i) == ["registry_tests::waiting"])
        .expect("the path");
    let thread = s
        .threads
        .iter()
        .flatten()
        .find(|t| t.name == "registry-waiting")
        .expect("the running thread");
    let share = thread
        .nodes
        .iter()
        .find(|n| n.node as usize == node)
        .unwrap();
    assert_eq!(share.calls, 1);
    assert_eq!(thread.read, wasmprof_wire::ThreadRead::WhereItStood);
    assert_ne!(share.flags & crate::snapshot::NEVER_RETURNED, 0);
    assert_ne!(s.nodes[node].flags & crate::snapshot::NEVER_RETURNED, 0);
}

static CHAIN: Site = Site::new("registry_tests", "chain", "src/threads/tests.rs", 4);

/// `chain` calls itself down to `depth`: one node per level, so that a
/// thread's tree is a path of `depth` nodes each round enters in turn.
fn chain(depth: u32) {
    let _g = enter(&CHAIN, test_cache(&CHAIN), None);
    if depth > 1 {
        chain(depth - 1);
    }
}

/// One thread's calls at each level of `chain`, outermost first, in a
/// snapshot.
fn chain_calls(s: &Snapshot, thread: &str) -> Option<Vec<u64>> {
    let share = s.threads.iter().flatten().find(|t| t.name == thread)?;
    let mut levels = Vec::new();
    for n in &share.nodes {
        let path = s.path_names(n.node as usize);
        if path.iter().all(|f| f == "registry_tests::chain") {
            if levels.len() < path.len() {
                levels.resize(path.len(), 0);
            }
            levels[path.len() - 1] += n.calls;
        }
    }
    Some(levels)
}

/// The test of the runtime's thread code: four threads call at
/// full speed while snapshots are taken one after the other, each round a
/// chain of calls one level deeper every other round, so that every
/// thread's tree keeps growing (its nodes move in memory as it grows). No
/// thread waits on a lock, so a snapshot that copied a thread in the
/// middle of recording would show it: a level with calls the rounds so
/// far cannot have made, more calls at a level than at the one above it,
/// fewer calls than in the snapshot before, or a tree that is not one.
#[test]
fn snapshots_of_threads_calling_at_full_speed_are_never_torn_and_never_go_back() {
    use std::sync::atomic::AtomicU64;
    const THREADS: usize = 4;
    const ROUNDS: u64 = 1_600;
    // Round `r` goes `r / 2 + 1` deep: after `n` rounds, level `d`
    // (from 0) has had `n - 2d` calls.
    let calls_after = |rounds: u64, level: u64| rounds.saturating_sub(2 * level);
    let done: Arc<Vec<AtomicU64>> = Arc::new((0..THREADS).map(|_| AtomicU64::new(0)).collect());
    let start = Arc::new(Barrier::new(THREADS + 1));
    // Each node copied takes longer than a call: a snapshot's copy of a
    // thread at work would be overtaken by it, level after level.
    SLOW_COPIES.store(500, Ordering::Relaxed);
    let threads: Vec<_> = (0..THREADS)
        .map(|i| {
            let (done, start) = (done.clone(), start.clone());
            std::thread::Builder::new()
                .name(format!("full-speed-{i}"))
                .spawn(move || {
                    start.wait();
                    for round in 0..ROUNDS {
                        chain(round as u32 / 2 + 1);
                        done[i].store(round + 1, Ordering::Release);
                    }
                })
                .unwrap()
        })
        .collect();
    start.wait();
    let mut last = vec![Vec::new(); THREADS];
    let (mut snapshots, mut mid_run) = (0, 0);
    loop {
        let before: Vec<u64> = done.iter().map(|d| d.load(Ordering::Acquire)).collect();
        // Decoding checks that the tree is one: each node after its parent.
        let s = Snapshot::decode(&take().encode()).expect("a well-formed snapshot");
        let after: Vec<u64> = done.iter().map(|d| d.load(Ordering::Acquire)).collect();
        snapshots += 1;
        for (i, last) in last.iter_mut().enumerate() {
            let name = format!("full-speed-{i}");
            let Some(levels) = chain_calls(&s, &name) else {
                continue;
            };
            for (level, &calls) in levels.iter().enumerate() {
                // A call is counted at its entry: the round under way may
                // be in.
                let (least, most) = (
                    calls_after(before[i], level as u64),
                    calls_after(after[i] + 1, level as u64),
                );
                assert!(
                    least <= calls && calls <= most,
                    "{name}: {calls} calls at level {level}, where {} to {} rounds make \
                     {least} to {most}",
                    before[i],
                    after[i]
                );
                if level > 0 {
                    assert!(
                        calls <= levels[level - 1],
                        "{name}: level {level}: {levels:?}"
                    );
                }
                let then = last.get(level).copied().unwrap_or(0);
                assert!(
                    calls >= then,
                    "{name}: level {level} went from {then} to {calls}"
                );
            }
            if before[i] > 0 && after[i] < ROUNDS {
                mid_run += 1;
            }
            *last = levels;
        }
        if after.iter().all(|&d| d == ROUNDS) {
            break;
        }
    }
    SLOW_COPIES.store(0, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    assert!(
        mid_run > 0,
        "no snapshot caught a thread at work ({snapshots} taken)"
    );
    let s = take();
    let expected: Vec<u64> = (0..ROUNDS / 2).map(|d| calls_after(ROUNDS, d)).collect();
    for i in 0..THREADS {
        assert_eq!(
            chain_calls(&s, &format!("full-speed-{i}")),
            Some(expected.clone())
        );
    }
}

static HELD: Site = Site::new("registry_tests", "held", "src/threads/tests.rs", 6);

/// A thread stopped in the middle of recording (here: kept there on
/// purpose; in a program, a trap or a host that stopped it) is waited for
/// only so long, then read as it stands and said to be so, its calls
/// before it still counted; and a snapshot after that does not wait for
/// it again.
#[test]
fn a_thread_stopped_while_recording_is_read_as_it_stands_and_said_to_be() {
    let inside = Arc::new(Barrier::new(2));
    let release = Arc::new(Barrier::new(2));
    let worker = {
        let (inside, release) = (inside.clone(), release.clone());
        std::thread::Builder::new()
            .name("stopped-while-recording".to_owned())
            .spawn(move || {
                for _ in 0..5 {
                    drop(enter(&HELD, test_cache(&HELD), None));
                }
                super::with_own(|_| {
                    inside.wait();
                    release.wait();
                });
            })
            .unwrap()
    };
    inside.wait();
    let share = |s: &Snapshot| {
        let thread = s
            .threads
            .iter()
            .flatten()
            .find(|t| t.name == "stopped-while-recording")
            .cloned()
            .expect("the thread");
        (
            thread.read,
            thread.nodes.iter().map(|n| n.calls).sum::<u64>(),
        )
    };
    let first = take();
    let waited = std::time::Instant::now();
    let again = take();
    let second_wait = waited.elapsed();
    release.wait();
    worker.join().unwrap();
    assert_eq!(share(&first), (wasmprof_wire::ThreadRead::MidRecord, 5));
    assert_eq!(share(&again), (wasmprof_wire::ThreadRead::MidRecord, 5));
    assert!(
        second_wait < std::time::Duration::from_millis(250),
        "waited {second_wait:?} again for a thread known to be stopped"
    );
}
