//! A page of Chromium, over the DevTools protocol: a target attached in
//! flat mode, a binding for the page's reports, the Runtime, Log and
//! Inspector domains for what it says, and the Profiler for the engine's
//! samples: the page's, and each dedicated worker's (a program's threads
//! on web workers), attached to as they start.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::Chromium;
use super::console::{self, Stream};
use super::driver::{Evaluation, PageDriver, PageEvent, PageOptions, REPORT_BINDING};
use super::rpc::{DISCONNECTED, Event};
use crate::hosts::sampler_pace;

/// How long commands that should answer at once may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) struct CdpPage<'a> {
    chromium: &'a Chromium,
    /// The page's target and the session attached to it, once open.
    target: Option<(String, String)>,
    /// The sampler's interval (µs), once it samples.
    sampling: Option<u32>,
    /// Whether the page's own thread is sampled: not when the program
    /// runs on workers alone.
    page_sampled: bool,
    /// Whether the interval is the default, slowed for workers that
    /// start while the page's threads fill the machine.
    adapts: bool,
    /// The interval a worker was sampled at instead, if one was (µs).
    slowed_to: Option<u32>,
    /// The sessions of the workers attached to, to be sampled too.
    workers: Vec<String>,
}

impl<'a> CdpPage<'a> {
    pub(super) fn new(chromium: &'a Chromium) -> CdpPage<'a> {
        CdpPage {
            chromium,
            target: None,
            sampling: None,
            page_sampled: false,
            adapts: false,
            slowed_to: None,
            workers: Vec::new(),
        }
    }

    fn session(&self) -> Option<&str> {
        self.target.as_ref().map(|(_, session)| session.as_str())
    }

    fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.chromium
            .cdp
            .call(self.session(), method, params, COMMAND_TIMEOUT)
    }
}

impl PageDriver for CdpPage<'_> {
    /// `chromium 156.0.8078.79 (headless)`, from the browser itself (new
    /// headless mode reports itself as plain `Chrome/…`).
    fn host_name(&self) -> String {
        let version = self
            .chromium
            .cdp
            .call(None, "Browser.getVersion", json!({}), COMMAND_TIMEOUT)
            .map(|v| v["product"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default();
        let number = version.split('/').nth(1).unwrap_or("unknown version");
        let how = if self.chromium.headed {
            ""
        } else {
            " (headless)"
        };
        format!("chromium {number}{how}")
    }

    fn open(&mut self, options: &PageOptions) -> Result<()> {
        let cdp = &self.chromium.cdp;
        let target = cdp
            .call(
                None,
                "Target.createTarget",
                json!({ "url": "about:blank" }),
                COMMAND_TIMEOUT,
            )
            .context("could not open a page")?;
        let target_id = target["targetId"]
            .as_str()
            .context("no target id")?
            .to_owned();
        let attached = cdp.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
            COMMAND_TIMEOUT,
        )?;
        let session = attached["sessionId"]
            .as_str()
            .context("no session id")?
            .to_owned();
        self.target = Some((target_id, session));
        for method in [
            "Runtime.enable",
            "Page.enable",
            "Log.enable",
            "Inspector.enable",
        ] {
            self.call(method, json!({}))?;
        }
        self.call("Runtime.addBinding", json!({ "name": REPORT_BINDING }))?;
        if let Some(interval) = options.sample_interval_micros {
            // A page that only starts the program's workers runs none of
            // it: its samples would be the host's, and its sampler's ticks
            // land on the cores the workers fill.
            self.page_sampled = !options.program_on_workers;
            if self.page_sampled {
                self.call("Profiler.enable", json!({}))?;
                self.call(
                    "Profiler.setSamplingInterval",
                    json!({ "interval": interval }),
                )?;
                self.call("Profiler.start", json!({}))?;
            }
            self.sampling = Some(interval);
            self.adapts = options.sample_interval_adapts;
            // The workers it starts, and theirs, are sampled too: attached
            // to as they start (without pausing them, so that nothing waits
            // on this side's reading of the events).
            self.call("Target.setAutoAttach", auto_attach())?;
        }
        Ok(())
    }

    fn navigate(&mut self, url: &str) -> Result<Option<String>> {
        let navigated = self.call("Page.navigate", json!({ "url": url }))?;
        Ok(navigated["errorText"]
            .as_str()
            .filter(|e| !e.is_empty())
            .map(str::to_owned))
    }

    fn next_event(&mut self, wait: std::time::Duration) -> Option<PageEvent> {
        let event = self.chromium.cdp.next_event(wait)?;
        if event.method == "Target.attachedToTarget" {
            self.sample_worker(&event.params);
            return Some(PageEvent::Other);
        }
        Some(self.translate(&event))
    }

    fn evaluate(&mut self, expression: &str) -> Result<Evaluation> {
        let call = self.chromium.cdp.send(
            self.session(),
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        )?;
        Ok(Evaluation {
            call,
            decode: evaluated_value,
        })
    }

    fn terminate_script(&mut self) -> Result<bool> {
        self.chromium
            .cdp
            .send(self.session(), "Runtime.terminateExecution", json!({}))?;
        Ok(true)
    }

    fn crash_page(&mut self) {
        let _ = self
            .chromium
            .cdp
            .send(self.session(), "Page.crash", json!({}));
    }

    fn stop_sampler(&mut self) -> Result<Option<Value>> {
        if self.sampling.is_none() {
            return Ok(None);
        }
        let page = if self.page_sampled {
            let stopped = self.call("Profiler.stop", json!({}))?;
            stopped
                .get("profile")
                .cloned()
                .context("Profiler.stop gave no profile")?
        } else {
            wasmprof_profile::sampled::threads::no_samples()
        };
        // A worker that has ended took its samples with it.
        let mut workers = Vec::new();
        for (index, session) in self.workers.iter().enumerate() {
            let stopped = self.chromium.cdp.call(
                Some(session),
                "Profiler.stop",
                json!({}),
                WORKER_STOP_TIMEOUT,
            );
            if let Some(profile) = stopped.ok().and_then(|s| s.get("profile").cloned()) {
                workers.push((format!("worker {}", index + 1), profile));
            }
        }
        let (merged, left_out) = wasmprof_profile::sampled::threads::merged(page, &workers);
        if left_out > 0 {
            crate::terminal::warning(&format!(
                "{left_out} worker sample profile{} of an unknown shape left out",
                if left_out == 1 { "" } else { "s" }
            ));
        }
        Ok(Some(merged))
    }

    fn restart_sampler(&mut self) -> Result<()> {
        if self.sampling.is_none() {
            return Ok(());
        }
        if self.page_sampled {
            self.call("Profiler.stop", json!({}))?;
            self.call("Profiler.start", json!({}))?;
        }
        // In order on each worker's session, not waited for.
        for session in &self.workers {
            for method in ["Profiler.stop", "Profiler.start"] {
                let _ = self.chromium.cdp.send(Some(session), method, json!({}));
            }
        }
        Ok(())
    }

    fn sampler_slowed_to_micros(&self) -> Option<u64> {
        self.slowed_to.map(u64::from)
    }

    fn close(&mut self) {
        if let Some((target_id, _)) = self.target.take() {
            let _ = self.chromium.cdp.call(
                None,
                "Target.closeTarget",
                json!({ "targetId": target_id }),
                COMMAND_TIMEOUT,
            );
        }
    }

    fn stderr_tail(&self) -> String {
        self.chromium.stderr_tail_text()
    }
}

/// Attach to every worker a target starts, flat, without pausing it.
fn auto_attach() -> Value {
    json!({ "autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true })
}

/// How long a worker's profiler may take to hand its samples over.
const WORKER_STOP_TIMEOUT: Duration = Duration::from_secs(10);

impl CdpPage<'_> {
    /// A target attached to on its start: a dedicated worker is sampled
    /// as the page is, and the workers it starts in turn. Nothing is
    /// waited for: the commands go out in order on the worker's session.
    fn sample_worker(&mut self, attached: &Value) {
        let (Some(interval), Some(session)) = (self.sampling, attached["sessionId"].as_str())
        else {
            return;
        };
        if attached["targetInfo"]["type"] != "worker" {
            return;
        }
        // V8 samples each thread from a sampler thread of its own: this
        // worker's, those before it and the page's, when it is sampled.
        let threads = self.workers.len() as u32 + 1 + u32::from(self.page_sampled);
        let paced = sampler_pace::interval_for(
            Duration::from_micros(u64::from(interval)),
            self.adapts,
            threads,
            sampler_pace::cores(),
        )
        .as_micros() as u32;
        if paced != interval {
            self.slowed_to = Some(paced);
        }
        let cdp = &self.chromium.cdp;
        for (method, params) in [
            ("Profiler.enable", json!({})),
            ("Profiler.setSamplingInterval", json!({ "interval": paced })),
            ("Profiler.start", json!({})),
            ("Target.setAutoAttach", auto_attach()),
        ] {
            let _ = cdp.send(Some(session), method, params);
        }
        self.workers.push(session.to_owned());
    }

    /// What a DevTools event means for the run.
    fn translate(&self, event: &Event) -> PageEvent {
        if event.method == DISCONNECTED {
            return PageEvent::Gone;
        }
        let Some((target_id, session)) = &self.target else {
            return PageEvent::Other;
        };
        if event.method == "Target.targetCrashed" && event.params["targetId"] == *target_id {
            return PageEvent::Crashed;
        }
        if event.session.as_deref() != Some(session) {
            return PageEvent::Other;
        }
        match event.method.as_str() {
            "Inspector.targetCrashed" => PageEvent::Crashed,
            "Runtime.bindingCalled" if event.params["name"] == REPORT_BINDING => {
                match event.params["payload"].as_str() {
                    Some(payload) => PageEvent::Report(payload.to_owned()),
                    None => PageEvent::Other,
                }
            }
            "Runtime.exceptionThrown" => {
                let text = console::exception(&event.params);
                PageEvent::Uncaught {
                    message: text
                        .lines()
                        .next()
                        .unwrap_or("an uncaught exception")
                        .to_owned(),
                    text,
                    trap: console::is_trap(&event.params),
                }
            }
            "Page.javascriptDialogOpening" => {
                // alert() and confirm() would block the page for good.
                let _ = self.chromium.cdp.send(
                    Some(session),
                    "Page.handleJavaScriptDialog",
                    json!({ "accept": true }),
                );
                PageEvent::Dialog(
                    event.params["message"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            }
            "Runtime.consoleAPICalled" => {
                let (stream, text) = console::console_call(&event.params);
                PageEvent::Console(stream, text)
            }
            "Log.entryAdded" => match console::log_entry(&event.params) {
                Some(text) => PageEvent::Console(Stream::Stderr, text),
                None => PageEvent::Other,
            },
            _ => PageEvent::Other,
        }
    }
}

/// The value of a `Runtime.evaluate` reply made with `returnByValue`.
fn evaluated_value(reply: Value) -> Result<Value> {
    if let Some(details) = reply.get("exceptionDetails") {
        bail!(
            "{}",
            console::exception(&json!({ "exceptionDetails": details }))
        );
    }
    Ok(reply["result"]["value"].clone())
}
