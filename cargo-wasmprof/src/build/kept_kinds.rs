//! Every kind of build kept beside the others in the one build directory,
//! so that going back to a kind built before compiles nothing.
//!
//! The kinds share one build directory and compile the runtime and its
//! dependents in place ([`super::kind`]): their artifacts have the same
//! names in every kind, which is what keeps their `TypeId`s the same. So a
//! switch from one kind to another compiled those crates again, and so did
//! the switch back: `bench` (four kinds) on a crate instrumented crate-wide
//! compiled it four times on every run.
//!
//! Before cargo builds a kind, the artifacts of the crates that depend on
//! the kind are moved out of cargo's directories into a store of the kind
//! that was there, and those of the kind to build are moved back in, if it
//! was built before. cargo then finds a build of that kind as it left it,
//! and its own fingerprints decide, as always, what is still fresh: the
//! store holds cargo's own files, never a judgement of ours.
//!
//! A unit's fingerprint and its outputs must never meet another kind's.
//! Fingerprints leave first and come back last, so that a move cut short
//! leaves outputs without a fingerprint (which cargo builds again), never
//! a fingerprint beside another kind's outputs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::kind::BuildKind;

/// The store's directory in the build directory, which cargo leaves alone
/// and `cargo clean` removes with the rest.
const STORE: &str = ".wasmprof-kinds";
/// In each of cargo's output directories: the kind whose artifacts are in
/// place. Missing when it is not known (a move was cut short, or the
/// directory is older than the store).
const IN_PLACE: &str = ".wasmprof-kind";
/// A plain build's kind: the runtime switched off.
const PLAIN: &str = "plain";

/// The packages and crates whose artifacts differ from kind to kind: the
/// runtime, the crates rewritten crate-wide, the workspace's members and
/// whatever depends on any of them.
#[derive(Debug, Clone, Default)]
pub(crate) struct KindDependent {
    /// Package names, which name cargo's `.fingerprint/` and `build/`
    /// entries.
    packages: BTreeSet<String>,
    /// Crate names (a target's name with `_` for `-`), which name the
    /// files in `deps/` and the ones cargo copies beside it, and the
    /// entries of `incremental/`.
    crates: BTreeSet<String>,
}

/// The runtime's packages, which every instrumented build depends on,
/// whether the workspace names them or a rewrite adds them.
const RUNTIME: [&str; 2] = ["wasmprof-core", "wasmprof-rt"];

impl KindDependent {
    /// What of `metadata`'s packages depends on the kind, with `rewritten`
    /// the crates a shadow copy rewrites (which depend on the runtime in
    /// the copy, if not in the workspace).
    pub(crate) fn of(metadata: &cargo_metadata::Metadata, rewritten: &[String]) -> KindDependent {
        let seeds = |package: &cargo_metadata::Package| {
            RUNTIME.contains(&package.name.as_str())
                || metadata.workspace_members.contains(&package.id)
                || rewritten
                    .iter()
                    .any(|name| crate_name(name) == crate_name(&package.name))
        };
        let mut dependent: BTreeSet<&cargo_metadata::PackageId> = metadata
            .packages
            .iter()
            .filter(|p| seeds(p))
            .map(|p| &p.id)
            .collect();
        match &metadata.resolve {
            // A package that depends on one in the set is in it, until no
            // more join.
            Some(resolve) => loop {
                let before = dependent.len();
                for node in &resolve.nodes {
                    if node.deps.iter().any(|d| dependent.contains(&d.pkg)) {
                        dependent.insert(&node.id);
                    }
                }
                if dependent.len() == before {
                    break;
                }
            },
            // Without the graph, every package: moving too much costs a
            // rebuild at most, moving too little is what must not happen.
            None => dependent.extend(metadata.packages.iter().map(|p| &p.id)),
        }
        let mut set = KindDependent::default();
        for package in metadata
            .packages
            .iter()
            .filter(|p| dependent.contains(&p.id))
        {
            set.packages.insert(package.name.to_string());
            set.crates.insert(crate_name(&package.name));
            set.crates
                .extend(package.targets.iter().map(|t| crate_name(&t.name)));
        }
        for name in RUNTIME
            .iter()
            .copied()
            .chain(rewritten.iter().map(String::as_str))
        {
            set.packages.insert(name.to_owned());
            set.packages.insert(name.replace('_', "-"));
            set.crates.insert(crate_name(name));
        }
        set
    }

    /// Whether an entry of `.fingerprint/`, `build/` or `incremental/` is
    /// one of a unit of these packages: `NAME-HASH`.
    fn owns_unit_dir(&self, dir: &str, entry: &str) -> bool {
        let Some((name, _)) = split_hash(entry) else {
            return false;
        };
        match dir {
            "incremental" => self.crates.contains(name),
            _ => self.packages.contains(name),
        }
    }

    /// Whether a file of `deps/` (or one cargo copied out of it) is one of
    /// these crates': `[lib]NAME[-HASH].EXT`.
    fn owns_output(&self, file: &str) -> bool {
        let stem = file.split('.').next().unwrap_or(file);
        let name = split_hash(stem).map_or(stem, |(name, _)| name);
        self.crates.contains(name)
            || name
                .strip_prefix("lib")
                .is_some_and(|n| self.crates.contains(n))
    }
}

/// A crate's name as rustc knows it.
fn crate_name(name: &str) -> String {
    name.replace('-', "_")
}

/// `NAME-HASH` as `(NAME, HASH)`, where cargo's hash is 16 hex digits.
fn split_hash(entry: &str) -> Option<(&str, &str)> {
    let (name, hash) = entry.rsplit_once('-')?;
    (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some((name, hash))
}

/// The directory cargo names a profile's output after.
fn profile_dir(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    }
}

/// A kind's name in the store.
fn store_name(kind: Option<&BuildKind>) -> String {
    let identity = kind.map_or(PLAIN, BuildKind::identity);
    identity
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '+'
            }
        })
        .collect()
}

/// Puts `kind`'s artifacts in place for a build for `target` with cargo's
/// `profile` in `build_dir`, keeping the ones in place for their kind.
/// The caller holds the build directory's lock.
pub(crate) fn bring_in(
    build_dir: &Path,
    target: &str,
    profile: &str,
    kind: Option<&BuildKind>,
    dependent: &KindDependent,
) -> Result<()> {
    let wanted = store_name(kind);
    // The target's own output, and the host's (build scripts, proc macros,
    // and crates of theirs rewritten crate-wide).
    let profile = profile_dir(profile);
    for relative in [Path::new(target).join(profile), PathBuf::from(profile)] {
        switch(build_dir, &relative, &wanted, dependent).with_context(|| {
            format!(
                "could not put the build of kind {wanted} in place in {}",
                build_dir.join(&relative).display()
            )
        })?;
    }
    Ok(())
}

/// Switches one of cargo's output directories (`relative` to `build_dir`)
/// to the kind `wanted`.
fn switch(
    build_dir: &Path,
    relative: &Path,
    wanted: &str,
    dependent: &KindDependent,
) -> Result<()> {
    let live = build_dir.join(relative);
    if !live.is_dir() {
        // Nothing built here yet: cargo starts it, as `wanted`.
        return bring_back(build_dir, relative, wanted, dependent, &live);
    }
    let marker = live.join(IN_PLACE);
    let in_place = std::fs::read_to_string(&marker).ok();
    if in_place.as_deref() == Some(wanted) {
        return Ok(());
    }
    if let Some(in_place) = &in_place {
        // The store's copy of that kind is older than what is in place.
        let store = build_dir.join(STORE).join(in_place).join(relative);
        remove_dir_if_there(&store)?;
        move_units(&live, &store, dependent, Direction::Leaving)?;
        std::fs::remove_file(&marker)
            .with_context(|| format!("could not remove {}", marker.display()))?;
    }
    // Not known: what is in place stays, and cargo judges each unit by
    // its fingerprint, as it did before there was a store.
    bring_back(build_dir, relative, wanted, dependent, &live)
}

/// Moves `wanted`'s stored artifacts into `live`, then marks it.
fn bring_back(
    build_dir: &Path,
    relative: &Path,
    wanted: &str,
    dependent: &KindDependent,
    live: &Path,
) -> Result<()> {
    let store = build_dir.join(STORE).join(wanted).join(relative);
    if store.is_dir() {
        move_units(&store, live, dependent, Direction::ComingBack)?;
        remove_dir_if_there(&store)?;
    }
    std::fs::create_dir_all(live)
        .with_context(|| format!("could not create {}", live.display()))?;
    let marker = live.join(IN_PLACE);
    std::fs::write(&marker, wanted).with_context(|| format!("could not write {}", marker.display()))
}

/// Which way [`move_units`] moves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// From cargo's directory to the store: fingerprints first.
    Leaving,
    /// From the store back: fingerprints last.
    ComingBack,
}

/// cargo's directories of units, fingerprints first.
const UNIT_DIRS: [&str; 4] = [".fingerprint", "build", "incremental", "deps"];

/// Moves the units of `dependent` from one of cargo's output directories
/// to another, in the order `direction` says, so that a fingerprint is
/// never in place without its outputs.
fn move_units(
    from: &Path,
    to: &Path,
    dependent: &KindDependent,
    direction: Direction,
) -> Result<()> {
    // The copies cargo makes beside `deps/` (`NAME.wasm`) are outputs.
    let beside = || move_matching(from, to, Entries::Files, |f| dependent.owns_output(f));
    let mut dirs = UNIT_DIRS;
    if direction == Direction::ComingBack {
        dirs.reverse();
        beside()?;
    }
    for dir in dirs {
        let owned = |entry: &str| match dir {
            "deps" => dependent.owns_output(entry),
            _ => dependent.owns_unit_dir(dir, entry),
        };
        move_matching(&from.join(dir), &to.join(dir), Entries::All, owned)?;
    }
    if direction == Direction::Leaving {
        beside()?;
    }
    Ok(())
}

/// Which entries of a directory [`move_matching`] looks at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entries {
    All,
    /// Files only: the output directory's own subdirectories are cargo's.
    Files,
}

/// Moves the entries of `from` that `wanted` names into `to`, replacing
/// any of the same name there.
fn move_matching(
    from: &Path,
    to: &Path,
    which: Entries,
    wanted: impl Fn(&str) -> bool,
) -> Result<()> {
    let entries = match std::fs::read_dir(from) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("could not list {}", from.display())),
    };
    let mut created = false;
    for entry in entries {
        let entry = entry.with_context(|| format!("could not list {}", from.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || !wanted(name) {
            continue;
        }
        if which == Entries::Files && entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if !created {
            std::fs::create_dir_all(to)
                .with_context(|| format!("could not create {}", to.display()))?;
            created = true;
        }
        let destination = to.join(name);
        if destination.is_dir() {
            remove_dir_if_there(&destination)?;
        }
        std::fs::rename(entry.path(), &destination).with_context(|| {
            format!(
                "could not move {} to {}",
                entry.path().display(),
                destination.display()
            )
        })?;
    }
    Ok(())
}

fn remove_dir_if_there(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("could not remove {}", dir.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dependent() -> KindDependent {
        KindDependent {
            packages: ["wasmprof-core", "long-call"].map(str::to_owned).into(),
            crates: ["wasmprof_core", "long_call"].map(str::to_owned).into(),
        }
    }

    #[test]
    fn cargo_s_names_are_told_apart_by_crate_and_hash() {
        let d = dependent();
        assert!(d.owns_unit_dir(".fingerprint", "wasmprof-core-0123456789abcdef"));
        assert!(d.owns_unit_dir("incremental", "long_call-0123456789abcdef"));
        assert!(!d.owns_unit_dir(".fingerprint", "wasmprof-wire-0123456789abcdef"));
        // A longer name with the same beginning is another crate's.
        assert!(!d.owns_unit_dir("build", "long-call-extra-0123456789abcdef"));
        assert!(!d.owns_unit_dir("build", "long-call"));
        assert!(d.owns_output("libwasmprof_core-0123456789abcdef.rlib"));
        assert!(d.owns_output("libwasmprof_core-0123456789abcdef.rmeta"));
        assert!(d.owns_output("long_call-0123456789abcdef.wasm"));
        assert!(d.owns_output("long_call.wasm"));
        assert!(d.owns_output("long_call.d"));
        assert!(!d.owns_output("libserde-0123456789abcdef.rlib"));
        assert!(!d.owns_output("long_call_extra.wasm"));
    }

    /// Writes a unit of `crate_name` as cargo lays one out, its files
    /// holding `kind`.
    fn unit(dir: &Path, package: &str, kind: &str) {
        let crate_name = crate_name(package);
        let hash = "0123456789abcdef";
        for (sub, file) in [
            (format!(".fingerprint/{package}-{hash}"), "lib-x".to_owned()),
            ("deps".to_owned(), format!("lib{crate_name}-{hash}.rlib")),
            (String::new(), format!("{crate_name}.wasm")),
        ] {
            let place = dir.join(sub);
            std::fs::create_dir_all(&place).unwrap();
            std::fs::write(place.join(file), kind).unwrap();
        }
    }

    fn read(dir: &Path, package: &str) -> [String; 3] {
        let crate_name = crate_name(package);
        let hash = "0123456789abcdef";
        [
            dir.join(format!(".fingerprint/{package}-{hash}/lib-x")),
            dir.join(format!("deps/lib{crate_name}-{hash}.rlib")),
            dir.join(format!("{crate_name}.wasm")),
        ]
        .map(|f| std::fs::read_to_string(&f).unwrap_or_else(|_| format!("{} missing", f.display())))
    }

    #[test]
    fn each_kind_finds_its_own_artifacts_again_and_the_rest_stays() {
        let build_dir = tempfile::tempdir().unwrap();
        let live = build_dir.path().join("wasm32-wasip1/release");
        let host = BuildKind::new("host", None);
        let none = BuildKind::new("none", Some("all-min40-count"));
        let d = dependent();
        let bring_in = |kind: Option<&BuildKind>| {
            bring_in(build_dir.path(), "wasm32-wasip1", "release", kind, &d).unwrap()
        };
        // The first kind: cargo builds it, with a crate no kind changes.
        bring_in(Some(&host));
        unit(&live, "long-call", "host");
        unit(&live, "serde", "shared");
        // The second: the first's artifacts leave, the shared ones stay.
        bring_in(Some(&none));
        assert!(
            read(&live, "long-call")
                .iter()
                .all(|f| f.ends_with("missing"))
        );
        assert_eq!(read(&live, "serde"), ["shared"; 3].map(str::to_owned));
        unit(&live, "long-call", "none");
        // Back to the first: its own, as it left them.
        bring_in(Some(&host));
        assert_eq!(read(&live, "long-call"), ["host"; 3].map(str::to_owned));
        assert_eq!(read(&live, "serde"), ["shared"; 3].map(str::to_owned));
        // Again the same kind: nothing moves.
        bring_in(Some(&host));
        assert_eq!(read(&live, "long-call"), ["host"; 3].map(str::to_owned));
        // And the plain build, then the second kind again.
        bring_in(None);
        unit(&live, "long-call", "plain");
        bring_in(Some(&none));
        assert_eq!(read(&live, "long-call"), ["none"; 3].map(str::to_owned));
        bring_in(None);
        assert_eq!(read(&live, "long-call"), ["plain"; 3].map(str::to_owned));
    }

    #[test]
    fn artifacts_of_an_unknown_kind_stay_for_cargo_to_judge() {
        let build_dir = tempfile::tempdir().unwrap();
        let live = build_dir.path().join("wasm32-wasip1/release");
        // A build directory from before the store: no kind is marked.
        unit(&live, "long-call", "older");
        let kind = BuildKind::new("host", None);
        bring_in(
            build_dir.path(),
            "wasm32-wasip1",
            "release",
            Some(&kind),
            &dependent(),
        )
        .unwrap();
        assert_eq!(read(&live, "long-call"), ["older"; 3].map(str::to_owned));
        assert_eq!(
            std::fs::read_to_string(live.join(IN_PLACE)).unwrap(),
            "host"
        );
    }

    #[test]
    fn a_kind_s_name_in_the_store_is_one_directory() {
        assert_eq!(store_name(None), "plain");
        assert_eq!(
            store_name(Some(&BuildKind::new("none", Some("all-min40-count")))),
            "none+all-min40-count"
        );
    }
}
