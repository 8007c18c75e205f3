//! # wasmprof-core
//!
//! The runtime of the wasmprof profiler: call sites, the calling-context
//! tree, the clock, futures, and the snapshot a host reads. Users depend on
//! `wasmprof-rt` (imported as `wasmprof`), which re-exports all of this with
//! the `#[wasmprof::instrument]` attribute. This crate has no proc macro, so
//! that the crates the attribute's own implementation depends on (syn,
//! proc-macro2, quote, unicode-ident) can be instrumented too: `cargo
//! wasmprof` writes their guards as calls of [`__instrument_body!`].

#[doc(hidden)]
pub mod animation_frames;
mod calibration;
mod clock;
#[cfg(all(wasmprof_component, wasmprof_enabled))]
mod component;
mod count;
mod exit;
mod future;
mod future_stats;
mod guard;
#[doc(hidden)]
pub mod harness;
mod memory;
#[cfg(any(wasmprof_oracle, test))]
mod oracle;
mod site;
#[cfg(not(one_thread))]
mod site_block;
#[doc(hidden)]
pub mod snapshot;
mod spin;
mod state;
mod thread_state;
#[cfg(not(one_thread))]
mod threads;
mod timed_call;
mod tree;

pub use exit::exit;
pub use memory::Recording;

/// Whether this build records profiles (built by `cargo wasmprof`).
pub const ENABLED: bool = cfg!(wasmprof_enabled);

/// Whether calls are timed; `false` with `--timer none` (counts only).
pub const TIMED: bool = ENABLED && clock::TIMED;

/// What the attribute's expansion refers to. Not a public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(not(one_thread))]
    pub use crate::count::ThreadCount;
    pub use crate::count::{CountSite, count, count_bare};
    pub use crate::future::Instrumented;
    pub use crate::guard::{Guard, enter, enter_test};
    #[cfg(any(wasmprof_oracle, test))]
    pub use crate::oracle::OracleSite;
    pub use crate::site::{Site, SiteCache};
    #[cfg(not(one_thread))]
    pub use crate::site_block::SiteBlock;
    /// The bench's floor with threads counts in a thread-local of its own.
    pub use std::thread_local;
}

/// The body of an instrumented function: a guard around the original body
/// when instrumentation is on.
///
/// `#[wasmprof::instrument]` expands to a call of this macro; it is defined
/// here, where the `wasmprof_enabled` cfg is known, so that the proc macro
/// needs no knowledge of how the crate was built.
#[cfg(wasmprof_enabled)]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_body {
    ($(__slot = $space:ident $index:literal,)? name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        static __WASMPROF_SITE: $crate::__private::Site =
            $crate::__private::Site::new(::core::module_path!(), $name, ::core::file!(), $line)
                .marked(__wasmprof_here, $given);
        $crate::__name_marker!(__WASMPROF_SITE);
        let __wasmprof_guard = $crate::__enter!(enter, __WASMPROF_SITE, $self_type $(, $space $index)?);
        $crate::__oracle_hit!($name, $given, $line, $self_type);
        $body
    }};
    (test, name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        static __WASMPROF_SITE: $crate::__private::Site =
            $crate::__private::Site::new(::core::module_path!(), $name, ::core::file!(), $line)
                .marked(__wasmprof_here, $given)
                .test();
        $crate::__name_marker!(__WASMPROF_SITE);
        let __wasmprof_guard = $crate::__enter!(enter_test, __WASMPROF_SITE, $self_type);
        $crate::__oracle_hit!($name, $given, $line, $self_type);
        $body
    }};
    // Not `#[used]`: its address is taken (by the marker, and by the site
    // itself), which keeps it whole for the scan; `#[used]` kept the
    // optimiser from keeping its counter in a register across calls, and
    // cost `patterns` 0.2x of plain when timed.
    (count, $(__slot = $space:ident $index:literal,)? name = $name:expr, given = false, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        $crate::__count_cell!(__WASMPROF_SITE $(, $space $index)?);
        static __WASMPROF_SITE: $crate::__private::CountSite = $crate::__counted_in!(
            $crate::__private::CountSite::new(
                ::core::module_path!(),
                $name,
                ::core::file!(),
                $line
            )
            .marked(__wasmprof_here, false)
            .at(&__WASMPROF_SITE)
        );
        $crate::__name_marker!(__WASMPROF_SITE);
        $crate::__count_bare!(__WASMPROF_SITE, $self_type $(, $space $index)?);
        $crate::__oracle_hit!($name, false, $line, $self_type);
        $body
    }};
    (count, $(__slot = $space:ident $index:literal,)? name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        static __WASMPROF_SITE: $crate::__private::CountSite = $crate::__private::CountSite::new(
            ::core::module_path!(),
            $name,
            ::core::file!(),
            $line,
        )
        .marked(__wasmprof_here, $given);
        $crate::__name_marker!(__WASMPROF_SITE);
        $crate::__count_calls!(__WASMPROF_SITE, count, $self_type $(, $space $index)?);
        $crate::__oracle_hit!($name, $given, $line, $self_type);
        $body
    }};
}

/// The guard of one call of `$site`, by `enter` or `enter_test`, with the
/// site's cache of nodes: with one thread, a static of its own.
#[cfg(one_thread)]
#[doc(hidden)]
#[macro_export]
macro_rules! __enter {
    ($enter:ident, $site:ident, $self_type:expr $(, $space:ident $index:literal)?) => {{
        static __WASMPROF_CACHE: $crate::__private::SiteCache = $crate::__private::SiteCache::new();
        $crate::__private::$enter(&$site, &__WASMPROF_CACHE, $self_type)
    }};
}

/// With threads, each thread's cache of the site is its slot in the
/// crate's block (see `site_block`), or a thread-local of its own for a
/// site without one (see `SiteCache`).
#[cfg(not(one_thread))]
#[doc(hidden)]
#[macro_export]
macro_rules! __enter {
    ($enter:ident, $site:ident, $self_type:expr, $space:ident $index:literal) => {
        $crate::__in_block!(|block| $crate::__private::$enter(&$site, &block.$space[$index], $self_type))
    };
    ($enter:ident, $site:ident, $self_type:expr) => {{
        $crate::__private::thread_local! {
            static __WASMPROF_CACHE: $crate::__private::SiteCache = const { $crate::__private::SiteCache::new() };
        }
        __WASMPROF_CACHE.with(|cache| $crate::__private::$enter(&$site, cache, $self_type))
    }};
}

/// The crate's block of sites' thread state (see `site_block`), which
/// `cargo wasmprof` declares at each root of a crate it instruments
/// crate-wide: `FULL` full sites and `COUNTED` count-only ones, numbered
/// by the rewrite. Only where a site's state is a thread's own and
/// recorded: with threads, instrumented or the bench's floor.
#[cfg(all(
    not(one_thread),
    any(wasmprof_enabled, all(wasmprof_floor, not(wasmprof_oracle)))
))]
#[doc(hidden)]
#[macro_export]
macro_rules! __site_block {
    ($full:literal, $counted:literal) => {
        #[doc(hidden)]
        #[allow(dead_code, unreachable_pub, missing_docs)]
        pub(crate) mod __wasmprof_block {
            $crate::__private::thread_local! {
                pub(crate) static BLOCK: $crate::__private::SiteBlock<$full, $counted> =
                    const { $crate::__private::SiteBlock::new() };
            }
        }
    };
}

/// Elsewhere (one thread, instrumentation off, the oracle's floor): the
/// sites keep their state as they do without the rewrite, or have none.
#[cfg(not(all(
    not(one_thread),
    any(wasmprof_enabled, all(wasmprof_floor, not(wasmprof_oracle)))
)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __site_block {
    ($full:literal, $counted:literal) => {};
}

/// `$with`, a closure, called with the running thread's block of the
/// crate the expansion is in. `crate` is the call site's: a path in a
/// `macro_rules!` expansion resolves where the macro is used.
#[cfg(not(one_thread))]
#[doc(hidden)]
#[macro_export]
#[allow(clippy::crate_in_macro_def)] // the call site's crate is the point
macro_rules! __in_block {
    ($with:expr) => {
        crate::__wasmprof_block::BLOCK.with($with)
    };
}

/// With threads on WebAssembly, a count-only site found by the scan of
/// static data: each thread's counter, a thread-local of the site's own,
/// and the function that gives its place (see `CountSite`).
#[cfg(all(target_family = "wasm", not(one_thread)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __count_cell {
    ($site:ident, $space:ident $index:literal) => {
        fn __wasmprof_calls() -> usize {
            $crate::__in_block!(|block| block.$space[$index].place())
        }
        $crate::__keep_site!($site);
    };
    ($site:ident) => {
        $crate::__private::thread_local! {
            static __WASMPROF_CALLS: $crate::__private::ThreadCount =
                const { $crate::__private::ThreadCount::new() };
        }
        fn __wasmprof_calls() -> usize {
            __WASMPROF_CALLS.with($crate::__private::ThreadCount::place)
        }
    };
}

/// Elsewhere: nothing.
#[cfg(not(all(target_family = "wasm", not(one_thread))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __count_cell {
    ($site:ident $(, $space:ident $index:literal)?) => {};
}

/// Keeps a count-only site with a slot in its crate's block in the module
/// (threads on WebAssembly): nothing on a call's path refers to the site
/// (see `SiteBlock::count`), and the snapshot's scan of static data must
/// find it. Nothing reads the reference, and the site holds no counter, so
/// it costs the call nothing.
#[cfg(all(target_family = "wasm", not(one_thread)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __keep_site {
    ($site:ident) => {
        #[used]
        static __WASMPROF_KEEP: &$crate::__private::CountSite = &$site;
    };
}

/// The site, told where threads count its calls (threads on WebAssembly).
#[cfg(all(target_family = "wasm", not(one_thread)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __counted_in {
    ($site:expr) => {
        $site.counted_in(__wasmprof_calls)
    };
}

/// Elsewhere: the site as it is.
#[cfg(not(all(target_family = "wasm", not(one_thread))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __counted_in {
    ($site:expr) => {
        $site
    };
}

/// One call of a count-only site whose name was not given by hand: a bare
/// increment of the thread's counter with threads on WebAssembly, else as
/// `__count_calls!`.
#[cfg(all(target_family = "wasm", not(one_thread)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __count_bare {
    ($site:ident, $self_type:expr, $space:ident $index:literal) => {{
        let _: ::core::option::Option<fn() -> &'static str> = $self_type;
        $crate::__in_block!(|block| block.count(&block.$space[$index]))
    }};
    ($site:ident, $self_type:expr) => {{
        let _: ::core::option::Option<fn() -> &'static str> = $self_type;
        __WASMPROF_CALLS.with(|calls| calls.add(&$site))
    }};
}

#[cfg(not(all(target_family = "wasm", not(one_thread))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __count_bare {
    ($site:ident, $self_type:expr $(, $space:ident $index:literal)?) => {
        $crate::__count_calls!($site, count_bare, $self_type $(, $space $index)?)
    };
}

/// One call of the count-only site `$site`, by `count` or `count_bare`:
/// with one thread, its static's own counter.
#[cfg(one_thread)]
#[doc(hidden)]
#[macro_export]
macro_rules! __count_calls {
    ($site:ident, $count:ident, $self_type:expr $(, $space:ident $index:literal)?) => {
        $crate::__private::$count(&$site, $self_type)
    };
}

/// With threads, a thread-local counter of the site's own, which each
/// thread adds to with a plain increment, an offset from its TLS block's
/// base: a counter in the site would take an atomic read-modify-write, a
/// fence on WebAssembly, and have the threads fight over its cache line.
#[cfg(not(one_thread))]
#[doc(hidden)]
#[macro_export]
macro_rules! __count_calls {
    ($site:ident, $count:ident, $self_type:expr, $space:ident $index:literal) => {
        $crate::__in_block!(|block| $crate::__private::$count(
            &$site,
            block.$space[$index].calls(),
            $self_type
        ))
    };
    ($site:ident, $count:ident, $self_type:expr) => {{
        $crate::__private::thread_local! {
            static __WASMPROF_CALLS: ::core::cell::Cell<u64> = const { ::core::cell::Cell::new(0) };
        }
        __WASMPROF_CALLS.with(|calls| $crate::__private::$count(&$site, calls, $self_type))
    }};
}

/// The name marker of the site `$site` (see `site::Marker`): a function
/// nested in the instrumented one, which rustc names after it. It returns
/// its site's address so that no two markers have the same body, which the
/// linker could fold into one.
#[cfg(any(wasmprof_enabled, wasmprof_oracle))]
#[doc(hidden)]
#[macro_export]
macro_rules! __name_marker {
    ($site:ident) => {
        fn __wasmprof_here() -> usize {
            ::core::ptr::addr_of!($site) as usize
        }
    };
}

/// The oracle's count of one call (see `oracle.rs`), made beside the
/// runtime's, in the function whose name marker `__wasmprof_here` is in
/// scope: a static of its own and one atomic add, nothing shared with the
/// runtime. Nothing at all without `--verify-counts`.
///
/// Made after the runtime's entry, not before: a worker's first call
/// registers its thread and measures its clock first, which takes a while
/// on a busy machine; counted before it, that call was in the oracle and
/// not yet in the worker's record, and a snapshot taken meanwhile (the
/// end of a run whose pool was just starting) found the two apart. Made
/// after, the oracle counts only calls already recorded, give or take the
/// few instructions between the two, and a call recorded while the
/// snapshot reads shows in the oracle's count moving, which the snapshot
/// reads again for (`snapshot.rs`).
#[cfg(wasmprof_oracle)]
#[doc(hidden)]
#[macro_export]
macro_rules! __oracle_hit {
    ($name:expr, $given:expr, $line:expr, $self_type:expr) => {{
        static __WASMPROF_ORACLE: $crate::__private::OracleSite =
            $crate::__private::OracleSite::new(
                __wasmprof_here,
                ::core::module_path!(),
                $name,
                ::core::file!(),
                $line,
                $given,
            );
        __WASMPROF_ORACLE.hit($self_type);
    }};
}

/// Without `--verify-counts`: nothing.
#[cfg(not(wasmprof_oracle))]
#[doc(hidden)]
#[macro_export]
macro_rules! __oracle_hit {
    ($name:expr, $given:expr, $line:expr, $self_type:expr) => {};
}

/// An `async fn`, as `#[wasmprof::instrument]` hands it over: `on`, the
/// function returning its body as an [`Instrumented`](__private::Instrumented)
/// future, when instrumentation is on; else `off`, the function as written.
#[cfg(wasmprof_enabled)]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_async {
    (on = { $($on:tt)* } off = { $($off:tt)* }) => {
        $($on)*
    };
}

/// Instrumentation off, or the bench's floor (which counts synchronous
/// calls only): the `async fn` as written.
#[cfg(not(wasmprof_enabled))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_async {
    (on = { $($on:tt)* } off = { $($off:tt)* }) => {
        $($off)*
    };
}

/// The body of an `async fn` that must stay one (another attribute macro
/// rewrites it): `on`, awaiting the body as an instrumented future, when
/// instrumentation is on; else `off`, the body as written.
#[cfg(wasmprof_enabled)]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_async_body {
    (on = { $($on:tt)* } off = { $($off:tt)* }) => {
        { $($on)* }
    };
}

/// Instrumentation off: the body of the `async fn` as written.
#[cfg(not(wasmprof_enabled))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_async_body {
    (on = { $($on:tt)* } off = { $($off:tt)* }) => {
        { $($off)* }
    };
}

/// The return type of an instrumented `async fn`: a future of its output.
///
/// Written here, in an edition-2024 crate, because the capture rules of
/// `impl Trait` follow the edition of the tokens: like the `async fn` it
/// replaces, the type then captures every lifetime of the signature, elided
/// ones too, whatever the edition of the crate it is expanded in.
#[doc(hidden)]
#[macro_export]
macro_rules! __future_of {
    ($output:ty) => {
        impl ::core::future::Future<Output = $output>
    };
}

/// The floor with `--verify-counts`: the oracle's counter is the only
/// instrumentation, a plain program that reports a count per function.
#[cfg(all(wasmprof_floor, wasmprof_oracle, not(wasmprof_enabled)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_body {
    ($(test,)? $(count,)? $(__slot = $space:ident $index:literal,)? name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        static __WASMPROF_ORACLE_ONLY: $crate::__private::OracleSite =
            $crate::__private::OracleSite::new(
                __wasmprof_here,
                ::core::module_path!(),
                $name,
                ::core::file!(),
                $line,
                $given,
            );
        $crate::__name_marker!(__WASMPROF_ORACLE_ONLY);
        __WASMPROF_ORACLE_ONLY.hit($self_type);
        $body
    }};
}

/// `cargo wasmprof bench`'s floor: one counter increment per call, nothing
/// else. Without threads a static's: an atomic read-modify-write, which
/// the optimiser keeps although nothing reads the counter, and which
/// without the atomics feature is a plain load, add and store; no
/// `unsafe`, so that crates that forbid it build the floor too.
#[cfg(all(
    wasmprof_floor,
    not(wasmprof_oracle),
    not(wasmprof_enabled),
    one_thread
))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_body {
    ($(test,)? $(count,)? $(__slot = $space:ident $index:literal,)? name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        static __WASMPROF_CALLS: ::core::sync::atomic::AtomicU64 =
            ::core::sync::atomic::AtomicU64::new(0);
        __WASMPROF_CALLS.fetch_add(1, ::core::sync::atomic::Ordering::Relaxed);
        $body
    }};
}

/// The floor with threads: a thread-local counter, as the runtime's own
/// are. An atomic read-modify-write is a fence on WebAssembly, and the
/// threads would fight over its cache line: the floor would cost more
/// than the instrumentation it is the floor of.
#[cfg(all(
    wasmprof_floor,
    not(wasmprof_oracle),
    not(wasmprof_enabled),
    not(one_thread)
))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_body {
    ($(test,)? $(count,)? __slot = $space:ident $index:literal, name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        $crate::__in_block!(|block| block.$space[$index].floor_add());
        $body
    }};
    ($(test,)? $(count,)? name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {{
        $crate::__private::thread_local! {
            static __WASMPROF_CALLS: ::core::cell::Cell<u64> = const { ::core::cell::Cell::new(0) };
        }
        __WASMPROF_CALLS.with(|calls| calls.set(calls.get().wrapping_add(1)));
        $body
    }};
}

/// Instrumentation off: the body, exactly as written.
#[cfg(all(not(wasmprof_enabled), not(wasmprof_floor)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instrument_body {
    ($(test,)? $(count,)? $(__slot = $space:ident $index:literal,)? name = $name:expr, given = $given:expr, line = $line:expr, self_type = $self_type:expr, body = $body:block) => {
        $body
    };
}
