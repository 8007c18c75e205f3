//! Recursion, as GNU gprof shows it for `reference/recursion.c`: `fib` calls
//! itself (direct recursion), `is_even` and `is_odd` call each other (a
//! cycle). The start function runs the same workload as the C program, so
//! the call counts must match gprof's exactly: `fib` 200 external calls and
//! 4,378,000 recursive ones, `is_even` and `is_odd` 10,200 each.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console)]
    fn log(message: &str);
}

/// The naive Fibonacci recursion: nothing but calls.
#[wasmprof::instrument]
pub fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[wasmprof::instrument]
pub fn is_even(n: u32) -> bool {
    if n == 0 {
        true
    } else {
        is_odd(n - 1)
    }
}

#[wasmprof::instrument]
pub fn is_odd(n: u32) -> bool {
    if n == 0 {
        false
    } else {
        is_even(n - 1)
    }
}

/// What `recursion.c`'s `main` does.
#[wasmprof::instrument]
pub fn workload() -> u64 {
    let mut sum = 0u64;
    for _ in 0..200 {
        sum += fib(20);
        sum += is_even(101) as u64;
    }
    sum
}

#[wasm_bindgen(start)]
pub fn start() {
    log(&format!("fib: sum = {}", workload()));
}

/// `fib(n)` for `cargo wasmprof run --invoke fib_js -- 32`.
#[wasm_bindgen]
pub fn fib_js(n: u32) -> f64 {
    fib(n) as f64
}

/// The overhead benchmark's second baseline: `fib` with one store after its
/// calls, never instrumented. The plain `fib` is not the program an
/// instrumented one can be: rustc turns its second call into a loop, which
/// code after the calls (the guard's exit, or this store) rules out.
#[wasm_bindgen]
pub fn fib_unlooped_js(n: u32) -> f64 {
    fib_unlooped(n) as f64
}

fn fib_unlooped(n: u32) -> u64 {
    // `#[used]`: a static nothing reads would go, and its stores with it.
    #[used]
    static LAST: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let value = if n < 2 {
        n as u64
    } else {
        fib_unlooped(n - 1) + fib_unlooped(n - 2)
    };
    LAST.store(n, std::sync::atomic::Ordering::Relaxed);
    value
}
