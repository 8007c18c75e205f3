//! Async functions end to end: `examples/async-loads` (loads run with
//! `join_all` over JS timers, a `spawn_local` task, a load dropped at its
//! deadline) built to wasm and run in Node and in headless Chromium, with
//! exact calls, completions and cancellations, the CPU work under its
//! logical caller, latency apart from CPU time, and the reports.

use crate::support::*;
use wasmprof_profile::profile::{FutureStats, Profile};

/// What the program prints, from the pure function it runs (so: what an
/// uninstrumented build prints).
fn expected_report_line() -> String {
    fn checksum(seed: u32, rounds: u32) -> u32 {
        let mut x = seed.wrapping_mul(2_654_435_761) | 1;
        for i in 0..rounds {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x = x.wrapping_add(i);
        }
        x
    }
    let total = (0..4).fold(0, |all, id| {
        all ^ checksum(id, 1_000_000) ^ checksum(id + 100, 1_000_000)
    });
    let tag = checksum(total, 250_000);
    format!("batch of 4 loads: checksum {total:08x}, tag {tag:08x}, deadline passed")
}

fn futures_of(profile: &Profile, path: &[&str]) -> FutureStats {
    let nodes: Vec<usize> = node_indices_of_path(profile, path).collect();
    assert_eq!(nodes.len(), 1, "one node for {path:?}");
    profile
        .futures
        .iter()
        .find(|f| f.node == nodes[0])
        .unwrap_or_else(|| panic!("no futures for {path:?}"))
        .clone()
}

const RUN: &str = "async_loads::run";
const BATCH: &str = "async_loads::batch";
const LOAD: &str = "async_loads::load";
const CHECKSUM: &str = "async_loads::checksum";

/// Checks one host's profile; returns the counts to compare across hosts.
fn check(run: &Run) -> Vec<(String, u64, u64, u64, u64, u64)> {
    run.assert_success();
    assert!(
        run.stdout.contains(&expected_report_line()),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    assert!(profile.run.complete, "{:?}", profile.run.incomplete_reason);
    let calls = calls_by_function(&profile);
    for (name, want) in [
        (RUN, 1),
        (BATCH, 1),
        (LOAD, 4),
        (CHECKSUM, 9),
        ("async_loads::with_deadline", 1),
        ("async_loads::slow_load", 1),
        ("async_loads::report", 1),
    ] {
        assert_eq!(calls.get(name), Some(&want), "{name}");
    }
    // The work of every poll lands under the future's logical caller: the
    // loads under batch (polled by join_all), the report under run (polled
    // by the executor from the event loop, after run returned).
    assert_eq!(calls_of_path(&profile, &[RUN, BATCH, LOAD]), 4);
    assert_eq!(calls_of_path(&profile, &[RUN, BATCH, LOAD, CHECKSUM]), 8);
    assert_eq!(
        calls_of_path(&profile, &[RUN, "async_loads::report", CHECKSUM]),
        1
    );
    let load = futures_of(&profile, &[RUN, BATCH, LOAD]);
    assert_eq!(
        (load.completions, load.cancellations, load.pending),
        (4, 0, 0)
    );
    // First poll, one after each timer at least.
    assert!(load.polls >= 3 * 4, "{load:?}");
    let slow = futures_of(
        &profile,
        &[RUN, "async_loads::with_deadline", "async_loads::slow_load"],
    );
    assert_eq!(
        (slow.completions, slow.cancellations, slow.pending),
        (0, 1, 0)
    );
    assert!(slow.latency.is_none(), "a dropped future has no latency");
    // Latency covers the 10 and 40 ms timers; CPU time is far below it.
    let latency = load.latency.expect("timed");
    assert_eq!(latency.count, 4);
    assert!(latency.median_nanos >= 50e6, "{latency:?}");
    assert!(latency.max_nanos >= latency.median_nanos);
    let cpu_per_load = time_of_path(&profile, &[RUN, BATCH, LOAD]) / 4.0;
    assert!(cpu_per_load > 0.0);
    assert!(
        cpu_per_load < latency.median_nanos / 3.0,
        "cpu {cpu_per_load} ns vs latency {latency:?}"
    );
    // A node's time holds its children's, the spawned report's included
    // (polled after run completed, its time is moved up to run). Within
    // the noise of taking the clock's cost out of some fifty nested polls
    // and calls, which a loaded machine makes a few per cent.
    let run_time = time_of_path(&profile, &[RUN]);
    let parts = time_of_path(&profile, &[RUN, BATCH])
        + time_of_path(&profile, &[RUN, "async_loads::report"]);
    assert!(run_time >= parts * 0.8, "run {run_time} < {parts}");

    let mut counts: Vec<(String, u64, u64, u64, u64, u64)> = profile
        .futures
        .iter()
        .map(|f| {
            let node = &profile.nodes[f.node];
            let name = profile.functions[node.function.unwrap()].name.clone();
            (
                name,
                node.calls,
                f.polls,
                f.completions,
                f.cancellations,
                f.pending,
            )
        })
        .collect();
    counts.sort();
    counts
}

#[test]
fn futures_are_followed_across_awaits_in_node_and_in_chromium_alike() {
    let node = wasmprof(&["run", "-p", "async-loads", "--release"]);
    let in_node = check(&node);
    assert!(
        browser_available(),
        "this test needs Chromium: `apt-get install chromium` (bash .ci/run does)"
    );
    let browser = wasmprof(&["run", "-p", "async-loads", "--release", "--host", "browser"]);
    let in_browser = check(&browser);
    assert_eq!(in_node, in_browser);
    assert_eq!(in_node.len(), 6, "every async function: {in_node:?}");

    // The reports.
    let input = node.profile_path();
    let input = input.to_str().unwrap();
    let gprof = wasmprof(&["report", "--input", input]);
    gprof.assert_success();
    assert!(
        gprof.stdout.contains("async_loads::load (async) ["),
        "{}",
        gprof.stdout
    );
    let section = &gprof.stdout[gprof.stdout.find("Async functions").expect("section")..];
    let load_row: Vec<&str> = section
        .lines()
        .find(|l| l.ends_with("  async_loads::load"))
        .expect("a row for load")
        .split_whitespace()
        .collect();
    assert_eq!(&load_row[..4], ["4", "4", "0", "0"], "{section}");
    assert!(
        section.contains("never added to any time above"),
        "{section}"
    );

    let json = wasmprof(&["report", "--input", input, "--format", "json"]);
    json.assert_success();
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let rows = document["async_functions"].as_array().unwrap();
    let load = rows.iter().find(|r| r["name"] == LOAD).unwrap();
    assert_eq!(
        (load["calls"].as_u64(), load["completions"].as_u64()),
        (Some(4), Some(4))
    );

    let pprof = std::env::temp_dir().join(format!("async-{}.pb.gz", std::process::id()));
    wasmprof(&[
        "report",
        "--input",
        input,
        "--format",
        "pprof",
        "--output",
        pprof.to_str().unwrap(),
    ])
    .assert_success();
    let top = go_pprof(&["-top", "-sample_index=polls", pprof.to_str().unwrap()]);
    assert!(top.contains("async_loads::load"), "{top}");
    let _ = std::fs::remove_file(pprof);
}

/// `--invoke crash_after -- 3`: an exported async function whose future
/// panics inside a poll, 3 ms in, while `start`'s loads wait for their
/// timers. The run fails with the trap's status and keeps the profile: the
/// panicking poll's path open, every unfinished future pending.
fn check_panic_in_poll(run: &Run) {
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert!(run.stderr.contains("unreachable"), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    let open: Vec<&str> = profile
        .nodes
        .iter()
        .filter(|n| n.open)
        .map(|n| profile.functions[n.function.unwrap()].name.as_str())
        .collect();
    assert_eq!(open, ["async_loads::crash_after", "async_loads::doomed"]);
    let doomed = futures_of(
        &profile,
        &["async_loads::crash_after", "async_loads::doomed"],
    );
    assert_eq!(
        (doomed.polls, doomed.completions, doomed.pending),
        (2, 0, 1)
    );
    assert_eq!(
        calls_of_path(
            &profile,
            &["async_loads::crash_after", "async_loads::doomed", CHECKSUM]
        ),
        1,
        "the work done in the poll before the panic"
    );
    let caller = futures_of(&profile, &["async_loads::crash_after"]);
    assert_eq!((caller.completions, caller.pending), (0, 1));
    let load = futures_of(&profile, &[RUN, BATCH, LOAD]);
    assert_eq!(load.completions + load.pending, 4, "{load:?}");
    let report = wasmprof(&["report", "--input", run.profile_path().to_str().unwrap()]);
    report.assert_success();
    assert!(
        report
            .stdout
            .contains("futures were still pending when the profile was taken"),
        "{}",
        report.stdout
    );
}

#[test]
fn a_panic_inside_a_poll_keeps_the_profile_with_its_futures_pending() {
    let args = [
        "run",
        "-p",
        "async-loads",
        "--release",
        "--invoke",
        "crash_after",
    ];
    check_panic_in_poll(&wasmprof(&[&args[..], &["--", "3"]].concat()));
    assert!(browser_available(), "this test needs Chromium");
    check_panic_in_poll(&wasmprof(
        &[&args[..], &["--host", "browser", "--", "3"]].concat(),
    ));
}

/// `--timer none --sample`: the engine's samples of a poll show the async
/// body as a closure (`async_loads::load::{{closure}}`); they are attributed
/// under the async function's node, so the CPU work of the loads lands
/// under `run → batch → load`, as with the clock.
#[test]
fn the_engines_samples_of_polls_land_under_the_async_functions() {
    let run = wasmprof(&[
        "run",
        "-p",
        "async-loads",
        "--release",
        "--timer",
        "none",
        "--sample",
    ]);
    run.assert_success();
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    assert_eq!((calls[LOAD], calls[CHECKSUM]), (4, 9));
    let hybrid = profile.timer.hybrid.as_ref().expect("a hybrid profile");
    assert!(hybrid.matched_samples > 0, "{hybrid:?}");
    let under_loads = time_of_path(&profile, &[RUN, BATCH, LOAD, CHECKSUM]);
    assert!(under_loads > 0.0, "{hybrid:?}");
    assert!(time_of_path(&profile, &[RUN]) >= under_loads);
}

/// `cargo wasmprof bench` runs the plain build beside the instrumented ones
/// and stops if any prints something else: the async program's output does
/// not change with instrumentation.
#[test]
fn instrumented_and_plain_builds_print_the_same() {
    let bench = wasmprof(&["bench", "-p", "async-loads", "--release", "--runs", "1"]);
    bench.assert_success();
    assert!(
        bench
            .stdout
            .contains("async-loads (start): 1 run of each build"),
        "{}",
        bench.stdout
    );
    for build in ["plain", "--timer none", "--timer host"] {
        assert!(
            bench.stdout.lines().any(|l| l.starts_with(build)),
            "{build}: {}",
            bench.stdout
        );
    }
}

/// `--invoke start_listener`: a future that waits for good (an event
/// listener) does not keep the run from ending, in either host, and is in
/// the profile as pending: called, polled once, not completed, not dropped.
#[test]
fn a_future_still_waiting_at_the_end_is_listed_as_pending() {
    for host in ["node", "browser"] {
        let run = wasmprof(&[
            "run",
            "-p",
            "async-loads",
            "--release",
            "--host",
            host,
            "--invoke",
            "start_listener",
        ]);
        run.assert_success();
        let profile = run.profile();
        let listen = futures_of(&profile, &["async_loads::listen"]);
        assert_eq!(
            (
                listen.polls,
                listen.completions,
                listen.cancellations,
                listen.pending
            ),
            (1, 0, 0, 1),
            "{host}"
        );
        // start's loads finished meanwhile.
        let load = futures_of(&profile, &[RUN, BATCH, LOAD]);
        assert_eq!((load.completions, load.pending), (4, 0), "{host}");
        let report = wasmprof(&["report", "--input", run.profile_path().to_str().unwrap()]);
        assert!(
            report.stdout.contains("1 futures were still pending"),
            "{host}: {}",
            report.stdout
        );
    }
}
