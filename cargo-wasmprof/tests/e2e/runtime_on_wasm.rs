//! The runtime's unit tests for what exists only on WebAssembly without
//! threads (`cfg(one_thread)`): built for wasm32-wasip1 and run in Node's
//! WASI, where natively they would not even compile.

use std::process::Command;

use crate::support::*;

#[test]
fn the_one_thread_unit_tests_pass_on_wasm32_wasip1() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = repo_root().join("target").join("wasm-unit-tests");
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
        .env_remove("RUSTFLAGS")
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
        .args(["one_thread_tests", "--nocapture"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the tests failed in Node:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The filter must have found the tests: a typo would pass with none.
    assert!(
        stdout.contains("test result: ok. 1 passed; 0 failed"),
        "{stdout}"
    );
}
