//! The animation frames one thread has seen: each frame's duration, and
//! for the slowest what each call path did in that frame alone.

use wasmprof_wire::{FrameNode, SnapshotFrame, SnapshotFrames};

use crate::tree::Node;

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

    /// Forgets the frames so far.
    pub(crate) fn reset(&mut self) {
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

    /// A frame begins: the tree's counters (`nodes`) as they are now.
    pub(crate) fn begin(&mut self, nodes: &[Node]) {
        self.before.clear();
        self.before
            .extend(nodes.iter().map(|n| (n.calls, n.timed_calls, n.inclusive)));
        self.in_frame = true;
    }

    /// The frame that began at `start_ms` (the page's clock) has ended
    /// after `duration_ms`; `nodes` are the tree's counters now.
    pub(crate) fn end(&mut self, nodes: &[Node], start_ms: f64, duration_ms: f64) {
        if !self.in_frame {
            // Reset in between, or a frame whose beginning was not seen.
            return;
        }
        self.in_frame = false;
        let index = self.durations_ms.len() as u32;
        if index == 0 {
            self.first_start_ms = start_ms;
        }
        self.last_start_ms = start_ms;
        self.durations_ms.push(duration_ms as f32);
        if !self.is_worst(duration_ms) {
            return;
        }
        let ran: Vec<FrameNode> = (nodes.iter().enumerate())
            .filter_map(|(id, n)| {
                let (calls, timed_calls, inclusive) =
                    self.before.get(id).copied().unwrap_or((0, 0, 0.0));
                let calls = n.calls - calls.min(n.calls);
                (calls > 0).then(|| FrameNode {
                    node: id as u32,
                    calls,
                    timed_calls: n.timed_calls.saturating_sub(timed_calls),
                    inclusive_ms: (n.inclusive - inclusive).max(0.0),
                })
            })
            .collect();
        self.keep_worst(SnapshotFrame {
            index,
            start_ms,
            duration_ms,
            nodes: ran,
        });
    }
}
