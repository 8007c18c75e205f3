//! Two programs whose time is easy to put in the wrong place.
//!
//! `long_call`: `step` is called 200,000 times with next to no work, and
//! once, half-way, with about 30 ms of work. The program times that one
//! call itself and prints `long call: N ms`; the profile must give that
//! time to `step`, not to its caller. (Half-way is a few milliseconds in:
//! in its first milliseconds a module just instantiated in Chromium has
//! its samples credited to callers at times, which no profile can mend.)
//!
//! `counted_call`: the same for a function of the count-only tier
//! (`#[wasmprof::instrument(count)]`, and what crate-wide instrumentation
//! gives a small function): `smallest` sorts four numbers 200,000 times,
//! and once, half-way, a million and a half. No clock times a counted call; the
//! profile must still give that sort's time to `smallest`.
//!
//! `figure_6_3` (the thesis's Figure 6.3): `shared` is called 10 times from
//! `from_a`, each call expensive (it calls `heavy`), and 10,000 times from
//! `from_b`, each cheap. Nothing here stops the compiler from inlining
//! them into one another; a profile must still keep `heavy`'s time under
//! `from_a → shared`, where gprof's arcs would give most of it to `from_b`.

use std::hint::black_box;

/// Rounds of work that take about 30 ms in an optimised build.
const LONG_ROUNDS: u64 = 24_000_000;

/// One call of the loop's: a few rounds of work, or many.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn step(seed: u64, rounds: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..rounds {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
    }
    x
}

/// The timed caller: 200,001 calls of `step`, one of them long. Returns the
/// long call's duration as the program measured it, in milliseconds.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn run_steps(now: fn() -> f64) -> (u64, f64) {
    let mut sum = 0u64;
    let mut long_ms = 0.0;
    for i in 0..200_000u64 {
        sum = sum.wrapping_add(step(i, 2));
        if i == 100_000 {
            let start = now();
            sum = sum.wrapping_add(step(i, black_box(LONG_ROUNDS)));
            long_ms = now() - start;
        }
    }
    (sum, long_ms)
}

/// How many numbers the one long call of `smallest` sorts: about 30 ms.
const LONG_SORT: u64 = 1_500_000;

/// Counted only: sorts `values`, and returns the smallest.
#[cfg_attr(feature = "annotated", wasmprof::instrument(count))]
pub fn smallest(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    values[0]
}

/// The timed caller of the counted function: 200,001 calls of
/// `smallest`, one of them long. Returns the long call's duration as the
/// program measured it, in milliseconds.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn run_sorts(now: fn() -> f64) -> (u64, f64) {
    let mut many: Vec<u64> = (0..black_box(LONG_SORT))
        .map(|i| i.wrapping_mul(6364136223846793005).rotate_left(17))
        .collect();
    let mut sum = 0u64;
    let mut long_ms = 0.0;
    for i in 0..200_000u64 {
        let mut few = [i ^ 0x5555, i.rotate_left(9), i >> 3, !i];
        sum = sum.wrapping_add(smallest(&mut few));
        if i == 100_000 {
            let start = now();
            sum = sum.wrapping_add(smallest(&mut many));
            long_ms = now() - start;
        }
    }
    (sum, long_ms)
}

/// Work that only `from_a`'s calls of `shared` do.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn heavy(seed: u64) -> u64 {
    step(seed, black_box(400_000))
}

/// The callee both callers share.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn shared(seed: u64, expensive: bool) -> u64 {
    if expensive {
        heavy(seed)
    } else {
        seed.rotate_left(7) ^ 0x9e37_79b9
    }
}

/// Ten expensive calls of `shared`.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn from_a() -> u64 {
    (0..10).fold(0, |sum: u64, i| sum.wrapping_add(shared(i, true)))
}

/// Ten thousand cheap calls of `shared`.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn from_b() -> u64 {
    (0..10_000).fold(0, |sum: u64, i| sum.wrapping_add(shared(i, false)))
}

/// The Figure 6.3 program: both callers, three times over.
#[cfg_attr(feature = "annotated", wasmprof::instrument)]
pub fn figure_6_3() -> u64 {
    let mut sum = 0u64;
    for _ in 0..3 {
        sum = sum.wrapping_add(from_a()).wrapping_add(from_b());
    }
    sum
}

#[cfg(target_os = "unknown")]
mod web {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = console)]
        fn log(message: &str);
        #[wasm_bindgen(js_namespace = performance)]
        fn now() -> f64;
    }

    /// `--invoke long_call`.
    #[wasm_bindgen]
    pub fn long_call() -> f64 {
        let (sum, long_ms) = super::run_steps(now);
        log(&format!("long call: {long_ms:.3} ms (checksum {sum})"));
        long_ms
    }

    /// `--invoke counted_call`.
    #[wasm_bindgen]
    pub fn counted_call() -> f64 {
        let (sum, long_ms) = super::run_sorts(now);
        log(&format!("long call: {long_ms:.3} ms (checksum {sum})"));
        long_ms
    }

    /// `--invoke figure_6_3`.
    #[wasm_bindgen]
    pub fn figure_6_3() -> f64 {
        super::figure_6_3() as f64
    }
}
