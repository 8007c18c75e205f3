//! Exact means exact, checked against a count that wasmprof did not make
//! the same way: every real crate the tests hold, built as each mode
//! builds it, counts each function's calls as the oracle does.
//!
//! The oracle is a counter per instrumented function, one atomic add per
//! call, that shares nothing with the profiler (`wasmprof_core::oracle`).
//! Two ways of holding a profile against it:
//!
//! - in the same run (`--verify-counts`): the oracle is compiled in beside
//!   the profiler, and the run itself fails on any difference. This holds
//!   for any program, deterministic or not;
//! - across builds (`--oracle-only`): the oracle alone, in a plain program,
//!   against each mode's build as users build it, without the oracle. This
//!   holds for deterministic programs, which every program here is, and
//!   catches what the oracle's presence could hide.
//!
//! `async fn`s are left out of the second: the oracle-only build is the
//! bench's floor, which leaves them as written; the first counts them.
//!
//! The web apps (Yew, Leptos, Dioxus, in Chromium) are checked in the run
//! itself, in `frameworks.rs`: what a page does between its start and the
//! end of the run depends on the browser's timing, so no two builds need
//! to call a function equally often.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::*;

/// What one run counted.
struct Counted {
    /// The program's own output, which must not change with the mode.
    stdout: String,
    /// Calls per function name.
    calls: BTreeMap<String, u64>,
    /// The `async fn`s, which the oracle-only build does not count.
    asynchronous: BTreeSet<String>,
}

/// Runs `cargo wasmprof ARGS` in `dir` and reads what it counted.
fn counted(dir: &Path, args: &[&str]) -> Counted {
    let run = wasmprof_in(dir, args);
    run.assert_success();
    let verified = args.contains(&"--verify-counts");
    if verified {
        // The run itself held every count against the oracle's.
        assert!(
            run.stderr.contains("Verified every call count of "),
            "{args:?}: {}",
            run.stderr
        );
    }
    let profile = run.profile();
    if verified {
        let check = profile.run.count_check.as_ref().expect("a count check");
        assert!(
            check.functions > 0 && check.differences.is_empty(),
            "{check:?}"
        );
    }
    Counted {
        stdout: run.stdout.clone(),
        calls: calls_by_function(&profile),
        asynchronous: profile
            .functions
            .iter()
            .filter(|f| f.is_async)
            .map(|f| f.name.clone())
            .collect(),
    }
}

/// A program instrumented the way `base` says, run with each of `modes`'
/// flags and with the oracle alone, everything in `dir`: every function's
/// count must be the oracle's in every mode, and the output the same.
/// A difference fails the test naming the function, the mode and both
/// counts, for every function that differs.
fn every_mode_counts_as_the_oracle(dir: &Path, base: &[&str], modes: &[&[&str]]) -> Counted {
    let oracle = counted(dir, &[base, &["--oracle-only"]].concat());
    assert!(
        oracle.calls.len() > 5,
        "the oracle counted {:?}",
        oracle.calls
    );
    let mut differences = Vec::new();
    for mode in modes {
        let label = mode.join(" ");
        let run = counted(dir, &[base, mode].concat());
        assert_eq!(
            same_output(&run.stdout),
            same_output(&oracle.stdout),
            "{label}: the program's output"
        );
        let names: BTreeSet<&String> = oracle.calls.keys().chain(run.calls.keys()).collect();
        for name in names {
            if run.asynchronous.contains(name) {
                continue;
            }
            let (by_mode, by_oracle) = (
                run.calls.get(name).copied().unwrap_or(0),
                oracle.calls.get(name).copied().unwrap_or(0),
            );
            if by_mode != by_oracle {
                differences.push(format!(
                    "{name}: {by_mode} with `{label}`, {by_oracle} by the oracle"
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} {}: counts differ from the oracle's:\n{}",
        dir.display(),
        base.join(" "),
        differences.join("\n")
    );
    oracle
}

/// A program's output as it must be in every build: a test harness's
/// lines without their times, in an order of their own (rustdoc's harness
/// reports doctests as they finish).
fn same_output(stdout: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = stdout
        .lines()
        .map(|line| line.split("; finished in ").next().unwrap_or(line))
        .collect();
    lines.sort_unstable();
    lines
}

#[test]
fn rhai_instrumented_whole_counts_as_the_oracle_in_every_mode_and_host() {
    // The script engine evaluating recursion, loops, strings, maps and
    // closures: 348 functions of rhai run, some a hundred thousand times,
    // `ImmutableString::from` among them (the function a report of a lost
    // call named: its count depended on rhai's random hash keys, which the
    // example fixes).
    let oracle = every_mode_counts_as_the_oracle(
        &examples_dir(),
        &[
            "run",
            "-p",
            "rhai-script",
            "--instrument-all",
            "--instrument-crate",
            "rhai",
        ],
        &[
            // The default: timed, small functions counted only, sampled.
            &["--verify-counts"],
            &["--min-size", "0", "--timer", "none"],
            &["--min-size", "0", "--timer", "none", "--host", "wasmtime"],
            &["--timer", "none", "--memory", "--verify-counts"],
        ],
    );
    // And the oracle counts what the script itself knows it called: fib(20)
    // calls fib 2 × fib(21) - 1 = 21 891 times, and its closures run 10
    // times (5 by `map`, 5 by `reduce`), each a call of a script function.
    assert_eq!(
        oracle.calls["rhai::engine::Engine::call_script_fn"],
        21_891 + 10
    );
    assert!(oracle.calls.keys().any(|name| {
        name.contains("ImmutableString as core::convert::From<smartstring::SmartString")
    }));
}

#[test]
fn serde_json_counts_as_the_oracle_in_node_and_wasmtime() {
    every_mode_counts_as_the_oracle(
        &examples_dir(),
        &[
            "run",
            "-p",
            "json-walk",
            "--instrument-all",
            "--instrument-crate",
            "serde_json",
        ],
        &[
            &["--verify-counts"],
            &["--verify-counts", "--host", "wasmtime"],
            &["--min-size", "0", "--timer", "none", "--memory"],
        ],
    );
}

#[test]
fn regex_lite_counts_as_the_oracle() {
    every_mode_counts_as_the_oracle(
        &examples_dir(),
        &[
            "run",
            "-p",
            "patterns",
            "--instrument-all",
            "--instrument-crate",
            "regex-lite",
        ],
        &[
            // Sampled, and not: the only difference is which functions
            // the compiler may inline.
            &["--verify-counts"],
            &["--min-size", "0", "--no-sample"],
        ],
    );
}

#[test]
fn syn_counts_as_the_oracle() {
    every_mode_counts_as_the_oracle(
        &examples_dir(),
        &[
            "run",
            "-p",
            "syn-parse",
            "--instrument-all",
            "--instrument-crate",
            "syn@2.0.119",
        ],
        &[
            &["--verify-counts"],
            &["--min-size", "0", "--timer", "none"],
        ],
    );
}

#[test]
fn semver_instrumented_in_place_counts_as_the_oracle() {
    every_mode_counts_as_the_oracle(
        &examples_dir(),
        &[
            "run",
            "-p",
            "crate-wide",
            "--instrument-all",
            "--instrument-crate",
            "semver",
        ],
        &[
            &["--verify-counts"],
            &["--min-size", "0", "--timer", "none", "--verify-counts"],
        ],
    );
}

#[test]
fn pulldown_cmark_and_miniz_oxide_count_as_the_oracle() {
    // The release builds `realworld.rs` makes, as users build them.
    every_mode_counts_as_the_oracle(
        &examples_dir(),
        &[
            "run",
            "-p",
            "realworld",
            "--release",
            "--instrument-all",
            "--instrument-crate",
            "pulldown-cmark",
            "--instrument-crate",
            "miniz_oxide",
        ],
        &[&[], &["--min-size", "0"]],
    );
}

#[test]
fn itoa_s_own_test_suite_counts_as_the_oracle() {
    let (_dir, copy) = registry_crate_copy("itoa", "1.0.19");
    every_mode_counts_as_the_oracle(
        &copy,
        &["test", "--instrument-all"],
        &[
            &[],
            &["--timer", "none", "--min-size", "0", "--verify-counts"],
        ],
    );
}
