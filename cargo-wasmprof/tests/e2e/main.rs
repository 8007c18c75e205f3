//! The end-to-end tests: the examples built to wasm by the real
//! `cargo-wasmprof`, run in Node, headless Chromium and Firefox, and wasmtime, and their
//! profiles and reports checked. One binary, so that the tool is linked
//! once and the tests share the examples' builds; the tests that measure
//! time are in `tests/timing`, which runs after this one.
//!
//! Linux only: they read `/proc` to check that no browser process is
//! left behind. On macOS and Windows, CI type-checks and lints the crate.
#![cfg(target_os = "linux")]

#[path = "../support/mod.rs"]
#[allow(dead_code)] // helpers only the timing tests use
mod support;

mod async_fns;
mod browser;
mod components;
mod crate_wide;
mod every_browser;
mod exact_counts;
mod faults;
mod firefox;
mod frameworks;
mod load;
mod memory;
mod newcomer;
mod node;
mod realworld;
mod record_fixtures;
mod render_loops;
mod report_formats;
mod runtime_on_wasm;
mod sampled;
mod test_command;
mod threads;
mod viewers;
mod wasi;
mod zero_cost;
