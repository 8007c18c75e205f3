//! The rustc flags the user's own build would have: cargo takes them from
//! `CARGO_ENCODED_RUSTFLAGS`, `RUSTFLAGS`, then the config files'
//! `target.<triple>.rustflags`, `target.<cfg>.rustflags` and
//! `build.rustflags`, the first that is set. An instrumented build passes
//! its own flags through the environment, which hides the config's, so it
//! starts from these: `--cfg getrandom_backend="wasm_js"`, or the atomics
//! of a program that starts its own web workers, stay in the build.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context, Result};

/// The flags cargo would give rustc for `target` when run in `cwd`.
pub(crate) fn user_rustflags(cwd: &Path, target: &str) -> Result<Vec<String>> {
    resolve(cwd, target, std::env::vars_os())
}

/// cargo's configuration in `cwd`, with this process's environment.
pub(crate) fn cargo_config(cwd: &Path) -> Result<cargo_config2::Config> {
    load(cwd, std::env::vars_os())
}

fn load(
    cwd: &Path,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<cargo_config2::Config> {
    let options = cargo_config2::ResolveOptions::default().env(vars);
    cargo_config2::Config::load_with_options(cwd, options).with_context(|| {
        format!(
            "could not read cargo's configuration (the .cargo/config.toml files above {})",
            cwd.display()
        )
    })
}

/// [`user_rustflags`] under the environment `vars`.
fn resolve(
    cwd: &Path,
    target: &str,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Vec<String>> {
    rustflags_in(&load(cwd, vars)?, target)
}

/// The flags `config` gives rustc for `target`.
pub(crate) fn rustflags_in(config: &cargo_config2::Config, target: &str) -> Result<Vec<String>> {
    let flags = config.rustflags(target).with_context(|| {
        format!("could not resolve the rustflags that cargo's configuration sets for {target}")
    })?;
    Ok(flags.map(|f| f.flags).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use std::ffi::OsString;

    /// This process's environment without the flags, and with `extra`.
    fn env(extra: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        std::env::vars_os()
            .filter(|(k, _)| k != "RUSTFLAGS" && k != "CARGO_ENCODED_RUSTFLAGS")
            .chain(extra.iter().map(|(k, v)| (k.into(), v.into())))
            .collect()
    }

    #[test]
    fn a_config_s_rustflags_are_the_user_s_unless_the_environment_sets_them() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join(".cargo")).unwrap();
        std::fs::write(
            project.join(".cargo/config.toml"),
            "[target.wasm32-unknown-unknown]\n\
             rustflags = ['--cfg', 'getrandom_backend=\"wasm_js\"']\n\
             [build]\nrustflags = ['--cfg', 'elsewhere']\n",
        )
        .unwrap();
        let unknown = "wasm32-unknown-unknown";
        assert_eq!(
            resolve(&project, unknown, env(&[])).unwrap(),
            ["--cfg", "getrandom_backend=\"wasm_js\""]
        );
        assert_eq!(
            resolve(&project, "wasm32-wasip1", env(&[])).unwrap(),
            ["--cfg", "elsewhere"]
        );
        assert_eq!(
            resolve(&project, unknown, env(&[("RUSTFLAGS", "-Copt-level=1")])).unwrap(),
            ["-Copt-level=1"]
        );
    }

    #[test]
    fn a_config_cargo_cannot_read_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".cargo")).unwrap();
        std::fs::write(dir.path().join(".cargo/config.toml"), "[build\n").unwrap();
        let error = format!(
            "{:#}",
            resolve(dir.path(), "wasm32-wasip1", env(&[])).unwrap_err()
        );
        assert!(
            error.contains("could not read cargo's configuration"),
            "{error}"
        );
    }
}
