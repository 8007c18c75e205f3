//! `cargo wasmprof report` on the sampling profiles real engines wrote
//! (`wasmprof-profile/tests/data/sampled/`, recorded by
//! `tests/e2e/record_fixtures.rs`): every format, checked with the real
//! `go tool pprof`, and the bad-input paths.

use std::path::PathBuf;

use crate::support::*;

fn fixture(name: &str) -> String {
    repo_root()
        .join("wasmprof-profile/tests/data/sampled")
        .join(name)
        .display()
        .to_string()
}

/// Total sampled time of a fixture, in ms, as the library reads it.
fn total_ms(name: &str, hide_idle: bool) -> f64 {
    let mut options = wasmprof_profile::sampled::Options::default();
    options.hide_idle = hide_idle;
    let input =
        wasmprof_profile::input::read(std::path::Path::new(&fixture(name)), &options).unwrap();
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
    let out = go_pprof(&["-top", "-unit=ms", pb.to_str().unwrap()]);
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
        run.stderr
            .contains("cut.cpuprofile is corrupt or truncated"),
        "{}",
        run.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `run --sample` in `host`: the instrumented profile names the engine's
/// `.cpuprofile` saved beside it, which reads with the program's functions.
fn run_with_samples(args: &[&str], hot: &str) {
    let run = wasmprof(args);
    run.assert_success();
    assert!(run.stderr.contains("Samples "), "{}", run.stderr);
    let profile = run.profile();
    let samples = profile.run.samples_file.clone().expect("samples_file");
    assert!(samples.ends_with(".cpuprofile"), "{samples}");
    let interval = profile
        .timer
        .sample_interval_nanos
        .expect("the effective interval");
    assert!(interval > 50_000.0 && interval < 5_000_000.0, "{interval}");
    // The instrumented counts are untouched by the sampler.
    assert!(calls_by_function(&profile).values().all(|&c| c > 0));
    let input = wasmprof_profile::input::read(
        std::path::Path::new(&samples),
        &wasmprof_profile::sampled::Options::default(),
    )
    .unwrap();
    let hot_ms: f64 = input
        .profile
        .nodes
        .iter()
        .filter(|n| {
            n.function
                .is_some_and(|f| input.profile.functions[f].name == hot)
        })
        .map(|n| n.inclusive_nanos)
        .sum::<f64>()
        / 1e6;
    assert!(hot_ms > 0.0, "{hot} has no sampled time");
}

#[test]
fn run_sample_in_node_saves_the_engines_samples_beside_the_profile() {
    run_with_samples(
        &["run", "-p", "appendix-b", "--release", "--sample"],
        "appendix_b::add",
    );
}

#[test]
fn run_sample_in_chromium_saves_the_profilers_samples_beside_the_profile() {
    assert!(
        browser_available(),
        "this test needs Chromium: `apt-get install chromium` (bash .ci/run does)"
    );
    run_with_samples(
        &[
            "run",
            "-p",
            "fib",
            "--release",
            "--host",
            "browser",
            "--sample",
        ],
        "fib::fib",
    );
}

#[test]
fn run_sample_of_a_plain_build_keeps_the_samples_as_the_profile() {
    let run = wasmprof(&[
        "run",
        "-p",
        "appendix-b",
        "--release",
        "--no-instrument",
        "--sample",
    ]);
    run.assert_success();
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Samples "))
        .unwrap_or_else(|| panic!("no Samples line:\n{}", run.stderr));
    let path = line.split(" (").next().unwrap();
    let report = wasmprof(&["report", "--input", path]);
    report.assert_success();
    assert!(
        report.stdout.contains("appendix_b::add"),
        "{}",
        report.stdout
    );
}

/// The legacy-mangled name of a plain path up to its hash, as a module's
/// name section names the function:
/// `_ZN10regex_lite6pikevm9SparseSet6insert17h` (a function nested in it,
/// such as the site's marker `__wasmprof_here`, has another segment there).
fn mangled_prefix(path: &str) -> String {
    let segments: String = path
        .split("::")
        .map(|segment| format!("{}{segment}", segment.len()))
        .collect();
    format!("_ZN{segments}17h")
}

/// A sampled build for wasmtime keeps no frames: the compiler inlines
/// regex-lite's functions as it would, and wasmtime's samples give them
/// their frames back from the module's line tables. Its counts stay exact
/// (held against the oracle's).
#[test]
fn run_in_wasmtime_finds_the_calls_the_compiler_inlined_in_the_line_tables() {
    let run = wasmprof(&[
        "run",
        "-p",
        "patterns",
        "--release",
        "--host",
        "wasmtime",
        "--target",
        "wasm32-wasip1",
        "--instrument-all",
        "--instrument-crate",
        "regex-lite",
        "--verify-counts",
        "--",
        "1",
    ]);
    run.assert_success();
    let profile = run.profile();
    let check = profile.run.count_check.as_ref().expect("a count check");
    assert!(
        check.functions > 0 && check.differences.is_empty(),
        "{check:?}"
    );
    let module = std::fs::read(&profile.run.module).unwrap();
    let functions: Vec<String> = wasmprof_profile::wasm_info::function_names(&module)
        .unwrap()
        .into_values()
        .collect();
    let has_a_function = |path: &str| {
        let prefix = mangled_prefix(path);
        functions.iter().any(|f| f.starts_with(&prefix))
    };
    let samples = profile.run.samples_file.as_deref().expect("samples_file");
    let samples = wasmprof_profile::input::read(
        std::path::Path::new(samples),
        &wasmprof_profile::sampled::Options::default(),
    )
    .unwrap()
    .profile;
    let self_nanos = samples.self_nanos();
    // regex-lite's functions that the samples saw running and that have
    // no function of their own in the module: only the line tables could
    // name them.
    let mut inlined: Vec<&str> = samples
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| self_nanos[*i] > 0.0)
        .filter_map(|(_, n)| n.function)
        .map(|f| samples.functions[f].name.as_str())
        .filter(|name| name.starts_with("regex_lite::") && !name.contains(['<', '{']))
        .filter(|name| !has_a_function(name))
        .collect();
    inlined.sort_unstable();
    inlined.dedup();
    assert!(
        !inlined.is_empty(),
        "no inlined function of regex-lite was sampled (the module has {} functions)",
        functions.len()
    );
    // And the profile gives them the samples' time.
    let timed: Vec<&str> = profile
        .functions
        .iter()
        .filter(|f| inlined.contains(&f.name.as_str()))
        .map(|f| f.name.as_str())
        .collect();
    assert!(!timed.is_empty(), "{inlined:?}");
    let report = wasmprof(&["report", "--input", run.profile_path().to_str().unwrap()]);
    report.assert_success();
    assert!(
        inlined
            .iter()
            .any(|name| report.stdout.contains(&format!("{name} (sampled)"))),
        "{inlined:?}\n{}",
        report.stdout
    );
}
