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
//!   names its profile's functions are given;
//! - [`Error`]: the one error every function returns, a value to match on
//!   whose messages say what is wrong and name no command-line flag.
//!
//! ```no_run
//! # fn main() -> wasmprof_profile::Result<()> {
//! use wasmprof_profile::{read_input, render, Error, Format, RenderOptions};
//!
//! let read = read_input(std::path::Path::new("profile.json"), &Default::default())?;
//! let mut out = std::io::stdout().lock();
//! match render(&read.profile, &RenderOptions::format(Format::Gprof), &mut out) {
//!     // The errors are values to match on: a profile recorded without
//!     // times, an option the format does not take, a full disk.
//!     Err(Error::Output { source, .. }) => eprintln!("cannot write: {source}"),
//!     other => other?,
//! }
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod error;

#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixtures;
// Escaping shared with cargo-wasmprof's browser page; not API.
#[doc(hidden)]
pub mod html_text;
pub mod input;
pub mod profile;
pub mod report;
mod rust_names;
pub mod sampled;
pub mod snapshot;
pub mod wasm_info;

// What most callers need, at the crate's root: read any input, check,
// merge, compare and render. The modules hold the rest.
pub use error::{Error, RenderOption, Result, Which};
pub use input::{Input, InputKind, read as read_input};
pub use profile::{Function, Node, Profile, merge, read_profile, validate, write_profile};
pub use report::diff::{Diff, diff};
pub use report::{Format, RenderOptions, render};
