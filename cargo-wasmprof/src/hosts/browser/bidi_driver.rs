//! A tab of Firefox, over WebDriver BiDi: a preload script whose channel
//! carries the page's reports, `log.entryAdded` for its console and its
//! uncaught errors, and `script.evaluate` to read values out of it.
//!
//! The engine's samples come from the Gecko profiler, started in the
//! browser's own window (`gecko_sampler.rs`). What BiDi does not give,
//! this says once and goes on without: stopping a script that hangs (the
//! profile is then the one pulled last).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::console::Stream;
use super::driver::{Evaluation, PageDriver, PageEvent, PageOptions, REPORT_BINDING};
use super::firefox::Firefox;
use super::gecko_sampler::GeckoSampler;
use super::rpc::{DISCONNECTED, Event};
use wasmprof_profile::sampled::gecko::program_samples;

/// How long commands that should answer at once may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The preload script's channel, which `script.message` events name.
const CHANNEL: &str = "wasmprof-report";

/// The events a tab is subscribed to.
const EVENTS: &[&str] = &[
    "log.entryAdded",
    "script.message",
    "browsingContext.userPromptOpened",
    "browsingContext.contextDestroyed",
    "browsingContext.navigationFailed",
];

pub(super) struct BidiPage<'a> {
    firefox: &'a Firefox,
    /// The tab, once open.
    context: Option<String>,
    /// What to undo when it closes: the preload script and the
    /// subscription.
    preload: Option<String>,
    subscription: Option<String>,
    /// A script would not stop: the tab cannot be closed (its content
    /// process is busy for good), only the browser ended.
    stuck: bool,
    /// The Gecko profiler, while it samples for this tab.
    sampler: Option<GeckoSampler>,
    /// The page's origin (`http://127.0.0.1:41977`): its threads are the
    /// ones in the profile whose frames are of scripts from it.
    origin: Option<String>,
}

impl<'a> BidiPage<'a> {
    pub(super) fn new(firefox: &'a Firefox) -> BidiPage<'a> {
        BidiPage {
            firefox,
            context: None,
            preload: None,
            subscription: None,
            stuck: false,
            sampler: None,
            origin: None,
        }
    }

    fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.firefox
            .bidi
            .call(None, method, params, COMMAND_TIMEOUT)
    }

    fn context(&self) -> Result<&str> {
        self.context.as_deref().context("the tab is not open")
    }
}

impl PageDriver for BidiPage<'_> {
    fn host_name(&self) -> String {
        self.firefox.name.clone()
    }

    fn open(&mut self, options: &PageOptions) -> Result<()> {
        let created = self
            .call("browsingContext.create", json!({ "type": "tab" }))
            .context("could not open a tab")?;
        let context = created["context"]
            .as_str()
            .context("no browsing context")?
            .to_owned();
        self.context = Some(context.clone());
        // The page's scripts report through `__wasmprofReport`, as they do
        // through Chromium's binding: defined before any of them runs.
        let preload = self.call(
            "script.addPreloadScript",
            json!({
                "functionDeclaration": format!(
                    "(channel) => {{ Object.defineProperty(globalThis, '{REPORT_BINDING}', \
                     {{ value: (message) => channel(message), configurable: true }}); }}"
                ),
                "arguments": [{ "type": "channel", "value": { "channel": CHANNEL } }],
                "contexts": [context],
            }),
        )?;
        self.preload = preload["script"].as_str().map(str::to_owned);
        let subscribed = self.call(
            "session.subscribe",
            json!({ "events": EVENTS, "contexts": [context] }),
        )?;
        self.subscription = subscribed["subscription"].as_str().map(str::to_owned);
        if let Some(interval) = options.sample_interval_micros {
            let dir = self.firefox.profile_dir();
            match GeckoSampler::start(&self.firefox.bidi, interval, dir) {
                Ok(sampler) => self.sampler = Some(sampler),
                Err(e) => {
                    static SAID: std::sync::Once = std::sync::Once::new();
                    SAID.call_once(|| {
                        crate::terminal::note(&format!(
                            "Firefox's sampler could not be started ({e:#}): calls too short \
                             to time keep their time in their callers' (run with --browser \
                             chromium for the engine's samples); counts are exact and timed \
                             calls timed as ever"
                        ))
                    });
                }
            }
        }
        Ok(())
    }

    fn navigate(&mut self, url: &str) -> Result<Option<String>> {
        self.origin = origin_of(url);
        // Not waiting for the load: a program's start runs as the page
        // loads, and may run long.
        let navigated = self.firefox.bidi.call(
            None,
            "browsingContext.navigate",
            json!({ "context": self.context()?, "url": url, "wait": "none" }),
            COMMAND_TIMEOUT,
        );
        match navigated {
            Ok(_) => Ok(None),
            Err(e) if e.to_string().contains("browsingContext.navigate failed") => {
                Ok(Some(format!("{e:#}")))
            }
            Err(e) => Err(e),
        }
    }

    fn next_event(&mut self, wait: Duration) -> Option<PageEvent> {
        let event = self.firefox.bidi.next_event(wait)?;
        Some(self.translate(&event))
    }

    fn evaluate(&mut self, expression: &str) -> Result<Evaluation> {
        // The value comes back as JSON text: a BiDi remote value of an
        // object is a list of pairs, JSON is what the run reads.
        let call = self.firefox.bidi.send(
            None,
            "script.evaluate",
            json!({
                "expression": format!("JSON.stringify({expression})"),
                "target": { "context": self.context()? },
                "awaitPromise": false,
                "resultOwnership": "none",
            }),
        )?;
        Ok(Evaluation {
            call,
            decode: evaluated_value,
        })
    }

    fn terminate_script(&mut self) -> Result<bool> {
        self.stuck = true;
        Ok(false)
    }

    fn crash_page(&mut self) {
        self.firefox.kill_for_test();
    }

    fn stop_sampler(&mut self) -> Result<Option<Value>> {
        let Some(sampler) = self.sampler.take() else {
            return Ok(None);
        };
        let gecko = sampler.stop(&self.firefox.bidi)?;
        let samples = program_samples(&gecko, self.origin.as_deref())
            .map_err(anyhow::Error::msg)
            .context("Firefox's profile could not be read")?;
        match samples {
            Some(samples) => Ok(Some(samples)),
            None => bail!("Firefox's profile has no thread that ran the page's code"),
        }
    }

    fn restart_sampler(&mut self) -> Result<()> {
        match &self.sampler {
            Some(sampler) => sampler.restart(&self.firefox.bidi),
            None => Ok(()),
        }
    }

    fn close(&mut self) {
        if let Some(sampler) = self.sampler.take()
            && !self.stuck
        {
            sampler.abandon(&self.firefox.bidi);
        }
        if self.stuck {
            // Each command would wait its full timeout on the busy tab.
            return;
        }
        if let Some(subscription) = self.subscription.take() {
            let _ = self.call(
                "session.unsubscribe",
                json!({ "subscriptions": [subscription] }),
            );
        }
        if let Some(script) = self.preload.take() {
            let _ = self.call("script.removePreloadScript", json!({ "script": script }));
        }
        if let Some(context) = self.context.take() {
            let _ = self.call("browsingContext.close", json!({ "context": context }));
        }
    }

    fn stderr_tail(&self) -> String {
        self.firefox.stderr_tail_text()
    }

    fn browser_spent(&self) -> bool {
        self.stuck
    }
}

/// Where `url` is from: `http://127.0.0.1:41977` of
/// `http://127.0.0.1:41977/index.html`.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(format!("{scheme}://{host}"))
}

impl BidiPage<'_> {
    /// What a BiDi event means for the run.
    fn translate(&self, event: &Event) -> PageEvent {
        if event.method == DISCONNECTED {
            return PageEvent::Gone;
        }
        let Some(context) = self.context.as_deref() else {
            return PageEvent::Other;
        };
        let params = &event.params;
        let ours = params["context"].as_str() == Some(context)
            || params["source"]["context"].as_str() == Some(context);
        if !ours {
            return PageEvent::Other;
        }
        match event.method.as_str() {
            "script.message" if params["channel"] == CHANNEL => {
                match params["data"]["value"].as_str() {
                    Some(text) => PageEvent::Report(text.to_owned()),
                    None => PageEvent::Other,
                }
            }
            "log.entryAdded" => log_entry(params),
            "browsingContext.userPromptOpened" => {
                PageEvent::Dialog(params["message"].as_str().unwrap_or_default().to_owned())
            }
            "browsingContext.contextDestroyed" => PageEvent::Crashed,
            "browsingContext.navigationFailed" => PageEvent::NotLoaded(format!(
                "{} could not be loaded",
                params["url"].as_str().unwrap_or("the page")
            )),
            _ => PageEvent::Other,
        }
    }
}

/// The name of the console functions of the program's workers, which send
/// what they print to the page as well (`js/thread-host.js`,
/// `thread_page.rs`): the page prints it, and Firefox, which also reports
/// a worker's own console calls, would have it twice.
const RELAYED_BY_THE_PAGE: &str = "wasmprofRelayed";

/// A `log.entryAdded` event: a console call (`log` and `info` to standard
/// output, the rest to standard error, as Chromium's are relayed), or an
/// uncaught error.
fn log_entry(params: &Value) -> PageEvent {
    if params["stackTrace"]["callFrames"][0]["functionName"] == RELAYED_BY_THE_PAGE {
        return PageEvent::Other;
    }
    let text = params["text"].as_str().unwrap_or_default().to_owned();
    match params["type"].as_str() {
        Some("javascript") => PageEvent::Uncaught {
            message: text
                .lines()
                .next()
                .unwrap_or("an uncaught exception")
                .to_owned(),
            // A WebAssembly trap is a RuntimeError (`unreachable executed`).
            trap: text.starts_with("RuntimeError"),
            text: format!("Uncaught {text}"),
        },
        _ => {
            let stream = match params["method"].as_str() {
                Some("log" | "info") => Stream::Stdout,
                _ => Stream::Stderr,
            };
            let text = match params["method"].as_str() {
                Some("assert") => format!("Assertion failed: {text}"),
                Some("trace") => format!("console.trace: {text}"),
                _ => text,
            };
            PageEvent::Console(stream, text)
        }
    }
}

/// The value of a `script.evaluate` of `JSON.stringify(…)`.
fn evaluated_value(reply: Value) -> Result<Value> {
    match reply["type"].as_str() {
        Some("exception") => bail!(
            "{}",
            reply["exceptionDetails"]["text"]
                .as_str()
                .unwrap_or("the page threw")
        ),
        _ => match &reply["result"] {
            result if result["type"] == "string" => {
                let text = result["value"].as_str().unwrap_or("null");
                serde_json::from_str(text).context("the page's value is not JSON")
            }
            _ => Ok(Value::Null),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_s_origin_is_its_scheme_host_and_port() {
        assert_eq!(
            origin_of("http://127.0.0.1:41977/index.html?run=1").as_deref(),
            Some("http://127.0.0.1:41977")
        );
        assert_eq!(
            origin_of("http://localhost#x").as_deref(),
            Some("http://localhost")
        );
        assert_eq!(origin_of("about:blank"), None);
    }

    #[test]
    fn console_calls_go_to_their_streams_and_errors_end_the_run() {
        let log = json!({ "type": "console", "method": "log", "text": "counter 1" });
        assert_eq!(
            log_entry(&log),
            PageEvent::Console(Stream::Stdout, "counter 1".into())
        );
        // A worker's call, which the page prints as well: heard once.
        let relayed = json!({ "type": "console", "method": "log", "text": "counter 1",
            "stackTrace": { "callFrames": [{ "functionName": "wasmprofRelayed" }] } });
        assert_eq!(log_entry(&relayed), PageEvent::Other);
        let warn = json!({ "type": "console", "method": "warn", "text": "careful" });
        assert_eq!(
            log_entry(&warn),
            PageEvent::Console(Stream::Stderr, "careful".into())
        );
        let trap = json!({ "type": "javascript", "text": "RuntimeError: unreachable executed" });
        assert_eq!(
            log_entry(&trap),
            PageEvent::Uncaught {
                text: "Uncaught RuntimeError: unreachable executed".into(),
                message: "RuntimeError: unreachable executed".into(),
                trap: true,
            }
        );
    }

    #[test]
    fn an_evaluated_value_is_read_from_its_json_and_an_exception_is_an_error() {
        let reply = json!({ "type": "success", "result": {
            "type": "string", "value": "{\"snapshot\":\"V1BSRg==\",\"resolution\":0.2}" } });
        assert_eq!(evaluated_value(reply).unwrap()["snapshot"], "V1BSRg==");
        let undefined = json!({ "type": "success", "result": { "type": "undefined" } });
        assert_eq!(evaluated_value(undefined).unwrap(), Value::Null);
        let thrown = json!({ "type": "exception", "exceptionDetails": { "text": "Error: boom" } });
        assert!(
            evaluated_value(thrown)
                .unwrap_err()
                .to_string()
                .contains("Error: boom")
        );
    }
}
