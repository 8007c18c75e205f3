//! `cargo wasmprof`: builds Rust crates to WebAssembly with wasmprof's
//! instrumentation switched on, runs them in a JavaScript host and renders
//! the profiles they produce.
//!
//! The binary is a thin shell over this library so that the end-to-end tests
//! and other tools can reuse its pieces.

pub mod add;
pub mod bench;
pub mod build;
pub mod cli;
#[cfg(test)]
mod docs_tests;
pub mod output;
pub mod report;
pub(crate) mod rewrite;
pub mod run;
pub(crate) mod terminal;
pub mod test;
