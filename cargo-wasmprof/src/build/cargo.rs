//! Runs `cargo build` for one unit with instrumentation switched on and
//! picks the `.wasm` it produced out of cargo's JSON messages.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use cargo_metadata::Message;

use super::failure::{BuildFailed, Diagnostics};
use super::kind::BuildKind;
use super::workspace::Unit;
use super::{Instrument, KeptFrames};
use crate::build::options::CargoOptions;

/// The export the host reads; binaries do not export it by themselves.
const SNAPSHOT_EXPORT: &str = "__wasmprof_snapshot";
/// What a host calls when libtest begins a test (wasmprof-core's
/// `harness.rs`): a test binary exports nothing but `_start` unless asked.
const HARNESS_EXPORT: &str = "__wasmprof_harness_test";
/// What a host calls once no other thread of the program will run again,
/// so that the snapshot waits for none (wasmprof-core's `threads`).
const THREADS_STOPPED_EXPORT: &str = "__wasmprof_threads_stopped";
/// The shadow stack's pointer, a global the linker keeps to itself: after
/// the stack overflows (the pointer run below the bottom, which traps), a
/// host sets it back to where it started, so that the snapshot's own
/// frame has a stack to go on.
const STACK_POINTER_EXPORT: &str = "__stack_pointer";

pub(super) struct CargoBuild<'a> {
    pub cargo: &'a CargoOptions,
    pub unit: &'a Unit,
    pub target: &'a str,
    pub target_dir: &'a Path,
    /// `WASMPROF_INSTRUMENT`, or `None` for a plain build.
    pub instrument: Option<Instrument>,
    /// The functions kept out of line (`WASMPROF_KEEP_FRAMES`).
    pub frames: KeptFrames,
    /// `--memory`: the allocator recorded (`WASMPROF_MEMORY`).
    pub memory: Option<super::allocator::RecordedAllocator>,
    /// `--verify-counts`: the oracle's counters too (`WASMPROF_ORACLE`).
    pub oracle: bool,
    /// The manifest to build: the unit's own, or its shadow copy's when
    /// crates are instrumented crate-wide.
    pub manifest_path: &'a Path,
    /// rustc flags added to the user's (`--remap-path-prefix` for a shadow).
    pub extra_rustflags: &'a [String],
    /// The kind, for the runtime's build script; none for a plain build.
    pub kind: Option<&'a BuildKind>,
    /// `--max-nodes`.
    pub max_nodes: Option<u32>,
    /// Whether `--locked` may be passed on: not for a shadow copy, whose
    /// manifests add the runtime and patches (the user's lock file was
    /// checked by `cargo metadata`).
    pub lock_respected: bool,
    /// For web workers: nightly, with the standard library rebuilt.
    pub web_threads: bool,
    pub workspace_root: &'a Path,
}

impl CargoBuild<'_> {
    /// Builds and returns the path of the `.wasm` cargo produced.
    pub(super) fn run(&self) -> Result<PathBuf> {
        let mut command = if self.web_threads {
            super::web_threads::cargo_command(self.workspace_root, self.cargo.offline)?
        } else {
            Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        };
        command.args(self.args());
        set_instrumentation_env(
            &mut command,
            Instrumentation {
                mode: self.instrument,
                frames: self.frames,
                memory: self.memory,
                oracle: self.oracle,
                kind: self.kind,
            },
            self.target,
            self.extra_rustflags,
        )?;
        set_max_nodes_env(&mut command, self.max_nodes);
        keep_terminal_looks(&mut command);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().context("could not run cargo")?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let passed_through = std::thread::spawn(move || pass_through(stderr));
        let mut wasm = None;
        for message in Message::parse_stream(BufReader::new(stdout)) {
            let message = message.context("could not read cargo's output")?;
            if let Message::CompilerArtifact(artifact) = message {
                if artifact.target.name.replace('-', "_") != self.artifact_name() {
                    continue;
                }
                if let Some(file) = artifact
                    .filenames
                    .iter()
                    .find(|f| f.extension() == Some("wasm"))
                {
                    wasm = Some(file.clone().into_std_path_buf());
                }
            }
        }
        let status = child.wait().context("cargo did not finish")?;
        let diagnostics = passed_through.join().unwrap_or_default();
        if !status.success() {
            return Err(BuildFailed {
                package: self.unit.package.clone(),
                diagnostics,
            }
            .into());
        }
        wasm.with_context(|| {
            format!(
                "cargo built `{}` but reported no .wasm file for it",
                self.unit.package
            )
        })
    }

    fn artifact_name(&self) -> String {
        match &self.unit.bin {
            Some(bin) => bin.replace('-', "_"),
            None => self.unit.package.replace('-', "_"),
        }
    }

    fn args(&self) -> Vec<String> {
        let c = self.cargo;
        let mut args = vec![
            "build".to_owned(),
            "--message-format=json-render-diagnostics".to_owned(),
            "--target".to_owned(),
            self.target.to_owned(),
            "--target-dir".to_owned(),
            self.target_dir.display().to_string(),
            "--manifest-path".to_owned(),
            self.manifest_path.display().to_string(),
        ];
        match &self.unit.bin {
            Some(bin) => args.extend(["--bin".to_owned(), bin.clone()]),
            None => args.push("--lib".to_owned()),
        }
        if c.release {
            args.push("--release".to_owned());
        }
        if let Some(profile) = &c.profile {
            args.extend(["--profile".to_owned(), profile.clone()]);
        }
        // Names must survive into the module, whatever the profile says.
        args.extend([
            "--config".to_owned(),
            format!("profile.{}.strip=false", self.profile_name()),
        ]);
        for features in &c.features {
            args.extend(["--features".to_owned(), features.clone()]);
        }
        if c.all_features {
            args.push("--all-features".to_owned());
        }
        if c.no_default_features {
            args.push("--no-default-features".to_owned());
        }
        if c.locked && self.lock_respected {
            args.push("--locked".to_owned());
        }
        if c.offline {
            args.push("--offline".to_owned());
        }
        if self.web_threads {
            args.extend(super::web_threads::cargo_args().map(str::to_owned));
        }
        if c.quiet {
            args.push("--quiet".to_owned());
        }
        for _ in 0..c.verbose {
            args.push("--verbose".to_owned());
        }
        args
    }

    /// The cargo profile these flags select.
    pub(super) fn profile_name(&self) -> String {
        profile_name(self.cargo)
    }
}

/// How a cargo command is to instrument what it builds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Instrumentation<'a> {
    /// `WASMPROF_INSTRUMENT`, or `None` for a plain build.
    pub mode: Option<Instrument>,
    /// `WASMPROF_KEEP_FRAMES`: the functions kept out of line, for the
    /// engine's sampler.
    pub frames: KeptFrames,
    /// `WASMPROF_MEMORY`: the allocator recorded, with `--memory`.
    pub memory: Option<super::allocator::RecordedAllocator>,
    /// `WASMPROF_ORACLE`: the oracle's counters, with `--verify-counts`.
    pub oracle: bool,
    /// `WASMPROF_BUILD`: the kind of build, for the runtime's build script.
    pub kind: Option<&'a BuildKind>,
}

/// Switches instrumentation on (`WASMPROF_INSTRUMENT`) or off for a cargo
/// command for `target`, and gives rustc the user's own rustflags (from
/// the environment or cargo's configuration) with the snapshot export and
/// `extra` added.
pub(crate) fn set_instrumentation_env(
    command: &mut Command,
    how: Instrumentation<'_>,
    target: &str,
    extra: &[String],
) -> Result<()> {
    let instrument = how.mode;
    let cwd = match command.get_current_dir() {
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir().context("the current directory is unreadable")?,
    };
    // Read once for the user's flags and the user's rustc wrapper.
    let config = super::user_rustflags::cargo_config(&cwd)?;
    let mut flags = super::user_rustflags::rustflags_in(&config, target)?;
    flags.extend(rustflags(extra));
    let (flags, mut unhashed) = super::rustc_wrapper::unhashed(flags);
    // Through the wrapper, as the remapping: cargo, not seeing them, does
    // not compile every dependency again in the shared build directory
    // for them. What the line tables are for, the instrumented crates,
    // depend on the runtime, which the kind compiles anew.
    if how.frames == KeptFrames::InLineTables {
        unhashed.extend(LINE_TABLES.iter().map(|f| f.to_string()));
    }
    super::rustc_wrapper::wrap(command, &config, &unhashed)?;
    // The attribute reads the variable when it expands; the kind, which
    // names the frames kept, tells cargo that the code differs.
    match how.frames.env_value() {
        Some(value) => command.env("WASMPROF_KEEP_FRAMES", value),
        None => command.env_remove("WASMPROF_KEEP_FRAMES"),
    };
    BuildKind::set_env(how.kind, command);
    if flags.iter().any(|f| f.contains(char::is_whitespace)) {
        // A path with a space: only the encoded form keeps it whole.
        command.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"));
        command.env_remove("RUSTFLAGS");
    } else {
        command.env("RUSTFLAGS", flags.join(" "));
        command.env_remove("CARGO_ENCODED_RUSTFLAGS");
    }
    match instrument {
        Some(mode) => command.env("WASMPROF_INSTRUMENT", mode.as_str()),
        None => command.env_remove("WASMPROF_INSTRUMENT"),
    };
    match how.memory {
        Some(allocator) => command.env("WASMPROF_MEMORY", allocator.as_str()),
        None => command.env_remove("WASMPROF_MEMORY"),
    };
    if how.oracle {
        command.env("WASMPROF_ORACLE", "1");
    } else {
        command.env_remove("WASMPROF_ORACLE");
    }
    Ok(())
}

/// `--max-nodes`, for the runtime's build script; without it, the default.
pub(crate) fn set_max_nodes_env(command: &mut Command, max_nodes: Option<u32>) {
    match max_nodes {
        Some(n) => command.env("WASMPROF_MAX_NODES", n.to_string()),
        None => command.env_remove("WASMPROF_MAX_NODES"),
    };
}

/// What a build whose inlined frames are found in its line tables adds:
/// its debug info (`limited`: lines, functions and inlined calls, no types
/// or variables; `line-tables-only` names an inlined function without its
/// path), not stripped, which cargo's release profile otherwise does.
/// They come after the profile's own flags, and rustc takes the last.
const LINE_TABLES: [&str; 2] = ["-Cdebuginfo=limited", "-Cstrip=none"];

/// The snapshot export and `extra`. The export is asked for only if
/// defined, so a module without instrumented code still links, and is the
/// same module: a plain build asks for it too, so that its flags are every
/// kind's, and cargo shares what no kind changes.
fn rustflags(extra: &[String]) -> Vec<String> {
    let mut flags = vec![
        format!("-Clink-arg=--export-if-defined={SNAPSHOT_EXPORT}"),
        format!("-Clink-arg=--export-if-defined={HARNESS_EXPORT}"),
        format!("-Clink-arg=--export-if-defined={THREADS_STOPPED_EXPORT}"),
        format!("-Clink-arg=--export-if-defined={STACK_POINTER_EXPORT}"),
    ];
    flags.extend(extra.iter().cloned());
    flags
}

/// `dev`, `release` or the `--profile` given.
pub(crate) fn profile_name(cargo: &CargoOptions) -> String {
    match (&cargo.profile, cargo.release) {
        (Some(profile), _) => profile.clone(),
        (None, true) => "release".to_owned(),
        (None, false) => "dev".to_owned(),
    }
}

/// cargo's standard error is read through (to find what failed), which
/// cargo would take for a pipe: on a terminal it keeps its colours and
/// progress bar, unless the user chose otherwise.
fn keep_terminal_looks(command: &mut Command) {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return;
    }
    for (key, value) in [
        ("CARGO_TERM_COLOR", "always"),
        ("CARGO_TERM_PROGRESS_WHEN", "always"),
        ("CARGO_TERM_PROGRESS_WIDTH", "80"),
    ] {
        if std::env::var_os(key).is_none() {
            command.env(key, value);
        }
    }
}

/// Copies cargo's standard error to ours as it comes (progress bars
/// included), and reads its lines for what failed.
fn pass_through(mut stderr: impl std::io::Read) -> Diagnostics {
    use std::io::Write;
    let mut diagnostics = Diagnostics::default();
    let mut line = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = match stderr.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let chunk = &buffer[..read];
        let _ = std::io::stderr().write_all(chunk);
        for &byte in chunk {
            if byte == b'\n' {
                diagnostics.scan(&plain_text(&line));
                line.clear();
            } else {
                line.push(byte);
            }
        }
    }
    if !line.is_empty() {
        diagnostics.scan(&plain_text(&line));
    }
    diagnostics
}

/// A line without its colour codes (`ESC [ … m`) and progress redraws.
fn plain_text(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.rsplit('\r').next().unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
