//! One run in one page: open it, relay its console, decide when the program
//! is over, pull the profile out of the page, close it.
//!
//! When a browser program is over is not obvious: its start function returns
//! but timers, animation frames and promises may go on. The run ends at the
//! first of:
//! - the entry point settled (returned, or its promise settled) and the page
//!   has then been quiet (no console output, no error, no poll of a pending
//!   future of an instrumented async function) for the grace period; with
//!   `--until-exit` this does not end it;
//! - the program called `wasmprof::exit(code)` (once that call returned);
//! - the entry point failed, or an exception went uncaught;
//! - `--timeout`, or Ctrl-C: the running script is terminated first;
//! - the page crashed or the browser went away: the profile is then the
//!   last one pulled during the run (every [`PULL_EVERY`], when the page
//!   is between tasks), marked incomplete, or none if none was.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use base64::Engine;
use serde_json::Value;

use super::console::{Relay, Stream};
use super::driver::{Evaluation, PageDriver, PageEvent, PageOptions};
use super::page_message::{Exited, PageMessage, Settled, snapshot_bytes};
use super::window::Recording;
use crate::hosts::host::RunStatus;
use crate::hosts::host::{Captured, HostConfig, HostResult, LoadAs};
use crate::hosts::interrupt;

/// How long protocol commands that should answer at once may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the page may take to hand over the profile before the running
/// script is terminated to let it.
const PULL_PATIENCE: Duration = Duration::from_secs(2);
/// How often the profile is pulled while the page runs, so that a crash or
/// a killed tab keeps what was collected until then.
const PULL_EVERY: Duration = Duration::from_secs(1);
/// The expression that reads the profile out of the page.
const SNAPSHOT_EXPRESSION: &str = "(() => { const h = globalThis.__wasmprofHost; \
     if (!h) return null; \
     return { snapshot: h.snapshotBase64(), resolution: h.measureResolution(), \
     pending: h.pendingWork(), displayFrames: h.displayFrames() }; })()";
/// The same, cheap enough to run every second: the snapshot alone.
pub(super) const PERIODIC_EXPRESSION: &str = "(() => { const h = globalThis.__wasmprofHost; \
     return h ? { snapshot: h.snapshotBase64() } : null; })()";
/// How long a page may take to answer a pull or a probe before it counts
/// as busy: well above a round trip to an idle page on a loaded machine,
/// well below the grace period.
const BUSY_AFTER: Duration = Duration::from_millis(250);
/// When a program that keeps working is told how the run will end.
const STILL_AT_WORK: Duration = Duration::from_secs(10);
/// How long a thread pool may take to start before the run says it has
/// not: a pool starts in well under a second.
const POOL_PATIENCE: Duration = Duration::from_secs(15);
/// For tests of that: crash the page this many milliseconds into the run.
const CRASH_AFTER_VAR: &str = "WASMPROF_TEST_CRASH_PAGE_AFTER_MS";

pub(super) struct PageRun<'a> {
    pub driver: &'a mut dyn PageDriver,
    pub url: &'a str,
    pub config: &'a HostConfig,
    pub grace: Duration,
}

/// The last profile pulled while the page ran, and when.
#[derive(Default)]
struct Latest {
    bytes: Option<(Vec<u8>, Instant)>,
}

/// What the page handed over at the end.
struct Pulled {
    /// None from a page without an instrumented instance (a plain build).
    bytes: Option<Vec<u8>>,
    /// Display frames the page drew (in the window, when there is one).
    display_frames: Option<u64>,
    resolution: Option<f64>,
    pending_work: Option<String>,
}

/// `2 timers, 1 animation frame`, from the page's counts; `None` when
/// nothing is pending (or the page did not count).
fn pending_work(counts: &Value) -> Option<String> {
    let parts: Vec<String> = [
        ("timers", "timer", "timers"),
        ("intervals", "interval", "intervals"),
        ("frames", "animation frame", "animation frames"),
        ("fetches", "fetch", "fetches"),
    ]
    .into_iter()
    .filter_map(|(key, one, many)| match counts[key].as_u64()? {
        0 => None,
        1 => Some(format!("1 {one}")),
        n => Some(format!("{n} {many}")),
    })
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Why the run ended.
#[derive(Debug)]
enum End {
    /// The page reported the entry point's outcome and went quiet, or failed.
    Settled(Settled),
    /// `wasmprof::exit(code)`.
    Exit(Exited),
    Uncaught {
        message: String,
        trap: bool,
    },
    /// The deadline passed; `pool_starting` when the program's thread pool
    /// of that many workers had not finished starting.
    Timeout {
        pool_starting: Option<u32>,
    },
    Interrupted,
    Crashed,
    BrowserGone,
    NotLoaded(String),
    /// `--duration` was over.
    WindowClosed,
}

impl PageRun<'_> {
    /// Runs the page and returns how it went, with the snapshot written to
    /// `config.snapshot_out` when there was one.
    pub(super) fn run(&mut self, capture: bool) -> Result<(HostResult, Captured)> {
        let started = Instant::now();
        self.driver.open(&PageOptions {
            sample_interval_micros: self.config.sample_interval_micros,
            sample_interval_adapts: !self.config.sample_interval_chosen,
            program_on_workers: self.config.kind == LoadAs::BindgenThreads,
        })?;
        let mut captured = Captured::default();
        let mut relay = Relay {
            capture: capture.then_some(&mut captured),
        };
        let deadline = started + Duration::from_millis(self.config.timeout_ms);
        let mut latest = Latest::default();
        let mut recording = (self.config.window).map(|spec| Recording::new(spec, Instant::now()));
        let end = match self.driver.navigate(self.url)? {
            Some(error) => End::NotLoaded(error),
            None => self.watch(deadline, &mut relay, &mut latest, recording.as_mut()),
        };

        let (mut result, mut resolution, program_nanos) = self.outcome(&end);

        if matches!(end, End::Crashed | End::BrowserGone) {
            keep_latest(&mut result, latest, &self.config.snapshot_out, "")?;
        } else {
            let busy = matches!(end, End::Timeout { .. } | End::Interrupted);
            match self.pull_snapshot(busy) {
                Ok(Some(pulled)) => {
                    result.display_frames = pulled.display_frames;
                    let bytes = match &recording {
                        Some(recording) => {
                            let closed = matches!(end, End::WindowClosed);
                            let (bytes, window) = recording.finish(pulled.bytes, closed)?;
                            result.window = window;
                            bytes
                        }
                        None => pulled.bytes,
                    };
                    if let Some(bytes) = bytes {
                        std::fs::write(&self.config.snapshot_out, bytes).with_context(|| {
                            format!("could not write {}", self.config.snapshot_out.display())
                        })?;
                        result.snapshot = true;
                    }
                    resolution = resolution.or(pulled.resolution);
                    // Only the grace period cuts a program off; an exit or
                    // a failure is its own end.
                    if matches!(end, End::Settled(_))
                        && result.status == RunStatus::Ok
                        && let Some(pending) = pulled.pending_work
                    {
                        crate::terminal::warning(&format!(
                            "the page went quiet for {} ms with {pending} still pending, and \
                                 the run ended there: the profile may miss what they would have \
                                 run. Pass --until-exit (and call wasmprof::exit) to wait for the \
                                 program, or a longer --grace",
                            self.grace.as_millis()
                        ));
                        result.pending_work = Some(pending);
                    }
                }
                Ok(None) => {}
                // A page still busy that the browser cannot interrupt: the
                // profile pulled last while it ran.
                Err(e) if busy && latest.bytes.is_some() => {
                    let why = format!(" ({e:#})");
                    keep_latest(&mut result, latest, &self.config.snapshot_out, &why)?;
                }
                Err(e) => result.snapshot_error = Some(format!("{e:#}")),
            }
            match self.driver.stop_sampler() {
                Ok(Some(profile)) => {
                    std::fs::write(&self.config.cpuprofile_out, serde_json::to_vec(&profile)?)
                        .with_context(|| {
                            format!("could not write {}", self.config.cpuprofile_out.display())
                        })?
                }
                Ok(None) => {}
                Err(e) => {
                    crate::terminal::warning(&format!("the engine's samples were not saved: {e:#}"))
                }
            }
            result.sampler_slowed_to_micros = self.driver.sampler_slowed_to_micros();
            // What the page said while it was being read.
            while let Some(event) = self.driver.next_event(Duration::ZERO) {
                if event == PageEvent::Gone {
                    break;
                }
                relay_event(&event, &mut relay);
            }
            self.driver.close();
        }
        result.timer_resolution_nanos = resolution;
        result.wall_nanos = started.elapsed().as_nanos() as u64;
        result.program_nanos = program_nanos.unwrap_or(result.wall_nanos);
        Ok((result, captured))
    }

    /// How the run ended, as a host result (without the snapshot), with the
    /// clock resolution and program time the page reported, if it did.
    fn outcome(&self, end: &End) -> (HostResult, Option<f64>, Option<u64>) {
        let mut result = HostResult::started(self.driver.host_name());
        let mut fail = |status: RunStatus, exit_code: i32, message: String| {
            result.status = status;
            result.exit_code = exit_code;
            result.message = Some(message);
        };
        let report = match end {
            End::Settled(settled) => Some(Ok(settled)),
            End::Exit(exited) => Some(Err(exited)),
            End::Uncaught {
                message,
                trap: true,
            } => {
                fail(RunStatus::Trap, 101, message.clone());
                None
            }
            End::Uncaught {
                message,
                trap: false,
            } => {
                fail(RunStatus::Error, 1, message.clone());
                None
            }
            End::Timeout { pool_starting } => {
                let mut limit = format!("timed out after {} ms", self.config.timeout_ms);
                if let Some(threads) = pool_starting {
                    limit.push_str(&format!(
                        ": the program's thread pool never started (initThreadPool({threads}) \
                         had not resolved, so the program itself never ran; the browser's \
                         console above may say why, such as a worker that could not load)"
                    ));
                }
                fail(RunStatus::Timeout, 124, limit);
                None
            }
            End::Interrupted => {
                fail(RunStatus::Interrupted, 130, "interrupted (Ctrl-C)".into());
                None
            }
            End::Crashed => {
                let tail = self.driver.stderr_tail();
                fail(
                    RunStatus::Error,
                    1,
                    format!("the page crashed; its profile is lost{tail}"),
                );
                None
            }
            End::BrowserGone => {
                let tail = self.driver.stderr_tail();
                let message =
                    format!("the browser went away during the run; its profile is lost{tail}");
                fail(RunStatus::Error, 1, message);
                None
            }
            // The window asked for is over: the run is a success.
            End::WindowClosed => None,
            End::NotLoaded(error) => {
                fail(
                    RunStatus::Error,
                    1,
                    format!("the page did not load: {error}"),
                );
                None
            }
        };
        let times = match report {
            None => return (result, None, None),
            Some(Err(exited)) => {
                result.status = RunStatus::of_exit_code(exited.code);
                result.exit_code = exited.code;
                exited.times
            }
            Some(Ok(settled)) => {
                result.status = settled.status;
                result.exit_code = settled.exit_code;
                result.message = settled.message.clone();
                result.return_value = settled.return_value.clone().filter(|v| !v.is_null());
                // A wasm-bindgen-test harness's tests, as the page saw them end.
                result.harness_tests = settled.harness_tests.clone().unwrap_or_default();
                settled.times
            }
        };
        (result, times.resolution_nanos, times.program_nanos)
    }

    /// Relays the page's events until the run is over, and says why it is.
    fn watch(
        &mut self,
        deadline: Instant,
        relay: &mut Relay,
        latest: &mut Latest,
        mut recording: Option<&mut Recording>,
    ) -> End {
        let mut settled: Option<Settled> = None;
        let mut said_still_at_work = false;
        // A thread pool that has begun to start and not finished, and since
        // when (`None` once said to be late).
        let mut pool_starting = None;
        let mut pool_since: Option<Instant> = None;
        // The evaluation that asks whether a quiet page is free.
        let mut probing: Option<(Evaluation, Instant)> = None;
        let mut last_sign_of_life = Instant::now();
        let started = Instant::now();
        let mut next_pull = started + PULL_EVERY;
        let mut pulling = None;
        let mut crash_after = std::env::var(CRASH_AFTER_VAR)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map(Duration::from_millis);
        loop {
            if interrupt::interrupted() {
                return End::Interrupted;
            }
            let now = Instant::now();
            // A pull answered (the page was between tasks): keep it. One at
            // a time, so that a busy page is not sent a queue of them.
            if let Some(reply) =
                (pulling.as_ref()).and_then(|(pull, _): &(Evaluation, Instant)| pull.ready())
            {
                pulling = None;
                if let Some(bytes) = reply.ok().and_then(|value| snapshot_bytes(&value)) {
                    latest.bytes = Some((bytes, now));
                }
            }
            if pulling.is_none() && now >= next_pull {
                next_pull = now + PULL_EVERY;
                pulling = (self.driver.evaluate(PERIODIC_EXPRESSION).ok()).map(|pull| (pull, now));
            }
            if crash_after.is_some_and(|after| now.duration_since(started) >= after) {
                crash_after = None;
                self.driver.crash_page();
            }
            if now >= deadline {
                return End::Timeout { pool_starting };
            }
            if let (Some(threads), Some(since)) = (pool_starting, pool_since)
                && now.duration_since(since) >= POOL_PATIENCE
            {
                pool_since = None;
                self.say_pool_is_late(threads);
            }
            if let Some(recording) = recording.as_deref_mut()
                && recording.due_to_close(&mut *self.driver)
            {
                return End::WindowClosed;
            }
            // A pull not answered at once: the page is busy in a long task
            // (a WebGL frame drawn in software), which is not quiet.
            if pulling
                .as_ref()
                .is_some_and(|(_, sent)| now.duration_since(*sent) >= BUSY_AFTER)
            {
                last_sign_of_life = now;
            }
            if let Some(report) = &settled {
                if !self.config.until_exit && now.duration_since(last_sign_of_life) >= self.grace {
                    // Quiet, or blocked (a synchronous WebGL call waiting
                    // on the GPU process)? A page that cannot answer at
                    // once is at work.
                    match probing
                        .as_ref()
                        .map(|(probe, sent): &(Evaluation, Instant)| {
                            (probe.ready().is_some(), now.duration_since(*sent))
                        }) {
                        Some((true, _)) => return End::Settled(report.clone()),
                        Some((false, waited)) if waited >= BUSY_AFTER => {
                            probing = None;
                            last_sign_of_life = now;
                        }
                        Some((false, _)) => {}
                        None => {
                            probing = (self.driver.evaluate("0").ok()).map(|probe| (probe, now));
                        }
                    }
                } else {
                    probing = None;
                }
            }
            let wait = (deadline - now).min(Duration::from_millis(50));
            let Some(event) = self.driver.next_event(wait) else {
                continue;
            };
            match event {
                PageEvent::Gone => return End::BrowserGone,
                PageEvent::Crashed => return End::Crashed,
                PageEvent::NotLoaded(error) => return End::NotLoaded(error),
                PageEvent::Report(payload) => match PageMessage::parse(&payload) {
                    Some(PageMessage::Exit(exited)) => return End::Exit(exited),
                    Some(PageMessage::Settled(failed)) if failed.status != RunStatus::Ok => {
                        return End::Settled(failed);
                    }
                    Some(PageMessage::Settled(ok)) => {
                        settled = Some(ok);
                        last_sign_of_life = Instant::now();
                    }
                    Some(PageMessage::Pool { started, threads }) => {
                        pool_starting = (!started).then(|| threads.unwrap_or(0));
                        pool_since = (!started).then(Instant::now);
                    }
                    // Futures made progress, or frames, timers or fetches
                    // ran: the program is at work.
                    Some(PageMessage::Futures { .. } | PageMessage::Active { .. }) => {
                        last_sign_of_life = Instant::now();
                        if !said_still_at_work && now.duration_since(started) >= STILL_AT_WORK {
                            said_still_at_work = true;
                            self.say_still_at_work();
                        }
                    }
                    None => {}
                },
                PageEvent::Uncaught {
                    ref message, trap, ..
                } => {
                    relay_event(&event, relay);
                    return End::Uncaught {
                        message: message.clone(),
                        trap,
                    };
                }
                PageEvent::Dialog(_) | PageEvent::Console(..) => {
                    relay_event(&event, relay);
                    last_sign_of_life = Instant::now();
                }
                PageEvent::Other => {}
            }
        }
    }

    /// A pool that has not started, which nothing will end but a timeout.
    fn say_pool_is_late(&self, threads: u32) {
        let firefox = if self.driver.host_name().starts_with("firefox") {
            " Firefox sometimes never returns from a worker's `new Worker`, which leaves a \
             pool unstarted; running the program again starts it."
        } else {
            ""
        };
        crate::terminal::warning(&format!(
            "the program's thread pool has not started after {} s (initThreadPool({threads}) \
             has not resolved), and the run waits for it.{firefox} Ctrl-C or --timeout ends the \
             run and keeps what was collected",
            POOL_PATIENCE.as_secs()
        ));
    }

    /// Says once, for a program that keeps working (a render loop), how
    /// the run will end and how to end it sooner.
    fn say_still_at_work(&self) {
        if self.config.until_exit || self.config.window.is_some() {
            return;
        }
        crate::terminal::note(&format!(
            "the page is still at work after {} s (animation frames, timers or fetches): the run \
             goes on until it is quiet for --grace. Ctrl-C ends it and keeps the profile; \
             --duration records a window of a program that never ends",
            STILL_AT_WORK.as_secs()
        ));
    }

    /// The snapshot's bytes, and the clock resolution the page measured.
    /// A page still running a script (after a timeout) has it terminated
    /// if it does not answer within [`PULL_PATIENCE`], where the browser
    /// can.
    fn pull_snapshot(&mut self, busy: bool) -> Result<Option<Pulled>> {
        let expression = SNAPSHOT_EXPRESSION;
        let evaluation = self.driver.evaluate(expression)?;
        let value = match evaluation.wait(if busy { PULL_PATIENCE } else { COMMAND_TIMEOUT }) {
            Ok(value) => value,
            Err(_) if busy => {
                if !self.driver.terminate_script()? {
                    bail!(
                        "the page never paused its script to hand the profile over, and this \
                         browser cannot stop a script from outside (WebDriver BiDi has no way): \
                         run it with --browser chromium to keep what a program that never \
                         yields counted"
                    );
                }
                // The termination can take the queued read down with the
                // script it was meant for: then read again, now that the
                // page is free.
                match evaluation.wait(COMMAND_TIMEOUT) {
                    Ok(value) if value.is_object() => value,
                    _ => self
                        .driver
                        .evaluate(expression)?
                        .wait(COMMAND_TIMEOUT)
                        .context("the page did not hand over its profile")?,
                }
            }
            Err(e) => return Err(e.context("the page did not hand over its profile")),
        };
        if !value.is_object() {
            return Ok(None);
        }
        let bytes = match value["snapshot"].as_str() {
            Some(text) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .context("the page's snapshot is not base64")?,
            ),
            None => None,
        };
        Ok(Some(Pulled {
            bytes,
            display_frames: value["displayFrames"].as_u64(),
            resolution: value["resolution"].as_f64(),
            pending_work: pending_work(&value["pending"]),
        }))
    }
}

/// Writes the profile pulled last while the page ran, when the run could
/// not end with a fresh one, and says so in the run's message.
fn keep_latest(
    result: &mut HostResult,
    latest: Latest,
    snapshot_out: &std::path::Path,
    why: &str,
) -> Result<()> {
    let Some((bytes, at)) = latest.bytes else {
        return Ok(());
    };
    std::fs::write(snapshot_out, bytes)
        .with_context(|| format!("could not write {}", snapshot_out.display()))?;
    result.snapshot = true;
    let before = at.elapsed().as_millis();
    let kept = format!("the profile is the one pulled {before} ms before, incomplete{why}");
    result.message = Some(match result.message.take() {
        Some(message) if message.contains("; its profile is lost") => {
            message.replace("its profile is lost", &kept)
        }
        Some(message) => format!("{message}; {kept}"),
        None => kept,
    });
    Ok(())
}

/// Relays a console line, a dialog or an uncaught exception; says whether
/// the event was one of those.
fn relay_event(event: &PageEvent, relay: &mut Relay) -> bool {
    match event {
        PageEvent::Console(stream, text) => relay.line(*stream, text),
        PageEvent::Uncaught { text, .. } => relay.line(Stream::Stderr, text),
        PageEvent::Dialog(message) => relay.line(Stream::Stderr, &format!("[dialog] {message}")),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pending_work_is_named_by_kind_and_nothing_pending_is_none() {
        let counts = json!({ "timers": 2, "intervals": 0, "frames": 1, "fetches": 0 });
        assert_eq!(
            pending_work(&counts).as_deref(),
            Some("2 timers, 1 animation frame")
        );
        let none = json!({ "timers": 0, "intervals": 0, "frames": 0, "fetches": 0 });
        assert_eq!(pending_work(&none), None);
        assert_eq!(pending_work(&Value::Null), None);
    }
}
