//! Launching Chromium (or Chrome, or Edge): headless, with a fresh profile
//! directory, nothing reaching the network, the DevTools protocol on a
//! pipe (on Unix; elsewhere on a websocket of a port the system picks,
//! which the browser writes in its profile directory), and as the root of
//! a process tree that goes when it goes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use super::rpc::Rpc;
use crate::hosts::process_tree::ProcessTree;

/// What a launch must not do: show anything, reach the network, touch the
/// user's own profile, or update itself.
/// (`--headless` but with `--headed`.)
const FLAGS: &[&str] = &[
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

/// A Chromium-family executable and its version.
#[derive(Debug, Clone)]
pub struct ChromiumExe {
    pub path: PathBuf,
    /// `Chromium 156.0.8078.79 built on Debian …`, as `--version` says;
    /// empty where the browser prints none (Chrome on Windows).
    pub version: String,
}

impl ChromiumExe {
    /// The executable at `path`, which must start.
    pub fn at(path: PathBuf) -> Result<ChromiumExe> {
        match version_of(&path) {
            Some(version) => Ok(ChromiumExe { path, version }),
            // A Windows GUI program prints nothing to a console.
            None if cfg!(windows) && path.is_file() => Ok(ChromiumExe {
                path,
                version: String::new(),
            }),
            None => bail!(
                "the browser `{}` could not be run: name a Chromium, Chrome or Edge executable \
                 with --browser PATH or $WASMPROF_BROWSER (on Debian: `apt-get install chromium`)",
                path.display()
            ),
        }
    }

    /// Chromium where it is installed, else the Chromium-family browser
    /// `--host browser` would use.
    pub fn find() -> Result<ChromiumExe> {
        let found = super::locate::locate(Some("chromium"), &super::locate::Probe::system())
            .or_else(|_| super::locate::locate(None, &super::locate::Probe::system()))?;
        ChromiumExe::at(found.path)
    }

    /// `156.0.8078.79` out of the `--version` line.
    pub fn short_version(&self) -> &str {
        self.version
            .split_whitespace()
            .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .unwrap_or(&self.version)
    }
}

pub(super) fn version_of(path: &Path) -> Option<String> {
    let output = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !text.is_empty()).then_some(text)
}

/// How wasmprof speaks to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// `--remote-debugging-pipe`: descriptors 3 and 4, which no other
    /// process can reach (Unix).
    Pipe,
    /// `--remote-debugging-port=0`: a websocket on the loopback address,
    /// the port written in the profile directory (Windows, where a child's
    /// descriptors 3 and 4 do not exist).
    Port,
}

impl Transport {
    /// The pipe where there is one. `WASMPROF_CHROMIUM_TRANSPORT=port`
    /// takes Windows' way on Unix, so that its tests run here.
    fn for_this_os() -> Transport {
        if cfg!(unix) && std::env::var("WASMPROF_CHROMIUM_TRANSPORT").as_deref() != Ok("port") {
            Transport::Pipe
        } else {
            Transport::Port
        }
    }
}

/// A running Chromium. Dropping it closes the browser, ends whatever of its
/// process tree is left and removes its profile directory.
pub struct Chromium {
    tree: ProcessTree,
    profile_dir: PathBuf,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    pub cdp: Rpc,
    /// Its window shown (`--headed`).
    pub headed: bool,
}

/// The last lines Chromium wrote to its standard error, for when it dies.
const STDERR_LINES_KEPT: usize = 20;

impl Chromium {
    /// Starts the browser with the protocol on a pipe or a port.
    pub fn launch(exe: &ChromiumExe, extra_args: &[String], headed: bool) -> Result<Chromium> {
        let profile_dir = std::env::temp_dir().join(format!(
            "wasmprof-chromium-{}-{}",
            std::process::id(),
            unique()
        ));
        std::fs::create_dir_all(&profile_dir)
            .with_context(|| format!("could not create {}", profile_dir.display()))?;
        let transport = Transport::for_this_os();
        let mut command = Command::new(&exe.path);
        command
            .args((!headed).then_some("--headless"))
            .args(FLAGS)
            .arg(match transport {
                Transport::Pipe => "--remote-debugging-pipe",
                Transport::Port => "--remote-debugging-port=0",
            })
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
            .stderr(Stdio::piped());
        let pipe = match transport {
            Transport::Pipe => Some(pipe::attach(&mut command)?),
            Transport::Port => None,
        };
        let mut tree = match ProcessTree::spawn(&mut command) {
            Ok(tree) => tree,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&profile_dir);
                return Err(e).with_context(|| format!("could not start {}", exe.path.display()));
            }
        };
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = tree.child().stderr.take() {
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
        let connected = match pipe {
            Some(pipe) => Ok(pipe.connect()),
            None => connect_to_port(&profile_dir, &mut tree),
        };
        let cdp = match connected {
            Ok(cdp) => cdp,
            Err(e) => {
                tree.end(Duration::ZERO);
                let _ = std::fs::remove_dir_all(&profile_dir);
                let tail = tail_text(&stderr_tail);
                bail!("{} did not start: {e:#}{tail}", exe.path.display());
            }
        };
        let chromium = Chromium {
            tree,
            profile_dir,
            stderr_tail,
            cdp,
            headed,
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
        tail_text(&self.stderr_tail)
    }

    /// The browser's process id (on Unix its process group's id too).
    pub fn pid(&self) -> u32 {
        self.tree.id()
    }
}

/// The last lines a browser wrote to standard error, for a message.
pub(super) fn tail_text(tail: &Mutex<VecDeque<String>>) -> String {
    let tail = tail.lock().unwrap();
    if tail.is_empty() {
        String::new()
    } else {
        format!(
            "\nthe browser's last words:\n  {}",
            tail.iter().cloned().collect::<Vec<_>>().join("\n  ")
        )
    }
}

/// The websocket of a browser started with `--remote-debugging-port=0`: it
/// writes the port it took, and the path, in `DevToolsActivePort`.
fn connect_to_port(profile_dir: &Path, tree: &mut ProcessTree) -> Result<Rpc> {
    let file = profile_dir.join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(&file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                let url = format!("ws://127.0.0.1:{}{}", port.trim(), path.trim());
                return Rpc::websocket(&url, Duration::from_secs(10));
            }
        }
        if tree.has_exited() {
            bail!("it exited before it opened its DevTools port");
        }
        if Instant::now() >= deadline {
            bail!("it wrote no DevTools port within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.cdp.send(None, "Browser.close", json!({}));
        // Renderers, the zygote and the GPU process go with it.
        self.tree.end(Duration::from_secs(3));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if std::fs::remove_dir_all(&self.profile_dir).is_ok() || !self.profile_dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The pipe a Unix Chromium speaks on: its descriptors 3 (ours to write)
/// and 4 (ours to read).
#[cfg(unix)]
mod pipe {
    use std::io::{PipeReader, PipeWriter};
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use anyhow::{Context, Result};

    use super::Rpc;

    /// Our ends, and the browser's until it has started.
    pub(super) struct Pipe {
        ours: (PipeReader, PipeWriter),
        theirs: (PipeReader, PipeWriter),
    }

    /// Makes the pipes and has `command` put the browser's ends at 3 and 4.
    pub(super) fn attach(command: &mut Command) -> Result<Pipe> {
        let (to_browser_r, to_browser_w) = std::io::pipe().context("could not make a pipe")?;
        let (from_browser_r, from_browser_w) = std::io::pipe().context("could not make a pipe")?;
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
        Ok(Pipe {
            ours: (from_browser_r, to_browser_w),
            theirs: (to_browser_r, from_browser_w),
        })
    }

    impl Pipe {
        /// Once the browser runs: ours speak the protocol, and the
        /// browser's ends close here, or the pipe would never report its
        /// exit.
        pub(super) fn connect(self) -> Rpc {
            drop(self.theirs);
            Rpc::new(self.ours.0, self.ours.1)
        }
    }
}

/// No pipe where descriptors 3 and 4 cannot be handed over.
#[cfg(not(unix))]
mod pipe {
    use std::process::Command;

    use anyhow::{Result, bail};

    use super::Rpc;

    pub(super) struct Pipe;

    pub(super) fn attach(_: &mut Command) -> Result<Pipe> {
        bail!("the DevTools pipe needs Unix")
    }

    impl Pipe {
        pub(super) fn connect(self) -> Rpc {
            unreachable!("no pipe is made here")
        }
    }
}

/// `--no-sandbox` only where Chromium refuses to start without it: as root.
fn sandbox_flags() -> &'static [&'static str] {
    if is_root() {
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

#[cfg(unix)]
fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Chromium's root check is Unix's.
#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

/// A number no other launch of this process uses (of either browser).
pub(super) fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
