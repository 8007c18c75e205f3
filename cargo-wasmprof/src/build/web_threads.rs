//! Builds for web workers: a wasm-bindgen program whose threads share one
//! memory (wasm-bindgen-rayon's thread pool), built as wasm-bindgen's
//! threads guide builds it, so that the user sets up nothing.
//!
//! The standard library shipped for `wasm32-unknown-unknown` is built
//! without atomics, so threads need it rebuilt with them: nightly Rust,
//! `-Z build-std` and the `rust-src` component. The linker is told to
//! make the memory shared and imported (each worker instantiates the same
//! module on it) and to export what wasm-bindgen needs to give each
//! thread its own thread-local storage.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use cargo_metadata::{Metadata, Package};

use crate::terminal;

/// The crate whose thread pool runs on web workers.
pub(crate) const POOL_CRATE: &str = "wasm-bindgen-rayon";

/// The toolchain a web-threads build asks rustup for when the project's
/// own is not nightly.
const NIGHTLY: &str = "nightly";

/// rustc flags: atomics in the code, a shared imported memory, and the
/// exports wasm-bindgen's thread start-up calls.
pub(crate) fn rustflags() -> Vec<String> {
    let mut flags = vec!["-Ctarget-feature=+atomics,+bulk-memory,+mutable-globals".to_owned()];
    for arg in [
        "--shared-memory",
        "--import-memory",
        "--max-memory=1073741824",
        "--export=__wasm_init_tls",
        "--export=__tls_size",
        "--export=__tls_align",
        "--export=__tls_base",
    ] {
        flags.push(format!("-Clink-arg={arg}"));
    }
    flags
}

/// cargo's arguments for the standard library rebuilt with atomics.
pub(crate) fn cargo_args() -> [&'static str; 1] {
    ["-Zbuild-std=panic_abort,std"]
}

/// Whether the user's own rustflags build `wasm32-unknown-unknown` with
/// atomics, as wasm-bindgen's threads guide has a program that starts its
/// own web workers put them in `.cargo/config.toml`.
pub(crate) fn configured() -> Result<bool> {
    let cwd = std::env::current_dir().context("the current directory is unreadable")?;
    let flags = super::user_rustflags::user_rustflags(&cwd, "wasm32-unknown-unknown")?;
    Ok(flags.iter().any(|f| f.contains("+atomics")))
}

/// Whether any of `packages` uses wasm-bindgen-rayon, directly or through
/// its dependencies.
pub(crate) fn wanted(metadata: &Metadata, packages: &[&Package]) -> bool {
    let Some(resolve) = &metadata.resolve else {
        return packages
            .iter()
            .any(|p| p.dependencies.iter().any(|d| d.name == POOL_CRATE));
    };
    let name_of = |id: &cargo_metadata::PackageId| {
        metadata
            .packages
            .iter()
            .find(|p| &p.id == id)
            .map(|p| p.name.as_str())
    };
    let mut seen = std::collections::HashSet::new();
    let mut todo: Vec<&cargo_metadata::PackageId> = packages.iter().map(|p| &p.id).collect();
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        if name_of(id) == Some(POOL_CRATE) {
            return true;
        }
        if let Some(node) = resolve.nodes.iter().find(|n| &n.id == id) {
            todo.extend(node.dependencies.iter());
        }
    }
    false
}

/// The command that runs cargo for a web-threads build: the project's own
/// cargo when its toolchain is nightly, else rustup's nightly. Makes sure
/// the nightly toolchain has `rust-src`, adding it with rustup unless
/// `offline`.
pub(crate) fn cargo_command(workspace_root: &Path, offline: bool) -> Result<Command> {
    let own = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // The toolchain rustup is to name: none for the project's own.
    let (mut command, toolchain) = if is_nightly(rustc_version(workspace_root, None)?.as_deref()) {
        (Command::new(own), None)
    } else if is_nightly(rustc_version(workspace_root, Some(NIGHTLY))?.as_deref()) {
        let mut command = Command::new("rustup");
        command.args(["run", NIGHTLY, "cargo"]);
        (command, Some(NIGHTLY))
    } else {
        bail!(
            "this program runs its threads on web workers ({POOL_CRATE}), which needs the \
             standard library rebuilt with atomics: nightly Rust and its rust-src. Install \
             them with `rustup toolchain install {NIGHTLY} --component rust-src`, or pin \
             nightly in the project's rust-toolchain.toml"
        );
    };
    let sysroot = sysroot(workspace_root, toolchain)?;
    if !has_rust_src(&sysroot) {
        let mut args = vec!["component", "add", "rust-src"];
        if let Some(toolchain) = toolchain {
            args.extend(["--toolchain", toolchain]);
        }
        let add = format!("rustup {}", args.join(" "));
        if offline {
            bail!(
                "the nightly toolchain has no rust-src, which rebuilding the standard library \
                 with atomics needs; run `{add}`"
            );
        }
        terminal::status("Installing", &format!("rust-src for nightly (`{add}`)"));
        let status = Command::new("rustup")
            .args(&args)
            .current_dir(workspace_root)
            .stdout(Stdio::inherit())
            .status()
            .context("could not run rustup")?;
        if !status.success() || !has_rust_src(&sysroot) {
            bail!("could not install rust-src for nightly; run `{add}` yourself and try again");
        }
    }
    command.env_remove("RUSTC").env_remove("RUSTDOC");
    Ok(command)
}

fn is_nightly(version: Option<&str>) -> bool {
    version.is_some_and(|v| v.contains("-nightly") || v.contains("-dev"))
}

/// `rustc -vV`'s release line, of the project's toolchain or of `toolchain`
/// through rustup; `None` if that rustc does not run.
fn rustc_version(workspace_root: &Path, toolchain: Option<&str>) -> Result<Option<String>> {
    let output = rustc(toolchain)
        .arg("-vV")
        .current_dir(workspace_root)
        .stderr(Stdio::null())
        .output();
    Ok(output.ok().filter(|o| o.status.success()).and_then(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find_map(|line| line.strip_prefix("release: ").map(str::to_owned))
    }))
}

fn sysroot(workspace_root: &Path, toolchain: Option<&str>) -> Result<PathBuf> {
    let output = rustc(toolchain)
        .args(["--print", "sysroot"])
        .current_dir(workspace_root)
        .output()
        .context("could not run rustc")?;
    Ok(PathBuf::from(
        String::from_utf8_lossy(&output.stdout).trim().to_owned(),
    ))
}

fn rustc(toolchain: Option<&str>) -> Command {
    match toolchain {
        Some(toolchain) => {
            let mut command = Command::new("rustup");
            command.args(["run", toolchain, "rustc"]);
            command
        }
        None => Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"))),
    }
}

fn has_rust_src(sysroot: &Path) -> bool {
    sysroot
        .join("lib/rustlib/src/rust/library/std/Cargo.toml")
        .is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_make_a_shared_imported_memory_with_atomics() {
        let flags = rustflags().join(" ");
        assert!(flags.contains("+atomics"), "{flags}");
        assert!(flags.contains("--shared-memory") && flags.contains("--import-memory"));
        assert!(flags.contains("--export=__wasm_init_tls"));
    }

    #[test]
    fn nightly_is_told_from_the_release_line() {
        assert!(is_nightly(Some("1.97.0-nightly")));
        assert!(!is_nightly(Some("1.95.0")));
        assert!(!is_nightly(None));
    }
}
