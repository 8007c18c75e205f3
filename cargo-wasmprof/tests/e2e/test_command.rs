//! `cargo wasmprof test`: real test suites built for WebAssembly and run by
//! cargo with wasmprof as the target runner. The standard harness
//! (`examples/wordcount`, wasm32-wasip1) in Node and wasmtime;
//! wasm-bindgen-test (`examples/image-kernels`) in Node and headless
//! Chromium. The same harness output and the same exact counts in every
//! host; failing and hanging tests fail the command with their profile
//! kept; `--per-test` files named after the tests. And the WASI `run`
//! proofs that go with them: `proc_exit` deep in the stack, a module built
//! for another host.

use std::path::Path;

use crate::support::*;

/// `cargo wasmprof test ARGS`.
fn test(args: &[&str]) -> Run {
    let mut all = vec!["test"];
    all.extend_from_slice(args);
    wasmprof(&all)
}

/// The harness's output without its timings, which differ between runs.
fn harness_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|line| match line.find("; finished in") {
            Some(at) => line[..at].to_owned(),
            None => line.to_owned(),
        })
        .collect()
}

/// The `<profile>.tests` directory `--per-test` wrote.
fn per_test_dir(run: &Run) -> std::path::PathBuf {
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Per test "))
        .unwrap_or_else(|| panic!("no per-test line in:\n{}", run.stderr));
    let dir = line.split(" profiles in ").nth(1).unwrap();
    Path::new(dir.split(" (").next().unwrap()).to_path_buf()
}

#[test]
fn wasi_tests_run_alike_in_node_and_wasmtime_with_a_node_per_test() {
    let mut runs = Vec::new();
    for host in ["node", "wasmtime"] {
        let run = test(&["-p", "wordcount", "--host", host]);
        run.assert_success();
        for line in [
            "test tests::counts_a_long_text ... ok",
            "test tests::reads_a_file_of_the_package ... ok",
            "test result: ok. 5 passed; 0 failed; 2 ignored",
            "test the_poem_has_four_lines_and_twenty_eight_words ... ok",
        ] {
            assert!(run.stdout.contains(line), "{host}: {line}\n{}", run.stdout);
        }
        let profile = run.profile();
        assert!(profile.run.complete, "{host}");
        // Each test's calls are under its own node, exactly.
        let long = ["wordcount::tests::counts_a_long_text", "wordcount::count"];
        assert_eq!(calls_of_path(&profile, &long), 1, "{host}");
        assert_eq!(
            calls_of_path(&profile, &[long[0], long[1], "wordcount::count_line"]),
            2_000
        );
        assert_eq!(
            calls_of_path(
                &profile,
                &[
                    "poem::the_poem_has_four_lines_and_twenty_eight_words",
                    "wordcount::count",
                    "wordcount::count_line",
                    "wordcount::is_word"
                ]
            ),
            28
        );
        // A test reads the package's own file, as under `cargo test`.
        assert_eq!(
            calls_of_path(
                &profile,
                &[
                    "wordcount::tests::reads_a_file_of_the_package",
                    "wordcount::read_input"
                ]
            ),
            1
        );
        assert!(
            run.stderr
                .contains("slowest 5 of 7 tests, in 3 test binaries:"),
            "{}",
            run.stderr
        );
        let slowest = run
            .stderr
            .lines()
            .skip_while(|l| !l.starts_with("slowest"))
            .nth(1)
            .unwrap();
        assert!(
            slowest.ends_with("wordcount::tests::counts_a_long_text"),
            "{slowest}"
        );
        runs.push(run);
    }
    assert_eq!(
        harness_lines(&runs[0].stdout),
        harness_lines(&runs[1].stdout)
    );
    assert_eq!(
        calls_by_function(&runs[0].profile()),
        calls_by_function(&runs[1].profile())
    );
}

#[test]
fn per_test_profiles_are_named_after_the_tests_and_hold_only_their_calls() {
    let run = test(&["-p", "wordcount", "--per-test", "--host", "wasmtime"]);
    run.assert_success();
    let dir = per_test_dir(&run);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "poem-long_words_of_the_poem.wasmprof.json",
            "poem-the_poem_has_four_lines_and_twenty_eight_words.wasmprof.json",
            "wordcount-tests-counts_a_long_text.wasmprof.json",
            "wordcount-tests-counts_words_and_lines.wasmprof.json",
            "wordcount-tests-punctuation_is_not_a_letter.wasmprof.json",
            "wordcount-tests-reads_a_file_of_the_package.wasmprof.json",
            "wordcount-tests-short_words_are_left_out.wasmprof.json",
        ],
        "{}",
        run.stderr
    );
    let one = wasmprof_profile::profile::read_profile(
        &dir.join("wordcount-tests-counts_a_long_text.wasmprof.json"),
    )
    .unwrap();
    let calls = calls_by_function(&one);
    assert_eq!(calls["wordcount::count_line"], 2_000);
    assert_eq!(calls["wordcount::is_word"], 18_000);
    assert!(!calls.contains_key("poem::long_words_of_the_poem"));
    // It reads as any profile does.
    let report = wasmprof(&[
        "report",
        "--input",
        dir.join("wordcount-tests-counts_a_long_text.wasmprof.json")
            .to_str()
            .unwrap(),
    ]);
    report.assert_success();
    assert!(report.stdout.contains("wordcount::count_line"));
}

#[test]
fn a_failing_test_fails_the_command_and_its_profile_is_written() {
    let run = test(&[
        "-p",
        "wordcount",
        "--lib",
        "--per-test",
        "--",
        "--ignored",
        "fails_on_purpose",
    ]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    // A panic aborts a wasm32-wasip1 test binary: the user is told how to
    // see its message, and which test did not return.
    assert!(run.stderr.contains("`-- --nocapture`"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("did not return (failed or stopped, their open frames marked): wordcount::tests::fails_on_purpose"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(
        calls_of_path(
            &profile,
            &["wordcount::tests::fails_on_purpose", "wordcount::count"]
        ),
        1
    );
    assert!(
        per_test_dir(&run)
            .join("wordcount-tests-fails_on_purpose.wasmprof.json")
            .is_file()
    );
    // With --nocapture the panic's message is there.
    let run = test(&[
        "-p",
        "wordcount",
        "--lib",
        "--host",
        "wasmtime",
        "--",
        "--ignored",
        "fails_on_purpose",
        "--nocapture",
    ]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert!(
        run.stderr.contains("two words, not three"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_hanging_test_is_stopped_by_the_timeout_with_its_profile() {
    for host in ["node", "wasmtime"] {
        let run = test(&[
            "-p",
            "wordcount",
            "--lib",
            "--host",
            host,
            "--timeout",
            "2s",
            "--",
            "--ignored",
            "hangs_on_purpose",
        ]);
        assert_ne!(run.code(), Some(0), "{host}: {}", run.stderr);
        assert!(
            run.stderr.contains("timed out after 2000 ms"),
            "{}",
            run.stderr
        );
        let profile = run.profile();
        assert!(!profile.run.complete);
        assert!(
            calls_of_path(
                &profile,
                &[
                    "wordcount::tests::hangs_on_purpose",
                    "wordcount::count_line"
                ]
            ) > 1_000,
            "{host}"
        );
    }
}

#[test]
fn bindgen_tests_run_alike_in_node_and_the_browser() {
    let mut runs = Vec::new();
    for host in ["node", "browser"] {
        let run = test(&["-p", "image-kernels", "--lib", "--host", host]);
        run.assert_success();
        for line in [
            "running 9 tests",
            "test tests::luminance_weighs_green_most ... ok",
            "test tests::threshold_counts_the_bright_pixels ... ok",
            "test tests::a_blur_after_an_await_keeps_a_flat_image_flat ... ok",
            "test tests::white_stays_white ... ok",
            "test result: ok. 7 passed; 0 failed; 2 ignored",
        ] {
            assert!(run.stdout.contains(line), "{host}: {line}\n{}", run.stdout);
        }
        let profile = run.profile();
        assert!(profile.run.complete, "{host}");
        // Every test that ran is at the root, once, and nothing else is:
        // the two a `macro_rules!` macro wrote too, which no rewrite sees
        // and only the harness names.
        let mut tests: Vec<&str> = (profile.nodes.iter())
            .filter(|n| n.parent == Some(0))
            .filter_map(|n| n.function)
            .map(|f| profile.functions[f].name.as_str())
            .collect();
        tests.sort_unstable();
        assert_eq!(
            tests,
            [
                "image_kernels::tests::a_blur_after_an_await_keeps_a_flat_image_flat",
                "image_kernels::tests::a_box_blur_keeps_a_flat_image_flat",
                "image_kernels::tests::luminance_weighs_green_most",
                "image_kernels::tests::pure_green_is_a_middle_gray",
                "image_kernels::tests::sobel_finds_no_edge_in_a_flat_image",
                "image_kernels::tests::threshold_counts_the_bright_pixels",
                "image_kernels::tests::white_stays_white",
            ],
            "{host}"
        );
        for written_by_a_macro in [
            "image_kernels::tests::white_stays_white",
            "image_kernels::tests::pure_green_is_a_middle_gray",
        ] {
            let path = [
                written_by_a_macro,
                "image_kernels::grayscale",
                "image_kernels::luminance",
            ];
            assert_eq!(calls_of_path(&profile, &path), 16, "{host}");
        }
        assert_eq!(
            calls_of_path(
                &profile,
                &[
                    "image_kernels::tests::threshold_counts_the_bright_pixels",
                    "image_kernels::grayscale",
                    "image_kernels::luminance"
                ]
            ),
            64
        );
        assert_eq!(
            calls_of_path(
                &profile,
                &[
                    "image_kernels::tests::a_box_blur_keeps_a_flat_image_flat",
                    "image_kernels::convolve",
                    "image_kernels::convolve_at"
                ]
            ),
            36
        );
        // An async test: a node at the root like the others, its future
        // created, polled and completed.
        let blur_after_await = [
            "image_kernels::tests::a_blur_after_an_await_keeps_a_flat_image_flat",
            "image_kernels::convolve",
            "image_kernels::convolve_at",
        ];
        assert_eq!(calls_of_path(&profile, &blur_after_await), 36, "{host}");
        let test_node = profile
            .nodes
            .iter()
            .position(|n| {
                n.parent == Some(0)
                    && n.function
                        .is_some_and(|f| profile.functions[f].name == blur_after_await[0])
            })
            .expect("the async test's node");
        assert!(profile.functions[profile.nodes[test_node].function.unwrap()].is_async);
        let future = profile
            .futures
            .iter()
            .find(|f| f.node == test_node)
            .expect("its futures");
        assert_eq!((future.completions, future.pending), (1, 0), "{host}");
        assert!(future.polls >= 2, "one await: {future:?}");
        runs.push(run);
    }
    assert!(runs[1].profile().run.host.starts_with("chromium"));
    let mut lines: Vec<Vec<String>> = runs.iter().map(|r| harness_lines(&r.stdout)).collect();
    // The harness prints its tests in the order they finish.
    for l in &mut lines {
        l.sort();
    }
    assert_eq!(lines[0], lines[1]);
    assert_eq!(
        calls_by_function(&runs[0].profile()),
        calls_by_function(&runs[1].profile())
    );
}

#[test]
fn nocapture_shows_a_bindgen_test_s_console_output() {
    const LOGGED: &str = "luminance of pure red, green and blue";
    for host in ["node", "browser"] {
        let quiet = test(&["-p", "image-kernels", "--lib", "--host", host, "luminance"]);
        quiet.assert_success();
        assert!(!quiet.stdout.contains(LOGGED), "{host}: {}", quiet.stdout);
        let shown = test(&[
            "-p",
            "image-kernels",
            "--lib",
            "--host",
            host,
            "luminance",
            "--",
            "--nocapture",
        ]);
        shown.assert_success();
        assert!(shown.stdout.contains(LOGGED), "{host}: {}", shown.stdout);
        assert!(
            shown.stdout.contains("1 passed"),
            "{host}: {}",
            shown.stdout
        );
    }
}

#[test]
fn run_in_browser_tests_go_to_the_browser_and_the_rest_to_node() {
    let run = test(&["-p", "image-kernels"]);
    run.assert_success();
    assert!(
        run.stdout
            .contains("test the_scene_has_bright_and_dark_parts ... ok"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("test tests::luminance_weighs_green_most ... ok")
    );
    let profile = run.profile();
    // Every pixel of the scene, and 16 of the blank canvas.
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "web::the_scene_has_bright_and_dark_parts",
                "image_kernels::grayscale",
                "image_kernels::luminance"
            ]
        ),
        320 * 200
    );
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "web::a_blank_canvas_is_dark",
                "image_kernels::grayscale",
                "image_kernels::luminance"
            ]
        ),
        16
    );
    assert!(run.stderr.contains("in 2 test binaries"), "{}", run.stderr);
}

#[test]
fn failing_and_hanging_bindgen_tests_fail_the_command_with_their_profile() {
    let run = test(&["-p", "image-kernels", "--lib", "--", "--ignored", "fails"]);
    // 1, as `cargo test` with wasm-bindgen-test-runner exits for a failure.
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stdout.contains("test tests::fails_on_purpose ... FAIL"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("every pixel is above 5"),
        "{}",
        run.stdout
    );
    assert!(!run.profile().run.complete);
    assert_eq!(
        calls_by_function(&run.profile())["image_kernels::threshold"],
        1
    );

    // Busy in a loop that no timer of the page or of Node reaches. The
    // bound leaves a loaded machine time to compile the module first.
    for host in ["node", "browser"] {
        let run = test(&[
            "-p",
            "image-kernels",
            "--lib",
            "--host",
            host,
            "--timeout",
            "6s",
            "--",
            "--ignored",
            "hangs",
        ]);
        assert_ne!(run.code(), Some(0), "{host}: {}", run.stderr);
        assert!(run.stderr.contains("timed out"), "{host}: {}", run.stderr);
        assert!(
            calls_of_path(
                &run.profile(),
                &[
                    "image_kernels::tests::hangs_on_purpose",
                    "image_kernels::threshold"
                ]
            ) > 100,
            "{host}"
        );
    }
}

#[test]
fn a_benchmark_target_runs_once_in_test_mode() {
    let run = test(&["-p", "wordcount", "--bench", "count"]);
    run.assert_success();
    assert!(
        run.stdout.contains("count: ok (10 rounds)"),
        "{}",
        run.stdout
    );
    assert_eq!(calls_by_function(&run.profile())["wordcount::count"], 10);
}

#[test]
fn a_host_that_cannot_run_the_tests_is_refused_before_the_build() {
    let run = test(&["-p", "wordcount", "--host", "browser"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr.contains("use --host node or --host wasmtime"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Compiling"), "{}", run.stderr);
    let run = test(&["-p", "image-kernels", "--host", "wasmtime"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr
            .contains("need a JavaScript host: use --host node or --host browser"),
        "{}",
        run.stderr
    );
    let run = test(&["-p", "wordcount", "--invoke", "main"]);
    assert!(run.stderr.contains("--invoke"), "{}", run.stderr);
    let run = test(&["-p", "wordcount", "--target", "x86_64-unknown-linux-gnu"]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("wasm32-wasip1"), "{}", run.stderr);
    let run = test(&["-p", "wordcount", "--", "--no-such-flag"]);
    assert_ne!(run.code(), Some(0));
    // The runner alone says what it is for.
    let run = wasmprof(&["test-runner", "x.wasm"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr.contains("run `cargo wasmprof test`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_wasi_binary_for_the_browser_is_refused_naming_the_right_host() {
    let run = wasmprof(&["run", "-p", "wordcount", "--host", "browser"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr
            .contains("a WASI binary cannot run in the browser"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--host node"), "{}", run.stderr);
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);
}

#[test]
fn proc_exit_deep_in_the_stack_keeps_the_profile_with_its_open_frames() {
    for host in ["node", "wasmtime"] {
        let run = wasmprof_with_stdin(
            &[
                "run",
                "--host",
                host,
                "-p",
                "wordcount",
                "--env",
                "WORDCOUNT_STRICT=1",
            ],
            b"one two\nthree\n\nfour\n",
            &[],
        );
        assert_eq!(run.code(), Some(3), "{host}: {}", run.stderr);
        assert!(run.stderr.contains("line 3 is blank"), "{}", run.stderr);
        let profile = run.profile();
        assert!(!profile.run.complete, "{host}");
        let open: Vec<String> = profile
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.open)
            .map(|(i, _)| {
                profile
                    .stack(i)
                    .iter()
                    .map(|&f| profile.functions[f].name.clone())
                    .collect::<Vec<_>>()
                    .join(" > ")
            })
            .collect();
        assert!(
            open.contains(
                &"wordcount::main > wordcount::count > wordcount::reject_blank".to_owned()
            ),
            "{host}: {open:?}"
        );
        // The two lines before the blank one were counted.
        assert_eq!(
            calls_of_path(
                &profile,
                &[
                    "wordcount::main",
                    "wordcount::count",
                    "wordcount::count_line"
                ]
            ),
            2
        );
    }
}

#[test]
fn a_registry_crate_s_own_test_suite_written_by_a_macro_counts_every_test() {
    // itoa 1.0.19 as published (a dependency of the Yew example, so cargo
    // has its source): its integration tests are `#[test]`s written by a
    // `macro_rules!` macro, and its doctests run as binaries of their own,
    // which rustdoc hands the runner without a name; the one at line 20
    // writes its own `fn main`, so its place is found in the source.
    let (_dir, copy) = registry_crate_copy("itoa", "1.0.19");

    let run = wasmprof_in(&copy, &["test", "--instrument-all"]);
    run.assert_success();
    // The harness's own counts: 11 integration tests and 2 doctests.
    assert!(
        run.stdout.contains("test result: ok. 11 passed; 0 failed"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("test result: ok. 2 passed; 0 failed"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("slowest 5 of 13 tests"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(
        profile.run.entry.contains("2 doctests"),
        "{}",
        profile.run.entry
    );
    assert!(
        !profile.run.module.contains("rustdoctest"),
        "{}",
        profile.run.module
    );
    let tests: Vec<&str> = profile
        .functions
        .iter()
        .filter(|f| f.is_test)
        .map(|f| f.name.as_str())
        .collect();
    // The 11 and the two doctests, named by their place.
    assert_eq!(tests.len(), 13, "{tests:?}");
    assert!(tests.contains(&"test::test_u128_max"), "{tests:?}");
    assert!(
        tests.contains(&"itoa::<doctest src/lib.rs (line 20)>"),
        "{tests:?}"
    );
    assert!(
        tests.contains(&"itoa::<doctest src/lib.rs (line 67)>"),
        "{tests:?}"
    );
    let calls = calls_by_function(&profile);
    // The four 128-bit tests, one formatting each; and named as rustc does.
    assert_eq!(calls["<u128 as itoa::Unsigned>::fmt"], 4);
    assert_eq!(
        calls_of_path(
            &profile,
            &["test::test_u128_max", "<u128 as itoa::Unsigned>::fmt"]
        ),
        1
    );
}

/// The tests `examples/case-tests` has, as its harness names them: three
/// `test_case` cases, two `rstest` cases, an `rstest` matrix of four and a
/// plain `#[test]`.
const CASE_TESTS: [&str; 10] = [
    "case_tests::tests::adds::case_1",
    "case_tests::tests::adds::case_2",
    "case_tests::tests::combos::a_1_1::b_1_10",
    "case_tests::tests::combos::a_1_1::b_2_20",
    "case_tests::tests::combos::a_2_2::b_1_10",
    "case_tests::tests::combos::a_2_2::b_2_20",
    "case_tests::tests::plain",
    "case_tests::tests::squares::test_case_1_two",
    "case_tests::tests::squares::test_case_2_three",
    "case_tests::tests::squares::test_case_3_4_16_expects",
];

/// case-tests' doctests, named by their place. Edition 2024's rustdoc runs
/// them in one merged binary under a harness of its own, which names them;
/// itoa's (edition 2021) are binaries of their own, without a name.
const CASE_DOCTESTS: [&str; 2] = [
    "case_tests::<doctest src/lib.rs (line 18)>",
    "case_tests::<doctest src/lib.rs (line 9)>",
];

#[test]
fn tests_written_by_rstest_and_test_case_and_doctests_are_tests_under_their_names() {
    // Node's host watches libtest's output for the tests it begins; each
    // doctest is named by its place in the source.
    {
        let host = "node";
        let run = test(&[
            "-p",
            "case-tests",
            "--host",
            host,
            "--instrument-all",
            "--min-size",
            "0",
        ]);
        run.assert_success();
        assert!(
            run.stdout.contains("test result: ok. 10 passed; 0 failed"),
            "{host}: {}",
            run.stdout
        );
        assert!(
            run.stderr.contains("slowest 5 of 12 tests"),
            "{host}: {}",
            run.stderr
        );
        let profile = run.profile();
        let mut tests: Vec<&str> = profile
            .functions
            .iter()
            .filter(|f| f.is_test)
            .map(|f| f.name.as_str())
            .collect();
        tests.sort_unstable();
        let mut expected = [&CASE_DOCTESTS[..], &CASE_TESTS[..]].concat();
        expected.sort_unstable();
        assert_eq!(tests, expected, "{host}");
        // Each test's calls are under it.
        let add_under = |test: &str| -> u64 {
            (1..profile.nodes.len())
                .filter(|&i| {
                    let stack = profile.stack(i);
                    let name = |f: &usize| profile.functions[*f].name.as_str();
                    stack.first().map(name) == Some(test)
                        && stack.last().map(name) == Some("case_tests::add")
                })
                .map(|i| profile.nodes[i].calls)
                .sum()
        };
        assert_eq!(add_under("case_tests::tests::adds::case_2"), 1, "{host}");
        assert_eq!(
            add_under("case_tests::tests::combos::a_2_2::b_2_20"),
            1,
            "{host}"
        );
        assert_eq!(add_under("case_tests::tests::plain"), 1, "{host}");
        assert_eq!(add_under(CASE_DOCTESTS[0]), 1, "{host}");
        assert_eq!(add_under(CASE_DOCTESTS[1]), 0, "{host}");
        assert_eq!(
            calls_of_path(&profile, &[CASE_DOCTESTS[1], "case_tests::square"]),
            1,
            "{host}"
        );
        assert_eq!(
            add_under("case_tests::tests::squares::test_case_1_two"),
            0,
            "{host}"
        );
        // The plain test, instrumented as a test too, is there once, at
        // the root.
        assert_eq!(
            calls_of_path(&profile, &["case_tests::tests::plain"]),
            1,
            "{host}"
        );
    }
}
