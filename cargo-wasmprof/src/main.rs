use std::process::ExitCode;

use clap::Parser;

use cargo_wasmprof::cli::{CargoCli, Command};
use cargo_wasmprof::{add, bench, build, report, run, test};

fn main() -> ExitCode {
    let CargoCli::Wasmprof(cli) = CargoCli::parse_from(args_for_clap());
    match execute(cli.command) {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo wasmprof X` runs `cargo-wasmprof wasmprof X`; someone running the
/// binary directly types `cargo-wasmprof X`. Both reach the same parser.
fn args_for_clap() -> Vec<std::ffi::OsString> {
    let mut args: Vec<_> = std::env::args_os().collect();
    if args.get(1).map(|a| a != "wasmprof").unwrap_or(true) {
        args.insert(1, "wasmprof".into());
    }
    args
}

fn execute(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Add(args) => add::add(&args),
        Command::Build(args) => {
            let options = args.options();
            let workspace = build::Workspace::load(&options.cargo)?;
            build::build(&options, &workspace)?;
            Ok(0)
        }
        Command::Run(args) => {
            let options = args.options();
            let workspace = build::Workspace::load(&options.build.cargo)?;
            let command_line = std::env::args().collect();
            run::run(&options, &workspace, command_line)
        }
        Command::Bench(args) => {
            let workspace = build::Workspace::load(&args.cargo.options())?;
            bench::bench(&args, &workspace)?;
            Ok(0)
        }
        Command::Test(args) => {
            let workspace = build::Workspace::load(&args.cargo.options())?;
            let command_line = std::env::args().collect();
            test::test(&args, &workspace, command_line)
        }
        Command::TestRunner(args) => test::runner::run(&args.args),
        Command::Report(args) => report::report(&args.options()),
    }
}
