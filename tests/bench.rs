//! `cargo wasmprof bench`: the floor and the three builds of a real example (and the
//! counts-only one with the engine's sampler on) run in turn in Node, and the
//! table compares them with the plain build.

use wasmprof_tests::*;

/// The rows of the table: build label, then the cells after it.
fn rows(stdout: &str) -> Vec<(String, Vec<String>)> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("build"))
        .skip(1)
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

fn ratio(cell: &str) -> f64 {
    cell.trim_end_matches('×')
        .parse()
        .unwrap_or_else(|_| panic!("{cell} is not a ratio"))
}

#[test]
fn three_builds_are_timed_in_turn_and_compared_with_the_plain_one() {
    let run = wasmprof(&[
        "bench",
        "--release",
        "-p",
        "shapes",
        "--invoke",
        "sort",
        "-n",
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
    assert_eq!(
        labels,
        [
            "plain",
            "floor",
            "--timer none",
            "--timer host --no-sample",
            "--timer host",
            "--timer none --sample"
        ],
        "{}",
        run.stdout
    );
    // time (range), time ratio, ratio to the floor, KiB, size ratio
    for (label, cells) in &rows {
        assert_eq!(cells.len(), 6, "{label}: {cells:?}");
        assert!(ratio(&cells[2]) > 0.0, "{label}: {cells:?}");
        assert!(ratio(&cells[3]) > 0.0, "{label}: {cells:?}");
    }
    assert_eq!(rows[0].1[2], "1.00×");
    assert_eq!(rows[0].1[5], "1.00×");
    assert_eq!(rows[1].1[3], "1.00×", "the floor against itself");
    // The floor adds a few bytes of counters; the instrumented modules
    // carry the runtime besides.
    assert!(ratio(&rows[1].1[5]) >= 1.0, "{:?}", rows[1]);
    for (label, cells) in &rows[2..] {
        assert!(
            ratio(&cells[5]) > ratio(&rows[1].1[5]),
            "{label}: {cells:?}"
        );
    }
    // No profile is saved by a benchmark.
    assert!(!run.stderr.contains("Profile "), "{}", run.stderr);
}

#[test]
fn a_program_that_fails_ends_the_benchmark_with_the_reason() {
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
fn a_program_with_nothing_instrumented_is_pointed_out() {
    // `realworld` has no annotation; without --instrument-all the three
    // builds are the same program.
    let run = wasmprof(&[
        "bench",
        "--release",
        "-p",
        "realworld",
        "-n",
        "1",
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
    assert_eq!(rows(&run.stdout).len(), 6, "{}", run.stdout);
}
