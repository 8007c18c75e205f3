//! Bad input and programs that go wrong: each gets a clear message and a
//! non-zero exit, and nothing already collected is lost.

use crate::support::*;

/// A failed run of `--runs` ends the series with its status, its profile
/// kept, and says how many runs did not start.
#[test]
fn a_failed_run_ends_a_series_of_runs_with_its_profile_kept() {
    let run = wasmprof(&[
        "run",
        "-p",
        "faults",
        "--invoke",
        "panic_after",
        "--runs",
        "3",
        "--",
        "5",
    ]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert_eq!(run.stderr.matches("Running").count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("run 1 of 3 exited with status 101; the 2 runs after it did not start"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(
        calls_of_path(&profile, &["faults::steps", "faults::step"]),
        6
    );
}

#[test]
fn a_panic_mid_run_keeps_the_profile_marked_incomplete() {
    let run = wasmprof(&["run", "-p", "faults", "--invoke", "panic_after", "--", "5"]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert!(run.stderr.contains("trap"), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert!(
        profile
            .run
            .incomplete_reason
            .as_deref()
            .unwrap()
            .contains("unreachable")
    );
    // Five calls returned, the sixth panicked: all six were counted.
    assert_eq!(
        calls_of_path(&profile, &["faults::steps", "faults::step"]),
        6
    );
    let open: Vec<&str> = profile
        .nodes
        .iter()
        .filter(|n| n.open)
        .map(|n| profile.functions[n.function.unwrap()].name.as_str())
        .collect();
    assert_eq!(open, ["faults::steps", "faults::step"]);
    // The report says so.
    let input = run.profile_path();
    let report = wasmprof(&["report", "--input", input.to_str().unwrap()]);
    report.assert_success();
    assert!(
        report.stdout.to_lowercase().contains("incomplete"),
        "{}",
        report.stdout
    );
}

/// A recursion that runs its shadow stack out traps below the stack's
/// bottom; the snapshot, which needs a stack too, still reads the calls
/// made until then.
#[test]
fn a_stack_overflow_keeps_every_call_made_before_it_in_node_and_wasmtime() {
    for host in ["node", "wasmtime"] {
        let run = wasmprof(&[
            "run",
            "-p",
            "faults",
            "--host",
            host,
            "--verify-counts",
            "--invoke",
            "overflow",
        ]);
        assert_stack_overflow_kept(&run, host);
    }
}

/// `faults`' `overflow`, run with `--verify-counts` on `host`: a trap,
/// and the calls before it each open, as many as the oracle counted.
pub(crate) fn assert_stack_overflow_kept(run: &Run, host: &str) {
    assert_eq!(run.code(), Some(101), "{host}: {}", run.stderr);
    assert!(
        !run.stderr.contains("could not read the profile"),
        "{host}: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("Verified every call count"),
        "{host}: {}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    let descend = profile
        .functions
        .iter()
        .position(|f| f.name == "faults::descend")
        .unwrap();
    let frames: Vec<_> = profile
        .nodes
        .iter()
        .filter(|n| n.function == Some(descend))
        .collect();
    // A kilobyte a frame on a stack of a megabyte.
    assert!(frames.len() > 100, "{host}: {} frames", frames.len());
    assert!(frames.iter().all(|n| n.open && n.calls == 1), "{host}");
}

#[test]
fn a_hung_program_is_ended_by_the_timeout_and_its_profile_kept() {
    let started = std::time::Instant::now();
    let run = wasmprof(&["run", "-p", "faults", "--invoke", "spin", "--timeout", "2s"]);
    assert_eq!(run.code(), Some(124), "{}", run.stderr);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    assert!(started.elapsed().as_secs() < 120);
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert!(calls_of_path(&profile, &["faults::forever", "faults::tick"]) > 1000);
    assert!(profile.nodes.iter().any(|n| n.open));
}

#[test]
fn a_failed_run_never_replaces_an_earlier_profile() {
    let good = wasmprof(&["run", "-p", "faults", "--invoke", "fine"]);
    good.assert_success();
    let kept = good.profile_path();
    let before = std::fs::read(&kept).unwrap();
    let bad = wasmprof(&["run", "-p", "faults", "--invoke", "panic_after", "--", "0"]);
    assert_eq!(bad.code(), Some(101));
    assert_ne!(bad.profile_path(), kept);
    assert_eq!(std::fs::read(&kept).unwrap(), before);
}

#[test]
fn a_missing_node_is_named_before_anything_is_built() {
    let run = wasmprof(&[
        "run",
        "-p",
        "faults",
        "--invoke",
        "fine",
        "--node",
        "/nonexistent/node",
    ]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr.contains("Node.js was not found"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("Building"),
        "checked before the build:\n{}",
        run.stderr
    );
}

#[test]
fn an_entry_point_that_does_not_exist_lists_the_ones_that_do() {
    let run = wasmprof(&["run", "-p", "faults", "--invoke", "nope"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr.contains("exports no function of that name"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("panic_after"), "{}", run.stderr);
}

#[test]
fn invoke_with_the_wrong_number_of_arguments_says_how_many() {
    let run = wasmprof(&["run", "-p", "faults", "--invoke", "panic_after"]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("takes 1 argument(s) but 0 were given"),
        "{}",
        run.stderr
    );
    let run = wasmprof(&[
        "run",
        "-p",
        "faults",
        "--invoke",
        "panic_after",
        "--",
        "many",
    ]);
    assert!(run.stderr.contains("is not a number"), "{}", run.stderr);
}

#[test]
fn a_library_without_start_must_be_invoked() {
    let run = wasmprof(&["run", "-p", "faults"]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("--invoke NAME"), "{}", run.stderr);
}

#[test]
fn a_crate_that_is_not_wasm_capable_says_how_to_fix_it() {
    let dir = std::env::temp_dir().join(format!("wasmprof-rlib-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"only-rlib\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let run = wasmprof_in(&dir, &["build"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr.contains("not a wasm-capable library"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("crate-type = [\"cdylib\""),
        "{}",
        run.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}

fn report_error(contents: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!(
        "wasmprof-bad-{}-{}",
        std::process::id(),
        contents.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.wasmprof.json");
    std::fs::write(&path, contents).unwrap();
    let run = wasmprof(&["report", "--input", path.to_str().unwrap()]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(run.stdout.is_empty());
    run.stderr
}

#[test]
fn corrupt_truncated_and_newer_profiles_are_refused_clearly() {
    let err = report_error(b"{\"format\": \"wasmprof/1\", \"created_unix_n");
    assert!(err.contains("corrupt or truncated"), "{err}");
    let err = report_error(b"\x00\x01binary junk");
    assert!(err.contains("not a wasmprof profile"), "{err}");
    let err = report_error(br#"{"format": "wasmprof/9", "future": true}"#);
    assert!(err.contains("newer wasmprof"), "{err}");
    let err = report_error(br#"{"traceEvents": []}"#);
    assert!(err.contains("does not read"), "{err}");
}

#[test]
fn a_missing_profile_says_how_to_make_one() {
    let run = wasmprof(&["report", "--input", "/nonexistent/p.wasmprof.json"]);
    assert_eq!(run.code(), Some(1));
    assert!(
        run.stderr
            .contains("cannot read /nonexistent/p.wasmprof.json: No such file"),
        "{}",
        run.stderr
    );
    let empty = std::env::temp_dir().join(format!("wasmprof-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let run = wasmprof(&["report", "--target-dir", empty.to_str().unwrap()]);
    assert_eq!(run.code(), Some(1));
    assert!(run.stderr.contains("cargo wasmprof run"), "{}", run.stderr);
}

#[test]
fn a_mismatched_wasm_bindgen_offline_names_the_version_and_the_command() {
    // A wasm-bindgen of another version first on PATH, nothing in the cache.
    let dir = std::env::temp_dir().join(format!("wasmprof-oldbindgen-{}", std::process::id()));
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("wasm-bindgen");
    std::fs::write(&fake, "#!/bin/sh\necho 'wasm-bindgen 0.2.99'\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = wasmprof_command(&examples_dir())
        .args(["build", "-p", "fib", "--offline"])
        .env("PATH", path)
        .env("WASMPROF_CACHE_DIR", dir.join("cache"))
        .env_remove("WASM_BINDGEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("no wasm-bindgen 0.2.130 found"), "{stderr}");
    assert!(
        stderr.contains("the wasm-bindgen on PATH is 0.2.99"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cargo install wasm-bindgen-cli --version 0.2.130"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn wasmprof_exit_ends_the_run_with_its_code_once_the_call_returns() {
    for host in ["node", "browser"] {
        let run = wasmprof(&[
            "run",
            "-p",
            "faults",
            "--host",
            host,
            "--invoke",
            "exit_with",
            "--",
            "7",
        ]);
        assert_eq!(run.code(), Some(7), "{host}: {}", run.stderr);
        let profile = run.profile();
        assert_eq!(calls_by_function(&profile)["faults::step"], 1, "{host}");
        // Nothing was still running when the run ended.
        assert!(profile.nodes.iter().all(|n| !n.open), "{host}");
    }
}

#[test]
fn until_exit_in_node_reports_a_program_that_never_calls_exit() {
    let run = wasmprof(&["run", "-p", "faults", "--invoke", "fine", "--until-exit"]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("without calling wasmprof::exit"),
        "{}",
        run.stderr
    );
}
