//! The snapshot's memory section (version 6, header flag bit 1): what
//! each call path allocated, freed and holds, when the build recorded
//! memory (`--memory`).
//!
//! ```text
//! memory   first_pages:u32 pages:u32 live_blocks:u64 live_bytes:u64
//!          peak_blocks:u64 peak_bytes:u64 runtime_bytes:u64
//!          failed_node:u32 failed_bytes:u64
//!          n_paths:u32, then n_paths times:
//!            node:u32 allocs:u64 alloc_bytes:u64 frees:u64 freed_bytes:u64
//!            reallocs:u64 live_blocks:u64 live_bytes:u64 peak_blocks:u64
//!            peak_bytes:u64 grows:u64 grown_pages:u64
//!          n_grows:u32 grows_dropped:u64, then n_grows times:
//!            node:u32 pages_before:u32 pages_after:u32 request:u64
//! ```
//!
//! `failed_node` is `u32::MAX` when no allocation failed. A path's `live`
//! figures are the blocks it allocated that are still live; its `frees`
//! the blocks freed while it was current. `peak_*` are what the path held
//! when the live bytes of the whole program were highest.

use crate::{DecodeError, NodeId, Reader};

/// Memory per call path, as the runtime's recording allocator kept it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SnapshotMemory {
    /// Linear memory's size in 64 KiB pages before the program's first
    /// allocation that grew it (the size at the end if none did), and when
    /// the snapshot was taken (0 outside WebAssembly).
    pub first_pages: u32,
    pub pages: u32,
    pub live_blocks: u64,
    pub live_bytes: u64,
    /// The highest the live bytes ever were, and the blocks then.
    pub peak_blocks: u64,
    pub peak_bytes: u64,
    /// What the profiler itself holds, charged to no path.
    pub runtime_bytes: u64,
    /// The first allocation the allocator could not serve.
    pub failed: Option<FailedAlloc>,
    /// Every path that did something, in node order.
    pub paths: Vec<PathMemory>,
    pub grows: Vec<MemoryGrow>,
    /// Growths not kept one by one (past the runtime's limit); they are in
    /// their paths' counts.
    pub grows_dropped: u64,
}

/// What one call path did with memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathMemory {
    pub node: NodeId,
    pub allocs: u64,
    pub alloc_bytes: u64,
    pub frees: u64,
    pub freed_bytes: u64,
    pub reallocs: u64,
    pub live_blocks: u64,
    pub live_bytes: u64,
    pub peak_blocks: u64,
    pub peak_bytes: u64,
    pub grows: u64,
    pub grown_pages: u64,
}

/// One growth of linear memory and the allocation that caused it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryGrow {
    pub node: NodeId,
    pub pages_before: u32,
    pub pages_after: u32,
    /// Bytes the allocation asked for.
    pub request: u64,
}

/// An allocation that failed: the path and the size asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailedAlloc {
    pub node: NodeId,
    pub bytes: u64,
}

impl PathMemory {
    fn words(&self) -> [u64; 11] {
        [
            self.allocs,
            self.alloc_bytes,
            self.frees,
            self.freed_bytes,
            self.reallocs,
            self.live_blocks,
            self.live_bytes,
            self.peak_blocks,
            self.peak_bytes,
            self.grows,
            self.grown_pages,
        ]
    }
}

impl PathMemory {
    /// Adds what `other` did on the same path.
    fn add(&mut self, other: &PathMemory) {
        self.allocs += other.allocs;
        self.alloc_bytes += other.alloc_bytes;
        self.frees += other.frees;
        self.freed_bytes += other.freed_bytes;
        self.reallocs += other.reallocs;
        self.live_blocks += other.live_blocks;
        self.live_bytes += other.live_bytes;
        self.peak_blocks += other.peak_blocks;
        self.peak_bytes += other.peak_bytes;
        self.grows += other.grows;
        self.grown_pages += other.grown_pages;
    }
}

impl SnapshotMemory {
    /// Adds the memory of another instance of the same program (an HTTP
    /// handler's next request), its nodes renumbered by `node_map`.
    ///
    /// Instances have memories of their own, so their peaks do not add:
    /// the merged peak is the highest instance's, with what its paths held
    /// at it. Everything else adds up, live bytes included (what each
    /// instance still held when it was done).
    pub fn merge_from(&mut self, other: &SnapshotMemory, node_map: impl Fn(NodeId) -> NodeId) {
        let other_peak_wins = other.peak_bytes > self.peak_bytes;
        if other_peak_wins {
            for path in &mut self.paths {
                path.peak_blocks = 0;
                path.peak_bytes = 0;
            }
            self.peak_blocks = other.peak_blocks;
            self.peak_bytes = other.peak_bytes;
        }
        for path in &other.paths {
            let mut path = PathMemory {
                node: node_map(path.node),
                ..*path
            };
            if !other_peak_wins {
                path.peak_blocks = 0;
                path.peak_bytes = 0;
            }
            match self.paths.iter_mut().find(|p| p.node == path.node) {
                Some(same) => same.add(&path),
                None => self.paths.push(path),
            }
        }
        self.paths.sort_by_key(|p| p.node);
        self.live_blocks += other.live_blocks;
        self.live_bytes += other.live_bytes;
        self.first_pages = self.first_pages.max(other.first_pages);
        self.pages = self.pages.max(other.pages);
        self.runtime_bytes = self.runtime_bytes.max(other.runtime_bytes);
        self.grows.extend(other.grows.iter().map(|g| MemoryGrow {
            node: node_map(g.node),
            ..*g
        }));
        self.grows_dropped += other.grows_dropped;
        if self.failed.is_none() {
            self.failed = other.failed.map(|f| FailedAlloc {
                node: node_map(f.node),
                ..f
            });
        }
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.first_pages.to_le_bytes());
        out.extend_from_slice(&self.pages.to_le_bytes());
        for word in [
            self.live_blocks,
            self.live_bytes,
            self.peak_blocks,
            self.peak_bytes,
            self.runtime_bytes,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        let (failed_node, failed_bytes) = self.failed.map_or((u32::MAX, 0), |f| (f.node, f.bytes));
        out.extend_from_slice(&failed_node.to_le_bytes());
        out.extend_from_slice(&failed_bytes.to_le_bytes());
        out.extend_from_slice(&(self.paths.len() as u32).to_le_bytes());
        for path in &self.paths {
            out.extend_from_slice(&path.node.to_le_bytes());
            for word in path.words() {
                out.extend_from_slice(&word.to_le_bytes());
            }
        }
        out.extend_from_slice(&(self.grows.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.grows_dropped.to_le_bytes());
        for grow in &self.grows {
            for word in [grow.node, grow.pages_before, grow.pages_after] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(&grow.request.to_le_bytes());
        }
    }

    /// Reads the section; every node it names must be one of `n_nodes`.
    pub(crate) fn decode(r: &mut Reader<'_>, n_nodes: usize) -> Result<Self, DecodeError> {
        let node = |node: NodeId| {
            if (node as usize) < n_nodes.max(1) {
                Ok(node)
            } else {
                Err(DecodeError(format!(
                    "snapshot memory record names node {node}, which does not exist"
                )))
            }
        };
        let first_pages = r.u32()?;
        let pages = r.u32()?;
        let [
            live_blocks,
            live_bytes,
            peak_blocks,
            peak_bytes,
            runtime_bytes,
        ] = [r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?];
        let failed = match (r.u32()?, r.u64()?) {
            (u32::MAX, _) => None,
            (at, bytes) => Some(FailedAlloc {
                node: node(at)?,
                bytes,
            }),
        };
        let n_paths = r.u32()? as usize;
        let mut paths = Vec::with_capacity(n_paths.min(r.remaining() / 92));
        for _ in 0..n_paths {
            let at = node(r.u32()?)?;
            let mut w = [0u64; 11];
            for word in &mut w {
                *word = r.u64()?;
            }
            paths.push(PathMemory {
                node: at,
                allocs: w[0],
                alloc_bytes: w[1],
                frees: w[2],
                freed_bytes: w[3],
                reallocs: w[4],
                live_blocks: w[5],
                live_bytes: w[6],
                peak_blocks: w[7],
                peak_bytes: w[8],
                grows: w[9],
                grown_pages: w[10],
            });
        }
        let n_grows = r.u32()? as usize;
        let grows_dropped = r.u64()?;
        let mut grows = Vec::with_capacity(n_grows.min(r.remaining() / 20));
        for _ in 0..n_grows {
            grows.push(MemoryGrow {
                node: node(r.u32()?)?,
                pages_before: r.u32()?,
                pages_after: r.u32()?,
                request: r.u64()?,
            });
        }
        Ok(SnapshotMemory {
            first_pages,
            pages,
            live_blocks,
            live_bytes,
            peak_blocks,
            peak_bytes,
            runtime_bytes,
            failed,
            paths,
            grows,
            grows_dropped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(node: NodeId, bytes: u64, peak: u64) -> PathMemory {
        PathMemory {
            node,
            allocs: 1,
            alloc_bytes: bytes,
            live_blocks: 1,
            live_bytes: bytes,
            peak_blocks: u64::from(peak > 0),
            peak_bytes: peak,
            ..PathMemory::default()
        }
    }

    fn memory(paths: Vec<PathMemory>) -> SnapshotMemory {
        let live: u64 = paths.iter().map(|p| p.live_bytes).sum();
        let peak: u64 = paths.iter().map(|p| p.peak_bytes).sum();
        SnapshotMemory {
            live_blocks: paths.len() as u64,
            live_bytes: live,
            peak_blocks: paths.iter().map(|p| p.peak_blocks).sum(),
            peak_bytes: peak,
            paths,
            ..SnapshotMemory::default()
        }
    }

    #[test]
    fn instances_add_their_work_and_keep_the_highest_peak_with_its_paths() {
        let mut merged = SnapshotMemory::default();
        merged.merge_from(&memory(vec![path(1, 10, 10), path(2, 5, 5)]), |n| n);
        // The second instance's node 1 is the first's 2; its peak is higher.
        merged.merge_from(&memory(vec![path(1, 40, 40)]), |n| n + 1);
        assert_eq!((merged.live_bytes, merged.live_blocks), (55, 3));
        assert_eq!(merged.peak_bytes, 40);
        let peaks: Vec<(NodeId, u64, u64)> = merged
            .paths
            .iter()
            .map(|p| (p.node, p.alloc_bytes, p.peak_bytes))
            .collect();
        assert_eq!(peaks, [(1, 10, 0), (2, 45, 40)]);
        // A lower peak afterwards changes nothing of it.
        merged.merge_from(&memory(vec![path(1, 8, 8)]), |n| n);
        assert_eq!(merged.peak_bytes, 40);
        assert_eq!(merged.paths[0].peak_bytes, 0);
        assert_eq!(merged.paths[0].alloc_bytes, 18);
    }
}
