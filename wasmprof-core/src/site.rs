//! Call sites: the static each instrumented function owns, and the table of
//! functions they register into.
//!
//! A site is built at compile time (module path, name, file, line) and gets
//! its function id on first entry, so the hot path carries only an integer.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// What the reports know of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FunctionInfo {
    /// `crate::module::Type::method`.
    pub name: String,
    pub file: &'static str,
    pub line: u32,
    pub tier: Tier,
    /// An `async fn`: its calls create futures, whose polls are its time.
    pub is_async: bool,
    /// The function table slot of its [`Marker`], where the module's name
    /// section names the function as rustc does.
    pub marker: Option<u32>,
    /// `name` was given by hand (`name = "…"`, or the name a function had
    /// before another crate's macro renamed it), and is kept.
    pub name_given: bool,
    /// A test (`#[wasmprof::instrument(test)]`): entered at the root.
    pub is_test: bool,
}

/// A function nested in the instrumented one, which only its site calls
/// for: in wasm its pointer is a slot of the function table, and the name
/// section names it as rustc names everything,
/// `<u128 as itoa::Unsigned>::fmt::__wasmprof_here`, generics as the impl
/// writes them. That is the surest name of the function around it, and the
/// one the engines' samplers show, so `cargo wasmprof` reads the name there
/// (`Site::new` keeps the one the macro gave for other targets).
pub(crate) type Marker = fn() -> usize;

/// A marker's slot in the function table: its pointer's value, on wasm.
pub(crate) fn marker_slot(marker: Marker) -> u32 {
    marker as usize as u32
}

/// How a function is instrumented (part of the snapshot's wire format):
/// `Full`, its calls are nodes of the tree; `Counted`, counted only (see
/// [`crate::count`]).
pub(crate) use wasmprof_wire::Tier;

/// The static behind one `#[wasmprof::instrument]` function.
#[derive(Debug)]
pub struct Site {
    module_path: &'static str,
    name: &'static str,
    file: &'static str,
    line: u32,
    /// Function id plus one; zero until first entry.
    id: AtomicU32,
    /// The site of an `async fn`.
    is_async: bool,
    marker: Option<Marker>,
    /// The name was given by hand: the marker's name only matches frames.
    name_given: bool,
    /// The site of a test.
    is_test: bool,
}

/// Slots in a site's cache: a power of two.
const CACHE_SLOTS: usize = 16;

/// The slot of a site's cache for calls from `parent`.
#[inline(always)]
fn cache_slot(parent: u32) -> usize {
    parent as usize & (CACHE_SLOTS - 1)
}

/// The nodes a site last entered under each of a few parents (the slot a
/// parent's id picks): a hint, checked before use. A function called in
/// turn from several places (a scanner used by every part of a parser)
/// finds its node here instead of searching for it. Zero, the root, is
/// never a site's node: the root's parent matches no caller's node, so an
/// empty slot misses as a stale one does.
///
/// With one tree, a static of its own beside the [`Site`]: all zeros, so
/// that it takes no bytes in the module (a site's other fields, its names,
/// put the site in the data section, and 64 bytes of it per instrumented
/// function were 2 % of syn's module instrumented crate-wide).
///
/// With a tree per thread, a thread-local of the site's own, initialised
/// `const` (`__site_cache!`): a node of one thread's tree means nothing in
/// another's, and reaching the cache is then an offset from the thread's
/// TLS base, where a table in the thread's state took two loads more on
/// every call.
#[derive(Debug)]
pub struct SiteCache([Slot; CACHE_SLOTS]);

#[cfg(one_thread)]
type Slot = AtomicU32;
#[cfg(not(one_thread))]
type Slot = std::cell::Cell<crate::tree::NodeId>;

// SAFETY: with threads, a cache is only used by the thread whose
// thread-local it is (or, for the harness's and the unit tests' sites,
// by the one thread that made it).
#[cfg(not(one_thread))]
unsafe impl Sync for SiteCache {}

impl SiteCache {
    /// Built by the attribute's expansion beside the site.
    #[allow(clippy::new_without_default)] // only ever a static's initialiser
    pub const fn new() -> Self {
        SiteCache([const { Slot::new(crate::tree::ROOT) }; CACHE_SLOTS])
    }

    /// The node cached for calls from `parent`.
    #[inline(always)]
    pub(crate) fn get(&self, parent: u32) -> crate::tree::NodeId {
        #[cfg(one_thread)]
        return self.0[cache_slot(parent)].load(Relaxed);
        #[cfg(not(one_thread))]
        self.0[cache_slot(parent)].get()
    }

    /// Caches `node` for calls from `parent`.
    #[inline(always)]
    pub(crate) fn set(&self, parent: u32, node: crate::tree::NodeId) {
        #[cfg(one_thread)]
        self.0[cache_slot(parent)].store(node, Relaxed);
        #[cfg(not(one_thread))]
        self.0[cache_slot(parent)].set(node);
    }
}

/// The cache of a unit test's site, made on first use: each site its own,
/// as in a module, and with threads each thread's own.
#[cfg(test)]
pub(crate) fn test_cache(site: &'static Site) -> &'static SiteCache {
    type Caches = Vec<((usize, std::thread::ThreadId), &'static SiteCache)>;
    static CACHES: Mutex<Caches> = Mutex::new(Vec::new());
    let key = (site as *const Site as usize, std::thread::current().id());
    crate::memory::untracked(|| {
        let mut caches = crate::spin::lock(&CACHES);
        if let Some(&(_, cache)) = caches.iter().find(|(k, _)| *k == key) {
            return cache;
        }
        let cache: &'static SiteCache = Box::leak(Box::new(SiteCache::new()));
        caches.push((key, cache));
        cache
    })
}

/// Every registered function, indexed by id.
static FUNCTIONS: Mutex<Vec<FunctionInfo>> = Mutex::new(Vec::new());

impl Site {
    /// Built by the attribute's expansion in a `static`.
    pub const fn new(
        module_path: &'static str,
        name: &'static str,
        file: &'static str,
        line: u32,
    ) -> Self {
        Site {
            module_path,
            name,
            file,
            line,
            id: AtomicU32::new(0),
            is_async: false,
            marker: None,
            name_given: false,
            is_test: false,
        }
    }

    /// The same site, named in the reports as rustc names the function
    /// `marker` is nested in, unless its name was `given` by hand (then
    /// rustc's name still matches the samplers' frames).
    pub const fn marked(self, marker: Marker, given: bool) -> Self {
        Site {
            marker: Some(marker),
            name_given: given,
            ..self
        }
    }

    /// The site of an `async fn`, built by the attribute's expansion.
    pub const fn new_async(
        module_path: &'static str,
        name: &'static str,
        file: &'static str,
        line: u32,
    ) -> Self {
        Site {
            is_async: true,
            ..Site::new(module_path, name, file, line)
        }
    }

    /// The same site, a test's.
    pub const fn test(self) -> Self {
        Site {
            is_test: true,
            ..self
        }
    }

    /// This site's function id, registering it on first use. `self_type`
    /// names the `Self` type of a method, read only on registration.
    #[inline(always)]
    pub fn id(&'static self, self_type: Option<fn() -> &'static str>) -> u32 {
        match self.id.load(Relaxed) {
            0 => self.register(self_type),
            id => id - 1,
        }
    }

    #[cold]
    #[inline(never)]
    fn register(&'static self, self_type: Option<fn() -> &'static str>) -> u32 {
        register_once(&self.id, || {
            register_function(FunctionInfo {
                name: qualified_name(self.module_path, self_type.map(|f| f()), self.name),
                file: self.file,
                line: self.line,
                tier: Tier::Full,
                is_async: self.is_async,
                marker: self.marker.map(marker_slot),
                name_given: self.name_given,
                is_test: self.is_test,
            })
        })
    }
}

/// Gives a site its id (plus one, in `id`) from `register`, once: two
/// threads entering one site for the first time agree on its id.
pub(crate) fn register_once(id: &AtomicU32, register: impl FnOnce() -> u32) -> u32 {
    // The table is the runtime's memory, not the program's.
    let _untracked = crate::memory::untracked::Untracked::begin();
    static REGISTERING: Mutex<()> = Mutex::new(());
    let _order = crate::spin::lock(&REGISTERING);
    if let known @ 1.. = id.load(Relaxed) {
        return known - 1;
    }
    let new = register();
    id.store(new + 1, Relaxed);
    new
}

/// Adds a function to the table; returns its id.
pub(crate) fn register_function(function: FunctionInfo) -> u32 {
    let mut functions = lock_functions();
    functions.push(function);
    functions.len() as u32 - 1
}

/// A copy of the function table.
pub(crate) fn functions() -> Vec<FunctionInfo> {
    lock_functions().clone()
}

/// The table stays usable even if a thread panicked while holding the lock:
/// registration cannot leave it half-updated.
fn lock_functions() -> std::sync::MutexGuard<'static, Vec<FunctionInfo>> {
    crate::spin::lock(&FUNCTIONS)
}

/// `crate::module::Type::method` from the pieces a site knows. The type name
/// comes from `type_name`, which spells out generic arguments; a site is
/// shared by every instantiation, so they are dropped.
pub(crate) fn qualified_name(module_path: &str, self_type: Option<&str>, name: &str) -> String {
    match self_type {
        Some(ty) => format!("{}::{name}", strip_generics(ty)),
        None => format!("{module_path}::{name}"),
    }
}

fn strip_generics(type_name: &str) -> &str {
    let type_name = type_name
        .trim_start_matches('&')
        .trim_start_matches("mut ")
        .trim_start_matches("dyn ");
    match type_name.find('<') {
        Some(0) | None => type_name,
        Some(at) => &type_name[..at],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_functions_are_named_by_module_path() {
        assert_eq!(
            qualified_name("app::parser", None, "parse"),
            "app::parser::parse"
        );
    }

    #[test]
    fn methods_are_named_by_self_type_without_generics() {
        assert_eq!(
            qualified_name("app::x", Some("app::shapes::Stack<u32>"), "push"),
            "app::shapes::Stack::push"
        );
        assert_eq!(
            qualified_name("app", Some("app::Circle"), "area"),
            "app::Circle::area"
        );
    }

    #[test]
    fn a_site_gets_one_id_for_good() {
        static SITE: Site = Site::new("t", "f", "src/lib.rs", 3);
        static OTHER: Site = Site::new("t", "g", "src/lib.rs", 9);
        let id = SITE.id(None);
        assert_eq!(SITE.id(None), id);
        assert_ne!(OTHER.id(None), id);
        let info = &functions()[id as usize];
        assert_eq!(
            (info.name.as_str(), info.file, info.line),
            ("t::f", "src/lib.rs", 3)
        );
    }
}
