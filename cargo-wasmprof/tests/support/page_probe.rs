//! A page opened in real headless Chromium for the tests to look at and
//! click: what it logged as errors, what it asked the network for, and what
//! a script evaluated in it returns.

use std::time::{Duration, Instant};

use cargo_wasmprof::browsers_for_tests::DISCONNECTED;
use cargo_wasmprof::browsers_for_tests::{Chromium, ChromiumExe};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct PageProbe {
    chromium: Chromium,
    session: String,
    /// Console errors, uncaught exceptions and failed loads, as text.
    pub errors: Vec<String>,
    /// Every URL the page requested.
    pub requests: Vec<String>,
    /// What the page logged to the console, one line per call.
    pub console: Vec<String>,
}

impl PageProbe {
    /// Opens `url` in a fresh headless Chromium and waits for it to load.
    pub(crate) fn open(url: &str) -> PageProbe {
        PageProbe::open_sized(url, None)
    }

    /// Opens `url` in a window of `size` CSS pixels (width, height), for
    /// pages that lay out by the window, such as DevTools' own front end.
    pub(crate) fn open_sized(url: &str, size: Option<(u32, u32)>) -> PageProbe {
        let exe = ChromiumExe::find().expect("chromium");
        let chromium = Chromium::launch(&exe, &[], false).expect("launch chromium");
        let cdp = &chromium.cdp;
        let target = cdp
            .call(
                None,
                "Target.createTarget",
                json!({ "url": "about:blank" }),
                TIMEOUT,
            )
            .unwrap();
        let attached = cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target["targetId"], "flatten": true }),
                TIMEOUT,
            )
            .unwrap();
        let session = attached["sessionId"].as_str().unwrap().to_owned();
        for method in [
            "Runtime.enable",
            "Page.enable",
            "Log.enable",
            "Network.enable",
        ] {
            cdp.call(Some(&session), method, json!({}), TIMEOUT)
                .unwrap();
        }
        if let Some((width, height)) = size {
            cdp.call(
                Some(&session),
                "Emulation.setDeviceMetricsOverride",
                json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
                TIMEOUT,
            )
            .unwrap();
        }
        let mut probe = PageProbe {
            chromium,
            session,
            errors: Vec::new(),
            requests: Vec::new(),
            console: Vec::new(),
        };
        probe
            .chromium
            .cdp
            .call(
                Some(&probe.session),
                "Page.navigate",
                json!({ "url": url }),
                TIMEOUT,
            )
            .unwrap();
        probe.drain_until("Page.loadEventFired");
        probe
    }

    /// Records events until `method` comes (or the timeout).
    fn drain_until(&mut self, method: &str) {
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            let Some(event) = self.chromium.cdp.next_event(Duration::from_millis(100)) else {
                continue;
            };
            if event.method == DISCONNECTED {
                panic!("the browser went away");
            }
            self.record(&event.method, &event.params);
            if event.method == method {
                return;
            }
        }
        panic!("no {method} within {TIMEOUT:?}");
    }

    /// Records what is already waiting.
    fn drain(&mut self) {
        while let Some(event) = self.chromium.cdp.next_event(Duration::from_millis(50)) {
            self.record(&event.method, &event.params);
        }
    }

    fn record(&mut self, method: &str, params: &Value) {
        if method == "Runtime.consoleAPICalled" {
            let args = params["args"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let line: Vec<String> = args
                .iter()
                .map(|a| {
                    a["value"]
                        .as_str()
                        .map_or_else(|| a["value"].to_string(), str::to_owned)
                })
                .collect();
            self.console.push(line.join(" "));
        }
        match method {
            "Runtime.consoleAPICalled" if params["type"] == "error" => {
                self.errors
                    .push(format!("console.error: {}", params["args"]));
            }
            "Runtime.exceptionThrown" => {
                self.errors
                    .push(format!("exception: {}", params["exceptionDetails"]));
            }
            "Log.entryAdded" if params["entry"]["level"] == "error" => {
                self.errors
                    .push(format!("log: {}", params["entry"]["text"]));
            }
            "Network.requestWillBeSent" => {
                if let Some(url) = params["request"]["url"].as_str() {
                    self.requests.push(url.to_owned());
                }
            }
            _ => {}
        }
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns
    /// its value.
    pub(crate) fn eval(&mut self, expression: &str) -> Value {
        let reply = self
            .chromium
            .cdp
            .call(
                Some(&self.session),
                "Runtime.evaluate",
                json!({
                    "expression": expression,
                    "returnByValue": true,
                    "awaitPromise": true,
                    "userGesture": true,
                }),
                TIMEOUT,
            )
            .unwrap();
        self.drain();
        if let Some(details) = reply.get("exceptionDetails") {
            panic!("{expression} threw: {details}");
        }
        reply["result"]["value"].clone()
    }

    /// Evaluates `expression` until it returns something other than
    /// `null` or `false`, and returns that; panics with `what` after
    /// `timeout`.
    pub(crate) fn wait_for(&mut self, expression: &str, what: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let value = self.eval(expression);
            if !value.is_null() && value != Value::Bool(false) {
                return value;
            }
            assert!(Instant::now() < deadline, "{what}: not within {timeout:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A left click at (`x`, `y`) in CSS pixels, as the mouse makes it:
    /// trusted events, which some pages tell from a script's `click()`.
    pub(crate) fn click_at(&mut self, x: f64, y: f64) {
        for kind in ["mousePressed", "mouseReleased"] {
            self.chromium
                .cdp
                .call(
                    Some(&self.session),
                    "Input.dispatchMouseEvent",
                    json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
                    TIMEOUT,
                )
                .unwrap();
        }
        self.drain();
    }

    /// Chooses `file` in the `<input type=file>` that `expression` returns,
    /// as a person does in the file dialog: the page gets its `change`.
    pub(crate) fn choose_file(&mut self, expression: &str, file: &std::path::Path) {
        let cdp = &self.chromium.cdp;
        let input = cdp
            .call(
                Some(&self.session),
                "Runtime.evaluate",
                json!({ "expression": expression, "awaitPromise": true }),
                TIMEOUT,
            )
            .unwrap();
        let object = input["result"]["objectId"]
            .as_str()
            .unwrap_or_else(|| panic!("{expression} is no element: {input}"));
        cdp.call(Some(&self.session), "DOM.enable", json!({}), TIMEOUT)
            .unwrap();
        cdp.call(
            Some(&self.session),
            "DOM.setFileInputFiles",
            json!({ "files": [file.to_str().unwrap()], "objectId": object }),
            TIMEOUT,
        )
        .unwrap();
        self.drain();
    }

    /// A PNG of what the page shows, for a failing test to leave behind.
    pub(crate) fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine as _;
        let shot = self
            .chromium
            .cdp
            .call(
                Some(&self.session),
                "Page.captureScreenshot",
                json!({ "format": "png" }),
                TIMEOUT,
            )
            .unwrap();
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .unwrap_or_default()
    }

    /// Requests other than for `file:` and `data:` URLs.
    pub(crate) fn network_requests(&self) -> Vec<&String> {
        self.requests
            .iter()
            .filter(|u| !u.starts_with("file:") && !u.starts_with("data:"))
            .collect()
    }
}
