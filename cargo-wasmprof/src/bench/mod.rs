//! `cargo wasmprof bench`: what instrumentation costs one program, measured
//! side by side. The plain build, the floor (a counter per function and
//! nothing else), the counts-only build, the timed build and the
//! counts-only build with the engine's sampler on (a hybrid profile's cost)
//! run in turn in the same host, so that a machine that slows down for a
//! while slows them all alike; the medians and the `.wasm` sizes are
//! compared with the plain build's, and the times with the floor's too.

use std::path::Path;

use anyhow::{Context, Result, bail};

mod sides;

use crate::build::options::{BuildOptions, CrateWideOptions, Timer};
use crate::build::{self, BuiltModule, Workspace};
use crate::hosts::files;
use crate::hosts::host::{Captured, Host, HostResult};
use crate::hosts::options::HostOptions;
use crate::hosts::select;
use crate::launch;
use crate::run;
use crate::terminal;
use crate::terminal::seconds_or_millis;
use sides::Side;

/// The builds compared, in the order they run: a label, the timer of an
/// instrumented build (`None`: plain), whether the engine's sampler runs
/// too (as `run` runs a timed build by default: the sampler gives the
/// calls too short to time their time; and for a hybrid profile, counting
/// plus sampling), and whether memory is recorded (rows of `--memory`).
const BUILDS: [(&str, Option<Timer>, bool, bool); 9] = [
    ("plain", None, false, false),
    ("floor", Some(Timer::Floor), false, false),
    ("--timer none", Some(Timer::None), false, false),
    ("--timer host --no-sample", Some(Timer::Host), false, false),
    (DEFAULT_RUN, Some(Timer::Host), true, false),
    ("--timer none --sample", Some(Timer::None), true, false),
    (MEMORY_NONE, Some(Timer::None), false, true),
    (MEMORY_HOST, Some(Timer::Host), false, true),
    // The control, last in each round: the plain build against itself is
    // the machine's own noise, which no other ratio can be told from.
    (CONTROL, None, false, false),
];

/// The `--memory` rows, and the rows they are compared with.
const MEMORY_NONE: &str = "--timer none --memory";
const MEMORY_HOST: &str = "--timer host --no-sample --memory";
const MEMORY_PAIRS: [(&str, &str); 2] = [(MEMORY_NONE, "--timer none"), (MEMORY_HOST, UNSAMPLED)];

/// The row of what `cargo wasmprof run` does without flags: a timed build,
/// sampled; the summary under the table names it.
const DEFAULT_RUN: &str = "--timer host (what run does)";

/// The row the default run is compared with: the same timer, no sampler.
const UNSAMPLED: &str = "--timer host --no-sample";

/// The plain build's second run in each round.
const CONTROL: &str = "plain again";

/// One build and what was measured of it.
#[derive(Clone)]
struct Measured {
    label: &'static str,
    /// Run with the engine's sampler on.
    sample: bool,
    /// Built with `--memory`.
    memory: bool,
    /// The functions it keeps out of line.
    frames: build::KeptFrames,
    module: BuiltModule,
    /// The module's size.
    wasm_bytes: u64,
    /// Its debug info's size (`debug_info_size`): std's, and the line tables a
    /// sampled build for wasmtime keeps for its sampler.
    debug_bytes: u64,
    /// The program's own time of each counted run.
    nanos: Vec<u64>,
}

/// What `cargo wasmprof bench` is asked for, as plain data: the command line
/// fills it in (`cli::BenchArgs`).
#[derive(Debug, Clone)]
pub(crate) struct BenchOptions {
    /// The build every row shares (package, profile, host, crate-wide
    /// instrumentation); each row sets its own timer, sampler and memory.
    pub build: BuildOptions,
    /// How every run is given to the host.
    pub host: HostOptions,
    /// The rounds measured, each running every build once.
    pub runs: u32,
    /// The most rounds when the timings are noisy (`--max-runs`); three
    /// times `runs` when not given.
    pub max_runs: Option<u32>,
    /// `--memory`: rows that record memory too.
    pub memory: bool,
}

/// Builds, warms up, measures and prints the table on standard output.
pub(crate) fn bench(options: &BenchOptions, workspace: &Workspace) -> Result<()> {
    let host_options = options.host.clone();
    let base = options.build.clone();
    run::one_package(&base.cargo, "bench")?;
    if host_options.until_exit {
        bail!(
            "--until-exit cannot be benchmarked: in the plain build `wasmprof::exit` does \
             nothing, so that run would never end"
        );
    }
    // Before the long builds: is there a host at all, and can it run this?
    let host = select::select(base.host, &host_options)?;
    for unit in workspace.units(&base.cargo)? {
        host.check_kind(unit.kind)?;
    }
    if !base.cargo.release && base.cargo.profile.is_none() {
        terminal::warning(
            "benchmarking the dev profile, which is not optimised: add --release to measure \
             what you ship",
        );
    }
    let target_dir = workspace.target_dir(&base.cargo);
    let mut sides = vec![Side::build(&base, host, options.memory, workspace)?];
    // A program built for threads is measured against itself without them,
    // in the same sitting: what the threads cost.
    if sides[0].threaded()?
        && let Some(without) = sides::without_threads(&base)
    {
        let host = select::select(without.host, &host_options)?;
        // A crate may not build without threads at all (wasm-bindgen-rayon
        // refuses to): the threads are still measured, alone.
        match Side::build(&without, host, options.memory, workspace) {
            Ok(side) => {
                if without.without_threads {
                    sides[0].title = format!("web workers in {}", sides[0].title);
                }
                sides.push(side);
            }
            Err(error) => terminal::warning(&format!(
                "the program did not build without threads, so the table has the threads \
                 alone (a crate with wasm-bindgen-rayon builds without them when it depends \
                 on it under [target.'cfg(target_feature = \"atomics\")'.dependencies], as \
                 examples/rayon-web does): {error:#}"
            )),
        }
    }
    for side in &mut sides {
        side.warm_up(&host_options, &target_dir)?;
    }
    // A render loop never ends: with --duration, each run records that
    // long and what is compared is the time of a display frame.
    let measure = if host_options.duration.is_some() {
        Measure::FrameTime
    } else {
        Measure::ProgramTime
    };
    let most = options
        .max_runs
        .unwrap_or(options.runs.saturating_mul(3))
        .max(options.runs);
    let mut round = 0;
    let noisy = |sides: &[Side]| sides.iter().any(|s| noise_is_wide(&s.builds));
    while round < options.runs || (round < most && noisy(&sides)) {
        round += 1;
        if round <= options.runs {
            terminal::status("Running", &format!("round {round} of {}", options.runs));
        } else {
            terminal::status(
                "Running",
                &format!(
                    "round {round} (at most {most}): the plain build against itself still \
                     varies by more than {:.0} %",
                    WIDE_NOISE * 100.0
                ),
            );
        }
        for side in &mut sides {
            side.run_round(&host_options, &target_dir, measure)?;
        }
    }

    let package = &sides[0].builds[0].module.unit.package;
    let described: Vec<String> = sides.iter().map(Side::describe).collect();
    println!(
        "{package} ({}{}): {} run{} of each build in turn after a warm-up, {}{}",
        sides[0].entry,
        crate_wide_flags(&base.crate_wide),
        round,
        if round == 1 { "" } else { "s" },
        described.join(", and "),
        match (measure, host_options.duration) {
            (Measure::FrameTime, Some(duration)) => format!(
                "; each recorded {} and timed by its display frames",
                seconds_or_millis(duration.as_nanos() as u64)
            ),
            _ => String::new(),
        }
    );
    for (index, side) in sides.iter().enumerate() {
        if sides.len() > 1 {
            println!("{}{}:", if index == 0 { "" } else { "\n" }, side.title);
        }
        print!("{}", table(&side.builds, measure));
        let summary = default_run_cost(&side.builds);
        if !summary.is_empty() {
            print!("\n{summary}");
        }
        if measure == Measure::FrameTime {
            println!("{}", frame_rates(&side.builds));
        }
        print!("{}", memory_costs(&side.builds));
    }
    if let [threaded, without] = &sides[..] {
        print!("\n{}", sides::comparison(threaded, without));
    }
    Ok(())
}

/// What a run's time is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    /// The program's own time, entry call to end.
    ProgramTime,
    /// A display frame's time in a recording window (`--duration`): the
    /// window over the frames the page drew in it, which the page host
    /// counts whatever the build.
    FrameTime,
}

/// The time of one display frame in a run's window.
fn frame_nanos(result: &HostResult, label: &str) -> Result<u64> {
    let window = result.window.with_context(|| {
        format!("the {label} build's run ended before its window opened: is --after too long?")
    })?;
    let frames = result.display_frames.unwrap_or(0);
    if frames == 0 {
        bail!(
            "the {label} build drew no animation frame in its window: a frame rate needs a page \
             that draws (requestAnimationFrame) all through it. Without --duration, bench \
             times the program from its entry call to its end"
        );
    }
    Ok(window.end_nanos.saturating_sub(window.start_nanos) / frames)
}

/// `frames per second (median): plain 60.0, --timer none 59.1, …`.
fn frame_rates(builds: &[Measured]) -> String {
    let rates: Vec<String> = builds
        .iter()
        .map(|b| {
            let (median, _, _) = spread(&b.nanos);
            let rate = if median > 0.0 { 1e9 / median } else { 0.0 };
            format!("{} {rate:.1}", b.label)
        })
        .collect();
    format!("frames per second (median): {}", rates.join(", "))
}

/// The summary: what a run without flags costs, against plain and the
/// floor, and what its sampler (and the frames kept for it) add to the
/// unsampled timed build, paired round by round.
fn default_run_cost(builds: &[Measured]) -> String {
    let find = |label: &str| builds.iter().find(|b| b.label == label);
    let Some(run) = find(DEFAULT_RUN) else {
        return String::new();
    };
    // As in the table: the ratio of the medians.
    let over = |other: &Measured| ratio(spread(&run.nanos).0, spread(&other.nanos).0);
    let mut parts = vec![format!("{} plain", over(&builds[0]))];
    if let Some(floor) = find("floor") {
        parts.push(format!("{} the floor", over(floor)));
    }
    if let Some(unsampled) = find(UNSAMPLED) {
        let ratios = paired_ratios(&run.nanos, &unsampled.nanos);
        let interval = median_interval(&ratios)
            .map(|(low, high, _)| format!(" (interval {low:.2}–{high:.2})"))
            .unwrap_or_default();
        let what = match run.frames {
            build::KeptFrames::InLineTables => {
                "what its sampler adds (it keeps no frames: the sampler finds inlined calls in \
                 the line tables)"
            }
            _ => "what its sampler and the frames kept for it add",
        };
        parts.push(format!(
            "and {:.2}× {UNSAMPLED}{interval}: {what}",
            median(&ratios)
        ));
    }
    format!(
        "`cargo wasmprof run` as it runs without flags (--timer host, sampled) costs {}\n",
        parts.join(", ")
    )
}

/// With `--memory`: each memory row's time over the same build's without
/// it, paired round by round.
fn memory_costs(builds: &[Measured]) -> String {
    let mut text = String::new();
    for (with, without) in MEMORY_PAIRS {
        let find = |label: &str| builds.iter().find(|b| b.label == label);
        let (Some(with), Some(without)) = (find(with), find(without)) else {
            continue;
        };
        let ratios = paired_ratios(&with.nanos, &without.nanos);
        let interval = median_interval(&ratios)
            .map(|(low, high, _)| format!(" (interval {low:.2}–{high:.2})"))
            .unwrap_or_default();
        text.push_str(&format!(
            "{} costs {:.2}× of {}{interval}; .wasm {}\n",
            with.label,
            median(&ratios),
            without.label,
            ratio(with.wasm_bytes as f64, without.wasm_bytes as f64)
        ));
    }
    text
}

/// The build of one row: the shared flags, with the row's timer (none
/// for the plain build), sampler and memory recording.
fn row_build(
    base: &BuildOptions,
    timer: Option<Timer>,
    sample: bool,
    memory: bool,
) -> BuildOptions {
    BuildOptions {
        sampled: Some(sample),
        memory,
        timer: timer.unwrap_or(Timer::Host),
        no_instrument: timer.is_none(),
        crate_wide: match timer {
            Some(_) => base.crate_wide.clone(),
            None => CrateWideOptions::default(),
        },
        ..base.clone()
    }
}

/// The crate-wide flags the instrumented builds had, for the table's title.
fn crate_wide_flags(flags: &CrateWideOptions) -> String {
    let mut words = Vec::new();
    if flags.instrument_all {
        words.push("--instrument-all".to_owned());
    }
    for krate in &flags.instrument_crate {
        words.push(format!("--instrument-crate {krate}"));
    }
    if let Some(n) = flags.min_size {
        words.push(format!("--min-size {n}"));
    }
    words.iter().map(|w| format!(", {w}")).collect()
}

/// Runs one build once, its output captured; a run that fails ends the
/// benchmark, with what the program said.
fn run_once(
    host: &mut dyn Host,
    build: &Measured,
    host_args: &HostOptions,
    target_dir: &Path,
) -> Result<(HostResult, Captured)> {
    let run_dir = files::new_run_dir(target_dir, &build.module);
    let mut config = launch::host_config(&build.module, host_args, &run_dir)?;
    config.sample_interval_micros = build
        .sample
        .then(|| launch::sample_interval_micros(host_args));
    let outcome = launch::launch(host, &config, &run_dir, true);
    let _ = std::fs::remove_dir_all(&run_dir);
    let (result, output) = outcome?;
    let finished = result.status.finished() && result.exit_code == 0;
    if !finished {
        let said = String::from_utf8_lossy(&output.stderr);
        let said = said.trim();
        bail!(
            "the {} build failed after {} (exit status {}): {}{}{}\n\
             A benchmark needs a program that finishes; `cargo wasmprof run` shows the profile \
             up to the failure.",
            build.label,
            seconds_or_millis(result.program_nanos),
            result.exit_code,
            result.message.as_deref().unwrap_or(result.status.as_str()),
            if said.is_empty() {
                ""
            } else {
                "\nits output:\n"
            },
            said
        );
    }
    Ok((result, output))
}

/// The label of the first build whose output differs from the plain one's.
fn first_different_output(builds: &[Measured], outputs: &[Vec<u8>]) -> Option<&'static str> {
    let plain = outputs.first()?;
    builds
        .iter()
        .zip(outputs)
        .skip(1)
        .find(|(_, output)| *output != plain)
        .map(|(build, _)| build.label)
}

/// Median, least and greatest of some run times, in nanoseconds.
fn spread(nanos: &[u64]) -> (f64, f64, f64) {
    let values: Vec<f64> = nanos.iter().map(|&n| n as f64).collect();
    let least = values.iter().copied().reduce(f64::min).unwrap_or(0.0);
    let greatest = values.iter().copied().reduce(f64::max).unwrap_or(0.0);
    (median(&values), least, greatest)
}

/// The median (the mean of the middle two for an even count; 0 for none).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Milliseconds with three significant digits or more.
fn millis(nanos: f64) -> String {
    let ms = nanos / 1e6;
    match ms {
        _ if ms >= 100.0 => format!("{ms:.0}"),
        _ if ms >= 10.0 => format!("{ms:.1}"),
        _ => format!("{ms:.2}"),
    }
}

fn ratio(value: f64, plain: f64) -> String {
    if plain > 0.0 {
        format!("{:.2}×", value / plain)
    } else {
        "–".into()
    }
}

/// How far from 1.00 the plain build against itself may vary before more
/// rounds run.
const WIDE_NOISE: f64 = 0.05;

/// Whether the interval of plain against itself reaches further than
/// [`WIDE_NOISE`] from 1.00: the rounds so far cannot tell small costs
/// from the machine's noise.
fn noise_is_wide(builds: &[Measured]) -> bool {
    let plain = &builds[0].nanos;
    let Some(control) = builds.iter().find(|b| b.label == CONTROL) else {
        return false;
    };
    match median_interval(&paired_ratios(&control.nanos, plain)) {
        Some((low, high, _)) => low < 1.0 - WIDE_NOISE || high > 1.0 + WIDE_NOISE,
        None => false,
    }
}

/// Each build's time over plain's in the same round: the rounds run every
/// build in turn, so a machine that slows down for a while slows both
/// sides of a ratio.
fn paired_ratios(build: &[u64], plain: &[u64]) -> Vec<f64> {
    build
        .iter()
        .zip(plain)
        .filter(|&(_, &p)| p > 0)
        .map(|(&b, &p)| b as f64 / p as f64)
        .collect()
}

/// A distribution-free interval for the median of `ratios`: the order
/// statistics `k` and `n + 1 - k`, with `k` as large as keeps the
/// confidence at 95 % (or 1, with the confidence it has), and that
/// confidence. `None` without two ratios.
fn median_interval(ratios: &[f64]) -> Option<(f64, f64, f64)> {
    let n = ratios.len();
    if n < 2 {
        return None;
    }
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    // P(X < k) for X ~ Binomial(n, 1/2): the chance that fewer than k of
    // the ratios fall below the true median.
    let below = |k: usize| -> f64 {
        let mut term = 0.5f64.powi(n as i32);
        let mut sum = 0.0;
        for i in 0..k {
            sum += term;
            term = term * (n - i) as f64 / (i + 1) as f64;
        }
        sum
    };
    let confidence = |k: usize| 1.0 - 2.0 * below(k);
    let k = (1..=n / 2)
        .rev()
        .find(|&k| confidence(k) >= 0.95)
        .unwrap_or(1);
    Some((sorted[k - 1], sorted[n - k], confidence(k)))
}

/// What a row's ratio to plain can be trusted to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The plain build against itself.
    Control,
    /// No different from plain as far as these rounds can tell: the
    /// interval holds 1, or meets the control's, or the build seems
    /// faster than plain, which instrumentation cannot make it.
    Noise,
    /// Slower than plain beyond the machine's noise.
    Slower,
    /// Too few rounds for an interval.
    Unknown,
}

fn verdict(
    median: f64,
    interval: Option<(f64, f64, f64)>,
    control: Option<(f64, f64, f64)>,
) -> Verdict {
    let Some((low, high, _)) = interval else {
        return if median < 1.0 {
            Verdict::Noise
        } else {
            Verdict::Unknown
        };
    };
    let meets_control = control.is_some_and(|(c_low, c_high, _)| low <= c_high && c_low <= high);
    if median < 1.0 || low <= 1.0 || meets_control {
        Verdict::Noise
    } else {
        Verdict::Slower
    }
}

/// One row of the table: label, time, its ratio to plain, the ratio's
/// interval, its ratio to the floor, size, its ratio, and the verdict.
type Row = (
    &'static str,
    String,
    String,
    String,
    String,
    String,
    String,
    &'static str,
);

/// The table: one row a build, time and size, each with its ratio to the
/// plain build, the interval of the time's ratio and what it can be
/// trusted to say, and the time's ratio to the floor when there is one;
/// then what the verdicts mean.
fn table(builds: &[Measured], measure: Measure) -> String {
    let time_title = match measure {
        Measure::ProgramTime => "time ms (range)",
        Measure::FrameTime => "frame ms (range)",
    };
    let plain = &builds[0].nanos;
    let (plain_median, _, _) = spread(plain);
    let floor_median = builds
        .iter()
        .find(|b| b.label == "floor")
        .map(|b| spread(&b.nanos).0);
    let interval_of = |build: &Measured| median_interval(&paired_ratios(&build.nanos, plain));
    let control = builds
        .iter()
        .find(|b| b.label == CONTROL)
        .and_then(interval_of);
    let mut verdicts = Vec::new();
    let rows: Vec<Row> = builds
        .iter()
        .enumerate()
        .map(|(index, build)| {
            let (median, least, greatest) = spread(&build.nanos);
            let interval = interval_of(build);
            let ratios = paired_ratios(&build.nanos, plain);
            let median_ratio = self::median(&ratios);
            let verdict = match (index, build.label) {
                (0, _) => None,
                (_, CONTROL) => Some(Verdict::Control),
                _ => Some(verdict(median_ratio, interval, control)),
            };
            verdicts.extend(verdict.map(|v| (build.label, v, median_ratio)));
            (
                build.label,
                format!(
                    "{} ({}–{})",
                    millis(median),
                    millis(least),
                    millis(greatest)
                ),
                ratio(median, plain_median),
                match (index, interval) {
                    (0, _) | (_, None) => String::new(),
                    (_, Some((low, high, _))) => format!("{low:.2}–{high:.2}"),
                },
                floor_median.map_or_else(String::new, |floor| ratio(median, floor)),
                format!("{:.1}", build.wasm_bytes as f64 / 1024.0),
                ratio(build.wasm_bytes as f64, builds[0].wasm_bytes as f64),
                match verdict {
                    None => "",
                    Some(Verdict::Control) => "control",
                    Some(Verdict::Noise) => "noise",
                    Some(Verdict::Slower) => "slower",
                    Some(Verdict::Unknown) => "?",
                },
            )
        })
        .collect();
    let width = |pick: fn(&Row) -> usize, title: &str| {
        rows.iter().map(pick).max().unwrap_or(0).max(title.len())
    };
    let w_label = width(|r| r.0.len(), "--timer none");
    let w_time = width(|r| r.1.chars().count(), time_title);
    let w_interval = width(|r| r.3.chars().count(), "interval");
    let w_size = width(|r| r.5.len(), ".wasm KiB");
    let floor_title = if floor_median.is_some() {
        "vs floor"
    } else {
        ""
    };
    let w_floor = if floor_median.is_some() { 8 } else { 0 };
    let gap = if w_floor > 0 { "  " } else { "" };
    let mut out = format!(
        "{:<w_label$}  {:>w_time$}  {:>8}  {:>w_interval$}  {floor_title:>w_floor$}{gap}{:>w_size$}  {:>8}  {}\n",
        "build", time_title, "time", "interval", ".wasm KiB", "size", "verdict"
    );
    for (label, time, time_ratio, interval, floor_ratio, size, size_ratio, verdict) in rows {
        let line = format!(
            "{label:<w_label$}  {time:>w_time$}  {time_ratio:>8}  {interval:>w_interval$}  {floor_ratio:>w_floor$}{gap}{size:>w_size$}  {size_ratio:>8}  {verdict}"
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&line_tables_note(builds));
    let explained = explain(&verdicts, control, builds[0].nanos.len());
    if !explained.is_empty() {
        out.push('\n');
        out.push_str(&explained);
    }
    out
}

/// The line under the table for builds that keep their line tables (a
/// sampled build for wasmtime): how much larger they are without their
/// debug info than plain without its own, which is what they ship of
/// code and data.
fn line_tables_note(builds: &[Measured]) -> String {
    let plain = &builds[0];
    let without_debug = |b: &Measured| b.wasm_bytes - b.debug_bytes;
    let kept: Vec<String> = builds
        .iter()
        .filter(|b| b.frames == build::KeptFrames::InLineTables)
        .map(|b| {
            format!(
                "{} is {:.1} KiB without them, {} plain's {:.1} KiB without debug info",
                b.label,
                without_debug(b) as f64 / 1024.0,
                ratio(without_debug(b) as f64, without_debug(plain) as f64),
                without_debug(plain) as f64 / 1024.0,
            )
        })
        .collect();
    if kept.is_empty() {
        return String::new();
    }
    format!(
        "\nSampled builds for wasmtime keep their line tables (DWARF), where the sampler \
         finds the calls the compiler inlined; the engine does not load them. {}.\n",
        kept.join("; ")
    )
}

/// The size of a module's debug info: its `.debug_*` custom sections,
/// names included. A module that does not parse counts what was read of
/// it.
fn debug_info_size(module: &[u8]) -> u64 {
    wasmparser::Parser::new(0)
        .parse_all(module)
        .map_while(Result::ok)
        .filter_map(|payload| match payload {
            wasmparser::Payload::CustomSection(section)
                if section.name().starts_with(".debug_") =>
            {
                Some(section.range().len() as u64)
            }
            _ => None,
        })
        .sum()
}

/// The lines under the table: what the interval is, and what the verdicts
/// say, the builds that seem faster than plain named.
fn explain(
    verdicts: &[(&'static str, Verdict, f64)],
    control: Option<(f64, f64, f64)>,
    rounds: usize,
) -> String {
    let mut out = String::new();
    match control {
        Some((low, high, confidence)) => out.push_str(&format!(
            "interval: the {:.0} % interval of the median of each round's time over plain's; \
             plain against itself: {low:.2}–{high:.2}\n",
            confidence * 100.0
        )),
        None if rounds < 2 => out.push_str(
            "one round: no interval, and no verdict (`?`); run -n 5 or more to tell the \
             builds from the machine's noise\n",
        ),
        None => {}
    }
    let faster: Vec<String> = verdicts
        .iter()
        .filter(|(_, v, r)| *v == Verdict::Noise && *r < 1.0)
        .map(|(label, _, r)| format!("{label} ({r:.2}×)"))
        .collect();
    if verdicts.iter().any(|(_, v, _)| *v == Verdict::Noise) {
        out.push_str(
            "noise: not told apart from plain by these rounds (the interval holds 1.00 or \
             meets plain against itself); its ratio says nothing. Run more rounds (-n) on a \
             quieter machine.\n",
        );
    }
    if !faster.is_empty() {
        out.push_str(&format!(
            "faster than plain, which instrumentation cannot make a program: {}; the machine's \
             noise, not a speed-up\n",
            faster.join(", ")
        ));
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::build::{ModuleKind, Unit};

    pub(super) fn measured(label: &'static str, wasm_bytes: u64, nanos: &[u64]) -> Measured {
        Measured {
            label,
            sample: false,
            memory: label.ends_with("--memory"),
            frames: build::KeptFrames::None,
            module: BuiltModule {
                unit: Unit {
                    package: "app".into(),
                    manifest_path: "Cargo.toml".into(),
                    kind: ModuleKind::Wasi,
                    bin: None,
                    bindgen_version: None,
                },
                wasm: "app.wasm".into(),
                js: None,
                instrument: None,
                small: None,
            },
            wasm_bytes,
            debug_bytes: 0,
            nanos: nanos.to_vec(),
        }
    }

    #[test]
    fn debug_info_is_its_sections_with_their_names() {
        let mut module = b"\0asm\x01\0\0\0".to_vec();
        // A type section of one type, then a custom section `.debug_info`
        // of 4 bytes and one `name` of 1.
        module.extend([1, 4, 1, 0x60, 0, 0]);
        module.extend([0, 16, 11]);
        module.extend(b".debug_info");
        module.extend([1, 2, 3, 4]);
        module.extend([0, 6, 4]);
        module.extend(b"name");
        module.push(0);
        // The section's name and data: 1 + 11 + 4 bytes.
        assert_eq!(debug_info_size(&module), 16);
        // A module cut short before the section has none.
        assert_eq!(debug_info_size(&module[..20]), 0);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(spread(&[5, 1, 3]), (3.0, 1.0, 5.0));
        assert_eq!(spread(&[4, 1, 3, 10]), (3.5, 1.0, 10.0));
        assert_eq!(spread(&[7]), (7.0, 7.0, 7.0));
    }

    #[test]
    fn the_table_gives_times_sizes_ratios_their_intervals_and_verdicts() {
        let builds = [
            measured("plain", 102_400, &[10_000_000, 12_000_000, 11_000_000]),
            measured(
                "--timer none",
                112_640,
                &[13_000_000, 13_200_000, 14_000_000],
            ),
            measured(
                "--timer host",
                122_880,
                &[16_500_000, 15_000_000, 18_000_000],
            ),
            measured(CONTROL, 102_400, &[10_100_000, 11_900_000, 11_000_000]),
        ];
        assert_eq!(
            table(&builds, Measure::ProgramTime),
            "build          time ms (range)      time   interval  .wasm KiB      size  verdict\n\
             plain         11.0 (10.0–12.0)     1.00×                 100.0     1.00×\n\
             --timer none  13.2 (13.0–14.0)     1.20×  1.10–1.30      110.0     1.10×  slower\n\
             --timer host  16.5 (15.0–18.0)     1.50×  1.25–1.65      120.0     1.20×  slower\n\
             plain again   11.0 (10.1–11.9)     1.00×  0.99–1.01      100.0     1.00×  control\n\
             \n\
             interval: the 75 % interval of the median of each round's time over plain's; \
             plain against itself: 0.99–1.01\n"
        );
    }

    #[test]
    fn builds_that_keep_line_tables_give_their_size_without_them() {
        let mut plain = measured("plain", 400 * 1024, &[1]);
        plain.debug_bytes = 100 * 1024;
        let mut sampled = measured("--timer host (what run does)", 1_400 * 1024, &[1]);
        sampled.debug_bytes = 1_070 * 1024;
        sampled.frames = build::KeptFrames::InLineTables;
        let unsampled = measured("--timer host --no-sample", 430 * 1024, &[1]);
        assert_eq!(line_tables_note(&[plain.clone(), unsampled.clone()]), "");
        let note = line_tables_note(&[plain, unsampled, sampled]);
        assert!(
            note.ends_with(
                "--timer host (what run does) is 330.0 KiB without them, 1.10× plain's \
                 300.0 KiB without debug info.\n"
            ),
            "{note}"
        );
    }

    #[test]
    fn a_build_no_slower_than_plain_against_itself_is_noise() {
        let builds = [
            measured("plain", 1, &[10, 10, 10, 10, 10]),
            // Faster than plain: impossible, so noise.
            measured("floor", 1, &[8, 9, 8, 9, 8]),
            // Its interval meets plain against itself.
            measured("--timer none", 1, &[11, 12, 11, 12, 11]),
            measured(CONTROL, 1, &[10, 12, 10, 11, 9]),
        ];
        let text = table(&builds, Measure::ProgramTime);
        let verdict_of = |label: &str| {
            let line = text.lines().find(|l| l.starts_with(label)).unwrap();
            line.rsplit("  ").next().unwrap().trim().to_owned()
        };
        assert_eq!(verdict_of("floor"), "noise", "{text}");
        assert_eq!(verdict_of("--timer none"), "noise", "{text}");
        assert!(text.contains("faster than plain"), "{text}");
        assert!(text.contains("floor (0.80×)"), "{text}");
    }

    #[test]
    fn the_median_s_interval_is_as_wide_as_its_confidence_needs() {
        assert_eq!(median_interval(&[1.0]), None);
        // Five rounds: the least and the greatest, 15/16 of the time.
        let (low, high, confidence) = median_interval(&[1.3, 1.1, 1.2, 1.5, 1.4]).unwrap();
        assert_eq!((low, high), (1.1, 1.5));
        assert!((confidence - 0.9375).abs() < 1e-12);
        // Twenty rounds: the 6th from each end keeps 95 %.
        let ratios: Vec<f64> = (1..=20).map(f64::from).collect();
        let (low, high, confidence) = median_interval(&ratios).unwrap();
        assert_eq!((low, high), (6.0, 15.0));
        assert!(confidence >= 0.95, "{confidence}");
    }

    #[test]
    fn rounds_go_on_while_plain_against_itself_varies_by_more_than_five_percent() {
        let steady = [
            measured("plain", 1, &[100, 100, 100, 100, 100]),
            measured(CONTROL, 1, &[101, 99, 102, 100, 98]),
        ];
        assert!(!noise_is_wide(&steady));
        let noisy = [
            measured("plain", 1, &[100, 100, 100, 100, 100]),
            measured(CONTROL, 1, &[130, 99, 102, 100, 80]),
        ];
        assert!(noise_is_wide(&noisy));
        // Nothing to tell from one round.
        assert!(!noise_is_wide(&[
            measured("plain", 1, &[100]),
            measured(CONTROL, 1, &[150])
        ]));
    }

    #[test]
    fn one_round_gives_no_verdict_but_a_faster_build_is_still_noise() {
        assert_eq!(verdict(1.3, None, None), Verdict::Unknown);
        assert_eq!(verdict(0.7, None, None), Verdict::Noise);
    }

    #[test]
    fn a_build_that_printed_something_else_is_named() {
        let builds = [
            measured("plain", 1, &[]),
            measured("--timer none", 1, &[]),
            measured("--timer host", 1, &[]),
        ];
        let same = vec![b"42\n".to_vec(); 3];
        assert_eq!(first_different_output(&builds, &same), None);
        let mut other = same.clone();
        other[2] = b"43\n".to_vec();
        assert_eq!(
            first_different_output(&builds, &other),
            Some("--timer host")
        );
    }

    #[test]
    fn the_title_repeats_the_crate_wide_flags() {
        assert_eq!(crate_wide_flags(&CrateWideOptions::default()), "");
        let flags = CrateWideOptions {
            instrument_all: true,
            instrument_crate: vec!["semver".into()],
            min_size: Some(0),
            ..CrateWideOptions::default()
        };
        assert_eq!(
            crate_wide_flags(&flags),
            ", --instrument-all, --instrument-crate semver, --min-size 0"
        );
    }

    #[test]
    fn small_and_large_times_keep_three_digits() {
        assert_eq!(millis(1_234_567.0), "1.23");
        assert_eq!(millis(12_345_678.0), "12.3");
        assert_eq!(millis(123_456_789.0), "123");
        assert_eq!(ratio(2.0, 0.0), "–");
    }

    #[test]
    fn the_summary_names_what_run_does_and_what_sampling_adds() {
        let builds = [
            measured("plain", 1, &[100, 100, 100]),
            measured("floor", 1, &[110, 110, 110]),
            measured(UNSAMPLED, 1, &[150, 160, 140]),
            measured(DEFAULT_RUN, 1, &[165, 176, 168]),
        ];
        assert_eq!(
            default_run_cost(&builds),
            "`cargo wasmprof run` as it runs without flags (--timer host, sampled) costs 1.68× \
             plain, 1.53× the floor, and 1.10× --timer host --no-sample (interval 1.10–1.20): \
             what its sampler and the frames kept for it add\n"
        );
        // A host without a sampler has no such row, and no summary.
        assert_eq!(default_run_cost(&builds[..3]), "");
    }

    #[test]
    fn memory_rows_are_compared_with_the_same_build_without_memory() {
        let builds = [
            measured("plain", 1000, &[100, 100, 100]),
            measured("--timer none", 1200, &[120, 130, 110]),
            measured(MEMORY_NONE, 1500, &[144, 156, 132]),
        ];
        let text = memory_costs(&builds);
        assert!(
            text.starts_with("--timer none --memory costs 1.20× of --timer none"),
            "{text}"
        );
        assert!(text.ends_with("; .wasm 1.25×\n"), "{text}");
        assert_eq!(text.lines().count(), 1, "no host row, no line: {text}");
    }

    #[test]
    fn a_frame_is_the_window_over_the_display_frames_drawn_in_it() {
        let mut result = HostResult::started("browser".into());
        result.window = Some(wasmprof_profile::profile::Window {
            start_nanos: 1_000_000_000,
            end_nanos: 4_000_000_000,
        });
        result.display_frames = Some(180);
        assert_eq!(frame_nanos(&result, "plain").unwrap(), 16_666_666);
        result.display_frames = Some(0);
        let error = frame_nanos(&result, "floor").unwrap_err().to_string();
        assert!(
            error.contains("the floor build drew no animation frame"),
            "{error}"
        );
        result.window = None;
        let error = frame_nanos(&result, "floor").unwrap_err().to_string();
        assert!(error.contains("before its window opened"), "{error}");
    }

    #[test]
    fn frame_rates_are_one_second_over_the_median_frame() {
        let builds = vec![
            measured("plain", 100, &[16_666_667, 16_666_667, 16_666_667]),
            measured("--timer host", 150, &[20_000_000, 25_000_000, 20_000_000]),
        ];
        assert_eq!(
            frame_rates(&builds),
            "frames per second (median): plain 60.0, --timer host 50.0"
        );
        assert!(table(&builds, Measure::FrameTime).starts_with("build"));
        assert!(table(&builds, Measure::FrameTime).contains("frame ms (range)"));
    }
}
