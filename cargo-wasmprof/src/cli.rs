//! Command-line interface: `cargo wasmprof build | run | bench | report`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use wasmprof_profile::report::Format;

mod duration;

/// Cargo calls a subcommand as `cargo-wasmprof wasmprof ARGS`; the outer
/// level exists only to accept that first `wasmprof`.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo", styles = clap::builder::Styles::styled())]
pub(crate) enum CargoCli {
    Wasmprof(Cli),
}

/// An instrumenting profiler for Rust compiled to WebAssembly.
///
/// Annotate functions with `#[wasmprof::instrument]` (`cargo wasmprof add`
/// writes the dependency line that needs, once), then:
///
///   cargo wasmprof run --release                 build to wasm, run in Node, save the profile
///   cargo wasmprof run --release --host browser  the same in headless Chromium
///   cargo wasmprof run --release --serve         serve the app for a browser of your own
///   cargo wasmprof report                        print it as GNU gprof would
///   cargo wasmprof report --format pprof -o prof.pb.gz
///   cargo wasmprof test                          run the crate's tests instrumented, one profile
///   cargo wasmprof bench --release               what instrumentation costs this program
#[derive(Debug, Args)]
#[command(version, about, long_about, verbatim_doc_comment)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Add the runtime to the package's dependencies, as `wasmprof`: step one.
    ///
    /// Writes `wasmprof = { package = "wasmprof-rt", … }` into the
    /// package's Cargo.toml, keeping the rest as written, so that
    /// `#[wasmprof::instrument]` resolves. The runtime is not on crates.io
    /// yet: the line points at the runtime this cargo-wasmprof was
    /// installed from (the one crate-wide instrumentation uses), and will
    /// name the matching version once it is published. A manifest that
    /// already has the runtime, or another crate under the name `wasmprof`
    /// (crates.io's `wasmprof` is an unrelated wasmtime profiler), is left
    /// as it is, with an error that says what is there.
    Add(AddArgs),
    /// Build the package to WebAssembly with instrumentation switched on.
    ///
    /// Libraries (`crate-type = ["cdylib"]`) build for wasm32-unknown-unknown
    /// and go through the wasm-bindgen CLI when they use wasm-bindgen (a CLI
    /// of the crate's exact version is found on PATH or installed once);
    /// binaries build for wasm32-wasip1. Function names are kept in the
    /// module. Everything goes to `<target-dir>/wasmprof/`, so ordinary
    /// builds are not invalidated.
    Build(BuildArgs),
    /// Build (if needed), run the module in Node, a headless browser or wasmtime and save its profile.
    ///
    /// The entry point is the crate's `#[wasm_bindgen(start)]` function, a
    /// binary's `main`, or `--invoke NAME` for an exported function. The
    /// program's output reaches the terminal; the exit status is the
    /// program's (101 for a panic or trap, 124 for a timeout). A panic, trap
    /// or timeout still saves the profile collected so far, marked
    /// incomplete.
    ///
    /// `--host browser` serves the module and a generated page (or your own,
    /// `--page`) from 127.0.0.1 and runs it in headless Chromium; the console
    /// is relayed to the terminal. The run ends when the entry point has
    /// returned (or its promise settled) and the page has been quiet (no
    /// output, no progress of an instrumented future) for `--grace`; with
    /// `--until-exit`, when the program calls
    /// `wasmprof::exit(code)`. `--serve` serves the page for a browser of
    /// your own instead, with buttons that save the profile, or the
    /// profile of a window you start and stop.
    Run(RunArgs),
    /// Measure what instrumentation costs your program: plain vs. instrumented.
    ///
    /// Builds the package five ways (plain; the floor, one counter
    /// increment per function entry and nothing else; `--timer none`;
    /// `--timer host`; `--timer none` kept out of line for a hybrid
    /// profile; each instrumented one with the same crate-wide flags), runs
    /// each (the `--timer host` build without and with the engine's
    /// sampler, the hybrid build with it) once to warm up and check that
    /// all print the same, then N times in turn, the plain build twice a
    /// round, and prints the program's median time (entry call to end,
    /// without Node's start-up), its range, the `.wasm` sizes and the
    /// ratios to the plain build and to the floor: what counting at all
    /// costs, and what call paths and timing add to it. No profile is
    /// saved.
    ///
    /// The sampled `--timer host` row is what `cargo wasmprof run` does
    /// without flags; the line under the table gives its cost, and what its
    /// sampler and the frames kept for it add to the unsampled build,
    /// paired round by round.
    ///
    /// Each ratio comes with the interval of its median over the rounds
    /// (each build's time over plain's in the same round) and a verdict:
    /// `noise` where the interval holds 1.00 or meets the plain build's
    /// against itself (`plain again`, the machine's own noise), or where
    /// a build seems faster than plain; `slower` beyond that. While plain
    /// against itself varies by more than 5 %, more rounds run, up to
    /// --max-runs.
    ///
    /// A render loop never ends: with `--host browser --duration D`, each
    /// run records D, and the table compares the time of a display frame
    /// (the window over the frames the page drew in it, which the page
    /// counts itself in every build, plain included), with each build's
    /// frames per second below it.
    Bench(BenchArgs),
    /// Run the package's tests instrumented, as `cargo test` would, and save one profile of them.
    ///
    /// Cargo builds the tests for WebAssembly and runs each test binary
    /// through wasmprof as its target runner: tests with the standard
    /// harness build for wasm32-wasip1 and run under the WASI host (Node,
    /// or `--host wasmtime`); a package with `wasm-bindgen-test` among its
    /// dependencies builds for wasm32-unknown-unknown and its tests run in
    /// Node, or in headless Chromium when they are configured
    /// `run_in_browser` (or with `--host browser`). The harness prints what
    /// it always prints; TESTNAME and the arguments after `--` go to it
    /// (`--nocapture`, `--exact`, `--skip NAME`, `--ignored`, ...).
    ///
    /// Every `#[test]` and `#[wasm_bindgen_test]` function is instrumented
    /// as a test: its calls are under a node named after it, and the
    /// summary lists the slowest tests. Other functions are instrumented as
    /// for `run` (annotations, or the crate-wide flags). The exit status is
    /// `cargo test`'s; a failing test fails the command and the profile is
    /// still written, its open frames marked. `--per-test` also writes one
    /// profile per test.
    ///
    /// Benchmark targets run the same way with `--bench NAME` or
    /// `--benches`, in their harness's test mode (each benchmark once):
    /// what a benchmark calls, counted exactly. `cargo wasmprof bench` is
    /// something else: what the instrumentation costs your program.
    Test(TestArgs),
    /// The target runner `cargo wasmprof test` gives cargo (not for direct use).
    #[command(hide = true)]
    TestRunner(TestRunnerArgs),
    /// Print or write a saved profile.
    ///
    /// Reads the newest profile of this workspace unless `--input` is given;
    /// several `--input` files are merged.
    Report(ReportArgs),
}

pub(crate) use crate::build::options::HostKind;
pub(crate) use crate::hosts::options::HostOptions;

/// `--host node|browser|wasmtime`: clap's side of the engine's `HostKind`.
impl ValueEnum for HostKind {
    fn value_variants<'a>() -> &'a [Self] {
        &[HostKind::Node, HostKind::Browser, HostKind::Wasmtime]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            HostKind::Node => PossibleValue::new("node")
                .help("Node.js (wasm-bindgen's `nodejs` bindings; WASI binaries through node:wasi)"),
            HostKind::Browser => PossibleValue::new("browser").help(
                "Headless Chromium, driven through the DevTools protocol (wasm-bindgen's `web` bindings)",
            ),
            HostKind::Wasmtime => PossibleValue::new("wasmtime").help(
                "wasmtime, embedded: WASI programs (and plain modules with --invoke) without Node",
            ),
        })
    }
}

/// `--format`: clap's side of the library's report [`Format`], with its
/// names and descriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FormatArg(pub Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [FormatArg; Format::ALL.len()] = {
            let mut all = [FormatArg(Format::Gprof); Format::ALL.len()];
            let mut i = 0;
            while i < all.len() {
                all[i] = FormatArg(Format::ALL[i]);
                i += 1;
            }
            all
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.description()))
    }
}

pub(crate) use crate::build::options::Timer;
use crate::build::options::{BuildOptions, CargoOptions, CrateWideOptions};

/// `--timer host|none`: clap's side of the build's `Timer` (the floor is
/// `bench`'s own, never a flag).
impl ValueEnum for Timer {
    fn value_variants<'a>() -> &'a [Self] {
        &[Timer::Host, Timer::None]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        match self {
            Timer::Host => Some(
                PossibleValue::new("host")
                    .help("The host's clock around every call: counts and times"),
            ),
            Timer::None => Some(
                PossibleValue::new("none")
                    .help("No clock at all: exact counts only, the lowest overhead"),
            ),
            Timer::Floor => None,
        }
    }
}

/// `cargo wasmprof add`.
#[derive(Debug, Clone, Args)]
pub(crate) struct AddArgs {
    /// The package to add it to [default: the one around the current directory]
    #[arg(short, long, value_name = "NAME")]
    pub package: Option<String>,
    /// Path to the package's or the workspace's Cargo.toml
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// Print the line without writing it
    #[arg(long)]
    pub dry_run: bool,
}

/// Cargo's own flags, forwarded as given.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CargoArgs {
    /// Package to build (see `cargo help pkgid`)
    #[arg(short, long, value_name = "SPEC", help_heading = "Package Selection")]
    pub package: Vec<String>,
    /// Build all packages in the workspace
    #[arg(long, help_heading = "Package Selection")]
    pub workspace: bool,
    /// Exclude packages from the build (with --workspace)
    #[arg(long, value_name = "SPEC", help_heading = "Package Selection")]
    pub exclude: Vec<String>,
    /// Build only this binary
    #[arg(long, value_name = "NAME", help_heading = "Target Selection")]
    pub bin: Option<String>,
    /// Space or comma separated list of features to activate
    #[arg(
        short = 'F',
        long,
        value_name = "FEATURES",
        help_heading = "Feature Selection"
    )]
    pub features: Vec<String>,
    /// Activate all available features
    #[arg(long, help_heading = "Feature Selection")]
    pub all_features: bool,
    /// Do not activate the `default` feature
    #[arg(long, help_heading = "Feature Selection")]
    pub no_default_features: bool,
    /// Build artifacts in release mode, with optimizations
    #[arg(short, long, help_heading = "Compilation Options")]
    pub release: bool,
    /// Build artifacts with the specified profile
    #[arg(
        long,
        value_name = "PROFILE-NAME",
        help_heading = "Compilation Options",
        conflicts_with = "release"
    )]
    pub profile: Option<String>,
    /// WebAssembly target triple [default: wasm32-unknown-unknown for libraries, wasm32-wasip1 for binaries]
    #[arg(long, value_name = "TRIPLE", help_heading = "Compilation Options")]
    pub target: Option<String>,
    /// Directory for all generated artifacts (wasmprof uses its `wasmprof/` subdirectory)
    #[arg(long, value_name = "DIRECTORY", help_heading = "Compilation Options")]
    pub target_dir: Option<PathBuf>,
    /// Path to Cargo.toml
    #[arg(long, value_name = "PATH", help_heading = "Manifest Options")]
    pub manifest_path: Option<PathBuf>,
    /// Require Cargo.lock to be up to date
    #[arg(long, help_heading = "Manifest Options")]
    pub locked: bool,
    /// Run without accessing the network
    #[arg(long, help_heading = "Manifest Options")]
    pub offline: bool,
    /// Use verbose output (passed to cargo)
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Do not print cargo log messages
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct BuildArgs {
    #[command(flatten)]
    pub cargo: CargoArgs,
    /// What the guards measure
    #[arg(long, value_enum, default_value_t = Timer::Host)]
    pub timer: Timer,
    /// Where the module will run: wasm-bindgen's bindings are made for it
    ///
    /// Node by default; wasmtime for a `*-threads` target, the one host that
    /// starts a WASI program's threads, and for `wasm32-wasip2`, the one
    /// that runs a component.
    #[arg(long, value_enum)]
    pub host: Option<HostKind>,
    /// Build without instrumentation, to compare with a plain build side by side
    #[arg(
        long,
        conflicts_with_all = ["timer", "instrument_all", "instrument_crate", "min_size", "count_small", "no_count_small", "verify_counts", "oracle_only"]
    )]
    pub no_instrument: bool,
    /// The call tree's capacity in distinct call paths [default: 1048576, about 40 MiB of wasm memory at most]
    ///
    /// Past it, a call on a new path is still counted, exactly, against
    /// its function (under `<overflow>` in the reports), but its path is
    /// lost. The capacity is recorded in the profile.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(16..=67_108_864))]
    pub max_nodes: Option<u32>,
    /// Also record memory per call path: allocations, bytes, what is live at the end, the peak, each memory.grow
    ///
    /// The program's global allocator is wrapped in a recording one that
    /// charges every allocation, reallocation and free to the call path
    /// current at that moment, exactly, without calling out of the module.
    /// A program's own `#[global_allocator]` is wrapped in a copy of its
    /// crate; the source is not edited. Allocations in a count-only
    /// function are its caller's. Times include the recording's cost.
    #[arg(long, conflicts_with = "no_instrument")]
    pub memory: bool,
    #[command(flatten)]
    pub oracle: OracleArgs,
    #[command(flatten)]
    pub crate_wide: CrateWideArgs,
}

/// `--verify-counts`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct OracleArgs {
    /// Count every call a second, independent way in the same run, and fail if any count differs
    ///
    /// Each instrumented function also gets a counter of its own, one
    /// atomic add per call that shares nothing with the profiler (no call
    /// tree, no registration, no scan), read out beside the profile. After
    /// the run, each function's calls in the profile are held against it:
    /// the summary says how many functions agreed, and a difference, which
    /// would be a bug in wasmprof, names the function and both counts and
    /// ends the command with an error (the profile is still saved). Its
    /// code is kept apart from the ordinary build's.
    #[arg(long)]
    pub verify_counts: bool,
    /// Build the oracle's counters alone, in place of the profiler (for wasmprof's own tests)
    ///
    /// A plain program that reports one count per instrumented function:
    /// the independent count that every mode's profile of a deterministic
    /// program is held against.
    #[arg(long, hide = true, conflicts_with_all = ["verify_counts", "memory"])]
    pub oracle_only: bool,
}

impl OracleArgs {
    /// The flags as the build's option.
    pub(crate) fn option(&self) -> crate::build::options::Oracle {
        use crate::build::options::Oracle;
        match (self.verify_counts, self.oracle_only) {
            (_, true) => Oracle::Only,
            (true, false) => Oracle::Beside,
            (false, false) => Oracle::Off,
        }
    }
}

/// Which functions to instrument without annotations.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CrateWideArgs {
    /// Instrument the functions of the selected package(s), without annotations
    ///
    /// Free functions, methods, trait default methods, in every module. The
    /// sources are not touched: a copy under the target directory is
    /// rewritten and built. Small functions without a loop are counted
    /// only (`--min-size`); `async fn`s are instrumented in full (their
    /// futures' polls); `const fn`, extern blocks and functions written by
    /// macros are left out; `#[wasmprof::skip]` is honoured.
    #[arg(long, help_heading = "Crate-wide Instrumentation")]
    pub instrument_all: bool,
    /// Also instrument the functions of this dependency (repeatable; NAME or NAME@VERSION)
    ///
    /// Registry, git and path dependencies alike; its functions are named
    /// `its_crate::module::function`.
    #[arg(long, value_name = "NAME", help_heading = "Crate-wide Instrumentation")]
    pub instrument_crate: Vec<String>,
    /// Only count functions smaller than N syntax nodes that have no loop [default: 40; 0 = time all]
    ///
    /// Crate-wide instrumentation only. Size is the number of expressions
    /// and statements in the body as written. Timing a call and keeping its
    /// call path costs a few nanoseconds, more than an accessor like `fn
    /// get(&self) -> usize` itself: doing it for millions of such calls
    /// would multiply the run time and show nothing the caller's own time
    /// does not. So, like LLVM's XRay, a small function without a loop or
    /// recursion gets the count-only tier: an exact call count, for about a
    /// nanosecond, and no time of its own (its time is its caller's self
    /// time, but for what the engine's samples saw in its frame; reports
    /// mark it). `main` and exported functions are always fully
    /// instrumented.
    #[arg(long, value_name = "N", help_heading = "Crate-wide Instrumentation")]
    pub min_size: Option<usize>,
    /// Count the functions below --min-size (the default; manifest key `count-small`)
    #[arg(
        long,
        overrides_with = "no_count_small",
        help_heading = "Crate-wide Instrumentation"
    )]
    pub count_small: bool,
    /// Leave the functions below --min-size out entirely: not counted, not in the report
    ///
    /// The cheapest build that still shows the larger functions; their
    /// callers' arcs to the small ones are missing too.
    #[arg(
        long,
        overrides_with = "count_small",
        help_heading = "Crate-wide Instrumentation"
    )]
    pub no_count_small: bool,
    /// Keep counted functions out of line in sampled runs, so that a long call of one is its own
    ///
    /// A sampled run keeps every fully instrumented function out of line
    /// (but those that cannot run long: no loop, call, macro, overloaded
    /// operator or owned value to drop), so that the engine's samples see
    /// its frame. A counted function (the
    /// small ones of crate-wide instrumentation, and
    /// `#[wasmprof::instrument(count)]`) is left to the compiler, which
    /// inlines most: then a long call of one, say a sort of a large slice,
    /// is its caller's code and its caller's time. With this flag, each
    /// counted function that may run long keeps its frame, and the
    /// samples give such a call's time to it (marked "sampled"). The cost
    /// is that of every small call made a real one: `realworld` crate-wide
    /// went from 1.69× to 2.71× of the plain build's time. `run` and
    /// `bench` in wasmtime (WASI 0.1 modules) keep no frame at all: the
    /// build keeps its line tables instead, and the sampler finds every
    /// inlined call, of counted functions too, at the instruction each
    /// sample was at.
    #[arg(long, help_heading = "Crate-wide Instrumentation")]
    pub keep_counted_frames: bool,
    /// Leave these functions or modules out of crate-wide instrumentation (repeatable)
    ///
    /// A path as the reports print it, `*` matching any run of characters:
    /// `yew::functional::hooks` (a module and everything in it),
    /// `my_app::parser::Parser::next`, `*::tests::*`. A path that starts
    /// with an instrumented crate's name applies to that crate; one that
    /// does not, to every instrumented crate. Added to the crate's own
    /// `exclude` under `[package.metadata.wasmprof]`, so a dependency needs
    /// no vendoring; the "left out" line counts what it left out. (Cargo's
    /// own `--exclude` leaves packages out of a `--workspace` build.)
    #[arg(long, value_name = "PATH", help_heading = "Crate-wide Instrumentation")]
    pub exclude_path: Vec<String>,
    /// Instrument only these functions or modules crate-wide (repeatable; see --exclude-path)
    ///
    /// A crate that a given path applies to has only the functions it
    /// covers instrumented; the others are left out and counted on the
    /// "left out" line. Added to the crate's own `include` patterns.
    #[arg(long, value_name = "PATH", help_heading = "Crate-wide Instrumentation")]
    pub include_path: Vec<String>,
}

impl CargoArgs {
    /// The flags as plain options.
    pub(crate) fn options(&self) -> CargoOptions {
        CargoOptions {
            package: self.package.clone(),
            workspace: self.workspace,
            exclude: self.exclude.clone(),
            bin: self.bin.clone(),
            features: self.features.clone(),
            all_features: self.all_features,
            no_default_features: self.no_default_features,
            release: self.release,
            profile: self.profile.clone(),
            target: self.target.clone(),
            target_dir: self.target_dir.clone(),
            manifest_path: self.manifest_path.clone(),
            locked: self.locked,
            offline: self.offline,
            verbose: self.verbose,
            quiet: self.quiet,
        }
    }
}

impl BuildArgs {
    /// The flags as plain options.
    pub(crate) fn options(&self) -> BuildOptions {
        let cargo = self.cargo.options();
        let wasmtime_only = cargo
            .target
            .as_deref()
            .is_some_and(crate::build::options::is_wasmtime_target);
        BuildOptions {
            host: self.host.unwrap_or(if wasmtime_only {
                HostKind::Wasmtime
            } else {
                HostKind::Node
            }),
            cargo,
            timer: self.timer,
            no_instrument: self.no_instrument,
            max_nodes: self.max_nodes,
            memory: self.memory,
            crate_wide: self.crate_wide.options(),
            sampled: None,
            oracle: self.oracle.option(),
            without_threads: false,
        }
    }
}

impl CrateWideArgs {
    /// The flags as plain options.
    pub(crate) fn options(&self) -> CrateWideOptions {
        CrateWideOptions {
            instrument_all: self.instrument_all,
            instrument_crate: self.instrument_crate.clone(),
            min_size: self.min_size,
            count_small: self.count_small(),
            keep_counted_frames: self.keep_counted_frames,
            exclude_path: self.exclude_path.clone(),
            include_path: self.include_path.clone(),
        }
    }

    /// `--count-small`/`--no-count-small`, the last given winning; `None`
    /// leaves it to the manifest, then to the default (counted).
    fn count_small(&self) -> Option<bool> {
        match (self.count_small, self.no_count_small) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub host: HostArgs,
    /// How many functions the summary after the run lists
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Run the program N times after one build, each run's profile saved on its own
    ///
    /// The build and the host's checks happen once; each run then starts
    /// afresh (a new process or page) and leaves a profile of its own, with
    /// its summary, as if run alone. A run that fails ends the series: the
    /// command exits with its status. To add the runs up, give their
    /// profiles to `cargo wasmprof report --input`.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..),
        conflicts_with = "serve"
    )]
    pub runs: u32,
    /// Serve the page without launching a browser, for a browser of your own (implies --host browser)
    ///
    /// Prints the URL; the page has a "Save profile" button (or call
    /// `wasmprof.save()` in its console) that sends the profile back, and
    /// each one saved is named in the terminal. "Start recording", then
    /// "Stop and save" (`wasmprof.start()`, `wasmprof.stop()`), saves the
    /// profile of what ran in between alone: one interaction, a few
    /// seconds of a game. Ctrl-C ends it.
    #[arg(long, help_heading = "Browser")]
    pub serve: bool,
    /// With --serve: the address to listen on [default: 127.0.0.1]
    ///
    /// Anything other than a loopback address lets other machines on the
    /// network load the page; they still need the page's token to save.
    #[arg(
        long,
        value_name = "ADDR",
        requires = "serve",
        help_heading = "Browser"
    )]
    pub bind: Option<std::net::IpAddr>,
}

impl TestArgs {
    /// The plain options `test` takes.
    pub(crate) fn options(&self) -> crate::suites::TestOptions {
        crate::suites::TestOptions {
            build: BuildOptions {
                cargo: self.cargo.options(),
                timer: self.timer,
                host: self.host.unwrap_or_default(),
                max_nodes: self.max_nodes,
                memory: self.memory,
                crate_wide: self.crate_wide.options(),
                oracle: self.oracle.option(),
                ..BuildOptions::default()
            },
            host_kind: self.host,
            host: self.host_args.options(),
            lib: self.lib,
            bins: self.bins,
            test_targets: self.test_targets.clone(),
            tests: self.tests,
            bench_targets: self.bench_targets.clone(),
            benches: self.benches,
            no_fail_fast: self.no_fail_fast,
            testname: self.testname.clone(),
            per_test: self.per_test,
            top: self.top,
        }
    }
}

impl BenchArgs {
    /// The plain options `bench` takes.
    pub(crate) fn options(&self) -> crate::bench::BenchOptions {
        crate::bench::BenchOptions {
            build: BuildOptions {
                cargo: self.cargo.options(),
                host: self.host_kind,
                crate_wide: self.crate_wide.options(),
                ..BuildOptions::default()
            },
            host: self.host.options(),
            runs: self.runs,
            max_runs: self.max_runs,
            memory: self.memory,
        }
    }
}

impl RunArgs {
    /// The plain options `run` takes.
    pub(crate) fn options(&self) -> crate::run::options::RunOptions {
        crate::run::options::RunOptions {
            build: self.build.options(),
            host: self.host.options(),
            top: self.top,
            runs: self.runs,
            serve: self
                .serve
                .then_some(crate::run::options::ServeOptions { bind: self.bind }),
        }
    }
}

/// How the module is run: entry point, host, limits, arguments.
#[derive(Debug, Clone, Args)]
pub(crate) struct HostArgs {
    /// Call this exported function instead of the start function or `main`
    ///
    /// Arguments after `--` are passed to it as numbers.
    #[arg(long, value_name = "NAME")]
    pub invoke: Option<String>,
    /// Stop the program after this long (e.g. 30s, 2m, 500ms); `run` keeps the profile so far
    #[arg(long, value_name = "DURATION", value_parser = duration::parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// End only when the program calls `wasmprof::exit(code)`
    ///
    /// For programs that keep working after their entry point returns
    /// (timers, animation frames, promises). `--timeout` still bounds the
    /// run. In Node, a program that runs out of work without the call ends
    /// with an error, since nothing could make it any more.
    #[arg(long)]
    pub until_exit: bool,
    /// Also run the engine's own sampler, and save its `.cpuprofile` beside the profile [default with --timer host]
    ///
    /// Node's `--cpu-prof`, the DevTools protocol's Profiler in the
    /// browser, and in wasmtime a sample of the stack at every epoch tick
    /// (there, `run` and `bench` find the calls the compiler inlined in
    /// the module's line tables, which their sampled builds keep, so no
    /// function is kept out of line for them).
    /// With `--timer host` it runs unless `--no-sample` is given: its
    /// samples give the calls too short to time their time (one long call
    /// among many short ones included), marked as estimated. With
    /// `--timer none` it makes a hybrid profile: exact counts, sampled
    /// times. `cargo wasmprof report --input FILE.cpuprofile` reads the
    /// samples alone.
    #[arg(long)]
    pub sample: bool,
    /// Do not run the engine's sampler beside a timed build
    ///
    /// The calls too short to time then keep no time of their own: it
    /// stays in their callers' self time, and a long call among many short
    /// ones of the same path can go unseen. In exchange the build costs
    /// less: with no sampler to see their frames, the timed functions are
    /// not kept out of line, and the compiler inlines them as it would
    /// without wasmprof (on a program of many small calls, a timed run
    /// costs about a fifth less).
    #[arg(long, conflicts_with = "sample")]
    pub no_sample: bool,
    /// How often the sampler samples, with --sample (e.g. 100us, 1ms)
    /// [default: 100us]
    ///
    /// Without this flag, a program whose threads keep every core busy is
    /// sampled every millisecond instead (wasmtime's threads while they
    /// do; Chromium's web workers that start once the page's threads are
    /// as many as the cores): each sample is a timer's interrupt on one of
    /// those cores, and on a virtual machine it can cost tens of
    /// microseconds of the program's time. An interval given here is kept
    /// whatever the threads do.
    #[arg(long, value_name = "DURATION", value_parser = duration::parse_duration)]
    pub sample_interval: Option<std::time::Duration>,
    /// The Node.js executable [default: $WASMPROF_NODE, else `node` on PATH]
    #[arg(long, value_name = "PATH")]
    pub node: Option<PathBuf>,
    /// An extra flag for `node` (repeatable), e.g. `--node-arg=--liftoff`
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    pub node_arg: Vec<String>,
    /// A WASI program: preopen the directory HOST, seen by the program as GUEST (repeatable) [default GUEST: HOST as given]
    ///
    /// The current directory is preopened by default, as `.` and as its
    /// absolute path, so that `cargo wasmprof run -- input.txt` reads a file
    /// as `cargo run` would; `--no-default-dir` leaves it out.
    #[arg(long, value_name = "HOST[::GUEST]", help_heading = "WASI")]
    pub dir: Vec<String>,
    /// A WASI program: do not preopen the current directory
    #[arg(long, help_heading = "WASI")]
    pub no_default_dir: bool,
    /// A WASI program: give it the variable NAME, with VALUE or the value it has here (repeatable)
    ///
    /// A WASI program sees no environment variable but these.
    #[arg(long, value_name = "NAME[=VALUE]", help_heading = "WASI")]
    pub env: Vec<String>,
    /// The browser: chromium, chrome, edge, firefox, or an executable's path [default: $WASMPROF_BROWSER, else the first of Chromium, Chrome and Edge installed]
    ///
    /// Named, a browser is looked for where this OS installs it (on macOS
    /// in /Applications, on Windows under Program Files and the user's
    /// AppData, on Linux in /opt and /snap), then on PATH; the error says
    /// every place looked at. Chromium, Chrome and Edge are driven through
    /// the DevTools protocol, with the engine's sampler; Firefox (`firefox`
    /// or Debian's `firefox-esr`, 128 or newer) through WebDriver BiDi,
    /// which it speaks itself, with Firefox's own profiler started in its
    /// window for the samples: counts and times are as exact, but a script
    /// that hangs cannot be stopped (the profile is then the one pulled
    /// last, at most a second old).
    #[arg(long, value_name = "NAME|PATH", help_heading = "Browser")]
    pub browser: Option<PathBuf>,
    /// Show the browser's window instead of running it headless (needs a display)
    ///
    /// For a page you want to watch, and for WebGL in Firefox, which a
    /// headless Firefox on Linux does not give a page (its context fails
    /// with FEATURE_FAILURE_WEBGL_EXHAUSTED_DRIVERS). On a machine without
    /// a screen, run under a virtual one: `xvfb-run cargo wasmprof run
    /// --headed …`.
    #[arg(long, help_heading = "Browser")]
    pub headed: bool,
    /// An extra flag for the browser (repeatable), e.g. `--browser-arg=--js-flags=--liftoff-only`
    ///
    /// A `--js-flags=…` replaces wasmprof's own, `--js-flags=--no-liftoff
    /// --no-wasm-lazy-compilation --no-wasm-inlining` (optimised wasm
    /// compiled up front, and no wasm function inlined into another, as in
    /// Node: equal work is timed alike, and the samples see every frame).
    #[arg(
        long,
        value_name = "FLAG",
        allow_hyphen_values = true,
        help_heading = "Browser"
    )]
    pub browser_arg: Vec<String>,
    /// Serve your own page: a directory with index.html (trunk's dist/, wasm-pack's www/) or an HTML file
    ///
    /// The host API is injected before the page's scripts, and requests for
    /// the crate's wasm-bindgen files (`NAME.js`, `NAME_bg.wasm`, trunk's
    /// `NAME-HASH.js` and `NAME-HASH_bg.wasm`) get the instrumented build.
    /// The page must load the module as wasm-bindgen's `web` target does.
    #[arg(long, value_name = "DIR_OR_HTML", help_heading = "Browser")]
    pub page: Option<PathBuf>,
    /// How long the page must be quiet (no console output, no error, no poll of a pending instrumented future) after the entry point settles
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "500ms",
        value_parser = duration::parse_duration,
        help_heading = "Browser"
    )]
    pub grace: std::time::Duration,
    /// Record this long, then end the run with exit status 0 and a complete profile of that window (e.g. 10s)
    ///
    /// For programs that never end: a render loop (egui, Bevy, a canvas
    /// animation), a page that polls. The window starts when the page
    /// starts loading, or `--after` later. The profile holds exactly what
    /// ran in the window, and says which part of the run it covers. A
    /// program that ends sooner ends the run, which says so.
    #[arg(long, value_name = "DURATION", value_parser = duration::parse_duration, help_heading = "Browser")]
    pub duration: Option<std::time::Duration>,
    /// Leave the run's first DURATION (start-up) out of the profile (e.g. 2s)
    ///
    /// The profile then holds what ran from this point on, to the end of
    /// the run or of `--duration`. The window opens between two of the
    /// page's tasks, when no call is running, so no call is cut in two.
    #[arg(long, value_name = "DURATION", value_parser = duration::parse_duration, help_heading = "Browser")]
    pub after: Option<std::time::Duration>,
    /// An HTTP handler: how many requests to serve, one after another [default: 1]
    ///
    /// A component that exports `wasi:http/incoming-handler` (built for
    /// wasm32-wasip2) is served by the embedded wasmtime as `wasmtime
    /// serve` serves it, with a new instance per request. The profile holds
    /// every request's calls, and each request's latency.
    #[arg(long, value_name = "N", help_heading = "HTTP handlers")]
    pub requests: Option<u32>,
    /// An HTTP handler: the path and query of each request, a GET [default: /]
    #[arg(long, value_name = "PATH", help_heading = "HTTP handlers")]
    pub path: Option<String>,
    /// Arguments for the program (`main`'s argv, or --invoke's arguments)
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

impl HostArgs {
    /// The engine's plain options, as these flags give them.
    pub(crate) fn options(&self) -> HostOptions {
        HostOptions {
            invoke: self.invoke.clone(),
            timeout: self.timeout,
            until_exit: self.until_exit,
            sample: self.sample,
            no_sample: self.no_sample,
            sample_interval: self.sample_interval,
            node: self.node.clone(),
            node_arg: self.node_arg.clone(),
            dir: self.dir.clone(),
            no_default_dir: self.no_default_dir,
            env: self.env.clone(),
            browser: self.browser.clone(),
            browser_arg: self.browser_arg.clone(),
            headed: self.headed,
            page: self.page.clone(),
            grace: self.grace,
            duration: self.duration,
            after: self.after,
            requests: self.requests,
            path: self.path.clone(),
            args: self.args.clone(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    pub cargo: CargoArgs,
    /// Where the builds run
    #[arg(long = "host", value_enum, default_value_t = HostKind::Node)]
    pub host_kind: HostKind,
    #[command(flatten)]
    pub crate_wide: CrateWideArgs,
    #[command(flatten)]
    pub host: HostArgs,
    /// How many times each build runs (after one warm-up run each)
    #[arg(
        short = 'n',
        long,
        value_name = "N",
        default_value_t = 5,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub runs: u32,
    /// The most rounds to run while the noise is wide [default: 3 × N]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_runs: Option<u32>,
    /// Add rows that record memory per call path (`run --memory`), each compared with the same build without it
    #[arg(long)]
    pub memory: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ReportArgs {
    /// Profile file(s) to read; several of one kind are merged [default: the newest profile of this workspace]
    ///
    /// A wasmprof profile, a Chrome DevTools or Node `.cpuprofile` (or the
    /// DevTools protocol's `Profiler.stop` result), a JS Self-Profiling API
    /// trace, a Firefox profile (as about:profiling saves it, Gecko's own
    /// format), a profile in the Firefox Profiler's format (its
    /// "Download", `wasmtime run --profile=guest`, samply), or the
    /// snapshot a WASI 0.2 component writes to `$WASMPROF_SNAPSHOT` under
    /// another host, told apart by their content, gzip-compressed or not.
    /// The engines' profiles give sampled times and no call counts; Rust
    /// names are demangled.
    #[arg(short, long, value_name = "FILE")]
    pub input: Vec<PathBuf>,
    /// Leave the engine's idle time (`(idle)`, samples without a stack) out of a sampling profile
    #[arg(long)]
    pub hide_idle: bool,
    /// The `.wasm` a sampling profile ran, to name its `wasm-function[N]` frames from the name section
    ///
    /// Without it, a frame whose script is a `file://` URL is named from
    /// that file when it can be read.
    #[arg(long, value_name = "FILE.wasm")]
    pub module: Option<PathBuf>,
    /// Output format
    #[arg(short, long, value_enum, default_value = "gprof")]
    pub format: FormatArg,
    /// Write to this file instead of standard output (required for pprof on a terminal)
    ///
    /// A regular file is replaced whole, or left as it was if the report
    /// fails. A device, a FIFO or `/dev/stdout` (Windows' `NUL` too) is
    /// written in place, as the shell's `>` would; `-` is standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --format firefox: serve the file on 127.0.0.1 and print the link that opens it in the Firefox Profiler
    ///
    /// The Firefox Profiler (profiler.firefox.com) opens a profile from a
    /// URL; the file is served there until Ctrl-C, only to the profiler's
    /// origin and under a path nobody else knows. Without -o the file goes
    /// beside the profile read (`NAME.firefox.json`).
    #[arg(long)]
    pub open: bool,
    /// One thread of a threaded program alone, by its name or number (the run's summary lists them)
    ///
    /// By default every report merges the threads' calls, as gprof and
    /// pprof do; with this, the same paths hold only that thread's calls
    /// and time.
    #[arg(long, value_name = "NAME")]
    pub thread: Option<String>,
    /// Say at length what the marks and notes of this profile mean, and which functions they concern, instead of the report
    ///
    /// The reports on a terminal keep to one line of legend for the marks
    /// in their tables (`(sampled)`, `(partly timed)`, `(counted)`) and for
    /// the run's mode. This prints, for the profile read, how each kind of
    /// figure was obtained, what it leaves out and the functions it
    /// concerns. The HTML and pprof reports hold the same text.
    #[arg(long, conflicts_with_all = ["diff", "format"])]
    pub explain: bool,
    /// Flame graph: callers above their callees (top-down)
    #[arg(long)]
    pub icicle: bool,
    /// Flame graph and folded stacks: widths by memory (a profile of `run --memory`) instead of time
    #[arg(long, value_enum, value_name = "WEIGHT")]
    pub weight: Option<Weight>,
    /// Compare with this profile (repeatable: several are merged), as the base
    ///
    /// With the gprof format (the default): per function, the change in
    /// exact calls and in self and inclusive time, ranked by how much
    /// changed, new and vanished functions marked. With `--format
    /// flamegraph`: the graph of this profile coloured by change (red
    /// slower, blue faster, purple new). With `--format pprof -o NEW.pb.gz`:
    /// the base is written beside it as NEW.base.pb.gz, for `go tool pprof
    /// -diff_base NEW.base.pb.gz NEW.pb.gz`.
    #[arg(long, value_name = "FILE", help_heading = "Comparing")]
    pub diff: Vec<PathBuf>,
    /// With --diff: exit with status 1 when the total (or each --function) got slower by more than PCT percent
    ///
    /// For CI: compare merged runs of the same program (several --input
    /// and --diff files), since one run's time varies by a few percent.
    #[arg(
        long,
        value_name = "PCT",
        requires = "diff",
        help_heading = "Comparing"
    )]
    pub fail_if_slower: Option<f64>,
    /// With --diff: exit with status 1 when the bytes allocated, the peak or what is live at the end grew by more than PCT percent
    ///
    /// For profiles recorded with `--memory`. Memory figures are exact, so
    /// one run of each is enough when the program is deterministic.
    #[arg(
        long,
        value_name = "PCT",
        requires = "diff",
        help_heading = "Comparing"
    )]
    pub fail_if_more_memory: Option<f64>,
    /// With --fail-if-slower: check this function's inclusive time instead of the total (repeatable)
    #[arg(
        long,
        value_name = "NAME",
        requires = "fail_if_slower",
        help_heading = "Comparing"
    )]
    pub function: Vec<String>,
    /// Path to Cargo.toml, to find the workspace's profiles
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// The target directory the profiles were written under
    #[arg(long, value_name = "DIRECTORY")]
    pub target_dir: Option<PathBuf>,
}

/// `run`'s host flags that mean nothing to a test binary are hidden here
/// (and refused if given); the arguments after `--` go to the harness.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("invoke", |a| a.hide(true)),
    mut_arg("until_exit", |a| a.hide(true)),
    mut_arg("sample", |a| a.hide(true)),
    mut_arg("page", |a| a.hide(true)),
    mut_arg("duration", |a| a.hide(true)),
    mut_arg("after", |a| a.hide(true)),
    mut_arg("args", |a| a
        .value_name("HARNESS ARGS")
        .help("Arguments for the test harness: --nocapture, --exact, --skip NAME, --ignored, --include-ignored, --list")
        .long_help(None::<&str>)),
    mut_arg("timeout", |a| a.help("Stop each test binary after this long (e.g. 30s, 2m); its profile is kept")),
    mut_arg("dir", |a| a.long_help(
        "A WASI test: preopen the directory HOST, seen by the tests as GUEST (repeatable) \
         [default GUEST: HOST as given]\n\n\
         A test runs in its package's directory, preopened as `.` and as its absolute path, \
         as under `cargo test`; `--no-default-dir` leaves it out."
    )),
    mut_arg("no_default_dir", |a| a.help("A WASI test: do not preopen the package's directory")),
    mut_arg("target", |a| a.help(
        "wasm32-wasip1, wasm32-wasip1-threads or wasm32-wasip2 (the standard harness; the \
         last two run in wasmtime) or wasm32-unknown-unknown (wasm-bindgen-test) \
         [default: wasm32-unknown-unknown if the package uses wasm-bindgen-test, else \
         wasm32-wasip1]"
    )),
)]
pub(crate) struct TestArgs {
    #[command(flatten)]
    pub cargo: CargoArgs,
    /// Test only this package's library
    #[arg(long, help_heading = "Target Selection")]
    pub lib: bool,
    /// Test all binaries
    #[arg(long, help_heading = "Target Selection")]
    pub bins: bool,
    /// Test only this integration test (repeatable)
    #[arg(long = "test", value_name = "NAME", help_heading = "Target Selection")]
    pub test_targets: Vec<String>,
    /// Test all integration tests
    #[arg(long, help_heading = "Target Selection")]
    pub tests: bool,
    /// Run this benchmark target in its harness's test mode (repeatable)
    #[arg(long = "bench", value_name = "NAME", help_heading = "Target Selection")]
    pub bench_targets: Vec<String>,
    /// Run all benchmark targets in their harness's test mode
    #[arg(long, help_heading = "Target Selection")]
    pub benches: bool,
    /// Run all test binaries even when one fails
    #[arg(long)]
    pub no_fail_fast: bool,
    /// What the guards measure
    #[arg(long, value_enum, default_value_t = Timer::Host)]
    pub timer: Timer,
    /// The call tree's capacity in distinct call paths (see `cargo wasmprof build --help`)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(16..=67_108_864))]
    pub max_nodes: Option<u32>,
    /// Also record memory per call path, so per test: what each allocated, and what it left live
    #[arg(long)]
    pub memory: bool,
    /// Where the tests run [default: node; wasmtime for wasm32-wasip1-threads and wasm32-wasip2; browser for wasm-bindgen tests configured `run_in_browser`]
    ///
    /// node and wasmtime run WASI test binaries (wasm32-wasip1), and only
    /// wasmtime those with threads or built as components; node and
    /// browser run wasm-bindgen tests (wasm32-unknown-unknown). Given, it
    /// applies to every test binary, `run_in_browser` ones included.
    #[arg(long, value_enum)]
    pub host: Option<HostKind>,
    #[command(flatten)]
    pub oracle: OracleArgs,
    #[command(flatten)]
    pub crate_wide: CrateWideArgs,
    /// Run only the tests whose name contains TESTNAME (the harness's filter)
    #[arg(value_name = "TESTNAME")]
    pub testname: Option<String>,
    #[command(flatten)]
    pub host_args: HostArgs,
    /// Also write one profile per test, named after the test
    #[arg(long)]
    pub per_test: bool,
    /// How many of the slowest tests the summary lists
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct TestRunnerArgs {
    /// The test binary and the harness's arguments, as cargo gives them
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<std::ffi::OsString>,
}

#[cfg(test)]
mod help_tests;

/// `report --weight`: what a flame graph's widths are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Weight {
    /// Bytes allocated on each path
    AllocBytes,
    /// Blocks allocated on each path
    Allocs,
    /// Bytes each path allocated that were still live at the end (leaks)
    LiveBytes,
    /// Bytes each path held when the program's live bytes peaked
    PeakBytes,
}

impl ReportArgs {
    /// The plain options `report` takes.
    pub(crate) fn options(&self) -> crate::report::ReportOptions {
        crate::report::ReportOptions {
            input: self.input.clone(),
            hide_idle: self.hide_idle,
            module: self.module.clone(),
            format: self.format.0,
            output: self.output.clone(),
            open: self.open,
            thread: self.thread.clone(),
            explain: self.explain,
            icicle: self.icicle,
            weight: self.weight.map(Weight::memory),
            diff: self.diff.clone(),
            fail_if_slower: self.fail_if_slower,
            fail_if_more_memory: self.fail_if_more_memory,
            function: self.function.clone(),
            manifest_path: self.manifest_path.clone(),
            target_dir: self.target_dir.clone(),
        }
    }
}

impl Weight {
    pub(crate) fn memory(self) -> wasmprof_profile::profile::MemoryWeight {
        use wasmprof_profile::profile::MemoryWeight;
        match self {
            Weight::AllocBytes => MemoryWeight::AllocBytes,
            Weight::Allocs => MemoryWeight::Allocs,
            Weight::LiveBytes => MemoryWeight::LiveBytes,
            Weight::PeakBytes => MemoryWeight::PeakBytes,
        }
    }
}
