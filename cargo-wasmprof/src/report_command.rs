//! `cargo wasmprof report`: find the profile(s), merge, render.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::build::Workspace;
use crate::cli::{CargoArgs, ReportArgs};
use crate::profile;
use crate::report::{self, Format};
use crate::sampled;

pub fn report(args: &ReportArgs) -> Result<()> {
    let inputs = if args.input.is_empty() {
        vec![latest_in_workspace(args)?]
    } else {
        args.input.clone()
    };
    let options = sampled::Options {
        hide_idle: args.hide_idle,
        module_names: None,
    };
    let options = match &args.module {
        Some(module) => options.with_module(module)?,
        None => options,
    };
    let mut profiles = Vec::with_capacity(inputs.len());
    let mut first_kind = None;
    for path in &inputs {
        let input = sampled::read_input(path, &options)?;
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
            crate::ui::warning(&format!(
                "{}: left out or repaired {}",
                path.display(),
                input.problems.describe()
            ));
        }
        profiles.push(input.profile);
    }
    let profile = profile::merge(profiles).context("no profile to report")?;
    match &args.output {
        Some(path) => {
            let mut file = std::fs::File::create(path)
                .with_context(|| format!("could not create {}", path.display()))?;
            report::render(&profile, args.format, &mut file)
                .with_context(|| format!("could not write {}", path.display()))?;
            file.flush()?;
            crate::ui::status("Wrote", &path.display().to_string());
        }
        None => {
            if args.format == Format::Pprof && std::io::stdout().is_terminal() {
                bail!("pprof output is binary: write it to a file with -o FILE (e.g. -o profile.pb.gz)");
            }
            let mut stdout = std::io::stdout().lock();
            report::render(&profile, args.format, &mut stdout)?;
            stdout.flush()?;
        }
    }
    Ok(())
}

fn latest_in_workspace(args: &ReportArgs) -> Result<PathBuf> {
    let target_dir = match &args.target_dir {
        Some(dir) => dir.clone(),
        None => {
            let cargo = CargoArgs {
                manifest_path: args.manifest_path.clone(),
                ..CargoArgs::default()
            };
            let workspace = Workspace::load(&cargo).context(
                "no --input was given and this is not a cargo project; pass --input FILE",
            )?;
            workspace.target_dir(&cargo)
        }
    };
    let dir = profile::profiles_dir(&target_dir);
    profile::latest_profile(&dir)?.with_context(|| {
        format!(
            "no profile found in {}: run `cargo wasmprof run` first, or pass --input FILE",
            dir.display()
        )
    })
}
