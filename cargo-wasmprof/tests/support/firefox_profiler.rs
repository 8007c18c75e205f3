//! The Firefox Profiler's own loader, through its command line
//! (`@firefox-devtools/profiler-cli`, pinned in
//! `cargo-wasmprof/tests/viewers/package.json`, installed by `.ci/run`):
//! it loads a file as profiler.firefox.com does and answers questions
//! about its threads, functions and markers, as JSON.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::repo_root;

fn cli() -> PathBuf {
    let cli = repo_root().join("cargo-wasmprof/tests/viewers/node_modules/.bin/profiler-cli");
    assert!(
        cli.exists(),
        "the Firefox Profiler's command line is not installed: run `npm ci --prefix \
         cargo-wasmprof/tests/viewers` (.ci/run does)"
    );
    cli
}

/// A file loaded in a session of its own (tests run side by side), which
/// ends when this is dropped.
pub(crate) struct Loaded {
    session: String,
}

impl Loaded {
    /// Loads `file`. The tool gives its daemon half a second to start and
    /// fails the load when a busy machine takes longer, while the daemon
    /// goes on loading the file; so a failed load is waited for (the
    /// session answering `thread list`), and only a session that never
    /// answers is stopped and loaded again.
    pub(crate) fn load(file: &Path) -> Loaded {
        let session = format!(
            "wasmprof-{}-{}",
            std::process::id(),
            file.file_name()
                .unwrap()
                .to_string_lossy()
                .replace('.', "-")
        );
        let loaded = Loaded { session };
        let mut failures = Vec::new();
        for _attempt in 0..2 {
            let output = Command::new(cli())
                .args(["load", "--session", &loaded.session])
                .arg(file)
                .output()
                .unwrap();
            if output.status.success() || loaded.answers_within(Duration::from_secs(60)) {
                return loaded;
            }
            failures.push(String::from_utf8_lossy(&output.stderr).into_owned());
            let _ = Command::new(cli()).args(["stop", &loaded.session]).output();
        }
        panic!(
            "profiler-cli could not load {}: {}",
            file.display(),
            failures.join("\n--- then ---\n")
        );
    }

    /// Whether the session answers a question before `patience` runs out.
    fn answers_within(&self, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            let asked = Command::new(cli())
                .args(["thread", "list", "--session", &self.session, "--json"])
                .output()
                .unwrap();
            if asked.status.success() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        false
    }

    /// `profiler-cli ARGS --json` in the session.
    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let output = Command::new(cli())
            .args(args)
            .args(["--session", &self.session, "--json"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "profiler-cli {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "profiler-cli {args:?} printed no JSON ({e}): {}",
                String::from_utf8_lossy(&output.stdout)
            )
        })
    }

    /// The handle of the thread whose name starts with `name` (`t-3`).
    pub(crate) fn thread(&self, name: &str) -> String {
        let list = self.json(&["thread", "list"]);
        let threads = list["threads"].as_array().unwrap();
        threads
            .iter()
            .find(|t| t["name"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("no thread {name} among {threads:?}"))["threadHandle"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Each function of thread `handle`, by name: its self and total
    /// sample weights, as the viewer's call tree sums them.
    pub(crate) fn functions(&self, handle: &str) -> Vec<(String, f64, f64)> {
        let functions = self.json(&["thread", "functions", "--thread", handle, "--limit", "0"]);
        functions["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_owned(),
                    f["selfSamples"].as_f64().unwrap(),
                    f["totalSamples"].as_f64().unwrap(),
                )
            })
            .collect()
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let _ = Command::new(cli()).args(["stop", &self.session]).output();
    }
}
