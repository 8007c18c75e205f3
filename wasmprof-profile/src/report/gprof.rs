//! The report in GNU gprof's layout (as `gprof -b` prints it: no blurbs).
//!
//! People know how to read gprof's flat profile and call graph, and tools
//! such as gprof2dot parse them, so the columns, widths, sort orders and
//! `n/m`, `n+r`, `<cycle N>` notations are gprof's own (binutils'
//! `hist.c` and `cg_print.c`). What differs, and why:
//!
//! * times are in a unit picked per report (s, ms, us or ns), named in the
//!   headers, because a wasm run of a few milliseconds would print `0.00`
//!   seconds everywhere;
//! * the numbers are exact, not sampled and apportioned (see
//!   [`CallGraph`]), so the headers say so instead of giving a sampling rate;
//! * calls from the host are known, so a function called both from the host
//!   and from functions gets a numbered `<spontaneous>` parent line (gprof
//!   prints that line bare, and we do too when the host is the only caller);
//! * a run header comes first, with warnings when the run did not finish
//!   or the call tree overflowed;
//! * async functions are marked `(async)`, their time is CPU time (inside
//!   their polls), and a last section gives what only futures have: polls,
//!   completions, cancellations, pending futures and latency;
//! * the index by function name falls back to one entry per line when names
//!   are too long for gprof's three 26-character columns, as Rust paths are.

mod animation_frames;
mod flat;
mod futures;
mod graph;
mod index;
mod memory_table;

use std::io::Write;

use super::callgraph::{CallGraph, FunctionId};
use super::preamble;
use super::units::{TimeUnit, human_duration_ascii};
use crate::profile::{Profile, TimerMode};

/// Renders one profile in gprof's layout.
pub struct GprofWriter<'a> {
    profile: &'a Profile,
    graph: CallGraph,
    numbering: Numbering,
    unit: TimeUnit,
}

impl<'a> GprofWriter<'a> {
    /// Prepares the report; `profile` must be valid.
    pub fn new(profile: &'a Profile) -> Self {
        Self::with_graph(profile, CallGraph::build(profile))
    }

    /// Prepares the report from an already derived call graph.
    pub fn with_graph(profile: &'a Profile, graph: CallGraph) -> Self {
        let numbering = Numbering::new(&graph);
        let unit = if graph.timed {
            TimeUnit::for_largest(graph.total_nanos)
        } else {
            TimeUnit::Seconds
        };
        GprofWriter {
            profile,
            graph,
            numbering,
            unit,
        }
    }

    /// The whole report as text.
    pub fn render(&self) -> String {
        let mut text = String::new();
        text.push_str(&preamble::run_line(self.profile));
        text.push('\n');
        for line in preamble::warnings(self.profile)
            .into_iter()
            .chain(preamble::legend(self.profile))
        {
            text.push_str(&line);
            text.push('\n');
        }
        text.push('\n');
        flat::write(self, &mut text);
        text.push_str("\x0c\n");
        graph::write(self, &mut text);
        text.push_str("\x0c\n");
        index::write(self, &mut text);
        futures::write(self, &mut text);
        memory_table::write(self, &mut text);
        animation_frames::write(self, &mut text);
        text
    }

    /// Writes the report to `out`.
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(self.render().as_bytes())
    }

    /// How the times were measured, for the section headers.
    fn timing_sentence(&self) -> String {
        if !self.graph.timed {
            return "no time was measured (--timer none)".into();
        }
        let interval = self
            .profile
            .timer
            .sample_interval_nanos
            .map(|i| format!(" about {} apart", human_duration_ascii(i)))
            .unwrap_or_default();
        let unit = self.unit.name();
        match self.profile.timer.mode {
            TimerMode::Hybrid => format!(
                "timed by the engine's samples{interval} of the same run, each attributed to \
                 the call path its stack leads to (counts exact, times sampled); times in {unit}"
            ),
            TimerMode::Sampled => format!(
                "times come from the engine's samples{interval}, each standing for the time \
                 until the next (the last, for the mean interval, or less where the profile \
                 ends sooner), as Chrome DevTools counts them; times in {unit}"
            ),
            TimerMode::Host | TimerMode::None => {
                let resolution = self
                    .profile
                    .timer
                    .resolution_nanos
                    .map(|r| format!(" (resolution {})", human_duration_ascii(r)))
                    .unwrap_or_default();
                format!("timed by the host clock{resolution}; times in {unit}")
            }
        }
    }

    /// A time in the report's unit.
    fn time(&self, nanos: f64) -> f64 {
        self.unit.value_of(nanos)
    }

    /// Share of the whole measured time, in percent; 0 when nothing was
    /// timed, as gprof prints it.
    fn percent(&self, nanos: f64) -> f64 {
        if self.graph.total_nanos > 0.0 {
            100.0 * nanos / self.graph.total_nanos
        } else {
            0.0
        }
    }

    /// `name <cycle N> [index]`, as gprof's call graph and index show a
    /// function.
    fn tagged_name(&self, function: FunctionId) -> String {
        let stats = &self.graph.functions[function];
        let mut name = stats.marked_name(self.profile.timer.mode);
        if let Some(cycle) = self.graph.cycle_of(function) {
            name.push_str(&format!(" <cycle {}>", cycle.number));
        }
        if let Some(index) = self.numbering.function[function] {
            name.push_str(&format!(" [{index}]"));
        }
        name
    }
}

/// gprof's `[index]` numbers: entries (functions and whole cycles) in order
/// of decreasing total time; among equals cycles first, then more calls
/// first, then by name.
struct Numbering {
    /// Entries in index order.
    entries: Vec<Entry>,
    /// Index of every function that has an entry.
    function: Vec<Option<usize>>,
    /// Index of every cycle, by position in `CallGraph::cycles`.
    cycle: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Function(FunctionId),
    Cycle(usize),
}

impl Numbering {
    fn new(graph: &CallGraph) -> Numbering {
        let mut entries: Vec<Entry> = (0..graph.functions.len())
            .filter(|&f| graph.is_active(f))
            .map(Entry::Function)
            .chain((0..graph.cycles.len()).map(Entry::Cycle))
            .collect();
        let time = |entry: &Entry| match *entry {
            Entry::Function(f) => {
                let stats = &graph.functions[f];
                stats.self_nanos + stats.children_nanos
            }
            Entry::Cycle(c) => graph.cycles[c].self_nanos + graph.cycles[c].children_nanos,
        };
        let calls = |entry: &Entry| match *entry {
            Entry::Function(f) => graph.functions[f].non_recursive_calls(),
            Entry::Cycle(c) => graph.cycles[c].external_calls,
        };
        entries.sort_by(|a, b| {
            time(b).total_cmp(&time(a)).then_with(|| match (a, b) {
                (Entry::Cycle(x), Entry::Cycle(y)) => x.cmp(y),
                (Entry::Cycle(_), Entry::Function(_)) => std::cmp::Ordering::Less,
                (Entry::Function(_), Entry::Cycle(_)) => std::cmp::Ordering::Greater,
                (Entry::Function(x), Entry::Function(y)) => calls(b)
                    .cmp(&calls(a))
                    .then_with(|| graph.functions[*x].name.cmp(&graph.functions[*y].name))
                    .then(x.cmp(y)),
            })
        });
        let mut function = vec![None; graph.functions.len()];
        let mut cycle = vec![0; graph.cycles.len()];
        for (position, entry) in entries.iter().enumerate() {
            match *entry {
                Entry::Function(f) => function[f] = Some(position + 1),
                Entry::Cycle(c) => cycle[c] = position + 1,
            }
        }
        Numbering {
            entries,
            function,
            cycle,
        }
    }
}

#[cfg(test)]
mod tests;
