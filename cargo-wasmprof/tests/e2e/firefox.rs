//! The browser host in real headless Firefox (Debian's `firefox-esr`),
//! driven through WebDriver BiDi, where it differs from Chromium: its
//! sampler reached in the browser's own window, a script that never
//! yields, an old or missing Firefox; `cargo wasmprof test` in Firefox;
//! and no Firefox process or profile directory left after any of them. What every browser does
//! alike is in `every_browser.rs`.

use std::time::{Duration, Instant};

use crate::every_browser::assert_the_app_ran;
use crate::support::browsers::Browser;
use crate::support::*;

fn in_firefox(args: &[&str]) -> Run {
    Browser::Firefox.run(args)
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
    // Firefox's own sampler, started in its window, saw the program: the
    // kernels' inner calls, too short to time, have sampled time.
    assert!(!run.stderr.contains("Firefox's sampler"), "{}", run.stderr);
    let profile = run.profile();
    assert!(profile.timer.coverage.is_some(), "{}", run.stderr);
    let samples = profile.run.samples_file.as_deref().expect("samples saved");
    let samples = wasmprof_profile::input::read(std::path::Path::new(samples), &Default::default())
        .unwrap()
        .profile;
    assert!(
        samples
            .functions
            .iter()
            .any(|f| f.name == "image_kernels::convolve_at"),
        "the samples name the program's functions"
    );
    let calls = assert_the_app_ran(&run);
    assert_eq!(calls["image_kernels::draw_scene"], 1);
    assert_eq!(
        calls_of_path(
            &run.profile(),
            &["image_kernels::sobel", "image_kernels::convolve_at"]
        ),
        2 * 318 * 198
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

/// A recording window in Firefox: its sampler restarts as the window
/// opens, so the samples are the window's, as the counts are.
#[test]
fn a_window_s_samples_in_firefox_are_the_window_s_own() {
    let run = in_firefox(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "animate",
        "--timeout",
        "120s",
        "--after",
        "1s",
        "--duration",
        "1500ms",
        "--",
        "1000000",
        "0",
    ]);
    run.assert_success();
    let profile = run.profile();
    let window = profile.run.window.expect("the window");
    assert!(window.start_nanos >= 1_000_000_000, "{window:?}");
    crate::render_loops::samples_are_the_window_s(&run, &profile, window);
}
