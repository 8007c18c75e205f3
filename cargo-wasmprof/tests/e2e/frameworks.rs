//! Real frameworks from the registry, as their users write apps, in
//! headless Chromium:
//! - a Yew 0.21 app (`examples/yew-counter`: function components,
//!   `use_reducer`, `use_memo`, a custom `#[hook]`, our attribute above
//!   Yew's) with Yew itself instrumented crate-wide, from the generated page
//!   and from a trunk-style `dist/` (hyphenated, hashed file names,
//!   `integrity` on the preloads), one build for both;
//! - a Dioxus 0.6 app (`examples/dioxus-counter`) with dioxus-web and
//!   dioxus-core instrumented crate-wide (dioxus-web's `async fn run() ->
//!   !`; dioxus-core's `#[warnings::warning]` functions, which that macro
//!   turns into a struct and a module), whose page fetches
//!   dioxus-web's snippet modules all at once: run several times, since the
//!   page server once left such requests unread now and then;
//! - a Leptos 0.8 app (`examples/leptos-counter`) with its reactive system
//!   (`reactive_graph`) and its renderer (`tachys`) instrumented crate-wide,
//!   and our attribute below `#[wasm_bindgen(start)]`.

use std::path::{Path, PathBuf};

use crate::support::*;
use base64::Engine;
use sha2::{Digest, Sha384};

/// What the app logs, the same in a plain build (checked by hand with
/// `--no-instrument`): five first renders, then five once Yew has applied
/// three clicks on each counter.
const CONSOLE: &str = "counter 4: clicked 0 times (doubled 0)
counter 3: clicked 0 times (doubled 0)
counter 2: clicked 0 times (doubled 0)
counter 1: clicked 0 times (doubled 0)
counter 0: clicked 0 times (doubled 0)
counter 4: clicked 3 times (doubled 6)
counter 3: clicked 3 times (doubled 6)
counter 2: clicked 3 times (doubled 6)
counter 1: clicked 3 times (doubled 6)
counter 0: clicked 3 times (doubled 6)
";

/// The app and Yew, crate-wide, in the browser, each count held against a
/// second, independent count of the same run (`tests/e2e/exact_counts.rs`
/// says why these apps are checked in the run itself).
const YEW_CRATE_WIDE: &[&str] = &[
    "run",
    "--host",
    "browser",
    "-p",
    "yew-counter",
    "--instrument-all",
    "--instrument-crate",
    "yew",
    "--verify-counts",
];

fn require_browser() {
    assert!(
        browser_available(),
        "these tests need Chromium: `apt-get install chromium` (bash .ci/run does)"
    );
}

/// The app's own functions ran as often as the console says, under the
/// names the user wrote, and Yew's functions are in the profile.
fn assert_the_yew_app_ran(run: &Run) {
    run.assert_success();
    assert!(
        run.stderr.contains("Verified every call count"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, CONSOLE);
    let profile = run.profile();
    assert!(profile.run.complete, "{:?}", profile.run.incomplete_reason);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["yew_counter::start"], 1);
    assert_eq!(calls["yew_counter::click_every_counter"], 1);
    // Above `#[function_component]` and `#[hook]`: the component and the
    // hook keep their names, though Yew's macros rename their bodies.
    assert_eq!(calls["yew_counter::Counter"], 10);
    assert_eq!(calls["yew_counter::use_doubled"], 10);
    assert_eq!(calls["yew_counter::label"], 10);
    assert_eq!(
        calls_of_path(&profile, &["yew_counter::Counter", "yew_counter::label"]),
        10
    );
    let yew = calls
        .keys()
        .filter(|name| name.trim_start_matches('<').starts_with("yew::"))
        .count();
    assert!(yew >= 100, "{yew} of Yew's functions in the profile");
}

#[test]
fn a_yew_app_with_yew_instrumented_crate_wide_runs_as_written() {
    require_browser();
    let run = wasmprof(YEW_CRATE_WIDE);
    assert_the_yew_app_ran(&run);
}

#[test]
fn a_yew_app_served_from_a_trunk_dist_is_the_instrumented_build() {
    require_browser();
    let dist = trunk_style_dist();
    let mut args = YEW_CRATE_WIDE.to_vec();
    args.extend(["--page", dist.to_str().unwrap()]);
    let run = wasmprof(&args);
    assert_the_yew_app_ran(&run);
    // With trunk's hashes, Chromium blocks the preloads ("Failed to find a
    // valid digest in the 'integrity' attribute … has been blocked").
    assert!(!run.stderr.contains("integrity"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dist.parent().unwrap());
}

#[test]
fn a_dioxus_app_with_dioxus_web_instrumented_loads_and_runs_every_time() {
    require_browser();
    for round in 1..=3 {
        let run = wasmprof(&[
            "run",
            "--host",
            "browser",
            "-p",
            "dioxus-counter",
            "--instrument-all",
            "--instrument-crate",
            "dioxus-web",
            "--instrument-crate",
            "dioxus-core",
            "--timeout",
            "60s",
            "--verify-counts",
        ]);
        run.assert_success();
        assert!(
            run.stderr.contains("Verified every call count"),
            "{}",
            run.stderr
        );
        assert_eq!(
            run.stdout, "counter 0\ncounter 1\ncounter 2\ncounter 3\ncounter 4\n",
            "round {round}"
        );
        let profile = run.profile();
        let calls = calls_by_function(&profile);
        assert_eq!(calls["dioxus_counter::Counter"], 5);
        assert_eq!(calls["dioxus_counter::label"], 5);
        assert_eq!(calls["dioxus_counter::start"], 1);
        // dioxus-web's `pub async fn run(..) -> !`, instrumented.
        assert_eq!(calls["dioxus_web::run"], 1);
        // dioxus-core's virtual DOM ran instrumented (its counts are checked
        // against the oracle's above).
        let core = calls
            .keys()
            .filter(|f| f.starts_with("dioxus_core::"))
            .count();
        assert!(core > 50, "{core} dioxus-core functions called");
    }
}

/// What the Leptos app logs, the same in a plain build (checked by hand
/// with `--no-instrument`): each counter's effect once it is mounted, then
/// once more after its three clicks, which Leptos batches.
const LEPTOS_CONSOLE: &str = "counter 0: 0 (doubled 0)
counter 1: 1 (doubled 2)
counter 2: 2 (doubled 4)
counter 3: 3 (doubled 6)
counter 4: 4 (doubled 8)
counter 0: 3 (doubled 6)
counter 1: 4 (doubled 8)
counter 2: 5 (doubled 10)
counter 3: 6 (doubled 12)
counter 4: 7 (doubled 14)
";

#[test]
fn a_leptos_app_with_its_reactive_crates_instrumented_crate_wide_runs_as_written() {
    require_browser();
    let run = wasmprof(&[
        "run",
        "--host",
        "browser",
        "-p",
        "leptos-counter",
        "--instrument-all",
        "--instrument-crate",
        "reactive_graph",
        "--instrument-crate",
        "tachys",
        "--timeout",
        "60s",
        "--verify-counts",
    ]);
    run.assert_success();
    assert!(
        run.stderr.contains("Verified every call count"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, LEPTOS_CONSOLE);
    let profile = run.profile();
    assert!(profile.run.complete, "{:?}", profile.run.incomplete_reason);
    let calls = calls_by_function(&profile);
    // `start` is below `#[wasm_bindgen(start)]`, which copies our attribute
    // onto its export's shim and descriptor: counted once, and the
    // wasm-bindgen CLI, which interprets the descriptor, still ran.
    assert_eq!(calls["leptos_counter::start"], 1);
    assert!(
        !calls
            .keys()
            .any(|name| name.contains("__wasm_bindgen_generated") || name.contains("__wbindgen")),
        "{:?}",
        calls.keys().collect::<Vec<_>>()
    );
    assert_eq!(calls["leptos_counter::click_every_counter"], 1);
    // A component runs once; its text reruns on each batch of clicks.
    assert_eq!(calls["leptos_counter::Counter"], 5);
    assert_eq!(calls["leptos_counter::label"], 10);
    for krate in ["reactive_graph::", "tachys::"] {
        let ran = calls
            .iter()
            .filter(|(name, n)| **n > 0 && name.trim_start_matches('<').starts_with(krate))
            .count();
        assert!(ran >= 20, "{ran} of {krate} functions ran in the profile");
    }
}

/// A `dist/` as trunk 0.21 writes it for the package `yew-counter`: files
/// named after the package with a hash, preloaded with `integrity`, and
/// loaded by trunk's inline module script. Its own JS and wasm stand for
/// trunk's build: their hashes are what the page checks, so the run must
/// give the instrumented files theirs.
fn trunk_style_dist() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wasmprof-trunk-dist-{}", std::process::id()));
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    let stem = "yew-counter-5d1c0e6b2a9f4e17";
    let js = format!("{stem}.js");
    let wasm = format!("{stem}_bg.wasm");
    write(&dist.join(&js), b"// trunk's own build of the bindings\n");
    write(&dist.join(&wasm), b"\0asm trunk's own build");
    let html = format!(
        "<!DOCTYPE html><html><head>\n\
         <meta charset=\"utf-8\"><title>Yew counter</title>\n\
         <link rel=\"modulepreload\" href=\"/{js}\" crossorigin=\"anonymous\" integrity=\"{}\">\n\
         <link rel=\"preload\" href=\"/{wasm}\" crossorigin=\"anonymous\" integrity=\"{}\" \
         as=\"fetch\" type=\"application/wasm\">\n\
         </head><body>\n\
         <script type=\"module\">\n\
         import init, * as bindings from '/{js}';\n\
         const wasm = await init({{ module_or_path: '/{wasm}' }});\n\
         window.wasmBindings = bindings;\n\
         dispatchEvent(new CustomEvent(\"TrunkApplicationStarted\", {{detail: {{wasm}}}}));\n\
         </script></body></html>\n",
        integrity(&dist.join(&js)),
        integrity(&dist.join(&wasm)),
    );
    write(&dist.join("index.html"), html.as_bytes());
    dist
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn integrity(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    format!(
        "sha384-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha384::digest(bytes))
    )
}
