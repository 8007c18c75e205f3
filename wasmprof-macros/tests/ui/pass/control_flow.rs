//! Early `return`, `?`, loops and labels inside an instrumented body.
#![deny(warnings)]

use std::num::ParseIntError;

#[wasmprof::instrument]
fn parse_sum(input: &str) -> Result<u32, ParseIntError> {
    let mut sum = 0;
    for part in input.split(',') {
        sum += part.trim().parse::<u32>()?;
    }
    Ok(sum)
}

#[wasmprof::instrument]
fn first_even(xs: &[u32]) -> Option<u32> {
    for &x in xs {
        if x % 2 == 0 {
            return Some(x);
        }
    }
    None
}

#[wasmprof::instrument]
fn option_chain(xs: &[Vec<u32>]) -> Option<u32> {
    let first = xs.first()?;
    let last = first.last()?;
    Some(*last)
}

#[wasmprof::instrument]
fn labelled(n: u32) -> u32 {
    let found = 'outer: loop {
        for i in 0.. {
            if i * i >= n {
                break 'outer i;
            }
        }
    };
    found
}

#[wasmprof::instrument]
fn recursive(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    recursive(n - 1) + recursive(n - 2)
}

#[wasmprof::instrument]
fn returns_a_closure() -> impl Fn() -> u32 {
    // A `return` in the closure returns from the closure.
    || {
        if true {
            return 4;
        }
        5
    }
}

#[wasmprof::instrument]
fn may_panic(fail: bool) -> u32 {
    if fail {
        panic!("expected");
    }
    1
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
pub fn main() {
    assert_eq!(parse_sum("1, 2, 3"), Ok(6));
    assert!(parse_sum("1, x").is_err());
    assert_eq!(first_even(&[1, 3, 4, 6]), Some(4));
    assert_eq!(first_even(&[1]), None);
    assert_eq!(option_chain(&[vec![1, 2]]), Some(2));
    assert_eq!(option_chain(&[vec![]]), None);
    assert_eq!(labelled(10), 4);
    assert_eq!(recursive(10), 55);
    assert_eq!(returns_a_closure()(), 4);
    assert_eq!(may_panic(false), 1);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    assert!(std::panic::catch_unwind(|| may_panic(true)).is_err());
    std::panic::set_hook(hook);
}
