//! One side of a benchmark: every row's build of the program for one
//! target in one host, measured round by round. A program built for
//! threads is benchmarked against itself without them in the same
//! sitting (`wasm32-wasip1` beside `wasm32-wasip1-threads`; a page's web
//! workers beside the same crate without threads in Node), so that what
//! the threads cost each row is one ratio, read off one run.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::{
    BUILDS, Measure, Measured, debug_info_size, first_different_output, frame_nanos, median,
    paired_ratios, row_build, run_once, spread,
};
use crate::build::options::{BuildOptions, HostKind, is_threaded_target};
use crate::build::{self, Workspace};
use crate::hosts::host::Host;
use crate::hosts::options::HostOptions;
use crate::launch;
use crate::terminal;

/// The builds of one target, and the host they run in.
pub(super) struct Side {
    /// What the side is built for: its target, or its host's threads.
    pub(super) title: String,
    host: Box<dyn Host>,
    pub(super) builds: Vec<Measured>,
    /// The entry point every build is entered by.
    pub(super) entry: String,
    /// How long a measured run may take, without `--timeout`: a run that
    /// hangs (a page whose thread pool never starts) ends the benchmark
    /// with a reason instead of holding it for ever.
    bound: Option<Duration>,
}

/// A measured run may take this many times the longest warm-up run…
const BOUND_OVER_WARM_UP: u32 = 20;
/// …and at least this long.
const LEAST_BOUND: Duration = Duration::from_secs(60);

impl Side {
    /// Builds every row of `base` for `host`.
    pub(super) fn build(
        base: &BuildOptions,
        host: Box<dyn Host>,
        memory_rows: bool,
        workspace: &Workspace,
    ) -> Result<Side> {
        let mut builds: Vec<Measured> = Vec::with_capacity(BUILDS.len());
        // A host without a sampler has no hybrid row.
        let rows = BUILDS
            .iter()
            .filter(|(_, _, sample, _)| !sample || host.samples())
            .filter(|(_, _, _, memory)| !memory || memory_rows);
        for &(label, timer, sample, memory) in rows {
            let build_args = row_build(base, timer, sample, memory);
            // Rows that differ only in the sampler run the same build.
            let same = builds
                .iter()
                .find(|b| {
                    b.module.instrument == build::instrument_mode(&build_args)
                        && b.frames == build::kept_frames(&build_args)
                        && b.memory == memory
                })
                .map(|b| b.module.clone());
            let module = match same {
                Some(module) => module,
                None => build::build(&build_args, workspace)?
                    .pop()
                    .context("nothing was built")?,
            };
            let bytes = std::fs::read(&module.wasm)
                .with_context(|| format!("could not read {}", module.wasm.display()))?;
            builds.push(Measured {
                label,
                sample,
                memory,
                frames: build::kept_frames(&build_args),
                module,
                wasm_bytes: bytes.len() as u64,
                debug_bytes: debug_info_size(&bytes),
                nanos: Vec::new(),
            });
        }
        let title = match (&base.cargo.target, base.without_threads) {
            (Some(target), _) => format!("{target} in {}", host.describe()),
            (None, true) => format!("one thread in {}", host.describe()),
            (None, false) => host.describe(),
        };
        Ok(Side {
            title,
            host,
            builds,
            entry: String::new(),
            bound: None,
        })
    }

    /// Whether the program was built for threads (its memory is shared).
    pub(super) fn threaded(&self) -> Result<bool> {
        let plain = &self.builds[0].module.wasm;
        let bytes =
            std::fs::read(plain).with_context(|| format!("could not read {}", plain.display()))?;
        Ok(wasmprof_profile::wasm_info::inspect(&bytes)?.shared_memory)
    }

    /// How the side is introduced in the table's title.
    pub(super) fn describe(&self) -> String {
        format!("on {}", self.title)
    }

    /// One run of each build, outside the measure: it finds the entry
    /// point, and warns of builds that are all alike or print otherwise.
    pub(super) fn warm_up(&mut self, host_options: &HostOptions, target_dir: &Path) -> Result<()> {
        // The builds export the same: the first one answers for all.
        self.entry = launch::entry_point(&self.builds[0].module, host_options)?;
        terminal::status(
            "Warming up",
            &format!("one run of each build on {}", self.title),
        );
        let mut outputs = Vec::with_capacity(self.builds.len());
        let mut uninstrumented = false;
        let mut longest = Duration::ZERO;
        for build in &self.builds {
            let (result, output) = run_once(self.host.as_mut(), build, host_options, target_dir)?;
            longest = longest.max(Duration::from_nanos(result.wall_nanos));
            // The floor keeps counters, not a profile.
            uninstrumented |= matches!(
                build.module.instrument,
                Some(build::Instrument::CountOnly | build::Instrument::Timed)
            ) && !result.snapshot;
            outputs.push(output.stdout);
        }
        if uninstrumented {
            terminal::warning(
                "no function of this program is instrumented, so the builds are alike: \
                 annotate functions with #[wasmprof::instrument] or add --instrument-all",
            );
        }
        if host_options.timeout.is_none() {
            self.bound = Some(bound_after(longest));
        }
        if let Some(differs) = first_different_output(&self.builds, &outputs) {
            terminal::warning(&format!(
                "the {differs} build printed something other than the plain build on {}: is \
                 the program's output deterministic?",
                self.title
            ));
        }
        Ok(())
    }

    /// One run of each build, measured.
    pub(super) fn run_round(
        &mut self,
        host_options: &HostOptions,
        target_dir: &Path,
        measure: Measure,
    ) -> Result<()> {
        let mut bounded = host_options.clone();
        bounded.timeout = host_options.timeout.or(self.bound);
        for build in &mut self.builds {
            let result = run_once(self.host.as_mut(), build, &bounded, target_dir)
                .map_err(|error| match self.bound {
                    Some(bound) => error.context(format!(
                        "bench gives each measured run on {} at most {} ({BOUND_OVER_WARM_UP} \
                         times its longest warm-up run, and at least {} s); --timeout sets \
                         another bound",
                        self.title,
                        crate::terminal::seconds_or_millis(bound.as_nanos() as u64),
                        LEAST_BOUND.as_secs()
                    )),
                    None => error,
                })?
                .0;
            build.nanos.push(match measure {
                Measure::ProgramTime => result.program_nanos,
                Measure::FrameTime => frame_nanos(&result, build.label)?,
            });
        }
        Ok(())
    }
}

/// How long a measured run may take, after a warm-up whose longest run
/// took `longest`.
fn bound_after(longest: Duration) -> Duration {
    (longest * BOUND_OVER_WARM_UP).max(LEAST_BOUND)
}

/// The same build without threads, for a program built with them:
/// `wasm32-wasip1` for `wasm32-wasip1-threads`; for a page's web workers
/// (a crate that uses wasm-bindgen-rayon, which it must leave out of a
/// build without atomics), the crate on the page's own thread (rayon then
/// runs every job there). Both in the same host, since another engine
/// (Node's V8 against the browser's) would be measured with the threads.
/// `None`, said, when there is no such build.
pub(super) fn without_threads(base: &BuildOptions) -> Option<BuildOptions> {
    let mut without = base.clone();
    match (&base.cargo.target, base.host) {
        (Some(target), _) if is_threaded_target(target) => {
            without.cargo.target = Some(target.trim_end_matches("-threads").to_owned());
        }
        (None, HostKind::Browser) => without.without_threads = true,
        _ => {
            terminal::note(
                "the program is built for threads, but no build of it without them can be \
                 named here (give --target wasm32-wasip1-threads, or --host browser for a \
                 page's web workers): the table has the threads alone",
            );
            return None;
        }
    }
    Some(without)
}

/// The two sides row by row: each row's time over its own side's plain
/// build, and the threaded side's ratio over the other's, paired round by
/// round. The plain row's raw times say what the threads bought.
pub(super) fn comparison(threaded: &Side, without: &Side) -> String {
    rows_compared(
        (&threaded.title, &threaded.builds),
        (&without.title, &without.builds),
    )
}

/// [`comparison`] of two sides' titles and builds.
fn rows_compared(
    (threaded_title, threaded): (&str, &[Measured]),
    (without_title, without): (&str, &[Measured]),
) -> String {
    let (threaded_plain, without_plain) = (threaded[0].nanos.clone(), without[0].nanos.clone());
    let mut rows = Vec::new();
    for build in threaded {
        let Some(other) = without.iter().find(|b| b.label == build.label) else {
            continue;
        };
        let here = paired_ratios(&build.nanos, &threaded_plain);
        let there = paired_ratios(&other.nanos, &without_plain);
        // The price of threads, round by round: this round's ratio with
        // threads over its ratio without.
        let price: Vec<f64> = here.iter().zip(&there).map(|(h, t)| h / t).collect();
        rows.push((build.label, median(&here), median(&there), median(&price)));
    }
    let width = rows
        .iter()
        .map(|r| r.0.len())
        .chain(["build".len()])
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "threads against one thread: each build over its own plain build, on {} and on {}, \
         and the first over the second\n",
        threaded_title, without_title
    );
    out.push_str(&format!(
        "{:<width$}  {:>12}  {:>12}  {:>14}\n",
        "build", "× its plain", "× its plain", "threads × one"
    ));
    out.push_str(&format!(
        "{:<width$}  {:>12}  {:>12}\n",
        "", "(threads)", "(one thread)"
    ));
    for (label, here, there, price) in rows {
        out.push_str(&format!(
            "{label:<width$}  {:>11.2}×  {:>11.2}×  {:>13.2}×\n",
            here, there, price
        ));
    }
    let (threaded_ms, without_ms) = (
        spread(&threaded_plain).0 / 1e6,
        spread(&without_plain).0 / 1e6,
    );
    out.push_str(&format!(
        "plain: {threaded_ms:.1} ms with threads, {without_ms:.1} ms on one thread\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_run_may_take_twenty_warm_ups_and_at_least_a_minute() {
        assert_eq!(bound_after(Duration::from_millis(200)), LEAST_BOUND);
        assert_eq!(
            bound_after(Duration::from_secs(10)),
            Duration::from_secs(200)
        );
    }

    #[test]
    fn the_comparison_is_each_row_over_its_plain_on_each_side_and_their_ratio() {
        use super::super::tests::measured;
        // With threads: plain 50 ms, timed 75 (1.5×); without: 100 and 125
        // (1.25×): the threads' price 1.2×, round by round.
        let ms = |n: u64| n * 1_000_000;
        let threaded = [
            measured("plain", 1, &[ms(50), ms(50), ms(50)]),
            measured("--timer none", 1, &[ms(75), ms(75), ms(75)]),
        ];
        let without = [
            measured("plain", 1, &[ms(100), ms(100), ms(100)]),
            measured("--timer none", 1, &[ms(125), ms(125), ms(125)]),
        ];
        let text = rows_compared(
            ("wasm32-wasip1-threads in wasmtime", &threaded),
            ("wasm32-wasip1 in wasmtime", &without),
        );
        assert!(
            text.contains("on wasm32-wasip1-threads in wasmtime and on wasm32-wasip1 in wasmtime"),
            "{text}"
        );
        let row = text
            .lines()
            .find(|l| l.starts_with("--timer none"))
            .expect("the row");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells[cells.len() - 3..],
            ["1.50×", "1.25×", "1.20×"],
            "{text}"
        );
        assert!(
            text.contains("plain: 50.0 ms with threads, 100.0 ms on one thread"),
            "{text}"
        );
    }
}
