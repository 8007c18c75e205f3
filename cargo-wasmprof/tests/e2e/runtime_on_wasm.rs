//! The runtime's unit tests for what exists only on WebAssembly without
//! threads (`cfg(one_thread)`): built for wasm32-wasip1 and run in Node's
//! WASI, where natively they would not even compile. And the recording
//! allocator's, which need a build of the runtime with memory recorded:
//! there, and natively with real threads.

use std::process::Command;

use crate::support::*;

#[test]
fn the_one_thread_unit_tests_pass_on_wasm32_wasip1() {
    run_unit_tests_on_wasm("wasm-unit-tests", &[], "one_thread_tests", 2);
}

/// The recording allocator installed in the test binary itself, counts
/// only (the WASI runner has no clock import): real `memory.grow`s.
#[test]
fn the_recording_allocator_s_unit_tests_pass_on_wasm32_wasip1() {
    run_unit_tests_on_wasm(
        "wasm-unit-tests-memory",
        &[
            ("WASMPROF_INSTRUMENT", "none"),
            ("WASMPROF_MEMORY", "system"),
        ],
        "recorded_tests",
        1,
    );
}

/// The recording allocator natively, installed in the test binary, with
/// real std threads: a block freed on another thread than the one that
/// allocated it.
#[test]
fn the_recording_allocator_s_unit_tests_pass_natively_with_threads() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = Command::new(cargo)
        .args(["test", "-q", "-p", "wasmprof-core", "--lib", "--target-dir"])
        .arg(repo_root().join("target").join("native-memory-tests"))
        .args(["--", "recorded_tests"])
        .current_dir(repo_root())
        .env("WASMPROF_INSTRUMENT", "host")
        .env("WASMPROF_INSTRUMENT_NATIVE", "1")
        .env("WASMPROF_MEMORY", "system")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains("test result: ok. 2 passed; 0 failed"),
        "the recording allocator's tests failed natively:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Builds the runtime's unit tests for wasm32-wasip1 with `env`, runs
/// those matching `filter` in Node's WASI, and checks that `count` ran.
fn run_unit_tests_on_wasm(dir: &str, env: &[(&str, &str)], filter: &str, count: usize) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = repo_root().join("target").join(dir);
    let build = Command::new(cargo)
        .args([
            "test",
            "-q",
            "-p",
            "wasmprof-core",
            "--lib",
            "--no-run",
            "--target",
            "wasm32-wasip1",
            "--message-format=json",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .current_dir(repo_root())
        .env_remove("WASMPROF_INSTRUMENT")
        .env_remove("WASMPROF_MEMORY")
        .env_remove("RUSTFLAGS")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "building the runtime's tests for wasm32-wasip1 failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let binary = String::from_utf8_lossy(&build.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["profile"]["test"] == true)
        .find_map(|message| message["executable"].as_str().map(str::to_owned))
        .expect("cargo names the test binary");

    let run = Command::new("node")
        .arg(repo_root().join("cargo-wasmprof/tests/support/wasi-test-runner.mjs"))
        .arg(&binary)
        .args([filter, "--nocapture"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the tests failed in Node:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The filter must have found the tests: a typo would pass with none.
    let passed = format!("test result: ok. {count} passed; 0 failed");
    assert!(stdout.contains(&passed), "{stdout}");
}
