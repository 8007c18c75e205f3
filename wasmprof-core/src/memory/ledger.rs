//! The book of one thread's allocations: what each call path allocated,
//! freed and still holds, the peak of live bytes and who held it then, and
//! each growth of linear memory.
//!
//! A block stays charged to the path that allocated it (or last
//! reallocated it), which its header names (see `recording.rs`), until it
//! is freed, wherever that happens: "live" is by
//! the allocating path, frees by the freeing one. A reallocation is the
//! free of the old block and the allocation of the new one, and is counted
//! as a reallocation too; so, over all paths, allocations less frees are
//! the blocks still live, and the same for bytes.
//!
//! The peak is kept as dhat keeps it: each allocation that raises the live
//! bytes above the highest seen marks a new peak, and the first free after
//! it copies every path's live figures to its "at peak" ones. The copy
//! costs a walk of the paths, and is made only when the live bytes are
//! about to fall from a new peak.

use crate::tree::NodeId;

// The wire's records: a path's `node` is filled in by `view`.
pub(crate) use wasmprof_wire::{
    FailedAlloc as Failed, MemoryGrow as Grow, PathMemory as NodeMemory,
};

/// Growth events kept one by one; past them, only the paths' counts.
const MAX_GROWS: usize = 4096;

/// One path's figures as the allocator keeps them: what is live is not
/// counted on every allocation but found when read, as what the path
/// allocated less what of it was released, so an allocation adds to two
/// figures of its path instead of four.
#[derive(Clone, Copy, Default)]
struct PathBook {
    allocs: u64,
    alloc_bytes: u64,
    frees: u64,
    freed_bytes: u64,
    reallocs: u64,
    /// Of the blocks this path allocated, those freed since, by any path.
    released_blocks: u64,
    released_bytes: u64,
    peak_blocks: u64,
    peak_bytes: u64,
    grows: u64,
    grown_pages: u64,
}

impl PathBook {
    /// Never below zero, whatever a caller said: a panic here would be an
    /// abort inside the allocator.
    fn live_blocks(&self) -> u64 {
        self.allocs.saturating_sub(self.released_blocks)
    }

    fn live_bytes(&self) -> u64 {
        self.alloc_bytes.saturating_sub(self.released_bytes)
    }

    fn is_empty(&self) -> bool {
        self.allocs == 0 && self.frees == 0 && self.grows == 0
    }

    fn record(&self) -> NodeMemory {
        NodeMemory {
            node: 0,
            allocs: self.allocs,
            alloc_bytes: self.alloc_bytes,
            frees: self.frees,
            freed_bytes: self.freed_bytes,
            reallocs: self.reallocs,
            live_blocks: self.live_blocks(),
            live_bytes: self.live_bytes(),
            peak_blocks: self.peak_blocks,
            peak_bytes: self.peak_bytes,
            grows: self.grows,
            grown_pages: self.grown_pages,
        }
    }
}

/// One thread's book.
#[derive(Clone)]
pub(crate) struct Ledger {
    /// By node id; a node past the end has done nothing yet.
    paths: Vec<PathBook>,
    /// The one running total kept on every allocation and free, for the
    /// peak; the live blocks are summed over the paths when read.
    live_bytes: u64,
    peak_blocks: u64,
    peak_bytes: u64,
    /// A new peak was reached and the paths' figures at it not copied yet.
    peak_unsaved: bool,
    grows: Vec<Grow>,
    /// Growths past [`MAX_GROWS`], counted in their paths only.
    grows_dropped: u64,
    failed: Option<Failed>,
    /// Linear memory's size before the first growth the book saw.
    first_pages: Option<u32>,
}

/// What a snapshot carries of a [`Ledger`].
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LedgerView {
    /// Every path that did something, by node, in node order.
    pub nodes: Vec<(NodeId, NodeMemory)>,
    pub live_blocks: u64,
    pub live_bytes: u64,
    pub peak_blocks: u64,
    pub peak_bytes: u64,
    pub grows: Vec<Grow>,
    pub grows_dropped: u64,
    pub failed: Option<Failed>,
    /// `None`: memory did not grow on the program's allocations.
    pub first_pages: Option<u32>,
}

impl Ledger {
    pub(crate) const fn new() -> Self {
        Ledger {
            paths: Vec::new(),
            live_bytes: 0,
            peak_blocks: 0,
            peak_bytes: 0,
            peak_unsaved: false,
            grows: Vec::new(),
            grows_dropped: 0,
            failed: None,
            first_pages: None,
        }
    }

    /// The book of `node`. The book grows in an untracked section: it is
    /// the runtime's memory, and the allocator calls in here as is.
    #[inline(always)]
    fn path(&mut self, node: NodeId) -> &mut PathBook {
        let index = node as usize;
        if self.paths.len() <= index {
            self.grow_book(index);
        }
        &mut self.paths[index]
    }

    #[cold]
    #[inline(never)]
    fn grow_book(&mut self, index: usize) {
        let _untracked = super::untracked::Untracked::begin();
        // Room for the paths to come, not one at a time.
        let len = (index + 1).max(self.paths.len() * 2).max(64);
        self.paths.resize(len, PathBook::default());
    }

    /// `node` allocated a block of `bytes`; the block's header now names
    /// `node` as its owner.
    #[inline(always)]
    pub(crate) fn alloc(&mut self, node: NodeId, bytes: u64) {
        self.allocated(node, bytes, 0);
    }

    /// An allocation, or the new block of `reallocs` reallocations.
    #[inline(always)]
    fn allocated(&mut self, node: NodeId, bytes: u64, reallocs: u64) {
        let path = self.path(node);
        path.allocs += 1;
        path.alloc_bytes += bytes;
        path.reallocs += reallocs;
        self.live_bytes += bytes;
        if self.live_bytes > self.peak_bytes {
            self.peak_bytes = self.live_bytes;
            self.peak_unsaved = true;
        }
    }

    /// `node` freed a block of `bytes` that `owner` allocated.
    #[inline(always)]
    pub(crate) fn free(&mut self, node: NodeId, owner: NodeId, bytes: u64) {
        if self.peak_unsaved {
            self.save_peak();
        }
        let path = self.path(node);
        path.frees += 1;
        path.freed_bytes += bytes;
        // Most blocks are freed by the path that allocated them.
        let holder = if owner == node {
            path
        } else {
            self.path(owner)
        };
        holder.released_blocks += 1;
        holder.released_bytes += bytes;
        self.live_bytes = self.live_bytes.saturating_sub(bytes);
    }

    /// `node` freed a block of `bytes` that another thread allocated: a
    /// free of this path's, while the block's release is its owner's book's
    /// (see `remote.rs`). This book's live bytes never held it.
    #[inline(always)]
    pub(crate) fn free_foreign(&mut self, node: NodeId, bytes: u64) {
        let path = self.path(node);
        path.frees += 1;
        path.freed_bytes += bytes;
    }

    /// `node` reallocated another thread's block of `old_bytes` to
    /// `new_bytes`, which are now `node`'s.
    #[inline(always)]
    pub(crate) fn realloc_foreign(&mut self, node: NodeId, old_bytes: u64, new_bytes: u64) {
        self.free_foreign(node, old_bytes);
        self.allocated(node, new_bytes, 1);
    }

    /// `node` reallocated a block of `old_bytes` that `owner` allocated
    /// to `new_bytes`, which are now `node`'s: the free of the old block
    /// and the allocation of the new one.
    #[inline(always)]
    pub(crate) fn realloc(&mut self, node: NodeId, owner: NodeId, old_bytes: u64, new_bytes: u64) {
        self.free(node, owner, old_bytes);
        self.allocated(node, new_bytes, 1);
    }

    /// `node` reallocated a block the runtime allocated for itself: only
    /// its new block is the program's.
    pub(crate) fn realloc_from_runtime(&mut self, node: NodeId, new_bytes: u64) {
        self.allocated(node, new_bytes, 1);
    }

    /// An allocation by `node` made linear memory grow.
    #[cold]
    pub(crate) fn grow(&mut self, node: NodeId, pages_before: u32, pages_after: u32, request: u64) {
        self.first_pages.get_or_insert(pages_before);
        let path = self.path(node);
        path.grows += 1;
        path.grown_pages += u64::from(pages_after.saturating_sub(pages_before));
        if self.grows.len() < MAX_GROWS {
            let _untracked = super::untracked::Untracked::begin();
            self.grows.push(Grow {
                node,
                pages_before,
                pages_after,
                request,
            });
        } else {
            self.grows_dropped += 1;
        }
    }

    /// The allocator could not give `node` its `bytes`. The first such
    /// failure is kept: the program usually aborts on it.
    #[cold]
    pub(crate) fn failed(&mut self, node: NodeId, bytes: u64) {
        self.failed.get_or_insert(Failed { node, bytes });
    }

    /// Copies each path's live figures to its figures at the peak: called
    /// when the live bytes are about to fall from a new peak, and when the
    /// book is read. No block was freed since the peak was reached, so the
    /// live figures are those at the peak.
    #[cold]
    #[inline(never)]
    fn save_peak(&mut self) {
        if !self.peak_unsaved {
            return;
        }
        self.peak_unsaved = false;
        let mut blocks = 0;
        for path in &mut self.paths {
            path.peak_blocks = path.live_blocks();
            path.peak_bytes = path.live_bytes();
            blocks += path.peak_blocks;
        }
        self.peak_blocks = blocks;
    }

    /// The book as it stands, the peak included.
    pub(crate) fn view(&mut self) -> LedgerView {
        self.save_peak();
        LedgerView {
            nodes: self
                .paths
                .iter()
                .enumerate()
                .filter(|(_, path)| !path.is_empty())
                .map(|(node, path)| (node as NodeId, path.record()))
                .collect(),
            live_blocks: self.paths.iter().map(PathBook::live_blocks).sum(),
            live_bytes: self.live_bytes,
            peak_blocks: self.peak_blocks,
            peak_bytes: self.peak_bytes,
            grows: self.grows.clone(),
            grows_dropped: self.grows_dropped,
            failed: self.failed,
            first_pages: self.first_pages,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: NodeId = 1;
    const B: NodeId = 2;

    fn of(view: &LedgerView, node: NodeId) -> NodeMemory {
        view.nodes
            .iter()
            .find(|(n, _)| *n == node)
            .map_or_else(NodeMemory::default, |(_, m)| *m)
    }

    #[test]
    fn a_block_stays_live_under_the_path_that_allocated_it_until_freed() {
        let mut ledger = Ledger::new();
        ledger.alloc(A, 100);
        ledger.alloc(A, 20);
        ledger.free(B, A, 100);
        let view = ledger.view();
        assert_eq!(
            of(&view, A),
            NodeMemory {
                allocs: 2,
                alloc_bytes: 120,
                live_blocks: 1,
                live_bytes: 20,
                peak_blocks: 2,
                peak_bytes: 120,
                ..NodeMemory::default()
            }
        );
        assert_eq!(of(&view, B).frees, 1);
        assert_eq!(of(&view, B).freed_bytes, 100);
        assert_eq!((view.live_blocks, view.live_bytes), (1, 20));
    }

    #[test]
    fn a_reallocation_frees_the_old_block_and_charges_the_new_one_to_its_path() {
        let mut ledger = Ledger::new();
        ledger.alloc(A, 16);
        ledger.realloc(B, A, 16, 32);
        let view = ledger.view();
        let (a, b) = (of(&view, A), of(&view, B));
        assert_eq!((a.live_bytes, b.live_bytes), (0, 32));
        assert_eq!((b.allocs, b.frees, b.reallocs), (1, 1, 1));
        assert_eq!((b.alloc_bytes, b.freed_bytes), (32, 16));
        assert_eq!(view.live_bytes, 32);
    }

    #[test]
    fn a_reallocation_is_a_free_and_an_allocation_to_the_figure() {
        let (mut fused, mut apart) = (Ledger::new(), Ledger::new());
        for ledger in [&mut fused, &mut apart] {
            ledger.alloc(A, 16);
            ledger.alloc(B, 100);
        }
        fused.realloc(B, A, 16, 64);
        fused.realloc(B, B, 64, 8);
        apart.free(B, A, 16);
        apart.alloc(B, 64);
        apart.free(B, B, 64);
        apart.alloc(B, 8);
        let (fused, mut apart) = (fused.view(), apart.view());
        apart
            .nodes
            .iter_mut()
            .find(|(n, _)| *n == B)
            .unwrap()
            .1
            .reallocs = 2;
        assert_eq!(fused, apart);
        assert_eq!((fused.peak_bytes, fused.live_bytes), (164, 108));
    }

    #[test]
    fn the_peak_is_who_held_what_when_the_live_bytes_were_highest() {
        let mut ledger = Ledger::new();
        ledger.alloc(A, 10);
        ledger.alloc(B, 1000);
        ledger.free(B, B, 1000);
        ledger.alloc(A, 500);
        let view = ledger.view();
        assert_eq!((view.peak_bytes, view.peak_blocks), (1010, 2));
        assert_eq!(of(&view, A).peak_bytes, 10);
        assert_eq!(of(&view, B).peak_bytes, 1000);
        assert_eq!(view.live_bytes, 510);
    }

    #[test]
    fn a_peak_still_standing_at_the_snapshot_is_the_live_figures() {
        let mut ledger = Ledger::new();
        ledger.alloc(A, 10);
        ledger.free(A, A, 10);
        ledger.alloc(B, 40);
        let view = ledger.view();
        assert_eq!(view.peak_bytes, 40);
        assert_eq!((of(&view, A).peak_bytes, of(&view, B).peak_bytes), (0, 40));
    }

    #[test]
    fn sums_over_paths_are_the_totals() {
        let mut ledger = Ledger::new();
        for round in 0..200u64 {
            let node = (round % 7) as NodeId + 1;
            ledger.alloc(node, round + 1);
            if round % 3 == 0 {
                ledger.free((round % 5) as NodeId + 1, node, round + 1);
            }
        }
        let view = ledger.view();
        let sum = |f: fn(&NodeMemory) -> u64| view.nodes.iter().map(|(_, m)| f(m)).sum::<u64>();
        assert_eq!(sum(|m| m.allocs) - sum(|m| m.frees), view.live_blocks);
        assert_eq!(
            sum(|m| m.alloc_bytes) - sum(|m| m.freed_bytes),
            view.live_bytes
        );
        assert_eq!(sum(|m| m.live_bytes), view.live_bytes);
        assert_eq!(sum(|m| m.peak_bytes), view.peak_bytes);
    }

    #[test]
    fn growths_are_kept_with_their_paths_and_the_first_failure_too() {
        let mut ledger = Ledger::new();
        ledger.grow(A, 17, 19, 100_000);
        ledger.failed(B, 1 << 30);
        ledger.failed(A, 8);
        let view = ledger.view();
        assert_eq!(
            view.grows,
            [Grow {
                node: A,
                pages_before: 17,
                pages_after: 19,
                request: 100_000
            }]
        );
        assert_eq!((of(&view, A).grows, of(&view, A).grown_pages), (1, 2));
        assert_eq!(view.first_pages, Some(17));
        assert_eq!(
            view.failed,
            Some(Failed {
                node: B,
                bytes: 1 << 30
            })
        );
    }
}
