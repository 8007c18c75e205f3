//! rayon's global pool over `RAYON_NUM_THREADS` threads, hashing 400
//! chunks through an annotated `chunk`. The pool's workers wait for work
//! until the process ends: they are still running when `main` returns.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

static CHUNKS: AtomicU64 = AtomicU64::new(0);

#[wasmprof::instrument]
fn chunk(start: u64) -> u64 {
    CHUNKS.fetch_add(1, Ordering::Relaxed);
    (start..start + 1000).fold(0u64, |acc, n| {
        acc.rotate_left(5) ^ n.wrapping_mul(0x9e37_79b9)
    })
}

fn main() {
    let hash = (0..400u64)
        .into_par_iter()
        .map(|c| chunk(c * 1000))
        .reduce(|| 0, |a, b| a ^ b);
    println!(
        "pool: {} chunks on {} threads, hash {hash:x}",
        CHUNKS.load(Ordering::Relaxed),
        rayon::current_num_threads()
    );
}
