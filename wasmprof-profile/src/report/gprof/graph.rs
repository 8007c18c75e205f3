//! gprof's call graph: for every entry, its callers above, itself, its
//! callees below.
//!
//! Formats and sort orders follow binutils' `cg_print.c` (`print_line`,
//! `print_parents`, `print_children`, `print_cycle`, `print_members`,
//! `cmp_arc`): callers ascending and callees descending, recursive and
//! within-cycle calls shown by count alone, `n/m` for the calls through one
//! arc out of all calls into the callee (or its cycle).

use std::cmp::Ordering;

use super::{Entry, GprofWriter};
use crate::report::callgraph::{Arc, Cycle, FunctionId};
use crate::report::words::CALLERS_NOT_TRACKED;

const SEPARATOR: &str = "-----------------------------------------------\n";

pub(super) fn write(report: &GprofWriter, text: &mut String) {
    text.push_str("\t\t\tCall graph\n\n\n");
    if !report.graph.counted {
        text.push_str(&format!(
            "granularity: callers and callees from the sampled stacks, no call counts; {}, {:.2} {} in all\n\n",
            report.timing_sentence(),
            report.time(report.graph.total_nanos),
            report.unit.abbreviation()
        ));
    } else if report.graph.timed {
        text.push_str(&format!(
            "granularity: each call counted and {}, {:.2} {} in all\n\n",
            report.timing_sentence(),
            report.time(report.graph.total_nanos),
            report.unit.abbreviation()
        ));
    } else {
        text.push_str(&format!(
            "granularity: each call counted; {}\n\n",
            report.timing_sentence()
        ));
    }
    text.push_str("index % time    self  children    called     name\n");
    for entry in &report.numbering.entries {
        match *entry {
            Entry::Function(function) => {
                if report.graph.functions[function].counted_only {
                    // No node, so no arc: say so where the callers go.
                    text.push_str(&format!(
                        "{:6} {:5} {:7} {:7} {:7} {:7}     {CALLERS_NOT_TRACKED}\n",
                        "", "", "", "", "", ""
                    ));
                }
                for line in caller_lines(report, function) {
                    text.push_str(&line.render(report));
                }
                text.push_str(&primary_line(report, function));
                for line in callee_lines(report, function) {
                    text.push_str(&line.render(report));
                }
            }
            Entry::Cycle(cycle) => write_cycle(report, cycle, text),
        }
        text.push_str(SEPARATOR);
    }
}

/// The entry's own line: `[index] %time self children called name`.
fn primary_line(report: &GprofWriter, function: FunctionId) -> String {
    let stats = &report.graph.functions[function];
    let index = format!("[{}]", report.numbering.function[function].unwrap_or(0));
    let mut line = format!(
        "{:<6} {:5.1} {:7.2} {:7.2}",
        index,
        report.percent(stats.self_nanos + stats.children_nanos),
        report.time(stats.self_nanos),
        report.time(stats.children_nanos)
    );
    if stats.calls != 0 {
        line.push_str(&format!(" {:7}", stats.non_recursive_calls()));
        line.push_str(&recursion_suffix(stats.recursive_calls, " "));
    } else {
        line.push_str(&format!(" {:7} {:7} ", "", ""));
    }
    line.push_str(&report.tagged_name(function));
    line.push('\n');
    line
}

/// A count as gprof prints it, or nothing for a profile without counts.
fn count(report: &GprofWriter, calls: u64) -> String {
    if report.graph.counted {
        calls.to_string()
    } else {
        String::new()
    }
}

/// `+r` left-aligned in 7 after a `+`, or blanks of the same width.
fn recursion_suffix(recursive_calls: u64, trailer: &str) -> String {
    if recursive_calls != 0 {
        format!("+{recursive_calls:<7}{trailer}")
    } else {
        format!(" {:7}{trailer}", "")
    }
}

/// A cycle as a whole, then its members by decreasing time.
fn write_cycle(report: &GprofWriter, position: usize, text: &mut String) {
    let cycle = &report.graph.cycles[position];
    let index = format!("[{}]", report.numbering.cycle[position]);
    text.push_str(&format!(
        "{:<6} {:5.1} {:7.2} {:7.2} {:>7}",
        index,
        report.percent(cycle.self_nanos + cycle.children_nanos),
        report.time(cycle.self_nanos),
        report.time(cycle.children_nanos),
        count(report, cycle.external_calls)
    ));
    text.push_str(&recursion_suffix(cycle.internal_calls, ""));
    text.push_str(&format!(
        " <cycle {} as a whole> [{}]\n",
        cycle.number, report.numbering.cycle[position]
    ));
    for member in members_by_time(report, cycle) {
        let stats = &report.graph.functions[member];
        text.push_str(&format!(
            "{:6} {:5} {:7.2} {:7.2} {:>7}",
            "",
            "",
            report.time(stats.self_nanos),
            report.time(stats.children_nanos),
            count(report, stats.non_recursive_calls())
        ));
        text.push_str(&recursion_suffix(stats.recursive_calls, ""));
        text.push_str("     ");
        text.push_str(&report.tagged_name(member));
        text.push('\n');
    }
}

/// gprof's `sort_members`: time, then calls, decreasing; then by name.
fn members_by_time(report: &GprofWriter, cycle: &Cycle) -> Vec<FunctionId> {
    let functions = &report.graph.functions;
    let mut members = cycle.members.clone();
    members.sort_by(|&a, &b| {
        let (fa, fb) = (&functions[a], &functions[b]);
        (fb.self_nanos + fb.children_nanos)
            .total_cmp(&(fa.self_nanos + fa.children_nanos))
            .then(fb.calls.cmp(&fa.calls))
            .then_with(|| fa.name.cmp(&fb.name))
            .then(a.cmp(&b))
    });
    members
}

/// One caller or callee line of an entry.
struct ArcLine<'g> {
    arc: &'g Arc,
    /// The function named on the line: the caller on a caller line, the
    /// callee on a callee line; `None` for the host.
    other: Option<FunctionId>,
    kind: ArcKind,
    /// All calls into the callee (or its cycle) from outside: the `m` of `n/m`.
    entry_calls: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum ArcKind {
    /// A function calling itself: count only.
    Recursive,
    /// Between two members of one cycle: count only.
    WithinCycle,
    /// Anything else: times and `n/m`.
    Regular,
    /// The host as the only outside caller: gprof's bare `<spontaneous>`.
    SpontaneousOnly,
}

impl ArcLine<'_> {
    fn render(&self, report: &GprofWriter) -> String {
        let name = match self.other {
            Some(function) => report.tagged_name(function),
            None => "<spontaneous>".to_owned(),
        };
        match self.kind {
            ArcKind::Recursive | ArcKind::WithinCycle => format!(
                "{:6} {:5} {:7} {:7} {:>7} {:7}     {name}\n",
                "",
                "",
                "",
                "",
                count(report, self.arc.calls),
                ""
            ),
            // No calls per arc: a sampling profile's, or a counted
            // function's (its callers are those the samples found).
            ArcKind::Regular if !report.graph.counted || self.calls_a_counted_function(report) => {
                format!(
                    "{:6} {:5} {:7.2} {:7.2} {:7} {:7}     {name}\n",
                    "",
                    "",
                    report.time(self.arc.entry_self_nanos),
                    report.time(self.arc.entry_children_nanos),
                    "",
                    ""
                )
            }
            ArcKind::SpontaneousOnly => format!(
                "{:6} {:5} {:7} {:7} {:7} {:7}     {name}\n",
                "", "", "", "", "", ""
            ),
            ArcKind::Regular => format!(
                "{:6} {:5} {:7.2} {:7.2} {:7}/{:<7}     {name}\n",
                "",
                "",
                report.time(self.arc.entry_self_nanos),
                report.time(self.arc.entry_children_nanos),
                self.arc.calls,
                self.entry_calls
            ),
        }
    }

    fn calls_a_counted_function(&self, report: &GprofWriter) -> bool {
        report.graph.functions[self.arc.callee].counted_only
    }

    /// gprof's `cmp_arc`: recursive calls least, then calls within a cycle
    /// by count, then the rest by time and count.
    fn rank(&self, other: &ArcLine) -> Ordering {
        let class = |line: &ArcLine| match line.kind {
            ArcKind::SpontaneousOnly => ArcKind::Regular,
            kind => kind,
        };
        let time = |line: &ArcLine| line.arc.entry_self_nanos + line.arc.entry_children_nanos;
        class(self)
            .cmp(&class(other))
            .then_with(|| match class(self) {
                ArcKind::Regular => time(self).total_cmp(&time(other)),
                _ => Ordering::Equal,
            })
            .then(self.arc.calls.cmp(&other.arc.calls))
    }

    /// Ties of [`ArcLine::rank`] go by name, the host first.
    fn by_name(&self, other: &ArcLine, report: &GprofWriter) -> Ordering {
        name_of(report, self.other).cmp(name_of(report, other.other))
    }
}

fn name_of<'r>(report: &'r GprofWriter, function: Option<FunctionId>) -> &'r str {
    function.map_or("", |f| report.graph.functions[f].name.as_str())
}

fn kind_of(report: &GprofWriter, arc: &Arc) -> ArcKind {
    match arc.caller {
        Some(caller) if caller == arc.callee => ArcKind::Recursive,
        caller if report.graph.is_internal(caller, arc.callee) => ArcKind::WithinCycle,
        _ => ArcKind::Regular,
    }
}

/// Callers of `function`, in gprof's ascending order.
fn caller_lines<'g>(report: &'g GprofWriter, function: FunctionId) -> Vec<ArcLine<'g>> {
    let graph = &report.graph;
    let mut lines: Vec<ArcLine> = graph
        .arcs_into(function)
        .map(|arc| ArcLine {
            arc,
            other: arc.caller,
            kind: kind_of(report, arc),
            entry_calls: graph.entry_calls(function),
        })
        .collect();
    let outside_callers = lines.iter().filter(|l| l.kind == ArcKind::Regular).count();
    for line in &mut lines {
        if line.other.is_none() && outside_callers == 1 {
            line.kind = ArcKind::SpontaneousOnly;
        }
    }
    lines.sort_by(|a, b| a.rank(b).then_with(|| a.by_name(b, report)));
    lines
}

/// Callees of `function`, in gprof's descending order.
fn callee_lines<'g>(report: &'g GprofWriter, function: FunctionId) -> Vec<ArcLine<'g>> {
    let graph = &report.graph;
    let mut lines: Vec<ArcLine> = graph
        .arcs_from(function)
        .map(|arc| ArcLine {
            arc,
            other: Some(arc.callee),
            kind: kind_of(report, arc),
            entry_calls: graph.entry_calls(arc.callee),
        })
        .collect();
    lines.sort_by(|a, b| b.rank(a).then_with(|| a.by_name(b, report)));
    lines
}
