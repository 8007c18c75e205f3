//! What a build is asked for, as plain data: the command line (`cli.rs`)
//! fills it in from its flags, and `build`, `run`, `bench` and `test` pass
//! it on. Nothing here knows clap.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where the module runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum HostKind {
    /// Node.js (wasm-bindgen's `nodejs` bindings; WASI binaries through node:wasi)
    #[default]
    Node,
    /// Headless Chromium, driven through the DevTools protocol (wasm-bindgen's `web` bindings)
    Browser,
    /// wasmtime, embedded: WASI programs (and plain modules with --invoke) without Node
    Wasmtime,
}

impl HostKind {
    /// The `--target` wasm-bindgen generates bindings for.
    pub(crate) fn bindgen_target(self) -> &'static str {
        match self {
            // wasmtime runs no wasm-bindgen module; the Node bindings are
            // as good as any for a build that will be refused.
            HostKind::Node | HostKind::Wasmtime => "nodejs",
            HostKind::Browser => "web",
        }
    }
}

/// Which timer the instrumentation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Timer {
    /// The host's clock around every call: counts and times.
    #[default]
    Host,
    /// No clock at all: exact counts only, the lowest overhead.
    None,
    /// A counter per function and nothing else, no call tree, no profile:
    /// the floor `bench` measures every mode against.
    Floor,
}

/// Cargo's own flags, forwarded as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CargoOptions {
    pub package: Vec<String>,
    pub workspace: bool,
    pub exclude: Vec<String>,
    pub bin: Option<String>,
    pub features: Vec<String>,
    pub all_features: bool,
    pub no_default_features: bool,
    pub release: bool,
    pub profile: Option<String>,
    /// The WebAssembly target; `None` picks one per unit.
    pub target: Option<String>,
    pub target_dir: Option<PathBuf>,
    pub manifest_path: Option<PathBuf>,
    pub locked: bool,
    pub offline: bool,
    pub verbose: u8,
    pub quiet: bool,
}

/// Which functions to instrument without annotations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CrateWideOptions {
    /// Every function of the selected packages.
    pub instrument_all: bool,
    /// These crates too (`NAME[@VERSION]`).
    pub instrument_crate: Vec<String>,
    /// Functions below this size are counted only (or left out).
    pub min_size: Option<usize>,
    /// Count the small functions (`Some(true)`) or leave them out
    /// (`Some(false)`); `None` leaves it to the manifest, then counts them.
    pub count_small: Option<bool>,
    /// Keep counted functions out of line in sampled runs.
    pub keep_counted_frames: bool,
    pub exclude_path: Vec<String>,
    pub include_path: Vec<String>,
}

/// One build of the selected packages to wasm.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BuildOptions {
    pub cargo: CargoOptions,
    pub timer: Timer,
    /// The host the bindings are made for.
    pub host: HostKind,
    /// A plain build, to compare with.
    pub no_instrument: bool,
    /// The call tree's capacity in distinct call paths.
    pub max_nodes: Option<u32>,
    /// Record what each call path allocates (`--memory`).
    pub memory: bool,
    pub crate_wide: CrateWideOptions,
    /// Whether the build's runs are sampled, when the command knows:
    /// instrumented functions then stay out of line for the engine's
    /// sampler, also without a clock; and a timed build whose runs are not
    /// sampled (`--no-sample`) lets the compiler inline them. `None`: as
    /// the timer's runs are by default (timed: sampled; counted: not).
    pub sampled: Option<bool>,
    /// How the counts are checked (`--verify-counts`).
    pub oracle: Oracle,
    /// Built without threads even for a page whose crate has a pool on
    /// web workers: the side of a benchmark that says what threads cost.
    pub without_threads: bool,
}

/// The oracle: a second count of every instrumented function's calls, by
/// counters of its own (`wasmprof_core::oracle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Oracle {
    /// Not in the build.
    #[default]
    Off,
    /// Beside the profiler, in the same run: every count checked
    /// (`--verify-counts`).
    Beside,
    /// Alone, in the bench's floor instead of the profiler: the counts a
    /// plain program reports, for other builds to be held against
    /// (`--oracle-only`, for wasmprof's own tests).
    Only,
}

/// Whether `target` builds programs whose threads a host must start
/// (`wasm32-wasip1-threads`).
pub(crate) fn is_threaded_target(target: &str) -> bool {
    target.ends_with("-threads")
}

/// Whether `target` builds WASI 0.2 components (`wasm32-wasip2`), which
/// only the embedded wasmtime runs.
pub(crate) fn is_component_target(target: &str) -> bool {
    target.ends_with("-wasip2")
}

/// Whether only the embedded wasmtime runs what `target` builds.
pub(crate) fn is_wasmtime_target(target: &str) -> bool {
    is_threaded_target(target) || is_component_target(target)
}
