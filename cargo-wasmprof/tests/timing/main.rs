//! The tests that measure time: a long call's time stays its function's
//! (`truth`), wasmprof's times agree with V8's sampler (`accuracy`), a
//! hybrid profile splits a callee's time among its callers as the clock
//! does (`hybrid`), the
//! comparison of two runs finds a slowed function (`visual`), and
//! `cargo wasmprof bench`'s table (`bench`). Each holds
//! [`support::timing::alone`] while it runs, and cargo runs this binary
//! after the end-to-end one, so nothing runs beside them.
//!
//! Linux only: they read `/proc` to check that no browser process is
//! left behind. On macOS and Windows, CI type-checks and lints the crate.
#![cfg(target_os = "linux")]

#[path = "../support/mod.rs"]
#[allow(dead_code)] // helpers only the end-to-end tests use
mod support;

mod accuracy;
mod bench;
mod hybrid;
mod truth;
mod visual;
