//! How a module is run, as plain data: the command line fills it in
//! (`cli::HostArgs`), and so do `bench` and `test`, which save it in their
//! sessions. The hosts read this, never clap's types.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Where the module runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostKind {
    /// Node.js (wasm-bindgen's `nodejs` bindings; WASI binaries through node:wasi)
    #[default]
    Node,
    /// Headless Chromium, driven through the DevTools protocol (wasm-bindgen's `web` bindings)
    Browser,
    /// wasmtime, embedded: WASI programs (and plain modules with --invoke) without Node
    Wasmtime,
}

impl HostKind {
    /// The `--target` wasm-bindgen generates bindings for.
    pub fn bindgen_target(self) -> &'static str {
        match self {
            // wasmtime runs no wasm-bindgen module; the Node bindings are
            // as good as any for a build that will be refused.
            HostKind::Node | HostKind::Wasmtime => "nodejs",
            HostKind::Browser => "web",
        }
    }
}

/// Entry point, limits, sampler, host executables and the program's
/// arguments; each field is the command-line flag of the same name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostOptions {
    pub invoke: Option<String>,
    pub timeout: Option<Duration>,
    pub until_exit: bool,
    pub sample: bool,
    pub no_sample: bool,
    pub sample_interval: Duration,
    pub node: Option<PathBuf>,
    pub node_arg: Vec<String>,
    pub dir: Vec<String>,
    pub no_default_dir: bool,
    pub env: Vec<String>,
    pub browser: Option<PathBuf>,
    pub browser_arg: Vec<String>,
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
