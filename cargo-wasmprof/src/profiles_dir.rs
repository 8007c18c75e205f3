//! Where the command keeps profiles: `<target-dir>/wasmprof/profiles/`, one
//! file per run, never overwritten, so a failed run cannot destroy an
//! earlier one. The library reads and writes profile files; choosing their
//! names and places is the command's.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

/// The profiles directory under a target directory.
pub(crate) fn profiles_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("wasmprof").join("profiles")
}

/// A fresh file name for a run of `package`: `<package>-<unix ms>.wasmprof.json`,
/// with a counter added should two runs end in the same millisecond. The
/// name is reserved by creating the file empty, so that two processes
/// ending at once cannot both choose it; the profile is renamed over it.
pub(crate) fn new_profile_path(dir: &Path, package: &str) -> PathBuf {
    new_file_path(dir, package, "wasmprof.json")
}

/// [`new_profile_path`] for another kind of file: `<package>-<unix ms>.<extension>`.
pub(crate) fn new_file_path(dir: &Path, package: &str, extension: &str) -> PathBuf {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let _ = std::fs::create_dir_all(dir);
    let mut path = dir.join(format!("{package}-{millis}.{extension}"));
    let mut n = 1;
    loop {
        match std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // Created, or not creatable at all: writing will say why.
            _ => return path,
        }
        path = dir.join(format!("{package}-{millis}-{n}.{extension}"));
        n += 1;
    }
}

/// The most recently written profile in `dir`.
pub(crate) fn latest_profile(dir: &Path) -> Result<Option<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("could not list {}", dir.display())),
    };
    let mut newest: Option<(SystemTime, PathBuf)> = None;
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        if !path.to_string_lossy().ends_with(".wasmprof.json") {
            continue;
        }
        let modified = entry.metadata()?.modified()?;
        if newest
            .as_ref()
            .is_none_or(|(t, p)| (modified, &path) > (*t, p))
        {
            newest = Some((modified, path));
        }
    }
    Ok(newest.map(|(_, p)| p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_collide_and_latest_is_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(latest_profile(dir.path()).unwrap(), None);
        let a = new_profile_path(dir.path(), "demo");
        std::fs::write(&a, "{}").unwrap();
        let b = new_profile_path(dir.path(), "demo");
        assert_ne!(a, b);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&b, "{}").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        assert_eq!(latest_profile(dir.path()).unwrap(), Some(b));
    }

    #[test]
    fn missing_directory_has_no_latest() {
        assert_eq!(
            latest_profile(Path::new("/nonexistent/wasmprof")).unwrap(),
            None
        );
    }
}
