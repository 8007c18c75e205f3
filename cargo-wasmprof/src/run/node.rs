//! The Node.js host: finding Node, and running `node-host.js` on a module.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The host script, shipped inside the binary.
const HOST_JS: &str = include_str!("../host/node-host.js");
/// What wasm-bindgen's `require("prof")` resolves to: the host API object
/// the host script put on `globalThis`.
const PROF_MODULE_JS: &str = "module.exports = globalThis.__wasmprofHostApi;\n";
/// WASI preview 1 in `node:wasi` with `version: 'preview1'` needs Node 20.
const MINIMUM_MAJOR: u32 = 20;

pub struct Node {
    pub exe: PathBuf,
    pub version: String,
    /// Extra flags for `node` itself (`--node-arg`).
    pub node_args: Vec<String>,
}

/// V8 starts wasm functions in its baseline compiler and never replaces a
/// running loop with optimised code, so a long loop entered once would be
/// timed as baseline code and the same loop entered later as optimised code;
/// and it compiles each function on its first call, inside whatever call
/// is being timed. Compiling everything optimised up front makes equal work
/// take equal time; `--node-arg=--liftoff` and
/// `--node-arg=--wasm-lazy-compilation` restore V8's defaults.
const DEFAULT_NODE_ARGS: &[&str] = &["--no-liftoff", "--no-wasm-lazy-compilation"];

/// What the host script is told to do.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostConfig {
    pub kind: &'static str,
    pub wasm: PathBuf,
    pub js: Option<PathBuf>,
    pub invoke: Option<String>,
    pub args: Vec<String>,
    pub argv: Vec<String>,
    /// V8 needs a bound: an hour stands for "no timeout".
    pub timeout_ms: u64,
    pub snapshot_out: PathBuf,
    pub result_out: PathBuf,
}

/// What the host script says about the run.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostResult {
    /// ok | exit | trap | timeout | error | usage
    pub status: String,
    pub message: Option<String>,
    pub exit_code: i32,
    pub return_value: Option<serde_json::Value>,
    pub host: String,
    pub timer_resolution_nanos: Option<f64>,
    pub wall_nanos: u64,
    #[serde(default)]
    pub program_nanos: u64,
    pub snapshot: bool,
    pub snapshot_error: Option<String>,
}

/// What the program printed, when its output was captured.
#[derive(Debug, Default)]
pub struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Node {
    /// `--node`, else `$WASMPROF_NODE`, else `node` on PATH.
    pub fn locate(explicit: Option<&Path>) -> Result<Node> {
        let exe = explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("WASMPROF_NODE").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("node"));
        let output = Command::new(&exe).arg("--version").output();
        let output = match output {
            Ok(output) if output.status.success() => output,
            _ => bail!(
                "Node.js was not found (tried `{}`): install Node.js {MINIMUM_MAJOR} or newer \
                 (e.g. `apt-get install nodejs`), or name it with --node PATH",
                exe.display()
            ),
        };
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let major = version
            .trim_start_matches('v')
            .split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok());
        match major {
            Some(m) if m >= MINIMUM_MAJOR => Ok(Node {
                exe,
                version,
                node_args: DEFAULT_NODE_ARGS.iter().map(|a| a.to_string()).collect(),
            }),
            _ => bail!(
                "{} is Node.js {version}; wasmprof needs Node.js {MINIMUM_MAJOR} or newer",
                exe.display()
            ),
        }
    }

    /// Writes the host files into `dir` and runs the module. The program's
    /// output goes straight to the terminal, or with `capture` into the
    /// returned [`Captured`]. The result is `None` when Node ended without
    /// writing one.
    pub fn run(
        &self,
        config: &HostConfig,
        dir: &Path,
        capture: bool,
    ) -> Result<(Option<HostResult>, Captured)> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("could not create {}", dir.display()))?;
        let host = dir.join("wasmprof-host.js");
        std::fs::write(&host, HOST_JS)
            .with_context(|| format!("could not write {}", host.display()))?;
        if let Some(js) = &config.js {
            let prof = js
                .parent()
                .context("generated JS has no directory")?
                .join("node_modules")
                .join("prof");
            std::fs::create_dir_all(&prof)?;
            std::fs::write(prof.join("index.js"), PROF_MODULE_JS)?;
        }
        let config_path = dir.join("config.json");
        std::fs::write(&config_path, serde_json::to_vec_pretty(config)?)?;
        let _ = std::fs::remove_file(&config.result_out);
        let _ = std::fs::remove_file(&config.snapshot_out);
        let mut command = Command::new(&self.exe);
        command
            .arg("--no-warnings")
            .args(&self.node_args)
            .arg(&host)
            .arg(&config_path);
        let started = |e: std::io::Error| {
            anyhow::Error::new(e).context(format!("could not start {}", self.exe.display()))
        };
        let (status, stdout, stderr) = if capture {
            let output = command.output().map_err(started)?;
            (output.status, output.stdout, output.stderr)
        } else {
            (command.status().map_err(started)?, Vec::new(), Vec::new())
        };
        let result = match std::fs::read(&config.result_out) {
            Ok(bytes) => Some(serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "the host wrote an unreadable result ({})",
                    config.result_out.display()
                )
            })?),
            Err(_) => {
                crate::ui::warning(&format!(
                    "Node ended ({status}) without reporting how the run went"
                ));
                None
            }
        };
        Ok((result, Captured { stdout, stderr }))
    }
}
