//! Overhead and accuracy of instrumentation, measured side by side in one
//! run: each workload built plain (`--no-instrument`), counts-only
//! (`--timer none`) and timed (`--timer host`), the three run in turn in the
//! same Node, repeated, and the medians compared as ratios to the plain
//! build. Then the accuracy of the thesis's validation program (appendix B).
//!
//! `cargo bench -p cargo-wasmprof --bench overhead [-- REPETITIONS] [WORD...]`
//!
//! With words, only the workloads whose names contain one of them run, and
//! the accuracy part is skipped.
//!
//! The time is the program's own, from its entry call to its end, as the
//! host measures it: without Node's start-up or compiling the module.

#[path = "../tests/support/mod.rs"]
#[allow(dead_code, unused_imports)] // helpers only the tests use
mod support;
use support::*;

struct Workload {
    name: &'static str,
    /// Flags for every build.
    args: &'static [&'static str],
    /// Flags for the instrumented builds only.
    instrumented: &'static [&'static str],
    /// A second plain program to compare with, run in turn with the others:
    /// what it is, and its flags in place of `args`.
    reference: Option<(&'static str, &'static [&'static str])>,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "fib(32), every call instrumented",
        args: &["-p", "fib", "--invoke", "fib_js", "--", "32"],
        instrumented: &[],
        // rustc turns the plain `fib`'s second call into a loop, which the
        // guard's exit rules out in an instrumented build, and so does any
        // code after the calls: this is the plain `fib` without the loop.
        reference: Some((
            "fib, a store after its calls",
            &["-p", "fib", "--invoke", "fib_unlooped_js", "--", "32"],
        )),
    },
    Workload {
        name: "appendix B (52.5 M calls of add)",
        args: &["-p", "appendix-b"],
        instrumented: &[],
        reference: None,
    },
    Workload {
        name: "quicksort of 200,000 numbers",
        args: &["-p", "shapes", "--invoke", "sort", "--", "200000"],
        instrumented: &[],
        reference: None,
    },
    Workload {
        name: "walks (3.2 M calls, the call tree overfilled)",
        args: &["-p", "walks"],
        instrumented: &[],
        reference: None,
    },
    Workload {
        name: "realworld, crate-wide (3 crates)",
        args: &["-p", "realworld", "--", "150"],
        instrumented: &[
            "--instrument-all",
            "--instrument-crate",
            "pulldown-cmark",
            "--instrument-crate",
            "miniz_oxide",
        ],
        reference: None,
    },
    Workload {
        name: "realworld, every function (--min-size 0)",
        args: &["-p", "realworld", "--", "150"],
        instrumented: &[
            "--instrument-all",
            "--instrument-crate",
            "pulldown-cmark",
            "--instrument-crate",
            "miniz_oxide",
            "--min-size",
            "0",
        ],
        reference: None,
    },
];

const MODES: [(&str, &[&str]); 3] = [
    ("plain", &["--no-instrument"]),
    ("none", &["--timer", "none"]),
    ("host", &["--timer", "host"]),
];

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    sorted[sorted.len() / 2]
}

fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)))
}

/// `cargo wasmprof run` arguments for one workload in one mode.
fn run_args<'a>(workload: &'a Workload, mode: &'a [&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--release", "-q", "--top", "0"];
    args.extend(mode);
    if !mode.contains(&"--no-instrument") {
        args.extend(workload.instrumented);
    }
    // Arguments after `--` go last.
    match workload.args.iter().position(|a| *a == "--") {
        Some(split) => {
            args.extend(&workload.args[..split]);
            args.extend(&workload.args[split..]);
        }
        None => args.extend(workload.args),
    }
    args
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repetitions: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(5);
    // Any other word picks the workloads whose name contains it; `cargo
    // bench` itself passes `--bench`.
    let only: Vec<&String> = args
        .iter()
        .filter(|a| a.parse::<usize>().is_err() && !a.starts_with('-'))
        .collect();
    let chosen = |workload: &Workload| {
        only.is_empty() || only.iter().any(|w| workload.name.contains(w.as_str()))
    };
    println!(
        "wasmprof overhead: {repetitions} runs of each build, taken in turn; median (min-max) of the program's time; Node {}, {} cores",
        node_version(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!(
        "{:<34} {:>22} {:>22} {:>22} {:>8} {:>8}",
        "workload", "plain ms", "--timer none ms", "--timer host ms", "none", "host"
    );
    for workload in WORKLOADS.iter().filter(|w| chosen(w)) {
        // One untimed run of each builds the modules and warms the caches.
        for (_, mode) in MODES {
            wasmprof(&run_args(workload, mode)).assert_success();
        }
        let reference = workload.reference.map(|(what, args)| {
            let mut run = vec!["run", "--release", "-q", "--top", "0", "--no-instrument"];
            run.extend(args);
            (what, run)
        });
        if let Some((_, args)) = &reference {
            wasmprof(args).assert_success();
        }
        let mut times = vec![Vec::new(); MODES.len()];
        let mut reference_times = Vec::new();
        for _ in 0..repetitions {
            for (i, (_, mode)) in MODES.iter().enumerate() {
                let run = wasmprof(&run_args(workload, mode));
                run.assert_success();
                times[i].push(program_seconds(&run.stderr) * 1e3);
            }
            if let Some((_, args)) = &reference {
                let run = wasmprof(args);
                run.assert_success();
                reference_times.push(program_seconds(&run.stderr) * 1e3);
            }
        }
        let cells: Vec<String> = times
            .iter()
            .map(|t| {
                let (lo, hi) = min_max(t);
                format!("{:.1} ({:.1}-{:.1})", median(t), lo, hi)
            })
            .collect();
        let plain = median(&times[0]);
        println!(
            "{:<34} {:>22} {:>22} {:>22} {:>7.2}x {:>7.2}x",
            workload.name,
            cells[0],
            cells[1],
            cells[2],
            median(&times[1]) / plain,
            median(&times[2]) / plain
        );
        if let Some((what, _)) = reference {
            let (lo, hi) = min_max(&reference_times);
            let base = median(&reference_times);
            println!(
                "  {:<32} {:>22} {:>22} {:>22} {:>7.2}x {:>7.2}x",
                format!("vs {what}"),
                format!("{base:.1} ({lo:.1}-{hi:.1})"),
                "",
                "",
                median(&times[1]) / base,
                median(&times[2]) / base
            );
        }
    }
    println!();
    if only.is_empty() {
        accuracy(repetitions);
        agreement_with_v8(repetitions);
    }
}

/// Appendix B with `--timer host`: the relations the program was written
/// to have, as measured.
fn accuracy(repetitions: usize) {
    let main = "appendix_b::main";
    let mut spread = Vec::new();
    let mut half_2 = Vec::new();
    let mut half = Vec::new();
    let mut quarter = Vec::new();
    // The same times summed over all runs, as `report` merges profiles.
    let mut sums = [0f64; 7];
    for _ in 0..repetitions {
        let run = wasmprof(&["run", "--release", "-q", "--top", "0", "-p", "appendix-b"]);
        run.assert_success();
        let profile = run.profile();
        let mains: Vec<f64> = (1..=4)
            .map(|i| time_of_path(&profile, &[main, &format!("appendix_b::f_main_{i}")]))
            .collect();
        let (lo, hi) = min_max(&mains);
        let mean = mains.iter().sum::<f64>() / 4.0;
        spread.push((hi - lo) / mean * 100.0);
        half_2.push(time_of_path(&profile, &[main, "appendix_b::f_half_2"]) / mean * 100.0);
        half.push(time_of_path(&profile, &[main, "appendix_b::f_half"]) / mean * 100.0);
        quarter.push(time_of_path(&profile, &[main, "appendix_b::f_quarter"]) / mean * 100.0);
        for (sum, time) in sums.iter_mut().zip(mains.iter().copied().chain([
            time_of_path(&profile, &[main, "appendix_b::f_half_2"]),
            time_of_path(&profile, &[main, "appendix_b::f_half"]),
            time_of_path(&profile, &[main, "appendix_b::f_quarter"]),
        ])) {
            *sum += time;
        }
    }
    println!(
        "appendix B accuracy with --timer host, median (min-max) of {repetitions} runs, % of the mean f_main_* time:"
    );
    for (name, values, target) in [
        ("spread of the four f_main_*", &spread, "target <= 2"),
        ("f_half_2", &half_2, "target 50 +- 2"),
        ("f_half, one call", &half, "target 50 +- 2"),
        ("f_quarter, one call", &quarter, "target 25 +- 2"),
    ] {
        let (lo, hi) = min_max(values);
        println!(
            "  {name:<30} {:>6.2} ({lo:.2}-{hi:.2})   {target}",
            median(values)
        );
    }
    // Summing the runs averages out the machine's noise, which on a shared
    // machine is several per cent of a 40 ms function; what remains is the
    // program's own: its f_main_* do not compile to equally fast code.
    let (lo, hi) = min_max(&sums[..4]);
    let mean = sums[..4].iter().sum::<f64>() / 4.0;
    println!(
        "  the {repetitions} runs merged: spread {:.2}, f_half_2 {:.2}, f_half {:.2}, f_quarter {:.2}",
        (hi - lo) / mean * 100.0,
        sums[4] / mean * 100.0,
        sums[5] / mean * 100.0,
        sums[6] / mean * 100.0
    );
}

/// How far wasmprof's times for appendix B's functions are from what V8's
/// own sampler (`node --cpu-prof`, 50 µs) saw of the same runs.
fn agreement_with_v8(repetitions: usize) {
    const NAMES: [&str; 5] = ["f_main_1", "f_main_2", "f_main_3", "f_main_4", "f_half_2"];
    let dir = std::env::temp_dir().join(format!("wasmprof-bench-{}", std::process::id()));
    let mut deviations = Vec::new();
    for _ in 0..repetitions {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cpu_prof_dir = format!("--node-arg=--cpu-prof-dir={}", dir.display());
        let run = wasmprof(&[
            "run",
            "--release",
            "-q",
            "--top",
            "0",
            "-p",
            "appendix-b",
            "--node-arg=--cpu-prof",
            "--node-arg=--cpu-prof-interval=50",
            &cpu_prof_dir,
        ]);
        run.assert_success();
        let profile = run.profile();
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let sampled = v8_sampled_ms(&file, &NAMES);
        for name in NAMES {
            let ours = time_of_path(
                &profile,
                &["appendix_b::main", &format!("appendix_b::{name}")],
            ) / 1e6;
            deviations.push((ours / sampled[name] - 1.0) * 100.0);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (lo, hi) = min_max(&deviations);
    let mean_abs = deviations.iter().map(|d| d.abs()).sum::<f64>() / deviations.len() as f64;
    println!(
        "  wasmprof vs V8's sampler on the same runs ({} function times): mean |difference| {mean_abs:.1} %, range {lo:+.1} to {hi:+.1} %",
        deviations.len()
    );
}

fn node_version() -> String {
    std::process::Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| "unknown".into())
}
