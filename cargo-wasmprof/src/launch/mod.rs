//! Launching a built module, the steps `run`, `serve`, `bench` and `test`
//! share: the module given to a host (the config its script is told),
//! launched, and what it left made into a saved profile with its summary.

pub(crate) mod verified_counts;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use wasmprof_wire::Snapshot;

use crate::build;
use crate::build::{BuiltModule, ModuleKind};
use crate::hosts::host::{self, Captured, Host, HostConfig, HostResult, RunStatus};
use crate::hosts::options::HostOptions;
use crate::hosts::wasi;
use crate::terminal;
use crate::terminal::seconds_or_millis;
use wasmprof_profile::profile;
use wasmprof_profile::snapshot::RunContext;

/// Without `--timeout` the run is bounded only by this (V8 needs a number).
const NO_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// What the profile says about the run besides its measurements.
pub(crate) fn run_context(
    module: &BuiltModule,
    command: Vec<String>,
    entry: String,
) -> Result<RunContext> {
    let mut context = RunContext::default();
    context.package = module.unit.package.clone();
    context.module = module.wasm.display().to_string();
    context.module_sha256 = sha256_hex(&module.wasm)?;
    context.command = command;
    context.entry = entry;
    context.min_size = module.small.map(|small| small.min_size);
    context.small_counted = module.small.is_some_and(|small| small.counted);
    Ok(context)
}

/// How the host loads the module: a wasm-bindgen module with a shared
/// memory has threads on web workers.
fn load_as(module: &BuiltModule) -> Result<host::LoadAs> {
    let kind = host::LoadAs::module(module.unit.kind);
    if kind != host::LoadAs::Bindgen {
        return Ok(kind);
    }
    let bytes = std::fs::read(&module.wasm)
        .with_context(|| format!("could not read {}", module.wasm.display()))?;
    Ok(
        if wasmprof_profile::wasm_info::inspect(&bytes)?.shared_memory {
            host::LoadAs::BindgenThreads
        } else {
            kind
        },
    )
}

/// What the host script is told.
pub(crate) fn host_config(
    module: &BuiltModule,
    host: &HostOptions,
    run_dir: &Path,
) -> Result<HostConfig> {
    let wasi = match module.unit.kind {
        ModuleKind::Wasi => wasi::config(host, &wasi::current_dir()?)?,
        _ => Default::default(),
    };
    Ok(HostConfig {
        kind: load_as(module)?,
        wasm: module.wasm.clone(),
        js: module.js.clone(),
        invoke: host.invoke.clone(),
        args: if host.invoke.is_some() {
            host.args.clone()
        } else {
            Vec::new()
        },
        argv: std::iter::once(
            module
                .unit
                .bin
                .clone()
                .unwrap_or_else(|| module.unit.package.clone()),
        )
        .chain(host.args.iter().cloned())
        .collect(),
        wasi,
        timeout_ms: timeout_millis(host),
        until_exit: host.until_exit,
        window: (host.after.is_some() || host.duration.is_some()).then(|| host::WindowSpec {
            after: host.after.unwrap_or_default(),
            duration: host.duration,
        }),
        sample_interval_micros: host.sample.then(|| sample_interval_micros(host)),
        sample_interval_chosen: host.sample_interval.is_some(),
        cpuprofile_out: run_dir.join("samples.cpuprofile"),
        snapshot_out: run_dir.join("snapshot.bin"),
        result_out: run_dir.join("result.json"),
        test: None,
        requests: (host.requests.is_some() || host.path.is_some()).then(|| host::HttpRequests {
            count: host.requests.unwrap_or(1),
            path: host.path.clone().unwrap_or_else(|| "/".to_owned()),
        }),
        harness_tests: false,
    })
}

/// The sampler's interval when `--sample-interval` is not given.
pub(crate) const DEFAULT_SAMPLE_INTERVAL: std::time::Duration =
    std::time::Duration::from_micros(100);

/// `--sample-interval` in whole microseconds, or the default's.
pub(crate) fn sample_interval_micros(host: &HostOptions) -> u32 {
    let interval = host.sample_interval.unwrap_or(DEFAULT_SAMPLE_INTERVAL);
    u32::try_from(interval.as_micros())
        .unwrap_or(u32::MAX)
        .max(1)
}

/// Whether a run samples without being asked: a build timed by the host
/// clock, in a host with a sampler, unless `--no-sample`, or Node was given
/// a sampler of the user's own (`--node-arg=--cpu-prof`). The samples give
/// the calls the clock found too short to time the time they took.
pub(crate) fn samples_by_default(
    module: &BuiltModule,
    args: &HostOptions,
    host: &dyn Host,
) -> bool {
    module.instrument == Some(build::Instrument::Timed)
        && !args.no_sample
        && !has_own_sampler(args)
        && host.samples()
}

/// Whether Node was given a sampler of the user's own
/// (`--node-arg=--cpu-prof`), whose samples need the frames as wasmprof's
/// do.
pub(crate) fn has_own_sampler(args: &HostOptions) -> bool {
    args.node_arg.iter().any(|a| a.starts_with("--cpu-prof"))
}

/// Whether the build's runs are sampled, as far as the flags say (see
/// [`BuildOptions::sampled`](crate::build::BuildOptions::sampled)): yes
/// with `--sample`, no with `--no-sample` unless a sampler of the user's
/// own needs the frames, else the timer's default.
pub(crate) fn sampled_build(args: &HostOptions) -> Option<bool> {
    if args.sample {
        Some(true)
    } else if args.no_sample && !has_own_sampler(args) {
        Some(false)
    } else {
        None
    }
}

/// `--timeout` in milliseconds; a day stands for none.
pub(crate) fn timeout_millis(host: &HostOptions) -> u64 {
    host.timeout.unwrap_or(NO_TIMEOUT).as_millis().max(1) as u64
}

/// Runs the module once. A run the host refused (a wrong `--invoke`) is an
/// error; a program that failed is a result, with its status and message.
/// With `capture`, the program's output comes back instead of reaching the
/// terminal.
pub(crate) fn launch(
    host: &mut dyn Host,
    config: &HostConfig,
    run_dir: &Path,
    capture: bool,
) -> Result<(HostResult, Captured)> {
    std::fs::create_dir_all(run_dir)
        .with_context(|| format!("could not create {}", run_dir.display()))?;
    let _ = std::fs::remove_file(&config.result_out);
    let _ = std::fs::remove_file(&config.snapshot_out);
    let _ = std::fs::remove_file(&config.cpuprofile_out);
    let (result, captured) = host.run(config, run_dir, capture)?;
    let result = result.unwrap_or_else(|| {
        HostResult::failed(
            host.describe(),
            format!("{} ended without reporting a result", host.describe()),
            config.snapshot_out.exists(),
        )
    });
    if result.status == RunStatus::Usage {
        let _ = std::fs::remove_dir_all(run_dir);
        bail!(
            "{}",
            result
                .message
                .as_deref()
                .unwrap_or("the host refused the run")
        );
    }
    Ok((result, captured))
}

/// Writes the profile (if the module produced one) and prints the summary.
pub(crate) fn save_profile(
    module: &BuiltModule,
    result: &HostResult,
    snapshot_path: &Path,
    samples_path: Option<&Path>,
    target_dir: &Path,
    context: RunContext,
    top: usize,
) -> Result<Option<PathBuf>> {
    if module.instrument.is_none() {
        // Nothing was instrumented, but the engine's samples are a profile.
        if let Some(samples) = samples_path.filter(|p| p.exists()) {
            let kept = crate::profiles_dir::new_file_path(
                &crate::profiles_dir::profiles_dir(target_dir),
                &module.unit.package,
                "cpuprofile",
            );
            std::fs::copy(samples, &kept).with_context(|| {
                format!("could not copy {} to {}", samples.display(), kept.display())
            })?;
            terminal::status(
                "Samples",
                &format!("{} (`cargo wasmprof report --input` it)", kept.display()),
            );
        }
        return Ok(None);
    }
    if !result.snapshot {
        match &result.snapshot_error {
            Some(e) => terminal::warning(&format!(
                "could not read the profile out of the module: {e}"
            )),
            None if !result.status.finished() => terminal::warning(&format!(
                "no profile could be collected: {}",
                result.message.as_deref().unwrap_or(result.status.as_str())
            )),
            // A large module compiles for long in the optimizing tier: the
            // window can close before the page has it.
            None if result.window.is_some() => terminal::warning(&format!(
                "the page had not instantiated the instrumented module when the window closed, \
                 {} into the run (a large module takes long to compile): open the window later \
                 (--after) or record longer (--duration)",
                seconds_or_millis(result.window.map_or(0, |w| w.end_nanos))
            )),
            None => terminal::warning(
                "the module has no wasmprof data: no #[wasmprof::instrument] function was compiled in, \
                 or the program failed before the module was loaded",
            ),
        }
        return Ok(None);
    }
    let bytes = std::fs::read(snapshot_path)
        .with_context(|| format!("could not read {}", snapshot_path.display()))?;
    let snapshot = Snapshot::decode(&bytes).with_context(|| {
        format!(
            "the module's snapshot ({}) is unreadable",
            snapshot_path.display()
        )
    })?;
    let mut profile = profile_of(&snapshot, result, context);
    let dir = crate::profiles_dir::profiles_dir(target_dir);
    let path = crate::profiles_dir::new_profile_path(&dir, &module.unit.package);
    let samples = samples_path.filter(|p| p.exists());
    let samples_line = match samples {
        Some(samples) => Some(keep_samples(samples, &path, &mut profile, result)?),
        None => None,
    };
    profile::write_profile(&profile, &path)?;
    let mut stderr = std::io::stderr().lock();
    wasmprof_profile::report::write_summary(&profile, top, &mut stderr)?;
    drop(stderr);
    announce_profile(&path, profile.run.complete);
    if let Some(line) = samples_line {
        terminal::status("Samples", &line);
    }
    verified_counts::conclude(profile.run.count_check.as_ref(), &module.unit.package)?;
    Ok(Some(path))
}

/// The status line naming a saved profile.
pub(crate) fn announce_profile(path: &Path, complete: bool) {
    terminal::status(
        "Profile",
        &format!(
            "{}{} (`cargo wasmprof report` to read it)",
            path.display(),
            if complete { "" } else { ", incomplete" }
        ),
    );
}

/// Moves the engine's `.cpuprofile` beside the profile at `profile_path`
/// (same name, `.cpuprofile`), records it in `profile`, and says what it
/// holds.
fn keep_samples(
    samples: &Path,
    profile_path: &Path,
    profile: &mut profile::Profile,
    result: &HostResult,
) -> Result<String> {
    let name = profile_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("profile.wasmprof.json")
        .trim_end_matches(".wasmprof.json");
    let kept = profile_path.with_file_name(format!("{name}.cpuprofile"));
    std::fs::copy(samples, &kept)
        .with_context(|| format!("could not copy {} to {}", samples.display(), kept.display()))?;
    profile.run.samples_file = Some(kept.display().to_string());
    let read = wasmprof_profile::input::read(&kept, &wasmprof_profile::sampled::Options::default());
    Ok(match read {
        Ok(input) => {
            wasmprof_profile::sampled::apply_to_run(profile, &input.profile, &input.timeline);
            let count: u64 = input.profile.nodes.iter().map(|n| n.samples).sum();
            let duration = |nanos: f64| wasmprof_profile::report::human_duration(nanos);
            let average = input
                .profile
                .timer
                .sample_interval_nanos
                .map(|i| format!(", every {} on average", duration(i)))
                .unwrap_or_default();
            let slowed = result
                .sampler_slowed_to_micros
                .map(|micros| {
                    format!(
                        ", every {} on threads that filled every core, which \
                         --sample-interval prevents",
                        duration(micros as f64 * 1e3)
                    )
                })
                .unwrap_or_default();
            format!(
                "{} ({count} samples{average}{slowed}; `cargo wasmprof report --input` it)",
                kept.display()
            )
        }
        Err(e) => format!("{} (unreadable: {e:#})", kept.display()),
    })
}

/// How a component is entered: an HTTP handler's `handle` for each request,
/// or a command's `run`. (The exports are its core module's.)
fn component_entry(
    info: &wasmprof_profile::wasm_info::WasmInfo,
    args: &HostOptions,
) -> Result<String> {
    if let Some(name) = &args.invoke {
        bail!(
            "--invoke {name}: a component is entered through its `wasi:cli/run` or \
             `wasi:http/incoming-handler` export; --invoke calls a core module's exports"
        );
    }
    let exports = |prefix: &str| info.function_exports.iter().any(|e| e.starts_with(prefix));
    Ok(if exports("wasi:http/incoming-handler@") {
        let requests = args.requests.unwrap_or(1);
        let path = args.path.as_deref().unwrap_or("/");
        format!("wasi:http/incoming-handler, {requests} × GET {path}")
    } else if exports("wasi:cli/run@") {
        "wasi:cli/run".to_owned()
    } else {
        // The host says what it exports instead.
        "a component without an entry point".to_owned()
    })
}

/// How the module is entered, checked against what it exports.
pub(crate) fn entry_point(module: &BuiltModule, args: &HostOptions) -> Result<String> {
    let bytes = std::fs::read(&module.wasm)
        .with_context(|| format!("could not read {}", module.wasm.display()))?;
    let info = wasmprof_profile::wasm_info::inspect(&bytes)?;
    if let Some(page) = &args.page {
        return Ok(format!("page {}", page.display()));
    }
    if info.component {
        return component_entry(&info, args);
    }
    if let Some(name) = &args.invoke {
        let exported = info.function_exports.iter().any(|e| e == name)
            // wasm-bindgen may rename the raw export; its JS checks the name.
            || module.unit.kind == ModuleKind::Bindgen;
        if !exported {
            bail!(
                "--invoke {name}: the module exports no function of that name; exported functions: {}",
                list_or_none(&info.function_exports)
            );
        }
        return Ok(format!("invoke {name}"));
    }
    if !args.args.is_empty() && module.unit.kind != ModuleKind::Wasi {
        bail!(
            "arguments after -- go to --invoke's function or a binary's main; this library has neither"
        );
    }
    match module.unit.kind {
        ModuleKind::Wasi => Ok("main".into()),
        ModuleKind::Bindgen => Ok("start".into()),
        ModuleKind::Plain => bail!(
            "{} is a library without a start function: name an exported function with --invoke NAME \
             (exported functions: {})",
            module.unit.package,
            list_or_none(&info.function_exports)
        ),
    }
}

/// The exports a user could name, without the bindings' own (`__wbindgen_…`).
fn list_or_none(names: &[String]) -> String {
    let names: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !n.starts_with("__"))
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The module's SHA-256, in hex: the profile names exactly what ran.
/// The profile of the run `snapshot` records, as the host saw it end; what
/// could not be done on the way is said as a warning.
pub(crate) fn profile_of(
    snapshot: &Snapshot,
    result: &HostResult,
    context: RunContext,
) -> profile::Profile {
    let converted = wasmprof_profile::snapshot::to_profile(snapshot, &result.ending(), context);
    for warning in &converted.warnings {
        terminal::warning(warning);
    }
    converted.profile
}

pub(crate) fn sha256_hex(path: &Path) -> Result<String> {
    let bytes =
        std::fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
