//! `#[async_trait]` under `#[wasmprof::instrument]` (ours first, as
//! crate-wide instrumentation places it): the methods stay `async fn` for
//! async-trait to box, and their bodies are instrumented futures, recorded
//! at their first poll.
#![deny(warnings)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use async_trait::async_trait;

#[async_trait]
trait Fetch {
    async fn fetch(&self, n: u32) -> u32;

    async fn twice(&self) -> u32 {
        self.fetch(1).await * 2
    }
}

pub struct Source(u32);

#[wasmprof::instrument]
#[async_trait]
impl Fetch for Source {
    async fn fetch(&self, n: u32) -> u32 {
        self.0 + n
    }
}

#[wasmprof::instrument]
#[async_trait]
trait Described {
    async fn describe(&self) -> String {
        "described".to_owned()
    }
}

#[async_trait]
impl Described for Source {}

fn block_on<F: Future>(future: F) -> F::Output {
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
pub fn main() {
    let source = Source(2);
    assert_eq!(block_on(source.fetch(3)), 5);
    assert_eq!(block_on(source.twice()), 6);
    assert_eq!(block_on(source.describe()), "described");
}
