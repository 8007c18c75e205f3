//! Functions written out more than once by an attribute macro (the
//! `duplicate` crate's `#[duplicate_item]`), called on two threads:
//! crate-wide instrumentation must count each copy apart.
//! `cargo wasmprof run -p threads-wasi --bin copies --instrument-all
//! --target wasm32-wasip1-threads --host wasmtime --verify-counts`

use duplicate::duplicate_item;

#[duplicate_item(
    double      ty;
    [double_u32] [u32];
    [double_u64] [u64];
)]
#[inline(never)]
fn double(x: ty) -> ty {
    std::hint::black_box(x).wrapping_mul(2)
}

/// A copy with a loop, instrumented fully rather than counted.
#[duplicate_item(
    sum_doubled      ty;
    [sum_doubled_u32] [u32];
    [sum_doubled_u64] [u64];
)]
#[inline(never)]
fn sum_doubled(values: &[ty]) -> ty {
    let mut sum: ty = 0;
    for v in values {
        sum = sum.wrapping_add(*v * 2);
    }
    sum
}

fn on_a_thread(n: u32) -> u64 {
    let mut total = 0u64;
    for i in 0..n {
        total = total.wrapping_add(u64::from(double_u32(i)));
        if i % 3 == 0 {
            total = total.wrapping_add(double_u64(u64::from(i)));
        }
    }
    let small: Vec<u32> = (0..n).collect();
    let large: Vec<u64> = (0..u64::from(n)).collect();
    total = total.wrapping_add(u64::from(sum_doubled_u32(&small)));
    for _ in 0..2 {
        total = total.wrapping_add(sum_doubled_u64(&large));
    }
    total
}

fn main() {
    let worker = std::thread::spawn(|| on_a_thread(300));
    let here = on_a_thread(200);
    let there = worker.join().expect("the worker");
    // 500 calls of double_u32, 100 + 67 of double_u64, 2 of sum_doubled_u32
    // and 4 of sum_doubled_u64.
    println!("copies: {} {}", here, there);
}
