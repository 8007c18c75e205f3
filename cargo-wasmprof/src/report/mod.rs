//! Renders a [`Profile`](crate::profile::Profile) in the formats people know:
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
mod testing;
mod units;

use std::io::Write;

use anyhow::Context;

pub use callgraph::CallGraph;
pub use gprof::GprofWriter;
pub use json::write_json;
pub use pprof::write_pprof;
pub use summary::{render_summary, write_summary, DEFAULT_SUMMARY_TOP};

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

/// Writes `profile` to `out` in `format`. `profile` must be valid, as
/// [`crate::profile::read_profile`] returns it; write errors are returned.
pub fn render(profile: &Profile, format: Format, out: &mut dyn Write) -> anyhow::Result<()> {
    match format {
        Format::Gprof => GprofWriter::new(profile)
            .write(out)
            .context("cannot write the gprof report"),
        Format::Pprof => write_pprof(profile, out),
        Format::Json => write_json(profile, out),
    }
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
    fn every_format_renders() {
        let profile = testing::appendix_b(true);
        for &format in Format::value_variants() {
            let mut bytes = Vec::new();
            render(&profile, format, &mut bytes).unwrap();
            assert!(!bytes.is_empty(), "{format:?}");
        }
    }
}
