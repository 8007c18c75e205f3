//! Tests as the test harness names them.
//!
//! `#[test]`s written by attribute macros (`rstest`, `test_case`) are not
//! functions anyone instrumented, and so not tests to the profile. On wasm,
//! libtest runs tests one at a time and writes `test NAME ... ` before each:
//! a host that sees the line calls [`__wasmprof_harness_test`] with the
//! test's number, and every call until the next test is recorded under a
//! root node of that number, which the host's list names.

use std::cell::RefCell;

use crate::guard::{Guard, enter_test};
use crate::site::{Site, SiteCache};

/// The module of the sites that stand for harness tests; their name is
/// the test's number.
pub const HARNESS_MODULE: &str = "__wasmprof_harness";

thread_local! {
    /// The harness test running, as the guard of its node.
    static RUNNING: RefCell<Option<Guard>> = const { RefCell::new(None) };
}

/// The harness began test number `number` (from 1); 0 when it ran its
/// last. The test before ends here. Exported only from an instrumented
/// build: an ordinary one must not carry the runtime.
#[cfg_attr(all(target_family = "wasm", wasmprof_enabled), unsafe(no_mangle))]
pub extern "C" fn __wasmprof_harness_test(number: u32) {
    let _ = RUNNING.try_with(|running| {
        // Its guard ends its call, and the root is current again.
        drop(running.borrow_mut().take());
        crate::state::with_thread(|thread| thread.harness = None);
        if number == 0 {
            return;
        }
        let (site, cache): (&'static Site, &'static SiteCache) = crate::memory::untracked(|| {
            let name: &'static str = Box::leak(number.to_string().into_boxed_str());
            let site: &'static Site =
                Box::leak(Box::new(Site::new(HARNESS_MODULE, name, "", 0).test()));
            let cache: &'static SiteCache = Box::leak(Box::new(SiteCache::new()));
            (site, cache)
        });
        let guard = enter_test(site, cache, None);
        crate::state::with_thread(|thread| {
            thread.harness = Some((thread.current, thread.timed.len()));
        });
        *running.borrow_mut() = Some(guard);
    });
}

#[cfg(test)]
mod tests;
