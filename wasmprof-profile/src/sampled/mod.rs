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
pub(crate) mod coverage;
pub(crate) mod cpuprofile;
pub mod gecko;
pub(crate) mod hybrid;
mod matching;
pub mod processed;
pub use matching::is_runtime;
pub use tree::Span;
pub mod threads;
pub(crate) mod trace;
pub(crate) mod tree;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::profile::{self, Profile};

/// How sampled inputs are read.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// Leave the engine's idle time out.
    pub hide_idle: bool,
    /// Names for `wasm-function[N]` frames, from the module's name section
    /// (`--module FILE.wasm`).
    pub module_names: Option<std::collections::HashMap<u32, String>>,
}

impl Options {
    /// Reads the name section of `module` for `wasm-function[N]` frames. A
    /// module without one gives no names, which the caller may point out.
    pub fn with_module(mut self, module: &Path) -> Result<Options> {
        let bytes = std::fs::read(module).map_err(|source| Error::Read {
            path: module.to_owned(),
            source,
        })?;
        let names = crate::wasm_info::function_names(&bytes)?;
        self.module_names = Some(names);
        Ok(self)
    }
}

/// Bad records, counted by what was wrong with them.
#[derive(Debug, Default)]
pub struct Problems(BTreeMap<&'static str, usize>);

impl Problems {
    /// Counts `count` records left out for `what` was wrong with them.
    pub fn add(&mut self, what: &'static str, count: usize) {
        if count > 0 {
            *self.0.entry(what).or_default() += count;
        }
    }

    /// Nothing was left out.
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

/// Puts `samples`, the engine's samples of the run `profile` measured, on
/// it: without a clock they give the times (a hybrid profile); with one,
/// the time of the calls too short to time.
pub fn apply_to_run(profile: &mut Profile, samples: &Profile, timeline: &[tree::Span]) {
    profile.timer.sample_interval_nanos = samples.timer.sample_interval_nanos;
    match profile.timer.mode {
        profile::TimerMode::None => hybrid::attribute(profile, samples),
        profile::TimerMode::Host => coverage::cover_untimed(profile, samples, timeline),
        profile::TimerMode::Sampled | profile::TimerMode::Hybrid => {}
    }
}

/// A `.cpuprofile` as Node writes it, or wrapped as `Profiler.stop` returns
/// it (`{"profile": …}`).
pub(crate) fn parse_cpuprofile(bytes: &[u8]) -> serde_json::Result<cpuprofile::CpuProfile> {
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

#[cfg(test)]
mod tests;
