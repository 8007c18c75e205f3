//! gprof's flat profile: one line per function, by decreasing self time.
//!
//! Formats are those of binutils' `hist.c` (`print_header`, `print_line`),
//! including its per-call unit chosen so that the costliest call per
//! function reads between 1 and 1000.

use super::GprofWriter;
use crate::report::callgraph::{FunctionId, FunctionStats};
use crate::report::units::TimeUnit;

pub(super) fn write(report: &GprofWriter, text: &mut String) {
    let functions = by_self_time(report);
    let per_call = per_call_unit(report, &functions);
    text.push_str("Flat profile:\n\n");
    if !report.graph.counted {
        text.push_str(&format!(
            "No call was counted: a sampling profile has no call counts; {}.\n",
            report.timing_sentence()
        ));
    } else if report.graph.timed {
        text.push_str(&format!(
            "Each call was counted and {}.\n",
            report.timing_sentence()
        ));
    } else {
        text.push_str(&format!(
            "Each call was counted; {}.\n\n",
            report.timing_sentence()
        ));
    }
    if let Some(legend) = recursion_legend(report) {
        text.push_str(&legend);
    }
    let dimension = column_label(report.unit);
    let per_call_label = format!("{}/call", per_call.abbreviation());
    text.push_str(&format!(
        "{:>5.5} {:>10.10} {:>8.8} {:>8.8} {:>8.8} {:>8.8}  {:<8.8}\n",
        "%  ", "cumulative", "self  ", "", "self  ", "total ", ""
    ));
    text.push_str(&format!(
        "{:>5.5} {:>9.9}  {:>8.8} {:>8.8} {:>8.8} {:>8.8}  {:<8.8}\n",
        "time", dimension, dimension, "calls", per_call_label, per_call_label, "name"
    ));
    let mut cumulative = 0.0;
    for function in functions {
        let stats = &report.graph.functions[function];
        cumulative += stats.self_nanos;
        text.push_str(&format!(
            "{:6.2} {:9.2} {:8.2}",
            report.percent(stats.self_nanos),
            report.time(cumulative),
            report.time(stats.self_nanos)
        ));
        let calls = stats.non_recursive_calls();
        if calls != 0 {
            let per = |nanos: f64| per_call.value_of(nanos / calls as f64);
            text.push_str(&format!(
                " {:8} {:8.2} {:8.2}  ",
                calls,
                per(stats.self_nanos),
                per(stats.self_nanos + stats.children_nanos)
            ));
        } else {
            text.push_str(&format!(" {:8} {:8} {:8}  ", "", "", ""));
        }
        text.push_str(&stats.marked_name(report.profile.timer.mode));
        text.push('\n');
    }
}

/// What `calls` counts, when some function called itself: GNU gprof's
/// convention, which the other formats do not follow, so that a reader
/// holding this report against them (or a function counted only in one
/// build against the same function timed in another) sees why the figures
/// differ. The function with the most recursive calls is the example.
fn recursion_legend(report: &GprofWriter) -> Option<String> {
    let functions = &report.graph.functions;
    let example = functions
        .iter()
        .filter(|f| f.recursive_calls > 0)
        .max_by_key(|f| (f.recursive_calls, std::cmp::Reverse(&f.name)))?;
    let mut text = format!(
        "calls leaves out a function's calls of itself, as GNU gprof does: the call graph \
         shows them after a + ({} {}+{}), and JSON, pprof and HTML count every call ({}).",
        example.name,
        example.non_recursive_calls(),
        example.recursive_calls,
        example.calls
    );
    if functions.iter().any(|f| f.counted_only && f.calls > 0) {
        text.push_str(
            " A function counted only keeps no callers, so its calls here are all its calls.",
        );
    }
    text.push('\n');
    Some(text)
}

/// gprof's order: self time, then non-recursive calls, then name.
fn by_self_time(report: &GprofWriter) -> Vec<FunctionId> {
    let graph = &report.graph;
    graph.ranked_by_self_time(graph.active_functions(), FunctionStats::non_recursive_calls)
}

/// The unit in which the largest total time per call reads at least 1;
/// the report's own unit when nothing was timed.
fn per_call_unit(report: &GprofWriter, functions: &[FunctionId]) -> TimeUnit {
    let largest = functions
        .iter()
        .map(|&f| &report.graph.functions[f])
        .filter(|s| s.non_recursive_calls() > 0)
        .map(|s| (s.self_nanos + s.children_nanos) / s.non_recursive_calls() as f64)
        .fold(0.0, f64::max);
    if largest > 0.0 {
        TimeUnit::for_largest(largest)
    } else {
        report.unit
    }
}

/// gprof names its time columns `seconds`; other units go by their symbol.
pub(super) fn column_label(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Seconds => "seconds",
        other => other.abbreviation(),
    }
}
