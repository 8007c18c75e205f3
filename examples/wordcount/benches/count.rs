//! A benchmark target without libtest's harness (`harness = false`), as
//! criterion's are: `cargo wasmprof test -p wordcount --bench count` runs
//! it once, instrumented, in test mode; `cargo bench` would time it.

fn main() {
    let timing = std::env::args().any(|a| a == "--bench");
    let text = "the quick brown fox jumps over the lazy dog\n".repeat(500);
    let rounds = if timing { 1_000 } else { 10 };
    let started = std::time::Instant::now();
    let mut words = 0;
    for _ in 0..rounds {
        words += wordcount::count(std::hint::black_box(&text), 1, false).1;
    }
    assert_eq!(words, rounds * 4_500);
    if timing {
        println!("count: {:?} per round", started.elapsed() / rounds as u32);
    } else {
        println!("count: ok ({rounds} rounds)");
    }
}
