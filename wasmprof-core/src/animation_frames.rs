//! Animation frames, as a page host marks them: it calls
//! `__wasmprof_frame_begin` before a `requestAnimationFrame` callback and
//! `__wasmprof_frame_end` after it. Each frame's duration is kept, and for
//! the slowest frames what each call path did in that frame alone: the
//! tree's counters after the frame less those before, exact counts and
//! times of one frame, which no sampler can give.
//!
//! The counters before a frame are copied into a buffer reused from frame
//! to frame; the cost is a copy of the tree's counters per frame.

// Only a page host calls these, through the exports of an instrumented
// wasm build; elsewhere only the tests do.
#![cfg_attr(not(all(target_family = "wasm", wasmprof_enabled)), allow(dead_code))]

pub(crate) mod record;

use crate::state::with_thread;

/// A frame begins: the tree's counters as they are now.
pub(crate) fn begin() {
    with_thread(|t| t.frames.begin(t.tree.nodes()));
}

/// The frame that began at `start_ms` (the page's clock) has ended after
/// `duration_ms`.
pub(crate) fn end(start_ms: f64, duration_ms: f64) {
    with_thread(|t| t.frames.end(t.tree.nodes(), start_ms, duration_ms));
}

/// Forgets the frames so far: a recording window opens.
pub(crate) fn reset() {
    with_thread(|t| t.frames.reset());
}

/// The export the page host calls before an animation frame's callback.
#[cfg(all(target_family = "wasm", wasmprof_enabled))]
#[unsafe(no_mangle)]
pub extern "C" fn __wasmprof_frame_begin() {
    begin();
}

/// The export the page host calls after an animation frame's callback.
#[cfg(all(target_family = "wasm", wasmprof_enabled))]
#[unsafe(no_mangle)]
pub extern "C" fn __wasmprof_frame_end(start_ms: f64, duration_ms: f64) {
    end(start_ms, duration_ms);
}

/// The export the page host calls when a recording window opens.
#[cfg(all(target_family = "wasm", wasmprof_enabled))]
#[unsafe(no_mangle)]
pub extern "C" fn __wasmprof_frames_reset() {
    reset();
}

#[cfg(test)]
mod tests;
