//! What a run in a page needs of a browser, whichever protocol drives it:
//! open a page that can report to wasmprof, load the run's URL, hear what
//! the page says, read values out of it, and close it. Chromium does it
//! over the DevTools protocol (`cdp_driver.rs`), Firefox over WebDriver
//! BiDi (`bidi_driver.rs`); `page_run.rs` decides, from these events alone,
//! when a run is over.

use std::time::Duration;

use anyhow::Result;
use serde_json::Value;

use super::console::Stream;
use super::rpc::Call;

/// The name the page's scripts report through (`js/page-host.js`).
pub(super) const REPORT_BINDING: &str = "__wasmprofReport";

/// Something the page or the browser did.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PageEvent {
    /// A message of the page's host scripts (JSON text).
    Report(String),
    /// A line of the page's console, or a failed load: relayed, and a sign
    /// that the program is at work.
    Console(Stream, String),
    /// An exception nothing caught: the text to relay, its first line, and
    /// whether it is a WebAssembly trap. It ends the run.
    Uncaught {
        text: String,
        message: String,
        trap: bool,
    },
    /// A dialog (`alert`, `confirm`), which the driver has answered.
    Dialog(String),
    /// The page could not be loaded, as the browser said after the fact.
    NotLoaded(String),
    /// The page's process died.
    Crashed,
    /// The browser closed the connection.
    Gone,
    /// Something else, which tells nothing about the program.
    Other,
}

/// What a driver needs of the page it opens.
pub(super) struct PageOptions {
    /// Sample the page with the engine's own profiler, this often (µs).
    pub sample_interval_micros: Option<u32>,
    /// The interval is the default, which a worker started while the
    /// page's threads fill the machine is sampled more slowly than
    /// ([`crate::hosts::sampler_pace`]).
    pub sample_interval_adapts: bool,
    /// The program runs on web workers the page starts, none of it on
    /// the page's own thread (`LoadAs::BindgenThreads`).
    pub program_on_workers: bool,
}

/// One page of a browser.
pub(super) trait PageDriver {
    /// The browser, for the profile: `chromium 156.0.8078.79 (headless)`.
    fn host_name(&self) -> String;

    /// Opens the page (blank), able to report, with its console heard.
    fn open(&mut self, options: &PageOptions) -> Result<()>;

    /// Loads `url`; `Some(error)` when it could not be loaded.
    fn navigate(&mut self, url: &str) -> Result<Option<String>>;

    /// The next event, waiting up to `wait`.
    fn next_event(&mut self, wait: Duration) -> Option<PageEvent>;

    /// Starts evaluating `expression` in the page, whose value comes back
    /// as JSON (see [`Evaluation`]).
    fn evaluate(&mut self, expression: &str) -> Result<Evaluation>;

    /// Stops the script the page is running (a program that hangs), so
    /// that an evaluation waiting behind it can run; `false` when the
    /// browser cannot.
    fn terminate_script(&mut self) -> Result<bool>;

    /// Crashes the page, for the tests of what a crash keeps.
    fn crash_page(&mut self);

    /// Stops the engine's profiler and returns its `.cpuprofile`, when
    /// [`PageOptions::sample_interval_micros`] started one.
    fn stop_sampler(&mut self) -> Result<Option<Value>>;

    /// Drops the samples taken so far and samples on, so that a recording
    /// window's samples (`--after`) are its own. Nothing without a sampler.
    fn restart_sampler(&mut self) -> Result<()>;

    /// The interval some of the page's threads were sampled at instead of
    /// the default, because they filled the machine (µs).
    fn sampler_slowed_to_micros(&self) -> Option<u64> {
        None
    }

    /// Closes the page.
    fn close(&mut self);

    /// The browser is stuck in a script it could not stop, and must be
    /// ended rather than given another page.
    fn browser_spent(&self) -> bool {
        false
    }

    /// What the browser last wrote to standard error, for a message.
    fn stderr_tail(&self) -> String;
}

/// An evaluation under way: its reply, and how to read the value in it.
pub(super) struct Evaluation {
    pub call: Call,
    pub decode: fn(Value) -> Result<Value>,
}

impl Evaluation {
    /// The value, if the reply has come.
    pub(super) fn ready(&self) -> Option<Result<Value>> {
        self.call.ready().map(|reply| reply.and_then(self.decode))
    }

    /// Waits up to `timeout` for the value.
    pub(super) fn wait(&self, timeout: Duration) -> Result<Value> {
        self.call.wait(timeout).and_then(self.decode)
    }
}
