//! What the page's scripts (`js/page-host.js`, `js/page-watch.js`)
//! report through the DevTools binding: one JSON object per message, told
//! apart by its `type`, read here into types rather than looked up by key.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::hosts::host::RunStatus;

/// The snapshot a pull brought back (the `snapshot` field of the page
/// script's reply, in base64), decoded.
pub(super) fn snapshot_bytes(value: &Value) -> Option<Vec<u8>> {
    use base64::Engine;
    let text = value["snapshot"].as_str()?;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// One message from the page.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum PageMessage {
    /// The entry point returned, threw, or its promise settled.
    Settled(Settled),
    /// The program called `wasmprof::exit(code)`.
    Exit(Exited),
    /// Futures of instrumented async functions made progress: the program
    /// is still at work.
    Futures { pending: u64, polls: u64 },
    /// The page ran animation frames, timers, intervals or fetch callbacks
    /// in the last tenth of a second: the program is still at work.
    Active { callbacks: u64 },
    /// The program's worker is starting its thread pool of `threads`
    /// workers (`initThreadPool`), or has (`started`).
    Pool {
        started: bool,
        #[serde(default)]
        threads: Option<u32>,
    },
}

/// How the entry point ended.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Settled {
    /// A status this version does not know is an error.
    #[serde(deserialize_with = "status_word")]
    pub(crate) status: RunStatus,
    /// 1 when the script gave none: a settled run said to have failed.
    #[serde(default = "failure")]
    pub(crate) exit_code: i32,
    #[serde(default)]
    pub(crate) message: Option<String>,
    /// What `--invoke`'s function returned (`null` for nothing).
    #[serde(default)]
    pub(crate) return_value: Option<Value>,
    #[serde(flatten)]
    pub(crate) times: PageTimes,
    /// The tests a wasm-bindgen-test harness ran, in order.
    #[serde(default)]
    pub(crate) harness_tests: Option<Vec<Option<String>>>,
}

/// `wasmprof::exit(code)`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Exited {
    pub(crate) code: i32,
    #[serde(flatten)]
    pub(crate) times: PageTimes,
}

/// What the page measured of its clock and of the program.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PageTimes {
    #[serde(default)]
    pub(crate) program_nanos: Option<u64>,
    #[serde(default)]
    pub(crate) resolution_nanos: Option<f64>,
}

impl PageMessage {
    /// The binding's payload as a message; `None` for one this version
    /// does not know.
    pub(crate) fn parse(payload: &str) -> Option<PageMessage> {
        serde_json::from_str(payload).ok()
    }
}

fn failure() -> i32 {
    1
}

fn status_word<'de, D: Deserializer<'de>>(deserializer: D) -> Result<RunStatus, D::Error> {
    let word = Option::<String>::deserialize(deserializer)?;
    Ok(RunStatus::from_report(word.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::{Exited, PageMessage, PageTimes, Settled};
    use crate::hosts::host::RunStatus;

    /// Every `type` the page's scripts send is a message this side reads.
    #[test]
    fn every_message_type_the_page_scripts_send_is_read() {
        let scripts = [
            include_str!("../../js/page-host.js"),
            include_str!("../../js/page-watch.js"),
            include_str!("../../js/host-api.js"),
        ];
        let mut types = Vec::new();
        for script in scripts {
            for (at, _) in script.match_indices("type: '") {
                let rest = &script[at + "type: '".len()..];
                types.push(&rest[..rest.find('\'').unwrap()]);
            }
        }
        assert!(types.len() >= 6, "{types:?}");
        for kind in types {
            let sample = match kind {
                "settled" => r#"{"type":"settled","status":"ok","exitCode":0}"#.to_owned(),
                "exit" => r#"{"type":"exit","code":0}"#.to_owned(),
                "futures" => r#"{"type":"futures","pending":1,"polls":2}"#.to_owned(),
                "active" => r#"{"type":"active","callbacks":3}"#.to_owned(),
                "pool" => r#"{"type":"pool","started":false,"threads":2}"#.to_owned(),
                other => panic!("the page sends `{other}`, which is not a PageMessage"),
            };
            assert!(PageMessage::parse(&sample).is_some(), "{sample}");
        }
    }

    #[test]
    fn messages_read_as_the_scripts_write_them() {
        // page-host.js, a test harness that failed.
        let settled = r#"{"type":"settled","status":"exit","exitCode":1,"message":"some tests failed",
            "returnValue":null,"programNanos":1500,"resolutionNanos":5,"harnessTests":["a","b"]}"#;
        assert_eq!(
            PageMessage::parse(settled),
            Some(PageMessage::Settled(Settled {
                status: RunStatus::Exit,
                exit_code: 1,
                message: Some("some tests failed".into()),
                return_value: None,
                times: PageTimes {
                    program_nanos: Some(1500),
                    resolution_nanos: Some(5.0),
                },
                harness_tests: Some(vec![Some("a".into()), Some("b".into())]),
            }))
        );
        let exit = r#"{"type":"exit","code":3,"programNanos":10,"resolutionNanos":100}"#;
        assert_eq!(
            PageMessage::parse(exit),
            Some(PageMessage::Exit(Exited {
                code: 3,
                times: PageTimes {
                    program_nanos: Some(10),
                    resolution_nanos: Some(100.0),
                },
            }))
        );
        // A status from a newer script is an error, not a lost message.
        let unknown = r#"{"type":"settled","status":"lost","exitCode":1}"#;
        let Some(PageMessage::Settled(settled)) = PageMessage::parse(unknown) else {
            panic!("not read");
        };
        assert_eq!(settled.status, RunStatus::Error);
        assert_eq!(PageMessage::parse(r#"{"type":"other"}"#), None);
        assert_eq!(PageMessage::parse("not json"), None);
    }
}
