//! The sampling profiles engines already write, read into the same
//! [`Profile`] as an instrumented run so that every report works on them:
//! Chrome DevTools and Node `.cpuprofile` files (and the DevTools
//! protocol's bare `Profiler.stop` result), and JS Self-Profiling API
//! traces. Their times come from samples and they have no call counts
//! ([`crate::profile::TimerMode::Sampled`]).
//!
//! The files are untrusted: a record that names nothing, a cycle of
//! parents, a delta that is not a number is counted and left out, and the
//! counts are reported; a file of the wrong shape is an error naming it.

mod counted;
pub mod coverage;
mod cpuprofile;
pub mod hybrid;
mod matching;
mod trace;
pub mod tree;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::profile::{self, Profile};

/// What a profile file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A wasmprof profile, from `cargo wasmprof run`.
    Wasmprof,
    /// A `.cpuprofile` (or `Profiler.stop`'s result).
    CpuProfile,
    /// A JS Self-Profiling API trace.
    SelfProfilingTrace,
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputKind::Wasmprof => "a wasmprof profile",
            InputKind::CpuProfile => "a .cpuprofile",
            InputKind::SelfProfilingTrace => "a JS Self-Profiling trace",
        })
    }
}

/// How sampled inputs are read.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Leave the engine's idle time out.
    pub hide_idle: bool,
    /// Names for `wasm-function[N]` frames, from the module's name section
    /// (`--module FILE.wasm`).
    pub module_names: Option<std::collections::HashMap<u32, String>>,
}

impl Options {
    /// Reads the name section of `module` for `wasm-function[N]` frames.
    pub fn with_module(mut self, module: &Path) -> Result<Options> {
        let bytes = std::fs::read(module)
            .with_context(|| format!("--module {}: cannot read it", module.display()))?;
        let names = crate::build::wasm_info::function_names(&bytes)
            .with_context(|| format!("--module {}", module.display()))?;
        if names.is_empty() {
            crate::terminal::warning(&format!(
                "--module {} has no function names (no name section): wasm-function[N] frames stay as they are",
                module.display()
            ));
        }
        self.module_names = Some(names);
        Ok(self)
    }
}

/// Bad records, counted by what was wrong with them.
#[derive(Debug, Default)]
pub struct Problems(BTreeMap<&'static str, usize>);

impl Problems {
    pub fn add(&mut self, what: &'static str, count: usize) {
        if count > 0 {
            *self.0.entry(what).or_default() += count;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `3 samples that name no node (left out), 1 …`
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(what, count)| format!("{count} {what}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One input file, read and converted.
pub struct Input {
    pub kind: InputKind,
    pub profile: Profile,
    pub problems: Problems,
    /// A sampling profile's samples in time order (empty for a wasmprof
    /// profile, which has no order in time).
    pub timeline: Vec<tree::Span>,
}

/// Puts `samples`, the engine's samples of the run `profile` measured, on
/// it: without a clock they give the times (a hybrid profile); with one,
/// the time of the calls too short to time.
pub fn apply_to_run(profile: &mut Profile, samples: &Input) {
    profile.timer.sample_interval_nanos = samples.profile.timer.sample_interval_nanos;
    match profile.timer.mode {
        profile::TimerMode::None => hybrid::attribute(profile, &samples.profile),
        profile::TimerMode::Host => {
            coverage::cover_untimed(profile, &samples.profile, &samples.timeline)
        }
        profile::TimerMode::Sampled | profile::TimerMode::Hybrid => {}
    }
}

/// Reads a wasmprof profile, a `.cpuprofile` or a Self-Profiling trace,
/// telling them apart by their content.
pub fn read_input(path: &Path, options: &Options) -> Result<Input> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read profile {}", path.display()))?;
    let kind = detect(&bytes, path)?;
    let source = path.display().to_string();
    let mut problems = Problems::default();
    let (profile, timeline) = match kind {
        InputKind::Wasmprof => (profile::parse_profile(&bytes, path)?, Vec::new()),
        InputKind::CpuProfile => {
            let parsed = parse_cpuprofile(&bytes)
                .with_context(|| format!("{} is not a readable .cpuprofile", path.display()))?;
            // The text is no longer needed: a large profile should not be
            // held twice while it is converted.
            drop(bytes);
            cpuprofile::convert(&parsed, &source, options, &mut problems)
        }
        InputKind::SelfProfilingTrace => {
            let parsed: trace::Trace = serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{} is not a readable JS Self-Profiling trace ({{resources, frames, stacks, samples}})",
                    path.display()
                )
            })?;
            drop(bytes);
            trace::convert(&parsed, &source, options, &mut problems)
        }
    };
    profile::validate(&profile).map_err(|what| {
        anyhow::anyhow!("{} gave an inconsistent profile: {what}", path.display())
    })?;
    Ok(Input {
        kind,
        profile,
        problems,
        timeline,
    })
}

fn parse_cpuprofile(bytes: &[u8]) -> serde_json::Result<cpuprofile::CpuProfile> {
    #[derive(Deserialize)]
    struct Peek {
        profile: Option<IgnoredAny>,
    }
    let wrapped = serde_json::from_slice::<Peek>(bytes)?.profile.is_some();
    if wrapped {
        Ok(serde_json::from_slice::<cpuprofile::Wrapped>(bytes)?.profile)
    } else {
        serde_json::from_slice(bytes)
    }
}

/// Which kind of file `bytes` hold, from their top-level keys.
fn detect(bytes: &[u8], path: &Path) -> Result<InputKind> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Keys {
        format: Option<IgnoredAny>,
        nodes: Option<IgnoredAny>,
        profile: Option<IgnoredAny>,
        frames: Option<IgnoredAny>,
        stacks: Option<IgnoredAny>,
        time_deltas: Option<IgnoredAny>,
        trace_events: Option<IgnoredAny>,
    }
    let keys: Keys = match serde_json::from_slice(bytes) {
        Ok(keys) => keys,
        Err(e) if e.is_eof() => bail!(
            "{} is corrupt or truncated: the JSON ends at line {}, column {}",
            path.display(),
            e.line(),
            e.column()
        ),
        Err(e) => bail!(
            "{} is not a wasmprof profile, a .cpuprofile nor a Self-Profiling trace: it is \
             not a JSON object ({e})",
            path.display()
        ),
    };
    Ok(match keys {
        Keys {
            format: Some(_), ..
        } => InputKind::Wasmprof,
        Keys {
            profile: Some(_), ..
        } => InputKind::CpuProfile,
        Keys {
            frames: Some(_), ..
        }
        | Keys {
            stacks: Some(_), ..
        } => InputKind::SelfProfilingTrace,
        Keys { nodes: Some(_), .. }
        | Keys {
            time_deltas: Some(_),
            ..
        } => InputKind::CpuProfile,
        _ => bail!(
            "{} is a kind of file wasmprof does not read: neither a wasmprof profile, a \
             Chrome/Node .cpuprofile ({{nodes, samples, timeDeltas}}) nor a JS Self-Profiling \
             trace ({{frames, stacks, samples}}){}",
            path.display(),
            if keys.trace_events.is_some() {
                "; this looks like a Chrome trace (traceEvents): save a .cpuprofile from \
                 DevTools' JavaScript Profiler or `node --cpu-prof` instead"
            } else {
                ""
            }
        ),
    })
}

#[cfg(test)]
mod tests;
