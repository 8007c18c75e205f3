//! The seam between `run`/`bench` and the programs that run a module. Every
//! host takes the same [`HostConfig`], provides the same host API to the
//! module (`js/host-api.js` for the JavaScript hosts), relays the
//! program's output, and leaves the same two things behind: a
//! [`HostResult`] saying how the run ended and the raw snapshot bytes in
//! `config.snapshot_out`. `run` and `bench` never ask which host it was.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::build::ModuleKind;

/// A program that runs instrumented modules: Node or a browser.
pub(crate) trait Host {
    /// What the run is in, for status lines: `Node v20.20.2`.
    fn describe(&self) -> String;

    /// Refuses, before anything is built, modules this host cannot run.
    fn check_kind(&self, kind: ModuleKind) -> Result<()>;

    /// Whether the host has an engine sampler for `--sample`.
    fn samples(&self) -> bool {
        true
    }

    /// Whether the host starts the threads of a module built for them
    /// (a shared memory and wasi-threads).
    fn threads(&self) -> bool {
        false
    }

    /// Whether the host runs WASI 0.2 components (`wasm32-wasip2`).
    fn components(&self) -> bool {
        false
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

/// How the host script loads and enters the module (`config.kind` in the
/// scripts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LoadAs {
    /// Through the JS wasm-bindgen generated.
    Bindgen,
    /// The same, built for threads on web workers (a shared memory): run on
    /// a worker, with the page as one more thread (`thread-host.js`).
    BindgenThreads,
    /// A wasm-bindgen-test binary, through its harness.
    BindgenTest,
    /// A WASI program, entered at `_start`.
    Wasi,
    /// A module with neither: `--invoke` names its entry.
    Plain,
}

impl LoadAs {
    /// How a module of this kind is loaded.
    pub(crate) fn module(kind: ModuleKind) -> LoadAs {
        match kind {
            ModuleKind::Bindgen => LoadAs::Bindgen,
            ModuleKind::Plain => LoadAs::Plain,
            ModuleKind::Wasi => LoadAs::Wasi,
        }
    }
}

impl std::fmt::Display for LoadAs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = serde_json::to_value(self).map_err(|_| std::fmt::Error)?;
        f.write_str(word.as_str().unwrap_or_default())
    }
}

/// What a host is told to do.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HostConfig {
    pub kind: LoadAs,
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
    /// `--after` and `--duration`: the part of the run to record.
    #[serde(skip)]
    pub window: Option<WindowSpec>,
    /// Run the engine's own sampler every this many microseconds, and
    /// write its `.cpuprofile` to `cpuprofile_out` (`--sample`).
    pub sample_interval_micros: Option<u32>,
    /// The interval is the user's (`--sample-interval`), kept as given;
    /// else it is the default, which wasmtime's sampler lengthens while
    /// the program's threads keep every core busy (`sampler::Pace`).
    #[serde(default)]
    pub sample_interval_chosen: bool,
    pub cpuprofile_out: PathBuf,
    pub snapshot_out: PathBuf,
    pub result_out: PathBuf,
    /// For a wasm-bindgen-test binary (kind `bindgen-test`): what to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<BindgenTests>,
    /// An HTTP handler component: the requests to serve it.
    pub requests: Option<HttpRequests>,
    /// A test binary of the standard harness: the host watches its output
    /// for the tests it begins, and tells the runtime (see
    /// `suites/test_names.rs`).
    pub harness_tests: bool,
}

/// `--requests N --path PATH`: what an HTTP handler is served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct HttpRequests {
    pub count: u32,
    /// The path and query of each GET.
    pub path: String,
}

/// The part of a run the profile is to cover: from `after` into the run,
/// for `duration` (else to the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WindowSpec {
    pub after: std::time::Duration,
    pub duration: Option<std::time::Duration>,
}

/// The tests of a wasm-bindgen-test binary to run, chosen as
/// wasm-bindgen-test-runner chooses them.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BindgenTests {
    /// The exports (`__wbgt_…`) of the tests to run, in order.
    pub tests: Vec<String>,
    pub include_ignored: bool,
    /// How many the filter left out, for the harness's summary.
    pub filtered: usize,
    pub nocapture: bool,
}

/// The world a WASI program is given, the same in every WASI host.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct WasiConfig {
    /// Preopened directories: the path the program uses, and the directory
    /// on this machine it stands for.
    pub preopens: std::collections::BTreeMap<String, PathBuf>,
    /// The program's whole environment.
    pub env: std::collections::BTreeMap<String, String>,
}

/// How a run went, as the host saw it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HostResult {
    pub status: RunStatus,
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
    /// The part of the run the snapshot covers, when a window was asked for.
    #[serde(default)]
    pub window: Option<wasmprof_profile::profile::Window>,
    /// Display frames the page drew (in the window, when there is one),
    /// counted by the page host whatever the build: a plain build's frame
    /// rate, and a count of the instrumented build's frames made apart
    /// from its runtime.
    #[serde(default)]
    pub display_frames: Option<u64>,
    /// Threads of the program still running when its main thread was done
    /// (a thread pool's idle workers): their calls are not in the profile.
    #[serde(default)]
    pub threads_left_running: usize,
    /// The tests the harness ran, in order: libtest's when the host watched
    /// for them (`HostConfig::harness_tests`), `None` for one it then
    /// ignored; wasm-bindgen-test's always.
    #[serde(default)]
    pub harness_tests: Vec<Option<String>>,
    /// An HTTP handler's requests, as served.
    #[serde(default)]
    pub requests: Option<wasmprof_profile::profile::Requests>,
    /// The interval the sampler slowed to for a while, from its default,
    /// because the program's threads kept every core busy
    /// (`hosts::sampler_pace`); `None` when it kept its interval.
    #[serde(default)]
    pub sampler_slowed_to_micros: Option<u64>,
}

pub(crate) use wasmprof_profile::snapshot::{RunEnding, RunStatus};

impl HostResult {
    /// What the profile keeps of the host's account.
    pub(crate) fn ending(&self) -> RunEnding {
        let mut ending = RunEnding::new(self.host.clone(), self.status);
        ending.message = self.message.clone();
        ending.exit_code = self.exit_code;
        ending.wall_nanos = self.wall_nanos;
        ending.timer_resolution_nanos = self.timer_resolution_nanos;
        ending.pending_work = self.pending_work.clone();
        ending.window = self.window;
        ending.display_frames = self.display_frames;
        ending.threads_left_running = self.threads_left_running;
        ending.requests = self.requests.clone();
        ending
    }

    /// A run under way in `host`, fine so far: the host fills in how it
    /// ends.
    pub(crate) fn started(host: String) -> HostResult {
        HostResult {
            status: RunStatus::Ok,
            message: None,
            exit_code: 0,
            return_value: None,
            host,
            timer_resolution_nanos: None,
            wall_nanos: 0,
            program_nanos: 0,
            snapshot: false,
            snapshot_error: None,
            pending_work: None,
            window: None,
            display_frames: None,
            requests: None,
            threads_left_running: 0,
            harness_tests: Vec::new(),
            sampler_slowed_to_micros: None,
        }
    }

    /// A run that ended before the host could say anything.
    pub(crate) fn failed(host: String, message: String, snapshot: bool) -> HostResult {
        HostResult {
            status: RunStatus::Error,
            message: Some(message),
            exit_code: 1,
            snapshot,
            ..HostResult::started(host)
        }
    }
}

/// What the program printed, when its output was captured.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::{LoadAs, RunStatus};

    /// Node's host script loads every kind of module the Rust side asks
    /// for, under the same words.
    #[test]
    fn node_s_host_script_loads_every_kind_of_module() {
        let script = include_str!("../js/node-host.js");
        let switch = &script[script.find("switch (config.kind)").unwrap()..];
        for kind in [
            LoadAs::Bindgen,
            LoadAs::BindgenTest,
            LoadAs::Wasi,
            LoadAs::Plain,
        ] {
            assert!(
                switch.contains(&format!("case '{kind}':")),
                "node-host.js has no case for {kind}"
            );
        }
    }

    /// Every status word the host scripts can report is one the Rust side
    /// knows: the two sides of the contract are checked against each
    /// other, not kept alike by hand.
    #[test]
    fn every_status_the_host_scripts_report_is_a_run_status() {
        let scripts = [
            include_str!("../js/host-api.js"),
            include_str!("../js/node-host.js"),
            include_str!("../js/page-host.js"),
            include_str!("../js/page-watch.js"),
            include_str!("../js/bindgen-test.js"),
        ];
        let mut words = Vec::new();
        for script in scripts {
            for marker in ["status: '", "status = '", "status === '"] {
                for (at, _) in script.match_indices(marker) {
                    let rest = &script[at + marker.len()..];
                    words.push(&rest[..rest.find('\'').unwrap()]);
                }
            }
        }
        assert!(words.len() >= 6, "{words:?}");
        for word in words {
            let status = RunStatus::from_report(Some(word));
            assert_eq!(status.as_str(), word, "the scripts' `{word}`");
        }
        assert_eq!(RunStatus::from_report(Some("lost")), RunStatus::Error);
        assert_eq!(RunStatus::from_report(None), RunStatus::Error);
    }

    /// The host scripts' own tests (`js/tests/*.test.js`, under `node
    /// --test`): node-host.js and host-api.js run against small modules
    /// assembled in JavaScript, every ending of a run included, without
    /// building any Rust to wasm. The statuses they may report are this
    /// enum's, passed to them.
    #[test]
    fn the_host_scripts_pass_their_own_tests() {
        use RunStatus::*;
        let all = [Ok, Exit, Trap, Timeout, Error, Usage, Interrupted];
        // A new status must be added above: this match stops compiling.
        for status in all {
            match status {
                Ok | Exit | Trap | Timeout | Error | Usage | Interrupted => {}
            }
        }
        let statuses: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/js/tests");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.to_string_lossy().ends_with(".test.js"))
            .collect();
        files.sort();
        assert!(files.len() >= 2, "{files:?}");
        let node = std::env::var_os("WASMPROF_NODE").unwrap_or_else(|| "node".into());
        let output = std::process::Command::new(&node)
            .arg("--test")
            .args(&files)
            .env("WASMPROF_RUN_STATUSES", statuses.join(","))
            .output()
            .unwrap_or_else(|e| panic!("Node.js is needed for the host scripts' tests ({node:?}: {e}); install it (apt-get install nodejs)"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "node --test failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // Every test ran, and none was skipped.
        assert!(
            stdout.contains("\n# fail 0\n") && stdout.contains("\n# skipped 0\n"),
            "{stdout}"
        );
        assert!(!stdout.contains("\n# pass 0\n"), "{stdout}");
    }
}
