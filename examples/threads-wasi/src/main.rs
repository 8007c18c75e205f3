//! Four named worker threads, each hashing `RANGES` ranges of `RANGE_LEN`
//! numbers: per thread 1 `worker`, 25 `hash_range` and 25 × 400 `mix`
//! calls. The main thread's own count of each is printed, for the profile
//! to be checked against.
//!
//! Each worker hands its hashes back in a vector it allocated, which the
//! main thread's `combine` frees: with `--memory`, four blocks of 200 bytes
//! made on the workers and freed on the main thread.

use std::sync::atomic::{AtomicU64, Ordering};

const WORKERS: u64 = 4;
const RANGES: u64 = 25;
const RANGE_LEN: u64 = 400;

static MIXES: AtomicU64 = AtomicU64::new(0);

#[wasmprof::instrument]
fn mix(x: u64) -> u64 {
    MIXES.fetch_add(1, Ordering::Relaxed);
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[wasmprof::instrument]
fn hash_range(start: u64) -> u64 {
    (start..start + RANGE_LEN).fold(0, |acc, n| acc ^ mix(n))
}

#[wasmprof::instrument]
fn worker(index: u64) -> Vec<u64> {
    let mut hashes = Vec::with_capacity(RANGES as usize);
    for r in 0..RANGES {
        hashes.push(hash_range((index * RANGES + r) * RANGE_LEN));
    }
    hashes
}

/// Folds every worker's hashes into one, freeing their vectors.
#[wasmprof::instrument]
fn combine(per_worker: Vec<Vec<u64>>) -> u64 {
    per_worker.into_iter().flatten().fold(0, |acc, h| acc ^ h)
}

fn main() {
    let handles: Vec<_> = (0..WORKERS)
        .map(|index| {
            std::thread::Builder::new()
                .name(format!("worker-{index}"))
                .spawn(move || worker(index))
                .expect("a thread")
        })
        .collect();
    let per_worker = handles
        .into_iter()
        .map(|h| h.join().expect("a worker"))
        .collect();
    let hash = combine(per_worker);
    println!(
        "threads-wasi: {WORKERS} workers, {} hash_range, {} mix, hash {hash:016x}",
        WORKERS * RANGES,
        MIXES.load(Ordering::Relaxed)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two workers on threads of their own hash what one does alone.
    #[test]
    fn a_worker_hashes_the_same_on_any_thread() {
        let here = worker(1);
        let there = std::thread::spawn(|| worker(1)).join().unwrap();
        assert_eq!(here, there);
    }
}
