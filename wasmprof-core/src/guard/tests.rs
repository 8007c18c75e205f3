use super::*;
use crate::site::test_cache;
use crate::snapshot::{Snapshot, take};

static OUTER: Site = Site::new("guard_tests", "outer", "src/guard.rs", 1);
static INNER: Site = Site::new("guard_tests", "inner", "src/guard.rs", 2);

fn inner(fail: bool) -> Result<(), ()> {
    let _g = enter(&INNER, test_cache(&INNER), None);
    if fail {
        return Err(());
    }
    Ok(())
}

fn outer() -> Result<(), ()> {
    let _g = enter(&OUTER, test_cache(&OUTER), None);
    for i in 0..10 {
        inner(i == 9)?;
    }
    Ok(())
}

fn calls_of(snapshot: &Snapshot, path: &[&str]) -> u64 {
    snapshot
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| snapshot.path_names(*i) == path)
        .map(|(_, n)| n.calls)
        .sum()
}

#[test]
fn early_return_and_question_mark_restore_the_parent() {
    // Run on a thread of its own so other tests' calls do not mix in.
    std::thread::spawn(|| {
        assert!(outer().is_err());
        assert!(outer().is_err());
        let s = take();
        assert_eq!(calls_of(&s, &["guard_tests::outer"]), 2);
        assert_eq!(
            calls_of(&s, &["guard_tests::outer", "guard_tests::inner"]),
            20
        );
        assert_eq!(calls_of(&s, &["guard_tests::inner"]), 0);
        assert!(s.open_path().is_empty(), "every call returned");
    })
    .join()
    .unwrap();
}

#[test]
fn unwinding_closes_the_frame() {
    std::thread::spawn(|| {
        let r = std::panic::catch_unwind(|| {
            let _g = enter(&OUTER, test_cache(&OUTER), None);
            panic!("boom");
        });
        assert!(r.is_err());
        let _g = enter(&INNER, test_cache(&INNER), None);
        let s = take();
        // inner was entered from the root, not from the unwound outer.
        assert_eq!(s.open_path(), vec!["guard_tests::inner".to_string()]);
    })
    .join()
    .unwrap();
}

#[test]
fn threads_do_not_corrupt_each_other_and_are_gathered_on_exit() {
    static WORKER: Site = Site::new("guard_tests", "worker", "src/guard.rs", 3);
    static LEAF: Site = Site::new("guard_tests", "leaf", "src/guard.rs", 4);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..1000 {
                    let _w = enter(&WORKER, test_cache(&WORKER), None);
                    for _ in 0..10 {
                        let _l = enter(&LEAF, test_cache(&LEAF), None);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = take();
    assert_eq!(calls_of(&s, &["guard_tests::worker"]), 4000);
    assert_eq!(
        calls_of(&s, &["guard_tests::worker", "guard_tests::leaf"]),
        40_000
    );
    assert_eq!(calls_of(&s, &["guard_tests::leaf"]), 0);
}

#[test]
fn a_frame_left_by_a_call_that_never_returned_does_not_take_its_callers_time() {
    static CALLER: Site = Site::new("guard_tests", "caller", "src/guard.rs", 7);
    static LOST: Site = Site::new("guard_tests", "lost", "src/guard.rs", 8);
    static DONE: Site = Site::new("guard_tests", "done", "src/guard.rs", 12);
    std::thread::spawn(|| {
        {
            let _caller = enter(&CALLER, test_cache(&CALLER), None);
            // What a JavaScript exception does to the wasm frames it
            // unwinds: no destructor runs. The call it made first
            // returned.
            let lost = enter(&LOST, test_cache(&LOST), None);
            {
                let _done = enter(&DONE, test_cache(&DONE), None);
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            std::mem::forget(lost);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let s = take();
        let node = |path: &[&str]| {
            s.nodes
                .iter()
                .enumerate()
                .find(|(i, _)| s.path_names(*i) == path)
                .map(|(_, n)| (n.calls, n.timed_calls, n.inclusive))
                .unwrap()
        };
        let (calls, timed, time) = node(&["guard_tests::caller"]);
        assert_eq!((calls, timed), (1, 1));
        assert!(time >= 20.0, "caller {time} ms");
        let lost = ["guard_tests::caller", "guard_tests::lost"];
        let (calls, timed, lost_time) = node(&lost);
        assert_eq!((calls, timed), (1, 0), "the lost call never ended");
        // It holds what its returned call took, and no more.
        let (_, _, done) = node(&[lost[0], lost[1], "guard_tests::done"]);
        assert!(done >= 5.0, "done {done} ms");
        assert_eq!(lost_time, done);
        let flags = (0..s.nodes.len())
            .find(|&i| s.path_names(i) == lost)
            .map(|i| s.nodes[i].flags)
            .unwrap();
        assert_ne!(flags & crate::snapshot::NEVER_RETURNED, 0);
    })
    .join()
    .unwrap();
}

#[test]
fn a_test_is_recorded_at_the_root_after_one_that_never_returned() {
    static FIRST: Site = Site::new("guard_tests", "first_test", "src/guard.rs", 9);
    static SECOND: Site = Site::new("guard_tests", "second_test", "src/guard.rs", 10);
    static DEEP: Site = Site::new("guard_tests", "deep", "src/guard.rs", 11);
    std::thread::spawn(|| {
        // The first test traps inside `deep`: no destructor runs.
        std::mem::forget(enter_test(&FIRST, test_cache(&FIRST), None));
        std::mem::forget(enter(&DEEP, test_cache(&DEEP), None));
        {
            let _second = enter_test(&SECOND, test_cache(&SECOND), None);
            let _deep = enter(&DEEP, test_cache(&DEEP), None);
        }
        let s = take();
        assert_eq!(
            calls_of(&s, &["guard_tests::second_test", "guard_tests::deep"]),
            1
        );
        assert_eq!(
            calls_of(&s, &["guard_tests::first_test", "guard_tests::deep"]),
            1
        );
        assert_eq!(
            calls_of(
                &s,
                &[
                    "guard_tests::first_test",
                    "guard_tests::deep",
                    "guard_tests::second_test"
                ]
            ),
            0
        );
        assert!(s.open_path().is_empty(), "the second test returned");
    })
    .join()
    .unwrap();
}

#[test]
fn inclusive_time_covers_children() {
    static SLOW: Site = Site::new("guard_tests", "slow", "src/guard.rs", 5);
    static NAP: Site = Site::new("guard_tests", "nap", "src/guard.rs", 6);
    std::thread::spawn(|| {
        {
            let _s = enter(&SLOW, test_cache(&SLOW), None);
            let _n = enter(&NAP, test_cache(&NAP), None);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let s = take();
        let time = |path: &[&str]| {
            s.nodes
                .iter()
                .enumerate()
                .find(|(i, _)| s.path_names(*i) == path)
                .map(|(_, n)| n.inclusive)
                .unwrap()
        };
        let slow = time(&["guard_tests::slow"]);
        let nap = time(&["guard_tests::slow", "guard_tests::nap"]);
        assert!(nap >= 20.0, "nap {nap} ms");
        assert!(slow >= nap, "slow {slow} < nap {nap}");
    })
    .join()
    .unwrap();
}

#[test]
fn a_guard_comes_back_whole_from_its_packed_integer() {
    for (parent, timed_depth) in [(0, 0), (7, 3), (UNRECORDED, 0), (u32::MAX - 1, u32::MAX)] {
        let guard = Guard::unpack(
            Guard {
                parent,
                timed_depth,
            }
            .pack(),
        );
        assert_eq!((guard.parent, guard.timed_depth), (parent, timed_depth));
        // Not dropped: dropping would restore `parent` as the current node.
        std::mem::forget(guard);
    }
}
