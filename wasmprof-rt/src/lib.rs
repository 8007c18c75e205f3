//! # wasmprof
//!
//! An instrumenting profiler for Rust compiled to WebAssembly: exact call
//! counts, exact caller→callee times and whole call paths, in the tradition
//! of gprof.
//!
//! ```
//! #[wasmprof::instrument]
//! fn parse(input: &str) -> usize {
//!     input.split(',').count()
//! }
//! # assert_eq!(parse("a,b"), 2);
//! ```
//!
//! Annotations cost nothing in an ordinary build: `#[wasmprof::instrument]`
//! expands to the function as written. `cargo wasmprof build` (or `run`)
//! switches instrumentation on by building with `WASMPROF_INSTRUMENT` set,
//! under `target/wasmprof/`.
//!
//! When on, each call enters a guard that records the call in a
//! calling-context tree kept in linear memory: one node per distinct call
//! path, with an exact count and the inclusive time. The host reads the tree
//! through the module's `__wasmprof_snapshot` export; the only import is the
//! clock, `prof.getTime`, and none at all with `--timer none`.
//!
//! `cargo wasmprof add` writes the dependency: the runtime is not on
//! crates.io yet, so the line points at the runtime beside the tool's own
//! sources, `wasmprof = { package = "wasmprof-rt", path = "…/wasmprof-rt" }`.
//! The library is called `wasmprof` whatever the package is named under.
//!
//! This crate is the attribute and the runtime together: the runtime itself
//! is `wasmprof-core`, re-exported here whole.

pub use wasmprof_core::*;
pub use wasmprof_macros::{instrument, skip};
