//! Blocks freed on another thread than the one that allocated them.
//!
//! Each thread keeps its own book (`ledger.rs`), which only that thread
//! writes, and a block's header names the thread whose book charged it.
//! When another thread frees the block, the free is the freeing path's, in
//! its own book, and the freeing thread notes the release in a list of its
//! own, by the owning thread and path; a snapshot gathers every thread's
//! list and takes the releases off the owners' live figures when it merges
//! the books. So every block is live for the path that allocated it until
//! it is freed, whichever thread frees it, the merged books add up, and no
//! free waits on another thread.

use crate::tree::NodeId;

/// A new thread's tag, which the blocks its book charges carry.
#[cfg(not(one_thread))]
pub(crate) fn new_thread_tag() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Relaxed)
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

/// One thread's releases of other threads' blocks, sorted by thread, then
/// owner: one entry each, however many frees.
#[derive(Clone, Debug, Default)]
pub(crate) struct Releases(Vec<Release>);

impl Releases {
    pub(crate) const fn new() -> Releases {
        Releases(Vec::new())
    }

    /// This thread freed a block of `bytes` that `owner` of `thread`
    /// allocated. Called from the allocator: what the list's growth
    /// allocates is the runtime's.
    pub(crate) fn add(&mut self, thread: u32, owner: NodeId, bytes: u64) {
        self.add_release(Release {
            thread,
            owner,
            blocks: 1,
            bytes,
        });
    }

    fn add_release(&mut self, release: Release) {
        let key = (release.thread, release.owner);
        match self.0.binary_search_by_key(&key, |r| (r.thread, r.owner)) {
            Ok(index) => {
                self.0[index].blocks += release.blocks;
                self.0[index].bytes += release.bytes;
            }
            Err(index) => {
                let _untracked = super::untracked::Untracked::begin();
                self.0.insert(index, release);
            }
        }
    }

    pub(crate) fn all(&self) -> &[Release] {
        &self.0
    }
}

/// Every thread's releases as one list, sorted by thread and owner.
pub(crate) fn merged<'a>(lists: impl Iterator<Item = &'a [Release]>) -> Vec<Release> {
    let mut all = Releases::new();
    for &release in lists.flatten() {
        all.add_release(release);
    }
    all.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_add_up_by_owner_within_a_thread_and_across_threads() {
        let mut a = Releases::new();
        a.add(2, 7, 10);
        a.add(1, 3, 5);
        a.add(2, 7, 30);
        let mut b = Releases::new();
        b.add(2, 7, 1);
        let all = merged([a.all(), b.all()].into_iter());
        assert_eq!(
            all,
            [
                Release {
                    thread: 1,
                    owner: 3,
                    blocks: 1,
                    bytes: 5
                },
                Release {
                    thread: 2,
                    owner: 7,
                    blocks: 3,
                    bytes: 41
                },
            ]
        );
    }
}
