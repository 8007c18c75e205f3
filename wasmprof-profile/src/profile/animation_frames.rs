//! The animation frames of a page run: how many, how fast, how long each
//! took, and the slowest frames' own calls (exact counts and times of one
//! frame). Made from the snapshot's frames section.

use serde::{Deserialize, Serialize};
use wasmprof_wire::SnapshotFrames;

const NANOS_PER_MS: f64 = 1e6;

/// The frames of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frames {
    /// Animation-frame callbacks the page ran.
    pub count: u64,
    /// From the first frame's start to the last one's.
    pub span_nanos: f64,
    /// How long a frame's callback took: its distribution.
    pub median_nanos: f64,
    /// Its 95th percentile.
    pub p95_nanos: f64,
    /// Its 99th percentile.
    pub p99_nanos: f64,
    /// The longest frame's time.
    pub worst_nanos: f64,
    /// The slowest frames, slowest first, each with its own calls.
    pub worst: Vec<Frame>,
}

/// One frame and what ran in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Its number, from 0.
    pub index: u64,
    /// When it started, after the first frame's start.
    pub start_nanos: f64,
    /// How long its callback ran.
    pub duration_nanos: f64,
    /// The call paths that ran in it, with what they did in it alone.
    pub calls: Vec<FrameCalls>,
}

/// What one call path (a node of the profile) did in one frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FrameCalls {
    /// The call path: an index into [`super::Profile::nodes`].
    pub node: usize,
    /// Its calls in the frame.
    pub calls: u64,
    /// Their time in the frame, callees included.
    pub inclusive_nanos: f64,
}

impl Frames {
    /// Frames per second over the run's frames; `None` for fewer than two.
    pub fn rate_hz(&self) -> Option<f64> {
        (self.count >= 2 && self.span_nanos > 0.0)
            .then(|| (self.count - 1) as f64 / (self.span_nanos / 1e9))
    }

    /// Every frame's calls name a call path of the profile.
    pub(crate) fn validate(&self, n_nodes: usize) -> Result<(), String> {
        for frame in &self.worst {
            if let Some(bad) = frame
                .calls
                .iter()
                .find(|c| c.node == 0 || c.node >= n_nodes)
            {
                return Err(format!(
                    "frame {} names node {}, which is not a call path",
                    frame.index, bad.node
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn from_snapshot(frames: &SnapshotFrames) -> Frames {
        let mut sorted: Vec<f64> = frames.durations_ms.iter().map(|&d| f64::from(d)).collect();
        sorted.sort_by(f64::total_cmp);
        let at = |quantile: f64| nearest_rank(&sorted, quantile) * NANOS_PER_MS;
        Frames {
            count: sorted.len() as u64,
            span_nanos: (frames.last_start_ms - frames.first_start_ms).max(0.0) * NANOS_PER_MS,
            median_nanos: at(0.5),
            p95_nanos: at(0.95),
            p99_nanos: at(0.99),
            worst_nanos: sorted.last().copied().unwrap_or(0.0) * NANOS_PER_MS,
            worst: frames
                .worst
                .iter()
                .map(|frame| Frame {
                    index: u64::from(frame.index),
                    start_nanos: (frame.start_ms - frames.first_start_ms).max(0.0) * NANOS_PER_MS,
                    duration_nanos: frame.duration_ms * NANOS_PER_MS,
                    calls: frame
                        .nodes
                        .iter()
                        .map(|n| FrameCalls {
                            node: n.node as usize,
                            calls: n.calls,
                            inclusive_nanos: n.inclusive_ms * NANOS_PER_MS,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// The smallest value at least `quantile` of `sorted` are at or below.
fn nearest_rank(sorted: &[f64], quantile: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (quantile * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmprof_wire::{FrameNode, SnapshotFrame};

    #[test]
    fn the_distribution_and_rate_come_from_every_frame() {
        // 100 frames, 16 ms apart: 99 of 1 ms and one of 50 ms.
        let mut durations_ms = vec![1.0_f32; 100];
        durations_ms[40] = 50.0;
        let snapshot = SnapshotFrames {
            first_start_ms: 1000.0,
            last_start_ms: 1000.0 + 99.0 * 16.0,
            durations_ms,
            worst: vec![SnapshotFrame {
                index: 40,
                start_ms: 1000.0 + 40.0 * 16.0,
                duration_ms: 50.0,
                nodes: vec![FrameNode {
                    node: 3,
                    calls: 40,
                    timed_calls: 40,
                    inclusive_ms: 48.0,
                }],
            }],
        };
        let frames = Frames::from_snapshot(&snapshot);
        assert_eq!(frames.count, 100);
        assert_eq!(frames.median_nanos, 1e6);
        assert_eq!(frames.p95_nanos, 1e6);
        assert_eq!(frames.p99_nanos, 1e6);
        assert_eq!(frames.worst_nanos, 50e6);
        let rate = frames.rate_hz().unwrap();
        assert!((rate - 62.5).abs() < 1e-9, "{rate}");
        let worst = &frames.worst[0];
        assert_eq!((worst.index, worst.start_nanos), (40, 640e6));
        assert_eq!(worst.calls[0].calls, 40);
    }

    #[test]
    fn nearest_rank_quantiles() {
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(nearest_rank(&sorted, 0.5), 5.0);
        assert_eq!(nearest_rank(&sorted, 0.95), 10.0);
        assert_eq!(nearest_rank(&[], 0.5), 0.0);
        assert_eq!(nearest_rank(&[7.0], 0.0), 7.0);
    }
}
