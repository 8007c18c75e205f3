//! `cargo wasmprof run`: build, run in a host, save the profile, summarise;
//! a thin command over [`crate::launch`] and the hosts in [`crate::hosts`].

mod component_targets;
pub(crate) mod options;
mod serve;
mod thread_targets;

use anyhow::{Context, Result, bail};

use crate::build::options::{BuildOptions, CargoOptions};
use crate::build::{self, BuiltModule, Workspace};
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
    let run_dir = files::new_run_dir(&target_dir, &module);
    let mut config = host_config(&module, host_options, &run_dir)?;
    if samples_by_default(&module, host_options, host.as_ref()) {
        config.sample_interval_micros = Some(sample_interval_micros(host_options));
    }
    terminal::status(
        "Running",
        &format!("{} in {} ({entry})", module.wasm.display(), host.describe()),
    );
    let result = launch(host.as_mut(), &config, &run_dir, false)?.0;
    drop(host);
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
        &module,
        &result,
        &config.snapshot_out,
        Some(&config.cpuprofile_out),
        &target_dir,
        run_context(&module, command_line, entry)?,
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
