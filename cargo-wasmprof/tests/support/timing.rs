//! The timing tests measure time, so nothing of theirs may run beside
//! another: each holds [`alone`] for as long as it runs.

use std::sync::{Mutex, MutexGuard};

/// Held by a test that measures time, for its whole run: the other tests
/// of its binary wait.
pub(crate) fn alone() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    // A test that failed holding it poisons it; the next one still runs.
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
