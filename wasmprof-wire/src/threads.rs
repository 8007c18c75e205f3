//! The snapshot's threads section (version 9, header flag bit 4): what each
//! thread of a threaded program did, when more than one recorded calls.
//!
//! ```text
//! threads  n_threads:u32, then n_threads times:
//!            name_len:u32 name:[u8]
//!            n_nodes:u32, then n_nodes times:
//!              node:u32 flags:u32 calls:u64 timed_calls:u64 inclusive_ms:f64
//! ```
//!
//! The snapshot's nodes are every thread's tree merged: each call path any
//! thread took is one node there. A thread's entries name those nodes and
//! give what the thread alone did on each, as a node does (its flags,
//! calls, timed calls and time), so a thread's own tree is the merged one
//! with the thread's counters. Only threads that recorded calls are listed.
//! The first is the one the snapshot was taken on (the main thread, once
//! the program is over), if it recorded any; the others are
//! the threads that had finished, in the order they finished, then those
//! still running (a pool's workers), in the order they were first seen.

use crate::{DecodeError, NodeId, Reader};

/// One thread's share of the merged tree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SnapshotThread {
    /// The name the program gave it (`std::thread::Builder::name`), else
    /// `thread N` in the order threads first recorded a call.
    pub name: String,
    pub nodes: Vec<ThreadNode>,
}

/// What one thread did on one call path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadNode {
    pub node: NodeId,
    pub flags: u32,
    pub calls: u64,
    pub timed_calls: u64,
    pub inclusive: f64,
}

pub(crate) fn encode(threads: &[SnapshotThread], out: &mut Vec<u8>) {
    out.extend_from_slice(&(threads.len() as u32).to_le_bytes());
    for thread in threads {
        out.extend_from_slice(&(thread.name.len() as u32).to_le_bytes());
        out.extend_from_slice(thread.name.as_bytes());
        out.extend_from_slice(&(thread.nodes.len() as u32).to_le_bytes());
        for node in &thread.nodes {
            out.extend_from_slice(&node.node.to_le_bytes());
            out.extend_from_slice(&node.flags.to_le_bytes());
            out.extend_from_slice(&node.calls.to_le_bytes());
            out.extend_from_slice(&node.timed_calls.to_le_bytes());
            out.extend_from_slice(&node.inclusive.to_le_bytes());
        }
    }
}

pub(crate) fn decode(
    r: &mut Reader<'_>,
    n_nodes: usize,
) -> Result<Vec<SnapshotThread>, DecodeError> {
    let n = r.u32()? as usize;
    let mut threads = Vec::with_capacity(n.min(r.remaining() / 8));
    for _ in 0..n {
        let name = r.string()?;
        let count = r.u32()? as usize;
        let mut nodes = Vec::with_capacity(count.min(r.remaining() / 32));
        for _ in 0..count {
            let node = r.u32()?;
            if node == 0 || node as usize >= n_nodes {
                return Err(DecodeError(format!(
                    "snapshot thread {name} names node {node}, which is not a call path"
                )));
            }
            nodes.push(ThreadNode {
                node,
                flags: r.u32()?,
                calls: r.u64()?,
                timed_calls: r.u64()?,
                inclusive: r.f64()?,
            });
        }
        threads.push(SnapshotThread { name, nodes });
    }
    Ok(threads)
}
