//! Calls the compiler inlined, found again from the module's line tables.
//!
//! A sampled build for wasmtime keeps no frame out of line: wasmtime's
//! sampler knows the instruction each frame was at, and the DWARF line
//! tables such a build keeps (`-Cdebuginfo=line-tables-only`) say which
//! inlined calls that instruction was inside. A sample's stack then has a
//! frame for every call, inlined or not, as a build that kept every frame
//! would have given it, at none of the cost of keeping them.

use std::borrow::Cow;
use std::collections::HashMap;

use addr2line::gimli::{self, EndianSlice, LittleEndian};
use anyhow::{Context as _, Result};
use wasmparser::{Parser, Payload};

type Reader<'a> = EndianSlice<'a, LittleEndian>;

/// A module's line tables, asked which functions were inlined where.
pub(super) struct InlinedCalls<'a> {
    context: addr2line::Context<Reader<'a>>,
    /// Where the code section's contents start in the module: DWARF's
    /// addresses in wasm count from there.
    code_start: u64,
}

impl<'a> InlinedCalls<'a> {
    /// The line tables of `module` (a core module's bytes), or `None` when
    /// it has none (a build without them, or one stripped afterwards).
    pub(super) fn read(module: &'a [u8]) -> Result<Option<InlinedCalls<'a>>> {
        let mut sections: HashMap<&str, &[u8]> = HashMap::new();
        let mut code_start = None;
        for payload in Parser::new(0).parse_all(module) {
            match payload.context("the module is not valid WebAssembly")? {
                Payload::CodeSectionStart { range, .. } => code_start = Some(range.start as u64),
                Payload::CustomSection(section) if section.name().starts_with(".debug_") => {
                    sections.insert(section.name(), section.data());
                }
                _ => {}
            }
        }
        let Some(code_start) = code_start else {
            return Ok(None);
        };
        if !sections.contains_key(".debug_info") {
            return Ok(None);
        }
        let dwarf = gimli::Dwarf::load(|id| {
            let data = sections.get(id.name()).copied().unwrap_or(&[]);
            Ok::<_, gimli::Error>(EndianSlice::new(data, LittleEndian))
        })
        .context("the module's line tables are unreadable")?;
        let context = addr2line::Context::from_dwarf(dwarf)
            .context("the module's line tables are unreadable")?;
        Ok(Some(InlinedCalls {
            context,
            code_start,
        }))
    }

    /// The functions inlined at the instruction `module_offset` bytes into
    /// the module, outermost first, without the function whose code it is
    /// (which the frame names already). Names are the linkage names, as the
    /// module's name section gives its functions', so that every reader of
    /// the samples demangles both alike.
    pub(super) fn at(&self, module_offset: usize) -> Vec<String> {
        let Some(probe) = (module_offset as u64).checked_sub(self.code_start) else {
            return Vec::new();
        };
        let Ok(mut frames) = self.context.find_frames(probe).skip_all_loads() else {
            return Vec::new();
        };
        // Innermost first; the last is the function the code is in.
        let mut names = Vec::new();
        while let Ok(Some(frame)) = frames.next() {
            let name = frame
                .function
                .as_ref()
                .and_then(|f| f.raw_name().ok())
                .unwrap_or(Cow::Borrowed("<unknown>"));
            names.push(name.into_owned());
        }
        names.pop();
        names.reverse();
        names
    }
}
