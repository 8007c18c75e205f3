//! `cargo wasmprof bench`: what instrumentation costs one program, measured
//! side by side. The plain build, the floor (a counter per function and
//! nothing else), the counts-only build, the timed build and the
//! counts-only build with the engine's sampler on (a hybrid profile's cost)
//! run in turn in the same host, so that a machine that slows down for a
//! while slows them all alike; the medians and the `.wasm` sizes are
//! compared with the plain build's, and the times with the floor's too.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::build::{self, BuiltModule, Workspace};
use crate::cli::{BenchArgs, BuildArgs, CrateWideArgs, HostArgs, Timer};
use crate::run::host::{self, Captured, Host, HostResult};
use crate::run::{self, files, seconds_or_millis};
use crate::ui;

/// The builds compared, in the order they run: a label, the timer of an
/// instrumented build (`None`: plain), and whether the engine's sampler runs
/// too: as `run` runs a timed build by default (the sampler gives the calls
/// too short to time their time), and for a hybrid profile (counting plus
/// sampling).
const BUILDS: [(&str, Option<Timer>, bool); 6] = [
    ("plain", None, false),
    ("floor", Some(Timer::Floor), false),
    ("--timer none", Some(Timer::None), false),
    ("--timer host --no-sample", Some(Timer::Host), false),
    ("--timer host", Some(Timer::Host), true),
    ("--timer none --sample", Some(Timer::None), true),
];

/// One build and what was measured of it.
struct Measured {
    label: &'static str,
    /// Run with the engine's sampler on.
    sample: bool,
    /// The functions it keeps out of line.
    frames: build::KeptFrames,
    module: BuiltModule,
    wasm_bytes: u64,
    /// The program's own time of each counted run.
    nanos: Vec<u64>,
}

/// Builds, warms up, measures and prints the table on standard output.
pub fn bench(args: &BenchArgs, workspace: &Workspace) -> Result<()> {
    run::one_package(&args.cargo, "bench")?;
    if args.host.until_exit {
        bail!(
            "--until-exit cannot be benchmarked: in the plain build `wasmprof::exit` does \
             nothing, so that run would never end"
        );
    }
    // Before the long builds: is there a host at all, and can it run this?
    let mut host = host::select(args.host_kind, &args.host)?;
    for unit in workspace.units(&args.cargo)? {
        host.check_kind(unit.kind)?;
    }
    if !args.cargo.release && args.cargo.profile.is_none() {
        ui::warning(
            "benchmarking the dev profile, which is not optimised: add --release to measure \
             what you ship",
        );
    }
    let target_dir = workspace.target_dir(&args.cargo);
    let mut builds = Vec::with_capacity(BUILDS.len());
    let mut entry = String::new();
    // A host without a sampler has no hybrid row.
    let rows = BUILDS
        .iter()
        .filter(|(_, _, sample)| !sample || host.samples());
    for &(label, timer, sample) in rows {
        let build_args = build_args(args, timer, sample);
        // Rows that differ only in the sampler run the same build.
        let same = builds
            .iter()
            .find(|b: &&Measured| {
                b.module.instrument == build::instrument_mode(&build_args)
                    && b.frames == build::kept_frames(&build_args)
            })
            .map(|b| b.module.clone());
        let module = match same {
            Some(module) => module,
            None => build::build(&build_args, workspace)?
                .pop()
                .context("nothing was built")?,
        };
        // The builds export the same: the first one answers for all.
        if builds.is_empty() {
            entry = run::entry_point(&module, &args.host)?;
        }
        let wasm_bytes = std::fs::metadata(&module.wasm)
            .with_context(|| format!("could not read {}", module.wasm.display()))?
            .len();
        builds.push(Measured {
            label,
            sample,
            frames: build::kept_frames(&build_args),
            module,
            wasm_bytes,
            nanos: Vec::new(),
        });
    }

    ui::status(
        "Warming up",
        &format!("one run of each build in {}", host.describe()),
    );
    let mut outputs = Vec::with_capacity(builds.len());
    let mut uninstrumented = false;
    for build in &builds {
        let (result, output) = run_once(host.as_mut(), build, &args.host, &target_dir)?;
        // The floor keeps counters, not a profile.
        uninstrumented |=
            matches!(build.module.instrument, Some("none" | "host")) && !result.snapshot;
        outputs.push(output.stdout);
    }
    if uninstrumented {
        ui::warning(
            "no function of this program is instrumented, so the builds are alike: annotate \
             functions with #[wasmprof::instrument] or add --instrument-all",
        );
    }
    if let Some(differs) = first_different_output(&builds, &outputs) {
        ui::warning(&format!(
            "the {differs} build printed something other than the plain build: is the \
             program's output deterministic?"
        ));
    }
    for round in 1..=args.runs {
        ui::status("Running", &format!("round {round} of {}", args.runs));
        for build in &mut builds {
            let result = run_once(host.as_mut(), build, &args.host, &target_dir)?.0;
            build.nanos.push(result.program_nanos);
        }
    }

    let package = &builds[0].module.unit.package;
    println!(
        "{package} ({entry}{}): {} run{} of each build in turn after a warm-up, in {}",
        crate_wide_flags(&args.crate_wide),
        args.runs,
        if args.runs == 1 { "" } else { "s" },
        host.describe()
    );
    print!("{}", table(&builds));
    Ok(())
}

/// The flags of one of the builds: cargo's and the crate-wide ones as
/// the user gave them, the instrumentation as the row needs.
fn build_args(args: &BenchArgs, timer: Option<Timer>, sample: bool) -> BuildArgs {
    BuildArgs {
        sampled: sample,
        cargo: args.cargo.clone(),
        host: args.host_kind,
        timer: timer.unwrap_or(Timer::Host),
        no_instrument: timer.is_none(),
        max_nodes: None,
        crate_wide: match timer {
            Some(_) => args.crate_wide.clone(),
            None => CrateWideArgs::default(),
        },
    }
}

/// The crate-wide flags the instrumented builds had, for the table's title.
fn crate_wide_flags(flags: &CrateWideArgs) -> String {
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
    host_args: &HostArgs,
    target_dir: &Path,
) -> Result<(HostResult, Captured)> {
    let run_dir = files::new_run_dir(target_dir, &build.module);
    let mut config = run::host_config(&build.module, host_args, &run_dir)?;
    config.sample_interval_micros = build.sample.then(|| run::sample_interval_micros(host_args));
    let outcome = run::launch(host, &config, &run_dir, true);
    let _ = std::fs::remove_dir_all(&run_dir);
    let (result, output) = outcome?;
    let finished = matches!(result.status.as_str(), "ok" | "exit") && result.exit_code == 0;
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
            result.message.as_deref().unwrap_or(&result.status),
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
    let mut sorted = nanos.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let median = match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2] as f64,
        _ => (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0,
    };
    let least = sorted.first().copied().unwrap_or(0) as f64;
    let greatest = sorted.last().copied().unwrap_or(0) as f64;
    (median, least, greatest)
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

/// One row of the table: label, time, its ratios to plain and to the
/// floor, size and its ratio.
type Row = (&'static str, String, String, String, String, String);

/// The table: one row a build, time and size, each with its ratio to the
/// plain build, and the time's to the floor when there is one.
fn table(builds: &[Measured]) -> String {
    let (plain_median, _, _) = spread(&builds[0].nanos);
    let floor_median = builds
        .iter()
        .find(|b| b.label == "floor")
        .map(|b| spread(&b.nanos).0);
    let rows: Vec<Row> = builds
        .iter()
        .map(|build| {
            let (median, least, greatest) = spread(&build.nanos);
            (
                build.label,
                format!(
                    "{} ({}–{})",
                    millis(median),
                    millis(least),
                    millis(greatest)
                ),
                ratio(median, plain_median),
                floor_median.map_or_else(String::new, |floor| ratio(median, floor)),
                format!("{:.1}", build.wasm_bytes as f64 / 1024.0),
                ratio(build.wasm_bytes as f64, builds[0].wasm_bytes as f64),
            )
        })
        .collect();
    let width = |pick: fn(&Row) -> usize, title: &str| {
        rows.iter().map(pick).max().unwrap_or(0).max(title.len())
    };
    let w_label = width(|r| r.0.len(), "--timer none");
    let w_time = width(|r| r.1.chars().count(), "time ms (range)");
    let w_size = width(|r| r.4.len(), ".wasm KiB");
    let floor_title = if floor_median.is_some() {
        "vs floor"
    } else {
        ""
    };
    let w_floor = if floor_median.is_some() { 8 } else { 0 };
    let mut out = format!(
        "{:<w_label$}  {:>w_time$}  {:>8}  {floor_title:>w_floor$}{}{:>w_size$}  {:>8}\n",
        "build",
        "time ms (range)",
        "time",
        if w_floor > 0 { "  " } else { "" },
        ".wasm KiB",
        "size"
    );
    for (label, time, time_ratio, floor_ratio, size, size_ratio) in rows {
        out.push_str(&format!(
            "{label:<w_label$}  {time:>w_time$}  {time_ratio:>8}  {floor_ratio:>w_floor$}{}{size:>w_size$}  {size_ratio:>8}\n",
            if w_floor > 0 { "  " } else { "" },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{ModuleKind, Unit};

    fn measured(label: &'static str, wasm_bytes: u64, nanos: &[u64]) -> Measured {
        Measured {
            label,
            sample: false,
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
            nanos: nanos.to_vec(),
        }
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(spread(&[5, 1, 3]), (3.0, 1.0, 5.0));
        assert_eq!(spread(&[4, 1, 3, 10]), (3.5, 1.0, 10.0));
        assert_eq!(spread(&[7]), (7.0, 7.0, 7.0));
    }

    #[test]
    fn the_table_gives_times_sizes_and_ratios_to_the_plain_build() {
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
        ];
        assert_eq!(
            table(&builds),
            "build          time ms (range)      time  .wasm KiB      size\n\
             plain         11.0 (10.0–12.0)     1.00×      100.0     1.00×\n\
             --timer none  13.2 (13.0–14.0)     1.20×      110.0     1.10×\n\
             --timer host  16.5 (15.0–18.0)     1.50×      120.0     1.20×\n"
        );
    }

    #[test]
    fn with_a_floor_every_time_is_also_compared_with_it() {
        let builds = [
            measured("plain", 102_400, &[10_000_000]),
            measured("floor", 104_448, &[12_500_000]),
            measured("--timer none", 112_640, &[15_000_000]),
        ];
        assert_eq!(
            table(&builds),
            "build          time ms (range)      time  vs floor  .wasm KiB      size\n\
             plain         10.0 (10.0–10.0)     1.00×     0.80×      100.0     1.00×\n\
             floor         12.5 (12.5–12.5)     1.25×     1.00×      102.0     1.02×\n\
             --timer none  15.0 (15.0–15.0)     1.50×     1.20×      110.0     1.10×\n"
        );
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
        assert_eq!(crate_wide_flags(&CrateWideArgs::default()), "");
        let flags = CrateWideArgs {
            instrument_all: true,
            instrument_crate: vec!["semver".into()],
            min_size: Some(0),
            ..CrateWideArgs::default()
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
}
