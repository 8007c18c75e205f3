//! The report formats and what each is, apart from how they are written:
//! the error type names a format, and every writer returns that error.

/// The report formats, as `cargo wasmprof report --format` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// GNU gprof's flat profile and call graph.
    #[default]
    Gprof,
    /// pprof's gzipped protobuf.
    Pprof,
    /// The function table, the arcs and the raw profile, as JSON.
    Json,
    /// Folded stacks.
    Folded,
    /// An interactive SVG flame graph.
    Flamegraph,
    /// A sampling profile's samples in time order, as an SVG flame chart.
    Flamechart,
    /// A Chrome DevTools `.cpuprofile`.
    Cpuprofile,
    /// speedscope's JSON format.
    Speedscope,
    /// One self-contained HTML page.
    Html,
    /// The Firefox Profiler's processed format.
    Firefox,
}

impl Format {
    /// Every format, in the order a list of them is shown.
    pub const ALL: [Format; 10] = [
        Format::Gprof,
        Format::Pprof,
        Format::Json,
        Format::Folded,
        Format::Flamegraph,
        Format::Flamechart,
        Format::Cpuprofile,
        Format::Speedscope,
        Format::Html,
        Format::Firefox,
    ];

    /// Whether the output is binary, and so should not go to a terminal.
    pub fn is_binary(self) -> bool {
        matches!(self, Format::Pprof)
    }

    /// The format's name (`--format NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Gprof => "gprof",
            Format::Pprof => "pprof",
            Format::Json => "json",
            Format::Folded => "folded",
            Format::Flamegraph => "flamegraph",
            Format::Flamechart => "flamechart",
            Format::Cpuprofile => "cpuprofile",
            Format::Speedscope => "speedscope",
            Format::Html => "html",
            Format::Firefox => "firefox",
        }
    }

    /// One line on what the format is and what reads it.
    pub fn description(self) -> &'static str {
        match self {
            Format::Gprof => "GNU gprof's flat profile and call graph (`gprof -b` layout), as text",
            Format::Pprof => "pprof's gzipped protobuf, for `go tool pprof` and compatible tools",
            Format::Json => "The function table, the arcs and the raw profile, as JSON",
            Format::Folded => {
                "Folded stacks (`main;parse;lex 1234`): self time in nanoseconds (calls without \
                 times) per call path"
            }
            Format::Flamegraph => "An interactive SVG flame graph (hover, click to zoom, search)",
            Format::Flamechart => {
                "A sampling profile's samples in time order, as an SVG flame chart (one --input \
                 of an engine)"
            }
            Format::Cpuprofile => {
                "A Chrome DevTools `.cpuprofile` (DevTools' Performance panel, Firefox Profiler, \
                 speedscope)"
            }
            Format::Speedscope => {
                "speedscope's JSON format (speedscope, Firefox Profiler): the exact tree as events"
            }
            Format::Html => {
                "One self-contained page: summary, sortable flat profile, call graph, flame graph"
            }
            Format::Firefox => {
                "The Firefox Profiler's format (profiler.firefox.com): time and exact calls per \
                 call path as tracks, samples in time order, animation frames as markers"
            }
        }
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
            Format::Firefox => "firefox.json",
        }
    }
}
