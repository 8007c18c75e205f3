//! One command at a time in a directory wasmprof writes and builds in.
//!
//! - **A shadow copy.** Every command with the same rewrite settings writes
//!   and builds the same copy. Two at once (two terminals, an editor's task
//!   beside a test run) would each write it while the other's cargo reads
//!   it: a test binary could be compiled from another command's sources,
//!   whose tests are not marked.
//! - **A kind's build directory.** cargo's own lock ends with its build,
//!   but the module it leaves at a fixed name is the next build's of the
//!   same kind to overwrite: it must be copied out first.
//!
//! Like cargo's own lock, an exclusive lock on a file in the directory is
//! held from before the first write until the result is safe; a second
//! command waits, and says so.

use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

/// Held while the directory is written and built in; released when the
/// last clone is dropped.
#[derive(Debug, Clone)]
pub(crate) struct DirLock {
    _file: Arc<File>,
}

impl DirLock {
    /// Locks the directory `root`, waiting for another command that holds
    /// it.
    pub(crate) fn acquire(root: &Path) -> Result<DirLock> {
        std::fs::create_dir_all(root)
            .with_context(|| format!("could not create {}", root.display()))?;
        let path = root.join(".lock");
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("could not open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                crate::terminal::status(
                    "Blocking",
                    &format!(
                        "waiting for another cargo wasmprof command to finish with {}",
                        root.display()
                    ),
                );
                file.lock()
                    .with_context(|| format!("could not lock {}", path.display()))?;
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("could not lock {}", path.display()));
            }
        }
        Ok(DirLock {
            _file: Arc::new(file),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_command_waits_until_the_first_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        let clone = first.clone();
        let other = File::open(dir.path().join(".lock")).unwrap();
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        drop(first);
        // A clone still holds it.
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        drop(clone);
        other.try_lock().unwrap();
    }
}
