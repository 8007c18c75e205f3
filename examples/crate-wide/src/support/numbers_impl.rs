//! Loaded with `#[path = "support/numbers_impl.rs"] mod numbers;`: the
//! report names the functions `crate_wide::numbers::…` and shows this file.

pub fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    fib(n - 1) + fib(n - 2)
}

pub fn square(x: u64) -> u64 {
    let y = x;
    y * y
}
