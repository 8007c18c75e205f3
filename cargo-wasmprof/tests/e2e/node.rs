//! The whole product on the bundled examples: built to wasm with the real
//! toolchain, run in real Node, reported in gprof, pprof and JSON layouts.

use crate::support::*;

const MAINS: [&str; 4] = [
    "appendix_b::f_main_1",
    "appendix_b::f_main_2",
    "appendix_b::f_main_3",
    "appendix_b::f_main_4",
];

#[test]
fn appendix_b_counts_are_exact_and_equal_work_takes_equal_time() {
    let run = wasmprof(&["run", "-p", "appendix-b", "--release"]);
    run.assert_success();
    assert!(
        run.stdout.contains("appendix-b: sum = "),
        "program output reaches the terminal"
    );
    let profile = run.profile();
    assert!(profile.run.complete);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["appendix_b::add"], 52_500_000);
    assert_eq!(calls["appendix_b::f_quarter"], 7);
    assert_eq!(calls["appendix_b::f_half"], 3);
    assert_eq!(calls["appendix_b::f_half_2"], 1);
    for f in MAINS {
        assert_eq!(calls[f], 1, "{f}");
    }
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "appendix_b::main",
                "appendix_b::f_main_4",
                "appendix_b::f_quarter"
            ]
        ),
        4
    );
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "appendix_b::main",
                "appendix_b::f_half_2",
                "appendix_b::f_quarter",
                "appendix_b::add"
            ]
        ),
        5_000_000
    );

    // Equal work taking equal time is checked in tests/timing/accuracy.rs, alone,
    // because the tests here run side by side and skew each other's times.
    let times: Vec<f64> = MAINS
        .iter()
        .map(|f| time_of_path(&profile, &["appendix_b::main", f]))
        .collect();
    assert!(times.iter().all(|&t| t > 0.0), "{times:?}");

    // Self time is never negative, and the file says where each function is.
    assert!(profile.self_nanos().iter().all(|&t| t >= 0.0));
    let add = profile
        .functions
        .iter()
        .find(|f| f.name == "appendix_b::add")
        .unwrap();
    assert_eq!(add.file, "appendix-b/src/main.rs");
    assert_eq!(add.line, 22);

    // The gprof report of that same file.
    let input = run.profile_path();
    let report = wasmprof(&["report", "--input", input.to_str().unwrap()]);
    report.assert_success();
    let text = &report.stdout;
    assert!(text.contains("Flat profile"), "{text}");
    assert!(text.contains("Call graph"), "{text}");
    assert!(text.contains("52500000"), "{text}");
    assert!(text.contains("10000000/52500000"), "{text}");
    assert!(text.contains("2/7"), "{text}");
    assert!(text.contains("<spontaneous>"), "{text}");
}

#[test]
fn recursion_and_cycles_are_counted_as_gnu_gprof_counts_them() {
    let run = wasmprof(&["run", "-p", "fib", "--release"]);
    run.assert_success();
    assert!(
        run.stdout.contains("fib: sum = "),
        "console.log reaches the terminal:\n{}",
        run.stdout
    );
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    assert_eq!(calls["fib::fib"], 200 + 4_378_000);
    assert_eq!(calls["fib::is_even"], 10_200);
    assert_eq!(calls["fib::is_odd"], 10_200);
    assert_eq!(calls["fib::workload"], 1);

    let input = run.profile_path();
    let report = wasmprof(&["report", "--input", input.to_str().unwrap()]);
    report.assert_success();
    let text = &report.stdout;
    assert!(text.contains("200+4378000"), "{text}");
    assert!(text.contains("<cycle 1 as a whole>"), "{text}");
    // After the name, what its time is (it varies from run to run), then
    // the cycle.
    assert!(
        text.lines()
            .any(|l| l.contains(" fib::is_even ") && l.contains(" <cycle 1> [")),
        "{text}"
    );

    // pprof, checked by the real `go tool pprof`.
    let dir = std::env::temp_dir().join(format!("wasmprof-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pb = dir.join("fib.pb.gz");
    wasmprof(&[
        "report",
        "--input",
        input.to_str().unwrap(),
        "--format",
        "pprof",
        "-o",
        pb.to_str().unwrap(),
    ])
    .assert_success();
    let bytes = std::fs::read(&pb).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip");
    let out = go_pprof(&["-top", "-sample_index=calls", pb.to_str().unwrap()]);
    assert!(out.contains("fib::fib"), "{out}");
    assert!(out.contains("4378200"), "exact call count in pprof:\n{out}");

    let json = wasmprof(&[
        "report",
        "--input",
        input.to_str().unwrap(),
        "--format",
        "json",
    ]);
    json.assert_success();
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("json report parses");
    assert!(value.to_string().contains("fib::is_odd"));
}

#[test]
fn trait_objects_methods_and_closures_in_a_plain_module() {
    let run = wasmprof(&["run", "-p", "shapes", "--release", "--invoke", "run"]);
    run.assert_success();
    assert!(run.stderr.contains("Returned"), "{}", run.stderr);
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    // Named as rustc names them: a trait method with its type and trait.
    assert_eq!(calls["shapes::make_shapes"], 1);
    assert_eq!(calls["shapes::Circle::new"], 50);
    // 50 of each through total_area, 5 of each through describe's closure.
    assert_eq!(calls["<shapes::Circle as shapes::Shape>::area"], 55);
    assert_eq!(calls["<shapes::Square as shapes::Shape>::area"], 55);
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "shapes::total_area",
                "<shapes::Circle as shapes::Shape>::area"
            ]
        ),
        50
    );
    assert_eq!(
        calls_of_path(&profile, &["<shapes::Circle as shapes::Shape>::area"]),
        5
    );
    assert_eq!(
        calls_of_path(&profile, &["shapes::make_shapes", "shapes::Circle::new"]),
        50
    );
}

#[test]
fn generic_recursion_with_arguments_through_invoke() {
    let run = wasmprof(&[
        "run",
        "-p",
        "shapes",
        "--release",
        "--invoke",
        "sort",
        "--",
        "1000",
    ]);
    run.assert_success();
    assert!(run.stderr.contains("Returned 1"), "sorted:\n{}", run.stderr);
    let calls = calls_by_function(&run.profile());
    assert!(calls["shapes::quicksort"] > 1000, "{calls:?}");
    assert!(calls["shapes::partition"] > 500, "{calls:?}");
}

#[test]
fn counts_only_mode_reads_no_clock_and_counts_exactly() {
    let run = wasmprof(&["run", "-p", "fib", "--release", "--timer", "none"]);
    run.assert_success();
    let profile = run.profile();
    assert_eq!(
        profile.timer.mode,
        wasmprof_profile::profile::TimerMode::None
    );
    assert_eq!(calls_by_function(&profile)["fib::fib"], 4_378_200);
    assert!(profile.nodes.iter().all(|n| n.inclusive_nanos == 0.0));
    let module = std::path::PathBuf::from(&profile.run.module);
    let info = wasmprof_profile::wasm_info::inspect(&std::fs::read(module).unwrap()).unwrap();
    assert!(
        !info.imports.iter().any(|i| i.starts_with("prof.")),
        "{:?}",
        info.imports
    );
    assert!(info.has_snapshot_export);
}

#[test]
fn report_reads_the_newest_profile_when_given_none() {
    // A target directory of its own, so that other tests' runs do not race.
    let target = examples_dir().join("target").join("e2e-newest");
    let target = target.to_str().unwrap();
    let run = wasmprof(&[
        "run",
        "-p",
        "shapes",
        "--invoke",
        "run",
        "--target-dir",
        target,
    ]);
    run.assert_success();
    let report = wasmprof(&["report", "--target-dir", target]);
    report.assert_success();
    assert!(
        report
            .stdout
            .contains("<shapes::Circle as shapes::Shape>::area"),
        "{}",
        report.stdout
    );
}

/// `--runs 3`: one build, three runs, three profiles of their own, each
/// with every call counted.
#[test]
fn runs_after_one_build_each_leave_a_profile_of_their_own() {
    let run = wasmprof(&[
        "run",
        "-p",
        "long-call",
        "--release",
        "--invoke",
        "long_call",
        "--runs",
        "3",
    ]);
    run.assert_success();
    assert_eq!(run.stderr.matches("Building").count(), 1, "{}", run.stderr);
    for n in 1..=3 {
        assert!(
            run.stderr.contains(&format!("run {n} of 3)")),
            "{}",
            run.stderr
        );
    }
    let output = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(output.matches("long call: ").count(), 3, "{output}");
    let paths = run.profile_paths();
    assert_eq!(paths.len(), 3, "{}", run.stderr);
    assert_eq!(
        paths
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        3
    );
    for path in &paths {
        let profile = read_profile(path).unwrap();
        assert_eq!(
            calls_by_function(&profile).get("long_call::step"),
            Some(&200_001),
            "{}",
            path.display()
        );
    }
}
