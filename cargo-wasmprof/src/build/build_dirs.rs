//! Where cargo builds each kind of build: a build directory per kind, with
//! the compile-time tools (proc macros, build scripts and what they depend
//! on) in one directory that every kind shares.
//!
//! A kind changes the runtime and every crate that depends on it, and no
//! tool: the tools are the same files for every kind. A directory per
//! kind means going back to a kind built before compiles nothing, as going
//! back to `--release` does with cargo's own directory per profile; the
//! price is each kind's first build, which compiles the crates of its own
//! target (js-sys, serde, …) once for it. The tools, which are most of a
//! tree's proc macros and their syn, are compiled once for all.
//!
//! With `--target`, cargo keeps the tools in `<dir>/<profile>/` and the
//! crates for the target in `<dir>/<target>/<profile>/`. So in each kind's
//! directory, `<profile>` is a link to the shared tools' directory of that
//! profile. cargo locks both directories while it builds, so two kinds
//! build one after the other where they share tools, and each in its own
//! directory otherwise.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::kind::BuildKind;

/// The directory that holds the build directories.
const BUILDS: &str = "builds";
/// The tools' directory, beside the kinds' (no kind's name starts with a dot).
const TOOLS: &str = ".tools";
/// A plain build's directory: the user's build with the runtime off.
const PLAIN: &str = "plain";

/// The build directory of `kind` (none: a plain build) under wasmprof's
/// directory `wasmprof_dir`.
pub(crate) fn build_dir(wasmprof_dir: &Path, kind: Option<&BuildKind>) -> PathBuf {
    wasmprof_dir
        .join(BUILDS)
        .join(kind.map_or_else(|| PLAIN.to_owned(), BuildKind::dir_name))
}

/// Makes `build_dir`'s tools for `profile` (a cargo profile's name) the
/// shared ones, before cargo builds there.
pub(crate) fn share_tools(build_dir: &Path, profile: &str) -> Result<()> {
    let profile_dir = profile_dir_name(profile);
    let Some(builds) = build_dir.parent() else {
        return Ok(());
    };
    let tools = builds.join(TOOLS).join(profile_dir);
    std::fs::create_dir_all(&tools)
        .with_context(|| format!("could not create {}", tools.display()))?;
    std::fs::create_dir_all(build_dir)
        .with_context(|| format!("could not create {}", build_dir.display()))?;
    let link = build_dir.join(profile_dir);
    if link.symlink_metadata().is_ok() {
        // Linked before, or a directory of the kind's own.
        return Ok(());
    }
    // Relative, so that the target directory can move. Sharing only saves
    // time: where the link cannot be made (Windows without the right to
    // make one), or another command made it first, the build goes on with
    // what is there, and a kind without the link compiles its own tools.
    let target = Path::new("..").join(TOOLS).join(profile_dir);
    let _ = symlink_dir(&target, &link);
    Ok(())
}

/// The directory cargo names after a profile.
fn profile_dir_name(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    }
}

#[cfg(unix)]
fn symlink_dir(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn symlink_dir(target: &Path, link: &Path) -> io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

#[cfg(not(any(unix, windows)))]
fn symlink_dir(_target: &Path, _link: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_builds_apart_and_a_plain_build_apart_from_them() {
        let root = Path::new("/t/wasmprof");
        let host = BuildKind::new("host", None);
        let copy = BuildKind::new("none", Some("all-min40-count"));
        assert_eq!(build_dir(root, None), root.join("builds/plain"));
        assert_eq!(build_dir(root, Some(&host)), root.join("builds/host"));
        assert_eq!(
            build_dir(root, Some(&copy)),
            root.join("builds/none+all-min40-count")
        );
    }

    #[test]
    #[cfg(unix)]
    fn every_kind_s_tools_are_the_shared_ones_of_their_profile() {
        let temp = tempfile::tempdir().unwrap();
        let host = build_dir(temp.path(), Some(&BuildKind::new("host", None)));
        let none = build_dir(temp.path(), Some(&BuildKind::new("none", None)));
        share_tools(&host, "dev").unwrap();
        share_tools(&none, "dev").unwrap();
        share_tools(&none, "release").unwrap();
        // Twice is the same as once.
        share_tools(&host, "dev").unwrap();
        std::fs::write(host.join("debug/tool"), "built once").unwrap();
        assert_eq!(
            std::fs::read_to_string(none.join("debug/tool")).unwrap(),
            "built once"
        );
        assert!(none.join("release").is_dir());
        assert!(!host.join("release").exists());
        // The crates for a target stay the kind's own.
        std::fs::create_dir_all(host.join("wasm32-wasip1/debug")).unwrap();
        assert!(!none.join("wasm32-wasip1").exists());
    }

    #[test]
    fn profiles_are_named_as_cargo_names_their_directories() {
        assert_eq!(profile_dir_name("dev"), "debug");
        assert_eq!(profile_dir_name("test"), "debug");
        assert_eq!(profile_dir_name("release"), "release");
        assert_eq!(profile_dir_name("bench"), "release");
        assert_eq!(profile_dir_name("profiling"), "profiling");
    }
}
