//! Ctrl-C while a browser runs: the run ends as a timeout would, with the
//! profile pulled and the browser shut down, instead of the process dying
//! with Chromium still running (it is in a process group of its own, so the
//! terminal's SIGINT does not reach it).

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// From now on, Ctrl-C sets a flag that [`interrupted`] reads; a second
/// Ctrl-C ends the process at once.
pub(crate) fn catch_ctrl_c() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    });
}

/// Whether Ctrl-C was pressed since [`catch_ctrl_c`].
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
