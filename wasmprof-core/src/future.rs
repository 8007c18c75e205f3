//! Async functions: the future an instrumented `async fn` returns.
//!
//! The call is recorded when the future is created, under the node current
//! then (the code that called the `async fn`, its logical caller), and every
//! poll enters that node, whoever polls it: the synchronous work a poll does
//! and the futures it creates land under the async function's call path,
//! not under the executor's.
//!
//! A poll is timed like a call. Its time is the async function's CPU time.
//! When the poll runs outside its logical caller (a task started with
//! `spawn_local`, polled by the executor from the event loop), the callers
//! between the future's node and the code polling it get its time too, and
//! the callers on the polling side that did not ask for it give it back, so
//! that every node's time still holds its children's.
//!
//! Per call path the runtime also keeps what only futures have: polls,
//! completions, cancellations (dropped before completing), the CPU time of
//! the futures still pending, and the latency of the completed ones, from
//! their first poll to their completion (wall time, awaits included, never
//! added to CPU time).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::clock;
use crate::future_stats::FutureStats;
use crate::guard::{begin_timed, end_frame};
use crate::site::Site;
use crate::state::with_thread;
use crate::thread_state::{ONE_TREE, ThreadState};
use crate::tree::{NodeId, ROOT};

/// The future of an instrumented `async fn`: the function's body as an
/// `async` block, and where its call was recorded.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Instrumented<F> {
    future: F,
    record: Record,
}

/// Where the call of one future was recorded, and how it is going.
struct Record {
    /// Index into the thread's [`Futures`]; `u32::MAX` when the call could
    /// not be recorded (thread teardown).
    slot: u32,
    node: NodeId,
    /// The thread whose tree holds `node` (0 with one tree): a future
    /// polled on another thread is not recorded there.
    owner: usize,
    /// Clock reading at the first poll; `None` before it, or without a
    /// clock.
    first_poll: Option<f64>,
    /// This future's CPU time so far (ms).
    cpu: f64,
    /// Completed: later polls (a misuse) and the drop record nothing.
    done: bool,
}

const UNRECORDED: u32 = u32::MAX;

fn thread_token(thread: &ThreadState) -> usize {
    if ONE_TREE {
        0
    } else {
        thread as *const ThreadState as usize
    }
}

impl<F: Future> Instrumented<F> {
    /// Records a call of the async function of `site` under the current
    /// node (at the root for a test: `at_root`), and wraps its body.
    pub fn new(
        site: &'static Site,
        self_type: Option<fn() -> &'static str>,
        at_root: bool,
        future: F,
    ) -> Self {
        let function = site.id(self_type);
        let record = with_thread(|thread| {
            crate::calibration::calibrate(thread);
            if at_root {
                thread.current = ROOT;
                thread.timed.clear();
            }
            let node = thread.tree.child(thread.current, function);
            thread.tree.count_future(node);
            Record {
                slot: thread.futures.slot(node),
                node,
                owner: thread_token(thread),
                first_poll: None,
                cpu: 0.0,
                done: false,
            }
        });
        Instrumented {
            future,
            record: record.unwrap_or(Record {
                slot: UNRECORDED,
                node: ROOT,
                owner: 0,
                first_poll: None,
                cpu: 0.0,
                done: true,
            }),
        }
    }
}

impl<F: Future> Future for Instrumented<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of
        // `self`, and the `Drop` impl below does not touch it. `record` is
        // not pinned and is only borrowed.
        let this = unsafe { self.get_unchecked_mut() };
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        let Some(mut poll) = PollScope::enter(&mut this.record) else {
            return future.poll(cx);
        };
        let result = future.poll(cx);
        poll.ready = result.is_ready();
        result
    }
}

impl<F> Drop for Instrumented<F> {
    fn drop(&mut self) {
        let record = &mut self.record;
        if record.done || record.slot == UNRECORDED {
            return;
        }
        with_thread(|thread| {
            if thread_token(thread) != record.owner {
                return;
            }
            if let Some(stats) = thread.futures.stats.get_mut(record.slot as usize) {
                stats.cancellations += 1;
                stats.pending_time -= record.cpu;
            }
        });
    }
}

/// One poll, from entry to exit: its node is current and, when calls are
/// timed, its frame is on the timed-call stack. The exit runs on drop, so
/// a panic that unwinds through the poll closes it too.
struct PollScope<'a> {
    record: &'a mut Record,
    /// The node that was current when the poll began: the poller's.
    poller: NodeId,
    /// Depth of the poll's timed frame; 0 when untimed.
    depth: u32,
    ready: bool,
}

impl<'a> PollScope<'a> {
    fn enter(record: &'a mut Record) -> Option<Self> {
        if record.done || record.slot == UNRECORDED {
            return None;
        }
        let poller = with_thread(|thread| {
            if thread_token(thread) != record.owner {
                return None;
            }
            let poller = thread.current;
            thread.current = record.node;
            if let Some(stats) = thread.futures.stats.get_mut(record.slot as usize) {
                stats.polls += 1;
            }
            Some(poller)
        })
        .flatten()?;
        // Every poll is timed when calls are: polls of one future range from
        // a check that finds nothing ready to the whole work of a load, and
        // a sample of them, as short synchronous calls get, would leave a
        // poll's children with more time than the poll.
        let depth = if clock::TIMED { begin_timed() } else { 0 };
        if depth != 0 && record.first_poll.is_none() {
            // The first poll's reading starts the future's latency.
            record.first_poll =
                with_thread(|thread| thread.timed.last().map(|frame| frame.start)).flatten();
        }
        Some(PollScope {
            record,
            poller,
            depth,
            ready: false,
        })
    }
}

impl Drop for PollScope<'_> {
    fn drop(&mut self) {
        let record = &mut *self.record;
        let (poller, depth, ready) = (self.poller, self.depth, self.ready);
        let end = if depth != 0 { clock::now() } else { 0.0 };
        with_thread(|thread| {
            let mut cpu = 0.0;
            let timed = if depth != 0 {
                end_frame(thread, depth, end)
            } else {
                None
            };
            if let Some((_, elapsed)) = timed {
                cpu = elapsed.max(0.0);
                thread.tree.add_exact_time(record.node, cpu);
                move_detached_time(thread, record.node, poller, cpu);
                // The timed call that polled holds the poll.
                if let Some(caller) = thread.timed.last_mut() {
                    caller.children += cpu;
                }
            }
            record.cpu += cpu;
            if let Some(stats) = thread.futures.stats.get_mut(record.slot as usize) {
                stats.pending_time += cpu;
                if ready {
                    stats.completions += 1;
                    stats.pending_time -= record.cpu;
                    if let Some(first) = record.first_poll.filter(|_| depth != 0) {
                        stats
                            .latency
                            .record((end - first).max(0.0), &mut thread.random);
                    }
                }
            }
            record.done |= ready;
            thread.current = poller;
        });
    }
}

/// A poll of `node` that took `cpu` ms ran under `poller`. Its logical
/// caller is `node`'s parent; unless that is the poller, the poll was
/// timed inside the poller's calls but belongs under the caller's. Below
/// their common ancestor, the caller's side gains the time and the
/// poller's side, which measured it, gives it back.
fn move_detached_time(thread: &mut ThreadState, node: NodeId, poller: NodeId, cpu: f64) {
    let Some(caller) = thread.tree.parent_of(node) else {
        return;
    };
    if caller == poller || cpu == 0.0 {
        return;
    }
    let chain = |mut at: NodeId| {
        let mut nodes = vec![at];
        while let Some(parent) = thread.tree.parent_of(at) {
            nodes.push(parent);
            at = parent;
        }
        nodes
    };
    let callers = chain(caller);
    let pollers = chain(poller);
    let common = callers
        .iter()
        .copied()
        .find(|n| pollers.contains(n))
        .unwrap_or(ROOT);
    for &n in callers.iter().take_while(|&&n| n != common) {
        thread.tree.add_exact_time(n, cpu);
    }
    for &n in pollers.iter().take_while(|&&n| n != common) {
        thread.tree.add_exact_time(n, -cpu);
    }
}

/// How many futures of this thread are pending: created, neither completed
/// nor dropped.
#[cfg_attr(not(all(target_family = "wasm", wasmprof_enabled)), allow(dead_code))]
pub(crate) fn pending() -> u64 {
    with_thread(|thread| {
        thread
            .futures
            .stats
            .iter()
            .map(|s| {
                let calls = thread
                    .tree
                    .nodes()
                    .get(s.node as usize)
                    .map_or(0, |n| n.calls);
                calls.saturating_sub(s.completions + s.cancellations)
            })
            .sum()
    })
    .unwrap_or(0)
}

/// Polls of this thread's futures so far.
#[cfg_attr(not(all(target_family = "wasm", wasmprof_enabled)), allow(dead_code))]
pub(crate) fn polls() -> u64 {
    with_thread(|thread| thread.futures.stats.iter().map(|s| s.polls).sum()).unwrap_or(0)
}

/// The futures of this thread's async calls, for the snapshot.
pub(crate) fn stats() -> Vec<FutureStats> {
    with_thread(|thread| thread.futures.stats.clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests;
