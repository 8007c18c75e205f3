//! How a WASI 0.2 component (`wasm32-wasip2`) hands its profile over.
//!
//! A component can export nothing outside its WIT world, so the core
//! module's `__wasmprof_snapshot` export does not reach the host. Two ways
//! take its place:
//!
//! - the export `wasmprof:runtime/snapshot@0.1.0`, whose `take` returns the
//!   snapshot's bytes: what `cargo wasmprof run` calls after a command or
//!   after the last request to an HTTP handler, the instance still alive;
//! - a file: when `WASMPROF_SNAPSHOT` names a path, the snapshot is written
//!   there as the program exits (`atexit`) and when it panics (a chained
//!   panic hook, since a panic on WebAssembly aborts and runs no `atexit`).
//!   This is how a run under any WASI 0.2 host, such as `wasmtime run` or
//!   jco, leaves a profile that `cargo wasmprof report --input` reads.

use std::sync::Once;

wit_bindgen::generate!({
    inline: "
        package wasmprof:runtime@0.1.0;

        /// The profile of the instance so far.
        interface snapshot {
            /// The bytes of a wasmprof snapshot (they start with `WPRF`).
            take: func() -> list<u8>;
        }

        world profiled {
            export snapshot;
        }
    ",
    world: "profiled",
});

/// The variable that names the file the snapshot is written to at exit.
const SNAPSHOT_PATH: &str = "WASMPROF_SNAPSHOT";

struct Runtime;

impl exports::wasmprof::runtime::snapshot::Guest for Runtime {
    fn take() -> Vec<u8> {
        crate::snapshot::take().encode()
    }
}

export!(Runtime);

/// Sets up the file handover, once, when the first function registers:
/// nothing is installed in a program that never calls an instrumented
/// function.
pub(crate) fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        unsafe extern "C" {
            fn atexit(callback: extern "C" fn()) -> i32;
        }
        // SAFETY: wasi-libc's `atexit`, given a function that lives as long
        // as the program.
        unsafe { atexit(write_at_exit) };
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            write_snapshot_file();
        }));
    });
}

extern "C" fn write_at_exit() {
    write_snapshot_file();
}

/// Writes the snapshot to `$WASMPROF_SNAPSHOT`, if set. A failure is told
/// on stderr: the program's own exit must not change because of it.
fn write_snapshot_file() {
    let Some(path) = std::env::var_os(SNAPSHOT_PATH) else {
        return;
    };
    let bytes = {
        let _untracked = crate::memory::Untracked::begin();
        crate::snapshot::take().encode()
    };
    if let Err(error) = std::fs::write(&path, bytes) {
        eprintln!(
            "wasmprof: could not write the profile to {} ({SNAPSHOT_PATH}): {error}",
            std::path::Path::new(&path).display()
        );
    }
}
