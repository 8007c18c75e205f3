//! `cargo wasmprof run`: build, run in a host, save the profile, summarise;
//! a thin command over [`crate::launch`] and the hosts in [`crate::hosts`].

mod component_targets;
pub(crate) mod options;
mod serve;
mod thread_targets;

use anyhow::{Context, Result, bail};

use crate::build::options::{BuildOptions, CargoOptions};
use crate::build::{self, BuiltModule, Workspace};
use crate::hosts::host::Host;
use crate::hosts::{files, select as select_host};
use crate::launch::{
    entry_point, host_config, launch, run_context, sample_interval_micros, samples_by_default,
    save_profile,
};
use crate::terminal;
use crate::terminal::seconds_or_millis;
use options::{HostOptions, RunOptions};

/// Runs the program and returns the exit status `cargo wasmprof` should end
/// with: the program's own.
pub(crate) fn run(
    options: &RunOptions,
    workspace: &Workspace,
    command_line: Vec<String>,
) -> Result<i32> {
    let host_options = &options.host;
    let build_options = &options.build;
    one_package(&build_options.cargo, "run")?;
    if let Some(serve) = options.serve {
        return serve::serve(options, serve, workspace, command_line);
    }
    // Before the long build: is there a host at all, and can it run this?
    let mut host = select_host::select(build_options.host, host_options)?;
    for unit in workspace.units(&build_options.cargo)? {
        host.check_kind(unit.kind)?;
    }
    thread_targets::check_target(build_options.cargo.target.as_deref(), host.as_ref())?;
    component_targets::check_target(build_options.cargo.target.as_deref(), host.as_ref())?;
    let (module, entry) = build_module_for(build_options, host_options, workspace)?;
    let wasm = std::fs::read(&module.wasm)
        .with_context(|| format!("could not read {}", module.wasm.display()))?;
    let info = wasmprof_profile::wasm_info::inspect(&wasm)?;
    thread_targets::check_module(&info, host.as_ref())?;
    component_targets::check_module(&info, host.as_ref())?;
    let target_dir = workspace.target_dir(&build_options.cargo);
    let series = Series {
        module: &module,
        entry: &entry,
        target_dir: &target_dir,
        command_line: &command_line,
    };
    for number in 1..=options.runs {
        let exit_code = series.run_once(options, host.as_mut(), number)?;
        if exit_code != 0 {
            if number < options.runs {
                terminal::warning(&format!(
                    "run {number} of {} exited with status {exit_code}; the {} after it did not start",
                    options.runs,
                    wasmprof_profile::report::plural(u64::from(options.runs - number), "run")
                ));
            }
            return Ok(exit_code);
        }
    }
    Ok(0)
}

/// What every run of `--runs` shares: one build, one entry point.
struct Series<'a> {
    module: &'a BuiltModule,
    entry: &'a str,
    target_dir: &'a std::path::Path,
    command_line: &'a [String],
}

impl Series<'_> {
    /// Runs the program once, saves and summarises its profile, and
    /// returns its exit status.
    fn run_once(&self, options: &RunOptions, host: &mut dyn Host, number: u32) -> Result<i32> {
        let (module, host_options) = (self.module, &options.host);
        let run_dir = files::new_run_dir(self.target_dir, module);
        let mut config = host_config(module, host_options, &run_dir)?;
        if samples_by_default(module, host_options, host) {
            config.sample_interval_micros = Some(sample_interval_micros(host_options));
        }
        let which = if options.runs > 1 {
            format!(", run {number} of {}", options.runs)
        } else {
            String::new()
        };
        terminal::status(
            "Running",
            &format!(
                "{} in {} ({}{which})",
                module.wasm.display(),
                host.describe(),
                self.entry
            ),
        );
        let result = launch(host, &config, &run_dir, false)?.0;
        terminal::status(
            "Ran",
            &format!(
                "for {} (exit status {})",
                seconds_or_millis(result.program_nanos),
                result.exit_code
            ),
        );
        if let Some(value) = &result.return_value {
            terminal::status("Returned", &value.to_string());
        }
        save_profile(
            module,
            &result,
            &config.snapshot_out,
            Some(&config.cpuprofile_out),
            self.target_dir,
            run_context(module, self.command_line.to_vec(), self.entry.to_owned())?,
            options.top,
        )?;
        // The run's files served their purpose; what matters is in the profile.
        let _ = std::fs::remove_dir_all(&run_dir);
        if !result.status.finished() {
            terminal::warning(&format!(
                "the program did not finish: {}",
                result.message.as_deref().unwrap_or(result.status.as_str())
            ));
        }
        Ok(result.exit_code)
    }
}

/// Builds the one module `run` runs, for its host, and finds its entry
/// point.
fn build_module_for(
    build: &BuildOptions,
    host_options: &HostOptions,
    workspace: &Workspace,
) -> Result<(BuiltModule, String)> {
    let build = BuildOptions {
        // A hybrid profile's samples must see every instrumented call; a
        // timed run that is not sampled need not keep their frames.
        sampled: crate::launch::sampled_build(host_options),
        ..build.clone()
    };
    let module = build::build(&build, workspace)?
        .pop()
        .context("nothing was built")?;
    let entry = entry_point(&module, host_options)?;
    Ok((module, entry))
}

/// `run` and `bench` take one package.
pub(crate) fn one_package(cargo: &CargoOptions, verb: &str) -> Result<()> {
    if cargo.workspace || cargo.package.len() > 1 {
        bail!("`cargo wasmprof {verb}` runs one package: choose it with -p NAME");
    }
    Ok(())
}
