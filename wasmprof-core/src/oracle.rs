//! The oracle: a second count of every instrumented function's calls, made
//! in a way that shares nothing with the profile's, so that the two can be
//! compared (`cargo wasmprof run --verify-counts`).
//!
//! The profile counts a call in a node of the call tree (a fully
//! instrumented function) or in its count site (a counted one), each found
//! through a registered id, a site's cache or a scan of static data. The
//! oracle gives each function one more static, an [`OracleSite`]: an atomic
//! counter added to on every entry, which links itself into a list on its
//! first, and nothing else. No id, no tree, no scan, no thread state, and
//! no borrow that a call made inside the runtime (by an allocator, say)
//! could find taken. The snapshot carries its counts beside the profile's,
//! keyed by the function's marker (see [`crate::site`]), and `cargo
//! wasmprof` fails a run in which any function's two counts differ.
//!
//! Built with the bench's floor instead of the runtime (`WASMPROF_INSTRUMENT
//! =floor`), the oracle is the only instrumentation: a plain program that
//! reports a count per function, against which every mode's profile of a
//! deterministic program can be held.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::site::{Marker, marker_slot};

/// The oracle's counter of one instrumented function.
#[derive(Debug)]
pub struct OracleSite {
    calls: AtomicU64,
    /// The next site in the list of those called, older ones after.
    next: AtomicPtr<OracleSite>,
    /// Names the function (as the profile's site's marker does), and keys
    /// its count in the snapshot.
    marker: Marker,
    // The rest names the function in a build whose only instrumentation is
    // the oracle; beside the runtime, the runtime's site does.
    #[cfg_attr(wasmprof_enabled, allow(dead_code))]
    module_path: &'static str,
    #[cfg_attr(wasmprof_enabled, allow(dead_code))]
    name: &'static str,
    #[cfg_attr(wasmprof_enabled, allow(dead_code))]
    file: &'static str,
    #[cfg_attr(wasmprof_enabled, allow(dead_code))]
    line: u32,
    #[cfg_attr(wasmprof_enabled, allow(dead_code))]
    name_given: bool,
    /// The `Self` type of a method, given by its first call.
    #[cfg_attr(wasmprof_enabled, allow(dead_code))]
    self_type: AtomicPtr<()>,
}

/// The site called first most recently; the list goes on through `next`.
static CALLED: AtomicPtr<OracleSite> = AtomicPtr::new(std::ptr::null_mut());

impl OracleSite {
    /// Built by the attribute's expansion in a `static`.
    pub const fn new(
        marker: Marker,
        module_path: &'static str,
        name: &'static str,
        file: &'static str,
        line: u32,
        name_given: bool,
    ) -> Self {
        OracleSite {
            calls: AtomicU64::new(0),
            next: AtomicPtr::new(std::ptr::null_mut()),
            marker,
            module_path,
            name,
            file,
            line,
            name_given,
            self_type: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Counts one call; the first links the site into the list.
    #[inline(always)]
    pub fn hit(&'static self, self_type: Option<fn() -> &'static str>) {
        if self.calls.fetch_add(1, Ordering::Relaxed) == 0 {
            self.link(self_type);
        }
    }

    #[cold]
    #[inline(never)]
    fn link(&'static self, self_type: Option<fn() -> &'static str>) {
        if let Some(self_type) = self_type {
            self.self_type
                .store(self_type as *const () as *mut (), Ordering::Relaxed);
        }
        let this = self as *const OracleSite as *mut OracleSite;
        let mut head = CALLED.load(Ordering::Acquire);
        loop {
            self.next.store(head, Ordering::Relaxed);
            match CALLED.compare_exchange_weak(head, this, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// The `Self` type its first call gave, if any.
    #[cfg(any(test, not(wasmprof_enabled)))]
    fn self_type(&self) -> Option<&'static str> {
        let pointer = self.self_type.load(Ordering::Relaxed);
        if pointer.is_null() {
            return None;
        }
        // SAFETY: only `link` stores here, and only a `fn() -> &'static str`.
        let self_type: fn() -> &'static str = unsafe { std::mem::transmute(pointer) };
        Some(self_type())
    }
}

/// Every site called so far, the first called first.
fn called() -> Vec<&'static OracleSite> {
    let mut sites = Vec::new();
    let mut at = CALLED.load(Ordering::Acquire);
    while !at.is_null() {
        // SAFETY: only `link` puts pointers in the list, each to a
        // `'static` site, and never takes one out.
        let site: &'static OracleSite = unsafe { &*at };
        sites.push(site);
        at = site.next.load(Ordering::Acquire);
    }
    sites.reverse();
    sites
}

/// The oracle's counts, for the snapshot.
pub(crate) fn counts() -> Vec<wasmprof_wire::OracleCount> {
    called()
        .into_iter()
        .map(|site| wasmprof_wire::OracleCount {
            marker: marker_slot(site.marker),
            calls: site.calls.load(Ordering::Relaxed),
        })
        .collect()
}

/// The snapshot of a build whose only instrumentation is the oracle: each
/// function called, counted only, with the oracle's counts beside them.
#[cfg(any(test, not(wasmprof_enabled)))]
pub(crate) fn snapshot() -> wasmprof_wire::Snapshot {
    let sites = called();
    let functions = sites
        .iter()
        .map(|site| wasmprof_wire::SnapshotFunction {
            name: crate::site::qualified_name(site.module_path, site.self_type(), site.name),
            file: site.file.to_owned(),
            line: site.line,
            tier: wasmprof_wire::Tier::Counted,
            is_async: false,
            calls: site.calls.load(Ordering::Relaxed),
            marker: Some(marker_slot(site.marker)),
            name_given: site.name_given,
            is_test: false,
        })
        .collect();
    wasmprof_wire::Snapshot {
        timed: false,
        functions,
        nodes: Vec::new(),
        current: 0,
        overflow: None,
        cap: 0,
        clock_cost: 0.0,
        futures: Vec::new(),
        memory: None,
        // Its functions' counts are the oracle's: nothing to hold them against.
        oracle: None,
        frames: None,
        threads: None,
    }
}

/// The export a host calls to read the profile, in a build whose only
/// instrumentation is the oracle (see `snapshot::__wasmprof_snapshot`).
#[cfg(all(target_family = "wasm", wasmprof_oracle, not(wasmprof_enabled)))]
#[unsafe(no_mangle)]
pub(crate) extern "C" fn __wasmprof_snapshot() -> *const u8 {
    use std::sync::Mutex;
    static LAST: Mutex<Vec<u8>> = Mutex::new(Vec::new());
    let mut last = crate::spin::lock(&LAST);
    *last = snapshot().encode();
    last.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here_a() -> usize {
        1
    }
    fn here_b() -> usize {
        2
    }
    static A: OracleSite = OracleSite::new(here_a, "oracle_tests", "a", "src/oracle.rs", 1, false);
    static B: OracleSite = OracleSite::new(here_b, "oracle_tests", "b", "src/oracle.rs", 2, false);

    struct Owner;

    fn calls_of(marker: Marker) -> Option<u64> {
        counts()
            .into_iter()
            .find(|c| c.marker == marker_slot(marker))
            .map(|c| c.calls)
    }

    #[test]
    fn every_call_is_counted_and_each_site_listed_once_from_any_thread() {
        A.hit(None);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..1000 {
                        A.hit(None);
                        B.hit(Some(|| std::any::type_name::<Owner>()));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(calls_of(here_a), Some(4001));
        assert_eq!(calls_of(here_b), Some(4000));
        let listed = called();
        assert_eq!(listed.iter().filter(|s| s.name == "a").count(), 1);
        assert_eq!(listed.iter().filter(|s| s.name == "b").count(), 1);
        let snapshot = snapshot();
        let b = snapshot
            .functions
            .iter()
            .find(|f| f.line == 2 && f.file == "src/oracle.rs")
            .unwrap();
        assert_eq!(b.name, "wasmprof_core::oracle::tests::Owner::b");
        assert_eq!(b.calls, 4000);
        assert_eq!(b.tier, wasmprof_wire::Tier::Counted);
    }
}
