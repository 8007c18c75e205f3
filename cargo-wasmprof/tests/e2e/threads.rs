//! Programs that spread their work over threads. `examples/threads-wasi`
//! spawns four named std threads on `wasm32-wasip1-threads`; the embedded
//! wasmtime runs it with wasi-threads, and every call on every thread is
//! in the profile, checked against the program's own count and the
//! oracle's.

use crate::support::*;

const THREADED: &str = "wasm32-wasip1-threads";

/// The program's own line: 4 workers, 100 ranges, 40,000 mixes.
const OWN_COUNT: &str = "threads-wasi: 4 workers, 100 hash_range, 40000 mix";

#[test]
fn wasmtime_runs_every_thread_and_counts_every_call() {
    let run = wasmprof(&[
        "run",
        "-p",
        "threads-wasi",
        "--release",
        "--target",
        THREADED,
        "--host",
        "wasmtime",
        "--verify-counts",
    ]);
    run.assert_success();
    assert!(run.stdout.contains(OWN_COUNT), "{}", run.stdout);
    let calls = calls_by_function(&run.profile());
    assert_eq!(calls["threads_wasi::worker"], 4);
    assert_eq!(calls["threads_wasi::hash_range"], 100);
    assert_eq!(calls["threads_wasi::mix"], 40_000);
}

/// Node's WASI has no wasi-threads: the run is refused before the build,
/// naming the host that can run it, instead of Node's own stack trace.
#[test]
fn node_refuses_a_threaded_target_before_building_and_names_wasmtime() {
    let run = wasmprof(&[
        "run",
        "-p",
        "threads-wasi",
        "--target",
        THREADED,
        "--host",
        "node",
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot start threads") && run.stderr.contains("--host wasmtime"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);
    let test = wasmprof(&[
        "test",
        "-p",
        "threads-wasi",
        "--target",
        THREADED,
        "--host",
        "node",
    ]);
    assert_eq!(test.code(), Some(1), "{}", test.stderr);
    assert!(test.stderr.contains("--host wasmtime"), "{}", test.stderr);
}
