//! Switches instrumentation on for `cargo wasmprof build`.
//!
//! `cargo wasmprof` sets `WASMPROF_INSTRUMENT` (`host` or `none`, the timer
//! mode) and names the kind of build in `WASMPROF_BUILD`. Everywhere else the
//! variable is unset, `#[wasmprof::instrument]` expands to the plain function
//! and nothing of the runtime reaches the binary. The cfg is decided here, in
//! the runtime's own crate, so users need no feature or cfg of their own.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(wasmprof_enabled)");
    println!("cargo::rustc-check-cfg=cfg(wasmprof_timer_none)");
    println!("cargo::rustc-check-cfg=cfg(wasmprof_floor)");
    println!("cargo::rustc-check-cfg=cfg(wasmprof_memory)");
    println!("cargo::rustc-check-cfg=cfg(wasmprof_memory_own)");
    println!("cargo::rustc-check-cfg=cfg(one_thread)");
    println!("cargo::rustc-check-cfg=cfg(wasmprof_oracle)");
    println!("cargo::rustc-check-cfg=cfg(wasmprof_component)");
    println!("cargo::rerun-if-env-changed=WASMPROF_INSTRUMENT");
    // The kind of build as a whole (kept frames, a crate-wide copy's
    // settings): a change compiles this crate and its dependents again.
    println!("cargo::rerun-if-env-changed=WASMPROF_BUILD");
    // WebAssembly without the atomics feature has exactly one thread, which
    // lets the hot paths use plain memory where they would need atomics.
    // Stable rustc leaves `atomics` out of the target features it reports
    // (the feature is unstable) even for `wasm32-wasip1-threads`, whose
    // threads are real: the target's name says so there.
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let target = std::env::var("TARGET").unwrap_or_default();
    let atomics = features.split(',').any(|f| f == "atomics") || target.ends_with("-threads");
    if family.split(',').any(|f| f == "wasm") && !atomics {
        println!("cargo::rustc-cfg=one_thread");
    }
    // A WASI 0.2 component (`wasm32-wasip2`) can import nothing outside
    // its WIT world, so the host API's `prof` module is not there: the
    // clock is WASI's and the snapshot leaves through an export or a file.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "wasi" && env == "p2" {
        println!("cargo::rustc-cfg=wasmprof_component");
    }
    println!("cargo::rerun-if-env-changed=WASMPROF_MAX_NODES");
    // `cargo wasmprof --max-nodes N`: the call tree's capacity.
    if let Ok(text) = std::env::var("WASMPROF_MAX_NODES") {
        match text.parse::<u32>() {
            Ok(n) if n >= 16 => println!("cargo::rustc-env=WASMPROF_MAX_NODES_VALUE={n}"),
            _ => println!(
                "cargo::warning=WASMPROF_MAX_NODES={text:?} is not a node count of at least 16; the default applies"
            ),
        }
    }
    println!("cargo::rerun-if-changed=build.rs");
    // Only the WebAssembly build is instrumented: the same cargo run builds
    // proc macros for the host, and an instrumented dependency such as syn
    // is one of theirs too. `WASMPROF_INSTRUMENT_NATIVE=1` instruments a
    // native build (the macros' own tests run one).
    println!("cargo::rerun-if-env-changed=WASMPROF_INSTRUMENT_NATIVE");
    let native = std::env::var("WASMPROF_INSTRUMENT_NATIVE").as_deref() == Ok("1");
    let mode = std::env::var("WASMPROF_INSTRUMENT")
        .ok()
        .filter(|_| native || family.split(',').any(|f| f == "wasm"));
    let enabled = matches!(mode.as_deref(), Some("host" | "none"));
    match mode.as_deref() {
        Some("host") => println!("cargo::rustc-cfg=wasmprof_enabled"),
        Some("none") => {
            println!("cargo::rustc-cfg=wasmprof_enabled");
            println!("cargo::rustc-cfg=wasmprof_timer_none");
        }
        // `cargo wasmprof bench`'s floor: a counter per function, no runtime.
        Some("floor") => println!("cargo::rustc-cfg=wasmprof_floor"),
        Some("") | Some("off") | None => {}
        Some(other) => {
            println!(
                "cargo::warning=WASMPROF_INSTRUMENT={other:?} is not a timer mode (host, none); instrumentation stays off"
            );
        }
    }
    memory(enabled);
    // `--verify-counts`: the oracle, a second count of every call, beside
    // the runtime's or, in the floor, alone.
    println!("cargo::rerun-if-env-changed=WASMPROF_ORACLE");
    let oracle = std::env::var("WASMPROF_ORACLE").as_deref() == Ok("1");
    if oracle && matches!(mode.as_deref(), Some("host" | "none" | "floor")) {
        println!("cargo::rustc-cfg=wasmprof_oracle");
    }
}

/// `cargo wasmprof … --memory` sets `WASMPROF_MEMORY`: `system` to record
/// std's allocator, which the runtime then installs; `own` when the
/// program wraps its own allocator in `wasmprof::Recording`.
fn memory(enabled: bool) {
    println!("cargo::rerun-if-env-changed=WASMPROF_MEMORY");
    let Ok(value) = std::env::var("WASMPROF_MEMORY") else {
        return;
    };
    match value.as_str() {
        "" | "off" => {}
        "system" | "own" if enabled => {
            println!("cargo::rustc-cfg=wasmprof_memory");
            if value == "own" {
                println!("cargo::rustc-cfg=wasmprof_memory_own");
            }
        }
        "system" | "own" => {}
        other => println!(
            "cargo::warning=WASMPROF_MEMORY={other:?} is not system or own; memory is not recorded"
        ),
    }
}
