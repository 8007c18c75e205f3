//! The browser host in real headless Firefox (Debian's `firefox-esr`),
//! driven through WebDriver BiDi: the same examples as in Chromium with the
//! same exact counts, checked against the oracle's count; the failure
//! paths; `cargo wasmprof test` in Firefox; and no Firefox process or
//! profile directory left after any of them.

use std::time::{Duration, Instant};

use crate::support::*;

fn require_firefox() {
    assert!(
        firefox_available(),
        "these tests need Firefox 128 or newer: `apt-get install firefox-esr` (bash .ci/run does)"
    );
}

/// `cargo wasmprof ARGS --host browser --browser firefox` (before any
/// `--`), with `env`; checks that nothing of Firefox is left.
fn in_firefox_with_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    require_firefox();
    let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    let mut all: Vec<&str> = args[..split].to_vec();
    all.extend(["--host", "browser", "--browser", "firefox"]);
    all.extend_from_slice(&args[split..]);
    let child = spawn_wasmprof_with_env(&all, env);
    let pid = child.id();
    let run = Run::from_output(child.wait_with_output().expect("cargo-wasmprof ends"));
    assert_no_firefox_left(pid);
    run
}

fn in_firefox(args: &[&str]) -> Run {
    in_firefox_with_env(args, &[])
}

#[test]
fn counts_in_firefox_are_the_counts_in_node_and_agree_with_a_second_count() {
    let run = in_firefox(&["run", "-p", "fib", "--release", "--verify-counts"]);
    run.assert_success();
    assert!(run.stdout.contains("fib: sum = 1353000"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("Verified every call count of 4 functions"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(profile.run.complete);
    assert!(
        profile.run.host.starts_with("firefox ") && profile.run.host.ends_with("(headless)"),
        "{}",
        profile.run.host
    );
    let calls = calls_by_function(&profile);
    assert_eq!(calls["fib::fib"], 200 + 4_378_000);
    assert_eq!(calls["fib::is_even"], 10_200);
    assert_eq!(calls["fib::is_odd"], 10_200);
    assert!(profile.nodes.iter().all(|n| !n.open));
}

#[test]
fn a_canvas_app_in_firefox_draws_with_the_counts_it_has_in_chromium() {
    let run = in_firefox(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--verify-counts",
        "--sample",
    ]);
    run.assert_success();
    // Firefox's sampler is out of reach: said, and the run goes on.
    assert!(run.stderr.contains("Firefox's sampler"), "{}", run.stderr);
    assert!(
        run.stdout.contains("image-kernels: 64000 pixels"),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    assert_eq!(calls["image_kernels::luminance"], 64_000);
    assert_eq!(calls["image_kernels::convolve_at"], 3 * 318 * 198);
    assert_eq!(calls["image_kernels::draw_scene"], 1);
    assert_eq!(
        calls_of_path(
            &profile,
            &["image_kernels::sobel", "image_kernels::convolve_at"]
        ),
        2 * 318 * 198
    );
}

#[test]
fn the_users_own_page_runs_in_firefox() {
    let page = examples_dir().join("image-kernels").join("www");
    let run = in_firefox(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--page",
        page.to_str().unwrap(),
    ]);
    run.assert_success();
    assert_eq!(
        calls_by_function(&run.profile())["image_kernels::luminance"],
        64_000
    );
}

#[test]
fn console_lines_from_firefox_reach_their_streams_in_order() {
    let run = in_firefox(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "chatter",
    ]);
    run.assert_success();
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("chatter"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(lines(&run.stdout), ["chatter 1 log", "chatter 2 info"]);
    assert_eq!(
        lines(&run.stderr),
        ["chatter 3 warn", "chatter 4 error", "chatter 5 debug"]
    );
}

#[test]
fn a_panic_in_firefox_exits_101_with_its_message_and_keeps_the_profile() {
    let run = in_firefox(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "boom",
        "--",
        "4",
    ]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert!(
        run.stderr.contains("step 4 of 4 failed on purpose"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(
        calls_by_function(&profile)["image_kernels::checked_step"],
        5
    );
}

#[test]
fn a_trap_in_firefox_keeps_the_counts_made_before_it() {
    let run = in_firefox(&["run", "-p", "faults", "--invoke", "panic_after", "--", "5"]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(
        calls_of_path(&profile, &["faults::steps", "faults::step"]),
        6
    );
}

#[test]
fn an_animation_cut_by_the_timeout_keeps_the_profile_pulled_last() {
    let run = in_firefox(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "animate",
        "--until-exit",
        "--timeout",
        "4s",
        "--",
        "10000",
        "3",
    ]);
    assert_eq!(run.code(), Some(124), "{}", run.stderr);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    let frames = calls_by_function(&profile)["image_kernels::draw_frame"];
    assert!((1..10_000).contains(&frames), "{frames} frames");
}

#[test]
fn until_exit_in_firefox_waits_for_wasmprof_exit() {
    let run = in_firefox(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "animate",
        "--until-exit",
        "--timeout",
        "60s",
        "--",
        "30",
        "3",
    ]);
    assert_eq!(run.code(), Some(3), "{}", run.stderr);
    let profile = run.profile();
    assert_eq!(calls_by_function(&profile)["image_kernels::draw_frame"], 30);
    assert!(profile.nodes.iter().all(|n| !n.open));
}

#[test]
fn a_script_that_never_yields_is_timed_out_and_the_message_says_what_to_do() {
    // BiDi cannot stop a script, and this one never lets the page answer:
    // the run still ends at the timeout, Firefox is ended, and the message
    // points at the browser that can keep the profile.
    let started = Instant::now();
    let run = in_firefox(&["run", "-p", "faults", "--invoke", "spin", "--timeout", "3s"]);
    assert_eq!(run.code(), Some(124), "{}", run.stderr);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    assert!(run.stderr.contains("--browser chromium"), "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(90));
}

#[test]
fn a_firefox_that_dies_mid_run_keeps_the_profile_pulled_before() {
    let run = in_firefox_with_env(
        &[
            "run",
            "-p",
            "image-kernels",
            "--release",
            "--invoke",
            "animate",
            "--until-exit",
            "--timeout",
            "60s",
            "--",
            "10000",
            "3",
        ],
        &[("WASMPROF_TEST_CRASH_PAGE_AFTER_MS", "2500")],
    );
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("the browser went away"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("the profile is the one pulled"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    let frames = calls_by_function(&profile)["image_kernels::draw_frame"];
    assert!((1..10_000).contains(&frames), "{frames} frames");
}

#[test]
fn a_wasm_bindgen_test_suite_passes_in_firefox_with_each_test_at_the_root() {
    let run = in_firefox(&["test", "-p", "image-kernels", "--lib"]);
    run.assert_success();
    for line in [
        "running 9 tests",
        "test tests::luminance_weighs_green_most ... ok",
        "test tests::a_blur_after_an_await_keeps_a_flat_image_flat ... ok",
        "test result: ok. 7 passed; 0 failed; 2 ignored",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }
    let profile = run.profile();
    assert!(profile.run.complete);
    assert!(
        profile.run.host.starts_with("firefox "),
        "{}",
        profile.run.host
    );
    let tests = (profile.nodes.iter())
        .filter(|n| n.parent == Some(0))
        .filter_map(|n| n.function)
        .filter(|&f| {
            profile.functions[f]
                .name
                .starts_with("image_kernels::tests::")
        })
        .count();
    assert_eq!(tests, 7);
}

#[test]
fn a_named_firefox_that_is_not_installed_or_too_old_is_refused_with_what_to_do() {
    // A path that is no browser.
    let run = wasmprof(&[
        "run",
        "-p",
        "fib",
        "--host",
        "browser",
        "--browser",
        "/nonexistent/firefox",
    ]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("no such executable"), "{}", run.stderr);
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);

    // A "Firefox" that says it is version 115.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("firefox");
    std::fs::write(&old, "#!/bin/sh\necho 'Mozilla Firefox 115.9.0esr'\n").unwrap();
    std::fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = wasmprof(&[
        "run",
        "-p",
        "fib",
        "--host",
        "browser",
        "--browser",
        old.to_str().unwrap(),
    ]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("115"), "{}", run.stderr);
    assert!(run.stderr.contains("128"), "{}", run.stderr);
}
