//! `cargo-wasmprof` as rustc's wrapper, for the flags cargo must not see.
//!
//! The kinds of build share one directory of tools, and each kind's
//! directory serves every target and set of features, where cargo names
//! each artifact by a hash of what built it, the flags among them. But cargo
//! leaves all the flags out of that hash when one of them is
//! `--remap-path-prefix` (so that remapped builds stay reproducible), and
//! every instrumented build has one, for the dependency copies of
//! crate-wide builds: builds with other flags (another target's features,
//! the user's own) would overwrite one another's artifacts. So the
//! remapping reaches rustc through this wrapper, which cargo runs in place
//! of rustc, and which runs the user's own wrapper (sccache, say) in turn.
//! cargo neither hashes the wrapper's flags nor reruns a build when they
//! change: they must be constant, as the remap is.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

/// The flags the wrapper adds, joined by the unit separator as in
/// `CARGO_ENCODED_RUSTFLAGS`. Its presence is what makes this program a
/// wrapper.
const FLAGS_VAR: &str = "__WASMPROF_RUSTC_FLAGS";
/// The user's own wrapper, run in turn.
const NEXT_WRAPPER_VAR: &str = "__WASMPROF_NEXT_RUSTC_WRAPPER";

/// Makes cargo, run by `command` under the configuration `config`, give
/// rustc `flags` through this program; without flags, the user's own
/// setting stands.
pub(super) fn wrap(
    command: &mut Command,
    config: &cargo_config2::Config,
    flags: &[String],
) -> Result<()> {
    if flags.is_empty() {
        command.env_remove(FLAGS_VAR);
        return Ok(());
    }
    let this = std::env::current_exe()
        .context("cannot find this program's own path, to run rustc through it")?;
    let next = config
        .build
        .rustc_wrapper
        .as_deref()
        .filter(|next| !same_program(next, &this));
    command
        .env("RUSTC_WRAPPER", &this)
        .env(FLAGS_VAR, flags.join("\x1f"));
    match next {
        Some(next) => command.env(NEXT_WRAPPER_VAR, next),
        None => command.env_remove(NEXT_WRAPPER_VAR),
    };
    Ok(())
}

fn same_program(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canonical(a) == canonical(b)
}

/// When cargo runs this program as rustc's wrapper (`<this> <rustc>
/// <args>…`): runs rustc with the flags added, and gives its exit code.
/// `None` when this is a command of ours.
pub(crate) fn run_if_wrapping() -> Option<i32> {
    let flags = std::env::var(FLAGS_VAR).ok()?;
    let mut args = std::env::args_os().skip(1);
    let rustc = args.next()?;
    // `cargo wasmprof test-runner`, which cargo runs with this build's
    // environment, is ours.
    if rustc == "wasmprof" {
        return None;
    }
    let args: Vec<OsString> = args.collect();
    let mut command = match std::env::var_os(NEXT_WRAPPER_VAR) {
        Some(next) => {
            let mut command = Command::new(next);
            command.arg(&rustc);
            command
        }
        None => Command::new(&rustc),
    };
    command.args(&args);
    // Compilations only: not cargo's questions (`-vV`, `--print`
    // without a crate).
    if args.iter().any(|arg| arg == "--crate-name") {
        command.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    match command.status() {
        Ok(status) => Some(status.code().unwrap_or(101)),
        Err(error) => {
            eprintln!(
                "error: cargo-wasmprof could not run {}: {error}",
                PathBuf::from(rustc).display()
            );
            Some(101)
        }
    }
}

/// Splits off the flags only the wrapper may pass: `--remap-path-prefix`
/// in either form (`=FROM=TO`, or `FROM=TO` as the next flag).
pub(super) fn unhashed(flags: Vec<String>) -> (Vec<String>, Vec<String>) {
    let (mut hashed, mut unhashed) = (Vec::new(), Vec::new());
    let mut flags = flags.into_iter();
    while let Some(flag) = flags.next() {
        if flag == "--remap-path-prefix" {
            unhashed.push(flag);
            unhashed.extend(flags.next());
        } else if flag.starts_with("--remap-path-prefix=") {
            unhashed.push(flag);
        } else {
            hashed.push(flag);
        }
    }
    (hashed, unhashed)
}

#[cfg(test)]
mod tests {
    use super::unhashed;

    fn strings(flags: &[&str]) -> Vec<String> {
        flags.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn only_the_remapping_is_kept_from_cargo() {
        let (hashed, wrapper) = unhashed(strings(&[
            "--cfg=getrandom_backend=\"wasm_js\"",
            "--remap-path-prefix=.wasmprof-deps=/",
            "--remap-path-prefix",
            "/home/u=~",
            "-Ctarget-feature=+simd128",
        ]));
        assert_eq!(
            hashed,
            strings(&[
                "--cfg=getrandom_backend=\"wasm_js\"",
                "-Ctarget-feature=+simd128"
            ])
        );
        assert_eq!(
            wrapper,
            strings(&[
                "--remap-path-prefix=.wasmprof-deps=/",
                "--remap-path-prefix",
                "/home/u=~"
            ])
        );
    }
}
