//! Calls the compiler inlined, found again from the module's line tables.
//!
//! A sampled build for wasmtime keeps no frame out of line: wasmtime's
//! sampler knows the instruction each frame was at, and the DWARF such a
//! build keeps (`-Cdebuginfo=limited`) says which inlined calls that
//! instruction was inside. A sample's stack then has a
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A module of one empty function, with a custom section `name` of
    /// `data` when given.
    fn module(custom: Option<(&str, &[u8])>) -> Vec<u8> {
        let mut bytes = b"\0asm\x01\0\0\0".to_vec();
        bytes.extend([1, 4, 1, 0x60, 0, 0]); // type () -> ()
        bytes.extend([3, 2, 1, 0]); // one function of it
        bytes.extend([10, 4, 1, 2, 0, 0x0b]); // its body: end
        if let Some((name, data)) = custom {
            let mut section = vec![name.len() as u8];
            section.extend(name.as_bytes());
            section.extend(data);
            bytes.push(0);
            bytes.push(section.len() as u8);
            bytes.extend(section);
        }
        bytes
    }

    #[test]
    fn a_module_without_debug_info_has_no_line_tables() {
        assert!(InlinedCalls::read(&module(None)).unwrap().is_none());
        let named = module(Some(("name", &[])));
        assert!(InlinedCalls::read(&named).unwrap().is_none());
    }

    #[test]
    fn debug_info_that_is_not_dwarf_is_an_error_not_a_panic() {
        let junk = module(Some((".debug_info", &[0xff; 40])));
        let error = InlinedCalls::read(&junk).err().expect("an error");
        assert!(format!("{error:#}").contains("line tables are unreadable"));
    }
}
