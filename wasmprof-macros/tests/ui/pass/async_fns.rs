//! `async fn` everywhere the attribute goes: free, generic, with patterns
//! and `_` among the arguments, returning `Result` through `?` or an
//! `impl Trait`, methods taking `&self` or `self`, an impl block, a trait's
//! default method and a trait impl, and a function returning
//! `impl Future` (which stays a synchronous call: it is counted and timed
//! while it builds the future, not while the future runs).
#![deny(warnings)]

use std::future::Future;
use std::num::ParseIntError;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[wasmprof::instrument]
async fn load(name: &str, (a, b): (u32, u32), _: String, mut n: u32) -> u32 {
    n += 1;
    name.len() as u32 + a + b + n
}

#[wasmprof::instrument]
async fn parse(text: &str) -> Result<u32, ParseIntError> {
    let n: u32 = text.trim().parse()?;
    Ok(n)
}

#[wasmprof::instrument]
async fn widen<T: Clone + Into<u64>>(x: &T) -> u64 {
    x.clone().into()
}

#[wasmprof::instrument]
async fn shown() -> impl std::fmt::Display {
    5
}

pub struct Store(Vec<u32>);

#[wasmprof::instrument]
impl Store {
    async fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    async fn into_inner(self) -> Vec<u32> {
        self.0
    }
}

trait Source {
    async fn fetch(&self) -> u32;
}

#[wasmprof::instrument]
impl Source for Store {
    async fn fetch(&self) -> u32 {
        self.0[0]
    }
}

#[wasmprof::instrument]
trait Doubled {
    async fn base(&self) -> u32 {
        1
    }
}

impl Doubled for Store {}

#[wasmprof::instrument]
fn later() -> impl Future<Output = u32> {
    async { 3 }
}

#[wasmprof::instrument]
async fn run() -> Result<u32, ParseIntError> {
    let store = Store(vec![1, 2, 3]);
    let mut sum = load("ab", (1, 2), String::new(), 0).await;
    sum += parse(" 12 ").await?;
    sum += widen(&7u32).await as u32;
    sum += store.total().await + store.fetch().await + store.base().await;
    sum += later().await;
    sum += shown().await.to_string().len() as u32;
    sum += store.into_inner().await.len() as u32;
    assert!(parse("x").await.is_err());
    Ok(sum)
}

/// Polls a future to its end on this thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
/// Never returns, as dioxus-web's `run` (`-> !` compiles only as a
/// function's return type on stable).
#[wasmprof::instrument]
#[allow(dead_code)]
async fn serve_forever(mut n: u64) -> ! {
    loop {
        n = n.wrapping_add(1);
        std::hint::black_box(n);
    }
}

pub fn main() {
    assert_eq!(block_on(run()), Ok(6 + 12 + 7 + 6 + 1 + 1 + 3 + 1 + 3));
}
