//! What the browser host does the same in every browser it drives: the
//! examples' exact counts (checked against the oracle's second count), the
//! console relayed in order, a panic, a trap and a page that dies mid-run
//! each keeping the profile, `--until-exit`, the user's own page; and no
//! process or profile directory of the browser left after any of them.
//!
//! Each scenario is written once and run in each browser, as
//! `every_browser::chromium::…` and `every_browser::firefox::…`. What only
//! one browser does (Chromium's DevTools protocol, `--serve`, a script that
//! never yields in Firefox) is in `browser.rs` and `firefox.rs`.

use crate::support::browsers::Browser;
use crate::support::*;

/// Writes each scenario's test once per browser.
macro_rules! in_every_browser {
    ($($scenario:ident),* $(,)?) => {
        mod chromium {
            $(#[test]
            fn $scenario() {
                super::$scenario(super::Browser::Chromium)
            })*
        }
        mod firefox {
            $(#[test]
            fn $scenario() {
                super::$scenario(super::Browser::Firefox)
            })*
        }
    };
}

in_every_browser!(
    recursion_counts_are_the_counts_in_node_and_a_second_count,
    a_canvas_app_draws_with_its_exact_counts,
    the_users_own_page_loads_the_instrumented_module,
    console_lines_reach_the_terminal_in_order_on_their_streams,
    a_panic_exits_101_with_its_message_and_keeps_the_profile,
    a_trap_keeps_the_counts_made_before_it,
    a_page_that_dies_mid_run_keeps_the_profile_pulled_before,
    until_exit_waits_for_wasmprof_exit_through_animation_frames,
);

fn recursion_counts_are_the_counts_in_node_and_a_second_count(browser: Browser) {
    let run = browser.run(&["run", "-p", "fib", "--release", "--verify-counts"]);
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
    let host = &profile.run.host;
    assert!(
        host.starts_with(&format!("{} ", browser.name())) && host.ends_with("(headless)"),
        "{host}"
    );
    // Cross-origin isolated: a fine clock, not an ordinary page's 100 µs
    // (Chromium's measures 5 µs here, Firefox's under 0.1 µs).
    let resolution = profile.timer.resolution_nanos.expect("a resolution");
    assert!(resolution <= 20_000.0, "{resolution} ns");
    let calls = calls_by_function(&profile);
    assert_eq!(calls["fib::fib"], 200 + 4_378_000);
    assert_eq!(calls["fib::is_even"], 10_200);
    assert_eq!(calls["fib::is_odd"], 10_200);
    assert_eq!(calls["fib::workload"], 1);
    assert!(profile.nodes.iter().all(|n| !n.open));

    // `report` reads it as it reads a Node profile.
    let input = run.profile_path();
    let report = wasmprof(&["report", "--input", input.to_str().unwrap()]);
    report.assert_success();
    assert!(report.stdout.contains("200+4378000"), "{}", report.stdout);
    assert!(report.stdout.contains(browser.name()), "{}", report.stdout);
}

fn a_canvas_app_draws_with_its_exact_counts(browser: Browser) {
    let run = browser.run(&["run", "-p", "image-kernels", "--release"]);
    let calls = assert_the_app_ran(&run);
    for once in [
        "image_kernels::draw_scene",
        "image_kernels::grayscale",
        "image_kernels::convolve",
        "image_kernels::sobel",
        "image_kernels::threshold",
    ] {
        assert_eq!(calls[once], 1, "{once}");
    }
    assert_eq!(
        calls_of_path(
            &run.profile(),
            &["image_kernels::sobel", "image_kernels::convolve_at"]
        ),
        2 * 318 * 198
    );
}

fn the_users_own_page_loads_the_instrumented_module(browser: Browser) {
    let page = examples_dir().join("image-kernels").join("www");
    let run = browser.run(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--page",
        page.to_str().unwrap(),
    ]);
    assert_the_app_ran(&run);
}

/// The image-kernels app ran to its end with its exact counts; the calls
/// of each function.
pub(crate) fn assert_the_app_ran(run: &Run) -> std::collections::BTreeMap<String, u64> {
    run.assert_success();
    assert!(
        run.stdout.contains("image-kernels: 64000 pixels"),
        "{}",
        run.stdout
    );
    let calls = calls_by_function(&run.profile());
    // 320 × 200 pixels; 318 × 198 interior pixels, three kernels each.
    assert_eq!(calls["image_kernels::luminance"], 64_000);
    assert_eq!(calls["image_kernels::convolve_at"], 3 * 318 * 198);
    calls
}

fn console_lines_reach_the_terminal_in_order_on_their_streams(browser: Browser) {
    let run = browser.run(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "chatter",
    ]);
    run.assert_success();
    assert!(run.stderr.contains("Returned 5"), "{}", run.stderr);
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

fn a_panic_exits_101_with_its_message_and_keeps_the_profile(browser: Browser) {
    let run = browser.run(&[
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
        "the panic hook's message is relayed:\n{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(
        calls_by_function(&profile)["image_kernels::checked_step"],
        5
    );
    let open: Vec<&str> = profile
        .nodes
        .iter()
        .filter(|n| n.open)
        .map(|n| profile.functions[n.function.unwrap()].name.as_str())
        .collect();
    assert_eq!(open, ["image_kernels::checked_step"]);
}

fn a_trap_keeps_the_counts_made_before_it(browser: Browser) {
    let run = browser.run(&["run", "-p", "faults", "--invoke", "panic_after", "--", "5"]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert!(run.stderr.contains("trap"), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(
        calls_of_path(&profile, &["faults::steps", "faults::step"]),
        6
    );
    // A stack overflow too, whose snapshot needs the stack mended first.
    let run = browser.run(&[
        "run",
        "-p",
        "faults",
        "--verify-counts",
        "--invoke",
        "overflow",
    ]);
    crate::faults::assert_stack_overflow_kept(&run, "the browser");
}

fn a_page_that_dies_mid_run_keeps_the_profile_pulled_before(browser: Browser) {
    // The profile is pulled every second while the page runs; the page
    // dies 2.5 s into 10,000 frames that would take minutes.
    let run = browser.run_with_env(
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
        run.stderr.contains(browser.death_message()),
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

fn until_exit_waits_for_wasmprof_exit_through_animation_frames(browser: Browser) {
    let run = browser.run(&[
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
    // The exit came after the frame returned: nothing was cut off.
    assert!(profile.nodes.iter().all(|n| !n.open));
}
