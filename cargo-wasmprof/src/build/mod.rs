//! `cargo wasmprof build`: from a cargo package to an instrumented module a
//! host can run.

pub(crate) mod allocator;
pub(crate) mod bindgen;
mod build_dirs;
mod cargo;
pub(crate) mod dir_walk;
pub(crate) mod failure;
pub(crate) mod kind;
pub(crate) mod options;
pub(crate) mod rustc_wrapper;
mod toolchain;
mod user_rustflags;
pub(crate) mod web_threads;

pub(crate) use cargo::{Instrumentation, profile_name, set_instrumentation_env, set_max_nodes_env};
pub(crate) use toolchain::ensure_target;

pub(crate) mod workspace;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::build::options::{BuildOptions, Oracle, Timer};
use crate::dir_lock::DirLock;
use crate::rewrite::plan::{self, Settings, ShadowBuild};
use crate::terminal;
pub(crate) use workspace::{ModuleKind, Unit, Workspace};

/// A module ready to run.
#[derive(Debug, Clone)]
pub(crate) struct BuiltModule {
    pub unit: Unit,
    /// The `.wasm` the host loads (after wasm-bindgen, for bindgen units).
    pub wasm: PathBuf,
    /// The JS wasm-bindgen generated, for bindgen units.
    pub js: Option<PathBuf>,
    /// How it was instrumented; `None` when it was not.
    pub instrument: Option<Instrument>,
    /// Crate-wide instrumentation did not fully instrument the functions
    /// smaller than this; `None` when size made no difference.
    pub small: Option<SmallFunctions>,
}

/// What crate-wide instrumentation did with functions below `--min-size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SmallFunctions {
    pub min_size: usize,
    /// Counted only (`--count-small`, the default), else left out.
    pub counted: bool,
}

/// How a build is instrumented, as the runtime's build script is told
/// (`WASMPROF_INSTRUMENT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Instrument {
    /// Every call counted and timed by the host clock (`--timer host`).
    Timed,
    /// Every call counted, no clock (`--timer none`).
    CountOnly,
    /// One counter per function and nothing else: `bench`'s floor.
    Floor,
}

impl Instrument {
    /// The word for `WASMPROF_INSTRUMENT`, and the build directory's name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Instrument::Timed => "host",
            Instrument::CountOnly => "none",
            Instrument::Floor => "floor",
        }
    }
}

/// The instrumentation mode these flags ask for.
pub(crate) fn instrument_mode(args: &BuildOptions) -> Option<Instrument> {
    if args.no_instrument {
        return None;
    }
    if args.oracle == Oracle::Only {
        return Some(Instrument::Floor);
    }
    Some(match args.timer {
        Timer::Host => Instrument::Timed,
        Timer::None => Instrument::CountOnly,
        Timer::Floor => Instrument::Floor,
    })
}

/// Which instrumented functions a build keeps out of line
/// (`#[inline(never)]`), so that the engine's sampler sees a frame for each
/// of their calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeptFrames {
    /// None: the compiler inlines what it likes.
    None,
    /// Every fully instrumented function: builds timed by the host clock,
    /// whose runs are sampled to give calls too short to time their time,
    /// and hybrid builds.
    Full,
    /// Counted functions that call anything too (`--keep-counted-frames`).
    WithCounted,
    /// None, in a sampled build for wasmtime: its sampler knows the
    /// instruction each frame was at, and the module's line tables (DWARF,
    /// which such a build keeps) say which inlined calls it was inside, so
    /// the compiler inlines what it likes and no call loses its frame.
    InLineTables,
}

impl KeptFrames {
    /// `WASMPROF_KEEP_FRAMES`, which the attribute reads.
    pub(crate) fn env_value(self) -> Option<&'static str> {
        match self {
            KeptFrames::None | KeptFrames::InLineTables => None,
            KeptFrames::Full => Some("1"),
            KeptFrames::WithCounted => Some("all"),
        }
    }
}

/// The frames a build with these flags keeps.
pub(crate) fn kept_frames(args: &BuildOptions) -> KeptFrames {
    frames_kept(args, false)
}

/// The frames a test suite's build keeps (`cargo wasmprof test`): in
/// wasmtime too, as in Node, so that one build of a suite serves either
/// host.
pub(crate) fn kept_frames_in_tests(args: &BuildOptions) -> KeptFrames {
    frames_kept(args, true)
}

fn frames_kept(args: &BuildOptions, tests: bool) -> KeptFrames {
    let sampled = match instrument_mode(args) {
        Some(Instrument::Timed) => args.sampled.unwrap_or(true),
        Some(Instrument::CountOnly) => args.sampled.unwrap_or(false),
        _ => false,
    };
    let in_line_tables = !tests
        && args.host == options::HostKind::Wasmtime
        && !args
            .cargo
            .target
            .as_deref()
            .is_some_and(options::is_component_target);
    match (sampled, in_line_tables, args.crate_wide.keep_counted_frames) {
        (false, _, _) => KeptFrames::None,
        (true, true, _) => KeptFrames::InLineTables,
        (true, false, false) => KeptFrames::Full,
        (true, false, true) => KeptFrames::WithCounted,
    }
}

/// Where wasmprof keeps everything under the target directory.
pub(crate) fn wasmprof_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("wasmprof")
}

/// Marks wasmprof's directory as a cache, as cargo marks its target
/// directories: backup tools pass it over, and so does a crate-wide copy of
/// a workspace that holds it (its target directory set elsewhere, with an
/// old `target/` left in the workspace), which would otherwise copy the
/// copies made before.
fn mark_as_cache(dir: &Path) -> Result<()> {
    let tag = dir.join("CACHEDIR.TAG");
    if tag.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)
        .and_then(|()| {
            std::fs::write(
                &tag,
                "Signature: 8a477f597d28d172789f06886806bc55\n\
                 # This file is a cache directory tag created by cargo-wasmprof.\n\
                 # For information about cache directory tags see https://bford.info/cachedir/\n",
            )
        })
        .with_context(|| format!("could not write {}", tag.display()))
}

/// The sources cargo builds and where: the user's, or a shadow copy
/// rewritten for crate-wide instrumentation (or for `cargo wasmprof test`).
pub(crate) struct Prepared {
    pub shadow: Option<ShadowBuild>,
    /// The target directory cargo builds into: the kind's own, its tools
    /// shared with every other kind's ([`build_dirs`]).
    pub build_dir: PathBuf,
    /// What the runtime's build script is told of the kind: none for a
    /// plain build.
    pub kind: Option<kind::BuildKind>,
    /// Where the modules taken from cargo go, one directory per kind of
    /// build (and per shadow copy): the next build overwrites cargo's.
    pub output_dir: PathBuf,
    /// rustc flags to add to the user's.
    pub extra_rustflags: Vec<String>,
    /// What crate-wide instrumentation did with small functions.
    pub small: Option<SmallFunctions>,
    /// `--memory`: the allocator recorded.
    pub memory: Option<allocator::RecordedAllocator>,
    /// Built for web workers (`web_threads.rs`): nightly, the standard
    /// library rebuilt with atomics, a shared memory.
    pub web_threads: bool,
}

impl Prepared {
    /// The manifest cargo builds instead of the unit's own.
    pub(crate) fn manifest_for(&self, original: &Path) -> PathBuf {
        match &self.shadow {
            Some(shadow) => shadow.manifest_for(original),
            None => original.to_path_buf(),
        }
    }
}

/// A failed build of crates rewritten crate-wide says so, with the
/// functions its errors are in (see [`failure`]).
fn blame_the_rewrite(error: anyhow::Error, shadow: &Option<ShadowBuild>) -> anyhow::Error {
    let (Some(shadow), Some(failed)) = (shadow, error.downcast_ref::<failure::BuildFailed>())
    else {
        return error;
    };
    let rewritten: Vec<String> = shadow.crates.iter().map(|(name, _)| name.clone()).collect();
    match failure::explain(failed, &rewritten, &shadow.functions) {
        Some(explanation) => anyhow::anyhow!("{error}\n{explanation}"),
        None => error,
    }
}

/// Rewrites what the flags ask for (and, with `tests`, the selected
/// packages' tests) and says where cargo is to build.
pub(crate) fn prepare(
    args: &BuildOptions,
    workspace: &Workspace,
    packages: &[&cargo_metadata::Package],
    tests: bool,
) -> Result<Prepared> {
    let instrument = instrument_mode(args);
    let target_dir = workspace.target_dir(&args.cargo);
    // The kind of build, which names its directory. Functions kept out of
    // line are other code.
    let frames = frames_kept(args, tests);
    let mode = match (instrument, frames) {
        (Some(Instrument::CountOnly), KeptFrames::Full) => "none-frames".to_owned(),
        (Some(Instrument::Timed), KeptFrames::None) => "host-inlined".to_owned(),
        (Some(mode), KeptFrames::InLineTables) => format!("{}-line-tables", mode.as_str()),
        (Some(mode), KeptFrames::WithCounted) => format!("{}-all-frames", mode.as_str()),
        (mode, _) => mode.map_or("plain", Instrument::as_str).to_owned(),
    };
    // `--memory`, or `memory = true` in a selected package's manifest.
    let memory_asked = args.memory
        || packages.iter().any(|package| {
            crate::rewrite::plan::manifest_config(package).is_ok_and(|c| c.memory == Some(true))
        });
    let memory_asked =
        memory_asked && matches!(instrument, Some(Instrument::Timed | Instrument::CountOnly));
    // The runtime (and a rewrite) differs with an allocator in it.
    let mode = if memory_asked {
        format!("{mode}-memory")
    } else {
        mode
    };
    // So does a build with the oracle's counters in it.
    let mode = match (instrument, args.oracle) {
        (Some(_), Oracle::Beside) => format!("{mode}-verified"),
        (Some(_), Oracle::Only) => "oracle".to_owned(),
        _ => mode,
    };
    // A program with a thread pool on web workers is built for threads,
    // by another toolchain: a kind of its own.
    let web_threads = !tests
        && !args.without_threads
        && args.host == options::HostKind::Browser
        && args
            .cargo
            .target
            .as_deref()
            .is_none_or(|t| t == "wasm32-unknown-unknown")
        && (web_threads::wanted(&workspace.metadata, packages) || web_threads::configured()?);
    let mode = if web_threads {
        format!("{mode}-web-threads")
    } else {
        mode
    };
    let wasmprof = wasmprof_dir(&target_dir);
    mark_as_cache(&wasmprof)?;
    let mode_dir = wasmprof.join(&mode);
    let allocators = if memory_asked {
        allocator::Declarations::find(&workspace.metadata, packages)
    } else {
        allocator::Declarations::default()
    };
    let shadow = match instrument {
        Some(_) => crate_wide(
            args,
            workspace,
            packages,
            &target_dir,
            &mode_dir,
            tests,
            memory_asked.then_some(&allocators),
        )?,
        None => None,
    };
    // Which allocator is recorded: std's, or the program's own, wrapped by
    // the program or, in a crate rewritten crate-wide, by the rewrite.
    let memory = if memory_asked {
        let wrapped: Vec<&str> = shadow
            .iter()
            .flat_map(|s| &s.crates)
            .filter(|(_, stats)| stats.wrapped_allocators > 0)
            .map(|(name, _)| name.as_str())
            .collect();
        Some(allocators.choose(&wrapped)?)
    } else {
        None
    };
    // The remapping matters only to a shadow copy's dependency copies, but
    // every build gives it, plain ones included, so that all of them reach
    // rustc the one way (through `rustc_wrapper`, which cargo does not
    // hash): a plain build after an instrumented one otherwise compiles
    // the whole dependency tree again.
    let mut extra_rustflags = crate::rewrite::shadow::remap_flags();
    if web_threads {
        extra_rustflags.extend(web_threads::rustflags());
    }
    // A shadow copy's rewritten crates have the same paths in every copy:
    // its settings are part of the kind.
    let kind =
        instrument.map(|_| kind::BuildKind::new(&mode, shadow.as_ref().map(|s| s.key.as_str())));
    let build_dir = build_dirs::build_dir(&wasmprof, kind.as_ref());
    build_dirs::share_tools(&build_dir, &profile_name(&args.cargo))?;
    // The floor (and the oracle alone) counts every function alike,
    // whatever its size.
    let small = shadow
        .as_ref()
        .filter(|s| s.min_size > 0 && instrument != Some(Instrument::Floor))
        .map(|s| SmallFunctions {
            min_size: s.min_size,
            counted: s.count_small,
        });
    let output_dir = match &shadow {
        Some(shadow) => shadow.shadow.root.clone(),
        None => mode_dir,
    };
    Ok(Prepared {
        shadow,
        build_dir,
        kind,
        output_dir,
        extra_rustflags,
        small,
        memory,
        web_threads,
    })
}

/// Builds every selected unit.
pub(crate) fn build(args: &BuildOptions, workspace: &Workspace) -> Result<Vec<BuiltModule>> {
    let units = workspace.units(&args.cargo)?;
    let instrument = instrument_mode(args);
    let root = workspace.metadata.workspace_root.as_std_path();
    let packages: Vec<&cargo_metadata::Package> = units
        .iter()
        .filter_map(|unit| {
            workspace
                .metadata
                .packages
                .iter()
                .find(|p| p.manifest_path.as_std_path() == unit.manifest_path)
        })
        .collect();
    let prepared = prepare(args, workspace, &packages, false)?;
    let Prepared {
        shadow,
        build_dir,
        kind,
        output_dir,
        extra_rustflags,
        small,
        memory,
        web_threads,
    } = &prepared;
    let (build_dir, extra_rustflags, small) = (build_dir.clone(), extra_rustflags, *small);
    units
        .into_iter()
        .map(|unit| {
            let target = args
                .cargo
                .target
                .clone()
                .unwrap_or_else(|| unit.kind.default_target().to_owned());
            if !target.starts_with("wasm32") && !target.starts_with("wasm64") {
                bail!("--target {target} is not a WebAssembly target");
            }
            toolchain::ensure_target(&target, root, args.cargo.offline)?;
            terminal::status(
                "Building",
                &format!(
                    "{} for {target} ({})",
                    unit.package,
                    match (instrument, args.oracle) {
                        (Some(Instrument::Floor), Oracle::Only) =>
                            "the oracle's counters alone: a count per function",
                        (Some(Instrument::Floor), _) =>
                            "a counter per function, no profile: bench's floor",
                        (Some(Instrument::Timed), Oracle::Beside) =>
                            "instrumented, timer host, every count verified",
                        (Some(Instrument::Timed), _) => "instrumented, timer host",
                        (Some(_), Oracle::Beside) =>
                            "instrumented, timer none: counts only, every one verified",
                        (Some(_), _) => "instrumented, timer none: counts only",
                        (None, _) => "not instrumented",
                    }
                ),
            );
            let manifest_path = prepared.manifest_for(&unit.manifest_path);
            // Until the module is out of cargo's hands.
            let _lock = DirLock::acquire(&build_dir)?;
            let build = cargo::CargoBuild {
                cargo: &args.cargo,
                unit: &unit,
                target: &target,
                target_dir: &build_dir,
                instrument,
                frames: kept_frames(args),
                memory: *memory,
                oracle: instrument.is_some() && args.oracle != Oracle::Off,
                manifest_path: &manifest_path,
                extra_rustflags,
                kind: kind.as_ref(),
                max_nodes: args.max_nodes,
                lock_respected: shadow.is_none(),
                web_threads: *web_threads,
                workspace_root: root,
            };
            let wasm = build
                .run()
                .map_err(|error| blame_the_rewrite(error, shadow))?;
            let profile = build.profile_name();
            let bindgen_target = args.host.bindgen_target();
            let module = finish_module(
                unit,
                wasm,
                &output_dir.join(&target).join(&profile),
                bindgen_target,
                args.cargo.offline,
            )?;
            check_module(&module)?;
            terminal::status("Finished", &format!("{}", module.wasm.display()));
            Ok(BuiltModule {
                instrument,
                small,
                ..module
            })
        })
        .collect()
}

/// Rewrites the crates instrumented crate-wide (`--instrument-all`,
/// `--instrument-crate`, `instrument = "all"` in a manifest) into a shadow
/// copy, if there are any.
fn crate_wide(
    args: &BuildOptions,
    workspace: &Workspace,
    selected: &[&cargo_metadata::Package],
    target_dir: &Path,
    mode_dir: &Path,
    tests: bool,
    memory: Option<&allocator::Declarations>,
) -> Result<Option<ShadowBuild>> {
    let settings = Settings {
        instrument_all: args.crate_wide.instrument_all,
        crates: args.crate_wide.instrument_crate.clone(),
        min_size: args.crate_wide.min_size,
        count_small: args.crate_wide.count_small,
        include: args.crate_wide.include_path.clone(),
        exclude: args.crate_wide.exclude_path.clone(),
        tests,
        memory: memory.is_some(),
        allocators: memory
            .map(allocator::Declarations::unwrapped)
            .unwrap_or_default(),
    };
    // Absolute: the copy's paths are mapped back by prefix, and a relative
    // `--target-dir` must not be copied into itself.
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .with_context(|| format!("cannot make {} absolute", path.display()))
    };
    let mut target_dirs = vec![
        absolute(target_dir)?,
        workspace
            .metadata
            .target_directory
            .clone()
            .into_std_path_buf(),
    ];
    target_dirs.dedup();
    let prepared = plan::prepare(
        &settings,
        &workspace.metadata,
        selected,
        &target_dirs,
        &absolute(mode_dir)?,
    )?;
    for message in &prepared.messages {
        message.print();
    }
    Ok(prepared.build)
}

/// Takes the module out of cargo's build directory into `out_dir`: through
/// wasm-bindgen for bindgen units, copied as it is for others.
fn finish_module(
    unit: Unit,
    wasm: PathBuf,
    out_dir: &Path,
    bindgen_target: &str,
    offline: bool,
) -> Result<BuiltModule> {
    if unit.kind != ModuleKind::Bindgen {
        let name = wasm
            .file_name()
            .context("cargo named a module without a file name")?;
        std::fs::create_dir_all(out_dir)
            .with_context(|| format!("could not create {}", out_dir.display()))?;
        let copy = out_dir.join(name);
        std::fs::copy(&wasm, &copy)
            .with_context(|| format!("could not copy {} to {}", wasm.display(), copy.display()))?;
        return Ok(BuiltModule {
            unit,
            wasm: copy,
            js: None,
            instrument: None,
            small: None,
        });
    }
    let bytes =
        std::fs::read(&wasm).with_context(|| format!("could not read {}", wasm.display()))?;
    let info = wasmprof_profile::wasm_info::inspect(&bytes)
        .with_context(|| format!("{} is not a valid module", wasm.display()))?;
    let version = info
        .bindgen_version
        .or_else(|| unit.bindgen_version.clone())
        .context("the crate uses wasm-bindgen but its version could not be determined")?;
    if let Some(resolved) = &unit.bindgen_version
        && resolved != &version
    {
        terminal::warning(&format!(
            "the module was built with wasm-bindgen {version} but Cargo.lock resolves {resolved}; using {version}"
        ));
    }
    let cli = bindgen::find_or_install(&version, offline)?;
    let out_dir = out_dir
        .join("bindgen")
        .join(bindgen_target)
        .join(&unit.package);
    let (js, wasm) = bindgen::generate(&cli, &wasm, &out_dir, bindgen_target)?;
    Ok(BuiltModule {
        unit,
        wasm,
        js: Some(js),
        instrument: None,
        small: None,
    })
}

/// The module must keep its names; an instrumented one must carry the
/// snapshot export.
fn check_module(module: &BuiltModule) -> Result<()> {
    let bytes = std::fs::read(&module.wasm)
        .with_context(|| format!("could not read {}", module.wasm.display()))?;
    let info = wasmprof_profile::wasm_info::inspect(&bytes)?;
    if !info.has_names {
        terminal::warning(&format!(
            "{} has no name section: sampling profiles and stack traces will show wasm-function[N]",
            module.wasm.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(timer: Timer, sampled: Option<bool>, keep_counted: bool) -> KeptFrames {
        let mut args = BuildOptions {
            timer,
            sampled,
            ..BuildOptions::default()
        };
        args.crate_wide.keep_counted_frames = keep_counted;
        kept_frames(&args)
    }

    #[test]
    fn wasmprof_s_directory_is_tagged_as_a_cache_once() {
        let dir = tempfile::tempdir().unwrap();
        let wasmprof = dir.path().join("target").join("wasmprof");
        mark_as_cache(&wasmprof).unwrap();
        let tag = std::fs::read_to_string(wasmprof.join("CACHEDIR.TAG")).unwrap();
        assert!(tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55"));
        std::fs::write(wasmprof.join("CACHEDIR.TAG"), "kept").unwrap();
        mark_as_cache(&wasmprof).unwrap();
        assert_eq!(
            std::fs::read_to_string(wasmprof.join("CACHEDIR.TAG")).unwrap(),
            "kept"
        );
    }

    #[test]
    fn frames_are_kept_only_for_runs_that_are_sampled() {
        // Timed runs sample unless told not to; counted runs only when told.
        assert_eq!(frames(Timer::Host, None, false), KeptFrames::Full);
        assert_eq!(frames(Timer::Host, Some(false), false), KeptFrames::None);
        assert_eq!(frames(Timer::Host, Some(false), true), KeptFrames::None);
        assert_eq!(frames(Timer::None, None, false), KeptFrames::None);
        assert_eq!(frames(Timer::None, Some(true), false), KeptFrames::Full);
        assert_eq!(
            frames(Timer::None, Some(true), true),
            KeptFrames::WithCounted
        );
        assert_eq!(frames(Timer::Floor, Some(true), false), KeptFrames::None);
    }

    #[test]
    fn wasmtime_s_sampler_finds_inlined_calls_in_line_tables_but_not_in_components() {
        let frames = |target: Option<&str>, sampled: Option<bool>, keep_counted: bool| {
            let mut args = BuildOptions {
                host: options::HostKind::Wasmtime,
                sampled,
                ..BuildOptions::default()
            };
            args.cargo.target = target.map(str::to_owned);
            args.crate_wide.keep_counted_frames = keep_counted;
            kept_frames(&args)
        };
        for target in [None, Some("wasm32-wasip1"), Some("wasm32-wasip1-threads")] {
            assert_eq!(frames(target, None, false), KeptFrames::InLineTables);
            assert_eq!(frames(target, None, true), KeptFrames::InLineTables);
            assert_eq!(frames(target, Some(false), false), KeptFrames::None);
        }
        assert_eq!(frames(Some("wasm32-wasip2"), None, false), KeptFrames::Full);
        let suite = BuildOptions {
            host: options::HostKind::Wasmtime,
            ..BuildOptions::default()
        };
        assert_eq!(kept_frames_in_tests(&suite), KeptFrames::Full);
    }
}
