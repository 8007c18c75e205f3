//! The shadow copy: where rewritten crates are built from.
//!
//! The workspace is copied to `<root>/workspace` with its layout, so that
//! cargo passes rustc the same paths relative to the workspace root for its
//! members (`app/src/lib.rs`) as it does for the original. A dependency
//! rewritten on its own goes inside that copy, under
//! `.wasmprof-deps/<its original absolute path>`: being a path crate inside
//! the workspace directory, it too gets a relative path from cargo,
//! `.wasmprof-deps/home/u/.cargo/registry/…/src/lib.rs`, which the one flag
//! `--remap-path-prefix=.wasmprof-deps=/` maps back to the original.
//!
//! Every copy builds in the one build directory of its target directory.
//! cargo names a path crate's artifacts by its path relative to the
//! workspace, which every copy shares: a `--cfg` naming the copy's settings
//! keeps one copy's rewritten crates apart from another's. cargo hashes
//! no flag at all when one is `--remap-path-prefix`, so the remapping
//! reaches rustc through `build::rustc_wrapper` instead.
//!
//! Files are written only when their content changes: cargo decides what to
//! recompile from file times, so an unchanged crate keeps its artifacts.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Directories never copied: version control, JavaScript packages.
const SKIPPED_NAMES: &[&str] = &[".git", ".hg", ".svn", ".jj", "node_modules"];

/// The directory of the workspace copy that holds dependency copies.
pub(crate) const DEPENDENCIES_DIR: &str = ".wasmprof-deps";

/// The rustc flag mapping dependency copies back to their originals.
pub(crate) fn remap_flags() -> Vec<String> {
    vec![format!("--remap-path-prefix={DEPENDENCIES_DIR}=/")]
}

/// The shadow area of one configuration of the rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShadowRoot {
    pub root: PathBuf,
}

impl ShadowRoot {
    pub(crate) fn new(root: PathBuf) -> ShadowRoot {
        ShadowRoot { root }
    }

    /// The copy of the workspace root.
    pub(crate) fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }

    /// The copy of `original`, inside the workspace root, in the workspace
    /// copy.
    pub(crate) fn in_workspace(&self, original: &Path, workspace_root: &Path) -> Option<PathBuf> {
        let relative = original.strip_prefix(workspace_root).ok()?;
        Some(self.workspace().join(relative))
    }

    /// Where the copy of a dependency at (absolute) `original` goes.
    pub(crate) fn dependency(&self, original: &Path) -> PathBuf {
        let mut out = self.workspace().join(DEPENDENCIES_DIR);
        for component in original.components() {
            match component {
                Component::Prefix(prefix) => {
                    let text = prefix.as_os_str().to_string_lossy();
                    out.push(text.replace([':', '\\', '?', '/'], ""));
                }
                Component::RootDir | Component::CurDir => {}
                Component::ParentDir => out.push(".."),
                Component::Normal(part) => out.push(part),
            }
        }
        out
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SyncStats {
    pub written: usize,
    pub removed: usize,
    pub unchanged: usize,
}

/// Makes `dst` a copy of `src`: files in `overrides` (by original path) get
/// that content instead of their own; `skip` directories (absolute
/// originals) and version-control and `node_modules` directories, and
/// directories holding a `CACHEDIR.TAG` (cargo's target directories), are
/// not copied; `keep` (paths relative to `src`) are neither copied nor
/// removed. Files of `dst` that `src` no longer has are removed.
pub(crate) fn sync_tree(
    src: &Path,
    dst: &Path,
    overrides: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
    skip: &[PathBuf],
    keep: &[&str],
) -> io::Result<SyncStats> {
    let mut stats = SyncStats::default();
    let mut produced = BTreeSet::new();
    let mut skipped = BTreeSet::new();
    let keep: BTreeSet<PathBuf> = keep.iter().map(PathBuf::from).collect();
    let mut visited = BTreeSet::new();
    copy_dir(
        src,
        src,
        dst,
        &mut Copy {
            overrides,
            skip,
            keep: &keep,
            produced: &mut produced,
            skipped: &mut skipped,
            stats: &mut stats,
            visited: &mut visited,
        },
    )?;
    // What was not copied is not the sync's to remove either (another copy
    // may live there, such as a dependency's inside a skipped directory).
    let untouched: BTreeSet<PathBuf> = keep.union(&skipped).cloned().collect();
    remove_stale(dst, dst, &produced, &untouched, &mut stats)?;
    Ok(stats)
}

struct Copy<'a> {
    overrides: &'a std::collections::BTreeMap<PathBuf, Vec<u8>>,
    skip: &'a [PathBuf],
    keep: &'a BTreeSet<PathBuf>,
    produced: &'a mut BTreeSet<PathBuf>,
    skipped: &'a mut BTreeSet<PathBuf>,
    stats: &'a mut SyncStats,
    visited: &'a mut BTreeSet<PathBuf>,
}

fn copy_dir(base: &Path, dir: &Path, dst_base: &Path, copy: &mut Copy<'_>) -> io::Result<()> {
    // A symbolic link may lead back up: every real directory once.
    let real = fs::canonicalize(dir)?;
    if !copy.visited.insert(real) {
        return Ok(());
    }
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)?.collect::<io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let relative = path.strip_prefix(base).expect("inside base").to_path_buf();
        if copy.keep.contains(&relative) {
            continue;
        }
        // Follow symbolic links: the copy holds what the original reads.
        let Ok(metadata) = fs::metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            if skipped_dir(&path, entry.file_name().as_os_str(), copy.skip) {
                copy.skipped.insert(relative);
                continue;
            }
            copy_dir(base, &path, dst_base, copy)?;
        } else if metadata.is_file() {
            let target = dst_base.join(&relative);
            let changed = match copy.overrides.get(&path) {
                Some(content) => write_if_changed(&target, content)?,
                None => copy_if_changed(&path, &metadata, &target)?,
            };
            if changed {
                copy.stats.written += 1;
            } else {
                copy.stats.unchanged += 1;
            }
            copy.produced.insert(relative);
        }
    }
    Ok(())
}

fn skipped_dir(path: &Path, name: &OsStr, skip: &[PathBuf]) -> bool {
    SKIPPED_NAMES.iter().any(|s| name == *s)
        || skip.iter().any(|s| s == path)
        || path.join("CACHEDIR.TAG").exists()
}

fn remove_stale(
    base: &Path,
    dir: &Path,
    produced: &BTreeSet<PathBuf>,
    keep: &BTreeSet<PathBuf>,
    stats: &mut SyncStats,
) -> io::Result<()> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let relative = path.strip_prefix(base).expect("inside base").to_path_buf();
        if keep.contains(&relative) {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            remove_stale(base, &path, produced, keep, stats)?;
        } else if !produced.contains(&relative) {
            fs::remove_file(&path)?;
            stats.removed += 1;
        }
    }
    Ok(())
}

/// Writes `content` unless the file already holds exactly that; the write
/// goes through a temporary file, so a concurrent build never reads half a
/// file. Returns whether it wrote.
pub(crate) fn write_if_changed(path: &Path, content: &[u8]) -> io::Result<bool> {
    if let Ok(existing) = fs::read(path)
        && existing == content
    {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let temporary = temporary_path(path);
    fs::write(&temporary, content)?;
    fs::rename(&temporary, path)?;
    Ok(true)
}

/// Copies `src` unless `dst` is already the same: same size and not older
/// than `src` is taken as the same (as cargo takes it), else the bytes are
/// compared.
fn copy_if_changed(src: &Path, src_metadata: &fs::Metadata, dst: &Path) -> io::Result<bool> {
    if let Ok(dst_metadata) = fs::metadata(dst) {
        let newer = match (src_metadata.modified(), dst_metadata.modified()) {
            (Ok(s), Ok(d)) => d >= s,
            _ => false,
        };
        if dst_metadata.len() == src_metadata.len() && newer {
            return Ok(false);
        }
        if dst_metadata.len() == src_metadata.len() && fs::read(src)? == fs::read(dst)? {
            return Ok(false);
        }
    }
    if let Some(parent) = dst.parent() {
        fs::create_dir_all(parent)?;
    }
    let temporary = temporary_path(dst);
    fs::copy(src, &temporary)?;
    fs::rename(&temporary, dst)?;
    Ok(true)
}

fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".wasmprof-tmp-{}", std::process::id()));
    path.with_file_name(name)
}
