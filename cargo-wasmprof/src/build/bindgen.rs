//! The wasm-bindgen CLI, which must match the `wasm-bindgen` crate's version
//! exactly: found on PATH or in wasmprof's cache, else installed into the
//! cache once with `cargo install`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::terminal;

/// Finds a `wasm-bindgen` of exactly `version`, installing one if needed.
pub(crate) fn find_or_install(version: &str, offline: bool) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("WASM_BINDGEN") {
        let path = PathBuf::from(path);
        return match cli_version(&path) {
            Some(found) if found == version => Ok(path),
            found => bail!(
                "WASM_BINDGEN={} is wasm-bindgen {}, but the crate uses wasm-bindgen {version}; \
                 the two must match exactly",
                path.display(),
                found.as_deref().unwrap_or("(unknown version)")
            ),
        };
    }
    let on_path = PathBuf::from("wasm-bindgen");
    let path_version = cli_version(&on_path);
    if path_version.as_deref() == Some(version) {
        return Ok(on_path);
    }
    let cached = cache_dir()?.join(format!("wasm-bindgen-cli-{version}"));
    let cached_bin = cached.join("bin").join(exe("wasm-bindgen"));
    if cli_version(&cached_bin).as_deref() == Some(version) {
        return Ok(cached_bin);
    }
    let install = format!("cargo install wasm-bindgen-cli --version {version}");
    if offline {
        bail!(
            "no wasm-bindgen {version} found ({}); offline, it cannot be installed: run `{install}` when online",
            describe_path_version(path_version.as_deref())
        );
    }
    terminal::status(
        "Installing",
        &format!(
            "wasm-bindgen-cli {version} into {} to match the wasm-bindgen crate ({}; once, a few minutes)",
            cached.display(),
            describe_path_version(path_version.as_deref())
        ),
    );
    // `--locked` first for the versions its authors tested; a yanked
    // dependency can make that fail, and then the newest compatible ones.
    let installed =
        cargo_install(version, &cached, true)? || cargo_install(version, &cached, false)?;
    if !installed || cli_version(&cached_bin).as_deref() != Some(version) {
        bail!(
            "could not install wasm-bindgen-cli {version}; run `{install}` yourself and try again"
        );
    }
    Ok(cached_bin)
}

fn describe_path_version(found: Option<&str>) -> String {
    match found {
        Some(v) => format!("the wasm-bindgen on PATH is {v}"),
        None => "none on PATH".to_owned(),
    }
}

fn cargo_install(version: &str, root: &Path, locked: bool) -> Result<bool> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["install", "wasm-bindgen-cli", "--version"])
        .arg(format!("={version}"))
        .arg("--root")
        .arg(root)
        .stdout(Stdio::inherit());
    if locked {
        command.arg("--locked");
    }
    let status = command.status().context("could not run cargo install")?;
    Ok(status.success())
}

/// `wasm-bindgen --version` prints `wasm-bindgen 0.2.130`.
fn cli_version(path: &Path) -> Option<String> {
    let output = Command::new(path).arg("--version").output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().nth(1).map(str::to_owned)
}

fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("WASMPROF_CACHE_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(dir).join("wasmprof"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; set WASMPROF_CACHE_DIR")?;
    Ok(PathBuf::from(home).join(".cache").join("wasmprof"))
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// Runs the CLI on `wasm`, writing bindings for `target` (`nodejs` or
/// `web`) into `out_dir`. Returns the generated JS file and the processed
/// `.wasm`.
///
/// The CLI writes into a directory of this process's own and each file is
/// then renamed into `out_dir`, so that a run copying the module out of
/// `out_dir` while another `cargo wasmprof` regenerates it reads whole
/// files, never half-written ones.
pub(crate) fn generate(
    cli: &Path,
    wasm: &Path,
    out_dir: &Path,
    target: &str,
) -> Result<(PathBuf, PathBuf)> {
    let partial = out_dir.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial)
        .with_context(|| format!("could not create {}", partial.display()))?;
    let output = Command::new(cli)
        .args(["--target", target, "--out-dir"])
        .arg(&partial)
        .arg(wasm)
        .output()
        .with_context(|| format!("could not run {}", cli.display()));
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            let _ = std::fs::remove_dir_all(&partial);
            bail!(
                "wasm-bindgen failed on {}:\n{}",
                wasm.display(),
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(e);
        }
    };
    drop(output);
    let moved =
        super::dir_walk::each_file(&partial, out_dir, &mut |from, to| std::fs::rename(from, to))
            .context("could not move wasm-bindgen's output into place");
    let _ = std::fs::remove_dir_all(&partial);
    moved?;
    let stem = wasm
        .file_stem()
        .and_then(|s| s.to_str())
        .context("module file has no name")?;
    Ok((
        out_dir.join(format!("{stem}.js")),
        out_dir.join(format!("{stem}_bg.wasm")),
    ))
}
