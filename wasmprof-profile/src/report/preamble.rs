//! What a text report says before its numbers: which run it describes and
//! what is missing from it. A profile of a run that trapped or timed out is
//! still worth reading, but only if nobody mistakes it for a complete one.

use super::callgraph::{COUNTED_MARK, OVERFLOW_NAME};
use super::units::human_duration;
use crate::profile::{FunctionTier, Profile};

/// One line naming the run: package (or module), entry, host, wall time.
pub(super) fn run_line(profile: &Profile) -> String {
    let run = &profile.run;
    let program = match &run.package {
        Some(package) => format!("package {package}"),
        None => format!("module {}", run.module),
    };
    let window = match run.window {
        Some(window) => format!(
            ", recorded from {} to {} into the run",
            human_duration(window.start_nanos as f64),
            human_duration(window.end_nanos as f64)
        ),
        None => String::new(),
    };
    // A snapshot file read on its own has no wall time of the run.
    let wall = match run.wall_nanos {
        0 => "not recorded".to_owned(),
        nanos => human_duration(nanos as f64),
    };
    format!(
        "wasmprof: {program}, entry {}, host {}, wall time {wall}{window}",
        run.entry, run.host,
    )
}

/// Warnings: what changes what the figures mean (a run cut short, counts
/// that disagree, call paths lost), one line each, shown by every report;
/// empty for a complete run.
pub(super) fn warnings(profile: &Profile) -> Vec<String> {
    [
        incomplete_run(profile),
        count_differences(profile),
        overflow(profile),
    ]
    .concat()
}

/// What the marks of the tables and the run's mode mean, at length and with
/// the functions they concern: `report --explain`, and the HTML and pprof
/// reports, which are read at leisure. The terminal's reports give
/// [`legend`] instead.
fn explanations(profile: &Profile) -> Vec<String> {
    [
        short_calls(profile),
        counted_functions(profile),
        sampled_times(profile),
        overflowed_functions(profile),
    ]
    .concat()
}

/// [`warnings`], then [`explanations`]: everything a report read at
/// leisure says before its numbers.
pub(super) fn notes(profile: &Profile) -> Vec<String> {
    [warnings(profile), explanations(profile)].concat()
}

/// One line saying what the marks in the table and the run's mode mean,
/// naming no function, and where the long text is; `None` when there is
/// nothing to say.
pub(super) fn legend(profile: &Profile) -> Option<String> {
    use super::time_kind::{TimeKind, of_functions};
    use crate::profile::TimerMode;
    let kinds: std::collections::BTreeSet<TimeKind> = of_functions(profile).into_iter().collect();
    let mode = profile.timer.mode;
    let mut parts = Vec::new();
    if let Some(hybrid) = &profile.timer.hybrid {
        parts.push(format!(
            "hybrid profile: counts and paths exact, times from {} of {} engine samples",
            hybrid.matched_samples, hybrid.samples
        ));
    }
    if mode == TimerMode::Sampled {
        parts.push("a sampling profile: times sampled, no call counted".to_owned());
    }
    if mode == TimerMode::Host && kinds.contains(&TimeKind::Sampled) {
        parts.push("(sampled) time from the engine's samples".to_owned());
    }
    if mode == TimerMode::Host && kinds.contains(&TimeKind::PartlyTimed) {
        parts.push("(partly timed) calls too short to time left in the caller's time".to_owned());
    }
    if mode != TimerMode::None && kinds.contains(&TimeKind::NotMeasured) {
        parts.push("(counted) counted only, its time in the caller's".to_owned());
    }
    if let Some(min) = profile.run.min_size.filter(|_| !profile.run.small_counted) {
        parts.push(format!("functions under --min-size {min} not instrumented"));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "NOTE: {}; more: `cargo wasmprof report --explain`",
            parts.join("; ")
        )
    })
}

/// A run that did not finish, and the calls it cut off.
fn incomplete_run(profile: &Profile) -> Vec<String> {
    let mut lines = Vec::new();
    if !profile.run.complete {
        let reason = profile
            .run
            .incomplete_reason
            .as_deref()
            .unwrap_or("no reason recorded");
        lines.push(format!(
            "WARNING: incomplete profile: the run did not finish ({reason})."
        ));
        let stacks = open_stacks(profile);
        if stacks.is_empty() {
            lines.push("WARNING: no frame was still running when the profile was taken.".into());
        } else {
            lines.push(
                "WARNING: still running when it stopped, their own time missing (outermost first):"
                    .into(),
            );
            for stack in stacks.iter().take(MAX_OPEN_STACKS) {
                lines.push(format!("WARNING:   {stack}"));
            }
            if stacks.len() > MAX_OPEN_STACKS {
                lines.push(format!(
                    "WARNING:   and {} more",
                    stacks.len() - MAX_OPEN_STACKS
                ));
            }
        }
    }
    lines
}

/// `--verify-counts` found counts that differ from the oracle's: no count
/// of this profile can be trusted as exact.
fn count_differences(profile: &Profile) -> Vec<String> {
    let Some(check) = &profile.run.count_check else {
        return Vec::new();
    };
    if check.differences.is_empty() {
        return Vec::new();
    }
    let named: Vec<String> = check
        .differences
        .iter()
        .take(MAX_NAMED)
        .map(|d| {
            format!(
                "{} ({} here, {} counted independently)",
                d.function, d.profile, d.oracle
            )
        })
        .collect();
    let more = check.differences.len().saturating_sub(MAX_NAMED);
    let cause = if check.threads_left_running > 0 {
        "perhaps a thread stopped while it recorded a call (see the profile's threads)"
    } else {
        "a bug in wasmprof"
    };
    vec![format!(
        "WARNING: the call counts of {} of {} functions differ from a second, independent \
         count of the same run (--verify-counts), {cause}: {}{}.",
        check.differences.len(),
        check.functions,
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )]
}

/// The functions of the nodes `flag` picks, at most [`MAX_NAMED`] of them
/// by name, with how many more; `None` for none.
fn names_where(profile: &Profile, flag: &dyn Fn(&crate::profile::Node) -> bool) -> Option<String> {
    let names: std::collections::BTreeSet<&str> = profile
        .nodes
        .iter()
        .filter(|n| flag(n))
        .filter_map(|n| n.function)
        .map(|f| profile.functions[f].name.as_str())
        .collect();
    let more = names.len().saturating_sub(MAX_NAMED);
    let listed: Vec<&str> = names.into_iter().take(MAX_NAMED).collect();
    (!listed.is_empty()).then(|| {
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{}{more}", listed.join(", "))
    })
}

/// Calls too short to time: given time by the samples, or left in their
/// callers'.
fn short_calls(profile: &Profile) -> Vec<String> {
    let mut lines = Vec::new();
    let host_timed = profile.timer.mode == crate::profile::TimerMode::Host;
    let sampled_call = |n: &crate::profile::Node| n.sampled && !profile.is_counted_path(n);
    if let Some(names) = names_where(profile, &sampled_call).filter(|_| host_timed) {
        lines.push(
            match (&profile.timer.coverage, profile.timer.sample_interval_nanos) {
                (Some(_), interval) => format!(
                    "NOTE: marked (sampled): calls too short to time were counted, and the \
                 engine's samples of the same run{} gave them the time they took, one long \
                 call among many short ones included: an estimate, taken from their callers' \
                 self time; {names} (their counts are exact).",
                    interval
                        .map(|i| format!(" (every {} on average)", human_duration(i)))
                        .unwrap_or_default()
                ),
                (None, _) => format!(
                    "NOTE: marked (sampled): short calls were timed on a random sample, each timed \
                 call standing for several; the times of {names} are estimates (their counts \
                 are exact)."
                ),
            },
        );
    }
    if let Some(names) =
        names_where(profile, &|n| n.partly_timed && !n.sampled).filter(|_| host_timed)
    {
        let why = if profile.run.samples_file.is_some() || profile.timer.coverage.is_some() {
            "the samples saw no more of them than the clock did"
        } else {
            "no samples were taken (--no-sample, or a host without a sampler), so a long \
             call among them can be missing"
        };
        lines.push(format!(
            "NOTE: marked (partly timed): calls shorter than about ten clock reads are counted \
             but not timed, their time staying in their callers' own time, and {why}; {names} \
             had such calls."
        ));
    }
    lines
}

/// Counted-only functions, and small ones left out.
fn counted_functions(profile: &Profile) -> Vec<String> {
    let mut lines = Vec::new();
    let mut has_node = vec![false; profile.functions.len()];
    for function in profile.nodes.iter().filter_map(|n| n.function) {
        if let Some(has) = has_node.get_mut(function) {
            *has = true;
        }
    }
    let (sampled, counted) = profile
        .functions
        .iter()
        .zip(&has_node)
        .filter(|(f, _)| f.tier == Some(FunctionTier::Counted))
        .fold((0, 0), |(sampled, counted), (_, &has)| {
            (sampled + usize::from(has), counted + usize::from(!has))
        });
    if sampled > 0 {
        lines.push(format!(
            "NOTE: {sampled} counted-only functions ran where the engine's samples saw them, \
             and are marked (sampled): their calls are exact; their time, under the callers \
             the samples found them in, is the samples' share of what those callers measured \
             (calls per caller are not tracked)."
        ));
    }
    if counted > 0 {
        let oracle_only = profile
            .run
            .command
            .iter()
            .any(|word| word == "--oracle-only");
        let why = match profile.run.min_size {
            Some(min) if profile.run.small_counted => format!(
                "smaller than --min-size {min}, with no loop or recursion; --min-size 0 times \
                 them all"
            ),
            _ if oracle_only => "--oracle-only: the oracle's counters alone".to_owned(),
            _ => "#[wasmprof::instrument(count)]".to_owned(),
        };
        let sampled_run = profile.timer.coverage.is_some() || profile.timer.hybrid.is_some();
        let samples = if sampled_run {
            " The samples saw none of their frames: the compiler inlines most small functions \
             into their callers; --keep-counted-frames keeps them out of line, so that the \
             samples give a long call of one its time."
        } else {
            ""
        };
        lines.push(format!(
            "NOTE: {counted} functions marked{COUNTED_MARK} were counted only ({why}): their \
             calls are exact, their time is in their callers' self time, and their callers \
             are not tracked.{samples}"
        ));
    }
    if let Some(min) = profile.run.min_size.filter(|_| !profile.run.small_counted) {
        lines.push(format!(
            "NOTE: built with --min-size {min} and small functions left out: functions smaller \
             than that, with no loop or recursion, were not instrumented; their time is in \
             their callers' self time."
        ));
    }
    lines
}

/// Where the times come from the engine's samples.
fn sampled_times(profile: &Profile) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(hybrid) = &profile.timer.hybrid {
        lines.push(format!(
            "NOTE: hybrid profile: call counts and call paths are exact (instrumentation), \
             times are sampled by the engine: {} of {} samples followed the calling-context \
             tree to their end.",
            hybrid.matched_samples, hybrid.samples
        ));
        for unmatched in &hybrid.unmatched {
            lines.push(format!(
                "NOTE:   {} samples ({}): {}.",
                unmatched.samples,
                human_duration(unmatched.nanos),
                unmatched.reason
            ));
        }
    }
    if profile.timer.mode == crate::profile::TimerMode::Sampled {
        lines.push(
            "NOTE: a sampling profile: times are sampled and no call was counted; a function \
             shorter than the interval can be missing."
                .into(),
        );
    }
    lines
}

/// Calls after the call tree was full: their paths are lost.
fn overflow(profile: &Profile) -> Vec<String> {
    let mut lines = Vec::new();
    if profile.overflow_calls > 0 {
        lines.push(format!(
            "WARNING: {} calls came after the call tree was full{}: each is counted against \
             its function, under {OVERFLOW_NAME}, but its call path is lost and its time is \
             in its callers' self time.",
            profile.overflow_calls,
            profile
                .run
                .max_nodes
                .map(|n| format!(" ({n} nodes; more with --max-nodes)"))
                .unwrap_or_default(),
        ));
    }
    lines
}

/// The functions whose calls lost their path, most calls first.
fn overflowed_functions(profile: &Profile) -> Vec<String> {
    let Some(umbrella) = profile
        .nodes
        .iter()
        .position(|n| n.parent == Some(Profile::ROOT) && n.function.is_none())
    else {
        return Vec::new();
    };
    let mut lost: Vec<(u64, &str)> = profile
        .nodes
        .iter()
        .filter(|n| n.parent == Some(umbrella))
        .filter_map(|n| Some((n.calls, profile.functions.get(n.function?)?.name.as_str())))
        .collect();
    if lost.is_empty() {
        return Vec::new();
    }
    lost.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let named: Vec<String> = lost
        .iter()
        .take(MAX_NAMED)
        .map(|(calls, name)| format!("{name} ({calls})"))
        .collect();
    vec![format!(
        "NOTE: the calls that came after the call tree was full were most under {}{}.",
        named.join(", "),
        if lost.len() > MAX_NAMED {
            format!(" and {} more", lost.len() - MAX_NAMED)
        } else {
            String::new()
        }
    )]
}

const MAX_OPEN_STACKS: usize = 3;
/// Functions named in a note before `and N more`.
const MAX_NAMED: usize = 5;
/// Longer stacks show their first and last frames around an ellipsis.
const MAX_STACK_SEGMENTS: usize = 10;

/// Every chain of open frames, from the root to an open node with no open
/// child, as `a > b > c`, repeated frames folded (`fib (500 frames)`).
fn open_stacks(profile: &Profile) -> Vec<String> {
    let mut has_open_child = vec![false; profile.nodes.len()];
    for node in &profile.nodes {
        if let (true, Some(parent)) = (node.open, node.parent) {
            has_open_child[parent] = true;
        }
    }
    profile
        .nodes
        .iter()
        .enumerate()
        .filter(|&(index, node)| node.open && !has_open_child[index])
        .map(|(index, _)| describe_stack(&open_path_names(profile, index)))
        .collect()
}

/// Names of the open frames from the root down to `leaf`.
fn open_path_names(profile: &Profile, leaf: usize) -> Vec<&str> {
    let mut names = Vec::new();
    let mut current = Some(leaf);
    while let Some(node) = current {
        let n = &profile.nodes[node];
        if node != Profile::ROOT && n.open {
            names.push(match n.function {
                Some(f) => profile.functions[f].name.as_str(),
                None => OVERFLOW_NAME,
            });
        }
        current = n.parent;
    }
    names.reverse();
    names
}

fn describe_stack(names: &[&str]) -> String {
    let mut segments: Vec<String> = Vec::new();
    let mut start = 0;
    while start < names.len() {
        let run = names[start..]
            .iter()
            .take_while(|&&n| n == names[start])
            .count();
        segments.push(match run {
            1 => names[start].to_owned(),
            _ => format!("{} ({run} frames)", names[start]),
        });
        start += run;
    }
    if segments.len() > MAX_STACK_SEGMENTS {
        let keep = MAX_STACK_SEGMENTS / 2;
        let elided = segments.len() - 2 * keep;
        let tail = segments.split_off(segments.len() - keep);
        segments.truncate(keep);
        segments.push(format!("... {elided} more ..."));
        segments.extend(tail);
    }
    segments.join(" > ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    #[test]
    fn a_complete_run_has_no_warnings() {
        let profile = ProfileBuilder::timed().path(&["main"], 1, 5.0).build();
        assert!(warnings(&profile).is_empty());
        assert_eq!(
            run_line(&profile),
            "wasmprof: package demo, entry start, host node v20.20.2, wall time 2.00 ms"
        );
    }

    #[test]
    fn a_windowed_run_says_which_part_of_it_the_profile_holds() {
        let mut profile = ProfileBuilder::timed().path(&["main"], 1, 5.0).build();
        profile.run.window = Some(crate::profile::Window {
            start_nanos: 2_000_000_000,
            end_nanos: 12_000_000_000,
        });
        assert!(
            run_line(&profile).ends_with(", recorded from 2.00 s to 12.0 s into the run"),
            "{}",
            run_line(&profile)
        );
    }

    #[test]
    fn an_incomplete_run_names_its_reason_and_open_frames() {
        let mut path = vec!["main", "parse"];
        path.extend(["expr"; 40]);
        path.push("unreachable");
        let mut profile = ProfileBuilder::timed()
            .path(&path, 1, 5.0)
            .open(&path)
            .build();
        profile.run.complete = false;
        profile.run.incomplete_reason = Some("trap: unreachable executed".into());
        let lines = warnings(&profile);
        assert!(lines[0].contains("trap: unreachable executed"), "{lines:?}");
        assert_eq!(
            lines[2],
            "WARNING:   main > parse > expr (40 frames) > unreachable"
        );
    }

    #[test]
    fn long_stacks_are_shortened() {
        let names: Vec<String> = (0..30).map(|i| format!("f{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(
            describe_stack(&names),
            "f0 > f1 > f2 > f3 > f4 > ... 20 more ... > f25 > f26 > f27 > f28 > f29"
        );
    }

    #[test]
    fn a_size_threshold_is_mentioned() {
        let mut profile = ProfileBuilder::timed().path(&["main"], 1, 5.0).build();
        profile.run.min_size = Some(3);
        assert_eq!(warnings(&profile), Vec::<String>::new());
        assert_eq!(
            legend(&profile).as_deref(),
            Some(
                "NOTE: functions under --min-size 3 not instrumented; more: `cargo wasmprof \
                 report --explain`"
            )
        );
        assert_eq!(
            explanations(&profile),
            vec![
                "NOTE: built with --min-size 3 and small functions left out: functions \
                 smaller than that, with no loop or recursion, were not instrumented; their \
                 time is in their callers' self time."
            ]
        );
    }

    #[test]
    fn count_only_functions_are_explained() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main"], 1, 5.0)
            .counted("get", 1000)
            .build();
        profile.run.min_size = Some(40);
        profile.run.small_counted = true;
        assert_eq!(
            legend(&profile).as_deref(),
            Some(
                "NOTE: (counted) counted only, its time in the caller's; more: `cargo wasmprof \
                 report --explain`"
            )
        );
        assert_eq!(
            explanations(&profile),
            vec![
                "NOTE: 1 functions marked (counted) were counted only (smaller than --min-size \
                 40, with no loop or recursion; --min-size 0 times them all): their calls are \
                 exact, their time is in their callers' self time, and their callers are not \
                 tracked."
            ]
        );
    }

    #[test]
    fn overflow_is_a_warning() {
        let mut profile = ProfileBuilder::timed().path(&["main"], 1, 5.0).build();
        profile.overflow_calls = 12;
        assert!(
            warnings(&profile)[0]
                .starts_with("WARNING: 12 calls came after the call tree was full")
        );
    }

    #[test]
    fn the_legend_is_one_line_naming_no_function_and_the_explanations_name_them() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "exact"], 1, 5.0)
            .path(&["main", "tokenize"], 100, 0.0)
            .path(&["main", "parse_expr"], 100, 2.0)
            .counted("get", 1000)
            .build();
        let node = |name: &str| {
            let f = profile
                .functions
                .iter()
                .position(|f| f.name == name)
                .unwrap();
            profile
                .nodes
                .iter()
                .position(|n| n.function == Some(f))
                .unwrap()
        };
        let (tokenize, parse_expr) = (node("tokenize"), node("parse_expr"));
        profile.nodes[tokenize].partly_timed = true;
        profile.nodes[parse_expr].partly_timed = true;
        profile.nodes[parse_expr].sampled = true;
        profile.run.samples_file = Some("run.cpuprofile".into());
        profile.run.min_size = Some(40);
        profile.run.small_counted = true;
        let legend = legend(&profile).unwrap();
        assert_eq!(
            legend,
            "NOTE: (sampled) time from the engine's samples; (partly timed) calls too short to \
             time left in the caller's time; (counted) counted only, its time in the caller's; \
             more: `cargo wasmprof report --explain`"
        );
        let explained = explanations(&profile).join("\n");
        for name in ["tokenize", "parse_expr", "1 functions marked (counted)"] {
            assert!(explained.contains(name), "{name}: {explained}");
        }
        assert!(!legend.contains("tokenize") && !legend.contains("parse_expr"));
    }

    #[test]
    fn a_hybrid_profile_says_so_in_its_legend() {
        let mut profile = ProfileBuilder::timed().path(&["main"], 1, 5.0).build();
        profile.timer.mode = crate::profile::TimerMode::Hybrid;
        profile.timer.hybrid = Some(crate::profile::HybridInfo {
            samples: 1000,
            matched_samples: 950,
            unmatched: Vec::new(),
        });
        assert!(
            legend(&profile).unwrap().starts_with(
                "NOTE: hybrid profile: counts and paths exact, times from 950 of 1000"
            )
        );
    }
}
