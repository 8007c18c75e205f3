//! `cargo wasmprof bench`: the floor and the three builds of a real example (and the
//! counts-only one with the engine's sampler on) run in turn in Node, and the
//! table compares them with the plain build.

use crate::support::*;

/// The rows of the table: build label, then the cells after it.
fn rows(stdout: &str) -> Vec<(String, Vec<String>)> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("build"))
        .skip(1)
        // A blank line ends the table; what the verdicts mean follows.
        .take_while(|l| !l.is_empty())
        .map(|line| {
            // Labels are words and flags; cells start with a digit.
            let label = line
                .split_whitespace()
                .take_while(|w| !w.starts_with(|c: char| c.is_ascii_digit()))
                .collect::<Vec<_>>()
                .join(" ");
            let cells = line[label.len()..]
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            (label, cells)
        })
        .collect()
}

/// Every table's rows, in order.
const ROWS: [&str; 7] = [
    "plain",
    "floor",
    "--timer none",
    "--timer host --no-sample",
    "--timer host (what run does)",
    "--timer none --sample",
    "plain again",
];

fn ratio(cell: &str) -> f64 {
    cell.trim_end_matches('×')
        .parse()
        .unwrap_or_else(|_| panic!("{cell} is not a ratio"))
}

#[test]
fn three_builds_are_timed_in_turn_and_compared_with_the_plain_one() {
    let _alone = timing::alone();
    let run = wasmprof(&[
        "bench",
        "--release",
        "-p",
        "shapes",
        "--invoke",
        "sort",
        "-n",
        "2",
        "--max-runs",
        "2",
        "--",
        "20000",
    ]);
    run.assert_success();
    assert!(
        run.stdout
            .starts_with("shapes (invoke sort): 2 runs of each build in turn after a warm-up"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("Running round 2 of 2"),
        "{}",
        run.stderr
    );
    let rows = rows(&run.stdout);
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ROWS, "{}", run.stdout);
    // plain: time (range), time ratio, ratio to the floor, KiB, size ratio
    assert_eq!(rows[0].1.len(), 6, "{:?}", rows[0]);
    assert_eq!(rows[0].1[2], "1.00×");
    assert_eq!(rows[0].1[5], "1.00×");
    // The others: time (range), time ratio, its interval, ratio to the
    // floor, KiB, size ratio, verdict.
    for (label, cells) in &rows[1..] {
        assert_eq!(cells.len(), 8, "{label}: {cells:?}");
        assert!(ratio(&cells[2]) > 0.0, "{label}: {cells:?}");
        assert!(cells[3].contains('–'), "{label}: {cells:?}");
        assert!(ratio(&cells[4]) > 0.0, "{label}: {cells:?}");
        assert!(
            ["noise", "slower", "control"].contains(&cells[7].as_str()),
            "{label}: {cells:?}"
        );
    }
    assert_eq!(rows[1].1[4], "1.00×", "the floor against itself");
    assert_eq!(rows[6].1[7], "control");
    // The floor adds a few bytes of counters; the instrumented modules
    // carry the runtime besides.
    assert!(ratio(&rows[1].1[6]) >= 1.0, "{:?}", rows[1]);
    for (label, cells) in &rows[2..6] {
        assert!(
            ratio(&cells[6]) > ratio(&rows[1].1[6]),
            "{label}: {cells:?}"
        );
    }
    assert!(run.stdout.contains("\ninterval: the "), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "\n`cargo wasmprof run` as it runs without flags (--timer host, sampled) costs "
        ),
        "{}",
        run.stdout
    );
    // No profile is saved by a benchmark.
    assert!(!run.stderr.contains("Profile "), "{}", run.stderr);
}

#[test]
fn a_program_that_fails_ends_the_benchmark_with_the_reason() {
    let _alone = timing::alone();
    let run = wasmprof(&[
        "bench",
        "-p",
        "faults",
        "--invoke",
        "panic_after",
        "-n",
        "1",
        "--",
        "3",
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("error: the plain build failed after")
            && run.stderr.contains("(exit status 101)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("add --release"),
        "a dev-profile benchmark is pointed out:\n{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "no table: {}", run.stdout);
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    let _alone = timing::alone();
    let zero = wasmprof(&["bench", "-p", "shapes", "-n", "0"]);
    assert_eq!(zero.code(), Some(2), "{}", zero.stderr);
    assert!(
        zero.stderr.contains("invalid value '0' for '--runs <N>'"),
        "{}",
        zero.stderr
    );
    let two = wasmprof(&["bench", "-p", "shapes", "-p", "fib"]);
    assert_eq!(two.code(), Some(1), "{}", two.stderr);
    assert!(
        two.stderr
            .contains("`cargo wasmprof bench` runs one package: choose it with -p NAME"),
        "{}",
        two.stderr
    );
}

#[test]
fn more_rounds_run_while_plain_against_itself_is_noisy() {
    let _alone = timing::alone();
    // realworld with a tiny input runs for about a millisecond: Node's
    // timing of it varies by far more than 5 %, so the rounds go on to the
    // most allowed, and the table says how many ran.
    let run = wasmprof(&[
        "bench",
        "--release",
        "-p",
        "realworld",
        "-n",
        "2",
        "--max-runs",
        "4",
        "--",
        "1",
    ]);
    run.assert_success();
    let extra = run
        .stderr
        .lines()
        .filter(|l| l.contains("(at most 4): the plain build against itself still varies"))
        .count();
    let stated = run.stdout.lines().next().unwrap_or_default();
    assert!(
        (extra == 2 && stated.contains(": 4 runs of each build"))
            || (extra == 0 && stated.contains(": 2 runs of each build")),
        "{extra} extra rounds; {stated}\n{}",
        run.stderr
    );
}

#[test]
fn a_program_with_nothing_instrumented_is_pointed_out() {
    let _alone = timing::alone();
    // `realworld` has no annotation; without --instrument-all the three
    // builds are the same program.
    let run = wasmprof(&[
        "bench",
        "--release",
        "-p",
        "realworld",
        "-n",
        "7",
        "--max-runs",
        "7",
        "--",
        "1",
    ]);
    run.assert_success();
    assert!(
        run.stderr
            .contains("no function of this program is instrumented, so the builds are alike"),
        "{}",
        run.stderr
    );
    let rows = rows(&run.stdout);
    assert_eq!(rows.len(), 7, "{}", run.stdout);
    // The same program over and over: every ratio of a run without the
    // engine's sampler is the machine's noise, and the bench says so,
    // whatever the medians came out as. A row with the sampler on measures
    // the sampler's own cost too (CI saw `--timer host` 1.18×, 1.09–1.57,
    // with nothing instrumented): noise or slower, never faster.
    for (label, cells) in &rows[1..] {
        let verdict = cells.last().unwrap().as_str();
        let sampled = label == "--timer host (what run does)" || label.ends_with("--sample");
        let expected: &[&str] = match label.as_str() {
            "plain again" => &["control"],
            _ if sampled => &["noise", "slower"],
            _ => &["noise"],
        };
        assert!(
            expected.contains(&verdict),
            "{label}: {cells:?}\n{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains("\nnoise: "), "{}", run.stdout);
}

/// A page's thread pool (wasm-bindgen-rayon's web workers) is benchmarked
/// against the same crate on the page's own thread, in the same browser:
/// two tables, then the one that compares them row by row.
#[test]
fn a_page_s_web_workers_are_measured_against_one_thread_in_the_same_browser() {
    let _alone = timing::alone();
    if !browser_available() {
        panic!("chromium is needed for the browser host (apt-get install chromium)");
    }
    let run = wasmprof(&[
        "bench",
        "--release",
        "-p",
        "rayon-web",
        "--host",
        "browser",
        "--invoke",
        "hash_all",
        "-n",
        "1",
        "--max-runs",
        "1",
        "--",
        "200",
    ]);
    run.assert_success();
    let browser = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("web workers in "))
        .and_then(|rest| rest.strip_suffix(':'))
        .unwrap_or_else(|| panic!("no table for the web workers:\n{}", run.stdout));
    assert!(browser.starts_with("headless Chromium "), "{}", run.stdout);
    assert!(
        run.stdout
            .contains(&format!("\none thread in {browser}:\n")),
        "the side without threads runs in the same browser:\n{}",
        run.stdout
    );
    let comparison = run
        .stdout
        .split("threads against one thread: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no comparison:\n{}", run.stdout));
    assert!(
        comparison.starts_with(&format!(
            "each build over its own plain build, on web workers in {browser} and on one \
             thread in {browser}, and the first over the second"
        )),
        "{comparison}"
    );
    // Not the header's second line, which names the sides, nor the plain
    // build's times after the rows.
    let rows: Vec<_> = rows(comparison)
        .into_iter()
        .filter(|(label, _)| !label.starts_with('(') && label != "plain:")
        .collect();
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ROWS, "{comparison}");
    assert_eq!(rows[0].1, ["1.00×", "1.00×", "1.00×"], "{comparison}");
    for (label, cells) in &rows[1..] {
        assert_eq!(cells.len(), 3, "{label}: {cells:?}");
        assert!(cells.iter().all(|c| ratio(c) > 0.0), "{label}: {cells:?}");
    }
    assert!(
        comparison.contains(" ms with threads, ") && comparison.contains(" ms on one thread\n"),
        "{comparison}"
    );
}
