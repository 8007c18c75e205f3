//! Scans generated log lines with `regex-lite` on rayon's global pool: the
//! lines are split into chunks, and each chunk is matched against every
//! pattern by whichever worker takes it. No wasmprof annotation: the point
//! is `cargo wasmprof run --instrument-all --instrument-crate regex-lite`
//! on `wasm32-wasip1-threads`, whose workers make almost all the calls,
//! against the same program on `wasm32-wasip1`, where rayon runs its pool
//! on the main thread.
//!
//! `log-scan [ROUNDS]`: how many times the chunks are scanned (1). The
//! program prints how many lines each pattern matched, and how many chunks
//! it counted, for the profile's counts to be checked against; and, on
//! standard error, how long its work took by its own clock, from the lines
//! built to the totals reduced.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use regex_lite::Regex;

const LINES: usize = 4_000;
const CHUNKS: usize = 40;

/// A timestamp, an address, a key=value pair, an error with its code, a
/// method.
const PATTERNS: &[&str] = &[
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}",
    r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b",
    r"(\w+)=([a-z0-9]+)",
    r"(?i)error\s+\d+",
    r"GET|POST|DELETE",
];

/// Chunks scanned, by any thread.
static SCANNED: AtomicU64 = AtomicU64::new(0);

/// A deterministic log, from a linear congruential generator.
fn log_lines() -> Vec<String> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let methods = ["GET", "POST", "PUT", "DELETE"];
    let words = ["user", "session", "cache", "disk", "queue"];
    (0..LINES)
        .map(|i| {
            let mut line = format!(
                "2026-{:02}-{:02}T{:02}:{:02} {}.{}.{}.{} {} /api/{} {}={}",
                next(12) + 1,
                next(28) + 1,
                next(24),
                next(60),
                next(256),
                next(256),
                next(256),
                next(256),
                methods[next(4) as usize],
                words[next(5) as usize],
                words[next(5) as usize],
                next(100_000),
            );
            if i % 7 == 0 {
                line.push_str(&format!(" ERROR {}", next(600)));
            }
            line
        })
        .collect()
}

/// How many of `lines` each pattern matches.
fn scan(lines: &[String], regexes: &[Regex]) -> Vec<u64> {
    SCANNED.fetch_add(1, Ordering::Relaxed);
    regexes
        .iter()
        .map(|regex| lines.iter().filter(|line| regex.is_match(line)).count() as u64)
        .collect()
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let started = std::time::Instant::now();
    let lines = log_lines();
    let regexes: Vec<Regex> = PATTERNS
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect();
    let mut matched = vec![0u64; PATTERNS.len()];
    for _ in 0..rounds {
        let counts = lines
            .par_chunks(LINES / CHUNKS)
            .map(|chunk| scan(chunk, &regexes))
            .reduce(
                || vec![0; PATTERNS.len()],
                |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect(),
            );
        for (total, count) in matched.iter_mut().zip(counts) {
            *total += count;
        }
    }
    eprintln!(
        "log-scan: the work took {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    for (pattern, count) in PATTERNS.iter().zip(&matched) {
        println!("{count:>7}  {pattern}");
    }
    println!(
        "log-scan: {} chunks of {} lines on {} threads",
        SCANNED.load(Ordering::Relaxed),
        LINES / CHUNKS,
        rayon::current_num_threads()
    );
}
