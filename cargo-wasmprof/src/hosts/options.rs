//! How a module is run in a host, as plain data: the command line fills it in
//! (`cli::HostArgs`), and so do `bench` and `test`, which save it in their
//! sessions. The hosts read this, never clap's types.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Entry point, limits, sampler, host executables and the program's
/// arguments; each field is the command-line flag of the same name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HostOptions {
    pub invoke: Option<String>,
    pub timeout: Option<Duration>,
    pub until_exit: bool,
    pub sample: bool,
    pub no_sample: bool,
    /// `None`: the default, which wasmtime's sampler may lengthen (see
    /// `HostConfig::sample_interval_chosen`).
    pub sample_interval: Option<Duration>,
    pub node: Option<PathBuf>,
    pub node_arg: Vec<String>,
    pub dir: Vec<String>,
    pub no_default_dir: bool,
    pub env: Vec<String>,
    pub browser: Option<PathBuf>,
    pub browser_arg: Vec<String>,
    #[serde(default)]
    pub headed: bool,
    pub page: Option<PathBuf>,
    pub grace: Duration,
    pub duration: Option<Duration>,
    pub after: Option<Duration>,
    #[serde(default)]
    pub requests: Option<u32>,
    #[serde(default)]
    pub path: Option<String>,
    pub args: Vec<String>,
}
