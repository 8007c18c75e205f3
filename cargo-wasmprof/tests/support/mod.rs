//! Helpers shared by the end-to-end and timing tests: the `cargo-wasmprof`
//! binary, the bundled examples, and reading what a run left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) use wasmprof_profile::profile::{Profile, read_profile};

pub(crate) mod browsers;
pub(crate) mod devtools;
pub(crate) mod firefox_profiler;
mod page_probe;
pub(crate) mod shown;
pub(crate) mod speedscope;
pub(crate) mod timing;
pub(crate) use page_probe::PageProbe;

/// The repository root.
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The examples workspace.
pub(crate) fn examples_dir() -> PathBuf {
    repo_root().join("examples")
}

/// The `cargo-wasmprof` that cargo built for these tests, with their
/// features.
pub(crate) fn cargo_wasmprof_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cargo-wasmprof"))
}

/// `cargo wasmprof` in `dir`, in the environment every test gives it: none
/// of the caller's build settings, and debug builds without debug info.
///
/// The profiles need the names section, which debug info does not touch; a
/// debug wasm build with DWARF is several times larger, and the tests'
/// builds together ran a CI machine's disk out.
///
/// Without `RUSTC_BOOTSTRAP`, which libtest's `--report-time` needs in the
/// test binary's environment: build scripts that rerun when it changes
/// (proc-macro2's, anyhow's) would rebuild every crate above them.
pub(crate) fn wasmprof_command(dir: &Path) -> Command {
    let mut command = Command::new(cargo_wasmprof_bin());
    command
        .arg("wasmprof")
        .current_dir(dir)
        .env_remove("RUSTC_BOOTSTRAP")
        .env_remove("RUSTFLAGS")
        .env_remove("WASMPROF_INSTRUMENT")
        .env("CARGO_PROFILE_DEV_DEBUG", "false");
    command
}

/// The outcome of one `cargo wasmprof …` call.
pub(crate) struct Run {
    pub output: Output,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// What a finished `cargo-wasmprof` process left.
    pub(crate) fn from_output(output: Output) -> Run {
        Run {
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            output,
        }
    }

    pub(crate) fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// Panics with both streams if the command failed.
    pub(crate) fn assert_success(&self) -> &Self {
        assert!(
            self.output.status.success(),
            "command failed ({:?})\n--- stdout\n{}\n--- stderr\n{}",
            self.output.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// The profile path printed by `run` on its `Profile` status line.
    pub(crate) fn profile_path(&self) -> PathBuf {
        self.profile_paths()
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no profile line in:\n{}", self.stderr))
    }

    /// Every profile the run saved, in order (one per run of `--runs`).
    pub(crate) fn profile_paths(&self) -> Vec<PathBuf> {
        self.stderr
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("Profile "))
            .map(|line| {
                let path = line.split(" (").next().unwrap();
                PathBuf::from(path.trim_end_matches(", incomplete"))
            })
            .collect()
    }

    pub(crate) fn profile(&self) -> Profile {
        read_profile(&self.profile_path()).expect("read profile")
    }
}

/// Runs `cargo wasmprof ARGS` in `dir`.
pub(crate) fn wasmprof_in(dir: &Path, args: &[&str]) -> Run {
    let output = wasmprof_command(dir)
        .args(args)
        .output()
        .expect("run cargo-wasmprof");
    Run::from_output(output)
}

/// Runs `cargo wasmprof ARGS` in `dir` on a display of its own, a virtual
/// one (`xvfb-run`, Debian's xvfb, which `.ci/run` installs), for
/// `--headed` browsers.
pub(crate) fn wasmprof_on_a_virtual_display(dir: &Path, args: &[&str]) -> Run {
    let wasmprof = wasmprof_command(dir);
    let mut command = Command::new("xvfb-run");
    command
        .args(["-a", "-s", "-screen 0 1280x1024x24"])
        .arg(wasmprof.get_program())
        .args(wasmprof.get_args())
        .args(args)
        .current_dir(dir);
    for (key, value) in wasmprof.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    Run::from_output(command.output().expect("run xvfb-run (Debian's xvfb)"))
}

/// Runs `cargo wasmprof ARGS` in the examples workspace with `input` on
/// its standard input and `env` in its environment.
pub(crate) fn wasmprof_with_stdin(args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Run {
    use std::io::Write;
    let mut child = wasmprof_command(&examples_dir())
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cargo-wasmprof");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input)
        .expect("write the program's input");
    Run::from_output(child.wait_with_output().expect("cargo-wasmprof ends"))
}

/// Runs `cargo wasmprof ARGS` in the examples workspace.
pub(crate) fn wasmprof(args: &[&str]) -> Run {
    wasmprof_in(&examples_dir(), args)
}

/// Calls and inclusive time per function name, summed over the tree.
pub(crate) fn calls_by_function(profile: &Profile) -> std::collections::BTreeMap<String, u64> {
    let mut calls = std::collections::BTreeMap::new();
    for node in &profile.nodes {
        if let Some(f) = node.function {
            *calls.entry(profile.functions[f].name.clone()).or_insert(0) += node.calls;
        }
    }
    // Count-only functions have no node: their calls are the function's.
    for function in &profile.functions {
        if let Some(n) = function.calls {
            *calls.entry(function.name.clone()).or_insert(0) += n;
        }
    }
    calls
}

/// The names of the count-only functions.
pub(crate) fn counted_functions(profile: &Profile) -> std::collections::BTreeSet<String> {
    profile
        .functions
        .iter()
        .filter(|f| f.tier == Some(wasmprof_profile::profile::FunctionTier::Counted))
        .map(|f| f.name.clone())
        .collect()
}

/// The indices of the nodes reached by exactly this path of function names
/// from the root.
pub(crate) fn node_indices_of_path<'a>(
    profile: &'a Profile,
    path: &'a [&'a str],
) -> impl Iterator<Item = usize> + 'a {
    (0..profile.nodes.len()).filter(move |&i| {
        let stack = profile.stack(i);
        stack.len() == path.len()
            && stack
                .iter()
                .zip(path)
                .all(|(&f, name)| profile.functions[f].name == *name)
    })
}

/// The nodes reached by exactly this path of function names from the root.
pub(crate) fn nodes_of_path<'a>(
    profile: &'a Profile,
    path: &'a [&'a str],
) -> impl Iterator<Item = &'a wasmprof_profile::profile::Node> + 'a {
    node_indices_of_path(profile, path).map(|i| &profile.nodes[i])
}

/// Inclusive nanoseconds through exactly this path of names.
pub(crate) fn time_of_path(profile: &Profile, path: &[&str]) -> f64 {
    nodes_of_path(profile, path)
        .map(|n| n.inclusive_nanos)
        .sum()
}

/// Calls through exactly this path of names.
pub(crate) fn calls_of_path(profile: &Profile, path: &[&str]) -> u64 {
    nodes_of_path(profile, path).map(|n| n.calls).sum()
}

/// The registry source of `name` `version`, as the examples' lock file
/// resolves it.
pub(crate) fn registry_source(name: &str, version: &str) -> std::path::PathBuf {
    let output = std::process::Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(examples_dir().join("Cargo.toml"))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name && p["version"] == version)
        .unwrap_or_else(|| panic!("{name} {version} is not in the examples' lock file"));
    Path::new(package["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf()
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of the registry crate `name` `version` in a temporary
/// directory, as a workspace of its own: a crate nobody here wrote, as its
/// users have it.
///
/// The copies build into one target directory (a `.cargo/config.toml`
/// beside them says where), so that the dependencies two tests share,
/// such as itoa's criterion, are compiled once rather than once a copy.
/// `cargo wasmprof` holds that directory's lock while it builds and runs.
pub(crate) fn registry_crate_copy(name: &str, version: &str) -> (tempfile::TempDir, PathBuf) {
    let source = registry_source(name, version);
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join(name);
    copy_dir(&source, &copy);
    let manifest = copy.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[workspace]\n");
    std::fs::write(&manifest, text).unwrap();
    let config = dir.path().join(".cargo");
    std::fs::create_dir_all(&config).unwrap();
    let shared = examples_dir().join("target").join("registry-crates");
    std::fs::write(
        config.join("config.toml"),
        format!("[build]\ntarget-dir = {:?}\n", shared.display().to_string()),
    )
    .unwrap();
    (dir, copy)
}

/// What the real `go tool pprof ARGS` prints, with a HOME of its own (it
/// keeps a cache there); panics if it fails, or if `go` is missing: a
/// pprof check is never skipped.
pub(crate) fn go_pprof(args: &[&str]) -> String {
    let home = std::env::temp_dir().join(format!("wasmprof-go-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let output = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .env("HOME", &home)
        .output()
        .unwrap_or_else(|e| {
            panic!("go tool pprof is needed to check pprof files ({e}): install golang-go (bash .ci/run does)")
        });
    assert!(
        output.status.success(),
        "go tool pprof {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Asserts that `function` is reported at a line of its source file that
/// reads `fn <its last name segment>`: the file as the user's editor shows
/// it, never the rewritten copy. Relative files are taken from `base`.
pub(crate) fn assert_function_at_its_line(
    function: &wasmprof_profile::profile::Function,
    base: &Path,
) {
    let path = base.join(&function.file);
    assert!(
        !path.to_string_lossy().contains("/wasmprof/"),
        "{} points into the rewritten copy ({})",
        function.name,
        function.file
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let line = text
        .lines()
        .nth(function.line as usize - 1)
        .unwrap_or_default();
    let short = function.name.rsplit("::").next().unwrap();
    assert!(
        line.contains(&format!("fn {short}")),
        "{} at {}:{} reads {line:?}",
        function.name,
        function.file,
        function.line
    );
}

/// The program's own run time in seconds, from `run`'s `Ran for …` line.
pub(crate) fn program_seconds(stderr: &str) -> f64 {
    let line = stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Ran for "))
        .unwrap_or_else(|| panic!("no `Ran for` line in:\n{stderr}"));
    let mut words = line.split_whitespace();
    let number: f64 = words.next().and_then(|n| n.parse().ok()).expect("a number");
    match words.next() {
        Some("ms") => number / 1e3,
        Some("s") => number,
        other => panic!("unknown unit {other:?}"),
    }
}

/// Milliseconds that V8's samples in a `.cpuprofile` spent in each function
/// whose name contains one of `names`, callees included: each sample goes
/// to its innermost frame that matches.
pub(crate) fn v8_sampled_ms<'a>(
    cpuprofile: &Path,
    names: &[&'a str],
) -> std::collections::HashMap<&'a str, f64> {
    use std::collections::HashMap;
    let text = std::fs::read_to_string(cpuprofile).unwrap();
    let profile: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut name_of = HashMap::new();
    let mut parent_of = HashMap::new();
    for node in profile["nodes"].as_array().unwrap() {
        let id = node["id"].as_u64().unwrap();
        name_of.insert(id, node["callFrame"]["functionName"].as_str().unwrap_or(""));
        for child in node["children"].as_array().into_iter().flatten() {
            parent_of.insert(child.as_u64().unwrap(), id);
        }
    }
    let samples = profile["samples"].as_array().unwrap();
    let deltas = profile["timeDeltas"].as_array().unwrap();
    let mut ms = HashMap::new();
    // A sample's time is the delta that follows it.
    for (i, sample) in samples.iter().enumerate() {
        let weight = deltas.get(i + 1).and_then(|d| d.as_f64()).unwrap_or(0.0) / 1e3;
        let mut at = sample.as_u64();
        while let Some(id) = at {
            let name = name_of.get(&id).copied().unwrap_or("");
            if let Some(f) = names.iter().find(|f| name.contains(**f)) {
                *ms.entry(*f).or_insert(0.0) += weight;
                break;
            }
            at = parent_of.get(&id).copied();
        }
    }
    ms
}

/// Runs `cargo wasmprof ARGS` in the examples workspace and returns the
/// outcome with the process id it had (browser launches are named after it).
pub(crate) fn wasmprof_with_pid(args: &[&str]) -> (Run, u32) {
    let child = spawn_wasmprof(args);
    let pid = child.id();
    let output = child.wait_with_output().expect("wait for cargo-wasmprof");
    (Run::from_output(output), pid)
}

/// Starts `cargo wasmprof ARGS` in the examples workspace with both streams
/// piped, for tests that talk to it while it runs.
pub(crate) fn spawn_wasmprof(args: &[&str]) -> std::process::Child {
    spawn_wasmprof_with_env(args, &[])
}

/// [`spawn_wasmprof`] with `env` added to its environment.
pub(crate) fn spawn_wasmprof_with_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    wasmprof_command(&examples_dir())
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cargo-wasmprof")
}

/// The live (not zombie) processes started by the browser host of the
/// `cargo-wasmprof` process `pid`: every launch's profile directory is
/// named `wasmprof-chromium-<pid>-N`, and every Chromium process carries it.
pub(crate) fn browser_processes_of(pid: u32) -> Vec<u32> {
    let marker = format!("wasmprof-chromium-{pid}-");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(process) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(&marker) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The state follows the parenthesised command name; Z is a zombie.
        let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
        if !matches!(state, Some('Z') | Some('X') | None) {
            found.push(process);
        }
    }
    found
}

/// Asserts that no process of the browser the `cargo-wasmprof` process
/// `pid` launched is still running, and that its profile directory is gone.
pub(crate) fn assert_no_browser_left(pid: u32) {
    let left = browser_processes_of(pid);
    assert!(left.is_empty(), "Chromium processes left behind: {left:?}");
    let leftover_dirs: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("wasmprof-chromium-{pid}-"))
        })
        .map(|e| e.path())
        .collect();
    assert!(
        leftover_dirs.is_empty(),
        "profile directories left: {leftover_dirs:?}"
    );
}

/// Asserts that no process of the Firefox the `cargo-wasmprof` process
/// `pid` launched is left: not the browser (whose command line names its
/// profile directory), not a content process or crash helper whose
/// browser is gone (they name their parent by pid), and no profile
/// directory.
pub(crate) fn assert_no_firefox_left(pid: u32) {
    let marker = format!("wasmprof-firefox-{pid}-");
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(process) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
        if matches!(state, Some('Z') | Some('X') | None) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<String> = String::from_utf8_lossy(&cmdline)
            .split('\0')
            .map(str::to_owned)
            .collect();
        let is_firefox = args
            .first()
            .is_some_and(|a| a.contains("firefox") || a.ends_with("crashhelper"));
        if !is_firefox {
            continue;
        }
        let parent = if args[0].ends_with("crashhelper") {
            args.get(1).cloned()
        } else {
            let at = args.iter().position(|a| a == "-parentPid");
            at.and_then(|at| args.get(at + 1).cloned())
        };
        let orphan = parent.is_some_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists());
        if args.iter().any(|a| a.contains(&marker)) || orphan {
            left.push((process, args.join(" ")));
        }
    }
    assert!(left.is_empty(), "Firefox processes left behind: {left:?}");
    let leftover_dirs: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&marker))
        .map(|e| e.path())
        .collect();
    assert!(
        leftover_dirs.is_empty(),
        "profile directories left: {leftover_dirs:?}"
    );
}

/// `firefox` (or Debian's `firefox-esr`) can be started.
pub(crate) fn firefox_available() -> bool {
    cargo_wasmprof::browsers_for_tests::FirefoxExe::find().is_ok()
}

/// `chromium` (or `$WASMPROF_BROWSER`) can be started.
pub(crate) fn browser_available() -> bool {
    cargo_wasmprof::browsers_for_tests::ChromiumExe::find().is_ok()
}
