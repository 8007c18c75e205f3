//! What a profile file is, apart from how it is read: the error type
//! names the kind, and every reader returns that error.

use std::fmt;

/// What a profile file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputKind {
    /// A wasmprof profile, from `cargo wasmprof run`.
    Wasmprof,
    /// A `.cpuprofile` (or `Profiler.stop`'s result).
    CpuProfile,
    /// A JS Self-Profiling API trace.
    SelfProfilingTrace,
    /// A Firefox profile, as the Gecko profiler writes it.
    GeckoProfile,
    /// A profile in the Firefox Profiler's own format: its "Download",
    /// wasmtime's guest profiler's, samply's.
    FirefoxProfilerProfile,
    /// The runtime's snapshot bytes (`WPRF…`), as a component writes them
    /// to `$WASMPROF_SNAPSHOT` under a host other than `cargo wasmprof run`.
    Snapshot,
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputKind::Wasmprof => "a wasmprof profile",
            InputKind::CpuProfile => "a .cpuprofile",
            InputKind::SelfProfilingTrace => "a JS Self-Profiling trace",
            InputKind::Snapshot => "a wasmprof snapshot",
            InputKind::GeckoProfile => "a Firefox profile",
            InputKind::FirefoxProfilerProfile => "a Firefox Profiler profile",
        })
    }
}
