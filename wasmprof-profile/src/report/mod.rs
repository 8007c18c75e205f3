//! Renders a [`Profile`] in the formats people know:
//! GNU gprof's text, pprof's protobuf, JSON for scripts, and a short summary.
//!
//! Every writer starts from the same exact numbers: [`CallGraph`] sums the
//! calling-context tree per function and per caller→callee arc without
//! apportioning anything, so the formats never disagree.

pub(crate) mod animation_frames;
pub(crate) mod callgraph;
pub(crate) mod cpuprofile_out;
mod cycles;
pub mod diff;
pub(crate) mod firefox;
pub(crate) mod flamechart;
pub(crate) mod flamegraph;
pub(crate) mod folded;
pub(crate) mod format;
pub(crate) mod futures;
pub(crate) mod gprof;
pub(crate) mod html;
pub(crate) mod json;
mod memory_diff;
pub(crate) mod memory_graph;
mod node_times;
pub mod pprof;
mod preamble;
pub(crate) mod speedscope;
pub(crate) mod stacks;
pub(crate) mod summary;
pub(crate) mod time_kind;
mod units;
mod words;

use std::io::Write;

use crate::error::{Error, RenderOption, Which};

pub use callgraph::CallGraph;
pub use format::Format;
pub use gprof::GprofWriter;
pub use json::write_json;
pub use pprof::write_pprof;
pub use summary::{render_summary, write_summary};

// The wording helpers the command's own messages share with the reports,
// so that a terminal line and a report say "1.2 ms" alike. Not API.
#[doc(hidden)]
pub use memory_graph::human_bytes;
#[doc(hidden)]
pub use summary::DEFAULT_SUMMARY_TOP;
#[doc(hidden)]
pub use units::human_duration;
#[doc(hidden)]
pub use words::plural;

use crate::profile::Profile;

impl std::str::FromStr for Format {
    type Err = Error;

    fn from_str(name: &str) -> crate::Result<Format> {
        Format::ALL
            .into_iter()
            .find(|format| format.name() == name)
            .ok_or_else(|| Error::UnknownFormatName {
                name: name.to_owned(),
            })
    }
}

/// How to render a profile: everything a format may need besides the
/// profile, as plain data that the command line fills in (the layout of
/// inferno's `Options`). Made with [`RenderOptions::format`] or
/// `Default`, then its fields set: it grows with the formats.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct RenderOptions<'a> {
    /// The format to write.
    pub format: Format,
    /// Flame graphs grow downwards, from the root at the top.
    pub icicle: bool,
    /// A sampling profile's samples in time order: what a flame chart
    /// draws.
    pub timeline: &'a [crate::sampled::Span],
    /// `--diff`: the profile to compare with. The table becomes the
    /// comparison, the flame graph the change along each path.
    pub base: Option<&'a Profile>,
    /// `--weight`: flame graphs and folded stacks by a memory figure.
    pub weight: Option<crate::profile::MemoryWeight>,
    /// The engine's samples of the same run (the `.cpuprofile` saved
    /// beside an instrumented profile), read, with their timeline: the
    /// Firefox Profiler format shows them as a track in time.
    pub run_samples: Option<(&'a Profile, &'a [crate::sampled::Span])>,
}

impl RenderOptions<'_> {
    /// `format` with nothing else.
    pub fn format(format: Format) -> RenderOptions<'static> {
        RenderOptions {
            format,
            ..RenderOptions::default()
        }
    }
}

/// `report --explain`: the run line, the warnings, and what the marks and
/// the run's mode mean for this profile, at length.
pub fn write_explanation(profile: &Profile, out: &mut dyn Write) -> crate::Result<()> {
    ensure_valid(profile)?;
    let mut text = preamble::run_line(profile);
    text.push('\n');
    let notes = preamble::notes(profile);
    if notes.is_empty() {
        text.push_str(if profile.timer.mode.timed() {
            "Nothing to explain: every call was counted, and every time measured by the clock.\n"
        } else {
            "Nothing to explain: every call was counted, and no time measured (--timer none).\n"
        });
    }
    for note in notes {
        text.push_str(&note);
        text.push('\n');
    }
    out.write_all(text.as_bytes())
        .map_err(Error::output("explanation"))
}

/// Writes `profile` to `out` as `options` say: every format, flame graphs
/// and comparisons included, goes through here. An inconsistent profile
/// (see [`crate::profile::validate`]), a comparison the format cannot
/// show, and write errors are returned as errors.
pub fn render(
    profile: &Profile,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> crate::Result<()> {
    ensure_valid(profile)?;
    if options.icicle && options.format != Format::Flamegraph {
        return Err(Error::OptionNotAvailable {
            option: RenderOption::Icicle,
            format: options.format,
        });
    }
    if options.weight.is_some() {
        if !matches!(options.format, Format::Flamegraph | Format::Folded) || options.base.is_some()
        {
            return Err(Error::OptionNotAvailable {
                option: RenderOption::Weight,
                format: options.format,
            });
        }
        if profile.memory.is_none() {
            return Err(Error::NoMemory { which: Which::This });
        }
    }
    if let Some(base) = options.base {
        ensure_valid(base)?;
        return render_comparison(base, profile, options, out);
    }
    match options.format {
        Format::Gprof => GprofWriter::new(profile)
            .write(out)
            .map_err(Error::output("gprof report")),
        Format::Pprof => write_pprof(profile, out),
        Format::Json => write_json(profile, out),
        Format::Folded => folded::write_folded(profile, options.weight, out),
        Format::Flamegraph => {
            let flame = flamegraph::FlameOptions {
                icicle: options.icicle,
                weight: options.weight,
                ..Default::default()
            };
            flamegraph::write_flamegraph(profile, &flame, out)
        }
        Format::Flamechart => flamechart::write_flamechart(profile, options.timeline, out),
        Format::Cpuprofile => cpuprofile_out::write_cpuprofile(profile, out),
        Format::Speedscope => speedscope::write_speedscope(profile, out),
        Format::Html => html::write_html(profile, out),
        Format::Firefox => {
            firefox::write_firefox(profile, options.timeline, options.run_samples, out)
        }
    }
}

/// `profile` against `base`: the comparison table, or a flame graph of
/// the change along each path.
fn render_comparison(
    base: &Profile,
    profile: &Profile,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> crate::Result<()> {
    let compared = diff::diff(base, profile)?;
    match options.format {
        Format::Gprof => {
            let mut text = diff::render_diff(&compared, None);
            text.push_str(&memory_diff::render(base, profile, 20).unwrap_or_default());
            out.write_all(text.as_bytes())
                .map_err(Error::output("comparison"))
        }
        Format::Flamegraph => {
            let flame = flamegraph::FlameOptions {
                icicle: options.icicle,
                diff: Some(diff::path_changes(base, profile)),
                title: Some(format!(
                    "{}: change against the base (red slower, blue faster, purple new)",
                    profile.run.package.as_deref().unwrap_or("profile")
                )),
                weight: None,
            };
            flamegraph::write_flamegraph(profile, &flame, out)
        }
        format => Err(Error::OptionNotAvailable {
            option: RenderOption::Base,
            format,
        }),
    }
}

/// Refuses a profile whose indices a writer would trust blindly: the public
/// writers return this error rather than panic on a hand-made profile.
pub(crate) fn ensure_valid(profile: &Profile) -> crate::Result<()> {
    crate::profile::validate(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--diff` goes through the one `render`: a table, or a flame graph of
    /// the changes; the other formats say how to compare instead.
    #[test]
    fn a_comparison_renders_as_a_table_or_a_flame_graph_and_nothing_else() {
        let base = crate::fixtures::appendix_b(true);
        let new = crate::fixtures::appendix_b(true);
        let compare = |format| {
            let options = RenderOptions {
                format,
                base: Some(&base),
                ..RenderOptions::default()
            };
            let mut out = Vec::new();
            render(&new, &options, &mut out).map(|()| String::from_utf8_lossy(&out).into_owned())
        };
        let table = compare(Format::Gprof).unwrap();
        assert!(table.starts_with("total: "), "{table}");
        assert!(table.contains("0 of "), "{table}");
        let flame = compare(Format::Flamegraph).unwrap();
        assert!(flame.contains("change against the base"), "{flame}");
        let pprof = compare(Format::Pprof).unwrap_err();
        assert!(
            matches!(
                pprof,
                Error::OptionNotAvailable {
                    option: RenderOption::Base,
                    format: Format::Pprof
                }
            ),
            "{pprof}"
        );
        let json = compare(Format::Json).unwrap_err().to_string();
        assert!(
            json.contains("a comparison with a base profile is not available in the json format"),
            "{json}"
        );
        let icicle = RenderOptions {
            icicle: true,
            ..RenderOptions::format(Format::Gprof)
        };
        let err = render(&new, &icicle, &mut Vec::new()).unwrap_err();
        assert!(
            err.to_string()
                .contains("an icicle layout is not available in the gprof format")
        );
    }

    #[test]
    fn formats_have_the_names_of_the_command_line() {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>().unwrap(), format);
        }
        assert!("svg".parse::<Format>().is_err());
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
                "html",
                "firefox"
            ]
        );
    }

    #[test]
    fn an_empty_profile_renders_in_every_format() {
        let profile = crate::fixtures::ProfileBuilder::untimed().build();
        for format in Format::ALL {
            let mut bytes = Vec::new();
            let rendered = render(&profile, &RenderOptions::format(format), &mut bytes);
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
        let mut profile = crate::fixtures::appendix_b(true);
        profile.nodes[3].function = Some(99);
        for format in Format::ALL {
            let err =
                render(&profile, &RenderOptions::format(format), &mut Vec::new()).unwrap_err();
            assert!(err.to_string().contains("function 99"), "{err}");
        }
        assert!(write_summary(&profile, 10, &mut Vec::new()).is_err());
    }

    #[test]
    fn every_format_renders() {
        let profile = crate::fixtures::appendix_b(true);
        for format in Format::ALL {
            let mut bytes = Vec::new();
            let rendered = render(&profile, &RenderOptions::format(format), &mut bytes);
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
    use crate::fixtures::{appendix_b, assert_golden};

    fn rendered(format: Format) -> String {
        let mut bytes = Vec::new();
        render(
            &appendix_b(true),
            &RenderOptions::format(format),
            &mut bytes,
        )
        .unwrap();
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
