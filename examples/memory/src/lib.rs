//! Allocations whose every figure is known in advance, for `cargo wasmprof
//! run --memory` (`cargo-wasmprof/tests/e2e/memory.rs` checks them):
//!
//! - `grow_vec`: a `Vec<u64>` pushed to 100 elements. Its capacity goes 4,
//!   8, 16, 32, 64, 128: one allocation and five reallocations, 2016 bytes
//!   in all, every one freed before it returns.
//! - `make_boxes`: ten `Box<u32>` collected into a `Vec` made for exactly
//!   ten: eleven blocks, 80 bytes on wasm32, all freed.
//! - `leak`: 1000 bytes leaked, live at the end under `leak`.
//! - `peak`: 1 MiB held for a moment and freed: the peak of the run, and
//!   the allocation that makes linear memory grow.
//! - `exhaust` (`memory oom`): 128 MiB, more than the module's 64 MiB cap.
//! - `churn` (`memory churn N`): many small `String`, `Vec` and `Box`
//!   allocations in a loop, what `cargo wasmprof bench --memory` measures
//!   the recording's cost on.

use std::hint::black_box;

#[wasmprof::instrument]
pub fn grow_vec() -> usize {
    let mut v: Vec<u64> = Vec::new();
    for i in 0..100 {
        v.push(black_box(i));
    }
    black_box(&v).len()
}

#[wasmprof::instrument]
pub fn make_boxes() -> u32 {
    let boxes: Vec<Box<u32>> = (0..10).map(Box::new).collect();
    black_box(&boxes).iter().map(|b| **b).sum()
}

#[wasmprof::instrument]
pub fn leak() -> usize {
    let leaked: &'static mut [u8] = Box::leak(vec![7u8; 1000].into_boxed_slice());
    black_box(leaked).len()
}

#[wasmprof::instrument]
pub fn peak() -> u8 {
    let big = vec![1u8; 1 << 20];
    black_box(&big)[12345]
}

/// Asks for more memory than the module may ever have: the allocator
/// returns null and the program aborts.
#[wasmprof::instrument]
pub fn exhaust() -> usize {
    let huge: Vec<u8> = Vec::with_capacity(128 << 20);
    black_box(&huge).capacity()
}

/// The four allocating functions, in order.
#[wasmprof::instrument]
pub fn workload() -> usize {
    grow_vec() + make_boxes() as usize + leak() + peak() as usize
}

/// `rounds` rounds of small allocations, each freed in its round.
#[wasmprof::instrument]
pub fn churn(rounds: u32) -> usize {
    let mut total = 0;
    for round in 0..rounds {
        total += churn_once(round);
    }
    total
}

/// Eight short `String`s in a `Vec`, a boxed slice, and their join.
#[wasmprof::instrument]
fn churn_once(round: u32) -> usize {
    let words: Vec<String> = (0..8).map(|k| format!("w{}", round + k)).collect();
    let numbers: Box<[u32]> = (0..16).map(|k| k * round).collect();
    let joined = words.join(",");
    black_box(&joined).len() + black_box(&numbers).len()
}

/// `cargo wasmprof test -p memory --memory` names the test that leaks.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vec_grows_to_a_hundred() {
        assert_eq!(grow_vec(), 100);
    }

    #[test]
    fn a_kilobyte_is_leaked() {
        assert_eq!(leak(), 1000);
    }
}
