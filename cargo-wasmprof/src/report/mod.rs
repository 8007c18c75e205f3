//! Renders a [`Profile`] in the formats people know:
//! GNU gprof's text, pprof's protobuf, JSON for scripts, and a short summary.
//!
//! Every writer starts from the same exact numbers: [`CallGraph`] sums the
//! calling-context tree per function and per caller→callee arc without
//! apportioning anything, so the formats never disagree.

pub mod callgraph;
pub mod command;
pub mod cpuprofile_out;
mod cycles;
pub mod diff;
pub mod flamechart;
pub mod flamegraph;
pub mod folded;
pub mod futures;
pub mod gprof;
pub mod html;
pub mod json;
mod node_times;
pub mod pprof;
mod preamble;
pub mod speedscope;
pub mod stacks;
pub mod summary;
pub mod time_kind;
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
    /// Folded stacks (`main;parse;lex 1234`): self time in nanoseconds (calls without times) per call path.
    Folded,
    /// An interactive SVG flame graph (hover, click to zoom, search).
    Flamegraph,
    /// A sampling profile's samples in time order, as an SVG flame chart (one --input of an engine).
    Flamechart,
    /// A Chrome DevTools `.cpuprofile` (DevTools' Performance panel, Firefox Profiler, speedscope).
    Cpuprofile,
    /// speedscope's JSON format (speedscope, Firefox Profiler): the exact tree as events.
    Speedscope,
    /// One self-contained page: summary, sortable flat profile, call graph, flame graph.
    Html,
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
            Format::Folded => "folded",
            Format::Flamegraph | Format::Flamechart => "svg",
            Format::Cpuprofile => "cpuprofile",
            Format::Speedscope => "speedscope.json",
            Format::Html => "html",
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
        Format::Folded => folded::write_folded(profile, out),
        Format::Flamegraph => {
            flamegraph::write_flamegraph(profile, &flamegraph::FlameOptions::default(), out)
        }
        Format::Flamechart => flamechart::write_flamechart(profile, &[], out),
        Format::Cpuprofile => cpuprofile_out::write_cpuprofile(profile, out),
        Format::Speedscope => speedscope::write_speedscope(profile, out),
        Format::Html => html::write_html(profile, out),
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
        assert_eq!(
            names,
            [
                "gprof",
                "pprof",
                "json",
                "folded",
                "flamegraph",
                "flamechart",
                "cpuprofile",
                "speedscope",
                "html"
            ]
        );
    }

    #[test]
    fn an_empty_profile_renders_in_every_format() {
        let profile = crate::testing::ProfileBuilder::untimed().build();
        for &format in Format::value_variants() {
            let mut bytes = Vec::new();
            let rendered = render(&profile, format, &mut bytes);
            // A .cpuprofile is made of time, which a count-only profile lacks.
            assert_eq!(
                rendered.is_err(),
                matches!(format, Format::Cpuprofile | Format::Flamechart),
                "{format:?}"
            );
        }
        let summary = render_summary(&profile, DEFAULT_SUMMARY_TOP);
        assert!(summary.contains("top 0 of 0 functions"), "{summary}");
    }

    #[test]
    fn an_inconsistent_profile_is_an_error_not_a_panic() {
        let mut profile = crate::testing::appendix_b(true);
        profile.nodes[3].function = Some(99);
        for &format in Format::value_variants() {
            let err = render(&profile, format, &mut Vec::new()).unwrap_err();
            assert!(err.to_string().contains("function 99"), "{err}");
        }
        assert!(write_summary(&profile, 10, &mut Vec::new()).is_err());
    }

    #[test]
    fn every_format_renders() {
        let profile = crate::testing::appendix_b(true);
        for &format in Format::value_variants() {
            let mut bytes = Vec::new();
            let rendered = render(&profile, format, &mut bytes);
            // A flame chart needs an engine's samples in time order.
            if format == Format::Flamechart {
                assert!(rendered.is_err());
                continue;
            }
            rendered.unwrap();
            assert!(!bytes.is_empty(), "{format:?}");
        }
    }
}

/// Every text format of one profile held against a file, so that none
/// drifts unnoticed (`WASMPROF_BLESS=1` rewrites them).
#[cfg(test)]
mod golden {
    use super::*;
    use crate::testing::{appendix_b, assert_golden};

    fn rendered(format: Format) -> String {
        let mut bytes = Vec::new();
        render(&appendix_b(true), format, &mut bytes).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn text_formats_match_their_golden_files() {
        assert_golden("appendix_b.flamegraph.svg", &rendered(Format::Flamegraph));
        assert_golden("appendix_b.speedscope.json", &rendered(Format::Speedscope));
        assert_golden("appendix_b.html", &rendered(Format::Html));
    }

    #[test]
    fn the_comparison_table_matches_its_golden_file() {
        let base = appendix_b(true);
        // f_quarter's own time half as long again, in each of its callers.
        let mut slower = appendix_b(true);
        for node in 0..slower.nodes.len() {
            let function = slower.nodes[node].function;
            if function.is_some_and(|f| slower.functions[f].name == "f_quarter") {
                let delta = slower.nodes[node].inclusive_nanos * 0.5;
                let mut at = Some(node);
                while let Some(n) = at.filter(|&n| n != 0) {
                    slower.nodes[n].inclusive_nanos += delta;
                    at = slower.nodes[n].parent;
                }
            }
        }
        let compared = diff::diff(&base, &slower).unwrap();
        assert_golden("appendix_b.diff.txt", &diff::render_diff(&compared, None));
    }
}
