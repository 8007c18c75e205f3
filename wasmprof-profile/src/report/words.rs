//! The words every report shares: the names given to what is not a
//! function of the program, and counting words. Here rather than in one
//! format's file, so that formats need not import one another for them.

/// The pseudo-function of allocations (and time) outside any instrumented
/// call. In parentheses, not angle brackets: `go tool pprof` takes `<…>`
/// for C++ template arguments and drops it, leaving no name.
pub(crate) const OUTSIDE: &str = "(outside instrumented code)";

/// The frame above a count-only function, whose callers are not known.
pub(crate) const CALLERS_NOT_TRACKED: &str = "<callers not tracked>";

/// `1 block`, `2 blocks`.
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
