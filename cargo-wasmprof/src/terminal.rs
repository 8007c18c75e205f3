//! Status lines on standard error, in cargo's style, so that wasmprof's
//! steps read like the cargo steps around them.

use std::io::{IsTerminal, Write};

/// Prints `verb message` with the verb right-aligned and, on a terminal,
/// in bold green, as cargo does.
pub(crate) fn status(verb: &str, message: &str) {
    let mut err = std::io::stderr().lock();
    if std::io::stderr().is_terminal() {
        let _ = writeln!(err, "\x1b[1;32m{verb:>12}\x1b[0m {message}");
    } else {
        let _ = writeln!(err, "{verb:>12} {message}");
    }
}

/// A note that does not stop anything.
pub(crate) fn note(message: &str) {
    let mut err = std::io::stderr().lock();
    if std::io::stderr().is_terminal() {
        let _ = writeln!(err, "\x1b[1;36mnote\x1b[0m: {message}");
    } else {
        let _ = writeln!(err, "note: {message}");
    }
}

/// A warning that does not stop anything.
pub(crate) fn warning(message: &str) {
    let mut err = std::io::stderr().lock();
    if std::io::stderr().is_terminal() {
        let _ = writeln!(err, "\x1b[1;33mwarning\x1b[0m: {message}");
    } else {
        let _ = writeln!(err, "warning: {message}");
    }
}

/// An error that ends the command's work with a failure status, printed
/// where it happens (the command itself goes on to finish its output).
pub(crate) fn error(message: &str) {
    let mut err = std::io::stderr().lock();
    if std::io::stderr().is_terminal() {
        let _ = writeln!(err, "\x1b[1;31merror\x1b[0m: {message}");
    } else {
        let _ = writeln!(err, "error: {message}");
    }
}

/// `12.345 ms` or `3.210 s`: enough digits to compare runs.
pub(crate) fn seconds_or_millis(nanos: u64) -> String {
    if nanos < 1_000_000_000 {
        format!("{:.3} ms", nanos as f64 / 1e6)
    } else {
        format!("{:.3} s", nanos as f64 / 1e9)
    }
}
