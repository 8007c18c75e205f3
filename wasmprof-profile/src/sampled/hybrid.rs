//! The hybrid profile: exact counts and call paths from instrumentation
//! without a clock (`--timer none`), times from the engine's samples of the
//! same run. Each sample is attributed to the calling-context node its stack
//! leads to, so the time of `shared` under `from_a` and under `from_b` stays
//! apart: gprof's own hybrid apportions a callee's time by call counts.
//!
//! A sample's stack is walked outermost first, following the tree through
//! every frame that names an instrumented function; frames of functions
//! that were not instrumented (small ones, the standard library, JavaScript)
//! are passed over, so their time is their nearest instrumented caller's
//! self time. A counted function has no node, and the samples that ran in
//! its frame give it one under that caller's (`counted.rs`). An async function's polls run its body, a
//! closure to the engine (`app::load::{{closure}}`): that frame stands for
//! the async function.

use std::collections::BTreeMap;

use super::counted::CountedNodes;
use super::matching::{Placement, TreeMatcher};
use crate::profile::{HybridInfo, Profile, TimerMode, UnmatchedSamples};

/// Samples of no instrumented function: JavaScript, the engine, idle.
const OUTSIDE: &str =
    "outside every instrumented function (JavaScript, the engine's own work, idle)";
/// Samples of the profiler's runtime: its time is no function's.
const RUNTIME: &str = "in the profiler's own runtime (a guard's entry or exit, registering a function, calibrating the clock), left out";
/// Samples whose stack leaves the tree: the engine missed or credited a
/// frame to its caller.
const OFF_TREE: &str = "a path the calling-context tree does not have (attributed to the deepest node found on it, or left out when there is none)";
/// Samples whose stack skipped instrumented calls the tree has (inlined
/// into their caller, so the engine never saw their frames), where only one
/// path of the tree fits: matched through the tree.
const BRIDGED: &str = "stacks without the frames of inlined instrumented calls, matched through the tree where only one path fits (counted as matched)";
/// Samples whose stack fits several paths of the tree.
const AMBIGUOUS: &str = "stacks without the frames of inlined calls that fit several paths of the tree (placed at the deepest node those paths share, not guessed)";

/// Puts the times of `samples` (a sampling profile of the same run) on
/// `profile`'s nodes and makes it a hybrid profile.
pub(crate) fn attribute(profile: &mut Profile, samples: &Profile) {
    let matcher = TreeMatcher::new(profile);
    let sampled_self = samples.self_nanos();
    let mut placed = Vec::new();
    let mut unmatched: BTreeMap<&'static str, (u64, f64)> = BTreeMap::new();
    let (mut total, mut matched) = (0, 0);
    for (index, node) in samples.nodes.iter().enumerate() {
        if node.samples == 0 {
            continue;
        }
        total += node.samples;
        let weight = sampled_self[index];
        let located = matcher.locate(
            samples
                .stack(index)
                .into_iter()
                .map(|f| samples.functions[f].name.as_str()),
        );
        let reason = match located.how {
            Placement::Outside => Some(OUTSIDE),
            Placement::Runtime => Some(RUNTIME),
            Placement::Matched => None,
            Placement::Bridged => Some(BRIDGED),
            Placement::Ambiguous => Some(AMBIGUOUS),
            Placement::OffTree => Some(OFF_TREE),
        };
        if let Some(reason) = reason {
            let entry = unmatched.entry(reason).or_default();
            entry.0 += node.samples;
            entry.1 += weight;
        }
        if located.how.is_placed() {
            if matches!(located.how, Placement::Matched | Placement::Bridged) {
                matched += node.samples;
            }
            placed.push((located, weight));
        }
    }
    let mut counted = CountedNodes::new(profile);
    let mut own = vec![0.0; profile.nodes.len()];
    for (located, weight) in placed {
        let node = counted.node(profile, located.node, &located.counted);
        own.resize(profile.nodes.len(), 0.0);
        own[node] += weight;
    }
    // Inclusive times: parents come before children.
    let mut inclusive = own;
    for index in (1..profile.nodes.len()).rev() {
        if let Some(parent) = profile.nodes[index].parent {
            inclusive[parent] += inclusive[index];
        }
    }
    for (node, time) in profile.nodes.iter_mut().zip(inclusive) {
        node.inclusive_nanos = time;
        node.partly_timed = false;
        node.sampled = false;
    }
    counted.drop_empty(profile);
    profile.timer.mode = TimerMode::Hybrid;
    profile.timer.resolution_nanos = None;
    profile.timer.sample_interval_nanos = samples.timer.sample_interval_nanos;
    profile.timer.hybrid = Some(HybridInfo {
        samples: total,
        matched_samples: matched,
        unmatched: unmatched
            .into_iter()
            .map(|(reason, (samples, nanos))| UnmatchedSamples {
                reason: reason.to_owned(),
                samples,
                nanos,
            })
            .collect(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    /// `main` calls `shared` through `from_a` (3 calls) and `from_b` (1).
    fn instrumented() -> Profile {
        ProfileBuilder::untimed()
            .path(&["main", "from_a", "shared"], 3, 0.0)
            .path(&["main", "from_b", "shared"], 1, 0.0)
            .build()
    }

    /// The engine saw `shared` mostly under `from_b`, a JavaScript frame in
    /// between, and some time outside wasm.
    fn samples() -> Profile {
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "from_a", "shared"], 0, 10.0)
            .path(&["main", "glue (x.js:1)", "from_b", "shared"], 0, 30.0)
            .path(&["main", "from_b", "helper", "shared"], 0, 0.0)
            .path(&["(program)"], 0, 5.0)
            .path(&["main", "from_a", "unknown_path", "from_b"], 0, 2.0)
            .build();
        for node in &mut profile.nodes {
            node.samples = 1;
        }
        profile.nodes[0].samples = 0;
        profile
    }

    fn time_of(profile: &Profile, path: &[&str]) -> f64 {
        profile
            .nodes
            .iter()
            .enumerate()
            .find(|(i, _)| {
                let names: Vec<&str> = profile
                    .stack(*i)
                    .iter()
                    .map(|&f| profile.functions[f].name.as_str())
                    .collect();
                names == path
            })
            .map(|(_, n)| n.inclusive_nanos)
            .unwrap()
    }

    #[test]
    fn a_shared_callee_keeps_its_time_per_caller_and_counts_stay_exact() {
        let mut profile = instrumented();
        let calls: Vec<u64> = profile.nodes.iter().map(|n| n.calls).collect();
        attribute(&mut profile, &samples());
        assert_eq!(profile.timer.mode, TimerMode::Hybrid);
        assert_eq!(
            calls,
            profile.nodes.iter().map(|n| n.calls).collect::<Vec<_>>()
        );
        assert_eq!(time_of(&profile, &["main", "from_a", "shared"]), 10.0);
        // Through the JavaScript frame, which is passed over.
        assert_eq!(time_of(&profile, &["main", "from_b", "shared"]), 30.0);
        // `from_b` under `from_a` is not in the tree: its 2 go to `from_a`.
        assert_eq!(time_of(&profile, &["main", "from_a"]), 12.0);
        let info = profile.timer.hybrid.as_ref().unwrap();
        let reasons: Vec<(&str, u64, f64)> = info
            .unmatched
            .iter()
            .map(|u| (u.reason.as_str(), u.samples, u.nanos))
            .collect();
        assert!(reasons.contains(&(OUTSIDE, 1, 5.0)), "{reasons:?}");
        assert!(
            reasons.iter().any(|r| r.0 == OFF_TREE && r.2 == 2.0),
            "{reasons:?}"
        );
    }

    #[test]
    fn a_frame_inlined_away_is_bridged_through_the_tree() {
        let mut profile = ProfileBuilder::untimed()
            .path(&["start", "workload", "fib", "fib"], 10, 0.0)
            .build();
        // The engine saw `start > fib > fib`: `workload` was inlined.
        let mut samples = ProfileBuilder::timed()
            .path(&["start", "fib", "fib"], 0, 8.0)
            .build();
        for node in &mut samples.nodes[1..] {
            node.samples = 1;
        }
        attribute(&mut profile, &samples);
        assert_eq!(time_of(&profile, &["start", "workload", "fib", "fib"]), 8.0);
        let info = profile.timer.hybrid.unwrap();
        assert_eq!(info.matched_samples, info.samples);
        assert!(info.unmatched.iter().any(|u| u.reason == BRIDGED));
    }

    #[test]
    fn a_counted_function_s_samples_are_its_own_under_its_caller() {
        let mut profile = ProfileBuilder::untimed()
            .path(&["main", "parse", "scan"], 4, 0.0)
            .counted("peek", 100)
            .build();
        // `peek` is counted only: between `parse` and `scan`, and at the top.
        let mut samples = ProfileBuilder::timed()
            .path(&["main", "parse", "peek", "scan"], 0, 6.0)
            .path(&["main", "parse", "peek"], 0, 3.0)
            .build();
        for node in &mut samples.nodes[1..] {
            node.samples = 1;
        }
        attribute(&mut profile, &samples);
        // Between two instrumented frames, `peek`'s frame is passed over:
        // `scan`'s node is under `parse`'s.
        assert_eq!(time_of(&profile, &["main", "parse", "scan"]), 6.0);
        // At the top, the samples are `peek`'s, on a path of its own.
        assert_eq!(time_of(&profile, &["main", "parse", "peek"]), 3.0);
        assert_eq!(time_of(&profile, &["main", "parse"]), 9.0);
        crate::profile::validate(&profile).unwrap();
        let info = profile.timer.hybrid.unwrap();
        assert!(info.unmatched.is_empty(), "{:?}", info.unmatched);
    }

    #[test]
    fn an_async_function_s_body_closure_stands_for_it() {
        let mut profile = ProfileBuilder::untimed()
            .path(
                &["app::run", "app::batch", "app::load", "app::work"],
                4,
                0.0,
            )
            .future(&["app::run"], 3, 1, 0, None)
            .future(&["app::run", "app::batch"], 3, 1, 0, None)
            .future(&["app::run", "app::batch", "app::load"], 9, 4, 0, None)
            .build();
        // The executor polls run's body, which polls batch's, and so on; a
        // closure of a synchronous function would not stand for it.
        let mut samples = ProfileBuilder::timed()
            .path(
                &[
                    "queue (x.js:1)",
                    "app::run::{{closure}}",
                    "<wasmprof::future::Instrumented<F> as core::future::future::Future>::poll",
                    "app::batch::{{closure}}",
                    "app::load::{{closure}}",
                    "app::work",
                ],
                0,
                7.0,
            )
            .path(&["app::run::{{closure}}", "app::work::{{closure}}"], 0, 2.0)
            .build();
        for node in &mut samples.nodes[1..] {
            node.samples = 1;
        }
        attribute(&mut profile, &samples);
        assert_eq!(
            time_of(
                &profile,
                &["app::run", "app::batch", "app::load", "app::work"]
            ),
            7.0
        );
        assert_eq!(
            time_of(&profile, &["app::run"]),
            9.0,
            "the closure of work is run's"
        );
        // Only the JavaScript frame alone, which holds no time, is outside.
        let info = profile.timer.hybrid.unwrap();
        assert!(
            info.unmatched.iter().all(|u| u.nanos == 0.0),
            "{:?}",
            info.unmatched
        );
    }
}
