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

use wasmprof_wire::{FrameNode, SnapshotFrame, SnapshotFrames};

use crate::state::with_thread;

/// How many of the slowest frames keep their call trees.
pub(crate) const WORST_KEPT: usize = 10;

/// The frames of this thread (a page's main thread).
pub(crate) struct FrameRecord {
    first_start_ms: f64,
    last_start_ms: f64,
    durations_ms: Vec<f32>,
    /// The counters (calls, timed calls, time) of each node when the
    /// frame under way began; empty between frames.
    before: Vec<(u64, u64, f64)>,
    in_frame: bool,
    /// The slowest frames so far, slowest first.
    worst: Vec<SnapshotFrame>,
}

impl FrameRecord {
    pub(crate) const fn new() -> FrameRecord {
        FrameRecord {
            first_start_ms: 0.0,
            last_start_ms: 0.0,
            durations_ms: Vec::new(),
            before: Vec::new(),
            in_frame: false,
            worst: Vec::new(),
        }
    }

    fn reset(&mut self) {
        self.durations_ms.clear();
        self.worst.clear();
        self.in_frame = false;
    }

    /// What a snapshot carries: `None` before the first frame.
    pub(crate) fn snapshot(&self) -> Option<SnapshotFrames> {
        (!self.durations_ms.is_empty()).then(|| SnapshotFrames {
            first_start_ms: self.first_start_ms,
            last_start_ms: self.last_start_ms,
            durations_ms: self.durations_ms.clone(),
            worst: self.worst.clone(),
        })
    }

    /// Whether a frame of `duration_ms` is among the slowest kept.
    fn is_worst(&self, duration_ms: f64) -> bool {
        self.worst.len() < WORST_KEPT
            || self
                .worst
                .last()
                .is_some_and(|slowest_kept| duration_ms > slowest_kept.duration_ms)
    }

    fn keep_worst(&mut self, frame: SnapshotFrame) {
        let at = self
            .worst
            .partition_point(|kept| kept.duration_ms >= frame.duration_ms);
        self.worst.insert(at, frame);
        self.worst.truncate(WORST_KEPT);
    }
}

/// A frame begins: the tree's counters as they are now.
pub(crate) fn begin() {
    with_thread(|t| {
        let nodes = t.tree.nodes();
        let before = &mut t.frames.before;
        before.clear();
        before.extend(nodes.iter().map(|n| (n.calls, n.timed_calls, n.inclusive)));
        t.frames.in_frame = true;
    });
}

/// The frame that began at `start_ms` (the page's clock) has ended after
/// `duration_ms`.
pub(crate) fn end(start_ms: f64, duration_ms: f64) {
    with_thread(|t| {
        let frames = &mut t.frames;
        if !frames.in_frame {
            // Reset in between, or a frame whose beginning was not seen.
            return;
        }
        frames.in_frame = false;
        let index = frames.durations_ms.len() as u32;
        if index == 0 {
            frames.first_start_ms = start_ms;
        }
        frames.last_start_ms = start_ms;
        frames.durations_ms.push(duration_ms as f32);
        if !frames.is_worst(duration_ms) {
            return;
        }
        let nodes = t.tree.nodes();
        let ran: Vec<FrameNode> = (nodes.iter().enumerate())
            .filter_map(|(id, n)| {
                let (calls, timed_calls, inclusive) =
                    frames.before.get(id).copied().unwrap_or((0, 0, 0.0));
                let calls = n.calls - calls.min(n.calls);
                (calls > 0).then(|| FrameNode {
                    node: id as u32,
                    calls,
                    timed_calls: n.timed_calls.saturating_sub(timed_calls),
                    inclusive_ms: (n.inclusive - inclusive).max(0.0),
                })
            })
            .collect();
        frames.keep_worst(SnapshotFrame {
            index,
            start_ms,
            duration_ms,
            nodes: ran,
        });
    });
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
mod tests {
    use super::*;
    use crate::guard::enter;
    use crate::site::Site;
    use crate::snapshot::take;

    static DRAW: Site = Site::new("frames_tests", "draw", "src/frames.rs", 1);
    static ROW: Site = Site::new("frames_tests", "row", "src/frames.rs", 2);

    fn frame(start_ms: f64, duration_ms: f64, rows: u32) {
        begin();
        {
            let _draw = enter(&DRAW, None);
            for _ in 0..rows {
                let _row = enter(&ROW, None);
            }
        }
        end(start_ms, duration_ms);
    }

    #[test]
    fn every_frame_is_timed_and_the_slowest_keep_their_own_calls() {
        reset();
        for i in 0..(WORST_KEPT as u32 + 5) {
            // Frame 7 is the slowest, and lays out 40 rows; the others 3.
            let (duration, rows) = if i == 7 {
                (50.0, 40)
            } else {
                (f64::from(i), 3)
            };
            frame(16.0 * f64::from(i), duration, rows);
        }
        let frames = take().frames.expect("frames");
        assert_eq!(frames.durations_ms.len(), WORST_KEPT + 5);
        assert_eq!(frames.worst.len(), WORST_KEPT);
        let slowest = &frames.worst[0];
        assert_eq!((slowest.index, slowest.duration_ms), (7, 50.0));
        let calls: Vec<u64> = slowest.nodes.iter().map(|n| n.calls).collect();
        // draw once, row 40 times: that frame's calls alone.
        assert_eq!(calls, [1, 40]);
        assert!(
            frames
                .worst
                .windows(2)
                .all(|w| w[0].duration_ms >= w[1].duration_ms)
        );
        reset();
        assert!(take().frames.is_none());
    }
}
