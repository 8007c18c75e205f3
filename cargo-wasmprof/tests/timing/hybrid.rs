//! The hybrid profile (`--timer none --sample`) against `--timer host` on
//! the thesis's validation program: exact counts, and the time of a shared
//! callee split among its callers as the clock splits it.
//!
//! A timing test, as `accuracy.rs`: nothing runs beside it
//! (`timing::alone`), and a run spoiled by a busy moment of the shared machine may be tried
//! again, up to three times; a wrong attribution fails them all.

use crate::support::*;

const ATTEMPTS: usize = 3;
/// The largest difference between the two shares of one caller.
const TOLERANCE: f64 = 0.08;

/// Inclusive time of `callee` under each caller, as shares of its total.
fn split_by_caller(profile: &Profile, callee: &str) -> std::collections::BTreeMap<String, f64> {
    let mut split = std::collections::BTreeMap::new();
    for (index, node) in profile.nodes.iter().enumerate() {
        let Some(f) = node.function else { continue };
        if profile.functions[f].name != callee {
            continue;
        }
        let caller = profile
            .caller_function(index)
            .map(|c| profile.functions[c].name.clone())
            .unwrap_or_default();
        *split.entry(caller).or_insert(0.0) += node.inclusive_nanos;
    }
    let total: f64 = split.values().sum();
    split.values_mut().for_each(|t| *t /= total);
    split
}

#[test]
fn a_hybrid_profile_has_exact_counts_and_the_per_caller_split_of_timer_host() {
    let _alone = timing::alone();
    let mut failures = Vec::new();
    for attempt in 1..=ATTEMPTS {
        match one_comparison() {
            Ok(()) => return,
            Err(why) => failures.push(format!("run {attempt}: {why}")),
        }
    }
    panic!(
        "the hybrid split disagreed with --timer host:\n{}",
        failures.join("\n")
    );
}

/// One hybrid run and one timed run; counts and the report are asserted,
/// the time split returned as an error when it disagrees.
fn one_comparison() -> Result<(), String> {
    let hybrid = wasmprof(&[
        "run",
        "-p",
        "appendix-b",
        "--release",
        "--timer",
        "none",
        "--sample",
    ]);
    hybrid.assert_success();
    assert!(
        hybrid.stderr.contains("NOTE: hybrid profile"),
        "{}",
        hybrid.stderr
    );
    let profile = hybrid.profile();
    assert_eq!(
        profile.timer.mode,
        wasmprof_profile::profile::TimerMode::Hybrid
    );
    let calls = calls_by_function(&profile);
    assert_eq!(calls["appendix_b::add"], 52_500_000);
    assert_eq!(calls["appendix_b::f_quarter"], 7);
    assert_eq!(calls["appendix_b::f_half"], 3);
    let info = profile.timer.hybrid.clone().unwrap();
    assert!(
        info.matched_samples * 2 > info.samples,
        "most samples are in the program: {info:?}"
    );
    // The report says which figures are sampled.
    let input = hybrid.profile_path();
    let report = wasmprof(&["report", "--input", input.to_str().unwrap()]);
    report.assert_success();
    assert!(
        report.stdout.contains("counts exact, times sampled"),
        "{}",
        report.stdout
    );
    // What was not matched, and why, is in the long text.
    let explained = wasmprof(&["report", "--input", input.to_str().unwrap(), "--explain"]);
    explained.assert_success();
    assert!(
        explained
            .stdout
            .contains("outside every instrumented function"),
        "{}",
        explained.stdout
    );

    // `f_quarter` is called from f_main_4, f_half_2 and main: its time per
    // caller is measured, not apportioned by counts (4, 2 and 1 calls).
    let host = wasmprof(&["run", "-p", "appendix-b", "--release", "--timer", "host"]);
    host.assert_success();
    let measured = split_by_caller(&host.profile(), "appendix_b::f_quarter");
    let sampled = split_by_caller(&profile, "appendix_b::f_quarter");
    assert_eq!(
        measured.keys().collect::<Vec<_>>(),
        sampled.keys().collect::<Vec<_>>()
    );
    for (caller, share) in &measured {
        let other = sampled[caller];
        if (share - other).abs() >= TOLERANCE {
            return Err(format!(
                "{caller}: {share:.3} with --timer host, {other:.3} sampled ({} of {} samples matched)",
                info.matched_samples, info.samples
            ));
        }
    }
    Ok(())
}
