//! The clock the guards read: the host's `prof.getTime` on WebAssembly, a
//! monotonic `Instant` natively and in a WASI 0.2 component (where std reads
//! `wasi:clocks/monotonic-clock`, and no `prof` import can exist). All count
//! milliseconds as an `f64`, the unit of `performance.now()`.

/// Whether calls are timed at all (`--timer host`) or only counted
/// (`--timer none`, which reads no clock).
pub(crate) const TIMED: bool = !cfg!(wasmprof_timer_none);

#[cfg(all(
    target_family = "wasm",
    wasmprof_enabled,
    not(wasmprof_timer_none),
    not(wasmprof_component)
))]
mod imp {
    #[link(wasm_import_module = "prof")]
    unsafe extern "C" {
        /// The host API's clock: milliseconds from any monotonic origin.
        #[link_name = "getTime"]
        fn host_get_time() -> f64;
    }

    #[inline(always)]
    pub(super) fn now() -> f64 {
        // SAFETY: a host function that takes nothing and returns a number.
        unsafe { host_get_time() }
    }
}

#[cfg(any(
    not(target_family = "wasm"),
    all(wasmprof_component, wasmprof_enabled, not(wasmprof_timer_none))
))]
mod imp {
    use std::sync::OnceLock;
    use std::time::Instant;

    pub(super) fn now() -> f64 {
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
    }
}

#[cfg(all(
    target_family = "wasm",
    not(all(wasmprof_enabled, not(wasmprof_timer_none)))
))]
mod imp {
    /// No clock: counts only, or instrumentation off.
    #[inline(always)]
    pub(super) fn now() -> f64 {
        0.0
    }
}

/// The current time in milliseconds, or zero when calls are not timed.
#[inline(always)]
pub(crate) fn now() -> f64 {
    if TIMED { imp::now() } else { 0.0 }
}

/// Milliseconds for the snapshots' bounded waits for other threads
/// (`threads/reading.rs`), in every timer mode: the host's clock on
/// WebAssembly, where `--timer none` reads it for nothing else, and a
/// monotonic `Instant` elsewhere.
#[cfg(not(one_thread))]
pub(crate) fn wait_now() -> f64 {
    wait_clock::now()
}

#[cfg(all(
    not(one_thread),
    target_family = "wasm",
    wasmprof_enabled,
    not(wasmprof_component)
))]
mod wait_clock {
    #[link(wasm_import_module = "prof")]
    unsafe extern "C" {
        #[link_name = "getTime"]
        fn host_get_time() -> f64;
    }

    pub(super) fn now() -> f64 {
        // SAFETY: a host function that takes nothing and returns a number.
        unsafe { host_get_time() }
    }
}

#[cfg(all(
    not(one_thread),
    not(all(target_family = "wasm", wasmprof_enabled, not(wasmprof_component)))
))]
mod wait_clock {
    use std::sync::OnceLock;
    use std::time::Instant;

    pub(super) fn now() -> f64 {
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
    }
}
