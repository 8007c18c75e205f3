//! The Rust side of the toolchain: is the wasm target's standard library
//! installed? Checked before the long build, as wasm-pack does, so the user
//! hears about it first and with the command to run.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::terminal;

/// Makes sure `target`'s standard library is installed, adding it with
/// rustup when rustup manages the toolchain.
pub(crate) fn ensure_target(target: &str, workspace_root: &Path, offline: bool) -> Result<()> {
    if target_installed(target, workspace_root)? {
        return Ok(());
    }
    let add_command = format!("rustup target add {target}");
    if offline || !has_rustup() {
        bail!("the Rust standard library for {target} is not installed; run `{add_command}`");
    }
    terminal::status(
        "Installing",
        &format!("the {target} target (`{add_command}`)"),
    );
    let status = Command::new("rustup")
        .args(["target", "add", target])
        .current_dir(workspace_root)
        .stdout(Stdio::inherit())
        .status()
        .context("could not run rustup")?;
    if !status.success() || !target_installed(target, workspace_root)? {
        bail!("could not install the {target} target; run `{add_command}` yourself and try again");
    }
    Ok(())
}

fn target_installed(target: &str, workspace_root: &Path) -> Result<bool> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", target])
        .current_dir(workspace_root)
        .output()
        .with_context(|| format!("could not run {}", rustc.to_string_lossy()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("could not find specification") || stderr.contains("unknown target") {
            bail!(
                "`{target}` is not a target this rustc knows: {}",
                stderr.trim()
            );
        }
        return Ok(false);
    }
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let libdir = Path::new(&libdir);
    Ok(libdir.is_dir()
        && std::fs::read_dir(libdir)
            .map(|mut entries| {
                entries.any(|e| {
                    e.map(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
                        .unwrap_or(false)
                })
            })
            .unwrap_or(false))
}

fn has_rustup() -> bool {
    Command::new("rustup")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}
