//! Programs that spread their work over threads. `examples/threads-wasi`
//! spawns four named std threads on `wasm32-wasip1-threads`; the embedded
//! wasmtime runs it with wasi-threads, and every call on every thread is
//! in the profile, checked against the program's own count and the
//! oracle's. `examples/rayon-web` runs wasm-bindgen-rayon's pool on web
//! workers in headless Chromium, read by the page from the shared memory.

use crate::support::*;
use wasmprof_profile::profile::Profile;

const THREADED: &str = "wasm32-wasip1-threads";

/// The program's own line: 4 workers, 100 ranges, 40,000 mixes.
const OWN_COUNT: &str = "threads-wasi: 4 workers, 100 hash_range, 40000 mix";

/// `cargo wasmprof run` of `threads-wasi`, released, threaded, with
/// `extra`: in wasmtime, the default host for a threaded target.
fn run_in_wasmtime(extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        "-p",
        "threads-wasi",
        "--release",
        "--target",
        THREADED,
    ];
    args.extend_from_slice(extra);
    let run = wasmprof(&args);
    assert!(
        run.stderr.contains("Running") && run.stderr.contains("in wasmtime"),
        "{}",
        run.stderr
    );
    run
}

#[test]
fn wasmtime_runs_every_thread_and_counts_every_call() {
    let run = run_in_wasmtime(&["--verify-counts"]);
    run.assert_success();
    assert!(run.stdout.contains(OWN_COUNT), "{}", run.stdout);
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    assert_eq!(calls["threads_wasi::worker"], 4);
    assert_eq!(calls["threads_wasi::hash_range"], 100);
    assert_eq!(calls["threads_wasi::mix"], 40_000);
    // Each worker by its name, with its own share; the main thread first,
    // with none.
    let names: Vec<&str> = profile.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names[0], "main", "{names:?}");
    let mut workers = names[1..].to_vec();
    workers.sort();
    assert_eq!(workers, ["worker-0", "worker-1", "worker-2", "worker-3"]);
    // The main thread's one call: `combine`.
    assert_eq!(profile.threads[0].calls(), 1);
    for (index, name) in names.iter().enumerate().skip(1) {
        let alone = profile.thread_view(index);
        let calls = calls_by_function(&alone);
        assert_eq!(calls["threads_wasi::worker"], 1, "{name}");
        assert_eq!(calls["threads_wasi::hash_range"], 25, "{name}");
        assert_eq!(calls["threads_wasi::mix"], 10_000, "{name}");
    }
    assert!(run.stderr.contains("threads: 5"), "{}", run.stderr);
    // One thread alone, by name.
    let report = wasmprof(&[
        "report",
        "--input",
        run.profile_path().to_str().unwrap(),
        "--thread",
        "worker-2",
    ]);
    report.assert_success();
    assert!(
        report.stdout.contains("(thread worker-2)"),
        "{}",
        report.stdout
    );
    let unknown = wasmprof(&[
        "report",
        "--input",
        run.profile_path().to_str().unwrap(),
        "--thread",
        "worker-9",
    ]);
    assert_eq!(unknown.code(), Some(1));
    assert!(
        unknown.stderr.contains("main, worker-"),
        "{}",
        unknown.stderr
    );
}

/// `--memory` across threads: each worker's vector of hashes (25 × 8
/// bytes) is freed by `combine` on the main thread. The blocks stay the
/// workers' `worker` path's until then, the frees are `combine`'s, and the
/// merged books add up.
#[test]
fn a_block_freed_on_another_thread_is_released_from_the_path_that_allocated_it() {
    let run = run_in_wasmtime(&["--memory"]);
    run.assert_success();
    assert!(run.stdout.contains(OWN_COUNT), "{}", run.stdout);
    let profile = run.profile();
    let worker = crate::memory::memory_of(&profile, "threads_wasi::worker");
    assert_eq!((worker.allocs, worker.alloc_bytes), (4, 800), "{worker:?}");
    assert_eq!(
        (worker.live_blocks, worker.live_bytes),
        (0, 0),
        "{worker:?}"
    );
    assert_eq!(worker.frees, 0, "{worker:?}");
    let combine = crate::memory::memory_of(&profile, "threads_wasi::combine");
    // The four vectors, and the outer one the main thread collected them
    // in (4 × 12 bytes on wasm32).
    assert_eq!(
        (combine.frees, combine.freed_bytes),
        (5, 848),
        "{combine:?}"
    );
    let memory = profile.memory.as_ref().unwrap();
    let (allocs, frees, live): (u64, u64, u64) = memory.paths.iter().fold((0, 0, 0), |s, p| {
        (s.0 + p.allocs, s.1 + p.frees, s.2 + p.live_blocks)
    });
    assert_eq!(allocs - frees, live, "{memory:?}");
    assert_eq!(live, memory.live_blocks, "{memory:?}");
}

/// rayon's global pool (`src/bin/pool.rs`): its workers wait for work
/// until the process ends, as they would under `wasmtime run`. The run
/// ends with `main` instead of waiting for them, and their trees are read
/// where they stand: every chunk is in the profile, the independent count
/// agrees, and each worker that took chunks has its own tree.
#[test]
fn a_pool_whose_workers_outlive_main_is_read_where_it_stands_with_exact_counts() {
    let run = run_in_wasmtime(&[
        "--bin",
        "pool",
        "--env",
        "RAYON_NUM_THREADS=3",
        "--verify-counts",
        "--timeout",
        "120s",
    ]);
    run.assert_success();
    assert!(
        run.stdout.contains("pool: 400 chunks on 3 threads"),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    assert_complete_and_verified(&profile);
    assert_pool_still_running(&profile, 3);
    assert_eq!(calls_by_function(&profile)["pool::chunk"], 400);
    // The main thread waits in the pool's join while its workers run the
    // chunks: the workers' own shares add up to all of them.
    assert_spread(&profile, "pool::chunk", 400);
}

/// A pool's `workers` still stood, none cut off, when the profile was
/// read: the profile did not wait for them to exit.
fn assert_pool_still_running(profile: &Profile, workers: u64) {
    assert_eq!(
        profile
            .run
            .count_check
            .as_ref()
            .map(|c| c.threads_left_running),
        Some(workers),
        "the pool's {workers} workers still stood when the profile was read"
    );
}

/// The same pool with rayon-core rewritten crate-wide: the workers' loop
/// never returns, yet the run is complete (they stand idle in rayon's
/// sleep, not cut off in work), every rayon-core count agrees with the
/// independent one, and the time waiting has a column of its own. The
/// main thread is outside the pool and blocks on rayon's latch for the
/// job, so it waits, and its calls cover every worker's chunks.
#[test]
fn with_rayon_core_instrumented_idle_workers_wait_and_the_main_thread_waits_for_them() {
    let run = run_in_wasmtime(&[
        "--bin",
        "pool",
        "--instrument-crate",
        "rayon-core",
        "--env",
        "RAYON_NUM_THREADS=3",
        "--verify-counts",
        "--timeout",
        "120s",
    ]);
    run.assert_success();
    let profile = run.profile();
    assert_complete_and_verified(&profile);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["pool::chunk"], 400);
    assert!(
        calls.keys().any(|f| f.starts_with("rayon_core::")),
        "{calls:?}"
    );
    assert_spread(&profile, "pool::chunk", 400);
    assert!(run.stderr.contains("waiting"), "{}", run.stderr);
    assert!(
        run.stderr.contains("rayon-core is instrumented"),
        "{}",
        run.stderr
    );
    let main = profile.threads[0].activity(&profile);
    let longest_chunks = (1..profile.threads.len())
        .map(|index| {
            let alone = profile.thread_view(index);
            alone
                .nodes
                .iter()
                .filter(|n| {
                    n.function
                        .is_some_and(|f| alone.functions[f].name == "pool::chunk")
                })
                .map(|n| n.inclusive_nanos)
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    assert!(longest_chunks > 0.0);
    assert!(main.waiting_nanos > 0.0, "{main:?}");
    // Not `waiting >= chunks`: on two cores main can be descheduled right
    // after it hands the job over, while the workers already run chunks.
    // The workers' chunks happen inside main's calls into the pool, though.
    assert!(
        main.busy_nanos + main.waiting_nanos >= longest_chunks,
        "main spent {main:?} inside the pool's calls, a worker ran chunks for {longest_chunks} ns"
    );
}

/// The run finished, and `--verify-counts` found every count equal to the
/// oracle's.
/// Functions `duplicate`'s `#[duplicate_item]` writes out twice, in a
/// crate instrumented crate-wide, called on two threads: each copy keeps
/// its own count (they shared a counter while each had the one slot the
/// rewrite wrote before the macro copied it), as the program's loops make
/// them and as the independent count agrees.
#[test]
fn functions_a_macro_writes_twice_keep_their_own_counts_on_threads() {
    let run = run_in_wasmtime(&["--bin", "copies", "--instrument-all", "--verify-counts"]);
    run.assert_success();
    let profile = run.profile();
    assert_complete_and_verified(&profile);
    // Each copy by the name rustc gave it (the report's name is the one
    // written in the source, told apart by the copy's line).
    let mut copies: Vec<(String, u64)> = Vec::new();
    for (index, function) in profile.functions.iter().enumerate() {
        let from_nodes: u64 = profile
            .nodes
            .iter()
            .filter(|n| n.function == Some(index))
            .map(|n| n.calls)
            .sum();
        if let Some(rustc_name) = &function.rustc_name {
            copies.push((rustc_name.clone(), function.calls.unwrap_or(0) + from_nodes));
        }
    }
    copies.sort();
    // Two threads: 200 and 300 calls of the u32 copy, every third of those
    // of the u64 copy (67 and 100); one sum of u32s and two of u64s each.
    let expected = [
        ("copies::double_u32", 500),
        ("copies::double_u64", 167),
        ("copies::sum_doubled_u32", 2),
        ("copies::sum_doubled_u64", 4),
    ]
    .map(|(name, calls)| (name.to_owned(), calls));
    assert_eq!(copies, expected, "{}", run.stderr);
}

fn assert_complete_and_verified(profile: &Profile) {
    assert!(profile.run.complete, "{:?}", profile.run.incomplete_reason);
    let check = profile.run.count_check.as_ref().expect("counts verified");
    assert!(check.differences.is_empty(), "{check:?}");
}

/// Each thread's own calls of `function`, by name, in the profile's order.
fn calls_per_thread(profile: &Profile, function: &str) -> Vec<(String, u64)> {
    (0..profile.threads.len())
        .map(|index| {
            let calls = calls_by_function(&profile.thread_view(index))
                .get(function)
                .copied()
                .unwrap_or(0);
            (profile.threads[index].name.clone(), calls)
        })
        .collect()
}

/// The threads' own calls of `function` add up to `total`, and at least
/// two threads made some.
fn assert_spread(profile: &Profile, function: &str, total: u64) {
    let shares = calls_per_thread(profile, function);
    assert_eq!(
        shares.iter().map(|(_, n)| n).sum::<u64>(),
        total,
        "{shares:?}"
    );
    assert!(
        shares.iter().filter(|(_, n)| *n > 0).count() >= 2,
        "at least two threads called {function}: {shares:?}"
    );
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

/// `cargo wasmprof test` on the threaded target runs the test binary in
/// wasmtime (its default there), with the spawned thread's calls counted.
#[test]
fn a_threaded_test_binary_runs_in_wasmtime_with_every_thread_counted() {
    let run = wasmprof(&["test", "-p", "threads-wasi", "--target", THREADED]);
    run.assert_success();
    assert!(run.stderr.contains("host wasmtime"), "{}", run.stderr);
    let calls = calls_by_function(&run.profile());
    assert_eq!(calls["threads_wasi::worker"], 2);
    assert_eq!(calls["threads_wasi::mix"], 20_000);
    assert!(run.stderr.contains("threads: 2"), "{}", run.stderr);
}

/// wasm-bindgen-rayon's pool on web workers (`examples/rayon-web`), in
/// `browser` (Chromium, or `Some("firefox")`), with `extra` flags: built
/// with nightly, the standard library rebuilt with atomics and a shared
/// memory, without the crate saying how; the program runs on a worker,
/// the pool on its own, and the page reads every thread's tree from the
/// shared memory while the pool stands. The counts are the program's own
/// and the oracle's, summed over the workers, and at least two workers
/// took chunks, each under its own root.
fn rayon_pool_on_web_workers(browser: Option<&str>, extra: &[&str]) {
    let mut args = vec!["run", "-p", "rayon-web", "--release", "--host", "browser"];
    if let Some(browser) = browser {
        args.extend(["--browser", browser]);
    }
    // Firefox sometimes never returns from a worker's `new Worker` (about
    // once in 30 runs on a loaded machine; see tests/timing/truth.rs): the
    // run says its pool never started, and is taken once more.
    let firefox = browser == Some("firefox");
    args.extend(["--verify-counts", "--timeout"]);
    args.push(if firefox { "60s" } else { "300s" });
    args.extend_from_slice(extra);
    args.extend(["--invoke", "hash_all", "--", "400"]);
    let mut run = wasmprof(&args);
    if firefox && run.stderr.contains("thread pool never started") {
        eprintln!("Firefox never started the pool; once more");
        run = wasmprof(&args);
    }
    run.assert_success();
    assert!(
        run.stdout.contains("rayon-web: 400 chunk, 400000 mix on "),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    assert_complete_and_verified(&profile);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["rayon_web::chunk"], 400);
    assert_eq!(calls["rayon_web::mix"], 400_000);
    assert_spread(&profile, "rayon_web::chunk", 400);
    // Every `mix` call is under a `chunk` on the same worker.
    let chunks = calls_per_thread(&profile, "rayon_web::chunk");
    let mixes = calls_per_thread(&profile, "rayon_web::mix");
    for ((name, chunks), (_, mixes)) in chunks.iter().zip(&mixes) {
        assert_eq!(*mixes, 1000 * chunks, "{name}");
    }
    for thread in &profile.threads {
        assert_ne!(
            thread.read,
            wasmprof_profile::profile::ThreadRead::MidRecord,
            "{}",
            thread.name
        );
    }
}

#[test]
fn a_wasm_bindgen_rayon_pool_on_web_workers_is_counted_exactly_per_worker() {
    rayon_pool_on_web_workers(None, &[]);
}

/// The same in Firefox, sampled by its own profiler. (Its pool once failed
/// to start now and then: Firefox collected a worker that nothing referred
/// to yet, which the page now keeps from its start; see the book's
/// Browsers chapter.)
#[test]
fn a_wasm_bindgen_rayon_pool_in_firefox_is_counted_exactly_per_worker() {
    assert!(
        firefox_available(),
        "these tests need Firefox: apt-get install firefox-esr"
    );
    rayon_pool_on_web_workers(Some("firefox"), &[]);
}

/// A thread pool that never finishes starting (`initThreadPool`'s promise
/// never settles, as when a worker of the pool cannot load): the run says
/// so after 15 s, and ends at its timeout saying the pool never started,
/// rather than only that it timed out.
#[test]
fn a_thread_pool_that_never_starts_is_named_when_the_run_times_out() {
    let run = wasmprof(&[
        "run",
        "-p",
        "rayon-web",
        "--release",
        "--host",
        "browser",
        "--features",
        "pool-never-starts",
        "--timeout",
        "20s",
        "--invoke",
        "hash_all",
        "--",
        "4",
    ]);
    assert_eq!(run.code(), Some(124), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "timed out after 20000 ms: the program's thread pool never started \
             (initThreadPool("
        ),
        "{}",
        run.stderr
    );
    // The program never ran, and its profile says so.
    assert!(!run.stdout.contains("rayon-web: "), "{}", run.stdout);
    // Before that, the run said the pool was late, and what ends the wait.
    assert!(
        run.stderr
            .contains("the program's thread pool has not started after 15 s"),
        "{}",
        run.stderr
    );
}

/// The same crate instrumented crate-wide with every function fully
/// instrumented (rayon's own glue included in the crate's closures).
#[test]
fn a_wasm_bindgen_rayon_pool_with_every_function_timed_is_counted_exactly() {
    rayon_pool_on_web_workers(None, &["--instrument-all", "--min-size", "0"]);
}

/// The page's profile is pulled every second while its workers run; the
/// page crashes (the DevTools protocol's `Page.crash`) in the middle of a
/// long parallel hash. The profile kept is the last pull's, with every
/// worker's calls up to it: each worker's `mix` calls are its `chunk`s'
/// (a thousand each, but for the chunks it was in the middle of).
#[test]
fn a_crash_while_workers_run_keeps_every_worker_s_calls_up_to_the_last_pull() {
    let run = wasmprof_with_stdin(
        &[
            "run",
            "-p",
            "rayon-web",
            "--release",
            "--host",
            "browser",
            "--timeout",
            "120s",
            "--invoke",
            "hash_all",
            "--",
            "2000000",
        ],
        b"",
        &[("WASMPROF_TEST_CRASH_PAGE_AFTER_MS", "4000")],
    );
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("the page crashed"), "{}", run.stderr);
    assert!(
        run.stderr.contains("the profile is the one pulled"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    let chunks = calls_per_thread(&profile, "rayon_web::chunk");
    let mixes = calls_per_thread(&profile, "rayon_web::mix");
    let total: u64 = chunks.iter().map(|(_, n)| n).sum();
    assert!((1..2_000_000).contains(&total), "{chunks:?}");
    for ((name, chunks), (_, mixes)) in chunks.iter().zip(&mixes) {
        // The chunks a worker was in when the pull came are counted at
        // their entry, their mixes so far.
        assert!(
            *mixes <= 1000 * chunks && *mixes + 1000 >= 1000 * chunks,
            "{name}: {mixes} mix calls in {chunks} chunks"
        );
    }
}

/// A panic on a pool worker (`panic = "abort"`, as threads are built)
/// traps there and leaves the pool waiting for ever. The run ends at once
/// with the trap, as a trap on any thread ends it in wasmtime, and the
/// profile read from the shared memory has what every worker did up to
/// it: the failing call, and any call the other worker was in, open.
#[test]
fn a_trap_on_a_pool_worker_ends_the_run_with_every_worker_s_calls_so_far() {
    let run = wasmprof(&[
        "run",
        "-p",
        "rayon-web",
        "--release",
        "--host",
        "browser",
        "--timeout",
        "120s",
        "--invoke",
        "hash_all_failing",
        "--",
        "400",
        "7",
    ]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("a worker of the thread pool: unreachable"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(!profile.run.complete);
    let chunk = profile
        .functions
        .iter()
        .position(|f| f.name == "rayon_web::chunk")
        .expect("chunk");
    assert!(
        profile
            .nodes
            .iter()
            .any(|n| n.function == Some(chunk) && n.open),
        "the failing chunk never returned"
    );
    // Each worker finished every chunk it began but the one it was in.
    let chunks = calls_per_thread(&profile, "rayon_web::chunk");
    let mixes = calls_per_thread(&profile, "rayon_web::mix");
    for ((name, chunks), (_, mixes)) in chunks.iter().zip(&mixes) {
        assert!(
            *chunks > 0 && (1000 * (chunks - 1)..=1000 * chunks).contains(mixes),
            "{name}: {chunks} chunk, {mixes} mix"
        );
    }
}

/// Workers a program starts itself (`examples/own-workers`, with
/// wasm_thread 0.3.3 from the registry), set up as wasm-bindgen's threads
/// guide says: atomics in the crate's own `.cargo/config.toml`, which the
/// build keeps and follows with nightly and the standard library rebuilt.
/// The program runs on the page, whose thread starts the workers, and
/// each thread's tree is read from the shared memory: the counts are the
/// program's own and the oracle's, and thread `t` made its `worker` call
/// and `100 + t` `work` calls under its own root.
#[test]
fn workers_a_program_starts_itself_are_counted_exactly_per_thread() {
    let run = wasmprof_in(
        &examples_dir().join("own-workers"),
        &[
            "run",
            "--release",
            "--host",
            "browser",
            "--verify-counts",
            "--timeout",
            "120s",
            "--invoke",
            "spread",
            "--",
            "3",
        ],
    );
    run.assert_success();
    assert!(
        run.stdout
            .contains("own-workers: 3 threads, 3 worker, 303 work"),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    assert_complete_and_verified(&profile);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["own_workers::worker"], 3);
    assert_eq!(calls["own_workers::work"], 303);
    // Which thread took which share depends on the order they started.
    let mut works: Vec<u64> = calls_per_thread(&profile, "own_workers::work")
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    works.sort_unstable();
    assert_eq!(works, [100, 101, 102]);
    let workers = calls_per_thread(&profile, "own_workers::worker");
    assert!(workers.iter().all(|(_, n)| *n == 1), "{workers:?}");
}

/// `examples/log-scan`: regex-lite, instrumented crate-wide, scanning log
/// chunks on rayon's global pool, whose workers never exit. Every call of
/// every worker is in the profile, read while the pool still stands (the
/// workers idle in it), each count equal to the oracle's, the chunks to
/// what the program counted itself; no thread was cut in the middle of
/// recording a call. `extra` adds to the instrumentation's flags.
fn log_scan_on_the_pool(extra: &[&str]) {
    let mut args = vec![
        "--instrument-all",
        "--instrument-crate",
        "regex-lite",
        "--env",
        "RAYON_NUM_THREADS=2",
        "--verify-counts",
        "--timeout",
        "300s",
    ];
    args.extend_from_slice(extra);
    args.extend(["--", "2"]);
    let mut full = vec!["run", "-p", "log-scan", "--release", "--target", THREADED];
    full.extend_from_slice(&args);
    let run = wasmprof(&full);
    run.assert_success();
    assert!(
        run.stdout
            .contains("log-scan: 80 chunks of 100 lines on 2 threads"),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    assert_complete_and_verified(&profile);
    assert_pool_still_running(&profile, 2);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["log_scan::scan"], 80);
    // A fully instrumented `scan` has each thread's share of it (a counted
    // one, below --min-size, only its count).
    let counted = profile
        .functions
        .iter()
        .any(|f| f.name == "log_scan::scan" && f.calls.is_some());
    if !counted {
        let shares = calls_per_thread(&profile, "log_scan::scan");
        assert_eq!(shares.iter().map(|(_, n)| n).sum::<u64>(), 80, "{shares:?}");
    }
    assert!(
        calls.keys().any(|f| f.starts_with("regex_lite::")),
        "{calls:?}"
    );
    for thread in &profile.threads {
        assert_ne!(
            thread.read,
            wasmprof_profile::profile::ThreadRead::MidRecord,
            "{} was read in the middle of recording",
            thread.name
        );
    }
}

#[test]
fn a_rayon_pool_s_every_call_is_counted_exactly_while_the_pool_stands() {
    log_scan_on_the_pool(&[]);
}

#[test]
fn a_rayon_pool_s_every_call_is_counted_exactly_with_every_function_timed() {
    log_scan_on_the_pool(&["--min-size", "0"]);
}

/// Crate-wide, log-scan's small `scan` is counted only: with threads each
/// thread counts it in a thread-local of its own, and nothing on the
/// call's path refers to the function's site, which the snapshot finds in
/// the module's static data. Without the oracle (whose counters refer to
/// every site), the count is still the program's own.
#[test]
fn a_counted_function_s_calls_on_every_thread_are_found_without_the_oracle() {
    let run = wasmprof(&[
        "run",
        "-p",
        "log-scan",
        "--release",
        "--target",
        THREADED,
        "--instrument-all",
        "--env",
        "RAYON_NUM_THREADS=2",
        "--",
        "1",
    ]);
    run.assert_success();
    assert!(
        run.stdout
            .contains("log-scan: 40 chunks of 100 lines on 2 threads"),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    let scan = profile
        .functions
        .iter()
        .find(|f| f.name == "log_scan::scan")
        .expect("scan is in the profile");
    assert_eq!(scan.calls, Some(40), "{scan:?}");
}
