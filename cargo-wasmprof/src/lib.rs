//! `cargo wasmprof`: builds Rust crates to WebAssembly with wasmprof's
//! instrumentation switched on, runs them in a JavaScript host or wasmtime,
//! and reports on the profiles they produce.
//!
//! This is the command, not a library: its one public function is the
//! binary's [`main`]. The profile model, its readers and its renderers are
//! the `wasmprof-profile` crate, for other tools to use.

mod add;
mod bench;
mod build;
mod cli;
mod dir_lock;
#[cfg(test)]
mod docs_tests;
mod hosts;
mod launch;
mod output;
mod profiles_dir;
mod report;
mod rewrite;
mod run;
mod suites;
mod terminal;

use std::process::ExitCode;

use clap::Parser;

use cli::{CargoCli, Command};

/// The browsers the end-to-end tests drive pages in outside a run, found
/// and launched as `--host browser` finds and launches them. For this
/// package's tests only: not an API.
#[doc(hidden)]
pub mod browsers_for_tests {
    pub use crate::hosts::browser::firefox::FirefoxExe;
    pub use crate::hosts::browser::rpc::DISCONNECTED;
    pub use crate::hosts::browser::{Chromium, ChromiumExe};
}

/// `cargo-wasmprof`'s `main`: parses the command line, runs the command
/// and says how it ended.
pub fn main() -> ExitCode {
    if let Some(code) = build::rustc_wrapper::run_if_wrapping() {
        return ExitCode::from(code.clamp(0, 255) as u8);
    }
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
            let options = args.options();
            let workspace = build::Workspace::load(&options.build.cargo)?;
            bench::bench(&options, &workspace)?;
            Ok(0)
        }
        Command::Test(args) => {
            let options = args.options();
            let workspace = build::Workspace::load(&options.build.cargo)?;
            let command_line = std::env::args().collect();
            suites::test(&options, &workspace, command_line)
        }
        Command::TestRunner(args) => suites::runner::run(&args.args),
        Command::Report(args) => report::report(&args.options()),
    }
}
