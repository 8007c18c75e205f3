//! The few lines printed after `cargo wasmprof run`: where the time went,
//! on one screen, with the full reports one command away.

use std::io::Write;

use crate::error::Error;

use super::callgraph::{CallGraph, FunctionId};
use super::memory_graph::{MemoryGraph, human_bytes};
use super::preamble;
use super::units::human_duration;
use super::words::{OUTSIDE, plural};
use crate::profile::{PathMemory, Profile, Requests};

/// How many functions the summary lists unless told otherwise.
pub const DEFAULT_SUMMARY_TOP: usize = 10;

/// Writes the run line, any warnings, and the `top` functions by self time
/// (by calls when nothing was timed), with their calls (all of them,
/// recursive ones included), self and total time and share of the total.
pub fn write_summary(profile: &Profile, top: usize, out: &mut dyn Write) -> crate::Result<()> {
    super::ensure_valid(profile)?;
    out.write_all(render_summary(profile, top).as_bytes())
        .map_err(Error::output("summary"))
}

/// The summary as text; `profile` must be valid.
pub fn render_summary(profile: &Profile, top: usize) -> String {
    let graph = CallGraph::build(profile);
    let mut text = preamble::run_line(profile);
    text.push('\n');
    for line in preamble::warnings(profile)
        .into_iter()
        .chain(preamble::legend(profile))
    {
        text.push_str(&line);
        text.push('\n');
    }
    let ranked = ranked(&graph);
    let shown = ranked.len().min(top);
    let samples = samples_in(profile, &graph);
    if graph.timed {
        text.push_str(&format!(
            "top {shown} of {} functions by self time, of {} measured:\n",
            ranked.len(),
            human_duration(graph.total_nanos)
        ));
        text.push_str(&format!(
            "{:>6}  {:>9}  {:>9}  {:>12}  function\n",
            "self%",
            "self",
            "total",
            if graph.counted { "calls" } else { "samples" }
        ));
        for &f in &ranked[..shown] {
            let stats = &graph.functions[f];
            let share = if graph.total_nanos > 0.0 {
                100.0 * stats.self_nanos / graph.total_nanos
            } else {
                0.0
            };
            text.push_str(&format!(
                "{:>5.1}%  {:>9}  {:>9}  {:>12}  {}\n",
                share,
                human_duration(stats.self_nanos),
                human_duration(stats.total_nanos),
                if graph.counted {
                    stats.calls
                } else {
                    samples[f]
                },
                stats.marked_name(profile.timer.mode)
            ));
        }
    } else {
        text.push_str(&format!(
            "top {shown} of {} functions by calls (no time was measured: --timer none):\n",
            ranked.len()
        ));
        text.push_str(&format!("{:>12}  function\n", "calls"));
        for &f in &ranked[..shown] {
            let stats = &graph.functions[f];
            text.push_str(&format!("{:>12}  {}\n", stats.calls, stats.name));
        }
    }
    memory_lines(profile, &mut text);
    frame_lines(profile, &mut text);
    thread_lines(profile, &mut text);
    text
}

/// A threaded program: each thread's calls and busy time (inside
/// instrumented calls) against the run's wall time, so that an idle
/// worker or one overloaded thread shows; and, where the profile sees
/// threads wait (rayon's idle loop and latches, when rayon-core is
/// instrumented), the time waiting apart from the time working.
fn thread_lines(profile: &Profile, text: &mut String) {
    if let Some(requests) = &profile.run.requests {
        request_lines(profile, requests, text);
        return;
    }
    if profile.threads.is_empty() {
        return;
    }
    let timed = profile.timer.mode.timed();
    let activities: Vec<_> = profile
        .threads
        .iter()
        .map(|t| t.activity(profile))
        .collect();
    let waits = timed && activities.iter().any(|a| a.waiting_nanos > 0.0);
    text.push_str(&format!(
        "threads: {}{}; `cargo wasmprof report --thread NAME` shows one alone\n",
        profile.threads.len(),
        if timed {
            format!(
                ", their time inside instrumented calls against the run's {}",
                human_duration(profile.run.wall_nanos as f64)
            )
        } else {
            String::new()
        }
    ));
    let width = profile
        .threads
        .iter()
        .map(|t| t.name.len())
        .chain(["thread".len()])
        .max()
        .unwrap_or(0);
    // Each column: a time, and its share of the run.
    let column = |nanos: f64| {
        let share = match profile.run.wall_nanos {
            0 => String::new(),
            wall => format!(" {:>5.1}%", 100.0 * nanos / wall as f64),
        };
        format!("  {:>9}{share}", human_duration(nanos))
    };
    let heading = |title: &str| {
        format!(
            "  {title:>9}{}",
            if profile.run.wall_nanos == 0 {
                ""
            } else {
                "       "
            }
        )
    };
    let mut header = format!("  {:<width$}", "thread");
    if timed {
        header.push_str(&heading("busy"));
    }
    if waits {
        header.push_str(&heading("waiting"));
    }
    text.push_str(&format!("{header}  {:>12}\n", "calls"));
    for (thread, activity) in profile.threads.iter().zip(&activities) {
        // An idle worker, or one thread doing all the work, shows in the
        // busy column; a pool starved of work in the waiting one.
        let mut row = format!("  {:<width$}", thread.name);
        if timed {
            row.push_str(&column(activity.busy_nanos));
        }
        if waits {
            row.push_str(&column(activity.waiting_nanos));
        }
        text.push_str(&format!("{row}  {:>12}\n", thread.calls()));
    }
    if waits {
        text.push_str(
            "  (waiting: in rayon's idle loop and latches, seen because rayon-core is instrumented)\n",
        );
    }
    for thread in &profile.threads {
        if thread.read == crate::profile::ThreadRead::MidRecord {
            text.push_str(&format!(
                "  {} stopped in the middle of recording a call (a trap, or the run's end \
                 stopped it there): its {} calls are as it stood, the last perhaps counted \
                 without its time\n",
                thread.name,
                thread.calls()
            ));
        }
    }
}

/// How many of the slowest requests the summary lists.
const SLOWEST_REQUESTS: usize = 5;

/// An HTTP handler's requests: their latency (median, p99, max), their
/// statuses, and the slowest of them with their calls and busy time.
fn request_lines(profile: &Profile, requests: &Requests, text: &mut String) {
    let served = requests.latency_nanos.len();
    let latency = |q: f64| human_duration(requests.latency_quantile(q).unwrap_or(0) as f64);
    let mut statuses: std::collections::BTreeMap<u16, usize> = Default::default();
    for status in &requests.statuses {
        *statuses.entry(*status).or_default() += 1;
    }
    let statuses: Vec<String> = statuses
        .iter()
        .map(|(status, n)| match status {
            0 => format!("{n} without a response"),
            status => format!("{n} × {status}"),
        })
        .collect();
    text.push_str(&format!(
        "requests: {served} × GET {} ({}), latency median {}, p99 {}, max {}\n",
        requests.path,
        statuses.join(", "),
        latency(0.5),
        latency(0.99),
        latency(1.0),
    ));
    if served < 2 {
        return;
    }
    let mut slowest: Vec<usize> = (0..served).collect();
    slowest.sort_by_key(|&i| std::cmp::Reverse(requests.latency_nanos[i]));
    slowest.truncate(SLOWEST_REQUESTS);
    text.push_str(&format!(
        "  {:<12}  {:>9}  {:>9}  {:>12}   (`cargo wasmprof report --thread \"request N\"` shows one alone)\n",
        "slowest", "latency", "busy", "calls"
    ));
    for index in slowest {
        let name = format!("request {}", index + 1);
        let thread = profile.threads.iter().find(|t| t.name == name);
        let busy = thread.map_or(0.0, |t| t.activity(profile).busy_nanos);
        let calls = thread.map_or(0, |t| t.calls());
        text.push_str(&format!(
            "  {name:<12}  {:>9}  {:>9}  {calls:>12}\n",
            human_duration(requests.latency_nanos[index] as f64),
            human_duration(busy),
        ));
    }
}

/// A page with animation frames: their rate and distribution, and what
/// the slowest frame spent its time in.
fn frame_lines(profile: &Profile, text: &mut String) {
    let Some(frames) = &profile.frames else {
        return;
    };
    text.push_str(&format!(
        "frames: {}\n",
        super::animation_frames::overview(frames)
    ));
    let Some(slowest) = frames.worst.first() else {
        return;
    };
    let lines = super::animation_frames::tree(profile, slowest);
    let mut top: Vec<String> = lines
        .iter()
        .filter(|l| l.depth <= 1)
        .take(4)
        .map(|l| {
            format!(
                "{} x{} {}",
                l.name,
                l.calls,
                human_duration(l.inclusive_nanos)
            )
        })
        .collect();
    if top.is_empty() {
        top.push("no instrumented call (the framework's or the browser's own work)".into());
    }
    text.push_str(&format!(
        "        slowest, frame {} ({}): {}; `cargo wasmprof report --format gprof` shows the {} \
         slowest frames' calls\n",
        slowest.index,
        human_duration(slowest.duration_nanos),
        top.join(", "),
        frames.worst.len()
    ));
}

/// With `--memory`: the allocations, the peak and who held most of it,
/// what is live at the end and who allocated most of it, and growth.
fn memory_lines(profile: &Profile, text: &mut String) {
    let (Some(memory), Some(graph)) = (&profile.memory, MemoryGraph::build(profile)) else {
        return;
    };
    let by_node = memory.by_node(profile.nodes.len());
    // The path holding the most by `figure`, named by its function.
    let top = |figure: fn(&PathMemory) -> u64| {
        by_node
            .iter()
            .enumerate()
            .filter(|(_, m)| figure(m) > 0)
            .max_by_key(|(node, m)| (figure(m), std::cmp::Reverse(*node)))
            .map(|(node, m)| format!("{} {}", path_name(profile, node), human_bytes(figure(m))))
    };
    text.push_str(&format!(
        "memory: {} allocations, {}; peak {}{}\n",
        graph.totals.allocs,
        human_bytes(graph.totals.alloc_bytes),
        human_bytes(memory.peak_bytes),
        top(|m| m.peak_bytes)
            .map(|t| format!(", the most of it held by {t}"))
            .unwrap_or_default()
    ));
    text.push_str(&format!(
        "        live at the end: {} in {}{}\n",
        human_bytes(memory.live_bytes),
        plural(memory.live_blocks, "block"),
        top(|m| m.live_bytes)
            .map(|t| format!(", the most of it allocated by {t}"))
            .unwrap_or_default()
    ));
    if memory.pages > memory.first_pages {
        let growers = growers(profile, &by_node);
        text.push_str(&format!(
            "        linear memory grew from {} to {} pages of 64 KiB, in {}\n",
            memory.first_pages, memory.pages, growers
        ));
    }
    if let Some(failed) = &memory.failed {
        text.push_str(&format!(
            "        out of memory: {} could not be allocated in {}\n",
            human_bytes(failed.bytes),
            path_name(profile, failed.node)
        ));
    }
}

/// The functions whose allocations grew linear memory, most pages first,
/// each named once however many paths it grew memory on.
fn growers(profile: &Profile, by_node: &[PathMemory]) -> String {
    let mut pages: Vec<(String, u64)> = Vec::new();
    for (node, path) in by_node.iter().enumerate().filter(|(_, m)| m.grows > 0) {
        let name = path_name(profile, node);
        match pages.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += path.grown_pages,
            None => pages.push((name, path.grown_pages)),
        }
    }
    pages.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    const SHOWN: usize = 3;
    let mut text = pages
        .iter()
        .take(SHOWN)
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if pages.len() > SHOWN {
        text.push_str(&format!(" and {} more", pages.len() - SHOWN));
    }
    text
}

/// The innermost function of `node`'s path, or where no instrumented call
/// was running.
fn path_name(profile: &Profile, node: usize) -> String {
    profile.nodes[node]
        .function
        .map_or_else(|| OUTSIDE.to_owned(), |f| profile.functions[f].name.clone())
}

/// Samples whose innermost frame is each function (a sampled profile's
/// stand-in for calls).
fn samples_in(profile: &Profile, graph: &CallGraph) -> Vec<u64> {
    let mut samples = vec![0; graph.functions.len()];
    for node in &profile.nodes {
        if let Some(f) = node.function {
            if let Some(s) = samples.get_mut(f) {
                *s += node.samples;
            }
        }
    }
    samples
}

/// Functions that ran, by self time, then calls (decreasing), then name.
fn ranked(graph: &CallGraph) -> Vec<FunctionId> {
    graph.ranked_by_self_time(graph.active_functions(), |stats| stats.calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{appendix_b, assert_golden, recursion};

    #[test]
    fn timed_summary_matches_golden() {
        assert_golden(
            "appendix_b.summary.txt",
            &render_summary(&appendix_b(true), DEFAULT_SUMMARY_TOP),
        );
    }

    #[test]
    fn untimed_summary_ranks_by_calls() {
        let text = render_summary(&recursion(false), 2);
        assert_golden("recursion.summary.txt", &text);
        assert!(text.contains("top 2 of 4 functions by calls"), "{text}");
        assert!(text.contains("     4378200  fib\n"), "{text}");
    }

    #[test]
    fn a_threaded_run_lists_each_thread_s_busy_time_and_share_of_the_run() {
        let mut profile = crate::fixtures::two_workers();
        profile.run.wall_nanos = 10_000;
        let text = render_summary(&profile, 5);
        assert!(
            text.contains(
                "threads: 3, their time inside instrumented calls against the run's 10.0 µs"
            ),
            "{text}"
        );
        assert!(
            text.contains("  thread         busy                calls\n"),
            "{text}"
        );
        assert!(
            text.contains("  main           0 ns   0.0%             0\n"),
            "{text}"
        );
        assert!(
            text.contains("  worker-1    5.00 µs  50.0%             5\n"),
            "{text}"
        );
        assert!(!text.contains("stopped in the middle"), "{text}");
    }

    #[test]
    fn a_thread_read_as_it_stood_in_the_middle_of_recording_is_named_with_its_calls() {
        let mut profile = crate::fixtures::two_workers();
        profile.threads[2].read = crate::profile::ThreadRead::MidRecord;
        let text = render_summary(&profile, 5);
        let name = &profile.threads[2].name;
        let calls = profile.threads[2].calls();
        assert!(
            text.contains(&format!(
                "  {name} stopped in the middle of recording a call (a trap, or the run's end \
                 stopped it there): its {calls} calls are as it stood"
            )),
            "{text}"
        );
    }

    #[test]
    fn with_rayon_core_instrumented_the_waits_have_a_column_of_their_own() {
        let text = render_summary(&crate::fixtures::rayon_pool(), 5);
        assert!(
            text.contains("  thread         busy           waiting                calls\n"),
            "{text}"
        );
        assert!(
            text.contains("  main        1.00 µs   5.0%    9.00 µs  45.0%             2\n"),
            "{text}"
        );
        assert!(
            text.contains("  thread 1    4.00 µs  20.0%    2.00 µs  10.0%             9\n"),
            "{text}"
        );
        assert!(text.contains("rayon-core is instrumented"), "{text}");
    }

    #[test]
    fn with_frames_the_summary_gives_their_rate_and_the_slowest_frame_s_calls() {
        use crate::profile::{Frame, FrameCalls, Frames};
        let mut profile = crate::fixtures::ProfileBuilder::timed()
            .path(&["frame"], 3, 9.0)
            .path(&["frame", "row"], 120, 6.0)
            .build();
        let row = profile.nodes.len() - 1;
        let frame = |index, calls: Vec<FrameCalls>| Frame {
            index,
            start_nanos: 0.0,
            duration_nanos: 5e6,
            calls,
        };
        profile.frames = Some(Frames {
            count: 3,
            span_nanos: 32e6,
            median_nanos: 1e6,
            p95_nanos: 5e6,
            p99_nanos: 5e6,
            worst_nanos: 5e6,
            worst: vec![frame(
                1,
                vec![
                    FrameCalls {
                        node: row - 1,
                        calls: 1,
                        inclusive_nanos: 4e6,
                    },
                    FrameCalls {
                        node: row,
                        calls: 40,
                        inclusive_nanos: 2e6,
                    },
                ],
            )],
        });
        let text = render_summary(&profile, 3);
        assert!(
            text.contains("frames: 3 frames in 32.0 ms (62.5 per second)"),
            "{text}"
        );
        assert!(
            text.contains("slowest, frame 1 (5.00 ms): frame x1 4.00 ms, row x40 2.00 ms"),
            "{text}"
        );
        // A frame in which nothing instrumented ran says so.
        profile.frames.as_mut().unwrap().worst = vec![frame(2, Vec::new())];
        let text = render_summary(&profile, 3);
        assert!(
            text.contains("frame 2 (5.00 ms): no instrumented call"),
            "{text}"
        );
    }

    #[test]
    fn with_memory_the_summary_names_who_held_the_peak_and_who_leaked() {
        let text = render_summary(&crate::fixtures::memory_profile(), 3);
        assert!(
            text.contains(
                "memory: 5 allocations, 1.1 KiB; peak 400 B, the most of it held by inner 400 B\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "live at the end: 400 B in 1 block, the most of it allocated by inner 400 B"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_growth_line_names_each_function_once_most_pages_first() {
        let mut profile = crate::fixtures::memory_profile();
        let memory = profile.memory.as_mut().unwrap();
        (memory.first_pages, memory.pages) = (17, 24);
        // The root grew memory once, `inner` on two paths, `outer` once.
        for (path, pages) in memory.paths.iter_mut().zip([1, 2, 3, 2]) {
            (path.grows, path.grown_pages) = (1, pages);
        }
        let text = render_summary(&profile, 3);
        assert!(
            text.contains(
                "linear memory grew from 17 to 24 pages of 64 KiB, in inner, outer, \
                 (outside instrumented code)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn top_zero_lists_nothing_and_does_not_panic() {
        let text = render_summary(&appendix_b(true), 0);
        assert!(text.contains("top 0 of 9 functions"), "{text}");
    }
}
