//! Launching Firefox: headless, with a fresh profile whose preferences keep
//! it off the network and quiet, WebDriver BiDi on a port the system picks
//! (Firefox speaks it itself: no geckodriver), and as the root of a process
//! tree that goes when it goes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use super::chromium::{tail_text, unique};
use super::rpc::Rpc;
use crate::hosts::process_tree::ProcessTree;

/// The oldest Firefox whose WebDriver BiDi has all wasmprof uses: preload
/// scripts with channels, `log.entryAdded`, `unhandledPromptBehavior`.
/// (128 is an ESR; Debian's firefox-esr is newer.)
pub(crate) const OLDEST_FIREFOX: u32 = 128;

/// How long commands that should answer at once may take; a new session
/// takes seconds.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The profile's preferences: nothing updates, reports, phones home or
/// asks anything; every request but the loopback address's goes to a
/// closed port, without falling back to a direct connection, since some
/// services (remote settings) cannot be turned off on an ESR; no
/// slow-script dialog stops a long wasm loop; and the clock is not
/// coarsened, so that a page reads it to the microsecond or better.
const PREFERENCES: &[(&str, &str)] = &[
    ("app.update.disabledForTesting", "true"),
    ("app.update.auto", "false"),
    ("app.normandy.enabled", "false"),
    ("app.normandy.api_url", "\"\""),
    ("app.shield.optoutstudies.enabled", "false"),
    ("extensions.update.enabled", "false"),
    ("extensions.getAddons.cache.enabled", "false"),
    ("extensions.systemAddon.update.enabled", "false"),
    ("extensions.blocklist.enabled", "false"),
    ("extensions.autoDisableScopes", "0"),
    ("extensions.enabledScopes", "5"),
    ("media.gmp-manager.updateEnabled", "false"),
    ("media.gmp-manager.url", "\"data:text/plain,\""),
    ("browser.search.update", "false"),
    ("messaging-system.rsexperimentloader.enabled", "false"),
    ("nimbus.rollouts.enabled", "false"),
    ("security.remote_settings.crlite_filters.enabled", "false"),
    ("security.remote_settings.intermediates.enabled", "false"),
    ("datareporting.policy.dataSubmissionEnabled", "false"),
    ("datareporting.healthreport.uploadEnabled", "false"),
    ("toolkit.telemetry.enabled", "false"),
    ("toolkit.telemetry.unified", "false"),
    ("toolkit.telemetry.archive.enabled", "false"),
    ("toolkit.telemetry.server", "\"\""),
    ("browser.crashReports.unsubmittedCheck.autoSubmit2", "false"),
    ("network.captive-portal-service.enabled", "false"),
    ("network.connectivity-service.enabled", "false"),
    ("network.trr.mode", "5"),
    ("network.dns.disablePrefetch", "true"),
    ("network.prefetch-next", "false"),
    ("network.predictor.enabled", "false"),
    ("network.http.speculative-parallel-limit", "0"),
    ("dom.push.connection.enabled", "false"),
    ("browser.region.network.url", "\"\""),
    ("browser.region.update.enabled", "false"),
    ("geo.provider.network.url", "\"\""),
    ("security.OCSP.enabled", "0"),
    ("browser.safebrowsing.malware.enabled", "false"),
    ("browser.safebrowsing.phishing.enabled", "false"),
    ("browser.safebrowsing.downloads.enabled", "false"),
    ("browser.safebrowsing.blockedURIs.enabled", "false"),
    ("browser.newtabpage.enabled", "false"),
    ("browser.topsites.contile.enabled", "false"),
    ("browser.shell.checkDefaultBrowser", "false"),
    ("browser.startup.homepage_override.mstone", "\"ignore\""),
    ("browser.startup.page", "0"),
    ("browser.aboutwelcome.enabled", "false"),
    ("browser.sessionstore.resume_from_crash", "false"),
    ("browser.tabs.warnOnClose", "false"),
    ("toolkit.startup.max_resumed_crashes", "-1"),
    ("dom.max_script_run_time", "0"),
    ("dom.max_chrome_script_run_time", "0"),
    ("dom.ipc.reportProcessHangs", "false"),
    ("hangmonitor.timeout", "0"),
    ("privacy.reduceTimerPrecision", "false"),
    ("privacy.reduceTimerPrecision.unconditional", "false"),
    ("network.proxy.type", "1"),
    ("network.proxy.http", "\"127.0.0.1\""),
    ("network.proxy.http_port", "9"),
    ("network.proxy.ssl", "\"127.0.0.1\""),
    ("network.proxy.ssl_port", "9"),
    ("network.proxy.share_proxy_settings", "true"),
    ("network.proxy.no_proxies_on", "\"\""),
    ("network.proxy.allow_hijacking_localhost", "false"),
    ("network.proxy.failover_direct", "false"),
];

/// A Firefox executable and its version.
#[derive(Debug, Clone)]
pub struct FirefoxExe {
    pub path: PathBuf,
    /// `Mozilla Firefox 153.7.0esr`, as `--version` says; empty where it
    /// prints none (Windows).
    pub version: String,
}

impl FirefoxExe {
    /// The executable at `path`, which must start and be new enough.
    pub fn at(path: PathBuf) -> Result<FirefoxExe> {
        let version = match super::chromium::version_of(&path) {
            Some(version) => version,
            None if cfg!(windows) && path.is_file() => String::new(),
            None => bail!(
                "the browser `{}` could not be run: name a Firefox executable with --browser \
                 PATH (on Debian: `apt-get install firefox-esr`)",
                path.display()
            ),
        };
        let exe = FirefoxExe { path, version };
        if let Some(major) = exe.major_version() {
            check_version(major, &exe.version)?;
        }
        Ok(exe)
    }

    /// Firefox where `--browser firefox` finds it.
    pub fn find() -> Result<FirefoxExe> {
        let found = super::locate::locate(Some("firefox"), &super::locate::Probe::system())?;
        FirefoxExe::at(found.path)
    }

    /// `153` of `Mozilla Firefox 153.7.0esr`.
    fn major_version(&self) -> Option<u32> {
        major_of(&self.version)
    }

    /// `153.7.0esr`.
    pub fn short_version(&self) -> &str {
        self.version
            .split_whitespace()
            .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .unwrap_or(&self.version)
    }
}

/// The major version in a version text: the first number.
fn major_of(text: &str) -> Option<u32> {
    text.split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))?
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn check_version(major: u32, said: &str) -> Result<()> {
    if major < OLDEST_FIREFOX {
        bail!(
            "{said} is too old for WebDriver BiDi as wasmprof uses it: Firefox {OLDEST_FIREFOX} \
             or newer is needed (Debian's firefox-esr is)"
        );
    }
    Ok(())
}

/// A running Firefox with a BiDi session. Dropping it closes the browser,
/// ends whatever of its process tree is left and removes its profile.
pub(crate) struct Firefox {
    tree: ProcessTree,
    profile_dir: PathBuf,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    pub bidi: Rpc,
    /// `firefox 153.7.0`, as the session says.
    pub name: String,
}

/// The last lines Firefox wrote to its standard error, for when it dies.
const STDERR_LINES_KEPT: usize = 20;

impl Firefox {
    pub(crate) fn launch(exe: &FirefoxExe, extra_args: &[String], headed: bool) -> Result<Firefox> {
        let profile_dir = std::env::temp_dir().join(format!(
            "wasmprof-firefox-{}-{}",
            std::process::id(),
            unique()
        ));
        std::fs::create_dir_all(&profile_dir)
            .with_context(|| format!("could not create {}", profile_dir.display()))?;
        write_preferences(&profile_dir)?;
        let mut command = Command::new(&exe.path);
        command
            .args((!headed).then_some("--headless"))
            .args(["--no-remote", "--profile"])
            .arg(&profile_dir)
            .arg("--remote-debugging-port=0")
            // The browser's own window is reachable over BiDi, where the
            // Gecko profiler is started and stopped (`gecko_sampler.rs`).
            .arg("--remote-allow-system-access")
            .args(extra_args)
            .arg("about:blank")
            // No crash reporter window after a crash.
            .env("MOZ_CRASHREPORTER_DISABLE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut tree = match ProcessTree::spawn(&mut command) {
            Ok(tree) => tree,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&profile_dir);
                return Err(e).with_context(|| format!("could not start {}", exe.path.display()));
            }
        };
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let (address_tx, address) = mpsc::channel();
        if let Some(stderr) = tree.child().stderr.take() {
            let tail = Arc::clone(&stderr_tail);
            std::thread::spawn(move || read_stderr(stderr, &tail, &address_tx));
        }
        let started = connect(&address, &mut tree);
        let (bidi, name) = match started {
            Ok((bidi, name)) if headed => (bidi, name.replace(" (headless)", "")),
            Ok(started) => started,
            Err(e) => {
                tree.end(Duration::ZERO);
                let _ = std::fs::remove_dir_all(&profile_dir);
                bail!(
                    "{} did not start: {e:#}{}",
                    exe.path.display(),
                    tail_text(&stderr_tail)
                );
            }
        };
        Ok(Firefox {
            tree,
            profile_dir,
            stderr_tail,
            bidi,
            name,
        })
    }

    /// The browser's profile directory, removed when it closes.
    pub(super) fn profile_dir(&self) -> &Path {
        &self.profile_dir
    }

    /// What the browser last wrote to standard error, for an error message.
    pub(crate) fn stderr_tail_text(&self) -> String {
        tail_text(&self.stderr_tail)
    }

    /// Kills the browser outright, as a crash would, for the tests of what
    /// a crash keeps (BiDi has no way to crash one tab).
    pub(super) fn kill_for_test(&self) {
        #[cfg(unix)]
        // SAFETY: signalling the process group this process created.
        unsafe {
            libc::kill(-(self.tree.id() as i32), libc::SIGKILL);
        }
    }
}

/// The BiDi session of a Firefox that prints its websocket's address, with
/// the browser's name and version.
fn connect(address: &mpsc::Receiver<String>, tree: &mut ProcessTree) -> Result<(Rpc, String)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let url = loop {
        match address.recv_timeout(Duration::from_millis(50)) {
            Ok(url) => break url,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                bail!("it exited before it opened WebDriver BiDi")
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if tree.has_exited() {
            bail!("it exited before it opened WebDriver BiDi");
        }
        if Instant::now() >= deadline {
            bail!("it did not open WebDriver BiDi within 60 s");
        }
    };
    let bidi = Rpc::websocket(&format!("{url}/session"), Duration::from_secs(10))?;
    // alert() and confirm() would block the page for good: accepted.
    let session = bidi.call(
        None,
        "session.new",
        json!({ "capabilities": { "alwaysMatch": {
            "unhandledPromptBehavior": { "default": "accept" }
        } } }),
        COMMAND_TIMEOUT,
    )?;
    let capabilities = &session["capabilities"];
    let version = capabilities["browserVersion"]
        .as_str()
        .unwrap_or("unknown version");
    if let Some(major) = major_of(version) {
        check_version(major, &format!("Firefox {version}"))?;
    }
    let name = capabilities["browserName"].as_str().unwrap_or("firefox");
    Ok((bidi, format!("{name} {version} (headless)")))
}

/// Keeps the last lines Firefox writes to standard error, and sends the
/// websocket's address when it says it (`WebDriver BiDi listening on
/// ws://127.0.0.1:PORT`).
fn read_stderr(
    stderr: impl std::io::Read,
    tail: &Mutex<VecDeque<String>>,
    address: &mpsc::Sender<String>,
) {
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        if let Some(url) = line.split("WebDriver BiDi listening on ").nth(1) {
            let _ = address.send(url.trim().to_owned());
            continue;
        }
        // Headless Firefox's own chatter, never why a run failed.
        if line.starts_with("*** You are running in headless mode")
            || line.contains("RenderCompositorSWGL")
            || line.contains("RSLoader")
        {
            continue;
        }
        let mut tail = tail.lock().unwrap();
        if tail.len() == STDERR_LINES_KEPT {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

fn write_preferences(profile_dir: &Path) -> Result<()> {
    let text: String = PREFERENCES
        .iter()
        .map(|(name, value)| format!("user_pref(\"{name}\", {value});\n"))
        .collect();
    let path = profile_dir.join("user.js");
    std::fs::write(&path, text).with_context(|| format!("could not write {}", path.display()))
}

impl Drop for Firefox {
    fn drop(&mut self) {
        // Firefox exits by itself once asked.
        let _ = self.bidi.send(None, "browser.close", json!({}));
        self.tree.end(Duration::from_secs(3));
        end_crash_helper(self.tree.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if std::fs::remove_dir_all(&self.profile_dir).is_ok() || !self.profile_dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Firefox's crash helper (`crashhelper <firefox's pid> …`) leaves its
/// process group, and ends a moment after Firefox: waited for, then ended.
#[cfg(target_os = "linux")]
fn end_crash_helper(firefox: u32) {
    use crate::hosts::process_tree::processes;
    let helpers = || {
        processes().filter(move |p| {
            !p.zombie
                && p.command
                    .split_whitespace()
                    .next()
                    .is_some_and(|program| program.ends_with("crashhelper"))
                && p.command.split_whitespace().nth(1) == Some(&firefox.to_string())
        })
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    while helpers().next().is_some() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for helper in helpers() {
        // SAFETY: signalling a process that Firefox, our child, started.
        unsafe {
            libc::kill(helper.pid as i32, libc::SIGKILL);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn end_crash_helper(_firefox: u32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_and_an_old_firefox_is_refused_by_name() {
        assert_eq!(major_of("Mozilla Firefox 153.7.0esr"), Some(153));
        assert_eq!(major_of("Mozilla Firefox 115.0"), Some(115));
        assert_eq!(major_of("no version"), None);
        let error = check_version(115, "Mozilla Firefox 115.0")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("Mozilla Firefox 115.0 is too old"),
            "{error}"
        );
        assert!(error.contains("128 or newer"), "{error}");
        assert!(check_version(153, "Mozilla Firefox 153.7.0esr").is_ok());
    }

    #[test]
    fn the_websocket_address_is_taken_from_standard_error_and_the_rest_kept() {
        let text = "*** You are running in headless mode.\n\
                    WebDriver BiDi listening on ws://127.0.0.1:33639\n\
                    something went wrong\n";
        let tail = Mutex::new(VecDeque::new());
        let (tx, rx) = mpsc::channel();
        read_stderr(text.as_bytes(), &tail, &tx);
        assert_eq!(rx.try_recv().unwrap(), "ws://127.0.0.1:33639");
        assert_eq!(
            tail.lock().unwrap().iter().collect::<Vec<_>>(),
            ["something went wrong"]
        );
    }
}
