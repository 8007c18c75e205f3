//! A program with a global allocator of its own: `--memory` records it
//! through the one-line wrapper, which only forwards in other builds.

use lol_alloc::{AssumeSingleThreaded, FreeListAllocator};

// SAFETY: a WASI program without threads.
#[global_allocator]
static ALLOCATOR: wasmprof::Recording<AssumeSingleThreaded<FreeListAllocator>> =
    wasmprof::Recording::new(unsafe { AssumeSingleThreaded::new(FreeListAllocator::new()) });

fn main() {
    println!("memory-lol: {}", memory::workload());
}
