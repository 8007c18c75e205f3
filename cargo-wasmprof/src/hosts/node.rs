//! The Node.js host: finding Node, and running `node-host.js` on a module.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::files;
use super::host::{Captured, Host, HostConfig, HostResult};
use crate::build::ModuleKind;
use crate::hosts::options::HostOptions;

/// The host script, shipped inside the binary.
const HOST_JS: &str = include_str!("../js/node-host.js");
/// What wasm-bindgen's `require("prof")` resolves to: the host API object
/// the host script put on `globalThis`.
const PROF_MODULE_JS: &str = "module.exports = globalThis.__wasmprofHostApi;\n";
/// WASI preview 1 in `node:wasi` with `version: 'preview1'` needs Node 20.
const MINIMUM_MAJOR: u32 = 20;

pub(crate) struct Node {
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
///
/// `--no-concurrent-marking`: Node 20's V8 crashed (a segfault in the
/// interpreter, after the program had returned) on `examples/walks` with
/// `--timer none`, whose memory grows past 200 MB, unless the collector
/// marked on the main thread; `--single-threaded-gc` avoided it too. The
/// host's own JavaScript allocates little, so marking in place costs the
/// program nothing measurable.
const DEFAULT_NODE_ARGS: &[&str] = &[
    "--no-liftoff",
    "--no-wasm-lazy-compilation",
    "--no-concurrent-marking",
];

impl Node {
    /// `--node`, else `$WASMPROF_NODE`, else `node` on PATH, with the
    /// user's `--node-arg`s.
    pub(crate) fn locate(args: &HostOptions) -> Result<Node> {
        let browser_only = [
            (args.browser.is_some(), "--browser"),
            (!args.browser_arg.is_empty(), "--browser-arg"),
            (args.headed, "--headed"),
            (args.page.is_some(), "--page"),
            (args.duration.is_some(), "--duration"),
            (args.after.is_some(), "--after"),
        ];
        if let Some((_, flag)) = browser_only.iter().find(|(given, _)| *given) {
            bail!("{flag} is for the browser host: add --host browser");
        }
        let exe = args
            .node
            .clone()
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
                node_args: DEFAULT_NODE_ARGS
                    .iter()
                    .map(|a| a.to_string())
                    .chain(args.node_arg.iter().cloned())
                    .collect(),
            }),
            _ => bail!(
                "{} is Node.js {version}; wasmprof needs Node.js {MINIMUM_MAJOR} or newer",
                exe.display()
            ),
        }
    }
}

impl Host for Node {
    fn describe(&self) -> String {
        format!("Node {}", self.version)
    }

    fn check_kind(&self, _kind: ModuleKind) -> Result<()> {
        Ok(())
    }

    /// Copies the module into `dir` (so that a build running beside this
    /// run cannot change it underneath), writes the host files there and
    /// runs Node on them.
    fn run(
        &mut self,
        config: &HostConfig,
        dir: &Path,
        capture: bool,
    ) -> Result<(Option<HostResult>, Captured)> {
        let mut config = config.clone();
        files::copy_module_into(&mut config, &dir.join("module"))?;
        let host = dir.join("wasmprof-host.js");
        files::write(&host, HOST_JS)?;
        files::write(&dir.join("host-api.js"), files::HOST_API_JS)?;
        files::write(&dir.join("bindgen-test.js"), files::BINDGEN_TEST_JS)?;
        if let Some(js) = &config.js {
            let prof = js
                .parent()
                .context("generated JS has no directory")?
                .join("node_modules")
                .join("prof");
            files::write(&prof.join("index.js"), PROF_MODULE_JS)?;
        }
        let config_path = dir.join("config.json");
        files::write(&config_path, &serde_json::to_string_pretty(&config)?)?;
        let mut command = Command::new(&self.exe);
        command.arg("--no-warnings").args(&self.node_args);
        if let Some(interval) = config.sample_interval_micros {
            let out = &config.cpuprofile_out;
            command
                .arg("--cpu-prof")
                .arg(format!("--cpu-prof-interval={interval}"))
                .arg(format!(
                    "--cpu-prof-dir={}",
                    out.parent().unwrap_or(dir).display()
                ))
                .arg(format!(
                    "--cpu-prof-name={}",
                    out.file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or("samples.cpuprofile")
                ));
        }
        command.arg(&host).arg(&config_path);
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
                crate::terminal::warning(&format!(
                    "Node ended ({status}) without reporting how the run went"
                ));
                None
            }
        };
        Ok((result, Captured { stdout, stderr }))
    }
}
