//! The seam between `run`/`bench` and the programs that run a module. Every
//! host takes the same [`HostConfig`], provides the same host API to the
//! module (`host/host-api.js` for the JavaScript hosts), relays the
//! program's output, and leaves the same two things behind: a
//! [`HostResult`] saying how the run ended and the raw snapshot bytes in
//! `config.snapshot_out`. `run` and `bench` never ask which host it was.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::build::ModuleKind;
use crate::run::options::{HostKind, HostOptions};

/// A program that runs instrumented modules: Node or a browser.
pub trait Host {
    /// What the run is in, for status lines: `Node v20.20.2`.
    fn describe(&self) -> String;

    /// Refuses, before anything is built, modules this host cannot run.
    fn check_kind(&self, kind: ModuleKind) -> Result<()>;

    /// Whether the host has an engine sampler for `--sample`.
    fn samples(&self) -> bool {
        true
    }

    /// Runs the module once with `run_dir` as its scratch space. The
    /// program's output reaches the terminal as it happens, or with
    /// `capture` comes back in [`Captured`]. A program that fails is a
    /// result; an error means the host itself could not be used. The result
    /// is `None` when the host ended without saying how the run went.
    fn run(
        &mut self,
        config: &HostConfig,
        run_dir: &Path,
        capture: bool,
    ) -> Result<(Option<HostResult>, Captured)>;
}

/// Finds the host the flags ask for, before anything is built.
pub fn select(kind: HostKind, args: &HostOptions) -> Result<Box<dyn Host>> {
    Ok(match kind {
        HostKind::Node => Box::new(super::node::Node::locate(args)?),
        HostKind::Browser => Box::new(super::browser::Browser::locate(args)?),
        HostKind::Wasmtime => wasmtime(args)?,
    })
}

#[cfg(feature = "wasmtime")]
fn wasmtime(args: &HostOptions) -> Result<Box<dyn Host>> {
    let others = [
        (
            args.node.is_some() || !args.node_arg.is_empty(),
            "--node and --node-arg",
        ),
        (
            args.browser.is_some() || !args.browser_arg.is_empty() || args.page.is_some(),
            "--browser, --browser-arg and --page",
        ),
    ];
    if let Some((_, flags)) = others.iter().find(|(given, _)| *given) {
        anyhow::bail!("{flags} are not for --host wasmtime");
    }
    Ok(Box::new(super::wasmtime_host::Wasmtime::new()?))
}

#[cfg(not(feature = "wasmtime"))]
fn wasmtime(_: &HostOptions) -> Result<Box<dyn Host>> {
    anyhow::bail!(
        "this cargo-wasmprof was built without wasmtime: reinstall it with its default features"
    )
}

/// What a host is told to do.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostConfig {
    pub kind: &'static str,
    pub wasm: PathBuf,
    /// The JS wasm-bindgen generated, for bindgen modules.
    pub js: Option<PathBuf>,
    pub invoke: Option<String>,
    pub args: Vec<String>,
    pub argv: Vec<String>,
    /// What a WASI program may see: directories and environment.
    pub wasi: WasiConfig,
    /// The whole run's bound: a day stands for "no timeout".
    pub timeout_ms: u64,
    /// The run ends only when the program calls `wasmprof::exit`.
    pub until_exit: bool,
    /// Run the engine's own sampler every this many microseconds, and
    /// write its `.cpuprofile` to `cpuprofile_out` (`--sample`).
    pub sample_interval_micros: Option<u32>,
    pub cpuprofile_out: PathBuf,
    pub snapshot_out: PathBuf,
    pub result_out: PathBuf,
    /// For a wasm-bindgen-test binary (kind `bindgen-test`): what to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<BindgenTests>,
    /// A test binary of the standard harness: the host watches its output
    /// for the tests it begins, and tells the runtime (see
    /// `test/harness.rs`).
    pub harness_tests: bool,
}

/// The tests of a wasm-bindgen-test binary to run, chosen as
/// wasm-bindgen-test-runner chooses them.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindgenTests {
    /// The exports (`__wbgt_…`) of the tests to run, in order.
    pub tests: Vec<String>,
    pub include_ignored: bool,
    /// How many the filter left out, for the harness's summary.
    pub filtered: usize,
    pub nocapture: bool,
}

/// The world a WASI program is given, the same in every WASI host.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WasiConfig {
    /// Preopened directories: the path the program uses, and the directory
    /// on this machine it stands for.
    pub preopens: std::collections::BTreeMap<String, PathBuf>,
    /// The program's whole environment.
    pub env: std::collections::BTreeMap<String, String>,
}

/// How a run went, as the host saw it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostResult {
    /// ok | exit | trap | timeout | error | usage
    pub status: String,
    pub message: Option<String>,
    pub exit_code: i32,
    pub return_value: Option<serde_json::Value>,
    pub host: String,
    pub timer_resolution_nanos: Option<f64>,
    pub wall_nanos: u64,
    /// The program proper: entry call to end, without the host's start-up.
    #[serde(default)]
    pub program_nanos: u64,
    pub snapshot: bool,
    pub snapshot_error: Option<String>,
    /// A browser run ended by the grace period while the page still had
    /// work scheduled: what it was (`2 timers, 1 animation frame`).
    #[serde(default)]
    pub pending_work: Option<String>,
    /// The tests the harness ran, in order: libtest's when the host watched
    /// for them (`HostConfig::harness_tests`), `None` for one it then
    /// ignored; wasm-bindgen-test's always.
    #[serde(default)]
    pub harness_tests: Vec<Option<String>>,
}

impl HostResult {
    /// A run that ended before the host could say anything.
    pub fn failed(host: String, message: String, snapshot: bool) -> HostResult {
        HostResult {
            status: "error".into(),
            message: Some(message),
            exit_code: 1,
            return_value: None,
            host,
            timer_resolution_nanos: None,
            wall_nanos: 0,
            program_nanos: 0,
            snapshot,
            snapshot_error: None,
            pending_work: None,
            harness_tests: Vec::new(),
        }
    }
}

/// What the program printed, when its output was captured.
#[derive(Debug, Default)]
pub struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}
