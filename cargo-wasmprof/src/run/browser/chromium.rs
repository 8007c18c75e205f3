//! Finding and launching Chromium: headless, with a fresh profile directory,
//! nothing reaching the network, the DevTools protocol on a pipe, and in a
//! process group of its own so that every process it starts goes when it
//! goes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::rpc::Rpc;

/// Executables tried on PATH, in order, when none is named.
const CANDIDATES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// What a launch must not do: show anything, reach the network, touch the
/// user's own profile, or update itself.
const FLAGS: &[&str] = &[
    "--headless",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider",
    "--mute-audio",
    "--password-store=basic",
    "--use-mock-keychain",
    // Everything but loopback goes to a closed port, and names other than
    // localhost do not resolve: no request leaves the machine.
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--remote-debugging-pipe",
];

/// V8's flags, as for Node: wasm compiled optimised and up front, so that a
/// long loop entered once is not timed as baseline code and no function is
/// compiled inside a timed call (and the clock's cost, measured at the first
/// timed call, is not inflated by compiling); and no wasm function inlined
/// into another (off by default in Node 20's V8, on in Chromium's), so that
/// the engine's samples see every frame the build kept out of line (a
/// counted function's long call went to its caller otherwise).
/// `--browser-arg=--js-flags=…` replaces them.
const DEFAULT_JS_FLAGS: &str =
    "--js-flags=--no-liftoff --no-wasm-lazy-compilation --no-wasm-inlining";

/// A Chromium executable and its version.
#[derive(Debug, Clone)]
pub struct ChromiumExe {
    pub path: PathBuf,
    /// `Chromium 156.0.8078.79 built on Debian …`, as `--version` says.
    pub version: String,
}

impl ChromiumExe {
    /// `--browser`, else `$WASMPROF_BROWSER`, else the first of
    /// chromium, chromium-browser, google-chrome found on PATH.
    pub fn locate(explicit: Option<&Path>) -> Result<ChromiumExe> {
        let named = explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("WASMPROF_BROWSER").map(PathBuf::from));
        if let Some(path) = named {
            return match version_of(&path) {
                Some(version) => Ok(ChromiumExe { path, version }),
                None => bail!(
                    "the browser `{}` could not be run: name a Chromium or Chrome executable with \
                     --browser PATH or $WASMPROF_BROWSER (on Debian: `apt-get install chromium`)",
                    path.display()
                ),
            };
        }
        for name in CANDIDATES {
            let path = PathBuf::from(name);
            if let Some(version) = version_of(&path) {
                return Ok(ChromiumExe { path, version });
            }
        }
        bail!(
            "no browser found (tried {} on PATH): install Chromium (on Debian: \
             `apt-get install chromium`), or name one with --browser PATH or $WASMPROF_BROWSER. \
             wasmprof never downloads a browser.",
            CANDIDATES.join(", ")
        )
    }

    /// `156.0.8078.79` out of the `--version` line.
    pub fn short_version(&self) -> &str {
        self.version
            .split_whitespace()
            .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .unwrap_or(&self.version)
    }
}

fn version_of(path: &Path) -> Option<String> {
    let output = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !text.is_empty()).then_some(text)
}

/// A running Chromium. Dropping it closes the browser, kills whatever of
/// its process group is left and removes its profile directory.
pub struct Chromium {
    child: Child,
    profile_dir: PathBuf,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    pub cdp: Rpc,
}

/// The last lines Chromium wrote to its standard error, for when it dies.
const STDERR_LINES_KEPT: usize = 20;

impl Chromium {
    /// Starts the browser with the protocol on a pipe.
    pub fn launch(exe: &ChromiumExe, extra_args: &[String]) -> Result<Chromium> {
        let profile_dir = std::env::temp_dir().join(format!(
            "wasmprof-chromium-{}-{}",
            std::process::id(),
            unique()
        ));
        std::fs::create_dir_all(&profile_dir)
            .with_context(|| format!("could not create {}", profile_dir.display()))?;
        let (to_browser_r, to_browser_w) = std::io::pipe().context("could not make a pipe")?;
        let (from_browser_r, from_browser_w) = std::io::pipe().context("could not make a pipe")?;
        let mut command = Command::new(&exe.path);
        command
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile_dir.display()))
            .args(sandbox_flags())
            .args(
                (!extra_args.iter().any(|a| a.starts_with("--js-flags")))
                    .then_some(DEFAULT_JS_FLAGS),
            )
            .args(extra_args)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let (read_fd, write_fd) = (to_browser_r.as_raw_fd(), from_browser_w.as_raw_fd());
        // SAFETY: between fork and exec only async-signal-safe calls are
        // made (fcntl, dup2), on descriptors this process owns.
        unsafe {
            command.pre_exec(move || {
                // Out of the way first, so that dup2 cannot overwrite one
                // with the other when they already are 3 or 4.
                let read = libc::fcntl(read_fd, libc::F_DUPFD, 10);
                let write = libc::fcntl(write_fd, libc::F_DUPFD, 10);
                if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(read);
                libc::close(write);
                Ok(())
            });
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&profile_dir);
                return Err(e).with_context(|| format!("could not start {}", exe.path.display()));
            }
        };
        // The browser holds these ends now; ours must close, or the pipe
        // would never report the browser's exit.
        drop(to_browser_r);
        drop(from_browser_w);
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = child.stderr.take() {
            let tail = Arc::clone(&stderr_tail);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    // A container has no D-Bus, and Chromium says so many
                    // times over: that is never why a run failed.
                    if line.contains(":ERROR:dbus/") {
                        continue;
                    }
                    let mut tail = tail.lock().unwrap();
                    if tail.len() == STDERR_LINES_KEPT {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            });
        }
        let chromium = Chromium {
            child,
            profile_dir,
            stderr_tail,
            cdp: Rpc::new(from_browser_r, to_browser_w),
        };
        // The first answer says the browser is up and speaking.
        chromium
            .cdp
            .call(
                None,
                "Browser.getVersion",
                json!({}),
                Duration::from_secs(30),
            )
            .map_err(|e| {
                anyhow::anyhow!(
                    "{} did not start: {e}{}",
                    exe.path.display(),
                    chromium.stderr_tail_text()
                )
            })?;
        Ok(chromium)
    }

    /// What the browser last wrote to standard error, for an error message.
    pub fn stderr_tail_text(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap();
        if tail.is_empty() {
            String::new()
        } else {
            format!(
                "\nthe browser's last words:\n  {}",
                tail.iter().cloned().collect::<Vec<_>>().join("\n  ")
            )
        }
    }

    /// The browser's process id (its process group's id too).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.cdp.send(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Renderers, the zygote and the GPU process are in the group too.
        // SAFETY: signalling a process group this process created.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // SIGKILL is delivered at once but a process takes a moment to die,
        // longer on a busy machine: wait until none of the group runs, so
        // that none outlives `cargo wasmprof`.
        let deadline = Instant::now() + Duration::from_secs(10);
        while group_is_running(self.child.id()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        while Instant::now() < deadline {
            if std::fs::remove_dir_all(&self.profile_dir).is_ok() || !self.profile_dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether a process of group `pgid` is still running (zombies, which
/// only wait to be reaped, do not count).
#[cfg(target_os = "linux")]
fn group_is_running(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // After the parenthesised name: state, ppid, pgrp, …
        let mut fields = stat
            .rsplit(") ")
            .next()
            .unwrap_or_default()
            .split_whitespace();
        let state = fields.next();
        let group = fields.nth(1).and_then(|g| g.parse::<u32>().ok());
        group == Some(pgid) && !matches!(state, Some("Z" | "X"))
    })
}

/// Elsewhere there is no cheap way to tell a zombie from a live process:
/// the SIGKILL has to do.
#[cfg(not(target_os = "linux"))]
fn group_is_running(_pgid: u32) -> bool {
    false
}

/// `--no-sandbox` only where Chromium refuses to start without it: as root.
fn sandbox_flags() -> &'static [&'static str] {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            crate::terminal::note(
                "running as root, so Chromium runs without its sandbox (--no-sandbox)",
            )
        });
        &["--no-sandbox"]
    } else {
        &[]
    }
}

/// A number no other launch of this process uses.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
