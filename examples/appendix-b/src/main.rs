//! The validation program of the WasmProf thesis (appendix B), in Rust.
//!
//! Every timing relation is known in advance: `f_main_1` to `f_main_4` do the
//! same work (10,000,000 calls of `add`) in four different ways, `f_half`
//! and `f_half_2` half of it, `f_quarter` a quarter. `add` is called
//! 52,500,000 times in all.
//!
//! `add` is kept a real call in every build: `#[inline(never)]`, and
//! `black_box` on an input so the optimiser cannot compute the loops in
//! closed form. That costs the same in the plain and the instrumented build,
//! so it does not change what is measured.

use std::hint::black_box;

const MAIN_ITERATIONS: i32 = 10_000_000;
const HALF_ITERATIONS: i32 = MAIN_ITERATIONS / 2;
const QUARTER_ITERATIONS: i32 = MAIN_ITERATIONS / 4;

#[cfg_attr(not(feature = "count-add"), wasmprof::instrument)]
#[cfg_attr(feature = "count-add", wasmprof::instrument(count))]
#[inline(never)]
fn add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

/// A loop of `MAIN_ITERATIONS` calls.
#[wasmprof::instrument]
#[inline(never)]
fn f_main_1() -> i32 {
    let mut sum = 0i32;
    for i in 0..MAIN_ITERATIONS {
        sum = sum.wrapping_add(add(black_box(1), i));
    }
    sum
}

/// The same loop, counting down.
#[wasmprof::instrument]
#[inline(never)]
fn f_main_2() -> i32 {
    let mut sum = 0i32;
    for i in (0..MAIN_ITERATIONS).rev() {
        sum = sum.wrapping_add(add(black_box(1), i));
    }
    sum
}

/// Half the work of `f_main_1`.
#[wasmprof::instrument]
#[inline(never)]
fn f_half(start: i32) -> i32 {
    let mut sum = start;
    for i in 0..HALF_ITERATIONS {
        sum = sum.wrapping_add(add(black_box(1), i));
    }
    sum
}

/// A quarter of the work of `f_main_1`.
#[wasmprof::instrument]
#[inline(never)]
fn f_quarter(start: i32) -> i32 {
    let mut sum = start;
    for i in 0..QUARTER_ITERATIONS {
        sum = sum.wrapping_add(add(black_box(1), i));
    }
    #[cfg(feature = "slow-quarter")]
    {
        sum = sum.wrapping_add(extra_work(start));
    }
    sum
}

/// With the `slow-quarter` feature, `f_quarter` takes several times as long:
/// a regression for `report --diff` to find, larger than what a busy
/// machine does to the time of one run (which can be half as much again).
#[cfg(feature = "slow-quarter")]
#[inline(never)]
fn extra_work(start: i32) -> i32 {
    let mut sum = start;
    for i in 0..8 * QUARTER_ITERATIONS {
        sum = black_box(sum.wrapping_mul(31).wrapping_add(i));
    }
    sum
}

/// Two halves: the same work as `f_main_1`.
#[wasmprof::instrument]
#[inline(never)]
fn f_main_3() -> i32 {
    f_half(1).wrapping_add(f_half(2))
}

/// Four quarters: the same work as `f_main_1`.
#[wasmprof::instrument]
#[inline(never)]
fn f_main_4() -> i32 {
    f_quarter(1)
        .wrapping_add(f_quarter(2))
        .wrapping_add(f_quarter(3))
        .wrapping_add(f_quarter(4))
}

/// Two quarters: the same work as `f_half`.
#[wasmprof::instrument]
#[inline(never)]
fn f_half_2() -> i32 {
    f_quarter(1).wrapping_add(f_quarter(2))
}

#[wasmprof::instrument]
fn main() {
    let mut sum = 0i32;
    // These four should take the same time.
    sum = sum.wrapping_add(f_main_1());
    sum = sum.wrapping_sub(f_main_2());
    sum = sum.wrapping_add(f_main_3());
    sum = sum.wrapping_sub(f_main_4());
    // These two about half of that.
    sum = sum.wrapping_add(f_half(0));
    sum = sum.wrapping_sub(f_half_2());
    // This one a quarter.
    sum = sum.wrapping_sub(f_quarter(0));
    println!("appendix-b: sum = {sum}");
}
