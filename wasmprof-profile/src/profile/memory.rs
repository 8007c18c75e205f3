//! Memory per call path, as a profile file carries it (`--memory`).
//!
//! Figures are exact: the runtime's recording allocator saw every
//! allocation, reallocation and free. A reallocation counts as the free of
//! the old block and the allocation of the new one (and as a
//! reallocation), so over all paths, allocations less frees are the blocks
//! live at the end, and the same holds for bytes.

use serde::{Deserialize, Serialize};
use wasmprof_wire::{self as wire, NodeId, SnapshotMemory};

/// What the program did with memory, per call path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryProfile {
    /// Blocks still live when the profile was taken.
    pub live_blocks: u64,
    /// Their bytes.
    pub live_bytes: u64,
    /// The blocks live when the live bytes were at their highest.
    pub peak_blocks: u64,
    /// The highest the live bytes ever were.
    pub peak_bytes: u64,
    /// Linear memory's size in 64 KiB pages before the program's first
    /// allocation that grew it (the size at the end if none did; 0
    /// outside WebAssembly).
    pub first_pages: u32,
    /// Linear memory's size in pages at the end.
    pub pages: u32,
    /// What the profiler itself held at the end, charged to no path.
    #[serde(default)]
    pub runtime_bytes: u64,
    /// Every path that allocated, freed or grew memory, in node order.
    pub paths: Vec<PathMemory>,
    /// Each growth of linear memory and the path whose allocation caused
    /// it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grows: Vec<MemoryGrow>,
    /// Growths not kept one by one (there were too many); they are in
    /// their paths' counts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grows_dropped: u64,
    /// The first allocation the allocator could not serve: the program
    /// ran out of memory there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<FailedAlloc>,
}

/// What one call path (node) did with memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathMemory {
    /// The call path: an index into [`super::Profile::nodes`].
    pub node: usize,
    /// Blocks allocated here, reallocations' new blocks included.
    pub allocs: u64,
    /// Their bytes.
    pub alloc_bytes: u64,
    /// Blocks freed while this path was current, reallocations' old
    /// blocks included, whoever allocated them.
    pub frees: u64,
    /// Their bytes.
    pub freed_bytes: u64,
    /// Reallocations made here.
    pub reallocs: u64,
    /// Blocks allocated here that were still live at the end, wherever
    /// they are held.
    pub live_blocks: u64,
    /// Their bytes.
    pub live_bytes: u64,
    /// The blocks this path held when the whole program's live bytes
    /// peaked.
    pub peak_blocks: u64,
    /// Their bytes.
    pub peak_bytes: u64,
    /// Growths of linear memory its allocations caused.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grows: u64,
    /// The pages those growths added.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grown_pages: u64,
}

/// One growth of linear memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryGrow {
    /// The call path whose allocation grew memory.
    pub node: usize,
    /// Linear memory's size in pages before.
    pub pages_before: u32,
    /// And after.
    pub pages_after: u32,
    /// Bytes the allocation that caused it asked for.
    pub request: u64,
}

/// An allocation the allocator could not serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedAlloc {
    /// The call path that asked.
    pub node: usize,
    /// The bytes it asked for.
    pub bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Which figure a memory view weighs paths by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryWeight {
    /// Bytes allocated.
    AllocBytes,
    /// Blocks allocated.
    Allocs,
    /// Bytes still live at the end.
    LiveBytes,
    /// Bytes held at the peak.
    PeakBytes,
}

impl PathMemory {
    /// The figure `weight` names.
    pub fn weight(&self, weight: MemoryWeight) -> u64 {
        match weight {
            MemoryWeight::AllocBytes => self.alloc_bytes,
            MemoryWeight::Allocs => self.allocs,
            MemoryWeight::LiveBytes => self.live_bytes,
            MemoryWeight::PeakBytes => self.peak_bytes,
        }
    }

    /// The figures of `other` added to these (the node is kept).
    pub fn add(&mut self, other: &PathMemory) {
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

impl MemoryProfile {
    /// Each node's record, by node index (zeros where it has none).
    pub fn by_node(&self, n_nodes: usize) -> Vec<PathMemory> {
        let mut out = vec![PathMemory::default(); n_nodes];
        for path in &self.paths {
            if let Some(slot) = out.get_mut(path.node) {
                slot.add(path);
                slot.node = path.node;
            }
        }
        out
    }

    /// The sums over all paths.
    pub fn totals(&self) -> PathMemory {
        let mut total = PathMemory::default();
        for path in &self.paths {
            total.add(path);
        }
        total
    }
}

impl MemoryProfile {
    /// The same figures with the nodes renumbered by `map`: paths that end
    /// up on one node are added together (a node taken out of the tree
    /// gives its figures to the ancestor that stays).
    pub fn renumber(&mut self, map: impl Fn(usize) -> usize) {
        let mut merged: Vec<PathMemory> = Vec::with_capacity(self.paths.len());
        for path in &self.paths {
            let node = map(path.node);
            match merged.iter_mut().find(|p| p.node == node) {
                Some(same) => same.add(path),
                None => merged.push(PathMemory { node, ..*path }),
            }
        }
        merged.sort_by_key(|p| p.node);
        self.paths = merged;
        for grow in &mut self.grows {
            grow.node = map(grow.node);
        }
        if let Some(failed) = &mut self.failed {
            failed.node = map(failed.node);
        }
    }

    /// The part of these figures under some nodes only (one test's), the
    /// nodes renumbered by `map` (`None`: left out). Its totals are its
    /// paths': what it holds live, and what it held at the program's peak.
    pub fn restricted(&self, map: impl Fn(usize) -> Option<usize>) -> MemoryProfile {
        let paths: Vec<PathMemory> = self
            .paths
            .iter()
            .filter_map(|p| {
                Some(PathMemory {
                    node: map(p.node)?,
                    ..*p
                })
            })
            .collect();
        let mut part = MemoryProfile {
            paths,
            grows: self
                .grows
                .iter()
                .filter_map(|g| {
                    Some(MemoryGrow {
                        node: map(g.node)?,
                        ..*g
                    })
                })
                .collect(),
            failed: self.failed.and_then(|f| {
                Some(FailedAlloc {
                    node: map(f.node)?,
                    ..f
                })
            }),
            grows_dropped: 0,
            ..self.clone()
        };
        let totals = part.totals();
        part.live_blocks = totals.live_blocks;
        part.live_bytes = totals.live_bytes;
        part.peak_blocks = totals.peak_blocks;
        part.peak_bytes = totals.peak_bytes;
        part
    }

    /// Adds another run's memory, its nodes renumbered by `node_map`.
    ///
    /// Runs are separate programs, as a server's instances are, so this is
    /// the rule [`wasmprof_wire::SnapshotMemory::merge_from`] keeps for
    /// those, applied here and nowhere else: the merged peak is the
    /// highest run's, with what that run's paths held at it, and
    /// everything else adds up, live bytes included (each run's leaks).
    pub fn merge_from(&mut self, other: &MemoryProfile, node_map: &[usize]) {
        let mut merged = self.to_book();
        merged.merge_from(&other.to_book(), |node| {
            wire_node(node_map.get(node as usize).copied().unwrap_or(0))
        });
        *self = MemoryProfile::from(&merged);
    }

    /// These figures in the wire format's book, whose nodes are `u32`.
    fn to_book(&self) -> SnapshotMemory {
        SnapshotMemory {
            first_pages: self.first_pages,
            pages: self.pages,
            live_blocks: self.live_blocks,
            live_bytes: self.live_bytes,
            peak_blocks: self.peak_blocks,
            peak_bytes: self.peak_bytes,
            runtime_bytes: self.runtime_bytes,
            failed: self.failed.map(|f| wire::FailedAlloc {
                node: wire_node(f.node),
                bytes: f.bytes,
            }),
            paths: self
                .paths
                .iter()
                .map(|p| wire::PathMemory {
                    node: wire_node(p.node),
                    allocs: p.allocs,
                    alloc_bytes: p.alloc_bytes,
                    frees: p.frees,
                    freed_bytes: p.freed_bytes,
                    reallocs: p.reallocs,
                    live_blocks: p.live_blocks,
                    live_bytes: p.live_bytes,
                    peak_blocks: p.peak_blocks,
                    peak_bytes: p.peak_bytes,
                    grows: p.grows,
                    grown_pages: p.grown_pages,
                })
                .collect(),
            grows: self
                .grows
                .iter()
                .map(|g| wire::MemoryGrow {
                    node: wire_node(g.node),
                    pages_before: g.pages_before,
                    pages_after: g.pages_after,
                    request: g.request,
                })
                .collect(),
            grows_dropped: self.grows_dropped,
        }
    }
}

/// A node's index as the wire numbers nodes. A profile's nodes came from
/// snapshots, which number them in `u32`, and a merge cannot make 4
/// billion of them, so the saturation never happens in practice.
fn wire_node(node: usize) -> NodeId {
    NodeId::try_from(node).unwrap_or(NodeId::MAX)
}

/// The snapshot's memory section as the profile carries it.
impl From<&SnapshotMemory> for MemoryProfile {
    fn from(memory: &SnapshotMemory) -> Self {
        MemoryProfile {
            live_blocks: memory.live_blocks,
            live_bytes: memory.live_bytes,
            peak_blocks: memory.peak_blocks,
            peak_bytes: memory.peak_bytes,
            first_pages: memory.first_pages,
            pages: memory.pages,
            runtime_bytes: memory.runtime_bytes,
            paths: memory
                .paths
                .iter()
                .map(|p| PathMemory {
                    node: p.node as usize,
                    allocs: p.allocs,
                    alloc_bytes: p.alloc_bytes,
                    frees: p.frees,
                    freed_bytes: p.freed_bytes,
                    reallocs: p.reallocs,
                    live_blocks: p.live_blocks,
                    live_bytes: p.live_bytes,
                    peak_blocks: p.peak_blocks,
                    peak_bytes: p.peak_bytes,
                    grows: p.grows,
                    grown_pages: p.grown_pages,
                })
                .collect(),
            grows: memory
                .grows
                .iter()
                .map(|g| MemoryGrow {
                    node: g.node as usize,
                    pages_before: g.pages_before,
                    pages_after: g.pages_after,
                    request: g.request,
                })
                .collect(),
            grows_dropped: memory.grows_dropped,
            failed: memory.failed.map(|f| FailedAlloc {
                node: f.node as usize,
                bytes: f.bytes,
            }),
        }
    }
}

impl MemoryProfile {
    /// Checks that every node named exists, and that the paths' figures
    /// add up to the totals, as the recording keeps them.
    pub(crate) fn validate(&self, n_nodes: usize) -> Result<(), String> {
        let nodes = self
            .paths
            .iter()
            .map(|p| p.node)
            .chain(self.grows.iter().map(|g| g.node))
            .chain(self.failed.iter().map(|f| f.node));
        for node in nodes {
            if node >= n_nodes {
                return Err(format!(
                    "its memory figures name node {node}, but there are only {n_nodes} nodes"
                ));
            }
        }
        // (Allocations less frees are the live bytes of a whole run, but
        // not of one test's part of it, which may free what others made.)
        let totals = self.totals();
        if totals.live_bytes != self.live_bytes || totals.live_blocks != self.live_blocks {
            return Err(format!(
                "its memory figures do not add up: the paths hold {} bytes in {} blocks live, \
                 but the total live is {} bytes in {} blocks",
                totals.live_bytes, totals.live_blocks, self.live_bytes, self.live_blocks
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(node: usize, alloc_bytes: u64, live_bytes: u64, peak_bytes: u64) -> PathMemory {
        PathMemory {
            node,
            allocs: 1,
            alloc_bytes,
            live_blocks: u64::from(live_bytes > 0),
            live_bytes,
            peak_blocks: 1,
            peak_bytes,
            ..PathMemory::default()
        }
    }

    #[test]
    fn renumbering_adds_the_paths_that_meet_and_a_part_keeps_its_own_totals() {
        let mut memory = MemoryProfile {
            live_bytes: 30,
            live_blocks: 2,
            paths: vec![path(1, 10, 10, 0), path(2, 20, 20, 0), path(3, 5, 0, 0)],
            ..MemoryProfile::default()
        };
        // Node 2 is taken out: its figures go to its parent, node 1.
        memory.renumber(|node| match node {
            2 => 1,
            3 => 2,
            other => other,
        });
        assert_eq!(memory.paths.len(), 2);
        assert_eq!((memory.paths[0].node, memory.paths[0].alloc_bytes), (1, 30));
        memory.validate(3).unwrap();
        let part = memory.restricted(|node| (node == 2).then_some(1));
        assert_eq!(
            (part.paths.len(), part.live_bytes, part.live_blocks),
            (1, 0, 0)
        );
        part.validate(2).unwrap();
    }

    #[test]
    fn merged_runs_add_their_allocations_and_keep_the_highest_peak_with_its_paths() {
        let mut a = MemoryProfile {
            peak_bytes: 100,
            peak_blocks: 1,
            live_bytes: 10,
            live_blocks: 1,
            paths: vec![path(1, 100, 10, 100)],
            ..MemoryProfile::default()
        };
        let b = MemoryProfile {
            peak_bytes: 300,
            peak_blocks: 1,
            live_bytes: 0,
            paths: vec![path(1, 50, 0, 0), path(2, 300, 0, 300)],
            ..MemoryProfile::default()
        };
        // b's node 2 is a's node 5.
        a.merge_from(&b, &[0, 1, 5]);
        assert_eq!(a.peak_bytes, 300);
        let by_node = a.by_node(6);
        assert_eq!((by_node[1].alloc_bytes, by_node[1].peak_bytes), (150, 0));
        assert_eq!((by_node[5].alloc_bytes, by_node[5].peak_bytes), (300, 300));
        assert_eq!(a.totals().peak_bytes, a.peak_bytes);
        assert_eq!(a.live_bytes, a.totals().live_bytes);
    }
}
