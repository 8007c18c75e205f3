//! A web-style async program, the kind wasmprof follows across awaits.
//!
//! `start` runs a batch of loads at once with `join_all`; each load awaits a
//! JS timer (a `Promise` over `setTimeout`), does CPU work, awaits again and
//! works again. A task started with `spawn_local` reports the results later,
//! from the event loop, and one slow load is dropped when its deadline
//! passes. The same module runs in Node and in the browser.
//!
//! Instrumented, the profile shows each load under `batch` (its logical
//! caller), `checksum` under each load, and for every async function its
//! futures' calls, completions, cancellations, polls and latency.

use std::cell::Cell;

use futures_util::future::{join_all, select, Either};
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

/// Loads in the batch.
pub const LOADS: u32 = 4;
/// Milliseconds each load waits before its first piece of work.
pub const FIRST_WAIT_MS: i32 = 10;
/// Milliseconds it waits before its second: long enough that every load's
/// first wait is over first, so that the polls (each timer wakes the
/// batch, which polls the loads still pending) are the same every run.
pub const SECOND_WAIT_MS: i32 = 40;
/// Checksum rounds per piece of work.
const ROUNDS: u32 = 1_000_000;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &js_sys::Function, millis: i32) -> JsValue;

    #[wasm_bindgen(js_namespace = console)]
    fn log(text: &str);
}

thread_local! {
    static REPORTED: Cell<bool> = const { Cell::new(false) };
}

/// A future of the JS event loop: resolves after `millis` milliseconds.
fn sleep(millis: i32) -> JsFuture {
    let promise = Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, millis);
    });
    JsFuture::from(promise)
}

/// CPU work between awaits: a mixing loop the optimiser cannot fold.
#[wasmprof::instrument]
pub fn checksum(seed: u32, rounds: u32) -> u32 {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    for i in 0..rounds {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x = x.wrapping_add(i);
    }
    x
}

/// One load: wait, work, wait, work.
#[wasmprof::instrument]
pub async fn load(id: u32) -> u32 {
    sleep(FIRST_WAIT_MS).await.expect("a timer never fails");
    let first = checksum(id, ROUNDS);
    sleep(SECOND_WAIT_MS).await.expect("a timer never fails");
    first ^ checksum(id + 100, ROUNDS)
}

/// The loads, all at once.
#[wasmprof::instrument]
pub async fn batch(loads: u32) -> u32 {
    join_all((0..loads).map(load))
        .await
        .into_iter()
        .fold(0, |all, one| all ^ one)
}

/// A load too slow for its deadline: dropped after its first poll.
#[wasmprof::instrument]
pub async fn slow_load() -> u32 {
    sleep(200).await.expect("a timer never fails");
    checksum(7, ROUNDS)
}

/// Runs `slow_load` against a deadline; true when the deadline won.
#[wasmprof::instrument]
pub async fn with_deadline(millis: i32) -> bool {
    let slow = Box::pin(slow_load());
    let deadline = Box::pin(sleep(millis));
    match select(slow, deadline).await {
        Either::Left(_) => false,
        Either::Right((_, slow)) => {
            drop(slow);
            true
        }
    }
}

/// Started with `spawn_local`: reports from the event loop, after a wait.
#[wasmprof::instrument]
pub async fn report(total: u32, timed_out: bool) {
    sleep(1).await.expect("a timer never fails");
    let tag = checksum(total, ROUNDS / 4);
    log(&format!(
        "batch of {LOADS} loads: checksum {total:08x}, tag {tag:08x}, deadline {}",
        if timed_out { "passed" } else { "met" }
    ));
    REPORTED.with(|r| r.set(true));
}

/// The whole program.
#[wasmprof::instrument]
pub async fn run() -> u32 {
    let total = batch(LOADS).await;
    let timed_out = with_deadline(2).await;
    spawn_local(report(total, timed_out));
    total
}

#[wasm_bindgen(start)]
pub async fn start() {
    let total = run().await;
    log(&format!("started the report of {total:08x}"));
}

/// Awaits a timer, works, then panics inside the poll: a bug in async code.
#[wasmprof::instrument]
pub async fn doomed(millis: i32) -> u32 {
    sleep(millis).await.expect("a timer never fails");
    let sum = checksum(1, ROUNDS / 10);
    if sum != 0 {
        panic!("doomed: gave up after {millis} ms");
    }
    sum
}

/// `cargo wasmprof run -p async-loads --invoke crash_after -- MS`: an
/// exported async function (its promise is what the host awaits) whose
/// future panics after `MS` milliseconds, while the loads of `start` are
/// still waiting for their timers.
#[wasmprof::instrument]
#[wasm_bindgen]
pub async fn crash_after(millis: i32) -> u32 {
    doomed(millis).await
}

/// Waits for an event that never comes: a promise nobody resolves.
#[wasmprof::instrument]
pub async fn listen() {
    JsFuture::from(Promise::new(&mut |_resolve, _reject| {}))
        .await
        .expect("never settles");
}

/// `--invoke start_listener`: starts `listen` with `spawn_local` and
/// returns, as an event-driven page does. The run ends when the page has
/// nothing left to do, with `listen` still pending.
#[wasm_bindgen]
pub fn start_listener() {
    spawn_local(listen());
}
