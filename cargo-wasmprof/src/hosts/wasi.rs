//! What a WASI program sees of this machine, decided once for every WASI
//! host: the current directory preopened (as `.` and as its absolute path,
//! so that the files `cargo run` would find are found), `--dir`s, and only
//! the environment variables given with `--env`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::host::WasiConfig;
use crate::hosts::options::HostOptions;
use crate::terminal;

/// The preopens and environment the flags ask for, relative paths taken
/// from `cwd`.
pub(crate) fn config(args: &HostOptions, cwd: &Path) -> Result<WasiConfig> {
    let mut preopens = BTreeMap::new();
    if !args.no_default_dir {
        let here = cwd
            .canonicalize()
            .with_context(|| format!("the current directory {} is not readable", cwd.display()))?;
        preopens.insert(".".to_owned(), here.clone());
        preopens.insert(here.display().to_string(), here);
    }
    for dir in &args.dir {
        let (host, guest) = match dir.split_once("::") {
            Some((host, guest)) => (host, guest),
            None => (dir.as_str(), dir.as_str()),
        };
        if host.is_empty() || guest.is_empty() {
            bail!("--dir {dir}: expected HOST or HOST::GUEST");
        }
        let resolved = cwd.join(host);
        if !resolved.is_dir() {
            bail!("--dir {dir}: {} is not a directory", resolved.display());
        }
        let resolved = resolved
            .canonicalize()
            .with_context(|| format!("--dir {dir}: cannot resolve {}", resolved.display()))?;
        preopens.insert(guest.to_owned(), resolved);
    }
    let mut env = BTreeMap::new();
    for variable in &args.env {
        match variable.split_once('=') {
            Some(("", _)) => bail!("--env {variable}: the name is empty"),
            Some((name, value)) => {
                env.insert(name.to_owned(), value.to_owned());
            }
            None => match std::env::var(variable) {
                Ok(value) => {
                    env.insert(variable.clone(), value);
                }
                Err(_) => terminal::warning(&format!(
                    "--env {variable}: no such variable here, so the program does not get it"
                )),
            },
        }
    }
    Ok(WasiConfig { preopens, env })
}

/// The current directory, for [`config`].
pub(crate) fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().context("the current directory is not readable")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The host options with `flags` (`--dir`, `--no-default-dir` and
    /// `--env`, which are all `config` reads) and nothing else set.
    fn host_args(flags: &[&str]) -> HostOptions {
        let mut options = HostOptions {
            invoke: None,
            timeout: None,
            until_exit: false,
            sample: false,
            no_sample: false,
            sample_interval: None,
            node: None,
            node_arg: Vec::new(),
            dir: Vec::new(),
            no_default_dir: false,
            env: Vec::new(),
            browser: None,
            browser_arg: Vec::new(),
            headed: false,
            page: None,
            grace: Duration::ZERO,
            duration: None,
            after: None,
            requests: None,
            path: None,
            args: Vec::new(),
        };
        let mut flags = flags.iter();
        while let Some(&flag) = flags.next() {
            let mut value = || flags.next().map(|v| (*v).to_owned()).expect("a value");
            match flag {
                "--dir" => options.dir.push(value()),
                "--env" => options.env.push(value()),
                "--no-default-dir" => options.no_default_dir = true,
                other => panic!("{other} is not read by `config`"),
            }
        }
        options
    }

    #[test]
    fn the_current_directory_is_preopened_as_dot_and_as_itself() {
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().canonicalize().unwrap();
        let config = config(&host_args(&[]), dir.path()).unwrap();
        assert_eq!(config.preopens["."], here);
        assert_eq!(config.preopens[&here.display().to_string()], here);
        assert!(config.env.is_empty());
        let none = super::config(&host_args(&["--no-default-dir"]), dir.path()).unwrap();
        assert!(none.preopens.is_empty());
    }

    #[test]
    fn dirs_map_host_to_guest_and_env_is_only_what_was_given() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let data = dir.path().join("data").canonicalize().unwrap();
        // SAFETY: std's own readers of the environment (a process spawned
        // by another test) take the lock `set_var` takes, and nothing in
        // this test binary reads it through libc directly.
        unsafe { std::env::set_var("WASMPROF_TEST_FORWARDED", "from here") };
        let config = config(
            &host_args(&[
                "--no-default-dir",
                "--dir",
                "data",
                "--dir",
                "data::/input",
                "--env",
                "A=1",
                "--env",
                "WASMPROF_TEST_FORWARDED",
                "--env",
                "WASMPROF_TEST_NOT_SET_ANYWHERE",
            ]),
            dir.path(),
        )
        .unwrap();
        assert_eq!(config.preopens["data"], data);
        assert_eq!(config.preopens["/input"], data);
        assert_eq!(config.env["A"], "1");
        assert_eq!(config.env["WASMPROF_TEST_FORWARDED"], "from here");
        assert_eq!(config.env.len(), 2);
    }

    #[test]
    fn a_missing_or_malformed_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let error = config(&host_args(&["--dir", "nope"]), dir.path())
            .unwrap_err()
            .to_string();
        assert!(error.contains("is not a directory"), "{error}");
        assert!(config(&host_args(&["--dir", "::guest"]), dir.path()).is_err());
        assert!(config(&host_args(&["--env", "=x"]), dir.path()).is_err());
    }
}
