//! Crate-wide instrumentation: every function of a crate instrumented
//! without touching its source.
//!
//! The crate is read with syn from each target root (`src/lib.rs`,
//! `src/main.rs`, `[lib] path`) down its module tree, and
//! `#[::wasmprof::instrument]` is inserted as text before each free
//! function and on each impl block and trait (whose functions the macro then
//! instruments one by one). The insertions never contain a newline and go on
//! the item's own line, so that every line keeps its number; the rewritten
//! files go to a shadow copy under the target directory ([`shadow`]),
//! which cargo builds instead, and `--remap-path-prefix` maps its paths back
//! to the originals. The reports then show `src/parser.rs:123` exactly as
//! the editor does.
//!
//! [`plan`] decides which crates (`--instrument-all`, `--instrument-crate`,
//! `[package.metadata.wasmprof]`), [`manifest`] edits the copies' manifests
//! (the runtime dependency, absolute paths, `[patch]`).

mod copies;
mod items;
pub(crate) mod manifest;
pub(crate) mod modules;
pub(crate) mod pattern;
pub(crate) mod plan;
pub(crate) mod shadow;
pub(crate) mod size;
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub(crate) use pattern::Filter;
pub(crate) use source::edit_all;

use items::{FileJob, FileWalk};
use modules::{ModDir, is_inside};
use source::Source;

/// The name by which rewritten code reaches the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Runtime {
    /// `wasmprof`, or another name when the crate already has a dependency
    /// called `wasmprof` that is not the runtime.
    pub name: String,
    /// The package: `wasmprof-rt`, or `wasmprof-core` for a `direct` crate.
    pub package: &'static str,
}

/// The dependency name used when `wasmprof` is taken.
pub(crate) const RENAMED_RUNTIME: &str = "__wasmprof_rt";

/// The dependency name of `wasmprof-core` in a `direct` crate.
pub(crate) const CORE_RUNTIME: &str = "__wasmprof_core";

impl Runtime {
    pub(crate) fn new(name: &str) -> Runtime {
        Runtime {
            name: name.to_owned(),
            package: "wasmprof-rt",
        }
    }

    /// `wasmprof-core`, for a crate the attribute depends on.
    pub(crate) fn core() -> Runtime {
        Runtime {
            name: CORE_RUNTIME.to_owned(),
            package: "wasmprof-core",
        }
    }

    /// `#[::wasmprof::instrument(ARGS)] `, with `crate = ...` first under
    /// another name.
    fn attribute(&self, args: &str) -> String {
        match (self.name == "wasmprof", args.is_empty()) {
            (true, true) => "#[::wasmprof::instrument] ".to_owned(),
            (true, false) => format!("#[::wasmprof::instrument({args})] "),
            (false, true) => format!("#[::{0}::instrument(crate = ::{0})] ", self.name),
            (false, false) => format!("#[::{0}::instrument(crate = ::{0}, {args})] ", self.name),
        }
    }

    /// `#[::wasmprof::instrument] `.
    pub(crate) fn instrument_attr(&self) -> String {
        self.attribute("")
    }

    /// `#[::wasmprof::instrument(count)] `: the count-only tier.
    pub(crate) fn count_attr(&self) -> String {
        self.attribute("count")
    }

    /// The attribute of one function the rewrite instruments, fully or
    /// `counted`, with its index in its crate's block of per-thread site
    /// state (see [`Slots`]).
    pub(crate) fn slotted_attr(&self, counted: bool, slot: u32) -> String {
        match counted {
            true => self.attribute(&format!("count, __slot = {slot}")),
            false => self.attribute(&format!("__slot = {slot}")),
        }
    }

    /// `#[::wasmprof::instrument(test)] `: a test, recorded at the root.
    pub(crate) fn test_attr(&self) -> String {
        self.attribute("test")
    }

    /// `#[::wasmprof::skip] `.
    pub(crate) fn skip_attr(&self) -> String {
        format!("#[::{}::skip] ", self.name)
    }
}

/// One crate to rewrite.
#[derive(Debug, Clone)]
pub(crate) struct CrateSpec {
    /// The crate's name as code spells it (`my_crate`), for patterns.
    pub crate_name: String,
    /// The directory of its `Cargo.toml`; no file outside it is rewritten.
    pub package_root: PathBuf,
    /// The root file of each target to instrument (library, binaries).
    pub roots: Vec<PathBuf>,
    pub runtime: Runtime,
    pub filter: Filter,
    /// Instrument its functions (as `filter` allows): crate-wide proper.
    pub functions: bool,
    /// Mark its `#[test]` and `#[wasm_bindgen_test]` functions as tests
    /// (`cargo wasmprof test`), whatever `functions` and `filter` say.
    pub tests: bool,
    /// Whether a bare `#[instrument]`/`#[skip]` is wasmprof's (the crate
    /// depends on the runtime and may import them by name).
    pub bare_attributes_are_ours: bool,
    /// A dependency rather than the user's own crate: its warnings are
    /// silenced, as cargo silences a registry crate's.
    pub dependency: bool,
    /// Edition 2015, where `::wasmprof` and `::core` paths start at the
    /// crate root and need `extern crate` items there.
    pub edition_2015: bool,
    /// A crate the attribute's own implementation depends on (syn,
    /// proc-macro2, quote, unicode-ident): it cannot use the attribute, so
    /// each body is wrapped in the runtime's `__instrument_body!` directly,
    /// and `runtime` is `wasmprof-core`. `async fn`s are left out.
    pub direct: bool,
    /// `--memory`: wrap the crate's `#[global_allocator]` in the runtime's
    /// recording allocator.
    pub wrap_allocator: bool,
}

/// How many functions of each tier a crate's rewrite gave an index in
/// the crate's block of per-thread site state (the runtime's
/// `site_block`), which each root declares: with threads, one
/// thread-local per crate instead of one per function.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Slots {
    pub full: u32,
    pub counted: u32,
}

impl Slots {
    /// The next index of the tier, `counted` or full.
    pub(crate) fn take(&mut self, counted: bool) -> u32 {
        let next = if counted {
            &mut self.counted
        } else {
            &mut self.full
        };
        *next += 1;
        *next - 1
    }

    /// The block's declaration, on a line of its own at a root's end.
    fn declaration(&self, runtime: &Runtime) -> String {
        format!(
            "::{}::__site_block!({}, {});\n",
            runtime.name, self.full, self.counted
        )
    }
}

/// What the rewrite found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Functions that will be instrumented (fully or counted).
    pub instrumented: usize,
    /// Below `--min-size`, and counted only (included in `instrumented`).
    pub counted: usize,
    /// Below `--min-size`, and left out (`--no-count-small`).
    pub small: usize,
    /// Left out by include/exclude patterns.
    pub excluded: usize,
    /// Modules left out whole by exclude patterns (not read at all, so
    /// their functions are not counted in `excluded`), by path.
    pub excluded_modules: Vec<String>,
    /// `const fn`, naked functions, allocator methods.
    pub not_instrumentable: usize,
    /// Items carrying the user's own `#[wasmprof::skip]` or
    /// `#[wasmprof::instrument]`.
    pub left_alone: usize,
    /// `GlobalAlloc`/`Allocator` impls: the crate is an allocator.
    pub allocators: usize,
    /// `#[test]`s in `macro_rules!` bodies, marked as tests.
    pub macro_tests: usize,
    /// `#[global_allocator]`s wrapped in the recording one (`--memory`).
    pub wrapped_allocators: usize,
}

impl Stats {
    fn add(&mut self, other: &Stats) {
        self.instrumented += other.instrumented;
        self.counted += other.counted;
        self.small += other.small;
        self.excluded += other.excluded;
        self.excluded_modules
            .extend(other.excluded_modules.iter().cloned());
        self.not_instrumentable += other.not_instrumentable;
        self.left_alone += other.left_alone;
        self.allocators += other.allocators;
        self.wrapped_allocators += other.wrapped_allocators;
        self.macro_tests += other.macro_tests;
    }
}

/// A function the rewrite instruments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planned {
    pub file: PathBuf,
    /// The line of the function's name, which the reports will show.
    pub line: usize,
    /// The line its item starts on (its first attribute but doc
    /// comments): a compile error there is this function's.
    pub first_line: usize,
    /// Its path in the crate without the crate name: `parser::Parser::expr`.
    pub path: String,
    pub kind: PlannedKind,
    /// Counted only (the function is below `--min-size`).
    pub counted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlannedKind {
    Function,
    Method,
    DefaultMethod,
    /// A `#[test]` or `#[wasm_bindgen_test]` function.
    Test,
}

/// The rewritten crate.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rewritten {
    /// New contents of the files that changed, by original path.
    pub files: BTreeMap<PathBuf, String>,
    /// Every module file that was read.
    pub read: BTreeSet<PathBuf>,
    pub planned: Vec<Planned>,
    pub stats: Stats,
    /// Things the user should know (sources read as text, ...).
    pub warnings: Vec<String>,
}

/// Why a crate cannot be rewritten.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RewriteError {
    #[error("{}:{line}:{column}: cannot parse this file for crate-wide instrumentation: {message}", file.display())]
    Parse {
        file: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(transparent)]
    PathOutside(Box<PathOutside>),
    #[error("the crate root {} is outside the package directory {}", root.display(), package_root.display())]
    RootOutside {
        root: PathBuf,
        package_root: PathBuf,
    },
    #[error("cannot read {}: {message}", file.display())]
    Read { file: PathBuf, message: String },
}

/// A module whose `#[path]` leads out of the package (boxed: paths are
/// large on Windows, and the error travels in every `Result`).
#[derive(Debug, thiserror::Error)]
#[error(
    "{}:{line}: the `#[path]` of module `{module}` points outside the crate, to {}; \
     crate-wide instrumentation rewrites only files inside {}. Leave the module out with \
     `exclude = [\"{module}\"]` under `[package.metadata.wasmprof]` in the crate's \
     Cargo.toml, or build without crate-wide instrumentation of this crate",
    file.display(), target.display(), package_root.display()
)]
pub(crate) struct PathOutside {
    pub file: PathBuf,
    pub line: usize,
    pub module: String,
    pub target: PathBuf,
    pub package_root: PathBuf,
}

/// A file read, its edits (`start, end, replacement`), and for a root
/// whether it is `no_std`.
type FileEdits = (Source, Vec<(usize, usize, String)>, NoStd);

/// Reads the crate from its roots and computes the rewritten files.
pub(crate) fn rewrite_crate(spec: &CrateSpec) -> Result<Rewritten, RewriteError> {
    let mut out = Rewritten::default();
    let mut queue: Vec<FileJob> = Vec::new();
    for root in &spec.roots {
        if !is_inside(root, &spec.package_root) {
            return Err(RewriteError::RootOutside {
                root: root.clone(),
                package_root: spec.package_root.clone(),
            });
        }
        queue.push(FileJob {
            file: root.clone(),
            module: Vec::new(),
            dir: ModDir::root(root),
        });
    }
    // Depth first, in declaration order, so that an error is the first one
    // in the source.
    queue.reverse();
    let mut edits: BTreeMap<PathBuf, FileEdits> = BTreeMap::new();
    let mut slots = Slots::default();
    while let Some(job) = queue.pop() {
        if !out.read.insert(job.file.clone()) {
            continue;
        }
        let source = Source::read(&job.file)?;
        let result = source.parse().and_then(|file| {
            let mut walk = FileWalk::new(spec, &source, slots);
            walk.items(&file.items, &job.module, &job.dir)?;
            let no_std = no_std_condition(&file.attrs);
            Ok((
                walk.insertions,
                walk.queue,
                walk.stats,
                walk.planned,
                no_std,
                walk.slots,
            ))
        });
        // This file's spans are no longer needed: the next file starts a
        // fresh source map instead of growing this one.
        proc_macro2::extra::invalidate_current_thread_spans();
        let (insertions, mut found, stats, planned, no_std, taken) = result?;
        slots = taken;
        for included in items::included_sources(&source.text) {
            out.warnings.push(format!(
                "{} reads `{included}` as text (include_str!/include_bytes!): \
                 it will read the instrumented copy, with attributes added",
                job.file.display()
            ));
        }
        out.stats.add(&stats);
        out.planned.extend(planned);
        if !insertions.is_empty() || spec.roots.contains(&job.file) {
            edits.insert(job.file.clone(), (source, insertions, no_std));
        }
        found.reverse();
        queue.extend(found);
    }
    if out.stats.instrumented == 0
        && out.stats.macro_tests == 0
        && out.stats.wrapped_allocators == 0
    {
        // Nothing to instrument: the crate stays as it is.
        return Ok(out);
    }
    for (path, (source, mut insertions, no_std)) in edits {
        let is_root = spec.roots.contains(&path);
        if is_root && spec.dependency {
            // Cargo caps a registry crate's lints; the copy is a path crate,
            // whose lints cargo would show.
            // First, even before an attribute inserted at the same place:
            // an inner attribute must precede every outer one.
            insertions.insert(
                0,
                (source.skip, source.skip, "#![allow(warnings)] ".to_owned()),
            );
        }
        let mut text = edit_all(&source.text, &insertions);
        if is_root && spec.edition_2015 {
            append_2015_externs(&mut text, &no_std, &spec.runtime);
        }
        if is_root && slots != Slots::default() {
            // Sized for every root's functions: a module file may be in
            // several of the package's crates.
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&slots.declaration(&spec.runtime));
        }
        if text != source.text {
            out.files.insert(path, text);
        }
    }
    Ok(out)
}

/// Whether a crate root declares `#![no_std]`, and under which `cfg`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoStd {
    Never,
    Always,
    /// `#![cfg_attr(PREDICATE, no_std)]`.
    When(String),
}

fn no_std_condition(attrs: &[syn::Attribute]) -> NoStd {
    use syn::punctuated::Punctuated;
    use syn::{Meta, Token};
    for attr in attrs {
        if attr.path().is_ident("no_std") {
            return NoStd::Always;
        }
        if attr.path().is_ident("cfg_attr") {
            let Ok(list) = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            else {
                continue;
            };
            let mut parts = list.iter();
            let Some(predicate) = parts.next() else {
                continue;
            };
            if parts.any(|m| m.path().is_ident("no_std")) {
                return NoStd::When(quote::ToTokens::to_token_stream(predicate).to_string());
            }
        }
    }
    NoStd::Never
}

/// In edition 2015 `::wasmprof::...` and `::core::...` start at the crate
/// root: `extern crate` items put them there (`core` is there already in a
/// `no_std` crate). They go on new lines at the end, which moves no line.
fn append_2015_externs(text: &mut String, no_std: &NoStd, runtime: &Runtime) {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    match no_std {
        NoStd::Always => {}
        NoStd::Never => text.push_str("#[allow(unused_extern_crates)] extern crate core;\n"),
        NoStd::When(predicate) => text.push_str(&format!(
            "#[cfg(not({predicate}))] #[allow(unused_extern_crates)] extern crate core;\n"
        )),
    }
    text.push_str(&format!(
        "#[allow(unused_extern_crates)] extern crate {};\n",
        runtime.name
    ));
}

#[cfg(test)]
mod tests;
