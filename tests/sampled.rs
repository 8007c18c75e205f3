//! `cargo wasmprof report` on the sampling profiles real engines wrote
//! (`cargo-wasmprof/tests/data/sampled/`, recorded by
//! `tests/record_fixtures.rs`): every format, checked with the real
//! `go tool pprof`, and the bad-input paths.

use std::path::PathBuf;
use std::process::Command;

use wasmprof_tests::*;

fn fixture(name: &str) -> String {
    repo_root()
        .join("cargo-wasmprof/tests/data/sampled")
        .join(name)
        .display()
        .to_string()
}

/// Total sampled time of a fixture, in ms, as the library reads it.
fn total_ms(name: &str, hide_idle: bool) -> f64 {
    let input = cargo_wasmprof::sampled::read_input(
        std::path::Path::new(&fixture(name)),
        &cargo_wasmprof::sampled::Options {
            hide_idle,
            ..Default::default()
        },
    )
    .unwrap();
    let profile = input.profile;
    profile
        .nodes
        .iter()
        .filter(|n| n.parent == Some(0))
        .map(|n| n.inclusive_nanos)
        .sum::<f64>()
        / 1e6
}

#[test]
fn a_node_cpuprofile_reads_as_gprof_with_rust_names_and_no_counts() {
    let run = wasmprof(&["report", "--input", &fixture("node-appendix-b.cpuprofile")]);
    run.assert_success();
    let text = &run.stdout;
    assert!(text.contains("No call was counted"), "{text}");
    assert!(text.contains("appendix_b::f_quarter"), "{text}");
    assert!(!text.contains("_ZN10appendix_b"), "{text}");
    assert!(text.contains("Call graph"), "{text}");
    // No zeros pretending to be counts in the call graph.
    assert!(!text.contains(" 0/0 "), "{text}");
}

#[test]
fn a_chromium_profile_converts_to_pprof_with_the_same_total() {
    let dir = std::env::temp_dir().join(format!("wasmprof-sampled-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pb: PathBuf = dir.join("chromium.pb.gz");
    wasmprof(&[
        "report",
        "--input",
        &fixture("chromium-fib.cpuprofile"),
        "--hide-idle",
        "--format",
        "pprof",
        "-o",
        pb.to_str().unwrap(),
    ])
    .assert_success();
    assert!(
        go_available(),
        "go tool pprof is needed (bash .ci/run installs golang-go)"
    );
    let top = Command::new("go")
        .args(["tool", "pprof", "-top", "-unit=ms"])
        .arg(&pb)
        .env("HOME", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&top.stdout);
    assert!(
        top.status.success(),
        "{}",
        String::from_utf8_lossy(&top.stderr)
    );
    assert!(
        out.lines()
            .skip_while(|l| !l.trim_start().starts_with("flat"))
            .nth(1)
            .is_some_and(|l| l.ends_with("fib::fib")),
        "fib::fib is the top function:\n{out}"
    );
    let total: f64 = out
        .lines()
        .find_map(|l| l.split("Total samples = ").nth(1))
        .and_then(|rest| rest.split("ms").next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no total in:\n{out}"));
    let expected = total_ms("chromium-fib.cpuprofile", true);
    assert!(
        (total - expected).abs() < 0.01 * expected,
        "{total} ms against {expected} ms"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_self_profiling_trace_reads_in_every_format() {
    let trace = fixture("chromium-fib.selfprofile.json");
    let gprof = wasmprof(&["report", "--input", &trace]);
    gprof.assert_success();
    assert!(gprof.stdout.contains("fib::fib"), "{}", gprof.stdout);
    assert!(gprof.stdout.contains("(idle)"), "{}", gprof.stdout);
    let hidden = wasmprof(&["report", "--input", &trace, "--hide-idle"]);
    assert!(!hidden.stdout.contains("(idle)"), "{}", hidden.stdout);
    let json = wasmprof(&["report", "--input", &trace, "--format", "json"]);
    json.assert_success();
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(value["counted"], false);
    assert_eq!(value["timed"], true);
}

#[test]
fn several_traces_merge_and_kinds_do_not_mix() {
    let trace = fixture("chromium-fib.selfprofile.json");
    let one = total_ms("chromium-fib.selfprofile.json", false);
    let merged = wasmprof(&[
        "report", "--input", &trace, "--input", &trace, "--format", "json",
    ]);
    merged.assert_success();
    let value: serde_json::Value = serde_json::from_str(&merged.stdout).unwrap();
    let total = value["total_nanos"].as_f64().unwrap() / 1e6;
    assert!(
        (total - 2.0 * one).abs() < 1e-6 * one,
        "{total} against 2 × {one}"
    );

    let mixed = wasmprof(&[
        "report",
        "--input",
        &trace,
        "--input",
        &fixture("chromium-fib.cpuprofile"),
    ]);
    assert_ne!(mixed.code(), Some(0));
    assert!(
        mixed.stderr.contains("cannot be merged"),
        "{}",
        mixed.stderr
    );
}

#[test]
fn a_truncated_profile_is_refused_with_its_name() {
    let dir = std::env::temp_dir().join(format!("wasmprof-truncated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let whole = std::fs::read(fixture("node-appendix-b.cpuprofile")).unwrap();
    let cut = dir.join("cut.cpuprofile");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let run = wasmprof(&["report", "--input", cut.to_str().unwrap()]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr.contains("cut.cpuprofile is truncated"),
        "{}",
        run.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}
