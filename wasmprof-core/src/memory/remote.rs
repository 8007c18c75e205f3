//! Blocks freed on another thread than the one that allocated them.
//!
//! Each thread keeps its own book (`ledger.rs`), which only that thread
//! writes, and a block's header names the thread whose book charged it.
//! When another thread frees the block, the free is the freeing path's, in
//! its own book, and the release is noted here by the owning thread and
//! path; a snapshot takes it off the owner's live figures when it merges
//! the books. So every block is live for the path that allocated it until
//! it is freed, whichever thread frees it, and the merged books add up.

use std::sync::Mutex;

use crate::tree::NodeId;

/// Each thread keeps its own book, and tags the blocks it charges: a
/// block freed on another thread is that thread's path's free, and its
/// release is noted for the owner's book (`remote.rs`).
#[cfg(not(one_thread))]
pub(crate) fn thread_tag() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    static NEXT: AtomicU32 = AtomicU32::new(1);
    thread_local! {
        static TAG: u32 = NEXT.fetch_add(1, Relaxed);
    }
    TAG.try_with(|tag| *tag).unwrap_or(0)
}

/// Without threads every block is the one thread's.
#[cfg(one_thread)]
pub(crate) fn thread_tag() -> u32 {
    0
}

/// What other threads freed of one thread's path's blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Release {
    /// The thread whose book holds the blocks (the header's tag).
    pub thread: u32,
    /// The path that allocated them, a node of that thread's tree.
    pub owner: NodeId,
    pub blocks: u64,
    pub bytes: u64,
}

/// Sorted by thread, then owner: one entry each, however many frees.
static RELEASES: Mutex<Vec<Release>> = Mutex::new(Vec::new());

/// Another thread freed a block of `bytes` that `owner` of `thread`
/// allocated. Called from the allocator: what the list's growth allocates
/// is the runtime's, and passes by without coming back here.
pub(crate) fn release(thread: u32, owner: NodeId, bytes: u64) {
    let _untracked = super::untracked::Untracked::begin();
    let mut releases = crate::spin::lock(&RELEASES);
    match releases.binary_search_by_key(&(thread, owner), |r| (r.thread, r.owner)) {
        Ok(index) => {
            releases[index].blocks += 1;
            releases[index].bytes += bytes;
        }
        Err(index) => releases.insert(
            index,
            Release {
                thread,
                owner,
                blocks: 1,
                bytes,
            },
        ),
    }
}

/// Every release so far (a snapshot reads them; nothing is taken away, so
/// each snapshot sees them all).
pub(crate) fn releases() -> Vec<Release> {
    let _untracked = super::untracked::Untracked::begin();
    crate::spin::lock(&RELEASES).clone()
}
