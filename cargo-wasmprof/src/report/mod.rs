//! Renders a [`Profile`] in the formats people know:
//! GNU gprof's text, pprof's protobuf, JSON for scripts, and a short summary.
//!
//! Every writer starts from the same exact numbers: [`CallGraph`] sums the
//! calling-context tree per function and per caller→callee arc without
//! apportioning anything, so the formats never disagree.

pub mod callgraph;
mod cycles;
pub mod gprof;
pub mod json;
mod node_times;
mod notes;
pub mod pprof;
pub mod summary;
#[cfg(test)]
pub(crate) mod testing;
mod units;

use std::io::Write;

use anyhow::Context;

pub use callgraph::CallGraph;
pub use gprof::GprofWriter;
pub use json::write_json;
pub use pprof::write_pprof;
pub use summary::{render_summary, write_summary, DEFAULT_SUMMARY_TOP};
pub use units::human_duration;

use crate::profile::Profile;

/// The report formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// GNU gprof's flat profile and call graph (`gprof -b` layout), as text.
    #[default]
    Gprof,
    /// pprof's gzipped protobuf, for `go tool pprof` and compatible tools.
    Pprof,
    /// The function table, the arcs and the raw profile, as JSON.
    Json,
}

impl Format {
    /// Whether the output is binary, and so should not go to a terminal.
    pub fn is_binary(self) -> bool {
        matches!(self, Format::Pprof)
    }

    /// The usual file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Gprof => "txt",
            Format::Pprof => "pb.gz",
            Format::Json => "json",
        }
    }
}

/// Writes `profile` to `out` in `format`. An inconsistent profile (see
/// [`crate::profile::validate`]) and write errors are returned as errors.
pub fn render(profile: &Profile, format: Format, out: &mut dyn Write) -> anyhow::Result<()> {
    ensure_valid(profile)?;
    match format {
        Format::Gprof => GprofWriter::new(profile)
            .write(out)
            .context("cannot write the gprof report"),
        Format::Pprof => write_pprof(profile, out),
        Format::Json => write_json(profile, out),
    }
}

/// Refuses a profile whose indices a writer would trust blindly: the public
/// writers return this error rather than panic on a hand-made profile.
pub(crate) fn ensure_valid(profile: &Profile) -> anyhow::Result<()> {
    crate::profile::validate(profile)
        .map_err(|what| anyhow::anyhow!("cannot report on an inconsistent profile: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn formats_have_the_names_of_the_command_line() {
        let names: Vec<String> = Format::value_variants()
            .iter()
            .map(|f| f.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        assert_eq!(names, ["gprof", "pprof", "json"]);
    }

    #[test]
    fn an_empty_profile_renders_in_every_format() {
        let profile = testing::ProfileBuilder::untimed().build();
        for &format in Format::value_variants() {
            let mut bytes = Vec::new();
            render(&profile, format, &mut bytes).unwrap();
        }
        let summary = render_summary(&profile, DEFAULT_SUMMARY_TOP);
        assert!(summary.contains("top 0 of 0 functions"), "{summary}");
    }

    #[test]
    fn an_inconsistent_profile_is_an_error_not_a_panic() {
        let mut profile = testing::appendix_b(true);
        profile.nodes[3].function = Some(99);
        for &format in Format::value_variants() {
            let err = render(&profile, format, &mut Vec::new()).unwrap_err();
            assert!(err.to_string().contains("function 99"), "{err}");
        }
        assert!(write_summary(&profile, 10, &mut Vec::new()).is_err());
    }

    #[test]
    fn every_format_renders() {
        let profile = testing::appendix_b(true);
        for &format in Format::value_variants() {
            let mut bytes = Vec::new();
            render(&profile, format, &mut bytes).unwrap();
            assert!(!bytes.is_empty(), "{format:?}");
        }
    }
}
