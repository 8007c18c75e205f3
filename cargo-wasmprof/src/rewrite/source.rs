//! Reading a source file with syn, and inserting text into it at byte
//! offsets without moving any line.

use std::path::{Path, PathBuf};

use proc_macro2::Span;

use super::RewriteError;

/// A source file as syn sees it: without the byte-order mark and the `#!`
/// line that syn would drop, so that span offsets index `text[skip..]`.
pub(super) struct Source {
    pub path: PathBuf,
    pub text: String,
    /// Bytes before what syn parsed (a BOM, a shebang line's text).
    pub skip: usize,
}

impl Source {
    pub(super) fn read(path: &Path) -> Result<Source, RewriteError> {
        let text = std::fs::read_to_string(path).map_err(|error| RewriteError::Read {
            file: path.to_path_buf(),
            message: error.to_string(),
        })?;
        Ok(Source::new(path, text))
    }

    pub(super) fn new(path: &Path, text: String) -> Source {
        let mut skip = 0;
        if text.starts_with('\u{feff}') {
            skip = '\u{feff}'.len_utf8();
        }
        let rest = &text[skip..];
        // A first line `#!...` that does not start an inner attribute
        // (`#![...]`) is a shebang: syn skips it, keeping the newline.
        if let Some(after) = rest.strip_prefix("#!")
            && !after.trim_start().starts_with('[')
        {
            skip += rest.find('\n').unwrap_or(rest.len());
        }
        Source {
            path: path.to_path_buf(),
            text,
            skip,
        }
    }

    /// Parses the file; an error carries `file:line:column`.
    pub(super) fn parse(&self) -> Result<syn::File, RewriteError> {
        syn::parse_str::<syn::File>(&self.text[self.skip..]).map_err(|error| {
            let start = error.span().start();
            RewriteError::Parse {
                file: self.path.clone(),
                line: start.line,
                // proc-macro2 counts columns from 0, editors from 1.
                column: start.column + 1,
                message: error.to_string(),
            }
        })
    }

    /// The byte offset in `text` where `span` starts.
    pub(super) fn offset(&self, span: Span) -> usize {
        self.skip + span.byte_range().start
    }

    /// The 1-based line of a byte offset.
    pub(super) fn line_of(&self, offset: usize) -> usize {
        self.text[..offset].matches('\n').count() + 1
    }
}

/// `text` with each `(start, end, replacement)` edit made: an insertion
/// when `start == end`. No replacement contains a newline and none replaces
/// one, so every line keeps its number.
pub(crate) fn edit_all(text: &str, edits: &[(usize, usize, String)]) -> String {
    let mut sorted: Vec<&(usize, usize, String)> = edits.iter().collect();
    sorted.sort_by_key(|(start, end, _)| (*start, *end));
    let mut out = String::with_capacity(text.len() + edits.len() * 32);
    let mut at = 0;
    for (start, end, replacement) in sorted {
        debug_assert!(!replacement.contains('\n') && !text[*start..*end].contains('\n'));
        out.push_str(&text[at..*start]);
        out.push_str(replacement);
        at = *end;
    }
    out.push_str(&text[at..]);
    out
}
