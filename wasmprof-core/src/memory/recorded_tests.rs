use crate::guard::enter;
use crate::site::Site;
use crate::site::test_cache;
use crate::snapshot::take;

static OUTER: Site = Site::new("memory_tests", "outer", "src/memory.rs", 1);
static GROWER: Site = Site::new("memory_tests", "grower", "src/memory.rs", 2);
static LEAKER: Site = Site::new("memory_tests", "leaker", "src/memory.rs", 3);

fn grower() -> Vec<u64> {
    let _g = enter(&GROWER, test_cache(&GROWER), None);
    let mut v = Vec::new();
    for i in 0..100 {
        v.push(i);
    }
    v
}

fn leaker() {
    let _g = enter(&LEAKER, test_cache(&LEAKER), None);
    std::hint::black_box(Box::leak(Box::new([7u8; 48])));
}

/// The path of `name`'s node on this thread, and its record.
fn path_of(s: &crate::snapshot::Snapshot, name: &str) -> wasmprof_wire::PathMemory {
    let memory = s.memory.as_ref().expect("memory recorded");
    memory
        .paths
        .iter()
        .find(|p| {
            let node = &s.nodes[p.node as usize];
            node.function != u32::MAX
                && s.functions
                    .get(node.function as usize)
                    .is_some_and(|f| f.name == name)
        })
        .copied()
        .unwrap_or_else(|| panic!("no memory record of {name}"))
}

/// The root's bytes freed so far on this thread, from its own book:
/// a snapshot's root sums every thread's, and other tests' threads
/// free at the root while this one runs.
fn freed_at_root() -> u64 {
    crate::state::with_thread(|t| t.memory.view())
        .expect("thread state")
        .nodes
        .iter()
        .filter(|(node, _)| *node == 0)
        .map(|(_, path)| path.freed_bytes)
        .sum()
}

fn vec_and_leak_are_charged_exactly() {
    let kept = {
        let _g = enter(&OUTER, test_cache(&OUTER), None);
        let v = grower();
        leaker();
        v
    };
    let s = take();
    // Capacities 4, 8, 16, 32, 64, 128 of u64: one allocation, then
    // five reallocations, each freeing the block before.
    let grown = path_of(&s, "memory_tests::grower");
    assert_eq!((grown.allocs, grown.reallocs, grown.frees), (6, 5, 5));
    assert_eq!(grown.alloc_bytes, 8 * (4 + 8 + 16 + 32 + 64 + 128));
    assert_eq!(grown.freed_bytes, 8 * (4 + 8 + 16 + 32 + 64));
    assert_eq!((grown.live_blocks, grown.live_bytes), (1, 1024));
    let leaked = path_of(&s, "memory_tests::leaker");
    assert_eq!((leaked.allocs, leaked.live_bytes, leaked.frees), (1, 48, 0));
    let root_before = freed_at_root();
    drop(kept);
    let s = take();
    let grown = path_of(&s, "memory_tests::grower");
    assert_eq!((grown.live_blocks, grown.live_bytes), (0, 0));
    // Freed outside any instrumented call: by the root.
    assert_eq!(freed_at_root() - root_before, 1024);
}

static MAKER: Site = Site::new("memory_tests", "maker", "src/memory.rs", 4);
static TAKER: Site = Site::new("memory_tests", "taker", "src/memory.rs", 5);

/// A block made on one thread and freed on another: live for the path
/// that made it until then, and then a free of the freeing path's.
#[cfg(not(one_thread))]
#[test]
fn a_block_freed_on_another_thread_leaves_the_path_that_allocated_it() {
    std::thread::spawn(|| {
        let block = std::thread::Builder::new()
            .name("maker".into())
            .spawn(|| {
                let _g = enter(&MAKER, test_cache(&MAKER), None);
                std::hint::black_box(Box::new([7u8; 300]))
            })
            .unwrap()
            .join()
            .unwrap();
        let made = path_of(&take(), "memory_tests::maker");
        assert_eq!(
            (made.allocs, made.live_blocks, made.live_bytes),
            (1, 1, 300)
        );
        {
            let _g = enter(&TAKER, test_cache(&TAKER), None);
            drop(block);
        }
        let s = take();
        let made = path_of(&s, "memory_tests::maker");
        assert_eq!((made.allocs, made.live_blocks, made.live_bytes), (1, 0, 0));
        let taken = path_of(&s, "memory_tests::taker");
        assert_eq!((taken.frees, taken.freed_bytes, taken.allocs), (1, 300, 0));
        let threads = s.threads.expect("two threads recorded calls");
        assert!(threads.iter().any(|t| t.name == "maker"), "{threads:?}");
    })
    .join()
    .unwrap();
}

/// On a thread of its own natively, for a fresh book whatever the
/// other tests do; on wasm there is one thread and tests run in turn.
#[test]
fn a_vec_grown_to_100_and_a_leak_are_charged_to_their_paths_exactly() {
    #[cfg(not(one_thread))]
    std::thread::spawn(vec_and_leak_are_charged_exactly)
        .join()
        .unwrap();
    #[cfg(one_thread)]
    vec_and_leak_are_charged_exactly();
}
