//! A parallel iterator on wasm-bindgen-rayon's pool of web workers, as an
//! image or compression crate runs one: `initThreadPool(n)` starts the
//! pool, then `hash_all(chunks)` hashes `chunks` chunks of 1,000 numbers,
//! each through an annotated `chunk` that calls an annotated `mix` per
//! number. It counts its own calls, to hold the profile against.
//!
//! `cargo wasmprof run -p rayon-web --host browser --invoke hash_all -- 400`
//!
//! `long_call_on_pool` is `examples/long-call`'s program on a worker of the
//! pool: `step` called 200,000 times with next to no work and once with
//! about 30 ms, which the program times itself and prints (`long call: N
//! ms`); the profile must give that time to `step`, not to its caller.

use std::sync::atomic::{AtomicU64, Ordering, Ordering::Relaxed};

use rayon::prelude::*;
use wasm_bindgen::prelude::*;

#[cfg(all(target_feature = "atomics", not(feature = "pool-never-starts")))]
pub use wasm_bindgen_rayon::init_thread_pool;

/// `initThreadPool` of a pool that never finishes starting, as when one of
/// its workers cannot load (feature `pool-never-starts`).
#[cfg(all(target_feature = "atomics", feature = "pool-never-starts"))]
#[wasm_bindgen(js_name = initThreadPool)]
pub fn init_thread_pool(_threads: usize) -> js_sys::Promise {
    js_sys::Promise::new(&mut |_, _| {})
}

static CHUNKS: AtomicU64 = AtomicU64::new(0);
static MIXES: AtomicU64 = AtomicU64::new(0);

/// Threads that have begun a chunk.
static BEGUN: AtomicU64 = AtomicU64::new(0);

/// In the first chunk each thread takes, waits until two threads have begun
/// one (or for long enough that one thread must do all): so that the work
/// is spread over at least two workers even on a busy machine, where the
/// first could otherwise take every chunk before another wakes up.
fn meet_another_worker() {
    thread_local! {
        static HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if HERE.with(|here| here.replace(true)) {
        return;
    }
    BEGUN.fetch_add(1, Ordering::SeqCst);
    let wanted = rayon::current_num_threads().min(2) as u64;
    for _ in 0..4_000_000_000u64 {
        if BEGUN.load(Ordering::SeqCst) >= wanted {
            return;
        }
        std::hint::spin_loop();
    }
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console)]
    fn log(text: &str);
}

thread_local! {
    /// `mix`'s calls on this thread since its chunk began: a shared counter
    /// added to on every call would be a cache line two cores fight over,
    /// and make the program, not its profile, what a benchmark measures.
    static MIXED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[wasmprof::instrument]
fn mix(x: u64) -> u64 {
    MIXED.with(|mixed| mixed.set(mixed.get() + 1));
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^ (x >> 31)
}

#[wasmprof::instrument]
fn chunk(start: u64, failing: Option<u64>) -> u64 {
    CHUNKS.fetch_add(1, Relaxed);
    meet_another_worker();
    if failing == Some(start / 1000) {
        panic!("chunk {} failed", start / 1000);
    }
    let hash = (start..start + 1000).fold(0, |acc, n| acc ^ mix(n));
    MIXES.fetch_add(MIXED.with(|mixed| mixed.take()), Relaxed);
    hash
}

/// Hashes `chunks` chunks on the pool and prints the program's own counts.
#[wasm_bindgen]
pub fn hash_all(chunks: u32) -> String {
    hash(chunks, None)
}

/// The same, but chunk number `failing` panics on the worker that takes it
/// (and, built with `panic = "abort"` as threads need, traps there): the
/// pool never finishes, and the run ends by its timeout.
#[wasm_bindgen]
pub fn hash_all_failing(chunks: u32, failing: u32) -> String {
    hash(chunks, Some(u64::from(failing)))
}

fn hash(chunks: u32, failing: Option<u64>) -> String {
    let hash = (0..u64::from(chunks))
        .into_par_iter()
        .map(|c| chunk(c * 1000, failing))
        .reduce(|| 0, |a, b| a ^ b);
    log(&format!(
        "rayon-web: {} chunk, {} mix on {} threads, hash {hash:x}",
        CHUNKS.load(Relaxed),
        MIXES.load(Relaxed),
        rayon::current_num_threads()
    ));
    format!("{hash:x}")
}

/// Rounds of work that take about 30 ms in an optimised build.
const LONG_ROUNDS: u64 = 24_000_000;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance)]
    fn now() -> f64;
}

/// One call of the loop's: a few rounds of work, or many.
#[wasmprof::instrument]
pub fn step(seed: u64, rounds: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..rounds {
        x = std::hint::black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
    x
}

/// 200,001 calls of `step`, one of them long; the long call's duration,
/// as the program measured it (ms).
#[wasmprof::instrument]
pub fn run_steps() -> (u64, f64) {
    let mut sum = 0u64;
    let mut long_ms = 0.0;
    for i in 0..200_000u64 {
        sum = sum.wrapping_add(step(i, 2));
        if i == 100_000 {
            let start = now();
            sum = sum.wrapping_add(step(i, std::hint::black_box(LONG_ROUNDS)));
            long_ms = now() - start;
        }
    }
    (sum, long_ms)
}

/// `--invoke long_call_on_pool`: [`run_steps`] on a worker of the pool.
#[wasm_bindgen]
pub fn long_call_on_pool() -> f64 {
    let mut result = (0, 0.0);
    rayon::scope(|scope| scope.spawn(|_| result = run_steps()));
    let (sum, long_ms) = result;
    log(&format!(
        "long call: {long_ms:.3} ms on a worker of the pool (checksum {sum})"
    ));
    long_ms
}
