//! `cargo wasmprof test`: the package's tests, built for WebAssembly with
//! each test marked, run by cargo with wasmprof as the target runner, and
//! gathered into one profile.
//!
//! Cargo does what it always does for `cargo test` (builds, runs each test
//! binary, prints its progress, stops at the first failing binary unless
//! `--no-fail-fast`); the runner ([`runner`]) leaves each binary's profile
//! in a session directory; afterwards the profiles are merged, the tests
//! found in them ([`results`]) and the slowest named.

mod binary;
pub(crate) mod bindgen_test;
mod doctest;
mod results;
pub(crate) mod runner;
pub(crate) mod session;
mod test_names;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::build::options::HostKind;
use crate::build::options::{BuildOptions, Timer};
use crate::build::{self, Workspace, wasmprof_dir};
use crate::hosts::options::HostOptions;
use crate::hosts::select;
use crate::terminal;
use session::{SESSION_VAR, Session};

/// The two targets tests build for.
const WASI: &str = "wasm32-wasip1";
/// WASI with threads (wasi-threads): only wasmtime starts them.
const WASI_THREADS: &str = "wasm32-wasip1-threads";
/// WASI 0.2: each test binary a component, which only wasmtime runs.
const WASI_P2: &str = "wasm32-wasip2";
const BINDGEN: &str = "wasm32-unknown-unknown";

/// What `cargo wasmprof test` is asked for, as plain data: the command line
/// fills it in (`cli::TestArgs`).
#[derive(Debug, Clone)]
pub(crate) struct TestOptions {
    /// The build of the tests: packages, profile, timer, memory, the oracle,
    /// crate-wide instrumentation; `host` is the one asked for or the
    /// default.
    pub build: BuildOptions,
    /// `--host` as given: `None` lets the target choose.
    pub host_kind: Option<HostKind>,
    /// How each test binary is given to its host.
    pub host: HostOptions,
    /// `--lib`, `--bins`, `--test NAME`, `--tests`, `--bench NAME`,
    /// `--benches`: the test targets, as cargo test takes them.
    pub lib: bool,
    pub bins: bool,
    pub test_targets: Vec<String>,
    pub tests: bool,
    pub bench_targets: Vec<String>,
    pub benches: bool,
    /// `--no-fail-fast`: every test binary runs, even when one fails.
    pub no_fail_fast: bool,
    /// Only the tests whose names contain this (the harness's filter).
    pub testname: Option<String>,
    /// `--per-test`: one profile per test too, named after the test.
    pub per_test: bool,
    /// How many of the slowest tests the summary lists.
    pub top: usize,
}

/// Builds the tests instrumented, runs each binary in its host through the
/// target runner, and merges their profiles; returns cargo test's exit
/// status.
pub(crate) fn test(
    options: &TestOptions,
    workspace: &Workspace,
    command_line: Vec<String>,
) -> Result<i32> {
    refuse_run_only_flags(options)?;
    let host_options = options.host.clone();
    let build_args = BuildOptions {
        // Whether timed functions stay out of line for a sampler.
        sampled: crate::launch::sampled_build(&host_options),
        ..options.build.clone()
    };
    let packages = workspace.selected_packages(&build_args.cargo)?;
    let target = target_for(options, &packages)?;
    check_host_for_target(options.host_kind, &target)?;
    // Before the long build: is the host there? (Node at least, without
    // --host: a run_in_browser binary finds out about Chromium when it runs.)
    let default_host = if target == WASI_THREADS || target == WASI_P2 {
        HostKind::Wasmtime
    } else {
        HostKind::Node
    };
    drop(select::select(
        options.host_kind.unwrap_or(default_host),
        &host_options,
    )?);
    let root = workspace.metadata.workspace_root.as_std_path();
    build::ensure_target(&target, root, build_args.cargo.offline)?;
    let prepared = build::prepare(&build_args, workspace, &packages, true)?;
    let tests = prepared
        .shadow
        .as_ref()
        .map(|s| s.tests.clone())
        .unwrap_or_default();
    let macro_tests: usize = prepared
        .shadow
        .as_ref()
        .map(|s| s.crates.iter().map(|(_, stats)| stats.macro_tests).sum())
        .unwrap_or_default();
    if tests.is_empty() && macro_tests == 0 {
        terminal::warning("no #[test] or #[wasm_bindgen_test] function was found to mark");
    }
    let target_dir = workspace.target_dir(&build_args.cargo);
    let session_dir = new_session_dir(&target_dir)?;
    let cwd = std::env::current_dir().context("the current directory is unreadable")?;
    let session = Session {
        dir: session_dir.clone(),
        host: options.host_kind,
        host_args: absolute_dirs(&host_options, &cwd),
        package: packages
            .iter()
            .map(|p| p.name.to_string())
            .collect::<Vec<_>>()
            .join("+"),
        command: command_line.clone(),
        small: prepared.small,
        offline: build_args.cargo.offline,
        sample: build::instrument_mode(&build_args) == Some(build::Instrument::Timed)
            && !options.host.no_sample,
        copy_of: prepared
            .shadow
            .as_ref()
            .map(|s| (s.workspace_copy.clone(), root.to_path_buf())),
    };
    let session_file = session_dir.join("session.json");
    session.write(&session_file)?;
    let manifest = manifest_to_test(options, workspace, &cwd)?;
    let mut command = cargo_test(options, &build_args, &prepared, &target, &manifest)?;
    command.env(SESSION_VAR, &session_file);
    terminal::status(
        "Testing",
        &format!(
            "{} for {target} ({})",
            session.package,
            match options.build.timer {
                Timer::Host => "instrumented, timer host",
                Timer::None | Timer::Floor => {
                    "instrumented, timer none: counts only"
                }
            }
        ),
    );
    // cargo builds and runs the tests (doctests compiled against the
    // runtime included) in one command: no other build of this kind may
    // overwrite what they run until it is done.
    let lock = crate::dir_lock::DirLock::acquire(&prepared.build_dir)?;
    let status = command.status().context("could not run cargo")?;
    drop(lock);
    let code = status.code().unwrap_or(101);
    let gathered = results::gather(&session_dir, &tests, &command_line)?;
    match gathered {
        Some(gathered) => {
            let save = results::SaveOptions {
                top: options.top,
                per_test: options.per_test,
            };
            results::save(&gathered, &target_dir, &session.package, &save)?;
        }
        None => terminal::warning(
            "no test binary left a profile (did the build fail, or did no test binary run?)",
        ),
    }
    let _ = std::fs::remove_dir_all(&session_dir);
    Ok(code)
}

/// Flags of `run` that have no meaning for a test binary.
fn refuse_run_only_flags(options: &TestOptions) -> Result<()> {
    let h = &options.host;
    let refused = [
        (
            h.invoke.is_some(),
            "--invoke (tests are run by their harness)",
        ),
        (h.until_exit, "--until-exit"),
        (h.sample, "--sample"),
        (h.page.is_some(), "--page"),
        (
            h.requests.is_some() || h.path.is_some(),
            "--requests and --path (for an HTTP handler under `cargo wasmprof run`)",
        ),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        bail!("{flag} is not for `cargo wasmprof test`");
    }
    Ok(())
}

/// `--target`, else wasm32-unknown-unknown for packages that use
/// wasm-bindgen-test and wasm32-wasip1 for the others.
fn target_for(options: &TestOptions, packages: &[&cargo_metadata::Package]) -> Result<String> {
    if let Some(target) = &options.build.cargo.target {
        if ![WASI, WASI_THREADS, WASI_P2, BINDGEN].contains(&target.as_str()) {
            bail!(
                "--target {target}: `cargo wasmprof test` runs tests built for {WASI}, \
                 {WASI_THREADS} or {WASI_P2} (the standard harness) or {BINDGEN} \
                 (wasm-bindgen-test)"
            );
        }
        return Ok(target.clone());
    }
    let uses_bindgen_test =
        |p: &cargo_metadata::Package| p.dependencies.iter().any(|d| d.name == "wasm-bindgen-test");
    let bindgen: Vec<&str> = packages
        .iter()
        .filter(|p| uses_bindgen_test(p))
        .map(|p| p.name.as_str())
        .collect();
    if !bindgen.is_empty() && bindgen.len() != packages.len() {
        bail!(
            "some of the selected packages use wasm-bindgen-test ({}) and some do not: test \
             them apart (-p NAME), or choose one --target",
            bindgen.join(", ")
        );
    }
    Ok(if bindgen.is_empty() { WASI } else { BINDGEN }.to_owned())
}

/// Refuses a host that cannot run what the target builds.
fn check_host_for_target(host: Option<HostKind>, target: &str) -> Result<()> {
    if target == WASI_THREADS {
        return match host {
            None | Some(HostKind::Wasmtime) => Ok(()),
            Some(other) => bail!(
                "--target {WASI_THREADS} builds tests with threads, and --host {} cannot start \
                 threads (it has no wasi-threads): leave --host out or give --host wasmtime, \
                 which starts every thread and profiles each",
                host_name(other)
            ),
        };
    }
    if target == WASI_P2 {
        return match host {
            None | Some(HostKind::Wasmtime) => Ok(()),
            Some(other) => bail!(
                "--target {WASI_P2} builds each test binary as a WASI 0.2 component, and \
                 --host {} cannot run components: leave --host out or give --host wasmtime",
                host_name(other)
            ),
        };
    }
    let binary = if target == WASI {
        binary::Binary::Wasi
    } else {
        binary::Binary::BindgenTest
    };
    match host {
        Some(kind) => binary::check_host(kind, binary, &format!("--host {}", host_name(kind))),
        None => Ok(()),
    }
}

fn host_name(kind: HostKind) -> String {
    clap::ValueEnum::to_possible_value(&kind)
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// `<target>/wasmprof/test/<ms>-<pid>`: one per `cargo wasmprof test`.
fn new_session_dir(target_dir: &Path) -> Result<PathBuf> {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let dir = wasmprof_dir(target_dir)
        .join("test")
        .join(format!("{millis}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    Ok(dir)
}

/// `--dir` paths as given are relative to where the user typed the
/// command; the runner runs elsewhere.
fn absolute_dirs(host: &HostOptions, cwd: &Path) -> HostOptions {
    let mut host = host.clone();
    for dir in &mut host.dir {
        let (path, guest) = match dir.split_once("::") {
            Some((path, guest)) => (path.to_owned(), Some(guest.to_owned())),
            None => (dir.clone(), None),
        };
        let absolute = cwd.join(&path).display().to_string();
        // The guest keeps the name the user gave.
        *dir = format!("{absolute}::{}", guest.unwrap_or(path));
    }
    host
}

/// The manifest cargo would pick: `--manifest-path`, else the one in or
/// above the current directory.
fn manifest_to_test(options: &TestOptions, workspace: &Workspace, cwd: &Path) -> Result<PathBuf> {
    if let Some(path) = &options.build.cargo.manifest_path {
        return std::path::absolute(path)
            .with_context(|| format!("cannot make {} absolute", path.display()));
    }
    let root = workspace.metadata.workspace_root.as_std_path();
    let mut dir = Some(cwd);
    while let Some(here) = dir {
        let manifest = here.join("Cargo.toml");
        if manifest.is_file() && here.starts_with(root) {
            return Ok(manifest);
        }
        dir = here.parent();
    }
    Ok(root.join("Cargo.toml"))
}

/// `cargo test` with the runner, the instrumentation and the user's flags.
fn cargo_test(
    options: &TestOptions,
    build_args: &BuildOptions,
    prepared: &build::Prepared,
    target: &str,
    manifest: &Path,
) -> Result<Command> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    let exe = std::env::current_exe().context("cannot find this program's own path")?;
    let runner = toml_edit::Array::from_iter([
        exe.display().to_string(),
        "wasmprof".to_owned(),
        "test-runner".to_owned(),
    ]);
    let profile = build::profile_name(&build_args.cargo);
    command
        .arg("test")
        .args(["--target", target])
        .arg("--target-dir")
        .arg(&prepared.build_dir)
        .arg("--manifest-path")
        .arg(prepared.manifest_for(manifest))
        .arg("--config")
        .arg(format!("target.{target}.runner={runner}"))
        // Names must survive into the module, whatever the profile says.
        .arg("--config")
        .arg(format!("profile.{profile}.strip=false"));
    let c = &build_args.cargo;
    for package in &c.package {
        command.args(["-p", package]);
    }
    if c.workspace {
        command.arg("--workspace");
    }
    for exclude in &c.exclude {
        command.args(["--exclude", exclude]);
    }
    if let Some(bin) = &c.bin {
        command.args(["--bin", bin]);
    }
    if options.lib {
        command.arg("--lib");
    }
    if options.bins {
        command.arg("--bins");
    }
    for test in &options.test_targets {
        command.args(["--test", test]);
    }
    if options.tests {
        command.arg("--tests");
    }
    for bench in &options.bench_targets {
        command.args(["--bench", bench]);
    }
    if options.benches {
        command.arg("--benches");
    }
    if options.no_fail_fast {
        command.arg("--no-fail-fast");
    }
    for features in &c.features {
        command.args(["--features", features]);
    }
    if c.all_features {
        command.arg("--all-features");
    }
    if c.no_default_features {
        command.arg("--no-default-features");
    }
    if c.release {
        command.arg("--release");
    }
    if let Some(profile) = &c.profile {
        command.args(["--profile", profile]);
    }
    if c.locked && prepared.shadow.is_none() {
        command.arg("--locked");
    }
    if c.offline {
        command.arg("--offline");
    }
    if c.quiet {
        command.arg("--quiet");
    }
    for _ in 0..c.verbose {
        command.arg("--verbose");
    }
    if let Some(name) = &options.testname {
        command.arg(name);
    }
    if !options.host.args.is_empty() {
        command.arg("--").args(&options.host.args);
    }
    build::set_max_nodes_env(&mut command, options.build.max_nodes);
    build::set_instrumentation_env(
        &mut command,
        build::Instrumentation {
            mode: build::instrument_mode(build_args),
            frames: build::kept_frames_in_tests(build_args),
            memory: prepared.memory,
            oracle: build_args.oracle != crate::build::options::Oracle::Off,
            kind: prepared.kind.as_ref(),
        },
        target,
        &prepared.extra_rustflags,
    )?;
    Ok(command)
}
