//! Matches a few regular expressions with `regex-lite` over generated log
//! lines, `ROUNDS` times, and prints what it found. No wasmprof annotation
//! anywhere: the point is `cargo wasmprof run --instrument-all
//! --instrument-crate regex-lite`, a registry crate instrumented crate-wide,
//! whose output must be the plain build's.
//!
//! regex-lite is a backtracking-free matcher made of many small functions
//! (character classes, the program's instructions, the input cursor), the
//! shape that makes instrumenting every function expensive.

use regex_lite::Regex;

/// How many times the patterns run over the text, unless the first
/// argument says otherwise (the benchmarks run it longer).
const ROUNDS: usize = 4;

/// The patterns: a timestamp, an address, a key=value pair, a word before
/// a number, and an alternation.
const PATTERNS: &[&str] = &[
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}",
    r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b",
    r"(\w+)=([a-z0-9]+)",
    r"(?i)error\s+\d+",
    r"GET|POST|DELETE",
];

/// A deterministic log, from a linear congruential generator.
fn log_lines(lines: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let methods = ["GET", "POST", "PUT", "DELETE"];
    let words = ["user", "session", "cache", "disk", "queue"];
    let mut text = String::new();
    for i in 0..lines {
        text.push_str(&format!(
            "2026-{:02}-{:02}T{:02}:{:02} {}.{}.{}.{} {} /api/{} {}={} ",
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
        ));
        if i % 7 == 0 {
            text.push_str(&format!("ERROR {}", next(600)));
        }
        text.push('\n');
    }
    text
}

fn main() {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(ROUNDS);
    let text = log_lines(2_000);
    let regexes: Vec<Regex> = PATTERNS
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect();
    let mut found = vec![0usize; regexes.len()];
    let mut captured = 0usize;
    for _ in 0..rounds {
        for (regex, count) in regexes.iter().zip(found.iter_mut()) {
            *count += regex.find_iter(&text).count();
        }
        captured += regexes[2]
            .captures_iter(&text)
            .map(|c| c[2].len())
            .sum::<usize>();
    }
    for (pattern, count) in PATTERNS.iter().zip(&found) {
        println!("{count:>7}  {pattern}");
    }
    println!("{rounds} rounds over {} bytes; {captured} bytes captured", text.len());
}
