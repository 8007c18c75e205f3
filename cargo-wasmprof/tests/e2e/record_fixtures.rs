//! Records the sampling-profile fixtures of `wasmprof-profile/tests/data/sampled/`
//! with the real engines. Not part of the test run (the fixtures must stay
//! what they were when their expected numbers were written down); run it by
//! hand to record new ones:
//!
//! ```sh
//! cargo test -p cargo-wasmprof --test e2e record_fixtures -- --ignored --nocapture
//! ```
//!
//! - `node-appendix-b.cpuprofile`: `node --cpu-prof` (100 µs) on the plain
//!   appendix-b build (WASI; the name section holds rustc's mangled names);
//! - `chromium-fib.cpuprofile`: the DevTools protocol's `Profiler.stop`
//!   result (100 µs), headless Chromium running `fib_js(40)` of the plain
//!   fib build (wasm-bindgen; names demangled with their hash);
//! - `chromium-fib.selfprofile.json`: a JS Self-Profiling API trace of the
//!   same run (`new Profiler({sampleInterval: 1})`; the page is served with
//!   `Document-Policy: js-profiling`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::{Value, json};

fn fixtures_dir() -> PathBuf {
    let dir = repo_root().join("wasmprof-profile/tests/data/sampled");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[ignore = "records fixtures; run by hand"]
fn record_node_cpuprofile() {
    let out = std::env::temp_dir().join(format!("wasmprof-cpuprof-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let dir_arg = format!("--node-arg=--cpu-prof-dir={}", out.display());
    wasmprof(&[
        "run",
        "-p",
        "appendix-b",
        "--release",
        "--no-instrument",
        "--node-arg=--cpu-prof",
        "--node-arg=--cpu-prof-interval=100",
        &dir_arg,
    ])
    .assert_success();
    let written = std::fs::read_dir(&out)
        .unwrap()
        .next()
        .expect("node wrote a profile")
        .unwrap()
        .path();
    std::fs::copy(written, fixtures_dir().join("node-appendix-b.cpuprofile")).unwrap();
}

#[test]
#[ignore = "records fixtures; run by hand"]
fn record_chromium_profiles() {
    use cargo_wasmprof::browsers_for_tests::{Chromium, ChromiumExe};
    let mut child = spawn_wasmprof(&[
        "run",
        "-p",
        "fib",
        "--release",
        "--no-instrument",
        "--serve",
        "--invoke",
        "fib_js",
        "--",
        "40",
    ]);
    let stderr = child.stderr.take().unwrap();
    let url = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            line.split_whitespace()
                .find(|w| w.starts_with("http://127.0.0.1:"))
                .map(str::to_owned)
        })
        .expect("the Serving line");

    let chromium = Chromium::launch(&ChromiumExe::find().unwrap(), &[], false).unwrap();
    let cdp = &chromium.cdp;
    let wait = Duration::from_secs(60);
    let target = cdp
        .call(
            None,
            "Target.createTarget",
            json!({ "url": "about:blank" }),
            wait,
        )
        .unwrap();
    let session = cdp
        .call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
            wait,
        )
        .unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = Some(session.as_str());
    for (method, params) in [
        ("Runtime.enable", json!({})),
        ("Page.enable", json!({})),
        ("Profiler.enable", json!({})),
        ("Profiler.setSamplingInterval", json!({ "interval": 100 })),
        (
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": "globalThis.__trace = new Profiler({ sampleInterval: 1, maxBufferSize: 1000000 });" }),
        ),
        ("Profiler.start", json!({})),
        ("Page.navigate", json!({ "url": url })),
    ] {
        cdp.call(page, method, params, wait).unwrap();
    }
    // The generated page says when fib_js(40) has returned.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ready = cdp
            .call(
                page,
                "Runtime.evaluate",
                json!({ "expression": "!!(globalThis.__wasmprofHost && __wasmprofHost.settled)", "returnByValue": true }),
                wait,
            )
            .map(|r| r["result"]["value"] == json!(true))
            .unwrap_or(false);
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "the page never ran");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let profile = cdp.call(page, "Profiler.stop", json!({}), wait).unwrap();
    let trace = cdp
        .call(
            page,
            "Runtime.evaluate",
            json!({ "expression": "__trace.stop().then((t) => JSON.stringify(t))", "awaitPromise": true, "returnByValue": true }),
            wait,
        )
        .unwrap();
    let trace: Value = serde_json::from_str(trace["result"]["value"].as_str().unwrap()).unwrap();
    // `Profiler.stop` answers `{ profile }`: the bare result, as a DevTools
    // protocol client gets it.
    std::fs::write(
        fixtures_dir().join("chromium-fib.cpuprofile"),
        serde_json::to_vec(&profile).unwrap(),
    )
    .unwrap();
    std::fs::write(
        fixtures_dir().join("chromium-fib.selfprofile.json"),
        serde_json::to_vec(&trace).unwrap(),
    )
    .unwrap();
    drop(chromium);
    // SAFETY: ending a child of this test.
    unsafe { libc_kill(child.id() as i32, 2) };
    let _ = child.wait();
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

/// `firefox-fib.gecko.json`: the profile Firefox itself writes at shutdown
/// when its profiler runs from start-up (`MOZ_PROFILER_STARTUP`, 1 ms,
/// the main threads and web workers), while `fib_js(32)` of the plain fib
/// build runs in it, with `--no-sample` so that wasmprof starts no
/// profiler of its own. Only the processes and threads that ran wasm are
/// kept, without their markers: the rest is Firefox's own and megabytes.
#[test]
#[ignore = "records fixtures; run by hand"]
fn record_firefox_profile() {
    let out = std::env::temp_dir().join(format!("wasmprof-gecko-{}.json", std::process::id()));
    let out_text = out.display().to_string();
    wasmprof_with_stdin(
        &[
            "run",
            "-p",
            "fib",
            "--release",
            "--no-instrument",
            "--no-sample",
            "--host",
            "browser",
            "--browser",
            "firefox",
            "--invoke",
            "fib_js",
            "--",
            "32",
        ],
        b"",
        &[
            ("MOZ_PROFILER_STARTUP", "1"),
            ("MOZ_PROFILER_STARTUP_INTERVAL", "1"),
            ("MOZ_PROFILER_STARTUP_FEATURES", "js,cpu"),
            ("MOZ_PROFILER_STARTUP_FILTERS", "GeckoMain,DOM Worker"),
            ("MOZ_PROFILER_SHUTDOWN", &out_text),
        ],
    )
    .assert_success();
    let mut profile: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    let kept = keep_wasm_threads(&mut profile);
    assert!(kept > 0, "no thread of Firefox's profile ran wasm");
    std::fs::write(
        fixtures_dir().join("firefox-fib.gecko.json"),
        serde_json::to_string(&profile).unwrap(),
    )
    .unwrap();
}

/// Keeps, in a Gecko profile and its processes, the threads whose strings
/// name a wasm module, without their markers; returns how many.
fn keep_wasm_threads(process: &mut Value) -> usize {
    let ran_wasm = |thread: &Value| {
        thread["stringTable"].as_array().is_some_and(|s| {
            s.iter()
                .any(|s| s.as_str().is_some_and(|s| s.contains(".wasm:")))
        })
    };
    let mut kept = 0;
    if let Some(threads) = process["threads"].as_array_mut() {
        threads.retain(ran_wasm);
        for thread in threads.iter_mut() {
            thread["markers"]["data"] = json!([]);
        }
        kept += threads.len();
    }
    if let Some(children) = process["processes"].as_array_mut() {
        for child in children.iter_mut() {
            kept += keep_wasm_threads(child);
        }
        children.retain(|c| c["threads"].as_array().is_some_and(|t| !t.is_empty()));
    }
    kept
}

/// `wasmtime-appendix-b.guest.json`: what `wasmtime run --profile=guest`
/// writes (the Firefox Profiler's format, by wasmtime's `GuestProfiler`,
/// which the CLI drives the same way: a sample at each epoch tick, here
/// every millisecond), on the plain appendix-b build. wasmtime's profiler
/// is in the crate's `profiling` feature, which only `jitdump` turns on:
///
/// ```sh
/// cargo test -p cargo-wasmprof --features jitdump --test e2e \
///     record_wasmtime_guest_profile -- --ignored
/// ```
#[cfg(feature = "jitdump")]
#[test]
#[ignore = "records fixtures; run by hand"]
fn record_wasmtime_guest_profile() {
    use std::sync::{Arc, Mutex};
    use wasmtime::{Config, Engine, GuestProfiler, Linker, Module, Store, UpdateDeadline};
    use wasmtime_wasi::p1::{self, WasiP1Ctx};

    wasmprof(&["build", "-p", "appendix-b", "--release", "--no-instrument"]).assert_success();
    let wasm =
        repo_root().join("examples/target/wasmprof/plain/wasm32-wasip1/release/appendix-b.wasm");
    let mut config = Config::new();
    config.epoch_interruption(true);
    let engine = Engine::new(&config).unwrap();
    let module = Module::from_file(&engine, &wasm).unwrap();
    let interval = Duration::from_millis(1);
    let profiler = Arc::new(Mutex::new(
        GuestProfiler::new(
            &engine,
            "appendix-b.wasm",
            interval,
            [("appendix-b.wasm".to_owned(), module.clone())],
        )
        .unwrap(),
    ));
    let wasi = wasmtime_wasi::WasiCtxBuilder::new()
        .inherit_stdio()
        .build_p1();
    let mut store: Store<WasiP1Ctx> = Store::new(&engine, wasi);
    store.set_epoch_deadline(1);
    let sampler = Arc::clone(&profiler);
    let mut last = Instant::now();
    store.epoch_deadline_callback(move |context| {
        let now = Instant::now();
        sampler.lock().unwrap().sample(&context, now - last);
        last = now;
        Ok(UpdateDeadline::Continue(1))
    });
    let ticker_engine = engine.clone();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ticking = Arc::clone(&done);
    let ticker = std::thread::spawn(move || {
        while !ticking.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(interval);
            ticker_engine.increment_epoch();
        }
    });
    let mut linker: Linker<WasiP1Ctx> = Linker::new(&engine);
    p1::add_to_linker_sync(&mut linker, |wasi| wasi).unwrap();
    let instance = linker.instantiate(&mut store, &module).unwrap();
    let start = instance
        .get_typed_func::<(), ()>(&mut store, "_start")
        .unwrap();
    start.call(&mut store, ()).unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    ticker.join().unwrap();
    drop(store);
    let profiler = Arc::try_unwrap(profiler)
        .ok()
        .expect("the store, and its sampler, are gone")
        .into_inner()
        .unwrap();
    let out = std::fs::File::create(fixtures_dir().join("wasmtime-appendix-b.guest.json")).unwrap();
    profiler.finish(std::io::BufWriter::new(out)).unwrap();
}
