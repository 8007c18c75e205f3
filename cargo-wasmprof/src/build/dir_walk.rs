//! Walking a directory tree file by file: copying a module's files into a
//! run's directory, moving wasm-bindgen's output into place.

use std::path::Path;

use anyhow::{Context, Result};

/// Calls `transfer` with every file under `from` and the same place under
/// `to`, creating `to`'s directories on the way.
pub(crate) fn each_file(
    from: &Path,
    to: &Path,
    transfer: &mut dyn FnMut(&Path, &Path) -> std::io::Result<()>,
) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("could not create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("could not list {}", from.display()))?
    {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            each_file(&entry.path(), &target, transfer)?;
        } else {
            transfer(&entry.path(), &target)
                .with_context(|| format!("{} to {}", entry.path().display(), target.display()))?;
        }
    }
    Ok(())
}
