//! Any file `cargo wasmprof report --input` reads: a wasmprof profile, a
//! Chrome DevTools or Node `.cpuprofile`, or a JS Self-Profiling trace,
//! told apart by their content, the sampled ones converted to a profile.

use std::fmt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::profile::{self, Profile};
use crate::sampled;

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

/// One input file, read and converted.
pub struct Input {
    pub kind: InputKind,
    pub profile: Profile,
    pub problems: sampled::Problems,
    /// A sampling profile's samples in time order (empty for a wasmprof
    /// profile, which has no order in time).
    pub timeline: Vec<sampled::tree::Span>,
}

/// Reads a wasmprof profile, a `.cpuprofile` or a Self-Profiling trace,
/// telling them apart by their content.
pub fn read(path: &Path, options: &sampled::Options) -> Result<Input> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read profile {}", path.display()))?;
    let kind = detect(&bytes, path)?;
    let source = path.display().to_string();
    let mut problems = sampled::Problems::default();
    let (profile, timeline) = match kind {
        InputKind::Wasmprof => (profile::parse_profile(&bytes, path)?, Vec::new()),
        InputKind::CpuProfile => {
            let parsed = sampled::parse_cpuprofile(&bytes)
                .with_context(|| format!("{} is not a readable .cpuprofile", path.display()))?;
            // The text is no longer needed: a large profile should not be
            // held twice while it is converted.
            drop(bytes);
            sampled::cpuprofile::convert(&parsed, &source, options, &mut problems)
        }
        InputKind::SelfProfilingTrace => {
            let parsed: sampled::trace::Trace = serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{} is not a readable JS Self-Profiling trace ({{resources, frames, stacks, samples}})",
                    path.display()
                )
            })?;
            drop(bytes);
            sampled::trace::convert(&parsed, &source, options, &mut problems)
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
