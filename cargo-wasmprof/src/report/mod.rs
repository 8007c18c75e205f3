//! `cargo wasmprof report`: find the profile(s), merge, render; with
//! `--diff`, compare.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::build::Workspace;
use crate::build::options::CargoOptions;
use wasmprof_profile::profile::{self, MemoryWeight, Profile};
use wasmprof_profile::report::{self, Format, RenderOptions, diff};
use wasmprof_profile::sampled;

mod flag_errors;
mod open_in_firefox_profiler;
use flag_errors::{more_memory_error, render_error, slower_error, thread_error};

/// What `cargo wasmprof report` is asked for, as plain data; each field is
/// the flag of the same name.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReportOptions {
    pub input: Vec<PathBuf>,
    pub hide_idle: bool,
    pub module: Option<PathBuf>,
    pub format: Format,
    pub output: Option<PathBuf>,
    pub open: bool,
    pub thread: Option<String>,
    pub explain: bool,
    pub icicle: bool,
    pub weight: Option<MemoryWeight>,
    pub diff: Vec<PathBuf>,
    pub fail_if_slower: Option<f64>,
    pub fail_if_more_memory: Option<f64>,
    pub function: Vec<String>,
    pub manifest_path: Option<PathBuf>,
    pub target_dir: Option<PathBuf>,
}

/// Merged runs add up, and `--diff` compares the sums as they are: three new
/// runs against one base would show every function slower. Said before the
/// table, since nothing in it shows how many runs each side holds.
fn warn_if_unbalanced(new_runs: usize, base_runs: usize) {
    if new_runs != base_runs {
        crate::terminal::warning(&format!(
            "the new side merges {new_runs} profile(s) and the base {base_runs}: merged runs \
             add up, so the times compared are sums of different numbers of runs; give as \
             many --input files as --diff files"
        ));
    }
}

/// Renders the report; the exit status is 1 when `--fail-if-slower` fails.
pub(crate) fn report(args: &ReportOptions) -> Result<i32> {
    if args.open && (args.format != Format::Firefox || !args.diff.is_empty()) {
        bail!(
            "--open serves a file for the Firefox Profiler: it goes with --format firefox, \
             without --diff"
        );
    }
    let inputs = if args.input.is_empty() {
        vec![latest_in_workspace(args)?]
    } else {
        args.input.clone()
    };
    if args.open {
        let output = match args.output.as_deref().filter(|p| p.as_os_str() != "-") {
            Some(output) => output.to_owned(),
            None => beside(&inputs[0], "firefox.json"),
        };
        // What is served is read back from the file: a device or a FIFO
        // would give nothing back.
        if !matches!(
            crate::output::Destination::of(&output)?,
            crate::output::Destination::Replace(_)
        ) {
            bail!(
                "--open serves the file it writes: {} is not a regular file; give -o a file, \
                 or no -o to write it beside the profile",
                output.display()
            );
        }
        let with_file = ReportOptions {
            output: Some(output.clone()),
            open: false,
            ..args.clone()
        };
        let status = report(&with_file)?;
        open_in_firefox_profiler::serve(&output)?;
        return Ok(status);
    }
    let mut options = sampled::Options::default();
    options.hide_idle = args.hide_idle;
    let options = match &args.module {
        Some(module) => {
            let options = options
                .with_module(module)
                .with_context(|| format!("--module {}", module.display()))?;
            if options.module_names.as_ref().is_some_and(|n| n.is_empty()) {
                crate::terminal::warning(&format!(
                    "--module {} has no function names (no name section): wasm-function[N] \
                     frames stay as they are",
                    module.display()
                ));
            }
            options
        }
        None => options,
    };
    let (profile, timeline) = load(&inputs, &options)?;
    let profile = match &args.thread {
        Some(which) => profile.thread_view(profile.find_thread(which).map_err(thread_error)?),
        None => profile,
    };
    if args.explain {
        emit(args, |out| Ok(report::write_explanation(&profile, out)?))?;
        return Ok(0);
    }
    let base = if args.diff.is_empty() {
        None
    } else {
        warn_if_unbalanced(inputs.len(), args.diff.len());
        Some(load(&args.diff, &options)?.0)
    };
    if args.format == Format::Flamechart && inputs.len() > 1 {
        bail!("a flame chart shows one run in time order: give one --input");
    }
    let run_samples = match args.format {
        Format::Firefox if timeline.is_empty() => run_samples(&profile, &options),
        _ => None,
    };
    let mut options = RenderOptions::format(args.format);
    options.icicle = args.icicle;
    options.timeline = &timeline;
    options.run_samples = run_samples.as_ref().map(|(p, t)| (p, t.as_slice()));
    options.base = base.as_ref();
    options.weight = args.weight;
    if args.fail_if_more_memory.is_some() && (base.is_none() || args.format != Format::Gprof) {
        bail!(
            "--fail-if-more-memory goes with the comparison table (--diff BASE, --format gprof, \
             the default)"
        );
    }
    if args.fail_if_slower.is_some() && (base.is_none() || args.format != Format::Gprof) {
        bail!(
            "--fail-if-slower goes with the comparison table (--diff BASE, --format gprof, the \
             default)"
        );
    }
    match (&base, args.format) {
        // Two files: the new profile, and the base beside it.
        (Some(base), Format::Pprof) => {
            diff::diff(base, &profile)?;
            let two_files = "--diff with --format pprof writes two files: give the new one with \
                 -o NEW.pb.gz, and the base goes beside it as NEW.base.pb.gz";
            let Some(output) = &args.output else {
                bail!("{two_files}");
            };
            // Nothing can go beside standard output or a device.
            if !matches!(
                crate::output::Destination::of(output)?,
                crate::output::Destination::Replace(_)
            ) {
                bail!("{two_files}; {} is not a file", output.display());
            }
            let base_path = base_path_for(output);
            let pprof = RenderOptions::format(Format::Pprof);
            write_file(&base_path, |out| {
                report::render(base, &pprof, out).map_err(render_error)
            })?;
            write_file(output, |out| {
                report::render(&profile, &pprof, out).map_err(render_error)
            })?;
            crate::terminal::status(
                "Compare",
                &format!(
                    "go tool pprof -diff_base {} {}",
                    base_path.display(),
                    output.display()
                ),
            );
            Ok(0)
        }
        _ => {
            emit(args, |out| {
                report::render(&profile, &options, out).map_err(render_error)
            })?;
            let Some(base) = base.as_ref() else {
                return Ok(0);
            };
            let mut failures = Vec::new();
            if let Some(pct) = args.fail_if_slower {
                failures.extend(
                    diff::too_slow(&diff::diff(base, &profile)?, &args.function, pct)
                        .map_err(slower_error)?,
                );
            }
            if let Some(pct) = args.fail_if_more_memory {
                failures
                    .extend(diff::too_much_memory(base, &profile, pct).map_err(more_memory_error)?);
            }
            for failure in &failures {
                crate::terminal::error(failure);
            }
            Ok(i32::from(!failures.is_empty()))
        }
    }
}

/// Reads and merges profiles of one kind; with one input, also its
/// samples in time order, if it is an engine's.
fn load(inputs: &[PathBuf], options: &sampled::Options) -> Result<(Profile, Vec<sampled::Span>)> {
    let mut profiles = Vec::with_capacity(inputs.len());
    let mut timeline = Vec::new();
    let mut first_kind = None;
    for path in inputs {
        let input = wasmprof_profile::input::read(path, options)?;
        match first_kind {
            None => first_kind = Some((input.kind, path)),
            Some((kind, first)) if kind != input.kind => bail!(
                "{} is {} but {} is {}: inputs of different kinds cannot be merged; \
                 report on them one at a time",
                first.display(),
                kind,
                path.display(),
                input.kind
            ),
            Some(_) => {}
        }
        if !input.problems.is_empty() {
            crate::terminal::warning(&format!(
                "{}: left out or repaired {}",
                path.display(),
                input.problems.describe()
            ));
        }
        // A snapshot file carries the independent count of a build with
        // --verify-counts, as a run does: said here as `run` says it.
        if input.kind == wasmprof_profile::input::InputKind::Snapshot
            && let Some(check) = &input.profile.run.count_check
        {
            crate::launch::verified_counts::announce_verified(check);
        }
        profiles.push(input.profile);
        if inputs.len() == 1 {
            timeline = input.timeline;
        }
    }
    let merged = profile::merge(profiles).context("no profile to report")?;
    Ok((merged, timeline))
}

/// The engine's samples saved beside an instrumented run (its
/// `.cpuprofile`), read with their timeline; a file that is gone or cannot
/// be read is said, and the report goes on without it.
fn run_samples(
    profile: &Profile,
    options: &sampled::Options,
) -> Option<(Profile, Vec<sampled::Span>)> {
    let path = Path::new(profile.run.samples_file.as_deref()?);
    match wasmprof_profile::input::read(path, options) {
        Ok(read) => Some((read.profile, read.timeline)),
        Err(e) => {
            crate::terminal::warning(&format!(
                "the run's samples are left out: {e} (its instrumented figures are all there)"
            ));
            None
        }
    }
}

/// Writes the report to `-o FILE` or standard output (no `-o`, or `-o -`).
fn emit(
    args: &ReportOptions,
    render: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> Result<()> {
    match args
        .output
        .as_deref()
        .filter(|path| path.as_os_str() != "-")
    {
        Some(path) => write_file(path, render),
        None => {
            if args.format.is_binary() && std::io::stdout().is_terminal() {
                bail!(
                    "{} output is binary: write it to a file with -o FILE (e.g. -o profile.{})",
                    args.format.name(),
                    args.format.extension()
                );
            }
            let mut stdout = std::io::stdout().lock();
            render(&mut stdout)?;
            stdout.flush()?;
            Ok(())
        }
    }
}

/// Writes a file as [`crate::output`] does: a regular file whole or not at
/// all, a device or a FIFO in place.
fn write_file(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> Result<()> {
    crate::output::write_to(path, render)?;
    crate::terminal::status("Wrote", &path.display().to_string());
    Ok(())
}

/// `new.pb.gz` → `new.base.pb.gz`.
/// `dir/NAME.EXTENSION` for `dir/NAME.wasmprof.json` (or any other
/// extension of `input`).
fn beside(input: &Path, extension: &str) -> PathBuf {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .split('.')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("profile");
    input.with_file_name(format!("{stem}.{extension}"))
}

fn base_path_for(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("profile.pb.gz");
    let base = match name.strip_suffix(".pb.gz") {
        Some(stem) => format!("{stem}.base.pb.gz"),
        None => format!("{name}.base"),
    };
    output.with_file_name(base)
}

fn latest_in_workspace(args: &ReportOptions) -> Result<PathBuf> {
    let target_dir = match &args.target_dir {
        Some(dir) => dir.clone(),
        None => {
            let cargo = CargoOptions {
                manifest_path: args.manifest_path.clone(),
                ..CargoOptions::default()
            };
            let workspace = Workspace::load(&cargo).context(
                "no --input was given and this is not a cargo project; pass --input FILE",
            )?;
            workspace.target_dir(&cargo)
        }
    };
    let dir = crate::profiles_dir::profiles_dir(&target_dir);
    crate::profiles_dir::latest_profile(&dir)?.with_context(|| {
        format!(
            "no profile found in {}: run `cargo wasmprof run` first, or pass --input FILE",
            dir.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_to_open_goes_beside_the_profile_read() {
        assert_eq!(
            beside(Path::new("p/app-17.wasmprof.json"), "firefox.json"),
            Path::new("p/app-17.firefox.json")
        );
        assert_eq!(
            beside(Path::new("samples.cpuprofile"), "firefox.json"),
            Path::new("samples.firefox.json")
        );
    }

    #[test]
    fn the_base_goes_beside_the_new_file() {
        assert_eq!(
            base_path_for(Path::new("out/new.pb.gz")),
            Path::new("out/new.base.pb.gz")
        );
        assert_eq!(
            base_path_for(Path::new("x.pprof")),
            Path::new("x.pprof.base")
        );
    }
}
