//! wasmprof's profiles as a library.
//!
//! A [`Profile`] is an exact calling-context tree: each node a call path,
//! with its call count and, in a timed run, its inclusive time. This crate
//! holds the model and what is done with it, apart from building and
//! running programs (which is `cargo-wasmprof`'s):
//!
//! - [`profile`]: the model, its JSON file format (reading, writing,
//!   validating untrusted files), merging runs;
//! - [`input`]: any file a report reads, told apart by its content: a
//!   wasmprof profile, the runtime's raw snapshot ([`snapshot`]), a Chrome
//!   DevTools or Node `.cpuprofile`, or a JS Self-Profiling trace
//!   ([`sampled`]);
//! - [`report`]: the renderers: gprof's flat profile and call graph,
//!   pprof, JSON, folded stacks, flame graphs and charts, `.cpuprofile`,
//!   speedscope, HTML, and comparisons of two profiles;
//! - [`wasm_info`]: what a `.wasm` file says about itself, including the
//!   names its profile's functions are given.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! use wasmprof_profile::{input, report};
//!
//! let read = input::read(std::path::Path::new("profile.json"), &Default::default())?;
//! let mut out = std::io::stdout().lock();
//! report::render(&read.profile, &report::RenderOptions::default(), &mut out)?;
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixtures;
pub mod html_text;
pub mod input;
pub mod profile;
pub mod report;
mod rust_names;
pub mod sampled;
pub mod snapshot;
pub mod wasm_info;

pub use profile::{Function, Node, Profile};
