//! Firefox's own sampler, the Gecko profiler, driven over WebDriver BiDi.
//!
//! BiDi's public commands cannot start it before Firefox 154
//! (`moz:profiler.start`), but a Firefox started with
//! `--remote-allow-system-access` lets a session evaluate scripts in the
//! browser's own window (`"moz:scope": "chrome"`), where
//! `Services.profiler` is. The profiler samples every process's threads
//! named in its filter; the page's own are picked out of the profile by
//! the page's origin (`wasmprof_profile::sampled::gecko`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::rpc::Rpc;

/// How long starting the profiler (in every process) may take.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long writing the profile may take: every process sends its
/// samples to the browser's, which writes them out.
const DUMP_TIMEOUT: Duration = Duration::from_secs(120);

/// The profiler's buffer, in entries of 8 bytes; it grows as needed.
const ENTRIES: u32 = 1 << 24;

/// The threads sampled: each process's main thread (the page's) and the
/// web workers.
const THREADS: &[&str] = &["GeckoMain", "DOM Worker"];

/// The Gecko profiler, running.
pub(super) struct GeckoSampler {
    /// The browser window's context, where `Services.profiler` is.
    chrome: String,
    /// Where the profile is written when it stops.
    file: PathBuf,
    /// What starts it, again when it restarts.
    start: String,
}

impl GeckoSampler {
    /// Starts sampling every `interval_micros` (Gecko's interval is in
    /// milliseconds, fractions allowed).
    pub(super) fn start(bidi: &Rpc, interval_micros: u32, dir: &Path) -> Result<GeckoSampler> {
        let tree = bidi
            .call(
                None,
                "browsingContext.getTree",
                json!({ "moz:scope": "chrome" }),
                START_TIMEOUT,
            )
            .context("its browser window could not be reached (Firefox needs system access)")?;
        let chrome = tree["contexts"][0]["context"]
            .as_str()
            .context("Firefox named no browser window")?
            .to_owned();
        let interval_ms = f64::from(interval_micros) / 1000.0;
        let expression = format!(
            "Services.profiler.StartProfiler({ENTRIES}, {interval_ms}, ['js', 'cpu'], {})",
            serde_json::to_string(THREADS)?
        );
        evaluate(bidi, &chrome, &expression, START_TIMEOUT)?;
        let file = dir.join(format!("gecko-profile-{}.json", super::chromium::unique()));
        Ok(GeckoSampler {
            chrome,
            file,
            start: expression,
        })
    }

    /// Drops the samples so far and samples on (`--after`'s window opens).
    /// Both are promises, the content processes' stop and start: the start
    /// waits for the stop, and the window for the start.
    pub(super) fn restart(&self, bidi: &Rpc) -> Result<()> {
        let expression = format!(
            "Services.profiler.StopProfiler().then(() => {})",
            self.start
        );
        evaluate(bidi, &self.chrome, &expression, START_TIMEOUT)
    }

    /// Stops the profiler and gives the profile Gecko wrote.
    pub(super) fn stop(self, bidi: &Rpc) -> Result<Value> {
        let path = serde_json::to_string(&self.file.display().to_string())?;
        let dumped = evaluate(
            bidi,
            &self.chrome,
            &format!(
                "Services.profiler.dumpProfileToFileAsync({path}).finally(() => \
                 Services.profiler.StopProfiler())"
            ),
            DUMP_TIMEOUT,
        );
        let read = dumped.and_then(|()| {
            let bytes = std::fs::read(&self.file)
                .with_context(|| format!("Firefox wrote no profile to {}", self.file.display()))?;
            serde_json::from_slice(&bytes).context("the profile Firefox wrote is not JSON")
        });
        let _ = std::fs::remove_file(&self.file);
        read
    }
}

impl GeckoSampler {
    /// Stops the profiler without its profile (a run that ended before
    /// its samples were asked for).
    pub(super) fn abandon(self, bidi: &Rpc) {
        let _ = evaluate(
            bidi,
            &self.chrome,
            "Services.profiler.StopProfiler()",
            START_TIMEOUT,
        );
    }
}

/// Evaluates `expression` in the browser's window, awaiting it.
fn evaluate(bidi: &Rpc, chrome: &str, expression: &str, timeout: Duration) -> Result<()> {
    let reply = bidi.call(
        None,
        "script.evaluate",
        json!({
            "expression": expression,
            "target": { "context": chrome },
            "awaitPromise": true,
            "resultOwnership": "none",
        }),
        timeout,
    )?;
    if reply["type"] == "exception" {
        bail!(
            "{}",
            reply["exceptionDetails"]["text"]
                .as_str()
                .unwrap_or("the browser's window threw")
        );
    }
    Ok(())
}
