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
//! With one thread (WebAssembly without atomics), the counter increment is
//! the whole probe, as in the bench's floor: no first-call branch, no call
//! out. The sites are found when a snapshot is taken, by a scan of static
//! data (see `scan`). (The first-call branch, with the three stores that
//! linked a site into a list, cost `realworld` 1.23× of the floor against
//! 1.19× without, `--timer none`, and made its module 8 % larger.)
//!
//! With threads, each thread counts in counters of its own, indexed by the
//! site's index (`threads.rs`): a plain increment, as with one thread,
//! where a counter all threads shared would take an atomic
//! read-modify-write, a fence on WebAssembly, and have the cores fight
//! over its cache line. The snapshot adds the threads' counters up.
//!
//! When calls are timed, each counted call also adds one to the thread's
//! count of them, so that a timed call can take what the counting within it
//! cost out of its time, as it takes out the clock reads made within it.

use std::sync::Mutex;
#[cfg(one_thread)]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::site::{
    FunctionInfo, Tier, marker_slot, qualified_name, register_function, register_once,
};

/// The static behind one count-only function.
///
/// With one thread, a site is found at the snapshot by a scan of static
/// data for its tag (`SITE_TAG_0`, `SITE_TAG_1`), so that its probe is a
/// bare increment (see [`count_bare`]): the tag comes first, then the
/// site's own address, and the site is aligned to 8.
///
/// With threads on WebAssembly, the same scan finds the sites, and each
/// thread counts in a thread-local of the site's own, which `cell` gives
/// the place of on the thread that calls it: every thread's TLS block has
/// the one layout, so a thread's counter is at the same distance from its
/// state as the caller's from the caller's. Counting is then a bare
/// increment there too, with no first-call branch, whose cold call would
/// have every function that counts save registers around its body.
#[derive(Debug)]
#[repr(C)]
pub struct CountSite {
    #[cfg(target_family = "wasm")]
    tag: [u64; 2],
    /// The site itself (see [`CountSite::at`]): what the scan checks a tag
    /// it found against.
    #[cfg(target_family = "wasm")]
    this: Option<&'static CountSite>,
    /// With threads on WebAssembly, the place of the running thread's
    /// counter of the site (see `__count_cell!`).
    #[cfg(all(target_family = "wasm", not(one_thread)))]
    cell: Option<fn() -> usize>,
    /// Calls so far (one thread; with threads, each thread's own are in
    /// its counters).
    #[cfg(one_thread)]
    calls: AtomicU64,
    /// With threads, the index of the site's counter in each thread's
    /// counters, plus one; zero until registered.
    #[cfg(not(one_thread))]
    index: AtomicU32,
    module_path: &'static str,
    name: &'static str,
    file: &'static str,
    line: u32,
    /// Function id plus one; zero until registered.
    id: AtomicU32,
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
            #[cfg(target_family = "wasm")]
            tag: [SITE_TAG_0, SITE_TAG_1],
            #[cfg(target_family = "wasm")]
            this: None,
            #[cfg(all(target_family = "wasm", not(one_thread)))]
            cell: None,
            #[cfg(one_thread)]
            calls: AtomicU64::new(0),
            #[cfg(not(one_thread))]
            index: AtomicU32::new(0),
            module_path,
            name,
            file,
            line,
            id: AtomicU32::new(0),
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

    /// The same site, knowing its own address (the static it is built
    /// in), so that the scan can tell it from bytes that only look like it.
    pub const fn at(self, this: &'static CountSite) -> Self {
        #[cfg(target_family = "wasm")]
        return CountSite {
            this: Some(this),
            ..self
        };
        #[cfg(not(target_family = "wasm"))]
        {
            let _ = this;
            self
        }
    }

    /// The same site, whose calls each thread counts in the thread-local
    /// that `cell` gives the place of (threads on WebAssembly).
    #[cfg(all(target_family = "wasm", not(one_thread)))]
    pub const fn counted_in(self, cell: fn() -> usize) -> Self {
        CountSite {
            cell: Some(cell),
            ..self
        }
    }

    /// The site's index in the threads' counts, registering the site (its
    /// name from its marker) the first time; with threads on WebAssembly.
    #[cfg(all(target_family = "wasm", not(one_thread)))]
    pub(crate) fn index_registered(&'static self) -> usize {
        if self.index.load(Relaxed) == 0 {
            self.register(None);
        }
        self.index.load(Relaxed) as usize - 1
    }

    #[cold]
    #[inline(never)]
    fn register(&'static self, self_type: Option<fn() -> &'static str>) {
        register_once(&self.id, || {
            #[cfg(not(one_thread))]
            {
                // Index 0 is the calibration's (`calibration_site`).
                static NEXT_INDEX: AtomicU32 = AtomicU32::new(1);
                let index = NEXT_INDEX.fetch_add(1, Relaxed);
                self.index.store(index + 1, Relaxed);
            }
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

/// Counts one call of the function of `site`, whose name was given by
/// hand and needs its `Self` type from the call (`self_type`): the site is
/// registered with it. The others are counted by [`count_bare`].
#[cfg(one_thread)]
#[inline(always)]
pub fn count(site: &'static CountSite, self_type: Option<fn() -> &'static str>) {
    // With one thread a load and a store are enough, and cheaper than a
    // read-modify-write where atomics are real; the first call links the
    // site instead of registering it (see `Pending`).
    let before = site.calls.load(Relaxed);
    site.calls.store(before + 1, Relaxed);
    if before == 0 {
        site.pending.push(site, self_type);
    }
    if crate::clock::TIMED {
        crate::thread_state::counted::add();
    }
}

/// With threads, [`count`] adds to this thread's counter of the site,
/// `calls` (a thread-local of the site's own: see `__count_calls!`).
#[cfg(not(one_thread))]
#[inline(always)]
pub fn count(
    site: &'static CountSite,
    calls: &std::cell::Cell<u64>,
    self_type: Option<fn() -> &'static str>,
) {
    count_on_thread(site, calls, self_type);
}

/// With threads: one more call in this thread's counter `calls` of `site`;
/// the site's first call on the thread gives the thread the counter's
/// place, where snapshots read it.
#[cfg(not(one_thread))]
#[inline(always)]
fn count_on_thread(
    site: &'static CountSite,
    calls: &std::cell::Cell<u64>,
    self_type: Option<fn() -> &'static str>,
) {
    let before = calls.get();
    if before == 0 {
        // A call whose answer is the path's end: nothing lives across it.
        return count_first_here(site, calls, self_type);
    }
    calls.set(before + 1);
    if crate::clock::TIMED {
        crate::thread_state::counted::add();
    }
}

/// The site's first call on this thread, or its first call at all.
#[cfg(not(one_thread))]
#[cold]
#[inline(never)]
fn count_first_here(
    site: &'static CountSite,
    calls: &std::cell::Cell<u64>,
    self_type: Option<fn() -> &'static str>,
) {
    if site.index.load(Relaxed) == 0 {
        site.register(self_type);
    }
    let index = site.index.load(Relaxed) - 1;
    crate::threads::counter_here(index, calls);
    calls.set(calls.get() + 1);
    if crate::clock::TIMED {
        crate::thread_state::counted::add();
    }
}

/// Counts one call of the function of `site`, whose name needs nothing
/// from the call on WebAssembly without threads: there, a bare increment,
/// the same as the bench's floor (the site is found at the snapshot, see
/// `scan`, and named by its marker, so `self_type` is not used).
/// Elsewhere the first call registers the site with `self_type`.
#[cfg(one_thread)]
#[inline(always)]
pub fn count_bare(site: &'static CountSite, self_type: Option<fn() -> &'static str>) {
    let _ = self_type;
    site.calls.store(site.calls.load(Relaxed) + 1, Relaxed);
    if crate::clock::TIMED {
        crate::thread_state::counted::add();
    }
}

/// With threads, [`count`]'s: the site's thread-local counter `calls`.
#[cfg(not(one_thread))]
#[inline(always)]
pub fn count_bare(
    site: &'static CountSite,
    calls: &std::cell::Cell<u64>,
    self_type: Option<fn() -> &'static str>,
) {
    count_on_thread(site, calls, self_type);
}

/// Every counted function that was called: its id and its calls. With
/// threads, `per_thread` holds each thread's counters, which are added up.
pub(crate) fn counted_calls(per_thread: &[&[u64]]) -> Vec<(u32, u64)> {
    // The sites that were given their `Self` type first, in the order of
    // their first calls; then those that need nothing from their calls.
    #[cfg(one_thread)]
    Pending::register_all();
    #[cfg(one_thread)]
    scan::register_called();
    #[cfg(one_thread)]
    let _ = per_thread;
    lock_sites()
        .iter()
        .filter_map(|site| {
            let id = site.id.load(Relaxed).checked_sub(1)?;
            #[cfg(one_thread)]
            let calls = site.calls.load(Relaxed);
            #[cfg(not(one_thread))]
            let calls = {
                let index = site.index.load(Relaxed).checked_sub(1)? as usize;
                per_thread
                    .iter()
                    .filter_map(|counts| counts.get(index))
                    .sum()
            };
            Some((id, calls))
        })
        .collect()
}

/// The mark of a [`CountSite`] in static data: random, and written only
/// into sites. Two integer constants, never an array: an array constant
/// that the scan indexed would be kept in static data itself (as it is in
/// a debug build), and found.
#[cfg(target_family = "wasm")]
const SITE_TAG_0: u64 = 0x5c1e_0b7a_93d4_e261;
#[cfg(target_family = "wasm")]
const SITE_TAG_1: u64 = 0xa8f3_27c6_4e19_d05b;

/// With one thread, the sites a bare increment counts are found when a
/// snapshot is taken, by a scan of the module's static data for their tag.
/// A tag counts where the site after it names its own address; then its
/// marker, which returns that address too, is called to confirm it. A site
/// without a marker (the calibration's) is not one of the program's.
#[cfg(target_family = "wasm")]
mod scan {
    #[cfg(one_thread)]
    use std::sync::atomic::Ordering::Relaxed;

    use super::{CountSite, SITE_TAG_0, SITE_TAG_1};

    /// Every site in static data, in address order.
    fn sites() -> Vec<&'static CountSite> {
        let (start, end) = static_data();
        let mut sites = Vec::new();
        let mut at = start.next_multiple_of(8);
        while at + std::mem::size_of::<CountSite>() <= end {
            // SAFETY: `at` is inside linear memory, below the data's end;
            // the words are read as plain integers.
            let tagged = unsafe {
                let word = at as *const u64;
                word.read_volatile() == SITE_TAG_0
                    && word.add(1).read_volatile() == SITE_TAG_1
                    && (word.add(2) as *const usize).read_volatile() == at
            };
            if tagged {
                // SAFETY: tagged, and naming its own address: a site (the
                // bytes of a static built by `CountSite::new(..).at(..)`).
                let site: &'static CountSite = unsafe { &*(at as *const CountSite) };
                if site.marker.is_some_and(|marker| marker() == at) {
                    sites.push(site);
                }
            }
            at += 8;
        }
        sites
    }

    /// Registers every called site not registered yet, in address order.
    #[cfg(one_thread)]
    pub(super) fn register_called() {
        for site in sites() {
            if site.calls.load(Relaxed) > 0 && site.id.load(Relaxed) == 0 {
                site.register(None);
            }
        }
    }

    /// Every site each thread counts in a thread-local of its own, with
    /// the place of the running thread's counter.
    #[cfg(not(one_thread))]
    pub(crate) fn counted_in_threads() -> Vec<(&'static CountSite, usize)> {
        let _untracked = crate::memory::untracked::Untracked::begin();
        sites()
            .into_iter()
            .filter_map(|site| Some((site, site.cell?())))
            .collect()
    }

    /// Where the module's static data lies in linear memory, as the
    /// linker placed it.
    fn static_data() -> (usize, usize) {
        unsafe extern "C" {
            static __global_base: u8;
            static __data_end: u8;
        }
        // Symbols the linker defines: only their addresses are taken.
        (
            std::ptr::addr_of!(__global_base) as usize,
            std::ptr::addr_of!(__data_end) as usize,
        )
    }
}

#[cfg(all(target_family = "wasm", not(one_thread)))]
pub(crate) use scan::counted_in_threads;

/// One thread's counter of a count-only site: a thread-local of the
/// site's own, or a slot of its crate's [`SiteBlock`]. With threads on
/// WebAssembly the snapshot finds it through its site (see `scan`).
#[cfg(not(one_thread))]
#[derive(Debug)]
#[repr(transparent)]
pub struct ThreadCount(std::cell::Cell<u64>);

#[cfg(not(one_thread))]
impl ThreadCount {
    /// Built by the attribute's expansion in a thread-local, or as a slot.
    #[allow(clippy::new_without_default)] // only ever a thread-local's initialiser
    pub const fn new() -> Self {
        ThreadCount(std::cell::Cell::new(0))
    }

    /// One call of `site`, a site found by the scan: the thread's counter.
    /// The site's first call on a thread also makes sure the thread is
    /// known to snapshots (a thread whose only instrumented calls are
    /// counted ones would not be otherwise); the test is on the count the
    /// call loads anyway. That cold call is also what keeps `site` in the
    /// module, where nothing else on a call's path refers to it.
    #[cfg(target_family = "wasm")]
    #[inline(always)]
    pub fn add(&self, site: &'static CountSite) {
        if self.0.get() == 0 {
            first_count_on_this_thread(site);
        }
        count_in(&self.0);
    }

    /// Where the calls are counted, in the running thread's TLS block.
    #[cfg(target_family = "wasm")]
    pub fn place(&self) -> usize {
        self.0.as_ptr() as usize
    }

    /// The counter, for [`count`] and [`count_bare`].
    #[inline(always)]
    pub fn calls(&self) -> &std::cell::Cell<u64> {
        &self.0
    }

    /// The bench's floor: one more, and nothing else.
    #[inline(always)]
    pub fn floor_add(&self) {
        self.0.set(self.0.get().wrapping_add(1));
    }
}

/// A count-only site's first call on this thread: out of line, as it
/// happens once per site and thread.
#[cfg(all(target_family = "wasm", not(one_thread)))]
#[cold]
#[inline(never)]
fn first_count_on_this_thread(site: &'static CountSite) {
    // Used, so that no optimiser drops the argument, and with it the
    // reference that keeps the site in static data.
    std::hint::black_box(site);
    crate::threads::ensure_registered();
}

/// A thread's first counted call through its block of a crate's sites
/// (see `SiteBlock::count`): out of line, as it happens once per crate
/// and thread.
#[cfg(all(target_family = "wasm", not(one_thread)))]
#[cold]
#[inline(never)]
pub(crate) fn first_count_in_block() {
    crate::threads::ensure_registered();
}

/// One call counted in the running thread's counter `calls`.
#[cfg(all(target_family = "wasm", not(one_thread)))]
#[inline(always)]
pub(crate) fn count_in(calls: &std::cell::Cell<u64>) {
    calls.set(calls.get() + 1);
    if crate::clock::TIMED {
        crate::thread_state::counted::add();
    }
}

/// The site `calibration.rs` counts to measure what a counted call costs:
/// marked as called already, since a site's first call registers it and
/// this one is not the program's.
pub(crate) fn calibration_site() -> &'static CountSite {
    static PROBE: CountSite = CountSite::new("wasmprof", "<calibration>", "", 0);
    #[cfg(one_thread)]
    PROBE.calls.store(1, Relaxed);
    // With threads, index 0 of every thread's counters, never a function's.
    #[cfg(not(one_thread))]
    PROBE.index.store(1, Relaxed);
    &PROBE
}

fn lock_sites() -> std::sync::MutexGuard<'static, Vec<&'static CountSite>> {
    crate::spin::lock(&SITES)
}

/// With one thread, the first call of a site counted by [`count`] links it
/// into a list, with three stores, instead of calling out to register it
/// with its `Self` type; the list is registered when a snapshot is taken.
/// Only sites whose name was given by hand need that: the others are found
/// by `scan`, and named by their marker, which names a method's type as
/// rustc does, so their calls carry nothing.
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
