//! The guard an instrumented function holds from entry to every exit.
//!
//! Entry finds the node for (current node, this function) — usually with a
//! single compare against the node the site cached for this parent, else
//! against the current node's first child — and counts the call; if the
//! node times this call (see
//! [`CallTree::add_time`](crate::tree::CallTree::add_time)), an out-of-line
//! step pushes a frame and reads the clock. Drop, which runs on `return`,
//! `?`, the end of the body and unwinding alike, restores the current node
//! and, for a timed call, pops the frame and adds its time out of line.
//! Nothing calls out of the module but the clock, and nothing allocates
//! once the node exists but the timed-call stack when it grows.

use crate::clock;
use crate::site::{Site, SiteCache};
use crate::state::{with_thread, with_thread_in_place, with_thread_quietly};
use crate::thread_state::ThreadState;
use crate::timed_call::TimedFrame;
use crate::tree::NodeId;

/// Records one call of an instrumented function while it is alive.
///
/// Two words, and nothing here takes its address: the guard lives in
/// registers, and an untimed call gets no stack frame for it. What a timed
/// call needs at its exit waits on the thread's stack of timed calls.
#[must_use = "the call is timed until the guard is dropped"]
pub struct Guard {
    /// The node to make current again on exit; [`UNRECORDED`] when the call
    /// could not be recorded.
    parent: NodeId,
    /// For a timed call, the depth of the timed-call stack with this
    /// call's frame on top; 0 for an untimed call.
    timed_depth: u32,
}

/// Node value for a call that could not be recorded (thread teardown).
const UNRECORDED: NodeId = u32::MAX;

/// Enters the function of `site`, whose cache is `cache`. `self_type` names
/// the `Self` type of a method; it is called once, when the site registers.
///
/// Inlined into every instrumented function of an optimised build. Not in
/// an unoptimised one (debug assertions on, as cargo's dev profile has
/// them), where what it inlines would each keep stack slots of their own
/// in the caller's frame: a recursive interpreter built for `dev`
/// overflowed its stack with them.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline(never))]
pub fn enter(
    site: &'static Site,
    cache: &SiteCache,
    self_type: Option<fn() -> &'static str>,
) -> Guard {
    // With threads, the path almost every call takes calls nothing, but to
    // time a call: a call on it, however cold, would have every
    // instrumented function save and restore registers around its body.
    // Everything else is out of line, in one call whose answer is the
    // guard.
    #[cfg(not(one_thread))]
    return match crate::threads::with_own_if_plain(|thread| {
        let parent = thread.current;
        let (node, timed) = cached_entry(thread, site, cache, parent)?;
        thread.current = node;
        Some((parent, timed))
    }) {
        Some(Some((parent, timed))) => Guard {
            parent,
            timed_depth: if clock::TIMED && timed {
                begin_timed()
            } else {
                0
            },
        },
        _ => Guard::unpack(enter_otherwise(site, cache, self_type)),
    };
    #[cfg(one_thread)]
    Guard::unpack(enter_otherwise(site, cache, self_type))
}

impl Guard {
    /// The guard as one integer, which an out-of-line call returns in a
    /// register: a two-word struct would come back through memory, and
    /// every instrumented function would make a frame on the shadow stack
    /// (two reads and two writes of its pointer) for a call it rarely
    /// makes.
    #[inline(always)]
    fn pack(self) -> u64 {
        let packed = (u64::from(self.parent) << 32) | u64::from(self.timed_depth);
        std::mem::forget(self);
        packed
    }

    /// The guard [`Guard::pack`] gave `packed` for.
    #[inline(always)]
    fn unpack(packed: u64) -> Guard {
        Guard {
            parent: (packed >> 32) as NodeId,
            timed_depth: packed as u32,
        }
    }
}

/// [`enter`] of a call whose node is not in its site's cache, on a thread
/// that is new or asked for its record: out of line where there are
/// threads (see `enter`). Returns the guard packed ([`Guard::pack`]).
#[cfg_attr(one_thread, inline(always))]
#[cfg_attr(not(one_thread), inline(never))]
fn enter_otherwise(
    site: &'static Site,
    cache: &SiteCache,
    self_type: Option<fn() -> &'static str>,
) -> u64 {
    // The paths every call takes write two words in place; a path this
    // site has not just used may make a node, which moves memory, and is
    // recorded in a section of its own.
    let entered = with_thread_in_place(|thread| {
        let parent = thread.current;
        let hit = cached_entry(thread, site, cache, parent).or_else(|| {
            let function = site.id(self_type);
            thread.tree.enter_first_child(parent, function)
        });
        if let Some((node, _)) = hit {
            thread.current = node;
        }
        (parent, hit.map(|(_, timed)| timed))
    });
    let entered = match entered {
        Some((parent, Some(timed))) => Some((parent, timed)),
        Some((parent, None)) => with_thread(|thread| {
            let (node, timed) = unpack(enter_slow(thread, site, cache, self_type, parent));
            thread.current = node;
            (parent, timed)
        }),
        None => None,
    };
    let guard = match entered {
        Some((parent, timed)) => Guard {
            parent,
            timed_depth: if clock::TIMED && timed {
                begin_timed()
            } else {
                0
            },
        },
        None => Guard {
            parent: UNRECORDED,
            timed_depth: 0,
        },
    };
    guard.pack()
}

/// The first fast path: if the node the site's cache holds for `parent`
/// is the child of `parent` it should be, counts a call through it and
/// returns it with whether this call is to be timed. The cache is the
/// site's static with one tree, else the thread's own for the site's
/// function; either way a node found in it is of the site's function, so
/// that its parent is all there is to check.
#[inline(always)]
fn cached_entry(
    thread: &mut ThreadState,
    site: &'static Site,
    cache: &SiteCache,
    parent: NodeId,
) -> Option<(NodeId, bool)> {
    let _ = site;
    let cached = cache.get(parent);
    let timed = thread.tree.enter_cached(cached, parent, None)?;
    Some((cached, timed))
}

/// Enters a test function (`#[wasmprof::instrument(test)]`) at the root,
/// or under the test the harness said it runs (`harness.rs`).
///
/// A harness calls its tests from outside every instrumented call, so the
/// current node should be the root; but a test that failed by a trap (a
/// panic in wasm, caught by wasm-bindgen-test's JavaScript) left its frames
/// open, and the next test would be recorded inside it. Those frames never
/// returned: their calls stay counted and their time unmeasured, as for any
/// call that never returned.
#[inline(never)]
pub fn enter_test(
    site: &'static Site,
    cache: &SiteCache,
    self_type: Option<fn() -> &'static str>,
) -> Guard {
    with_thread(|thread| match thread.harness {
        Some((node, depth)) => {
            thread.current = node;
            abandon_above(thread, depth);
        }
        None => {
            thread.current = crate::tree::ROOT;
            abandon_above(thread, 0);
        }
    });
    enter(site, cache, self_type)
}

/// The entry of a timed call, out of line: push its frame, then read the
/// clock, last, so that the reading is as close to the body as can be.
/// Returns the stack's depth with the frame on it.
///
/// Nothing here is what a snapshot reads of a thread (its timed calls under
/// way are its own), so the state is used in place, in one go.
#[inline(never)]
pub(crate) fn begin_timed() -> u32 {
    // The stack's growth is the runtime's memory.
    let _untracked = crate::memory::untracked::Untracked::begin();
    with_thread_in_place(|thread| {
        thread.timed.push(TimedFrame {
            node: thread.current,
            timed_before: thread.timed_total,
            counted_before: crate::thread_state::counted::total(),
            start: 0.0,
            children: 0.0,
        });
        thread.timed_total += 1;
        let start = clock::now();
        if let Some(frame) = thread.timed.last_mut() {
            frame.start = start;
        }
        thread.timed.len() as u32
    })
    .unwrap_or(0)
}

/// A call through a path this site has not just used: find or create the
/// node, and remember it for the next call.
#[cold]
#[inline(never)]
fn enter_slow(
    thread: &mut ThreadState,
    site: &'static Site,
    cache: &SiteCache,
    self_type: Option<fn() -> &'static str>,
    parent: NodeId,
) -> u64 {
    let function = site.id(self_type);
    crate::calibration::calibrate(thread);
    let node = thread.tree.child(parent, function);
    // An overflow node stands for many parents: never a site's cache.
    if !thread.tree.is_overflow(node) {
        remember(cache, parent, node);
    }
    // One integer comes back in a register; a pair would need a stack
    // frame in every instrumented function.
    pack(node, thread.tree.enter(node))
}

/// Keeps `node` in the site's cache for `parent`.
fn remember(cache: &SiteCache, parent: NodeId, node: NodeId) {
    cache.set(parent, node);
}

#[inline(always)]
fn pack(node: NodeId, timed: bool) -> u64 {
    (u64::from(node) << 32) | u64::from(timed)
}

#[inline(always)]
fn unpack(packed: u64) -> (NodeId, bool) {
    ((packed >> 32) as NodeId, packed & 1 != 0)
}

impl Drop for Guard {
    // Out of line in an unoptimised build, as `enter`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline(never))]
    fn drop(&mut self) {
        if clock::TIMED && self.timed_depth != 0 {
            // Out of line: the untimed exit, the common one, stays a store.
            finish_timed(self.parent, self.timed_depth);
            return;
        }
        if !cfg!(one_thread) && self.parent == UNRECORDED {
            return;
        }
        with_thread_quietly(|thread| thread.current = self.parent);
    }
}

/// The exit of a timed call whose frame is at `depth`: read the clock, take
/// the clock's own cost and that of the count-only calls made within it
/// out, add the time, and make `parent` current again.
#[inline(never)]
fn finish_timed(parent: NodeId, depth: u32) {
    let end = clock::now();
    with_thread(|thread| {
        if let Some((frame, elapsed)) = end_frame(thread, depth, end) {
            let clock_cost = thread.clock_cost;
            // A call that made timed calls is long enough to time: they
            // were, and their caller must hold what they hold.
            let made_timed_calls = thread.timed_total - frame.timed_before > 1;
            let added = thread.tree.add_time(
                frame.node,
                elapsed,
                clock_cost,
                made_timed_calls,
                &mut thread.random,
            );
            if let Some(time) = added {
                credit_untimed_callers(thread, parent, time);
                if let Some(caller) = thread.timed.last_mut() {
                    caller.children += time;
                }
            }
        }
        thread.current = parent;
    });
}

/// Adds `time`, just measured for a call of a child of `node`, to `node`
/// and its ancestors up to the innermost timed call still running, when
/// `node`'s call was not timed (its calls were found too short to time,
/// and this one was not probed).
///
/// Those calls took at least as long as the timed call inside them, so
/// this is time they really spent, and without it a node would hold less
/// than its children: the rest of their time stays, as for any call not
/// timed, in the self time of the timed call around them.
fn credit_untimed_callers(thread: &mut ThreadState, node: NodeId, time: f64) {
    let timed = thread.timed.last().map_or(crate::tree::ROOT, |f| f.node);
    let mut at = node;
    while at != timed && at != crate::tree::ROOT {
        thread.tree.add_exact_time(at, time);
        match thread.tree.parent_of(at) {
            Some(parent) => at = parent,
            None => break,
        }
    }
}

/// Pops the timed frame at `depth`, given the clock reading `end` taken at
/// its exit, and returns it with its time: the span between its two reads,
/// less what the clock reads and the count-only probes made within it cost,
/// and never less than the time of the timed calls made within it.
/// `None` if the frame is gone (a trap or timeout cut the stack short).
///
/// Frames above `depth` belong to calls that never returned: a JavaScript
/// exception unwinds wasm frames without running their destructors. They
/// are dropped, so that this call's time is not taken for theirs.
pub(crate) fn end_frame(
    thread: &mut ThreadState,
    depth: u32,
    end: f64,
) -> Option<(TimedFrame, f64)> {
    abandon_above(thread, depth as usize);
    if thread.timed.len() != depth as usize {
        return None;
    }
    let frame = thread.timed.pop()?;
    // The span between this call's two reads holds one whole read, and two
    // for every timed call made within it.
    let nested = (thread.timed_total - frame.timed_before - 1) as f64;
    let counted = (crate::thread_state::counted::total() - frame.counted_before) as f64;
    let elapsed =
        end - frame.start - thread.clock_cost * (1.0 + 2.0 * nested) - thread.probe_cost * counted;
    Some((frame, elapsed.max(frame.children)))
}

/// Takes the timed frames above `depth` off the stack: calls that never
/// returned, as when a panic in wasm, caught by JavaScript (wasm-bindgen-
/// test's harness), skipped their guards. Each keeps the time of the timed
/// calls it made, which returned and were measured, and no more: when it
/// stopped is unknown. Its node is marked as a call that never returned.
pub(crate) fn abandon_above(thread: &mut ThreadState, depth: usize) {
    while thread.timed.len() > depth {
        let Some(frame) = thread.timed.pop() else {
            break;
        };
        thread.tree.mark_abandoned(frame.node);
        thread.tree.add_exact_time(frame.node, frame.children);
        if let Some(caller) = thread.timed.last_mut() {
            caller.children += frame.children;
        }
    }
}

#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests;
