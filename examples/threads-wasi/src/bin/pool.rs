//! rayon's global pool over `RAYON_NUM_THREADS` threads, hashing 400
//! chunks through an annotated `chunk`. The pool's workers wait for work
//! until the process ends: they are still running when `main` returns.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

static CHUNKS: AtomicU64 = AtomicU64::new(0);

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

#[wasmprof::instrument]
fn chunk(start: u64) -> u64 {
    CHUNKS.fetch_add(1, Ordering::Relaxed);
    meet_another_worker();
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
