//! Overhead of instrumentation, measured side by side in one run: each
//! workload built plain (`--no-instrument`), counts-only (`--timer none`)
//! and timed (`--timer host`), run in the same Node, repeated, and the
//! medians compared as ratios to the plain build.
//!
//! `cargo bench -p wasmprof-tests --bench overhead [-- REPETITIONS]`
//!
//! The time is the program's own (entry call to end), as the host measures
//! it, without Node's start-up.

use wasmprof_tests::*;

struct Workload {
    name: &'static str,
    args: &'static [&'static str],
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "fib (recursion.c: 4.4 M calls)",
        args: &["-p", "fib"],
    },
    Workload {
        name: "appendix-b (52.5 M calls of add)",
        args: &["-p", "appendix-b"],
    },
    Workload {
        name: "quicksort (200,000 numbers)",
        args: &["-p", "shapes", "--invoke", "sort", "--", "200000"],
    },
];

const MODES: [(&str, &[&str]); 3] = [
    ("plain", &["--no-instrument"]),
    ("none", &["--timer", "none"]),
    ("host", &["--timer", "host"]),
];

/// The program's own run time, from the `Ran for …` status line.
fn program_seconds(stderr: &str) -> f64 {
    let line = stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Ran for "))
        .unwrap_or_else(|| panic!("no `Ran for` line in:\n{stderr}"));
    let mut words = line.split_whitespace();
    let number: f64 = words.next().and_then(|n| n.parse().ok()).expect("a number");
    match words.next() {
        Some("ms") => number / 1e3,
        Some("s") => number,
        other => panic!("unknown unit {other:?}"),
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn main() {
    let repetitions: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    println!(
        "wasmprof overhead: median of {repetitions} runs each, in Node (host: {})",
        node_version()
    );
    println!();
    println!(
        "{:<36} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "workload", "plain s", "none s", "host s", "none/pl", "host/pl"
    );
    for workload in WORKLOADS {
        let mut medians = Vec::new();
        for (mode, flags) in MODES {
            // One untimed run builds the module and warms the caches.
            let mut args = vec!["run", "--release", "-q"];
            args.extend(flags);
            args.extend(workload.args);
            let mut times = Vec::new();
            for round in 0..=repetitions {
                let run = wasmprof(&args);
                run.assert_success();
                if round > 0 {
                    times.push(program_seconds(&run.stderr));
                }
            }
            let spread = times.iter().cloned().fold(f64::MIN, f64::max)
                - times.iter().cloned().fold(f64::MAX, f64::min);
            let m = median(&mut times);
            eprintln!(
                "  {} {mode}: median {m:.4} s, spread {spread:.4} s",
                workload.name
            );
            medians.push(m);
        }
        println!(
            "{:<36} {:>10.4} {:>10.4} {:>10.4} {:>8.2}x {:>8.2}x",
            workload.name,
            medians[0],
            medians[1],
            medians[2],
            medians[1] / medians[0],
            medians[2] / medians[0]
        );
    }
}

fn node_version() -> String {
    std::process::Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| "unknown".into())
}
