//! What `cargo wasmprof test` tells its runner: cargo starts the runner once
//! per test binary, in a process of its own, and the runner finds this in
//! the file `WASMPROF_TEST_SESSION` names.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::build::options::HostKind;
use crate::hosts::options::HostOptions;

/// The variable naming the session file.
pub(crate) const SESSION_VAR: &str = "WASMPROF_TEST_SESSION";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Session {
    /// Where each run leaves its profile.
    pub dir: PathBuf,
    /// `--host`, if given: else each binary goes where it is configured to.
    pub host: Option<HostKind>,
    /// The host flags, `--dir`s made absolute.
    pub host_args: HostOptions,
    /// The package tested, for the profiles.
    pub package: String,
    /// The `cargo wasmprof test` command line.
    pub command: Vec<String>,
    /// What a crate-wide build did with small functions.
    pub small: Option<crate::build::SmallFunctions>,
    /// `--offline`: no wasm-bindgen CLI is installed.
    pub offline: bool,
    /// Run the engine's sampler beside each binary: timed by the host
    /// clock, without `--no-sample`. Its samples give the calls too short
    /// to time their time, as they do for `run`.
    #[serde(default)]
    pub sample: bool,
    /// The shadow copy cargo builds and runs from, and the workspace it
    /// copies: a test runs in its package's directory as with `cargo test`,
    /// the original one.
    pub copy_of: Option<(PathBuf, PathBuf)>,
}

impl Session {
    pub(crate) fn write(&self, path: &Path) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("could not create {}", self.dir.display()))?;
        std::fs::write(path, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("could not write {}", path.display()))
    }

    /// The session of the `cargo wasmprof test` that started this runner.
    pub(crate) fn from_env() -> Result<Session> {
        let path = std::env::var_os(SESSION_VAR).with_context(|| {
            format!(
                "this is the test runner of `cargo wasmprof test`, which cargo starts for each \
                 test binary; run `cargo wasmprof test` instead (${SESSION_VAR} is not set)"
            )
        })?;
        let path = PathBuf::from(path);
        let bytes = std::fs::read(&path)
            .with_context(|| format!("could not read the test session {}", path.display()))?;
        serde_json::from_slice(&bytes)
            .with_context(|| format!("the test session {} is unreadable", path.display()))
    }

    /// `dir` as the user knows it: outside the shadow copy.
    pub(crate) fn original(&self, dir: &Path) -> PathBuf {
        match &self.copy_of {
            Some((copy, original)) => match dir.strip_prefix(copy) {
                Ok(relative) => original.join(relative),
                Err(_) => dir.to_path_buf(),
            },
            None => dir.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Flags {
        #[command(flatten)]
        host: crate::cli::HostArgs,
    }

    #[test]
    fn a_directory_in_the_copy_maps_to_the_original() {
        let flags: Flags = clap::Parser::parse_from(["x"]);
        let session = Session {
            dir: "/t/s".into(),
            host: None,
            host_args: flags.host.options(),
            package: "p".into(),
            command: vec![],
            small: None,
            offline: false,
            sample: false,
            copy_of: Some(("/t/shadow/ws".into(), "/home/me/ws".into())),
        };
        assert_eq!(
            session.original(Path::new("/t/shadow/ws/wordcount")),
            Path::new("/home/me/ws/wordcount")
        );
        assert_eq!(
            session.original(Path::new("/elsewhere")),
            Path::new("/elsewhere")
        );
    }
}
