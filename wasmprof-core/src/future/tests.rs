use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::*;
use crate::guard::enter;
use crate::site::test_cache;
use crate::snapshot::{Snapshot, SnapshotFuture, take};

static BATCH: Site = Site::new_async("future_tests", "batch", "src/future.rs", 1);
static LOAD: Site = Site::new_async("future_tests", "load", "src/future.rs", 2);
static PARSE: Site = Site::new("future_tests", "parse", "src/future.rs", 3);
static SPAWNER: Site = Site::new("future_tests", "spawner", "src/future.rs", 4);
static CANCEL_TEST: Site = Site::new("future_tests", "cancel_test", "src/future.rs", 5);
static PENDING_TEST: Site = Site::new("future_tests", "pending_test", "src/future.rs", 6);
static LATENCY_TEST: Site = Site::new("future_tests", "latency_test", "src/future.rs", 7);

/// Runs `test` on a thread of its own, inside a call of `root`: the trees
/// of finished threads are merged into every snapshot, and each test's
/// paths must be its own.
fn isolated(root: &'static Site, test: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || {
        let _root = enter(root, test_cache(root), None);
        test()
    })
    .join()
    .unwrap();
}

/// Pending on its first poll, ready on the second: one await.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

fn parse() {
    let _g = enter(&PARSE, test_cache(&PARSE), None);
    std::thread::sleep(Duration::from_millis(2));
}

/// `async fn load() { yield; parse() }`, as the attribute expands it.
fn load() -> impl Future<Output = u32> {
    Instrumented::new(&LOAD, None, false, async {
        YieldOnce(false).await;
        parse();
        7
    })
}

/// `async fn batch() { load().await + load().await }`.
fn batch() -> impl Future<Output = u32> {
    Instrumented::new(&BATCH, None, false, async {
        let a = load().await;
        let b = load().await;
        a + b
    })
}

/// Polls until ready, counting the polls.
fn block_on<F: Future>(future: F) -> (F::Output, u32) {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return (out, polls);
        }
    }
}

fn node_of(s: &Snapshot, path: &[&str]) -> usize {
    (0..s.nodes.len())
        .find(|&i| s.path_names(i) == path)
        .unwrap_or_else(|| panic!("no node {path:?}"))
}

fn future_of(s: &Snapshot, path: &[&str]) -> SnapshotFuture {
    let node = node_of(s, path) as u32;
    *s.futures.iter().find(|f| f.node == node).expect("record")
}

#[test]
fn awaited_calls_land_under_their_caller_with_exact_counts() {
    std::thread::spawn(|| {
        let (out, polls) = block_on(batch());
        assert_eq!(
            (out, polls),
            (14, 3),
            "two awaits, one poll each, then ready"
        );
        let s = take();
        let batch = future_of(&s, &["future_tests::batch"]);
        assert_eq!(s.nodes[batch.node as usize].calls, 1);
        assert_eq!(
            (batch.polls, batch.completions, batch.cancellations),
            (3, 1, 0)
        );
        let load = future_of(&s, &["future_tests::batch", "future_tests::load"]);
        assert_eq!(s.nodes[load.node as usize].calls, 2);
        assert_eq!((load.polls, load.completions), (4, 2));
        let parse = node_of(
            &s,
            &[
                "future_tests::batch",
                "future_tests::load",
                "future_tests::parse",
            ],
        );
        assert_eq!(s.nodes[parse].calls, 2);
        assert!(s.open_path().is_empty(), "every poll returned");
        if !clock::TIMED {
            return;
        }
        // Each parse sleeps 2 ms inside a poll: CPU time, as the tree sees it.
        let time = |n: usize| s.nodes[n].inclusive;
        assert!(time(parse) >= 4.0, "parse {}", time(parse));
        assert!(time(load.node as usize) >= time(parse));
        assert!(time(batch.node as usize) >= time(load.node as usize));
        assert_eq!(batch.latency_count, 1);
        assert!(batch.latency_max_ms >= 4.0);
    })
    .join()
    .unwrap();
}

#[test]
fn dropped_futures_are_cancellations_whether_polled_or_not() {
    isolated(&CANCEL_TEST, || {
        drop(load());
        {
            let mut once = pin!(load());
            let mut cx = Context::from_waker(Waker::noop());
            assert!(once.as_mut().poll(&mut cx).is_pending());
        }
        let s = take();
        let load = future_of(&s, &["future_tests::cancel_test", "future_tests::load"]);
        assert_eq!(s.nodes[load.node as usize].calls, 2);
        assert_eq!(
            (load.polls, load.completions, load.cancellations),
            (1, 0, 2)
        );
        assert_eq!(load.pending_ms, 0.0, "nothing is pending");
    });
}

#[test]
fn a_pending_future_keeps_its_time_so_far() {
    isolated(&PENDING_TEST, || {
        let mut future = Box::pin(Instrumented::new(&LOAD, None, false, async {
            parse();
            YieldOnce(false).await;
        }));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(future.as_mut().poll(&mut cx).is_pending());
        assert_eq!(pending(), 1, "what a host waits for");
        let s = take();
        let load = future_of(&s, &["future_tests::pending_test", "future_tests::load"]);
        assert_eq!(
            (load.polls, load.completions, load.cancellations),
            (1, 0, 0)
        );
        if clock::TIMED {
            assert!(load.pending_ms >= 2.0, "pending {}", load.pending_ms);
        }
        std::mem::forget(future);
    });
}

#[test]
fn a_spawned_future_stays_under_its_spawner_and_its_time_with_it() {
    std::thread::spawn(|| {
        // Created inside `spawner`, polled from the root after it returned:
        // what `spawn_local` does.
        let task = {
            let _g = enter(&SPAWNER, test_cache(&SPAWNER), None);
            load()
        };
        let (out, _) = block_on(task);
        assert_eq!(out, 7);
        let s = take();
        let load = future_of(&s, &["future_tests::spawner", "future_tests::load"]);
        let spawner = node_of(&s, &["future_tests::spawner"]);
        if !clock::TIMED {
            return;
        }
        let load_time = s.nodes[load.node as usize].inclusive;
        assert!(load_time >= 2.0, "load {load_time}");
        assert!(
            s.nodes[spawner].inclusive >= load_time,
            "the spawner's time holds its task's: {} < {load_time}",
            s.nodes[spawner].inclusive
        );
    })
    .join()
    .unwrap();
}

#[test]
fn latency_includes_the_awaits_and_cpu_time_does_not() {
    isolated(&LATENCY_TEST, || {
        let mut future = pin!(load());
        let mut cx = Context::from_waker(Waker::noop());
        assert!(future.as_mut().poll(&mut cx).is_pending());
        std::thread::sleep(Duration::from_millis(30));
        assert!(future.as_mut().poll(&mut cx).is_ready());
        let s = take();
        let load = future_of(&s, &["future_tests::latency_test", "future_tests::load"]);
        if !clock::TIMED {
            assert_eq!(load.latency_count, 0, "no clock, no latency");
            return;
        }
        assert_eq!(load.latency_count, 1);
        assert!(load.latency_median_ms >= 30.0, "{}", load.latency_median_ms);
        let cpu = s.nodes[load.node as usize].inclusive;
        assert!(cpu < 20.0, "cpu {cpu} ms beside 30 ms of waiting");
    });
}
