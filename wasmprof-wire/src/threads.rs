//! The snapshot's threads section (version 9, header flag bit 4): what each
//! thread of a threaded program did, when more than one recorded calls.
//!
//! ```text
//! threads  n_threads:u32, then n_threads times:
//!            name_len:u32 name:[u8]
//!            read:u32                       (version 10)
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
//!
//! `read` says how the snapshot came by a thread's record ([`ThreadRead`]):
//! 0, the thread copied it itself between two calls when the snapshot
//! asked, or had finished; 1, it made no call while the snapshot waited,
//! and was read where it stood; 2, it had stopped in the middle of
//! recording a call (a trap, or the host stopping it there). Before
//! version 10 every thread reads as 0.

use crate::{DecodeError, NodeId, Reader};

/// One thread's share of the merged tree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SnapshotThread {
    /// The name the program gave it (`std::thread::Builder::name`), else
    /// `thread N` in the order threads first recorded a call.
    pub name: String,
    /// How the snapshot read it.
    pub read: ThreadRead,
    pub nodes: Vec<ThreadNode>,
}

/// How a snapshot came by one thread's record. Each thread records into a
/// state of its own with plain stores, so a snapshot does not lock it: it
/// asks, and the thread copies its record at its next call's entry or
/// exit; a thread that makes no call meanwhile is not writing, and is
/// read where it stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThreadRead {
    /// The thread copied its own record between two calls when the
    /// snapshot asked for it, or it had finished: exact.
    #[default]
    Answered,
    /// The thread made no call while the snapshot waited for it (idle in a
    /// pool, blocked, or in a long stretch of code that is not
    /// instrumented): read where it stood, exact. The calls it was inside
    /// are counted and marked as not returned.
    WhereItStood,
    /// The thread had stopped in the middle of recording a call (a trap,
    /// or the host stopped it there): read as it stood. The call it was
    /// recording may be counted without its time, or not counted.
    MidRecord,
}

impl ThreadRead {
    fn code(self) -> u32 {
        match self {
            ThreadRead::Answered => 0,
            ThreadRead::WhereItStood => 1,
            ThreadRead::MidRecord => 2,
        }
    }

    fn from_code(code: u32) -> Option<ThreadRead> {
        Some(match code {
            0 => ThreadRead::Answered,
            1 => ThreadRead::WhereItStood,
            2 => ThreadRead::MidRecord,
            _ => return None,
        })
    }
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
        out.extend_from_slice(&thread.read.code().to_le_bytes());
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
    version: u32,
) -> Result<Vec<SnapshotThread>, DecodeError> {
    let n = r.u32()? as usize;
    let mut threads = Vec::with_capacity(n.min(r.remaining() / 8));
    for _ in 0..n {
        let name = r.string()?;
        let read = if version >= 10 {
            let code = r.u32()?;
            ThreadRead::from_code(code).ok_or_else(|| {
                DecodeError(format!(
                    "snapshot thread {name} was read in an unknown way ({code})"
                ))
            })?
        } else {
            ThreadRead::Answered
        };
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
        threads.push(SnapshotThread { name, read, nodes });
    }
    Ok(threads)
}
