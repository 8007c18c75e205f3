//! The page's console, relayed to the terminal as it happens:
//! `console.log`/`info` to standard output, everything else (warnings,
//! errors, debug, uncaught exceptions, failed loads) to standard error.

use std::io::Write;

use serde_json::Value;

use crate::hosts::host::Captured;

/// Which stream a line goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    Stdout,
    Stderr,
}

/// Where relayed lines go: the terminal, or a capture for `bench`.
pub(super) struct Relay<'a> {
    pub capture: Option<&'a mut Captured>,
}

impl Relay<'_> {
    pub(super) fn line(&mut self, stream: Stream, text: &str) {
        let mut line = text.to_owned();
        line.push('\n');
        match (&mut self.capture, stream) {
            (Some(c), Stream::Stdout) => c.stdout.extend_from_slice(line.as_bytes()),
            (Some(c), Stream::Stderr) => c.stderr.extend_from_slice(line.as_bytes()),
            (None, Stream::Stdout) => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line.as_bytes());
                let _ = out.flush();
            }
            (None, Stream::Stderr) => {
                let _ = std::io::stderr().lock().write_all(line.as_bytes());
            }
        }
    }
}

/// A `Runtime.consoleAPICalled` event as a line, and its stream.
pub(super) fn console_call(params: &Value) -> (Stream, String) {
    let kind = params["type"].as_str().unwrap_or("log");
    let args = params["args"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let stream = match kind {
        "log" | "info" => Stream::Stdout,
        _ => Stream::Stderr,
    };
    let text = format_args(args);
    let text = match kind {
        "assert" => format!("Assertion failed: {text}"),
        "trace" => format!("console.trace: {text}"),
        _ => text,
    };
    (stream, text)
}

/// A `Runtime.exceptionThrown` event as a line: the exception's own
/// description (message and stack) after the engine's `Uncaught`.
pub(super) fn exception(params: &Value) -> String {
    let details = &params["exceptionDetails"];
    let text = details["text"].as_str().unwrap_or("Uncaught");
    match details["exception"]["description"].as_str() {
        Some(description) => format!("{text} {description}"),
        None => match details["exception"]["value"].as_str() {
            Some(value) => format!("{text} {value}"),
            None => text.to_owned(),
        },
    }
}

/// Whether an uncaught exception is a WebAssembly trap.
pub(super) fn is_trap(params: &Value) -> bool {
    params["exceptionDetails"]["exception"]["className"].as_str() == Some("RuntimeError")
}

/// A `Log.entryAdded` event (a failed load, a blocked request) as a line.
pub(super) fn log_entry(params: &Value) -> Option<String> {
    let entry = &params["entry"];
    if entry["level"].as_str() != Some("error") {
        return None;
    }
    let text = entry["text"].as_str()?;
    Some(match entry["url"].as_str() {
        Some(url) if !url.is_empty() => format!("{text} ({url})"),
        _ => text.to_owned(),
    })
}

/// The arguments as the console shows them: `%s`, `%d`, `%i`, `%f`, `%o`,
/// `%O` and `%c` in a first string argument take the arguments after it.
fn format_args(args: &[Value]) -> String {
    let mut rest = args.iter();
    let mut out = String::new();
    if let Some(first) = args.first().filter(|a| a["type"] == "string") {
        rest.next();
        let format = first["value"].as_str().unwrap_or_default();
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.peek().copied() {
                Some(spec @ ('s' | 'd' | 'i' | 'f' | 'o' | 'O' | 'c')) => {
                    chars.next();
                    match (spec, rest.next()) {
                        ('c', _) => {}
                        ('d' | 'i', Some(arg)) => out.push_str(&integer(arg)),
                        (_, Some(arg)) => out.push_str(&plain(arg)),
                        (_, None) => {
                            out.push('%');
                            out.push(spec);
                        }
                    }
                }
                Some('%') => {
                    chars.next();
                    out.push('%');
                }
                _ => out.push('%'),
            }
        }
    }
    for arg in rest {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&plain(arg));
    }
    out
}

/// One remote object as text.
fn plain(arg: &Value) -> String {
    if let Some(text) = arg["unserializableValue"].as_str() {
        return text.to_owned();
    }
    match arg["type"].as_str() {
        Some("string") => arg["value"].as_str().unwrap_or_default().to_owned(),
        Some("undefined") => "undefined".into(),
        Some("number" | "boolean") => arg["value"].to_string(),
        Some("bigint") => arg["description"].as_str().unwrap_or_default().to_owned(),
        _ if arg["subtype"] == "null" => "null".into(),
        _ => arg["description"]
            .as_str()
            .or_else(|| arg["className"].as_str())
            .unwrap_or("[object]")
            .to_owned(),
    }
}

fn integer(arg: &Value) -> String {
    match arg["value"].as_f64() {
        Some(n) => format!("{}", n.trunc() as i64),
        None => "NaN".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(kind: &str, args: Value) -> (Stream, String) {
        console_call(&json!({ "type": kind, "args": args }))
    }

    #[test]
    fn log_and_info_go_to_stdout_the_rest_to_stderr() {
        let s = json!([{"type": "string", "value": "x"}]);
        assert_eq!(call("log", s.clone()).0, Stream::Stdout);
        assert_eq!(call("info", s.clone()).0, Stream::Stdout);
        for kind in ["warning", "error", "debug", "trace", "assert", "dir"] {
            assert_eq!(call(kind, s.clone()).0, Stream::Stderr, "{kind}");
        }
    }

    #[test]
    fn arguments_read_as_the_console_shows_them() {
        let (_, text) = call(
            "log",
            json!([
                {"type": "string", "value": "%s has %d items (%c%.1f%%)"},
                {"type": "string", "value": "cart"},
                {"type": "number", "value": 3.7},
                {"type": "string", "value": "color: red"},
                {"type": "number", "value": 1.5},
                {"type": "object", "subtype": "null", "value": null},
                {"type": "undefined"},
                {"type": "number", "unserializableValue": "NaN"},
                {"type": "object", "className": "Object", "description": "Object"},
            ]),
        );
        assert_eq!(
            text,
            "cart has 3 items (%.1f%) 1.5 null undefined NaN Object"
        );
    }

    #[test]
    fn an_exception_shows_its_message_and_stack() {
        let params = json!({"exceptionDetails": {"text": "Uncaught", "exception": {
            "className": "RuntimeError", "description": "RuntimeError: unreachable\n    at f (wasm://…)"}}});
        assert_eq!(
            exception(&params),
            "Uncaught RuntimeError: unreachable\n    at f (wasm://…)"
        );
        assert!(is_trap(&params));
        let rejected = json!({"exceptionDetails": {"text": "Uncaught (in promise)", "exception": {"type": "string", "value": "nope"}}});
        assert_eq!(exception(&rejected), "Uncaught (in promise) nope");
        assert!(!is_trap(&rejected));
    }
}
