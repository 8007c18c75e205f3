//! WASI 0.2 components (`wasm32-wasip2`): `examples/components`, a command
//! whose counts are known, run in the embedded wasmtime as a component,
//! with its profile held against the oracle's count and the arithmetic of
//! its work; the fault cases keep what was collected; its test suite runs
//! through `cargo wasmprof test`.

use crate::support::*;

const COMPONENT: &str = "wasm32-wasip2";

/// `fib(20)` calls itself `2 * fib(21) - 1` times.
const FIB_CALLS: u64 = 2 * 10_946 - 1;
/// One `collatz_len` per start below 1000 and one for the best so far.
const COLLATZ_CALLS: u64 = 2 * 999;

/// `cargo wasmprof run -p components --target wasm32-wasip2 --verify-counts
/// EXTRA`, in the default host for a component.
fn run_component(extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        "-p",
        "components",
        "--target",
        COMPONENT,
        "--verify-counts",
    ];
    args.extend_from_slice(extra);
    let run = wasmprof(&args);
    assert!(
        run.stderr.contains("in wasmtime"),
        "the default host for a component is wasmtime: {}",
        run.stderr
    );
    run
}

/// Whether every count of the run agreed with a second count.
fn verified(run: &Run) -> bool {
    run.stderr
        .contains("Verified every call count of 4 functions")
}

#[test]
fn a_command_component_runs_in_wasmtime_with_exact_counts() {
    let run = run_component(&[]);
    run.assert_success();
    assert!(verified(&run), "{}", run.stderr);
    assert!(run.stdout.contains("fib(20) = 6765"), "{}", run.stdout);
    let profile = run.profile();
    assert!(profile.run.complete, "{:?}", profile.run);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["components::fib"], FIB_CALLS);
    assert_eq!(calls["components::collatz_len"], COLLATZ_CALLS);
    assert_eq!(calls["components::longest_walk"], 1);
    // The reports read it as any other profile.
    let path = run.profile_path();
    let gprof = wasmprof(&["report", "--input", path.to_str().unwrap()]);
    gprof.assert_success();
    assert!(gprof.stdout.contains("components::fib"), "{}", gprof.stdout);
}

#[test]
fn a_component_that_panics_exits_or_hangs_keeps_its_profile() {
    // A trap poisons the component instance; the profile comes out of its
    // core module all the same.
    let panicked = run_component(&["--", "panic"]);
    assert_eq!(panicked.code(), Some(101), "{}", panicked.stderr);
    assert!(
        panicked.stderr.contains("asked to panic after the work"),
        "{}",
        panicked.stderr
    );
    let exited = run_component(&["--", "exit"]);
    // WASI 0.2's `exit` carries success or failure, not the code.
    assert_eq!(exited.code(), Some(1), "{}", exited.stderr);
    for run in [&panicked, &exited] {
        assert!(verified(run), "{}", run.stderr);
        let profile = run.profile();
        assert!(!profile.run.complete);
        let calls = calls_by_function(&profile);
        assert_eq!(calls["components::fib"], FIB_CALLS, "{}", run.stderr);
        assert_eq!(calls["components::collatz_len"], COLLATZ_CALLS);
    }
    // Cut at any instruction, one call can be counted by the oracle and
    // not yet by the profiler: the check sets that one apart.
    let hung = run_component(&["--timeout", "2s", "--", "spin"]);
    assert_eq!(hung.code(), Some(124), "{}", hung.stderr);
    assert!(verified(&hung), "{}", hung.stderr);
    assert!(
        hung.stderr.contains("timed out after 2000 ms"),
        "{}",
        hung.stderr
    );
    let calls = calls_by_function(&hung.profile());
    assert!(calls["components::fib"] > FIB_CALLS, "{calls:?}");
}

#[test]
fn a_components_test_suite_runs_through_cargo_wasmprof_test() {
    let run = wasmprof(&["test", "-p", "components", "--target", COMPONENT]);
    run.assert_success();
    assert!(run.stdout.contains("2 passed"), "{}", run.stdout);
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    // fib(10) and the 111 steps of 27's walk.
    assert_eq!(calls["components::fib"], 177);
    assert_eq!(calls["components::step"], 111);
    assert_eq!(calls["components::tests::fib_of_ten"], 1);
    assert_eq!(calls["components::tests::collatz_of_27"], 1);
}

#[test]
fn hosts_without_components_are_refused_before_the_build() {
    let run = wasmprof(&[
        "run",
        "-p",
        "components",
        "--target",
        COMPONENT,
        "--host",
        "node",
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("builds a WASI 0.2 component, and Node")
            && run.stderr.contains("cannot run components"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);
    for host in ["node", "browser"] {
        let test = wasmprof(&[
            "test",
            "-p",
            "components",
            "--target",
            COMPONENT,
            "--host",
            host,
        ]);
        assert_eq!(test.code(), Some(1), "{}", test.stderr);
        assert!(
            test.stderr.contains("cannot run components"),
            "{}",
            test.stderr
        );
    }
}
