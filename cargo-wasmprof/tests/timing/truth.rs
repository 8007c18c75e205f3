//! No time lost, none moved: in every host, with the attribute and
//! crate-wide, ten runs each, since these must hold every time.
//!
//! - `examples/long-call`'s `step` is called 200,000 times with next to no
//!   work and once with about 30 ms, which the program times itself: at
//!   least 90 % of that is `step`'s in the profile, never its caller's.
//!   The same for `smallest`, a function of the count-only tier, which no
//!   clock times, built with `--keep-counted-frames`.
//! - The thesis's Figure 6.3 in a hybrid profile: `heavy`'s sampled time
//!   stays under `from_a → shared → heavy`, never under `from_b`.
//!
//! The ten runs of a case are one `cargo wasmprof run --runs 10`: one
//! build, ten runs of their own. A run whose engine samples saw none of the
//! program (Chromium at times counts them all as idle) is run again, three
//! times at most: ten runs are checked each time.
//!
//! Every profile read here is also checked for times that add up (a node
//! never holds less than its callees), as every test's profile is.
//!
//! Its tests run one after the other, alone (`timing::alone`).

use crate::support::*;
use wasmprof_profile::profile::TimerMode;

const RUNS: usize = 10;
/// The share of the program's own measurement the profile must give.
const CREDITED: f64 = 0.9;
/// Runs whose engine samples saw none of the program, tried again beside
/// the `RUNS` checked (see [`sampler_was_blind`]).
const BLIND_RUNS_ALLOWED: usize = 3;
/// Series ended by a Firefox pool that never started, taken again (see
/// [`pool_never_started`]).
const POOLS_STUCK_ALLOWED: usize = 2;

/// Whether the engine's sampler saw none of the program: no sample's stack
/// has a frame of `long-call`. Chromium at times counts every sample of a
/// run as `(idle)`: once in 30 hybrid runs in CI, 2840 samples and none in
/// the 17.8 ms the program ran. Nothing can then be checked of where
/// wasmprof puts the samples' time, so such a run is tried again, a few
/// times at most; every other run is checked.
fn sampler_was_blind(profile: &Profile, program_prefix: &str) -> bool {
    let Some(samples) = &profile.run.samples_file else {
        return false;
    };
    let input =
        wasmprof_profile::input::read(std::path::Path::new(samples), &Default::default()).unwrap();
    let samples = input.profile;
    let self_nanos = samples.self_nanos();
    !(0..samples.nodes.len()).any(|i| {
        self_nanos[i] > 0.0
            && samples
                .stack(i)
                .iter()
                .any(|&f| samples.functions[f].name.starts_with(program_prefix))
    })
}

/// One run of a series: the series' output, which run of it this is, and
/// its profile.
struct OneRun<'a> {
    series: &'a Run,
    index: usize,
    profile: Profile,
}

/// Runs `series(n)` (`n` runs after one build) until `RUNS` runs were
/// checked, trying again a run whose sampler was blind, at most
/// `BLIND_RUNS_ALLOWED` times.
fn checked_runs(
    what: &str,
    program_prefix: &str,
    mut series: impl FnMut(usize) -> Run,
    mut check: impl FnMut(usize, &OneRun),
) {
    let mut blind = 0;
    let mut pools_stuck = 0;
    let mut checked = 0;
    while checked < RUNS {
        let wanted = RUNS - checked;
        let run = series(wanted);
        let paths = run.profile_paths();
        let stuck = pool_never_started(&run);
        if stuck {
            pools_stuck += 1;
            eprintln!("{what}: Firefox never started the pool of one run; the rest again");
            assert!(
                pools_stuck <= POOLS_STUCK_ALLOWED,
                "{what}: the pool never started in {pools_stuck} series:\n{}",
                run.stderr
            );
        } else {
            assert_eq!(paths.len(), wanted, "{what}: {}", run.stderr);
        }
        for (index, path) in paths.iter().enumerate() {
            let profile = read_profile(path).expect("read profile");
            if stuck && !profile.run.complete {
                continue;
            }
            if sampler_was_blind(&profile, program_prefix) {
                blind += 1;
                eprintln!("{what}: the engine's samples saw none of the program; run again");
                assert!(
                    blind <= BLIND_RUNS_ALLOWED,
                    "{what}: the engine's samples saw none of the program in {blind} runs:\n{}",
                    run.stderr
                );
                continue;
            }
            checked += 1;
            let one = OneRun {
                series: &run,
                index,
                profile,
            };
            check(checked, &one);
        }
    }
}

/// How each host runs a program of `long-call`.
#[derive(Clone, Copy, Debug)]
enum Host {
    Node,
    Browser,
    Wasmtime,
    /// The WASI binary built as a WASI 0.2 component, in wasmtime.
    Component,
    /// The WASI binary built for `wasm32-wasip1-threads`, in wasmtime, its
    /// calls made on a thread of their own (`long-on-a-worker`).
    Worker,
    /// `examples/rayon-web`'s copy of the long call, on a worker of
    /// wasm-bindgen-rayon's pool, in Chromium.
    WebWorker,
    /// The wasm-bindgen library in headless Firefox, sampled by the Gecko
    /// profiler.
    Firefox,
    /// `WebWorker` in Firefox.
    FirefoxWorker,
}

impl Host {
    /// `run`'s flags for the program `program` (`long`, `counted` or
    /// `figure-6.3`): the wasm-bindgen library in JavaScript hosts, the
    /// WASI binary in wasmtime.
    /// The package of the program.
    fn package(self) -> &'static str {
        match self {
            Host::WebWorker | Host::FirefoxWorker => "rayon-web",
            _ => "long-call",
        }
    }

    fn args(self, program: &str) -> Vec<String> {
        let invoke = match program {
            "long" => "long_call",
            "counted" => "counted_call",
            _ => "figure_6_3",
        };
        let args: Vec<&str> = match self {
            Host::Node => vec!["--host", "node", "--invoke", invoke],
            Host::Browser => vec!["--host", "browser", "--invoke", invoke],
            Host::Wasmtime => vec!["--host", "wasmtime", "--bin", "long-call", "--", program],
            Host::Component => vec![
                "--target",
                "wasm32-wasip2",
                "--bin",
                "long-call",
                "--",
                program,
            ],
            Host::WebWorker => vec!["--host", "browser", "--invoke", "long_call_on_pool"],
            Host::Firefox => vec![
                "--host",
                "browser",
                "--browser",
                "firefox",
                "--invoke",
                invoke,
            ],
            // A pool that never starts (`pool_never_started`) ends its
            // run here, not the test's.
            Host::FirefoxWorker => vec![
                "--host",
                "browser",
                "--browser",
                "firefox",
                "--timeout",
                "60s",
                "--invoke",
                "long_call_on_pool",
            ],
            Host::Worker => vec![
                "--target",
                "wasm32-wasip1-threads",
                "--bin",
                "long-call",
                "--",
                match program {
                    "long" => "long-on-a-worker",
                    "counted" => "counted-on-a-worker",
                    other => other,
                },
            ],
        };
        args.into_iter().map(str::to_owned).collect()
    }
}

/// Runs `long-call` `runs` times after one build, with `flags` (the
/// instrumentation), then `host`'s.
fn run(host: Host, program: &str, flags: &[&str], runs: usize) -> Run {
    let runs = runs.to_string();
    let mut args = vec!["run", "-p", host.package(), "--release", "--runs", &runs];
    args.extend_from_slice(flags);
    let host_args = host.args(program);
    // The program's arguments come last, after `--`.
    let (before, after) = match host_args.iter().position(|a| a == "--") {
        Some(split) => host_args.split_at(split),
        None => (&host_args[..], &[][..]),
    };
    args.extend(before.iter().map(String::as_str));
    args.extend(after.iter().map(String::as_str));
    let run = wasmprof(&args);
    // A series that ended at a pool that never started is taken again by
    // `checked_runs`.
    if !pool_never_started(&run) {
        run.assert_success();
    }
    run
}

/// The series ended at a run whose wasm-bindgen-rayon pool never started:
/// Firefox sometimes never returns from a worker's `new Worker` (about once
/// in 30 runs on a loaded machine, with or without its profiler; the
/// program's worker was seen in the constructor to the end), and the run's
/// `--timeout` ended it, saying so.
fn pool_never_started(run: &Run) -> bool {
    run.stderr.contains("thread pool never started")
}

/// The nodes whose path from the root ends with `suffix`: the entry point
/// above it differs between hosts and modes (`main` of the WASI binary, an
/// export instrumented crate-wide).
fn ending_with<'a>(
    profile: &'a Profile,
    suffix: &'a [&'a str],
) -> impl Iterator<Item = &'a wasmprof_profile::profile::Node> + 'a {
    (0..profile.nodes.len())
        .filter(move |&i| {
            let names: Vec<&str> = profile
                .stack(i)
                .iter()
                .map(|&f| profile.functions[f].name.as_str())
                .collect();
            names.ends_with(suffix)
        })
        .map(move |i| &profile.nodes[i])
}

fn time_under(profile: &Profile, suffix: &[&str]) -> f64 {
    ending_with(profile, suffix)
        .map(|n| n.inclusive_nanos)
        .sum()
}

fn calls_under(profile: &Profile, suffix: &[&str]) -> u64 {
    ending_with(profile, suffix).map(|n| n.calls).sum()
}

/// The duration the program measured for its long call, in nanoseconds:
/// each run prints it once.
fn measured_by_the_program(run: &OneRun) -> f64 {
    let text = format!("{}\n{}", run.series.stdout, run.series.stderr);
    let ms: f64 = text
        .lines()
        .filter_map(|l| l.split("long call: ").nth(1))
        .nth(run.index)
        .and_then(|rest| rest.split(" ms").next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("the program printed no `long call:` line:\n{text}"));
    ms * 1e6
}

/// A program of `long-call` with one long call among many short ones.
#[derive(Clone, Copy, Debug)]
struct LongCall {
    program: &'static str,
    /// Flags the case needs, before the instrumentation's.
    flags: &'static [&'static str],
    caller: &'static str,
    callee: &'static str,
}

/// `step`, fully instrumented: its short calls are too short to time.
const STEP: LongCall = LongCall {
    program: "long",
    flags: &[],
    caller: "long_call::run_steps",
    callee: "long_call::step",
};

/// `smallest`, of the count-only tier: none of its calls is timed, and its
/// frame is kept for the samples to see only on request (the compiler
/// inlines it otherwise).
const SMALLEST: LongCall = LongCall {
    program: "counted",
    flags: &["--keep-counted-frames"],
    caller: "long_call::run_sorts",
    callee: "long_call::smallest",
};

/// Panics with what to install when `host`'s browser is missing.
fn browser_of(host: Host) {
    if matches!(host, Host::Browser | Host::WebWorker) && !browser_available() {
        panic!("chromium is needed for the browser host (apt-get install chromium)");
    }
    if matches!(host, Host::Firefox | Host::FirefoxWorker) && !firefox_available() {
        panic!("Firefox is needed for these tests (apt-get install firefox-esr)");
    }
}

fn long_call_is_credited(case: LongCall, host: Host, flags: &[&str]) {
    let _alone = timing::alone();
    browser_of(host);
    let mut seen = Vec::new();
    let all_flags = [case.flags, flags].concat();
    let what = format!("{host:?} {all_flags:?} {}", case.program);
    let program_prefix = case
        .callee
        .split("::")
        .next()
        .unwrap_or_default()
        .to_owned()
        + "::";
    checked_runs(
        &what,
        &program_prefix,
        |runs| run(host, case.program, &all_flags, runs),
        |attempt, run| {
            let flags = &all_flags;
            let truth = measured_by_the_program(run);
            let profile = &run.profile;
            assert_eq!(profile.timer.mode, TimerMode::Host);
            let callee = time_under(profile, &[case.caller, case.callee]);
            let caller = time_under(profile, &[case.caller]);
            // A counted function's calls are its function's; a node's are
            // its path's.
            let calls = calls_under(profile, &[case.caller, case.callee])
                + profile
                    .functions
                    .iter()
                    .filter(|f| f.name == case.callee)
                    .filter_map(|f| f.calls)
                    .sum::<u64>();
            assert_eq!(calls, 200_001, "{case:?}");
            seen.push(format!(
                "run {attempt}: program {:.2} ms, {} {:.2} ms, {} {:.2} ms",
                truth / 1e6,
                case.callee,
                callee / 1e6,
                case.caller,
                caller / 1e6
            ));
            assert!(
                callee >= CREDITED * truth,
                "{host:?} {flags:?}: {} holds less than {CREDITED} of its long call:\n{}\n{}",
                case.callee,
                seen.join("\n"),
                run.series.stderr
            );
            // The callee holds no more than its caller (but for rounding).
            assert!(callee <= caller * (1.0 + 1e-9), "{}", seen.join("\n"));
        },
    );
    eprintln!("{host:?} {flags:?}:\n{}", seen.join("\n"));
}

const ATTRIBUTE: &[&str] = &[];
const CRATE_WIDE: &[&str] = &["--no-default-features", "--instrument-all"];

#[test]
fn a_long_call_among_short_ones_is_its_function_s_in_node() {
    for case in [STEP, SMALLEST] {
        long_call_is_credited(case, Host::Node, ATTRIBUTE);
        long_call_is_credited(case, Host::Node, CRATE_WIDE);
    }
}

#[test]
fn a_long_call_among_short_ones_is_its_function_s_in_chromium() {
    for case in [STEP, SMALLEST] {
        long_call_is_credited(case, Host::Browser, ATTRIBUTE);
        long_call_is_credited(case, Host::Browser, CRATE_WIDE);
    }
}

#[test]
fn a_long_call_among_short_ones_is_its_function_s_in_wasmtime() {
    for case in [STEP, SMALLEST] {
        long_call_is_credited(case, Host::Wasmtime, ATTRIBUTE);
        long_call_is_credited(case, Host::Wasmtime, CRATE_WIDE);
    }
}

/// Firefox's samples come from the Gecko profiler, which wasmprof starts
/// in the browser's own window.
#[test]
fn a_long_call_among_short_ones_is_its_function_s_in_firefox() {
    for case in [STEP, SMALLEST] {
        long_call_is_credited(case, Host::Firefox, ATTRIBUTE);
        long_call_is_credited(case, Host::Firefox, CRATE_WIDE);
    }
}

/// `step`'s long call on a worker of wasm-bindgen-rayon's pool, which
/// Chromium samples as it samples the page.
const POOL_STEP: LongCall = LongCall {
    program: "long",
    flags: &[],
    caller: "rayon_web::run_steps",
    callee: "rayon_web::step",
};

#[test]
fn a_long_call_among_short_ones_is_its_function_s_on_a_web_worker_in_chromium() {
    long_call_is_credited(POOL_STEP, Host::WebWorker, ATTRIBUTE);
}

/// The same in Firefox, whose profiler samples its web workers (`DOM
/// Worker`) beside the page.
#[test]
fn a_long_call_among_short_ones_is_its_function_s_on_a_web_worker_in_firefox() {
    long_call_is_credited(POOL_STEP, Host::FirefoxWorker, ATTRIBUTE);
}

/// The same on a worker thread, which wasmtime's sampler follows as it
/// follows the main one.
#[test]
fn a_long_call_among_short_ones_is_its_function_s_on_a_worker_in_wasmtime() {
    for case in [STEP, SMALLEST] {
        long_call_is_credited(case, Host::Worker, ATTRIBUTE);
        long_call_is_credited(case, Host::Worker, CRATE_WIDE);
    }
}

#[test]
fn a_long_call_among_short_ones_is_its_function_s_in_a_component() {
    for case in [STEP, SMALLEST] {
        long_call_is_credited(case, Host::Component, ATTRIBUTE);
        long_call_is_credited(case, Host::Component, CRATE_WIDE);
    }
}

/// The samples' time in stacks that pass through any of `names`, from the
/// engine's `.cpuprofile` saved beside the profile.
fn sampled_time_in(profile: &Profile, names: &[&str]) -> f64 {
    let samples = profile
        .run
        .samples_file
        .as_deref()
        .expect("the samples are saved beside the profile");
    let input =
        wasmprof_profile::input::read(std::path::Path::new(samples), &Default::default()).unwrap();
    let samples = input.profile;
    let self_nanos = samples.self_nanos();
    let name = |f: usize| samples.functions[f].name.as_str();
    // A sample in the profiler's own code (a guard's exit inside `heavy`)
    // is left out of the profile, which says so; it is left out here too.
    // Its frame is the nearest to the leaf that is the runtime's or the
    // program's.
    let in_runtime = |i: usize| {
        samples
            .stack(i)
            .iter()
            .rev()
            .map(|&f| name(f))
            .find(|n| wasmprof_profile::sampled::is_runtime(n) || n.starts_with("long_call::"))
            .is_some_and(|n| !n.starts_with("long_call::"))
    };
    (0..samples.nodes.len())
        .filter(|&i| !in_runtime(i))
        .filter(|&i| samples.stack(i).iter().any(|&f| names.contains(&name(f))))
        .map(|i| self_nanos[i])
        .sum()
}

fn figure_6_3_keeps_heavy_under_from_a(host: Host, flags: &[&str]) {
    let _alone = timing::alone();
    browser_of(host);
    let mut flags = flags.to_vec();
    flags.extend(["--timer", "none", "--sample"]);
    let heavy_path = [
        "long_call::figure_6_3",
        "long_call::from_a",
        "long_call::shared",
        "long_call::heavy",
    ];
    let what = format!("{host:?} {flags:?} figure 6.3");
    checked_runs(
        &what,
        "long_call::",
        |runs| run(host, "figure-6.3", &flags, runs),
        |attempt, run| {
            let profile = &run.profile;
            assert_eq!(profile.timer.mode, TimerMode::Hybrid);
            assert_eq!(calls_under(profile, &heavy_path), 30);
            assert_eq!(
                calls_under(
                    profile,
                    &[
                        "long_call::figure_6_3",
                        "long_call::from_b",
                        "long_call::shared"
                    ]
                ),
                30_000
            );
            // `heavy`'s time: stacks with it, or with `step`, which only it
            // calls here (Chromium's engine inlines `heavy` at times, and its
            // frame is then missing).
            let sampled = sampled_time_in(profile, &["long_call::heavy", "long_call::step"]);
            let under_a = time_under(profile, &heavy_path);
            assert!(
                sampled > 0.0 && under_a >= 0.9 * sampled,
                "{host:?} {flags:?} run {attempt}: heavy sampled {sampled} ns, {under_a} ns under \
             from_a:\n{}",
                run.series.stderr
            );
            // `from_b` holds what the samples saw in it, and nothing of
            // `heavy`'s: no stack with `heavy` in it leads there.
            assert_eq!(
                calls_under(
                    profile,
                    &["long_call::from_b", "long_call::shared", "long_call::heavy"]
                ),
                0
            );
            let under_b = time_under(profile, &["long_call::figure_6_3", "long_call::from_b"]);
            let in_b = sampled_time_in(profile, &["long_call::from_b"]);
            assert!(
                under_b <= in_b + 1.0,
                "{host:?} run {attempt}: {under_b} ns under from_b, whose stacks had {in_b} ns"
            );
        },
    );
}

/// Crate-wide, every function with call paths: the small ones would be
/// counted only, with no path for the samples to follow.
const CRATE_WIDE_ALL: &[&str] = &[
    "--no-default-features",
    "--instrument-all",
    "--min-size",
    "0",
];

#[test]
fn figure_6_3_hybrid_keeps_heavy_under_from_a_in_node() {
    figure_6_3_keeps_heavy_under_from_a(Host::Node, ATTRIBUTE);
    figure_6_3_keeps_heavy_under_from_a(Host::Node, CRATE_WIDE_ALL);
}

#[test]
fn figure_6_3_hybrid_keeps_heavy_under_from_a_in_chromium() {
    figure_6_3_keeps_heavy_under_from_a(Host::Browser, ATTRIBUTE);
    figure_6_3_keeps_heavy_under_from_a(Host::Browser, CRATE_WIDE_ALL);
}

#[test]
fn figure_6_3_hybrid_keeps_heavy_under_from_a_in_firefox() {
    figure_6_3_keeps_heavy_under_from_a(Host::Firefox, ATTRIBUTE);
    figure_6_3_keeps_heavy_under_from_a(Host::Firefox, CRATE_WIDE_ALL);
}

#[test]
fn figure_6_3_hybrid_keeps_heavy_under_from_a_in_wasmtime() {
    figure_6_3_keeps_heavy_under_from_a(Host::Wasmtime, ATTRIBUTE);
    figure_6_3_keeps_heavy_under_from_a(Host::Wasmtime, CRATE_WIDE_ALL);
}

#[test]
fn figure_6_3_hybrid_keeps_heavy_under_from_a_in_a_component() {
    figure_6_3_keeps_heavy_under_from_a(Host::Component, ATTRIBUTE);
    figure_6_3_keeps_heavy_under_from_a(Host::Component, CRATE_WIDE_ALL);
}
