//! The registry with real threads: workers that stay alive (a pool's) are
//! read where they stand, and each thread is in a snapshot exactly once,
//! whether it is running, exiting or gone.

use std::sync::{Arc, Barrier};

use crate::guard::enter;
use crate::site::Site;
use crate::site::test_cache;
use crate::snapshot::{Snapshot, take};

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
    assert_ne!(share.flags & crate::snapshot::NEVER_RETURNED, 0);
    assert_ne!(s.nodes[node].flags & crate::snapshot::NEVER_RETURNED, 0);
}
