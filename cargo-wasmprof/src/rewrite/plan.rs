//! Which crates are instrumented crate-wide, and the shadow copy cargo
//! builds them from.
//!
//! A crate is rewritten when `--instrument-all` selects it, when its
//! manifest says `[package.metadata.wasmprof] instrument = "all"`, or when
//! `--instrument-crate` names it. Workspace members (and path crates inside
//! the workspace) are rewritten in a copy of the whole workspace, laid out
//! as the original so that cargo passes the same relative paths to rustc;
//! a dependency from a registry or git is copied on its own and put in
//! place with `[patch]` in the copied workspace's manifest. Nothing under
//! the user's workspace is written, except inside the target directory.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use cargo_metadata::{DependencyKind, Edition, Metadata, Package, TargetKind};
use sha2::{Digest, Sha256};

use super::manifest::{self, RuntimeSource};
use super::modules::normalize;
use super::shadow::{self, ShadowRoot};
use super::size::DEFAULT_MIN_SIZE;
use super::{CORE_RUNTIME, CrateSpec, Filter, RENAMED_RUNTIME, Runtime, Stats, rewrite_crate};
use crate::dir_lock::DirLock;
use crate::terminal;

/// What the command line asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `--instrument-all`: every selected package.
    pub instrument_all: bool,
    /// `--instrument-crate NAME[@VERSION]`.
    pub crates: Vec<String>,
    /// `--min-size N`.
    pub min_size: Option<usize>,
    /// `--count-small` (`Some(true)`) or `--no-count-small` (`Some(false)`).
    pub count_small: Option<bool>,
    /// `--include-path PATH`: patterns, each for the crate its first
    /// segment names, or for every crate.
    pub include: Vec<String>,
    /// `--exclude-path PATH`, the same way.
    pub exclude: Vec<String>,
    /// `cargo wasmprof test`: the selected packages' tests are marked as
    /// tests, so that each test's calls are under a node of its own.
    pub tests: bool,
    /// `--memory`: a rewritten crate's `#[global_allocator]` is wrapped in
    /// the recording one.
    pub memory: bool,
    /// With `--memory`: workspace members that declare an allocator of
    /// their own, rewritten for it alone when not chosen otherwise.
    pub allocators: Vec<String>,
}

impl Settings {
    /// The command line's patterns that apply to the crate `crate_name`
    /// (its library name) among the instrumented `crate_names`: those that
    /// start with its name, and those that start with no instrumented
    /// crate's name.
    fn patterns_for(patterns: &[String], crate_name: &str, crate_names: &[String]) -> Vec<String> {
        patterns
            .iter()
            .filter(|pattern| {
                let first = pattern.trim().split("::").next().unwrap_or_default();
                first == crate_name || !crate_names.iter().any(|name| name == first)
            })
            .cloned()
            .collect()
    }
}

/// `[package.metadata.wasmprof]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ManifestConfig {
    /// `instrument = "all"`.
    pub all: bool,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// `min-size = N`.
    pub min_size: Option<usize>,
    /// `count-small = true|false`.
    pub count_small: Option<bool>,
    /// `memory = true|false`: record memory per call path, as `--memory`.
    pub memory: Option<bool>,
    /// What in the table was not understood but did not stop the build.
    pub warnings: Vec<String>,
}

/// Reads `[package.metadata.wasmprof]` from what cargo metadata reports.
pub(crate) fn manifest_config(package: &Package) -> Result<ManifestConfig> {
    let mut config = ManifestConfig::default();
    let Some(table) = package.metadata.get("wasmprof") else {
        return Ok(config);
    };
    let place = || {
        format!(
            "[package.metadata.wasmprof] in {}",
            package.manifest_path.as_str()
        )
    };
    let Some(table) = table.as_object() else {
        bail!("{} must be a table", place());
    };
    for (key, value) in table {
        match key.as_str() {
            "instrument" => match value.as_str() {
                Some("all") => config.all = true,
                Some("annotated") => config.all = false,
                _ => bail!(
                    "{}: `instrument` must be \"all\" (every function) or \"annotated\" \
                     (only #[wasmprof::instrument] items), not {value}",
                    place()
                ),
            },
            "include" | "exclude" => {
                let patterns = match value {
                    serde_json::Value::String(s) => vec![s.clone()],
                    serde_json::Value::Array(items) => items
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                        .with_context(|| {
                            format!("{}: `{key}` must be a list of strings", place())
                        })?,
                    _ => bail!(
                        "{}: `{key}` must be a list of patterns like [\"parser::*\"]",
                        place()
                    ),
                };
                if key == "include" {
                    config.include = patterns;
                } else {
                    config.exclude = patterns;
                }
            }
            "min-size" | "min_size" => {
                let n = value
                    .as_u64()
                    .with_context(|| format!("{}: `{key}` must be a whole number", place()))?;
                config.min_size = Some(n as usize);
            }
            "count-small" | "count_small" => {
                let on = value.as_bool().with_context(|| {
                    format!(
                        "{}: `{key}` must be true (count the small functions) or false \
                         (leave them out)",
                        place()
                    )
                })?;
                config.count_small = Some(on);
            }
            "memory" => {
                let on = value.as_bool().with_context(|| {
                    format!(
                        "{}: `memory` must be true (record memory per call path, as \
                         --memory) or false",
                        place()
                    )
                })?;
                config.memory = Some(on);
            }
            other => config.warnings.push(format!(
                "{}: unknown key `{other}` (known: instrument, include, exclude, min-size, count-small, memory)",
                place()
            )),
        }
    }
    Ok(config)
}

/// A rewritten build, ready for cargo.
#[derive(Debug, Clone)]
pub(crate) struct ShadowBuild {
    pub shadow: ShadowRoot,
    /// The copy of the workspace root.
    pub workspace_copy: PathBuf,
    workspace_root: PathBuf,
    /// The copy's settings (`shadow_key`), which are part of its kind of
    /// build: every copy gives its rewritten crates the same paths.
    pub key: String,
    /// The smallest size threshold of the rewritten crates (0: every
    /// function was instrumented).
    pub min_size: usize,
    /// Whether the functions below it were counted (else left out).
    pub count_small: bool,
    /// Each rewritten crate and what was done to it.
    pub crates: Vec<(String, Stats)>,
    /// The test functions marked as tests (`Settings::tests`).
    pub tests: Vec<super::Planned>,
    /// Every other function instrumented, with its crate's name: what a
    /// compile error in a rewritten crate is traced back to.
    pub functions: Vec<(String, super::Planned)>,
    /// Keeps other commands out of the copy until the build is over.
    _lock: DirLock,
}

impl ShadowBuild {
    /// The manifest cargo builds instead of `original`.
    pub(crate) fn manifest_for(&self, original: &Path) -> PathBuf {
        match original.strip_prefix(&self.workspace_root) {
            Ok(relative) => self.workspace_copy.join(relative),
            Err(_) => original.to_path_buf(),
        }
    }
}

/// Where one crate to rewrite lives.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// Inside the workspace directory: rewritten in the workspace's copy.
    Workspace,
    /// A path crate outside the workspace: copied on its own, and the
    /// workspace's `path` to it pointed at the copy.
    OutsidePath,
    /// From a registry or git: copied on its own and patched in.
    Patched { source: String },
}

struct Chosen<'a> {
    package: &'a Package,
    place: Place,
    filter: Filter,
    /// Instrumented crate-wide (else chosen only for its tests).
    functions: bool,
    /// Its tests are marked.
    tests: bool,
}

/// A line that preparing has for the user, returned in order rather than
/// printed: the caller prints them (`Message::print`), and tests read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Message {
    /// A `warning:` line.
    Warning(String),
    /// A `Rewriting` status line: what was done to one crate.
    Rewriting(String),
}

impl Message {
    pub(crate) fn print(&self) {
        match self {
            Message::Warning(text) => terminal::warning(text),
            Message::Rewriting(text) => terminal::status("Rewriting", text),
        }
    }
}

/// What [`prepare`] made: the shadow build, if any crate is instrumented
/// crate-wide, and what it has to say.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub build: Option<ShadowBuild>,
    pub messages: Vec<Message>,
}

/// Prepares the shadow copy for these settings, in phases: choose the
/// crates, rewrite them in memory, edit the manifests, then write what
/// changed. An error in any phase before the last leaves nothing behind.
pub(crate) fn prepare(
    settings: &Settings,
    metadata: &Metadata,
    selected: &[&Package],
    target_dirs: &[PathBuf],
    mode_dir: &Path,
) -> Result<Prepared> {
    let workspace_root = metadata.workspace_root.clone().into_std_path_buf();
    // Never copied: target directories, wasmprof's own, cargo's home (a
    // CARGO_HOME inside the project holds every registry crate).
    let mut skip: Vec<PathBuf> = target_dirs.to_vec();
    skip.push(mode_dir.to_path_buf());
    skip.extend(cargo_home());
    let copied = |path: &Path| in_workspace_copy(path, &workspace_root, &skip);
    let mut messages = Vec::new();
    let chosen = choose(settings, metadata, selected, &copied, &mut messages)?;
    if chosen.is_empty() {
        messages.extend(nothing_crate_wide(settings));
        return Ok(Prepared {
            build: None,
            messages,
        });
    }
    let key = shadow_key(settings);
    let shadow = ShadowRoot::new(mode_dir.join("shadow").join(&key));
    let lock = DirLock::acquire(&shadow.root)?;
    let runtime_source = runtime_source(metadata, &workspace_root, &copied, &shadow);

    let mut rewritten = rewrite_in_memory(&chosen, settings.memory, &mut messages)?;
    let chosen: Vec<&Chosen> = chosen
        .iter()
        .filter(|c| !rewritten.left_as_is.contains(&c.package.id.repr))
        .collect();
    let edits = ManifestEdits {
        metadata,
        workspace_root: &workspace_root,
        chosen: &chosen,
        runtimes: &rewritten.runtimes,
        runtime_source: &runtime_source,
        shadow: &shadow,
    };
    let mut manifest_texts = Vec::new();
    for (path, text) in edits.workspace_manifests(&copied)? {
        manifest_texts.push(text.clone());
        rewritten.workspace_files.insert(path, text.into_bytes());
    }
    for (package, files) in &mut rewritten.dependency_copies {
        let (path, text) = edits.dependency_manifest(package)?;
        manifest_texts.push(text.clone());
        files.insert(path, text.into_bytes());
    }

    let workspace_copy = shadow.workspace();
    write_shadow(&rewritten, &shadow, &workspace_root, &skip)?;
    sync_lock(&shadow, &workspace_root, &workspace_copy, &manifest_texts)?;

    // Crates chosen only for their tests left nothing out for its size.
    let min_size = chosen
        .iter()
        .filter(|c| c.functions)
        .map(|c| c.filter.min_size)
        .min()
        .unwrap_or(0);
    // One crate that left its small functions out makes the profile's
    // "left out" note the true one.
    let count_small = chosen
        .iter()
        .filter(|c| c.functions)
        .all(|c| c.filter.count_small);
    Ok(Prepared {
        build: Some(ShadowBuild {
            key,
            shadow,
            workspace_copy,
            workspace_root,
            min_size,
            count_small,
            crates: rewritten.reports,
            tests: rewritten.tests,
            functions: rewritten.functions,
            _lock: lock,
        }),
        messages,
    })
}

/// A crate-wide flag given when no crate is instrumented crate-wide.
fn nothing_crate_wide(settings: &Settings) -> Option<Message> {
    let flag = match (settings.min_size, settings.count_small) {
        (Some(_), _) => "--min-size",
        (None, Some(true)) => "--count-small",
        (None, Some(false)) => "--no-count-small",
        (None, None) => return None,
    };
    Some(Message::Warning(format!(
        "{flag} applies to crate-wide instrumentation, and no crate is instrumented \
         crate-wide (use --instrument-all or --instrument-crate NAME)"
    )))
}

/// Every chosen crate rewritten in memory; nothing is written yet.
struct Rewritten<'a> {
    /// New files of the workspace copy, by their original paths.
    workspace_files: BTreeMap<PathBuf, Vec<u8>>,
    /// Crates copied on their own, each with its new files.
    dependency_copies: Vec<(&'a Package, BTreeMap<PathBuf, Vec<u8>>)>,
    /// The runtime of each crate that calls it (by package id), and the
    /// name its manifest must add it under, if it does not have it.
    runtimes: BTreeMap<String, (Runtime, Option<String>)>,
    /// Each crate's name and what was done to it.
    reports: Vec<(String, Stats)>,
    /// Crates that must stay as they are (by package id).
    left_as_is: BTreeSet<String>,
    tests: Vec<super::Planned>,
    functions: Vec<(String, super::Planned)>,
}

/// Rewrites every chosen crate in memory: an error leaves nothing behind.
fn rewrite_in_memory<'a>(
    chosen: &[Chosen<'a>],
    memory: bool,
    messages: &mut Vec<Message>,
) -> Result<Rewritten<'a>> {
    let mut out = Rewritten {
        workspace_files: BTreeMap::new(),
        dependency_copies: Vec::new(),
        runtimes: BTreeMap::new(),
        reports: Vec::new(),
        left_as_is: BTreeSet::new(),
        tests: Vec::new(),
        functions: Vec::new(),
    };
    for chosen in chosen {
        let package = chosen.package;
        let (runtime, add_as, bare) = runtime_for(package)?;
        let spec = crate_spec(package, runtime.clone(), chosen, bare, memory)?;
        let rewritten = rewrite_crate(&spec).map_err(|error| {
            anyhow::anyhow!(
                "crate-wide instrumentation of `{}` failed: {error}\n\
                 Nothing was changed in your sources; build without crate-wide \
                 instrumentation of `{}` to get an ordinary wasmprof build.",
                package.name,
                package.name
            )
        })?;
        messages.extend(rewritten.warnings.iter().cloned().map(Message::Warning));
        if rewritten.stats.allocators > 0 && chosen.functions {
            let message = format!(
                "`{}` implements a memory allocator (GlobalAlloc): the functions its allocator \
                 calls must not be instrumented, since the profiler allocates when it meets a \
                 function for the first time",
                package.name
            );
            if chosen.place != Place::Workspace {
                messages.push(Message::Warning(format!(
                    "{message}; `{}` is left as it is",
                    package.name
                )));
                out.left_as_is.insert(package.id.repr.clone());
                continue;
            }
            messages.push(Message::Warning(format!(
                "{message}; its impl is left out, put #[wasmprof::skip] on the functions it calls"
            )));
        }
        messages.extend(build_script_warning(package).map(Message::Warning));
        if chosen.functions {
            messages.push(Message::Rewriting(describe(
                package,
                &rewritten.stats,
                &spec.filter,
            )));
        } else if rewritten.stats.wrapped_allocators > 0 {
            messages.push(Message::Rewriting(format!(
                "{} v{}: its #[global_allocator] wrapped in wasmprof::Recording, in the copy only",
                package.name, package.version
            )));
        }
        out.reports
            .push((package.name.to_string(), rewritten.stats.clone()));
        let (marked_tests, others): (Vec<_>, Vec<_>) = rewritten
            .planned
            .iter()
            .cloned()
            .partition(|p| p.kind == super::PlannedKind::Test);
        out.tests.extend(marked_tests);
        out.functions
            .extend(others.into_iter().map(|p| (spec.crate_name.clone(), p)));
        let calls_runtime = rewritten.stats.instrumented > 0
            || rewritten.stats.macro_tests > 0
            || rewritten.stats.wrapped_allocators > 0;
        if calls_runtime {
            out.runtimes
                .insert(package.id.repr.clone(), (runtime, add_as));
        }
        let files: BTreeMap<PathBuf, Vec<u8>> = rewritten
            .files
            .into_iter()
            .map(|(path, text)| (path, text.into_bytes()))
            .collect();
        match chosen.place {
            Place::Workspace => out.workspace_files.extend(files),
            _ => out.dependency_copies.push((package, files)),
        }
    }
    Ok(out)
}

/// What the manifests of the copies are edited with.
struct ManifestEdits<'a> {
    metadata: &'a Metadata,
    workspace_root: &'a Path,
    /// The crates rewritten (without those left as they are).
    chosen: &'a [&'a Chosen<'a>],
    runtimes: &'a BTreeMap<String, (Runtime, Option<String>)>,
    runtime_source: &'a RuntimeSource,
    shadow: &'a ShadowRoot,
}

impl ManifestEdits<'_> {
    /// The workspace copy's manifests, by their original paths: paths
    /// pointed at the copies, the runtime added where it is called, the
    /// patches for the dependencies copied on their own.
    fn workspace_manifests(
        &self,
        copied: &dyn Fn(&Path) -> bool,
    ) -> Result<Vec<(PathBuf, String)>> {
        let root_manifest = self.workspace_root.join("Cargo.toml");
        let outside: BTreeMap<PathBuf, PathBuf> = self
            .chosen
            .iter()
            .filter(|c| c.place == Place::OutsidePath)
            .map(|c| {
                let dir = package_dir(c.package);
                (dir.clone(), self.shadow.dependency(&dir))
            })
            .collect();
        let relocate = |path: &Path| -> Option<PathBuf> {
            if let Some(copy) = outside.get(path) {
                return Some(copy.clone());
            }
            (!copied(path)).then(|| path.to_path_buf())
        };
        let mut manifests: Vec<PathBuf> = vec![root_manifest.clone()];
        manifests.extend(
            self.metadata
                .packages
                .iter()
                .filter(|p| p.source.is_none())
                .map(|p| p.manifest_path.clone().into_std_path_buf())
                .filter(|m| copied(m)),
        );
        manifests.sort();
        manifests.dedup();
        let mut edited = Vec::new();
        for path in manifests {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let mut doc = manifest::parse(&text, &path)?;
            let dir = path.parent().unwrap_or(Path::new("."));
            manifest::relocate_paths(&mut doc, dir, &relocate);
            if let Some(package) = self
                .metadata
                .packages
                .iter()
                .find(|p| p.manifest_path.as_std_path() == path)
            {
                self.add_runtime(&mut doc, package);
            }
            if path == root_manifest {
                for chosen in self.chosen {
                    if let Place::Patched { source } = &chosen.place {
                        let dir = package_dir(chosen.package);
                        manifest::add_patch(
                            &mut doc,
                            source,
                            &chosen.package.name,
                            &self.shadow.dependency(&dir),
                        );
                    }
                }
                manifest::ensure_workspace(&mut doc);
                // Dependency copies live in the workspace copy's directory;
                // they must not become members of it.
                manifest::exclude_from_workspace(&mut doc, shadow::DEPENDENCIES_DIR);
            }
            edited.push((path, doc.to_string()));
        }
        Ok(edited)
    }

    /// The manifest of a dependency copied on its own, and its path.
    fn dependency_manifest(&self, package: &Package) -> Result<(PathBuf, String)> {
        let path = package.manifest_path.clone().into_std_path_buf();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut doc = manifest::parse(&text, &path)?;
        if manifest::inherits_from_workspace(&doc) {
            bail!(
                "cannot instrument `{}` crate-wide: its manifest ({}) inherits fields from its \
                 workspace (`workspace = true`), which a copy of the crate alone cannot resolve",
                package.name,
                path.display()
            );
        }
        let dir = package_dir(package);
        manifest::relocate_paths(&mut doc, &dir, &|p| {
            (!p.starts_with(&dir)).then(|| p.to_path_buf())
        });
        self.add_runtime(&mut doc, package);
        manifest::ensure_workspace(&mut doc);
        Ok((path, doc.to_string()))
    }

    /// The runtime dependency, in the manifest of a crate that calls the
    /// runtime and does not depend on it.
    fn add_runtime(&self, doc: &mut toml_edit::DocumentMut, package: &Package) {
        if let Some((runtime, Some(add_as))) = self.runtimes.get(&package.id.repr) {
            manifest::add_runtime_dependency(doc, add_as, runtime.package, self.runtime_source);
        }
    }
}

/// Writes the copies: only what changed, so that cargo's fingerprints hold.
fn write_shadow(
    rewritten: &Rewritten,
    shadow: &ShadowRoot,
    workspace_root: &Path,
    skip: &[PathBuf],
) -> Result<()> {
    let workspace_copy = shadow.workspace();
    shadow::sync_tree(
        workspace_root,
        &workspace_copy,
        &rewritten.workspace_files,
        skip,
        &["Cargo.lock", shadow::DEPENDENCIES_DIR],
    )
    .with_context(|| format!("cannot write the shadow copy {}", workspace_copy.display()))?;
    for (package, files) in &rewritten.dependency_copies {
        let dir = package_dir(package);
        shadow::sync_tree(&dir, &shadow.dependency(&dir), files, &[], &["Cargo.lock"])
            .with_context(|| format!("cannot write the shadow copy of {}", package.name))?;
    }
    Ok(())
}

/// The crates to rewrite, each once.
fn choose<'a>(
    settings: &Settings,
    metadata: &'a Metadata,
    selected: &[&'a Package],
    copied: &dyn Fn(&Path) -> bool,
    messages: &mut Vec<Message>,
) -> Result<Vec<Chosen<'a>>> {
    let mut chosen: Vec<Chosen<'a>> = Vec::new();
    // The manifests' warnings, each once, though a manifest may be read
    // twice.
    let warnings = std::cell::RefCell::new(Vec::<String>::new());
    let config_of = |package: &Package| -> Result<ManifestConfig> {
        let config = manifest_config(package)?;
        let mut warnings = warnings.borrow_mut();
        for warning in &config.warnings {
            if !warnings.contains(warning) {
                warnings.push(warning.clone());
            }
        }
        Ok(config)
    };
    let mut add = |package: &'a Package, explicit: bool| -> Result<()> {
        if chosen.iter().any(|c| c.package.id == package.id) {
            return Ok(());
        }
        if let Some(why) = cannot_instrument(package) {
            // Named on the command line, it is an error; met on the way, a
            // crate that cannot be instrumented is left as it is.
            if explicit {
                bail!("{why}");
            }
            return Ok(());
        }
        let config = config_of(package)?;
        let place = place_of(package, copied)?;
        chosen.push(Chosen {
            package,
            place,
            filter: Filter {
                include: config.include,
                exclude: config.exclude,
                min_size: settings
                    .min_size
                    .or(config.min_size)
                    .unwrap_or(DEFAULT_MIN_SIZE),
                count_small: settings.count_small.or(config.count_small).unwrap_or(true),
            },
            functions: true,
            tests: false,
        });
        Ok(())
    };
    if settings.instrument_all {
        for package in selected {
            add(package, false)?;
        }
    }
    // A member that asks for it in its manifest, when it is part of the
    // build: selected, or a dependency of what is.
    let in_build = dependency_closure(metadata, selected);
    for package in metadata.workspace_packages() {
        if in_build.contains(&package.id.repr) && config_of(package)?.all {
            add(package, false)?;
        }
    }
    for spec in &settings.crates {
        for package in find_packages(metadata, spec)? {
            add(package, true)?;
        }
    }
    if settings.tests {
        for package in selected {
            if let Some(known) = chosen.iter_mut().find(|c| c.package.id == package.id) {
                known.tests = true;
                continue;
            }
            if is_wasmprof(package) {
                continue;
            }
            chosen.push(Chosen {
                package,
                place: place_of(package, copied)?,
                filter: Filter::default(),
                functions: false,
                tests: true,
            });
        }
    }
    if settings.memory {
        for package in metadata.workspace_packages() {
            let named = settings
                .allocators
                .iter()
                .any(|a| *a == package.name.as_str());
            if named && !chosen.iter().any(|c| c.package.id == package.id) {
                chosen.push(Chosen {
                    package,
                    place: place_of(package, copied)?,
                    filter: Filter::default(),
                    functions: false,
                    tests: false,
                });
            }
        }
    }
    add_command_line_patterns(settings, &mut chosen);
    messages.extend(warnings.into_inner().into_iter().map(Message::Warning));
    Ok(chosen)
}

/// The command line's patterns, beside each crate's own.
fn add_command_line_patterns(settings: &Settings, chosen: &mut [Chosen]) {
    let names: Vec<String> = chosen.iter().map(|c| crate_name_of(c.package)).collect();
    for (known, name) in chosen.iter_mut().zip(&names) {
        let filter = &mut known.filter;
        filter
            .include
            .extend(Settings::patterns_for(&settings.include, name, &names));
        filter
            .exclude
            .extend(Settings::patterns_for(&settings.exclude, name, &names));
    }
}

/// The runtime, the macros and their rule: never instrumented.
fn is_wasmprof(package: &Package) -> bool {
    matches!(
        package.name.as_str(),
        "wasmprof-rt"
            | "wasmprof-core"
            | "wasmprof-macros"
            | "wasmprof-attributes"
            | "wasmprof-wire"
    )
}

/// Why `package` cannot be instrumented crate-wide, if it cannot.
fn cannot_instrument(package: &Package) -> Option<String> {
    let name = &package.name;
    if is_wasmprof(package) {
        return Some(format!(
            "`{name}` is wasmprof itself and cannot be instrumented"
        ));
    }
    if matches!(name.as_str(), "wasm-bindgen" | "wasm-bindgen-shared") {
        return Some(format!(
            "`{name}` cannot be instrumented: the wasm-bindgen CLI runs its functions in an \
             interpreter of its own to read the module's type descriptors, and that \
             interpreter cannot run the profiler's code"
        ));
    }
    if package.targets.iter().any(|t| is_code_target(&t.kind)) {
        return None;
    }
    if package
        .targets
        .iter()
        .any(|t| t.kind.contains(&TargetKind::ProcMacro))
    {
        return Some(format!(
            "`{name}` is a procedural macro crate: it runs inside the compiler, not in \
             the WebAssembly module, so there is nothing of it to profile"
        ));
    }
    Some(format!("`{name}` has no library or binary to instrument"))
}

/// The name a package's code goes by in paths: its library's, else its
/// first binary's.
fn crate_name_of(package: &Package) -> String {
    package
        .targets
        .iter()
        .find(|t| !t.kind.contains(&TargetKind::Bin) && is_code_target(&t.kind))
        .or_else(|| package.targets.iter().find(|t| is_code_target(&t.kind)))
        .map(|t| t.name.replace('-', "_"))
        .unwrap_or_else(|| package.name.replace('-', "_"))
}

/// The ids of the selected packages and of everything they depend on.
fn dependency_closure(metadata: &Metadata, selected: &[&Package]) -> BTreeSet<String> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut stack: Vec<String> = selected.iter().map(|p| p.id.repr.clone()).collect();
    let nodes: BTreeMap<&str, &cargo_metadata::Node> = metadata
        .resolve
        .iter()
        .flat_map(|r| r.nodes.iter())
        .map(|n| (n.id.repr.as_str(), n))
        .collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(node) = nodes.get(id.as_str()) {
            stack.extend(node.deps.iter().map(|d| d.pkg.repr.clone()));
        }
    }
    seen
}

/// `NAME` or `NAME@VERSION` among the packages of the build.
fn find_packages<'a>(metadata: &'a Metadata, spec: &str) -> Result<Vec<&'a Package>> {
    let (name, version) = spec.split_once('@').unwrap_or((spec, ""));
    let same = |a: &str| a.replace('_', "-") == name.replace('_', "-");
    let found: Vec<&Package> = metadata
        .packages
        .iter()
        .filter(|p| same(&p.name) && (version.is_empty() || p.version.to_string() == version))
        .collect();
    match found.len() {
        0 => bail!(
            "--instrument-crate {spec}: no package of that name{} is in the dependency graph \
             (see `cargo tree`)",
            if version.is_empty() {
                ""
            } else {
                " and version"
            }
        ),
        1 => Ok(found),
        _ => {
            let versions: Vec<String> = found.iter().map(|p| p.version.to_string()).collect();
            bail!(
                "--instrument-crate {spec}: the build has several versions of `{name}` ({}); \
                 choose one with --instrument-crate {name}@VERSION",
                versions.join(", ")
            )
        }
    }
}

fn place_of(package: &Package, copied: &dyn Fn(&Path) -> bool) -> Result<Place> {
    let dir = package_dir(package);
    match &package.source {
        None if copied(&dir) => Ok(Place::Workspace),
        None => Ok(Place::OutsidePath),
        Some(source) => {
            let repr = source.repr.as_str();
            if source.is_crates_io() || repr == "sparse+https://index.crates.io/" {
                Ok(Place::Patched {
                    source: "crates-io".into(),
                })
            } else if let Some(git) = repr.strip_prefix("git+") {
                let url = git.split(['?', '#']).next().unwrap_or(git);
                Ok(Place::Patched { source: url.into() })
            } else if let Some(index) = repr.strip_prefix("registry+") {
                Ok(Place::Patched {
                    source: index.into(),
                })
            } else if repr.starts_with("sparse+") {
                Ok(Place::Patched {
                    source: repr.into(),
                })
            } else {
                bail!(
                    "cannot instrument `{}` crate-wide: its source ({repr}) cannot be patched",
                    package.name
                )
            }
        }
    }
}

fn is_code_target(kinds: &[TargetKind]) -> bool {
    kinds.iter().any(|k| {
        matches!(
            k,
            TargetKind::Lib
                | TargetKind::RLib
                | TargetKind::CDyLib
                | TargetKind::StaticLib
                | TargetKind::DyLib
                | TargetKind::Bin
        )
    })
}

fn package_dir(package: &Package) -> PathBuf {
    package
        .manifest_path
        .parent()
        .map(|p| p.as_std_path().to_path_buf())
        .unwrap_or_default()
}

/// `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .and_then(|path| std::path::absolute(path).ok())
}

/// Whether the workspace copy holds `path`: inside the workspace root and
/// not in a directory the copy leaves out.
fn in_workspace_copy(path: &Path, workspace_root: &Path, skip: &[PathBuf]) -> bool {
    let path = normalize(path);
    let Ok(relative) = path.strip_prefix(workspace_root) else {
        return false;
    };
    if skip.iter().any(|t| path.starts_with(t)) {
        return false;
    }
    let mut dir = workspace_root.to_path_buf();
    for component in relative.components() {
        let name = component.as_os_str();
        if [".git", ".hg", ".svn", ".jj", "node_modules"]
            .iter()
            .any(|s| name == *s)
        {
            return false;
        }
        dir.push(name);
        if dir.join("CACHEDIR.TAG").exists() {
            return false;
        }
    }
    true
}

/// One directory per set of flags, so that builds with different flags
/// (run side by side, or one after the other) each keep their copy and
/// their artifacts.
fn shadow_key(settings: &Settings) -> String {
    let mut parts = Vec::new();
    if settings.instrument_all {
        parts.push("all".to_owned());
    }
    if settings.tests {
        parts.push("tests".to_owned());
    }
    if settings.memory {
        parts.push("memory".to_owned());
    }
    if let Some(n) = settings.min_size {
        parts.push(format!("min{n}"));
    }
    match settings.count_small {
        Some(true) => parts.push("count".to_owned()),
        Some(false) => parts.push("nocount".to_owned()),
        None => {}
    }
    if !settings.crates.is_empty() {
        parts.push(format!("crates-{}", short_hash(&settings.crates)));
    }
    if settings.memory && !settings.allocators.is_empty() {
        parts.push(format!("allocators-{}", short_hash(&settings.allocators)));
    }
    if parts.is_empty() {
        "manifest".to_owned()
    } else {
        parts.join("-")
    }
}

/// Eight hex digits naming a set of names, whatever their order.
fn short_hash(names: &[String]) -> String {
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    Sha256::digest(names.join(",").as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where the copies get the runtime: the `wasmprof-rt` the workspace
/// already resolves (one runtime in the module, never two), else this
/// repository's when cargo-wasmprof was built from it, else crates.io.
fn runtime_source(
    metadata: &Metadata,
    workspace_root: &Path,
    copied: &dyn Fn(&Path) -> bool,
    shadow: &ShadowRoot,
) -> RuntimeSource {
    if let Some(runtime) = metadata
        .packages
        .iter()
        .find(|p| p.name.as_str() == "wasmprof-rt")
    {
        match &runtime.source {
            None => {
                let dir = package_dir(runtime);
                // Inside the workspace the copy is what the copied
                // workspace resolves.
                let dir = match shadow.in_workspace(&dir, workspace_root) {
                    Some(copy) if copied(&dir) => copy,
                    _ => dir,
                };
                return RuntimeSource::Path(dir);
            }
            Some(source) if source.repr.starts_with("git+") => {
                let git = &source.repr["git+".len()..];
                let (url, rev) = git.split_once('#').unwrap_or((git, ""));
                let url = url.split('?').next().unwrap_or(url);
                return RuntimeSource::Git {
                    url: url.into(),
                    rev: rev.into(),
                };
            }
            Some(_) => {
                return RuntimeSource::Registry {
                    version: runtime.version.to_string(),
                };
            }
        }
    }
    match bundled_runtime() {
        Some(here) => RuntimeSource::Path(here),
        None => RuntimeSource::Registry {
            version: env!("CARGO_PKG_VERSION").into(),
        },
    }
}

/// The runtime beside the sources this cargo-wasmprof was built from (a
/// checkout, or what `cargo install --path` built), if they are still there.
pub(crate) fn bundled_runtime() -> Option<PathBuf> {
    let here = normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../wasmprof-rt"));
    here.join("Cargo.toml").is_file().then_some(here)
}

/// The crates `wasmprof-macros` is built from (its dependencies, checked
/// against its manifest by a test): depending on the attribute would make
/// them depend on themselves, so they are instrumented `direct`ly through
/// `wasmprof-core`.
pub(crate) const MACRO_DEPENDENCIES: &[&str] = &["proc-macro2", "quote", "syn", "unicode-ident"];

fn is_macro_dependency(package: &Package) -> bool {
    MACRO_DEPENDENCIES.contains(&package.name.as_str())
}

/// How the rewritten crate reaches the runtime: the name, the dependency to
/// add under that name (if any), and whether bare `#[instrument]` and
/// `#[skip]` are taken for wasmprof's.
fn runtime_for(package: &Package) -> Result<(Runtime, Option<String>, bool)> {
    if is_macro_dependency(package) {
        return Ok((Runtime::core(), Some(CORE_RUNTIME.to_owned()), false));
    }
    let runtime_deps: Vec<_> = package
        .dependencies
        .iter()
        .filter(|d| d.name == "wasmprof-rt")
        .collect();
    let bare = !runtime_deps.is_empty();
    let extern_name = |d: &cargo_metadata::Dependency| {
        d.rename
            .clone()
            .unwrap_or_else(|| "wasmprof".to_owned())
            .replace('-', "_")
    };
    if let Some(dep) = runtime_deps
        .iter()
        .find(|d| d.kind == DependencyKind::Normal && !d.optional && d.target.is_none())
    {
        return Ok((Runtime::new(&extern_name(dep)), None, bare));
    }
    if let Some(dep) = runtime_deps
        .iter()
        .find(|d| d.kind == DependencyKind::Normal && d.optional)
    {
        bail!(
            "cannot instrument `{}` crate-wide: its dependency on wasmprof-rt (`{}`) is optional; \
             make it a normal dependency, or enable its feature in a way cargo wasmprof can see",
            package.name,
            dep.rename.as_deref().unwrap_or("wasmprof-rt")
        );
    }
    if let Some(dep) = runtime_deps.first() {
        // A dev or target-specific dependency: the same name, made normal.
        let key = dep
            .rename
            .clone()
            .unwrap_or_else(|| "wasmprof-rt".to_owned());
        return Ok((Runtime::new(&extern_name(dep)), Some(key), bare));
    }
    let taken = package.dependencies.iter().any(|d| {
        d.rename
            .as_deref()
            .unwrap_or(d.name.as_str())
            .replace('-', "_")
            == "wasmprof"
    });
    if taken {
        Ok((
            Runtime::new(RENAMED_RUNTIME),
            Some(RENAMED_RUNTIME.to_owned()),
            false,
        ))
    } else {
        Ok((Runtime::new("wasmprof"), Some("wasmprof".to_owned()), false))
    }
}

fn crate_spec(
    package: &Package,
    runtime: Runtime,
    chosen: &Chosen<'_>,
    bare: bool,
    memory: bool,
) -> Result<CrateSpec> {
    let roots: Vec<PathBuf> = package
        .targets
        .iter()
        .filter(|t| {
            is_code_target(&t.kind)
                || (chosen.tests
                    && t.kind
                        .iter()
                        .any(|k| matches!(k, TargetKind::Test | TargetKind::Bench)))
        })
        .map(|t| t.src_path.clone().into_std_path_buf())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let crate_name = crate_name_of(package);
    Ok(CrateSpec {
        crate_name,
        package_root: package_dir(package),
        roots,
        runtime,
        filter: chosen.filter.clone(),
        functions: chosen.functions,
        tests: chosen.tests,
        bare_attributes_are_ours: bare,
        dependency: chosen.place != Place::Workspace,
        edition_2015: package.edition == Edition::E2015,
        direct: is_macro_dependency(package),
        wrap_allocator: memory && !is_macro_dependency(package),
    })
}

/// A build script that reads the crate's own sources would read the
/// rewritten copy: say so.
fn build_script_warning(package: &Package) -> Option<String> {
    let script = package
        .targets
        .iter()
        .find(|t| t.kind.contains(&TargetKind::CustomBuild))?;
    let text = std::fs::read_to_string(&script.src_path).ok()?;
    let clue = ["\"src/", "\"src\"", "\"./src"]
        .into_iter()
        .find(|clue| text.contains(clue))?;
    Some(format!(
        "the build script of `{}` ({}) seems to read the crate's sources (it mentions `{clue}`): \
         it will read the instrumented copy, where wasmprof's instrumentation was added on the \
         lines of functions. If it parses or hashes them and the build fails or misbehaves, leave \
         the crate out of crate-wide instrumentation (or exclude the modules it reads).",
        package.name, script.src_path
    ))
}

/// The status line of one rewritten crate.
fn describe(package: &Package, stats: &Stats, filter: &Filter) -> String {
    let mut left_out = Vec::new();
    if stats.small > 0 {
        left_out.push(format!(
            "{} small ones (size below {}, no loop; --count-small counts them)",
            stats.small, filter.min_size
        ));
    }
    if stats.excluded > 0 {
        left_out.push(format!("{} by include/exclude patterns", stats.excluded));
    }
    match stats.excluded_modules.as_slice() {
        [] => {}
        [one] => left_out.push(format!("module {one} by an exclude pattern")),
        more => left_out.push(format!(
            "{} modules by exclude patterns ({})",
            more.len(),
            more.join(", ")
        )),
    }
    if stats.not_instrumentable > 0 {
        left_out.push(format!(
            "{} const/naked/allocator",
            stats.not_instrumentable
        ));
    }
    if stats.left_alone > 0 {
        left_out.push(format!(
            "{} with their own wasmprof attribute",
            stats.left_alone
        ));
    }
    let counted = if stats.counted > 0 {
        format!(
            ", {} of them small (size below {}, no loop) and counted only",
            stats.counted, filter.min_size
        )
    } else {
        String::new()
    };
    let extra = if left_out.is_empty() {
        String::new()
    } else {
        format!(" (left out: {})", left_out.join(", "))
    };
    format!(
        "{} v{}: {} functions instrumented crate-wide{counted}{extra}",
        package.name, package.version, stats.instrumented
    )
}

/// The copy's `Cargo.lock` starts as the user's; cargo then adds what the
/// copy's manifests add (the runtime, patches) and keeps it. It is taken
/// from the user again when their lock file or the copied manifests change.
fn sync_lock(
    shadow: &ShadowRoot,
    workspace_root: &Path,
    workspace_copy: &Path,
    manifests: &[String],
) -> Result<()> {
    let user_lock = workspace_root.join("Cargo.lock");
    let copy_lock = workspace_copy.join("Cargo.lock");
    let lock = std::fs::read(&user_lock).ok();
    let mut hash = Sha256::new();
    hash.update(lock.as_deref().unwrap_or_default());
    for text in manifests {
        hash.update(text.as_bytes());
    }
    let fingerprint: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let state = shadow.root.join("wasmprof-lock.sha256");
    let recorded = std::fs::read_to_string(&state).unwrap_or_default();
    if recorded.trim() == fingerprint && copy_lock.exists() == lock.is_some() {
        return Ok(());
    }
    match &lock {
        Some(bytes) => {
            shadow::write_if_changed(&copy_lock, bytes)
                .with_context(|| format!("cannot write {}", copy_lock.display()))?;
        }
        None => {
            let _ = std::fs::remove_file(&copy_lock);
        }
    }
    shadow::write_if_changed(&state, fingerprint.as_bytes())
        .with_context(|| format!("cannot write {}", state.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Message, Settings, prepare};

    /// A workspace of one package, `demo`, with `metadata` as its
    /// `[package.metadata.wasmprof]`, read by the real `cargo metadata`.
    fn workspace(metadata: &str) -> (tempfile::TempDir, cargo_metadata::Metadata) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            format!(
                "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [package.metadata.wasmprof]\n{metadata}\n"
            ),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/lib.rs"),
            "pub fn work(n: u32) -> u32 {\n    (0..n).sum()\n}\n",
        )
        .unwrap();
        let metadata = cargo_metadata::MetadataCommand::new()
            .current_dir(dir.path())
            .no_deps()
            .exec()
            .unwrap();
        (dir, metadata)
    }

    fn prepare_in(
        dir: &std::path::Path,
        metadata: &cargo_metadata::Metadata,
        settings: &Settings,
    ) -> super::Prepared {
        let selected: Vec<_> = metadata.workspace_packages();
        let target = dir.join("target");
        prepare(
            settings,
            metadata,
            &selected,
            std::slice::from_ref(&target),
            &target.join("wasmprof/host"),
        )
        .unwrap()
    }

    /// Preparing prints nothing itself: what it has to say comes back in
    /// order, each manifest warning once though the manifest is read twice.
    #[test]
    fn preparing_returns_its_warnings_and_status_lines_as_data() {
        let (dir, metadata) = workspace("instrument = \"all\"\ncolour = \"blue\"");
        let prepared = prepare_in(dir.path(), &metadata, &Settings::default());
        assert!(prepared.build.is_some());
        let [Message::Warning(unknown), Message::Rewriting(rewriting)] =
            prepared.messages.as_slice()
        else {
            panic!("{:?}", prepared.messages);
        };
        assert!(unknown.contains("unknown key `colour`"), "{unknown}");
        assert!(
            rewriting.starts_with("demo v0.1.0: 1 functions instrumented crate-wide"),
            "{rewriting}"
        );
    }

    #[test]
    fn with_memory_a_crate_with_its_own_allocator_is_rewritten_for_it_alone() {
        let (dir, metadata) = workspace("");
        let lib = dir.path().join("src/lib.rs");
        let mut text = std::fs::read_to_string(&lib).unwrap();
        text.push_str("#[global_allocator]\nstatic A: std::alloc::System = std::alloc::System;\n");
        std::fs::write(&lib, text).unwrap();
        let settings = Settings {
            memory: true,
            allocators: vec!["demo".into()],
            ..Settings::default()
        };
        let prepared = prepare_in(dir.path(), &metadata, &settings);
        let build = prepared.build.expect("a copy is made");
        assert_eq!(
            prepared.messages,
            [Message::Rewriting(
                "demo v0.1.0: its #[global_allocator] wrapped in wasmprof::Recording, in the copy only"
                    .into()
            )]
        );
        let copy = std::fs::read_to_string(build.workspace_copy.join("src/lib.rs")).unwrap();
        assert!(
            copy.contains("static A: ::wasmprof::Recording<std::alloc::System> = ::wasmprof::Recording::new(std::alloc::System);"),
            "{copy}"
        );
        // Nothing else is instrumented.
        assert!(!copy.contains("instrument"), "{copy}");
        let manifest = std::fs::read_to_string(build.workspace_copy.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("wasmprof"), "{manifest}");
    }

    #[test]
    fn a_crate_wide_flag_without_a_crate_wide_crate_is_a_warning() {
        let (dir, metadata) = workspace("instrument = \"annotated\"");
        let settings = Settings {
            min_size: Some(0),
            ..Settings::default()
        };
        let prepared = prepare_in(dir.path(), &metadata, &settings);
        assert!(prepared.build.is_none());
        let [Message::Warning(warning)] = prepared.messages.as_slice() else {
            panic!("{:?}", prepared.messages);
        };
        assert!(
            warning.starts_with("--min-size applies to crate-wide instrumentation"),
            "{warning}"
        );
    }

    #[test]
    fn a_command_line_pattern_applies_to_the_crate_it_names_or_to_every_crate() {
        let names = ["my_app".to_owned(), "yew".to_owned()];
        let patterns = [
            "yew::functional::hooks".to_owned(),
            "my_app::parser::*".to_owned(),
            "*::tests::*".to_owned(),
        ];
        assert_eq!(
            Settings::patterns_for(&patterns, "yew", &names),
            ["yew::functional::hooks", "*::tests::*"]
        );
        assert_eq!(
            Settings::patterns_for(&patterns, "my_app", &names),
            ["my_app::parser::*", "*::tests::*"]
        );
    }
}
