//! The target runner: cargo runs `cargo-wasmprof wasmprof test-runner
//! BINARY.wasm HARNESS-ARGS...` for each test binary, in the package's
//! directory. It runs the binary in its host, leaves the binary's profile
//! in the session directory and exits as the binary did, so that cargo
//! reports it as it would any test binary.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use wasmprof_wire::Snapshot;

use super::binary::{Binary, check_host, test_config};
use super::bindgen_test;
use super::doctest::Found;
use super::session::Session;
use crate::build::options::HostKind;
use crate::hosts::host::{HostConfig, HostResult};
use crate::hosts::host::{LoadAs, RunStatus};
use crate::hosts::select;
use crate::hosts::wasi;
use wasmprof_profile::profile;
use wasmprof_profile::snapshot::RunContext;
use wasmprof_profile::wasm_info;

/// The runner's `main`: the binary's exit status.
pub(crate) fn run(args: &[OsString]) -> Result<i32> {
    let session = Session::from_env()?;
    let (wasm, harness_args) = match args.split_first() {
        Some((wasm, rest)) => (PathBuf::from(wasm), rest),
        None => bail!("the test runner needs the test binary to run (cargo gives it)"),
    };
    let harness_args: Vec<String> = harness_args
        .iter()
        .map(|a| {
            a.to_str()
                .map(str::to_owned)
                .with_context(|| format!("the harness argument {a:?} is not UTF-8"))
        })
        .collect::<Result<_>>()?;
    let bytes =
        std::fs::read(&wasm).with_context(|| format!("could not read {}", wasm.display()))?;
    let info = wasm_info::inspect(&bytes)
        .with_context(|| format!("{} is not a WebAssembly module", wasm.display()))?;
    let binary = Binary::recognize(&info).with_context(|| {
        format!(
            "{} is neither a WASI test binary (wasm32-wasip1) nor a wasm-bindgen-test binary \
             (wasm32-unknown-unknown with wasm-bindgen-test): wasmprof cannot run it",
            wasm.display()
        )
    })?;
    let name = binary_name(&wasm);
    let run_dir = new_run_dir(&session.dir, &name)?;
    let cwd = std::env::current_dir().context("the current directory is unreadable")?;
    let (result, config) = match binary {
        Binary::Wasi => {
            // Only wasmtime starts a threaded binary's threads, and runs
            // a component.
            let default = if info.shared_memory || info.component {
                HostKind::Wasmtime
            } else {
                HostKind::Node
            };
            let kind = session.host.unwrap_or(default);
            check_host(kind, binary, &wasm.display().to_string())?;
            if info.shared_memory && kind != HostKind::Wasmtime {
                bail!(
                    "{}: a test binary with threads (its memory is shared) runs only in \
                     --host wasmtime, which starts its threads",
                    wasm.display()
                );
            }
            if info.component && kind != HostKind::Wasmtime {
                bail!(
                    "{}: a WASI 0.2 component (wasm32-wasip2) runs only in --host wasmtime",
                    wasm.display()
                );
            }
            let mut host = select::select(kind, &session.host_args)?;
            let config = HostConfig {
                argv: std::iter::once(name.clone())
                    .chain(harness_args.iter().cloned())
                    .collect(),
                // The package's own directory, as `cargo test` gives it.
                wasi: wasi::config(&session.host_args, &session.original(&cwd))?,
                harness_tests: true,
                ..test_config(LoadAs::Wasi, &wasm, &run_dir, &session)
            };
            let (result, _) = crate::launch::launch(host.as_mut(), &config, &run_dir, false)?;
            if result.status == RunStatus::Trap && !harness_args.iter().any(|a| a == "--nocapture")
            {
                crate::terminal::note(&format!(
                    "{name}: a test trapped. A wasm32-wasip1 test binary aborts on a panic, before \
                     the harness can print the test's name and output: run again with \
                     `-- --nocapture` to see its message (the summary names the test that did \
                     not return)"
                ));
            }
            (result, config)
        }
        Binary::BindgenTest => {
            match bindgen_test::run(&session, &wasm, &info, &harness_args, &run_dir)? {
                Some(ran) => ran,
                None => {
                    let _ = std::fs::remove_dir_all(&run_dir);
                    return Ok(0);
                }
            }
        }
    };
    save(&session, &wasm, &name, &result, &config)?;
    let _ = std::fs::remove_dir_all(&run_dir);
    if !(result.status.finished() || result.status == RunStatus::Trap) {
        crate::terminal::warning(&format!(
            "{name}: {}",
            result.message.as_deref().unwrap_or(result.status.as_str())
        ));
    }
    Ok(result.exit_code)
}

/// `wordcount-1a2b3c4d.wasm` → `wordcount`: cargo's hash left out.
pub(crate) fn binary_name(wasm: &Path) -> String {
    let stem = wasm
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("test")
        .to_owned();
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            name.to_owned()
        }
        _ => stem,
    }
}

/// A directory of its own for this run of a binary.
fn new_run_dir(session_dir: &Path, name: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(session_dir)
        .with_context(|| format!("could not create {}", session_dir.display()))?;
    for n in 1.. {
        let dir = session_dir.join(format!("{name}-{n}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("could not create {}", dir.display())),
        }
    }
    unreachable!("some run directory is free")
}

/// Leaves the binary's profile in the session directory for
/// `cargo wasmprof test` to gather.
fn save(
    session: &Session,
    wasm: &Path,
    name: &str,
    result: &HostResult,
    config: &HostConfig,
) -> Result<()> {
    let snapshot_path = &config.snapshot_out;
    if !result.snapshot {
        crate::terminal::warning(&format!(
            "{name}: no profile could be read out of the test binary{}",
            match (&result.snapshot_error, &result.message) {
                (Some(e), _) | (None, Some(e)) => format!(" ({e})"),
                _ => String::new(),
            }
        ));
        return Ok(());
    }
    let bytes = std::fs::read(snapshot_path)
        .with_context(|| format!("could not read {}", snapshot_path.display()))?;
    let snapshot = Snapshot::decode(&bytes).with_context(|| {
        format!(
            "the snapshot of {name} ({}) is unreadable",
            snapshot_path.display()
        )
    })?;
    let mut context = RunContext::default();
    context.package = session.package.clone();
    context.module = wasm.display().to_string();
    context.module_sha256 = crate::launch::sha256_hex(wasm)?;
    context.command = session.command.clone();
    context.entry = format!("test binary {name}");
    context.min_size = session.small.map(|small| small.min_size);
    context.small_counted = session.small.is_some_and(|small| small.counted);
    let mut profile = crate::launch::profile_of(&snapshot, result, context);
    if super::doctest::is_doctest_binary(wasm) && result.harness_tests.is_empty() {
        name_doctest(&mut profile, wasm, result, session)?;
    } else if super::doctest::is_doctest_binary(wasm) {
        // Edition 2024: rustdoc merged the doctests into one binary with a
        // harness of its own, which named each as it began.
        let (package_dir, krate) = doctest_package(session);
        let relative = |file: &str| super::doctest::package_relative(file, &package_dir);
        let names: Vec<Option<String>> = (result.harness_tests.iter())
            .map(|name| {
                let name = name.as_deref()?;
                Some(format!(
                    "{krate}::{}",
                    super::doctest::harness_name(name, relative)
                ))
            })
            .collect();
        super::test_names::name_tests(&mut profile, &names, &krate);
    } else {
        // libtest and wasm-bindgen-test both name a test without its crate.
        let krate = name.replace('-', "_");
        let names = super::test_names::in_crate(&result.harness_tests, &krate);
        super::test_names::name_tests(&mut profile, &names, &krate);
    }
    // The samples give the calls too short to time their time; the file
    // goes with the run's directory.
    if profile.timer.mode == profile::TimerMode::Host && config.cpuprofile_out.exists() {
        match wasmprof_profile::input::read(&config.cpuprofile_out, &Default::default()) {
            Ok(samples) => wasmprof_profile::sampled::apply_to_run(
                &mut profile,
                &samples.profile,
                &samples.timeline,
            ),
            Err(e) => crate::terminal::warning(&format!(
                "{name}: the engine's samples are unreadable ({e:#}); calls too short to time \
                 keep no time of their own"
            )),
        }
    }
    let path = crate::profiles_dir::new_profile_path(&session.dir, name);
    profile::write_profile(&profile, &path)?;
    // A difference fails this binary, as a failing test would; agreement
    // is said once, for the whole session, by `cargo wasmprof test`.
    match profile.run.count_check.as_ref() {
        Some(check) if !check.differences.is_empty() => {
            crate::launch::verified_counts::conclude(Some(check), name)
        }
        _ => Ok(()),
    }
}

/// The directory and crate name of the package whose doctests run: cargo
/// runs rustdoc with the package's variables, and the runner inherits them.
/// Paths are read in the user's tree, not a shadow copy.
fn doctest_package(session: &Session) -> (PathBuf, String) {
    let package_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .map(|dir| session.original(&dir))
        .unwrap_or_default();
    let krate =
        std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| session.package.replace('-', "_"));
    (package_dir, krate)
}

/// Makes a doctest's run one test, named after its place in the source:
/// rustdoc gives the runner no name, but the module's names give the place,
/// and cargo's environment the package it belongs to.
fn name_doctest(
    profile: &mut profile::Profile,
    wasm: &Path,
    result: &HostResult,
    session: &Session,
) -> Result<()> {
    let bytes =
        std::fs::read(wasm).with_context(|| format!("could not read {}", wasm.display()))?;
    let names = wasm_info::function_names(&bytes)
        .with_context(|| format!("{} is not a WebAssembly module", wasm.display()))?;
    let names = || names.values().map(String::as_str);
    let (package_dir, krate) = doctest_package(session);
    let found = if super::doctest::is_merged(names()) {
        Found::Merged
    } else if let Some(place) = super::doctest::place(names()) {
        let file = super::doctest::find_file(&package_dir, &place.spelled_file)
            .unwrap_or(place.spelled_file);
        Found::At(file, place.line)
    } else {
        let defined = super::doctest::defined_functions(names());
        match super::doctest::own_main_place(&package_dir, &defined) {
            Some((file, line)) => Found::At(file, line),
            None => Found::Somewhere,
        }
    };
    super::doctest::make_test(profile, &krate, &found, result.program_nanos);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_s_hash_is_left_out_of_the_name() {
        assert_eq!(
            binary_name(Path::new("/t/deps/wordcount-0123456789abcdef.wasm")),
            "wordcount"
        );
        assert_eq!(
            binary_name(Path::new("/t/deps/two-words-0123456789abcdef.wasm")),
            "two-words"
        );
        assert_eq!(binary_name(Path::new("/t/plain.wasm")), "plain");
        assert_eq!(binary_name(Path::new("/t/a-b.wasm")), "a-b");
    }
}
