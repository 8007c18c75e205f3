//! The books of several threads as one, on the merged call tree: each
//! thread's paths moved to the merged tree's nodes and added up, less what
//! other threads freed of each path's blocks.

use super::ledger::{Failed, Grow, LedgerView, NodeMemory};
use super::remote::Release;
use crate::tree::NodeId;

/// One thread's book, and where its nodes are in the merged tree.
pub(crate) struct ThreadBook<'a> {
    /// The tag its blocks carry.
    pub thread: u32,
    pub view: &'a LedgerView,
    /// Its node → the merged tree's.
    pub map: &'a dyn Fn(NodeId) -> NodeId,
}

/// The merged book. Peaks are each thread's own, added: an upper bound of
/// the program's, since the threads need not have peaked together.
pub(crate) fn merge(books: &[ThreadBook], releases: &[Release]) -> LedgerView {
    let mut merged = LedgerView::default();
    let mut paths: Vec<(NodeId, NodeMemory)> = Vec::new();
    for book in books {
        let view = book.view;
        // Releases of a thread still running elsewhere find no book here:
        // its blocks are not in this snapshot either.
        let released = |owner: NodeId| {
            releases
                .binary_search_by_key(&(book.thread, owner), |r| (r.thread, r.owner))
                .map_or((0, 0), |i| (releases[i].blocks, releases[i].bytes))
        };
        let (mut live_blocks, mut live_bytes) = (view.live_blocks, view.live_bytes);
        for &(node, mut path) in &view.nodes {
            let (blocks, bytes) = released(node);
            path.live_blocks = path.live_blocks.saturating_sub(blocks);
            path.live_bytes = path.live_bytes.saturating_sub(bytes);
            live_blocks = live_blocks.saturating_sub(blocks);
            live_bytes = live_bytes.saturating_sub(bytes);
            paths.push(((book.map)(node), path));
        }
        merged.live_blocks += live_blocks;
        merged.live_bytes += live_bytes;
        merged.peak_blocks += view.peak_blocks;
        merged.peak_bytes += view.peak_bytes;
        merged.grows.extend(view.grows.iter().map(|g| Grow {
            node: (book.map)(g.node),
            ..*g
        }));
        merged.grows_dropped += view.grows_dropped;
        merged.failed = merged.failed.or(view.failed.map(|f| Failed {
            node: (book.map)(f.node),
            ..f
        }));
        merged.first_pages = match (merged.first_pages, view.first_pages) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    paths.sort_by_key(|&(node, _)| node);
    for (node, path) in paths {
        match merged.nodes.last_mut() {
            Some((last, sum)) if *last == node => add(sum, &path),
            _ => merged.nodes.push((node, path)),
        }
    }
    merged
}

fn add(sum: &mut NodeMemory, path: &NodeMemory) {
    sum.allocs += path.allocs;
    sum.alloc_bytes += path.alloc_bytes;
    sum.frees += path.frees;
    sum.freed_bytes += path.freed_bytes;
    sum.reallocs += path.reallocs;
    sum.live_blocks += path.live_blocks;
    sum.live_bytes += path.live_bytes;
    sum.peak_blocks += path.peak_blocks;
    sum.peak_bytes += path.peak_bytes;
    sum.grows += path.grows;
    sum.grown_pages += path.grown_pages;
}
