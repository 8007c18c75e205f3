//! Time the clock could not give, from the engine's samples of the same run.
//!
//! A node whose calls were found too short to time is timed again only now
//! and then, so one long call among its many short ones can pass untimed,
//! its time left in its caller's self time; a counted function is never
//! timed at all. The engine's sampler saw those calls all the same:
//! samples whose stack leads into the node's subtree, or into a counted
//! function's frame (which gets a node of its own, `counted.rs`). Each
//! such node the samples saw more of than the clock gets a sampled time,
//! marked as estimated from samples; every node its clock timed keeps its
//! measured time.
//!
//! Estimates never break the tree, and use what the clock measured: a
//! caller's time, less what its measured children took, is the room its
//! estimated children and its own code share, and they share it as the
//! samples do (the samples' proportions, the clock's total). A sampler that
//! stalls at the edge of a call loses some of the call to whatever ran
//! next, and the samples alone would then give too little; sampling noise
//! can give too much. An estimate never falls below what was measured.

use super::counted::CountedNodes;
use super::matching::{Located, TreeMatcher};
use super::tree::Span;
use crate::profile::{CoverageInfo, Profile};

/// Gives the nodes of `profile` (an instrumented run timed by the host
/// clock) that had calls too short to time the time `samples` (the
/// engine's sampling profile of the same run, `timeline` its samples in
/// time order) saw in them.
pub(crate) fn cover_untimed(profile: &mut Profile, samples: &Profile, timeline: &[Span]) {
    let mut counted = CountedNodes::new(profile);
    let (own, sampled) = sampled_times(profile, &mut counted, samples, timeline);
    let measured: Vec<f64> = profile.nodes.iter().map(|n| n.inclusive_nanos).collect();
    let children = profile.children();
    let estimated: Vec<bool> = profile
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let untimed = n.partly_timed || profile.is_counted_path(n);
            n.function.is_some() && untimed && sampled[i] > measured[i]
        })
        .collect();

    // Bottom up (children come after their parents): an estimate holds its
    // children's times, measured or estimated.
    let mut time = measured.clone();
    for index in (1..profile.nodes.len()).rev() {
        if estimated[index] {
            let below: f64 = children[index].iter().map(|&c| time[c]).sum();
            time[index] = sampled[index].max(below).max(measured[index]);
        }
    }
    // Top down: the room a caller leaves, shared as the samples share it.
    for parent in 1..profile.nodes.len() {
        if profile.nodes[parent].function.is_none() {
            continue;
        }
        let (mut fixed, mut floor, mut above) = (0.0, 0.0, 0.0);
        for &child in &children[parent] {
            if estimated[child] {
                floor += measured[child];
                above += time[child] - measured[child];
            } else {
                fixed += time[child];
            }
        }
        let room = (time[parent] - fixed - floor).max(0.0);
        let sampled_room = above + own[parent];
        if above > 0.0 && sampled_room > 0.0 {
            let share = room / sampled_room;
            for &child in children[parent].iter().filter(|&&c| estimated[c]) {
                time[child] = measured[child] + share * (time[child] - measured[child]);
            }
        }
    }

    let mut info = CoverageInfo::default();
    for (index, node) in profile.nodes.iter_mut().enumerate() {
        if estimated[index] && time[index] > measured[index] {
            info.nodes += 1;
            info.added_nanos += time[index] - measured[index];
            node.inclusive_nanos = time[index];
            node.sampled = true;
        }
    }
    counted.drop_empty(profile);
    info.samples = samples.nodes.iter().map(|n| n.samples).sum();
    profile.timer.coverage = Some(info);
}

/// The time each sample stands for, used only as a proportion: the clock
/// gives the totals. A sample stands for the time nearer to it than to the
/// samples before and after it, but for no more than [`STALL`] times the
/// intervals around it on either side. A sampler that stalls (at a page's
/// start, or when the machine is busy: 27 ms without a sample at the end
/// of a long call, under load) knows nothing of what ran in the gap, and
/// giving the gap to the samples at its edges hands the end of a long call
/// to whatever ran next; the gap is left to the proportions of the samples
/// that were taken. The intervals compared with are the nearby ones, not
/// the run's: a sampler can keep a slower pace for a whole call (one in
/// 500 µs through a deep sort, one in 100 µs elsewhere), and that pace is
/// no stall. Without a timeline, each node's samples weigh their deltas.
fn sample_weights(
    samples: &Profile,
    timeline: &[Span],
    same_place: impl Fn(usize, usize) -> bool,
) -> Vec<f64> {
    if timeline.is_empty() {
        return samples.self_nanos();
    }
    // `gaps[i]`: the time between sample `i` and the one after it, which
    // is sample `i`'s span (the mean interval for the last one).
    let gaps: Vec<f64> = timeline.iter().map(|s| s.nanos).collect();
    let capped = without_stalls(&gaps);
    // A gap between two samples that lead to one place is surely that
    // place's time: only a gap where the place changed is in doubt.
    let gaps: Vec<f64> = (0..gaps.len())
        .map(|i| match timeline.get(i + 1) {
            Some(next) if same_place(timeline[i].node, next.node) => gaps[i],
            _ => capped[i],
        })
        .collect();
    let mut weights = vec![0.0; samples.nodes.len()];
    for (i, span) in timeline.iter().enumerate() {
        let after = gaps[i];
        // The first sample's delta runs from the sampler's start (a
        // module's compilation, a process's start-up), not from a sample.
        let before = if i == 0 { after } else { gaps[i - 1] };
        if let Some(weight) = weights.get_mut(span.node) {
            *weight += (before + after) / 2.0;
        }
    }
    weights
}

/// How many times longer than the intervals around it a gap between two
/// samples may be before it counts as a stall.
const STALL: f64 = 4.0;
/// How many intervals on each side of a gap are its surroundings.
const AROUND: usize = 8;

/// `gaps` with each stall cut to [`STALL`] times the median of the gaps
/// around it.
fn without_stalls(gaps: &[f64]) -> Vec<f64> {
    let mut around = Vec::with_capacity(2 * AROUND);
    gaps.iter()
        .enumerate()
        .map(|(i, &gap)| {
            around.clear();
            let window = i.saturating_sub(AROUND)..(i + AROUND + 1).min(gaps.len());
            around.extend(window.filter(|&j| j != i).map(|j| gaps[j]));
            if around.len() < 4 {
                return gap;
            }
            let middle = around.len() / 2;
            let (_, median, _) = around.select_nth_unstable_by(middle, f64::total_cmp);
            if *median > 0.0 {
                gap.min(*median * STALL)
            } else {
                gap
            }
        })
        .collect()
}

/// Each node's sampled time: its own (the samples that end at it) and its
/// subtree's. Counted functions the samples ran in get their nodes first.
fn sampled_times(
    profile: &mut Profile,
    counted: &mut CountedNodes,
    samples: &Profile,
    timeline: &[Span],
) -> (Vec<f64>, Vec<f64>) {
    let matcher = TreeMatcher::new(profile);
    let located: Vec<Option<Located>> = samples
        .nodes
        .iter()
        .enumerate()
        .map(|(index, node)| {
            let names = samples
                .stack(index)
                .into_iter()
                .map(|f| samples.functions[f].name.as_str());
            Some(matcher.locate(names)).filter(|l| node.samples > 0 && l.how.is_placed())
        })
        .collect();
    let same_place = |a: usize, b: usize| match (&located[a], &located[b]) {
        (Some(a), Some(b)) => a.node == b.node && a.counted == b.counted,
        (None, None) => true,
        _ => false,
    };
    let sampled_self = sample_weights(samples, timeline, same_place);
    let placed: Vec<(Located, f64)> = located
        .into_iter()
        .enumerate()
        .filter_map(|(index, l)| Some((l?, sampled_self[index])))
        .collect();
    let mut time = vec![0.0; profile.nodes.len()];
    for (located, weight) in placed {
        let node = counted.node(profile, located.node, &located.counted);
        time.resize(profile.nodes.len(), 0.0);
        time[node] += weight;
    }
    let own = time.clone();
    for index in (1..profile.nodes.len()).rev() {
        if let Some(parent) = profile.nodes[index].parent {
            time[parent] += time[index];
        }
    }
    (own, time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ProfileBuilder, node_at as node_of};

    const MS: f64 = 1e6;

    /// A sampling profile: `ms` of self time on each stack, one sample each.
    fn samples(stacks: &[(&[&str], f64)]) -> Profile {
        let mut builder = ProfileBuilder::timed();
        for (stack, ms) in stacks {
            builder = builder.path(stack, 0, ms * MS);
        }
        let mut profile = builder.build();
        for node in &mut profile.nodes[1..] {
            node.samples = 1;
        }
        profile
    }

    /// `run` (timed, 30 ms) calling `step` 10,001 times; the clock timed
    /// none of `step`'s calls, and its one long call is in `run`'s self
    /// time.
    fn long_call() -> Profile {
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "run"], 1, 30.0 * MS)
            .path(&["main", "run", "step"], 10_001, 0.0)
            .build();
        let step = node_of(&profile, &["main", "run", "step"]);
        profile.nodes[step].partly_timed = true;
        profile
    }

    #[test]
    fn a_long_call_the_clock_missed_is_given_its_sampled_time() {
        let mut profile = long_call();
        cover_untimed(
            &mut profile,
            &samples(&[(&["main", "run", "step"], 28.0), (&["main", "run"], 1.0)]),
            &[],
        );
        // The clock's 30 ms of `run`, shared as the samples share them.
        let step = node_of(&profile, &["main", "run", "step"]);
        let expected = 30.0 * MS * 28.0 / 29.0;
        assert!((profile.nodes[step].inclusive_nanos - expected).abs() < 1.0);
        assert!(profile.nodes[step].sampled && profile.nodes[step].partly_timed);
        let run = node_of(&profile, &["main", "run"]);
        assert_eq!(profile.nodes[run].inclusive_nanos, 30.0 * MS, "measured");
        assert!(!profile.nodes[run].sampled);
        let info = profile.timer.coverage.clone().unwrap();
        assert_eq!(info.nodes, 1);
        assert!((info.added_nanos - expected).abs() < 1.0);
        crate::profile::validate(&profile).unwrap();
    }

    #[test]
    fn a_counted_function_the_samples_ran_in_gets_a_path_under_its_caller() {
        // `sort` is counted only: no node, no clock; its one long call is
        // in `run`'s self time. The samples ran in its frame, under `run`.
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "run"], 1, 30.0 * MS)
            .counted("sort", 10_001)
            .build();
        cover_untimed(
            &mut profile,
            &samples(&[
                (&["main", "run", "sort", "core::slice::sort"], 27.0),
                (&["main", "run"], 3.0),
                (&["main", "other", "sort"], 5.0),
            ]),
            &[],
        );
        let sort = node_of(&profile, &["main", "run", "sort"]);
        assert!((profile.nodes[sort].inclusive_nanos - 27.0 * MS).abs() < 1.0);
        assert!(profile.nodes[sort].sampled);
        assert_eq!(profile.nodes[sort].calls, 0, "the calls are the function's");
        let sort_function = profile.nodes[sort].function.unwrap();
        assert_eq!(profile.functions[sort_function].calls, Some(10_001));
        // Under `main`, whose measured time `run` fills, the samples of
        // `sort` (reached through code not instrumented) find no room: no
        // empty path is kept.
        assert_eq!(profile.nodes.len(), 4);
        crate::profile::validate(&profile).unwrap();
    }

    #[test]
    fn a_counted_path_left_no_room_is_not_kept() {
        // `run`'s measured time is all its measured callee's: the samples
        // in `sort` (the clock's edges) leave it nothing, and no empty
        // path is added.
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "run"], 1, 0.0)
            .path(&["main", "run", "parse"], 1, 10.0 * MS)
            .counted("sort", 3)
            .build();
        let nodes = profile.nodes.len();
        cover_untimed(
            &mut profile,
            &samples(&[
                (&["main", "run", "sort"], 1.0),
                (&["main", "run", "parse"], 9.0),
            ]),
            &[],
        );
        assert_eq!(profile.nodes.len(), nodes);
        crate::profile::validate(&profile).unwrap();
    }

    #[test]
    fn estimates_give_way_to_what_the_caller_measured() {
        // The samples saw more in `step` than `run` measured in all: the
        // edges of a call, where a sample stands for time before it began.
        let mut profile = long_call();
        cover_untimed(
            &mut profile,
            &samples(&[(&["main", "run", "step"], 31.0)]),
            &[],
        );
        let step = node_of(&profile, &["main", "run", "step"]);
        assert_eq!(profile.nodes[step].inclusive_nanos, 30.0 * MS);
        crate::profile::validate(&profile).unwrap();
    }

    #[test]
    fn measured_nodes_keep_their_time_and_estimates_never_fall_below_it() {
        let mut profile = long_call();
        let step = node_of(&profile, &["main", "run", "step"]);
        profile.nodes[step].inclusive_nanos = 5.0 * MS;
        // Fewer samples than measured: the measurement stands.
        cover_untimed(
            &mut profile,
            &samples(&[(&["main", "run", "step"], 3.0)]),
            &[],
        );
        assert_eq!(profile.nodes[step].inclusive_nanos, 5.0 * MS);
        assert!(!profile.nodes[step].sampled);
        assert_eq!(profile.timer.coverage.unwrap().nodes, 0);
    }

    /// `long_call`'s `step` and `run` sampled one after the other, each
    /// sample `(in step, ms since the sample before)`. A sample's span runs
    /// to the next sample (the last one's, its own delta).
    fn step_share_of(timeline: &[(bool, f64)]) -> f64 {
        let mut profile = long_call();
        let samples = samples(&[(&["main", "run", "step"], 0.0), (&["main", "run"], 0.0)]);
        let step = node_of(&samples, &["main", "run", "step"]);
        let run = node_of(&samples, &["main", "run"]);
        let timeline: Vec<Span> = (0..timeline.len())
            .map(|i| {
                let (in_step, own) = timeline[i];
                let until_next = timeline.get(i + 1).map_or(own, |next| next.1);
                Span {
                    node: if in_step { step } else { run },
                    start_nanos: 0.0,
                    nanos: until_next * MS,
                }
            })
            .collect();
        cover_untimed(&mut profile, &samples, &timeline);
        let at = node_of(&profile, &["main", "run", "step"]);
        profile.nodes[at].inclusive_nanos / (30.0 * MS)
    }

    #[test]
    fn a_stall_in_the_sampler_where_the_stack_changed_is_left_to_the_samples_taken() {
        // `step` sampled every millisecond for 20 ms, then the sampler
        // stalled for 27 ms until a sample in `run`, then one more there.
        // Nothing says when in the gap the call ended: the gap is cut to
        // four times the intervals around it, and the clock's 30 ms are
        // shared as the samples taken share them.
        let mut timeline = vec![(true, 1.0); 20];
        timeline.extend([(false, 27.0), (false, 1.0)]);
        // `step`: 19 samples of 1 ms, the last 1/2 + 4/2; `run`: 4/2 + 1/2,
        // then 1.
        let share = step_share_of(&timeline);
        assert!((share - 21.5 / 25.0).abs() < 1e-9, "{share}");
    }

    #[test]
    fn a_gap_between_two_samples_of_one_place_is_that_place_s_time() {
        // The sampler kept a slower pace through a deep call: its gaps
        // there are the call's, however long beside the others.
        let mut timeline = vec![(false, 1.0); 10];
        timeline.extend([(true, 1.0), (true, 10.0), (true, 10.0), (false, 1.0)]);
        timeline.extend(vec![(false, 1.0); 9]);
        // `step`: 1/2 + 10/2, 10, 10/2 + 1/2 = 21 ms; `run`: 20 samples
        // of 1 ms. Cut to four intervals, `step`'s gaps would give it 9.
        let share = step_share_of(&timeline);
        assert!((share - 21.0 / 41.0).abs() < 1e-9, "{share}");
    }

    #[test]
    fn a_few_samples_are_weighed_by_their_gaps_as_they_are() {
        // Too few samples to know the sampler's usual interval: the
        // halves of each gap, uncapped.
        let mut profile = long_call();
        let samples = samples(&[(&["main", "run", "step"], 0.0), (&["main", "run"], 0.0)]);
        let step = node_of(&samples, &["main", "run", "step"]);
        let run = node_of(&samples, &["main", "run"]);
        let span = |node, ms: f64| Span {
            node,
            start_nanos: 0.0,
            nanos: ms * MS,
        };
        // 10 ms from the first sample to the second; the last one's span
        // is the mean interval, 10 ms too.
        let timeline = [span(step, 10.0), span(run, 10.0)];
        cover_untimed(&mut profile, &samples, &timeline);
        // The first sample has no gap before it and takes the one after
        // twice; the last takes its own twice: 10 ms each.
        let at = node_of(&profile, &["main", "run", "step"]);
        assert!((profile.nodes[at].inclusive_nanos - 30.0 * MS * 10.0 / 20.0).abs() < 1.0);
    }

    #[test]
    fn samples_of_the_clock_s_calibration_are_not_the_caller_s() {
        // CI saw this in Chromium: the first call calibrates the clock
        // before its start read, the sampler stalled there for 13 ms, and
        // those samples, counted as `run`'s own, took a seventh of `step`'s
        // share of `run`'s measured time.
        let mut profile = long_call();
        cover_untimed(
            &mut profile,
            &samples(&[
                (
                    &[
                        "main",
                        "run",
                        "wasmprof_core::guard::enter_slow",
                        "wasmprof_core::calibration::calibrate",
                        "wasm-to-js",
                    ],
                    13.0,
                ),
                (&["main", "run", "step"], 29.0),
                (&["main", "run"], 1.0),
            ]),
            &[],
        );
        let step = node_of(&profile, &["main", "run", "step"]);
        let expected = 30.0 * MS * 29.0 / 30.0;
        assert!((profile.nodes[step].inclusive_nanos - expected).abs() < 1.0);
    }

    #[test]
    fn samples_a_stalled_sampler_lost_are_made_up_from_the_clock() {
        // The sampler saw 20 ms of `step` and nothing else of `run`'s
        // 30 ms: the rest went to whatever ran after the stall.
        let mut profile = long_call();
        cover_untimed(
            &mut profile,
            &samples(&[(&["main", "run", "step"], 20.0)]),
            &[],
        );
        let step = node_of(&profile, &["main", "run", "step"]);
        assert_eq!(profile.nodes[step].inclusive_nanos, 30.0 * MS);
    }
}
