//! The worst case for async instrumentation: futures that do nearly nothing
//! but get polled. `chain(n)` awaits `n` calls of `step`, each of which
//! awaits once (`YieldOnce`), so a run is `n` futures created and `2n + 1`
//! polls of instrumented futures, with no I/O and no timers, on a
//! ten-line executor. `cargo wasmprof bench -p async-polls --release` puts
//! the plain and instrumented builds side by side; the difference divided
//! by the polls is the cost of one instrumented poll.
//!
//! Usage: `async-polls [N]` (default 1,000,000).

use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

/// Pending once, then ready: one await.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[wasmprof::instrument]
async fn step(i: u32) -> u32 {
    YieldOnce(false).await;
    i.wrapping_mul(2_654_435_761).rotate_left(7)
}

#[wasmprof::instrument]
async fn chain(n: u32) -> u32 {
    let mut sum = 0u32;
    for i in 0..n {
        sum = sum.wrapping_add(step(i).await);
    }
    sum
}

/// Polls `future` until it is ready; returns its output and the polls.
fn block_on<F: Future>(future: F) -> (F::Output, u64) {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    let mut polls = 1;
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return (out, polls);
        }
        polls += 1;
    }
}

fn main() {
    let n = match std::env::args().nth(1) {
        Some(text) => match text.parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("async-polls: {text:?} is not a count of futures");
                std::process::exit(2);
            }
        },
        None => 1_000_000,
    };
    let (sum, polls) = block_on(chain(n));
    println!("async-polls: {n} futures, {polls} polls of chain, checksum {sum:08x}");
}
