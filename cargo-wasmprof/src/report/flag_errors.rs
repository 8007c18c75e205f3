//! The profile library's errors in the command's words. The library says
//! what is wrong with a profile or an option and names no flag; here each
//! is told as the flag that asked for it, with what to type instead.

use wasmprof_profile::{Error, RenderOption};

/// An error of rendering a report, as the flags that asked for it.
pub(super) fn render_error(error: Error) -> anyhow::Error {
    match &error {
        Error::OptionNotAvailable { option, .. } => {
            let (flag, formats) = match option {
                RenderOption::Icicle => ("--icicle", "--format flamegraph"),
                RenderOption::Weight => {
                    ("--weight", "--format flamegraph or folded, without --diff")
                }
                RenderOption::Base => ("--diff", "--format gprof or flamegraph"),
                _ => return error.into(),
            };
            anyhow::anyhow!("{flag}: {error} ({formats})")
        }
        Error::NoMemory { .. } => anyhow::anyhow!(
            "--weight: {error}: record it with `cargo wasmprof run --memory` (or `test --memory`)"
        ),
        Error::NoTimes { .. } => anyhow::anyhow!(
            "--format cpuprofile: {error} (it was recorded with --timer none); write it with \
             --format speedscope or folded instead"
        ),
        Error::NoTimeline => anyhow::anyhow!(
            "--format flamechart: {error}; give one engine profile with --input, or draw this \
             one with --format flamegraph"
        ),
        _ => error.into(),
    }
}

/// An error of `--fail-if-slower` and `--function`.
pub(super) fn slower_error(error: Error) -> anyhow::Error {
    match &error {
        Error::NoTimes { .. } => {
            anyhow::anyhow!("--fail-if-slower: {error} (they were recorded with --timer none)")
        }
        Error::NoSuchFunction { .. } => anyhow::anyhow!("--function: {error}, nothing to compare"),
        _ => error.into(),
    }
}

/// An error of `--fail-if-more-memory`.
pub(super) fn more_memory_error(error: Error) -> anyhow::Error {
    match &error {
        Error::NoMemory { .. } => anyhow::anyhow!(
            "--fail-if-more-memory: {error}: record both with `cargo wasmprof run --memory`"
        ),
        _ => error.into(),
    }
}

/// An error of `--thread`.
pub(super) fn thread_error(error: Error) -> anyhow::Error {
    match &error {
        Error::NoSuchThread { .. } => anyhow::anyhow!("--thread: {error}"),
        _ => error.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmprof_profile::Which;
    use wasmprof_profile::report::Format;

    #[test]
    fn each_option_is_told_as_its_flag_with_what_to_use() {
        let icicle = render_error(Error::OptionNotAvailable {
            option: RenderOption::Icicle,
            format: Format::Gprof,
        })
        .to_string();
        assert!(icicle.starts_with("--icicle: an icicle layout"), "{icicle}");
        assert!(icicle.ends_with("(--format flamegraph)"), "{icicle}");
        let weight = render_error(Error::NoMemory { which: Which::This }).to_string();
        assert!(weight.contains("cargo wasmprof run --memory"), "{weight}");
        let memory = more_memory_error(Error::NoMemory { which: Which::Base }).to_string();
        assert!(
            memory.starts_with("--fail-if-more-memory: the base profile has no memory"),
            "{memory}"
        );
    }
}
