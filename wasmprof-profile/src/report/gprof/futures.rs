//! The section gprof has no counterpart for: what the futures of each async
//! function did. It comes last, after the index, so that tools reading
//! gprof's sections find them where they expect them.

use super::GprofWriter;
use crate::report::futures::{Figures, median_is_exact, summarize};
use crate::report::units::human_duration_ascii;

pub(super) fn write(report: &GprofWriter, text: &mut String) {
    let functions = summarize(report.profile);
    if functions.is_empty() {
        return;
    }
    let unit_abbreviation = report.unit.abbreviation();
    text.push_str("\x0c\nAsync functions\n\n");
    text.push_str(
        "Each call of an async function creates a future. Its time above is CPU time: the\n\
         time spent inside its polls, under the call path that created it. Latency is wall\n\
         time from a future's first poll to its completion, awaits included: it is not CPU\n\
         time and is never added to any time above.\n\n",
    );
    text.push_str(&format!(
        "{:>9} {:>9} {:>9} {:>9} {:>7} {:>10} {:>10} {:>10}  name\n",
        "calls", "completed", "cancelled", "pending", "polls/", "cpu", "median", "max"
    ));
    text.push_str(&format!(
        "{:>9} {:>9} {:>9} {:>9} {:>7} {:>10} {:>10} {:>10}\n",
        "", "", "", "", "call", unit_abbreviation, "latency", "latency"
    ));
    for function in &functions {
        row(
            report,
            text,
            &function.figures,
            &function.name,
            median_is_exact(function),
        );
        if function.paths.len() > 1 {
            for path in &function.paths {
                let via = path.path[..path.path.len() - 1].join(" -> ");
                let label = if via.is_empty() {
                    "  from the host".to_owned()
                } else {
                    format!("  via {via}")
                };
                row(report, text, &path.figures, &label, true);
            }
        }
    }
    let pending: u64 = functions.iter().map(|f| f.figures.pending).sum();
    if pending > 0 {
        text.push_str(&format!(
            "\n{pending} futures were still pending when the profile was taken (neither \
             completed nor dropped); their CPU time so far is in the times above.\n"
        ));
    }
    if !report.graph.timed {
        text.push_str("\nNo latency without a clock (--timer none).\n");
    }
}

fn row(report: &GprofWriter, text: &mut String, figures: &Figures, name: &str, exact: bool) {
    let (median, max) = match &figures.latency {
        Some(latency) => (
            format!(
                "{}{}",
                if exact { "" } else { "~" },
                human_duration_ascii(latency.median_nanos)
            ),
            human_duration_ascii(latency.max_nanos),
        ),
        None => ("-".to_owned(), "-".to_owned()),
    };
    let cpu = if report.graph.timed {
        format!("{:.2}", report.time(figures.cpu_nanos))
    } else {
        "-".to_owned()
    };
    text.push_str(&format!(
        "{:>9} {:>9} {:>9} {:>9} {:>7.2} {:>10} {:>10} {:>10}  {name}\n",
        figures.calls,
        figures.completions,
        figures.cancellations,
        figures.pending,
        figures.polls_per_call(),
        cpu,
        median,
        max,
    ));
}
