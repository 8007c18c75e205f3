//! A program with far more call paths than the call tree holds
//! (`examples/walks`): every function keeps its exact count when the tree
//! is full, its calls past the capacity counted under `<overflow>`; the
//! capacity is a setting, recorded in the profile.

use crate::support::*;

/// The counts `walks` keeps of its own calls, from its output.
fn counted_by_the_program(stdout: &str) -> Vec<(String, u64)> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("walks: "))
        .unwrap_or_else(|| panic!("no counts in {stdout}"));
    line.split(" (")
        .next()
        .unwrap()
        .split(", ")
        .map(|pair| {
            let (name, calls) = pair.split_once(' ').unwrap();
            (format!("walks::{name}"), calls.parse().unwrap())
        })
        .collect()
}

#[test]
fn a_full_call_tree_keeps_every_function_s_exact_count() {
    for host in ["node", "wasmtime"] {
        let run = wasmprof(&[
            "run",
            "--host",
            host,
            "-p",
            "walks",
            "--max-nodes",
            "256",
            "--",
            "2000",
            "12",
            "300",
        ]);
        run.assert_success();
        let profile = run.profile();
        assert_eq!(profile.run.max_nodes, Some(256));
        let calls = calls_by_function(&profile);
        for (function, expected) in counted_by_the_program(&run.stdout) {
            assert_eq!(calls[&function], expected, "{host}: {function}");
        }
        // The deep recursion came last, all of it past the capacity.
        assert_eq!(calls["walks::deep"], 301);
        assert!(
            profile.overflow_calls > 10_000,
            "{}",
            profile.overflow_calls
        );
        assert!(
            run.stderr.contains(
                "calls came after the call tree was full (256 nodes; more with --max-nodes)"
            ),
            "{}",
            run.stderr
        );
        // Which functions lost their paths is in the long text.
        let input = run.profile_path();
        let explained = wasmprof(&["report", "--input", input.to_str().unwrap(), "--explain"]);
        explained.assert_success();
        assert!(
            explained.stdout.contains("walks::deep (301)"),
            "{}",
            explained.stdout
        );
        // The reports agree: gprof's flat profile has the exact count.
        let report = wasmprof(&["report", "--input", input.to_str().unwrap()]);
        report.assert_success();
        assert!(
            report
                .stdout
                .lines()
                .any(|l| l.contains(" 301 ") && l.contains("  walks::deep")),
            "{}",
            report.stdout
        );
    }
}

/// The whole default workload, a million nodes, with `--timer none` in
/// Node: the module's memory grows to over 200 MB while WASI is busy, and
/// Node once collected the WASI object in the middle of a call (an abort or
/// a segfault, and no profile).
#[test]
fn a_million_node_tree_in_node_without_a_clock() {
    let run = wasmprof(&["run", "-p", "walks", "--release", "--timer", "none"]);
    run.assert_success();
    let profile = run.profile();
    assert!(profile.run.complete);
    // The capacity, plus one overflow node per function past it.
    assert_eq!(profile.nodes.len(), (1 << 20) + 5);
    assert!(
        profile.overflow_calls > 100_000,
        "{}",
        profile.overflow_calls
    );
    let calls = calls_by_function(&profile);
    for (function, expected) in counted_by_the_program(&run.stdout) {
        assert_eq!(calls[&function], expected, "{function}");
    }
    assert_eq!(calls["walks::deep"], 5_001);
}
