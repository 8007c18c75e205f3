//! The hosts a built module runs in: Node, the browsers (over the DevTools
//! protocol or WebDriver BiDi) and the embedded wasmtime, behind the
//! [`host::Host`] trait. `run`, `bench` and `test` all drive them through
//! [`crate::launch`]; nothing here knows which command asked.

pub(crate) mod browser;
pub(crate) mod files;
pub(crate) mod host;
pub(crate) mod interrupt;
pub(crate) mod node;
pub(crate) mod options;
pub(crate) mod process_tree;
pub(crate) mod sampler_pace;
pub(crate) mod select;
pub(crate) mod wasi;
#[cfg(feature = "wasmtime")]
mod wasmtime;
