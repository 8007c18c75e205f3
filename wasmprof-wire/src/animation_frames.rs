//! The snapshot's frames section (version 8, header flag bit 3): the
//! animation frames a page host marked, each frame's duration, and the
//! slowest frames' own call trees, when the page ran any.
//!
//! ```text
//! frames   first_start_ms:f64 last_start_ms:f64
//!          n_durations:u32, then n_durations times: duration_ms:f32
//!          n_worst:u32, then n_worst times:
//!            index:u32 start_ms:f64 duration_ms:f64
//!            n_nodes:u32, then n_nodes times:
//!              node:u32 calls:u64 timed_calls:u64 inclusive_ms:f64
//! ```
//!
//! Start times are the page's clock (`performance.now()`). A worst frame's
//! nodes are the call paths that ran in it, with what they did in it alone:
//! the tree's counters after the frame less those before.

use crate::{DecodeError, NodeId, Reader};

/// The frames of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SnapshotFrames {
    pub first_start_ms: f64,
    pub last_start_ms: f64,
    /// Every frame's duration, in order.
    pub durations_ms: Vec<f32>,
    /// The slowest frames, slowest first.
    pub worst: Vec<SnapshotFrame>,
}

/// One frame and the calls made in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SnapshotFrame {
    /// The frame's number, from 0.
    pub index: u32,
    pub start_ms: f64,
    pub duration_ms: f64,
    pub nodes: Vec<FrameNode>,
}

/// What one call path did in a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameNode {
    pub node: NodeId,
    pub calls: u64,
    pub timed_calls: u64,
    pub inclusive_ms: f64,
}

impl SnapshotFrames {
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.first_start_ms.to_le_bytes());
        out.extend_from_slice(&self.last_start_ms.to_le_bytes());
        out.extend_from_slice(&(self.durations_ms.len() as u32).to_le_bytes());
        for duration in &self.durations_ms {
            out.extend_from_slice(&duration.to_le_bytes());
        }
        out.extend_from_slice(&(self.worst.len() as u32).to_le_bytes());
        for frame in &self.worst {
            out.extend_from_slice(&frame.index.to_le_bytes());
            out.extend_from_slice(&frame.start_ms.to_le_bytes());
            out.extend_from_slice(&frame.duration_ms.to_le_bytes());
            out.extend_from_slice(&(frame.nodes.len() as u32).to_le_bytes());
            for node in &frame.nodes {
                out.extend_from_slice(&node.node.to_le_bytes());
                out.extend_from_slice(&node.calls.to_le_bytes());
                out.extend_from_slice(&node.timed_calls.to_le_bytes());
                out.extend_from_slice(&node.inclusive_ms.to_le_bytes());
            }
        }
    }

    pub(crate) fn decode(r: &mut Reader<'_>, n_nodes: usize) -> Result<Self, DecodeError> {
        let first_start_ms = r.f64()?;
        let last_start_ms = r.f64()?;
        let n = r.u32()? as usize;
        let mut durations_ms = Vec::with_capacity(n.min(r.remaining() / 4));
        for _ in 0..n {
            durations_ms.push(f32::from_bits(r.u32()?));
        }
        let n_worst = r.u32()? as usize;
        let mut worst = Vec::with_capacity(n_worst.min(r.remaining() / 24));
        for _ in 0..n_worst {
            let index = r.u32()?;
            let start_ms = r.f64()?;
            let duration_ms = r.f64()?;
            let n = r.u32()? as usize;
            let mut nodes = Vec::with_capacity(n.min(r.remaining() / 28));
            for _ in 0..n {
                let node = r.u32()?;
                if node as usize >= n_nodes {
                    return Err(DecodeError(format!(
                        "snapshot frame {index} names node {node}, which does not exist"
                    )));
                }
                nodes.push(FrameNode {
                    node,
                    calls: r.u64()?,
                    timed_calls: r.u64()?,
                    inclusive_ms: r.f64()?,
                });
            }
            worst.push(SnapshotFrame {
                index,
                start_ms,
                duration_ms,
                nodes,
            });
        }
        Ok(SnapshotFrames {
            first_start_ms,
            last_start_ms,
            durations_ms,
            worst,
        })
    }
}
