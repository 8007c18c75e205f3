//! A command built as a WASI 0.2 component: `cargo wasmprof run -p
//! components --target wasm32-wasip2`.
//!
//! `fib(n)` makes `2 * fib(n + 1) - 1` calls of itself, and the Collatz walk
//! calls `collatz_len` once per start and `step` once per step: the test
//! checks both against the profile. An argument chooses a way to end:
//! `panic` panics after the work, `exit` exits with 3, `spin` never ends.

/// The `n`th Fibonacci number, the slow way: many short calls.
#[wasmprof::instrument]
fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// One step of the Collatz map.
#[wasmprof::instrument]
fn step(n: u64) -> u64 {
    if n % 2 == 0 {
        n / 2
    } else {
        3 * n + 1
    }
}

/// How many steps `n` takes to reach 1.
#[wasmprof::instrument]
fn collatz_len(mut n: u64) -> u32 {
    let mut steps = 0;
    while n != 1 {
        n = step(n);
        steps += 1;
    }
    steps
}

/// The longest Collatz walk from a start below `limit`, and all steps taken.
#[wasmprof::instrument]
fn longest_walk(limit: u64) -> (u64, u64) {
    let (mut best, mut total) = (1, 0);
    for start in 1..limit {
        let len = u64::from(collatz_len(start));
        total += len;
        if len > u64::from(collatz_len(best)) {
            best = start;
        }
    }
    (best, total)
}

fn main() {
    let ending = std::env::args().nth(1).unwrap_or_default();
    println!("fib(20) = {}", fib(20));
    let (best, steps) = longest_walk(1000);
    println!("longest Collatz walk below 1000 starts at {best}, {steps} steps in all");
    match ending.as_str() {
        "panic" => panic!("asked to panic after the work"),
        "exit" => std::process::exit(3),
        "spin" => loop {
            std::hint::black_box(fib(10));
        },
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fib_of_ten() {
        assert_eq!(fib(10), 55);
    }

    #[test]
    fn collatz_of_27() {
        assert_eq!(collatz_len(27), 111);
    }
}
