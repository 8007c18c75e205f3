//! The count-only tier: `#[wasmprof::instrument(count)]`, which crate-wide
//! instrumentation gives the functions below `--min-size`.
//!
//! A counted call adds one to its function's own counter and nothing more:
//! no clock, no calling-context node, no change of the current node. Its
//! time stays in its caller's self time (but for what the engine's samples
//! see of it, which `cargo wasmprof` gives it) and its callers are not
//! tracked.
//! (Counting per caller node, in a small table per site, was tried: calls
//! alternating between callers whose nodes shared a slot took the slow path
//! every time, and on `realworld` the tier cost more than timing every
//! function.)
//!
//! When calls are timed, each counted call also adds one to the thread's
//! count of them, so that a timed call can take what the counting within it
//! cost out of its time, as it takes out the clock reads made within it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::site::{
    FunctionInfo, Tier, marker_slot, qualified_name, register_function, register_once,
};
use crate::state::with_thread;

/// The static behind one count-only function.
#[derive(Debug)]
pub struct CountSite {
    module_path: &'static str,
    name: &'static str,
    file: &'static str,
    line: u32,
    /// Function id plus one; zero until the first call.
    id: AtomicU32,
    /// Calls so far.
    calls: AtomicU64,
    marker: Option<crate::site::Marker>,
    /// The name was given by hand: the marker's name only matches frames.
    name_given: bool,
    /// Where a called site waits to be registered (one thread only).
    #[cfg(one_thread)]
    pending: Pending,
}

/// Every count site that was called, for the snapshot.
static SITES: Mutex<Vec<&'static CountSite>> = Mutex::new(Vec::new());

impl CountSite {
    /// Built by the attribute's expansion in a `static`.
    pub const fn new(
        module_path: &'static str,
        name: &'static str,
        file: &'static str,
        line: u32,
    ) -> Self {
        CountSite {
            module_path,
            name,
            file,
            line,
            id: AtomicU32::new(0),
            calls: AtomicU64::new(0),
            marker: None,
            name_given: false,
            #[cfg(one_thread)]
            pending: Pending::new(),
        }
    }

    /// The same site, named in the reports as rustc names the function
    /// `marker` is nested in (see [`crate::site::Marker`]), unless its name
    /// was `given` by hand (then rustc's name still matches the samplers'
    /// frames).
    pub const fn marked(self, marker: crate::site::Marker, given: bool) -> Self {
        CountSite {
            marker: Some(marker),
            name_given: given,
            ..self
        }
    }

    #[cold]
    #[inline(never)]
    fn register(&'static self, self_type: Option<fn() -> &'static str>) {
        register_once(&self.id, || {
            lock_sites().push(self);
            register_function(FunctionInfo {
                name: qualified_name(self.module_path, self_type.map(|f| f()), self.name),
                file: self.file,
                line: self.line,
                tier: Tier::Counted,
                is_async: false,
                marker: self.marker.map(marker_slot),
                name_given: self.name_given,
                is_test: false,
            })
        });
    }
}

/// Counts one call of the function of `site`.
#[inline(always)]
pub fn count(site: &'static CountSite, self_type: Option<fn() -> &'static str>) {
    // With one thread a load and a store are enough, and cheaper than a
    // read-modify-write where atomics are real; the first call links the
    // site instead of registering it (see `Pending`).
    #[cfg(one_thread)]
    {
        let before = site.calls.load(Relaxed);
        site.calls.store(before + 1, Relaxed);
        if before == 0 {
            site.pending.push(site, self_type);
        }
    }
    #[cfg(not(one_thread))]
    if site.calls.fetch_add(1, Relaxed) == 0 {
        site.register(self_type);
    }
    if crate::clock::TIMED {
        with_thread(|thread| thread.counted_total += 1);
    }
}

/// Every counted function that was called: its id and its calls.
pub(crate) fn counted_calls() -> Vec<(u32, u64)> {
    #[cfg(one_thread)]
    Pending::register_all();
    lock_sites()
        .iter()
        .filter_map(|site| {
            let id = site.id.load(Relaxed).checked_sub(1)?;
            Some((id, site.calls.load(Relaxed)))
        })
        .collect()
}

/// What one counted call costs, in the clock's unit (ms): measured once,
/// with the clock's cost, so that timed calls can be given it back.
pub(crate) fn measure_probe_cost(clock_cost: f64) -> f64 {
    static PROBE: CountSite = CountSite::new("wasmprof", "<calibration>", "", 0);
    const PROBES: u32 = 20_000;
    // The first call registers; the calibration site must not.
    PROBE.calls.store(1, Relaxed);
    let before = with_thread(|thread| thread.counted_total).unwrap_or(0);
    let start = crate::clock::now();
    for _ in 0..PROBES {
        count(std::hint::black_box(&PROBE), None);
    }
    let end = crate::clock::now();
    with_thread(|thread| thread.counted_total = before);
    ((end - start - clock_cost) / f64::from(PROBES)).max(0.0)
}

fn lock_sites() -> std::sync::MutexGuard<'static, Vec<&'static CountSite>> {
    SITES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// With one thread, a site's first call links it into a list, with three
/// stores, instead of calling out to register: a count-only function then
/// has no call in it. (On `realworld`, default mode, `--timer none`, the
/// call took the build from 1.45–1.47× of plain to 1.49–1.50×.) The list
/// is registered when a snapshot is taken.
///
/// Finding the sites by scanning the static data for a marker instead, with
/// no branch in the probe at all, was measured and dropped: a method must
/// then store what names its `Self` type on every call, and that made
/// `patterns` slower (1.44× against 1.33×) while `realworld` gained 0.06×.
#[cfg(one_thread)]
#[derive(Debug)]
struct Pending {
    next: std::cell::Cell<Option<&'static CountSite>>,
    self_type: std::cell::Cell<Option<fn() -> &'static str>>,
}

// SAFETY: `one_thread` builds have exactly one thread.
#[cfg(one_thread)]
unsafe impl Sync for Pending {}

/// The list's head: its `next` is the site called first most recently.
#[cfg(one_thread)]
static FIRST_PENDING: Pending = Pending::new();

#[cfg(one_thread)]
impl Pending {
    const fn new() -> Self {
        Pending {
            next: std::cell::Cell::new(None),
            self_type: std::cell::Cell::new(None),
        }
    }

    #[inline(always)]
    fn push(&self, site: &'static CountSite, self_type: Option<fn() -> &'static str>) {
        self.self_type.set(self_type);
        self.next.set(FIRST_PENDING.next.replace(Some(site)));
    }

    /// Registers every site linked so far, in the order of their first calls.
    fn register_all() {
        let mut sites = Vec::new();
        let mut next = FIRST_PENDING.next.take();
        while let Some(site) = next {
            next = site.pending.next.take();
            sites.push(site);
        }
        for site in sites.into_iter().rev() {
            site.register(site.pending.self_type.get());
        }
    }
}
