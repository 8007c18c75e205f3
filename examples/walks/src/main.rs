//! `walks [WALKS] [DEPTH] [DEEP]`: WALKS random walks (default 200,000) of
//! DEPTH steps (16) over four mutually recursive functions, then one
//! recursion DEEP calls deep (5,000). Four ways at every step make far more
//! distinct call paths than a call tree keeps: what a profiler must survive
//! on a big program. It counts its own calls too, and prints them, so that
//! the profile's counts can be checked against them.
//!
//! ```sh
//! cargo wasmprof run -p walks --release
//! cargo wasmprof run -p walks --release --max-nodes 4096 -- 2000 12
//! ```

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static CALLS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
const NAMES: [&str; 5] = ["north", "east", "south", "west", "deep"];

/// xorshift64: the same walks every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[wasmprof::instrument]
fn north(steps: u32, rng: &mut Rng) -> u64 {
    CALLS[0].fetch_add(1, Relaxed);
    step(steps, rng) + 1
}

#[wasmprof::instrument]
fn east(steps: u32, rng: &mut Rng) -> u64 {
    CALLS[1].fetch_add(1, Relaxed);
    step(steps, rng) + 2
}

#[wasmprof::instrument]
fn south(steps: u32, rng: &mut Rng) -> u64 {
    CALLS[2].fetch_add(1, Relaxed);
    step(steps, rng) + 3
}

#[wasmprof::instrument]
fn west(steps: u32, rng: &mut Rng) -> u64 {
    CALLS[3].fetch_add(1, Relaxed);
    step(steps, rng) + 4
}

/// One more step of the walk, in a direction drawn at random.
#[inline(always)]
fn step(steps: u32, rng: &mut Rng) -> u64 {
    if steps == 0 {
        return 0;
    }
    match rng.next() % 4 {
        0 => north(steps - 1, rng),
        1 => east(steps - 1, rng),
        2 => south(steps - 1, rng),
        _ => west(steps - 1, rng),
    }
}

#[wasmprof::instrument]
fn deep(n: u32) -> u64 {
    CALLS[4].fetch_add(1, Relaxed);
    if n == 0 {
        0
    } else {
        deep(n - 1) + 1
    }
}

fn arg(n: usize, default: u32) -> u32 {
    std::env::args()
        .nth(n)
        .map(|a| a.parse().expect("a whole number"))
        .unwrap_or(default)
}

#[wasmprof::instrument]
fn main() {
    let (walks, depth, deep_calls) = (arg(1, 200_000), arg(2, 16), arg(3, 5_000));
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut total = 0;
    for _ in 0..walks {
        total += step(depth, &mut rng);
    }
    total += deep(deep_calls);
    let counts: Vec<String> = NAMES
        .iter()
        .zip(&CALLS)
        .map(|(name, calls)| format!("{name} {}", calls.load(Relaxed)))
        .collect();
    println!("walks: {} (checksum {total})", counts.join(", "));
}
