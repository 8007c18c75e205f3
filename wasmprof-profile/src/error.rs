//! The one error type of the library.
//!
//! Each variant says what is wrong with a file, a profile or the options,
//! in the library's terms: it names no command and no flag. A program
//! built on the library (`cargo-wasmprof` is one) matches on the variant
//! to say which of its own flags or commands the user should reach for.
//! Causes (an I/O error, a JSON parser's position) are kept as
//! [`std::error::Error::source`], not repeated in the message, so that a
//! reporter printing the whole chain shows each once.

use std::path::PathBuf;

use crate::input::kind::InputKind;
use crate::report::format::Format;

/// What the library returns when it cannot read, check, compare or render
/// a profile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A report could not be written to the output it was given.
    #[error("cannot write the {what}")]
    Output {
        /// What was being written ("gprof report", "flame graph", …).
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// A file's JSON stops before its end: it was cut short.
    #[error(
        "{} is corrupt or truncated: the JSON ends at line {line}, column {column}",
        path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The line where the JSON ends.
        line: usize,
        /// The column where the JSON ends.
        column: usize,
    },
    /// A gzip-compressed file (the Firefox Profiler's "Download" is one)
    /// that does not decompress.
    #[error(
        "{} is gzip-compressed but does not decompress (is it truncated? save or download it \
         again)",
        path.display()
    )]
    Gzip {
        /// The file.
        path: PathBuf,
        /// What the decoder found.
        source: std::io::Error,
    },
    /// A file is not a JSON object, so of none of the kinds read.
    #[error(
        "{} is not a wasmprof profile, a .cpuprofile, a Self-Profiling trace nor a Firefox \
         profile: it is not a JSON object",
        path.display()
    )]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// Where the JSON went wrong.
        source: serde_json::Error,
    },
    /// A JSON object of none of the kinds read.
    #[error(
        "{} is a kind of file wasmprof does not read: neither a wasmprof profile, a \
         Chrome/Node .cpuprofile ({{nodes, samples, timeDeltas}}), a JS Self-Profiling \
         trace ({{frames, stacks, samples}}) nor a Firefox profile ({{meta, threads}}, Gecko's or the Firefox Profiler's){}",
        path.display(),
        if *.chrome_trace {
            "; this looks like a Chrome trace (traceEvents), which holds a .cpuprofile only \
             inside its events: save the .cpuprofile itself (DevTools' JavaScript Profiler, \
             `node --cpu-prof`)"
        } else {
            ""
        }
    )]
    UnknownKind {
        /// The file.
        path: PathBuf,
        /// Its keys are a Chrome trace's (`traceEvents`).
        chrome_trace: bool,
    },
    /// A Firefox Profiler profile of a format version this reader does
    /// not know.
    #[error(
        "{} is a Firefox Profiler profile of format version {version}, which wasmprof does \
         not read (it reads versions {} to {}): {}",
        path.display(),
        crate::sampled::processed::OLDEST_VERSION,
        crate::sampled::processed::NEWEST_VERSION,
        if *version > crate::sampled::processed::NEWEST_VERSION {
            "a newer wasmprof reads it"
        } else {
            "open it in the Firefox Profiler and download it again, which saves it in the \
             newest version"
        }
    )]
    ProcessedVersion {
        /// The file.
        path: PathBuf,
        /// Its `meta.preprocessedProfileVersion`.
        version: u64,
    },
    /// The file `report --format firefox` wrote, given back to it.
    #[error(
        "{} is a file wasmprof wrote for the Firefox Profiler (`--format firefox`): its \
         weights are calls and microseconds, not samples, so it is not read back; report on \
         the profile it was written from",
        path.display()
    )]
    OwnFirefoxProfile {
        /// The file.
        path: PathBuf,
    },
    /// A Firefox profile in which no thread ran WebAssembly.
    #[error(
        "{} is a Firefox profile in which no thread ran WebAssembly: record it while the \
         program runs, with the threads it runs on (`GeckoMain`, and `DOM Worker` for web \
         workers) among the profiler's threads",
        path.display()
    )]
    NoWasmThread {
        /// The file.
        path: PathBuf,
    },
    /// A file of a kind that is read, whose content is not of that kind's
    /// shape.
    #[error("{} is {kind} that cannot be read", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What it was taken for.
        kind: InputKind,
        /// What is wrong with it.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A wasmprof profile names a format that is not wasmprof's.
    #[error(
        "{} has format {found:?}, which is not a wasmprof profile's; expected {:?}",
        path.display(),
        crate::profile::FORMAT
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The format it names.
        found: String,
    },
    /// A wasmprof profile of a newer major version of the format.
    #[error(
        "{} was written by a newer wasmprof (format {found}); this version reads format \
         wasmprof/{}: read it with the wasmprof that wrote it, or a newer one",
        path.display(),
        crate::profile::FORMAT_MAJOR
    )]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// The format it names.
        found: String,
    },
    /// A profile file breaks one of the model's invariants (see
    /// [`crate::validate`]).
    #[error("{} is inconsistent: {what}", path.display())]
    InconsistentFile {
        /// The file.
        path: PathBuf,
        /// The invariant broken, and where.
        what: String,
    },
    /// A profile in memory breaks one of the model's invariants (see
    /// [`crate::validate`]): made by hand, or changed after it was read.
    #[error("the profile is inconsistent: {what}")]
    Inconsistent {
        /// The invariant broken, and where.
        what: String,
    },
    /// The bytes are not a WebAssembly module or component.
    #[error("not a valid WebAssembly module")]
    InvalidWasm {
        /// What the parser found.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The module has no code section.
    #[error("the module has no code section")]
    NoCode,
    /// No report format has this name.
    #[error(
        "no report format is called {name:?}: one of {}",
        Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    )]
    UnknownFormatName {
        /// The name asked for.
        name: String,
    },
    /// A render option that the format asked for does not take.
    #[error("{option} is not available in the {} format: {}", format.name(), option.available_in())]
    OptionNotAvailable {
        /// The option.
        option: RenderOption,
        /// The format asked for.
        format: Format,
    },
    /// The report needs memory figures, and a profile has none.
    #[error("{} has no memory figures (it was recorded without them)", which.noun())]
    NoMemory {
        /// Which profile.
        which: Which,
    },
    /// The report needs times, and the profile has call counts only.
    #[error("{needs} needs times, and the profile has call counts only")]
    NoTimes {
        /// What needs them ("a .cpuprofile", "a slowdown check").
        needs: &'static str,
    },
    /// A flame chart needs samples in time order, which an instrumented
    /// profile does not have.
    #[error(
        "a flame chart needs samples in time order, which only an engine's sampling profile \
         (a .cpuprofile or a Self-Profiling trace) has; an instrumented profile has no order \
         in time (its flame graph is exact)"
    )]
    NoTimeline,
    /// Two profiles measured in different ways cannot be compared.
    #[error(
        "the profiles are not of one kind: the base's timer is {base} and the new one's \
         {new}; compare a profile with one measured the same way"
    )]
    NotComparable {
        /// How the base was measured.
        base: String,
        /// How the new profile was measured.
        new: String,
    },
    /// A function asked for by name is not in a profile.
    #[error("no function named {name} in {}", which.noun())]
    NoSuchFunction {
        /// The name asked for.
        name: String,
        /// Where it was looked for.
        which: Which,
    },
    /// A thread asked for is not in the profile.
    #[error("no thread {asked}: {}", thread_list(threads))]
    NoSuchThread {
        /// The name or number asked for.
        asked: String,
        /// The names of the profile's threads (empty when the program
        /// started none beside its main thread).
        threads: Vec<String>,
    },
}

/// A [`crate::RenderOptions`] field that only some formats take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderOption {
    /// [`crate::RenderOptions::icicle`].
    Icicle,
    /// [`crate::RenderOptions::weight`].
    Weight,
    /// [`crate::RenderOptions::base`]: a comparison in one output.
    Base,
}

impl RenderOption {
    fn available_in(self) -> &'static str {
        match self {
            RenderOption::Icicle => "it is for flame graphs",
            RenderOption::Weight => {
                "it is for flame graphs and folded stacks of one profile; gprof and html show \
                 every memory figure, pprof carries them as sample types"
            }
            RenderOption::Base => {
                "it is for the gprof table and flame graphs; the other formats write one \
                 profile each"
            }
        }
    }
}

impl std::fmt::Display for RenderOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RenderOption::Icicle => "an icicle layout",
            RenderOption::Weight => "a memory weight",
            RenderOption::Base => "a comparison with a base profile",
        })
    }
}

/// Which of the profiles an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Which {
    /// The one profile given.
    This,
    /// The base of a comparison.
    Base,
    /// The new side of a comparison.
    New,
    /// Both sides of a comparison.
    Either,
}

impl Which {
    fn noun(self) -> &'static str {
        match self {
            Which::This => "this profile",
            Which::Base => "the base profile",
            Which::New => "the new profile",
            Which::Either => "either profile",
        }
    }
}

fn thread_list(threads: &[String]) -> String {
    if threads.is_empty() {
        return "this profile has one thread (the program started no other)".to_owned();
    }
    format!(
        "this profile has {} (or their numbers, 0 to {})",
        threads.join(", "),
        threads.len() - 1
    )
}

/// `error` and its causes, as one line: what the library's own warnings
/// print, where no caller is there to print the chain.
pub(crate) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(error) = cause {
        text.push_str(": ");
        text.push_str(&error.to_string());
        cause = error.source();
    }
    text
}

/// The library's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A write of `what` to a report's output failed.
    pub(crate) fn output<E: Into<std::io::Error>>(what: &'static str) -> impl FnOnce(E) -> Error {
        move |source| Error::Output {
            what,
            source: source.into(),
        }
    }

    /// The parser's error for a module or component.
    pub(crate) fn invalid_wasm(source: wasmparser::BinaryReaderError) -> Error {
        Error::InvalidWasm {
            source: Box::new(source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_message_names_a_flag_or_a_command() {
        let errors = [
            Error::OptionNotAvailable {
                option: RenderOption::Icicle,
                format: Format::Gprof,
            }
            .to_string(),
            Error::NoMemory { which: Which::Base }.to_string(),
            Error::NoTimes {
                needs: "a .cpuprofile",
            }
            .to_string(),
            Error::NoTimeline.to_string(),
            Error::NoSuchThread {
                asked: "7".into(),
                threads: vec!["main".into(), "worker 1".into()],
            }
            .to_string(),
        ];
        for message in errors {
            assert!(!message.contains("--"), "{message}");
            assert!(!message.contains("cargo wasmprof"), "{message}");
        }
    }

    #[test]
    fn a_thread_not_found_lists_the_threads_there_are() {
        let none = Error::NoSuchThread {
            asked: "1".into(),
            threads: Vec::new(),
        };
        assert_eq!(
            none.to_string(),
            "no thread 1: this profile has one thread (the program started no other)"
        );
        let some = Error::NoSuchThread {
            asked: "x".into(),
            threads: vec!["main".into(), "worker 1".into()],
        };
        assert_eq!(
            some.to_string(),
            "no thread x: this profile has main, worker 1 (or their numbers, 0 to 1)"
        );
    }

    #[test]
    fn a_cause_is_a_source_and_not_repeated_in_the_message() {
        let error = Error::Read {
            path: "p.json".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(error.to_string(), "cannot read p.json");
        assert!(std::error::Error::source(&error).is_some());
    }
}
