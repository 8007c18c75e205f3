//! Doctests that write their own `fn main`.
//!
//! rustdoc wraps such a doctest's code in nothing, so its module carries no
//! place. The place is then found in the source: among the package's
//! runnable doctests with a `fn main` of their own, the one whose other
//! functions are those the module defines. When more than one fits, the
//! place stays unknown rather than guessed.

use std::path::Path;

/// A doctest found in a doc comment: its file, the line of its opening
/// fence (rustdoc's `(line N)`) and its code, hidden lines included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Block {
    pub file: String,
    pub line: u32,
    pub code: String,
}

/// The place of a doctest with its own `main`, given the names of the
/// functions the doctest's module defines at its top (`rust_out::NAME`).
pub(super) fn find(package_dir: &Path, defined: &[String]) -> Option<Block> {
    let mut files = Vec::new();
    super::source_files(package_dir, package_dir, 0, &mut files);
    let mut fitting = files
        .iter()
        .filter(|file| file.ends_with(".rs"))
        .filter_map(|file| {
            let text = std::fs::read_to_string(package_dir.join(file)).ok()?;
            Some(runnable_blocks(file, &text))
        })
        .flatten()
        .filter(|block| has_own_main(&block.code) && defines_all(&block.code, defined));
    let first = fitting.next()?;
    fitting.next().is_none().then_some(first)
}

/// The doctests in `text`'s doc comments (`///` and `//!`) that rustdoc
/// runs: Rust code blocks not marked `ignore`, `no_run` or `compile_fail`.
pub(super) fn runnable_blocks(file: &str, text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(Block, String, bool)> = None;
    for (index, line) in text.lines().enumerate() {
        let Some(doc) = doc_text(line) else {
            open = None;
            continue;
        };
        let trimmed = doc.trim_start();
        match open.take() {
            None => {
                if let Some((fence, info)) = fence(trimmed) {
                    let block = Block {
                        file: file.to_owned(),
                        line: index as u32 + 1,
                        code: String::new(),
                    };
                    open = Some((block, fence, runs(info)));
                }
            }
            Some((block, fence, runnable)) if trimmed.starts_with(&fence) => {
                if runnable {
                    blocks.push(block);
                }
            }
            Some((mut block, fence, runnable)) => {
                block.code.push_str(unhidden(doc));
                block.code.push('\n');
                open = Some((block, fence, runnable));
            }
        }
    }
    blocks
}

/// The text of a doc-comment line, without `///` or `//!` and the one
/// space after it; `None` for any other line (`////` is a plain comment).
fn doc_text(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let rest = line
        .strip_prefix("//!")
        .or_else(|| line.strip_prefix("///").filter(|r| !r.starts_with('/')))?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// A code fence (three or more backticks or tildes) and its info string.
fn fence(line: &str) -> Option<(String, &str)> {
    let mark = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = line.chars().take_while(|c| *c == mark).count();
    (length >= 3).then(|| (mark.to_string().repeat(length), &line[length..]))
}

/// Whether rustdoc runs a block with this info string: Rust (no tag, or
/// `rust`, or only rustdoc's own tags) and not kept from running.
fn runs(info: &str) -> bool {
    let tags: Vec<&str> = info
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect();
    let kept_from_running = tags
        .iter()
        .any(|t| matches!(*t, "no_run" | "compile_fail" | "ignore") || t.starts_with("ignore-"));
    let rustdoc_tag = |t: &&str| {
        matches!(
            *t,
            "rust" | "should_panic" | "test_harness" | "standalone_crate" | "allow_fail"
        ) || t.starts_with("edition")
            || (t.starts_with('{') || t.ends_with('}'))
    };
    let rust = tags.is_empty() || tags.contains(&"rust") || tags.iter().all(rustdoc_tag);
    rust && !kept_from_running
}

/// A code line as compiled: rustdoc hides `# ` lines from the reader only.
fn unhidden(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed == "#" {
        ""
    } else {
        trimmed.strip_prefix("# ").unwrap_or(line)
    }
}

fn has_own_main(code: &str) -> bool {
    defines(code, "main")
}

fn defines_all(code: &str, names: &[String]) -> bool {
    names.iter().all(|name| defines(code, name))
}

/// Whether `code` has `fn NAME` followed by `(` or `<`.
fn defines(code: &str, name: &str) -> bool {
    let pattern = format!("fn {name}");
    code.match_indices(&pattern).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + pattern.len()..].trim_start().chars().next();
        before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && matches!(after, Some('(' | '<'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"//! Formats numbers.
//!
//! ```
//! fn main() {
//!     assert_eq!(demo::format(1), "1");
//! }
//! ```
//!
//! ```no_run
//! fn main() { loop {} }
//! ```

/// Parses.
///
/// ```rust,should_panic
/// # fn helper() -> u8 { 1 }
/// fn main() {
///     demo::parse(helper());
/// }
/// ```
///
/// ```toml
/// [dependencies]
/// ```
//// ```
//// fn main() {}
//// ```
pub fn parse(_: u8) {}

/// ```
/// assert!(true);
/// ```
pub fn format(_: u8) -> &'static str { "" }
"#;

    #[test]
    fn the_runnable_rust_blocks_are_found_with_their_fence_s_line() {
        let blocks = runnable_blocks("src/lib.rs", SOURCE);
        let lines: Vec<u32> = blocks.iter().map(|b| b.line).collect();
        assert_eq!(lines, [3, 15, 30]);
        assert!(
            blocks[1]
                .code
                .starts_with("fn helper() -> u8 { 1 }\nfn main() {")
        );
        assert!(has_own_main(&blocks[0].code));
        assert!(!has_own_main(&blocks[2].code));
    }

    #[test]
    fn the_block_is_the_one_that_defines_the_module_s_functions() {
        let dir = std::env::temp_dir().join(format!("wasmprof-own-main-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), SOURCE).unwrap();
        let found = find(&dir, &["helper".to_owned()]).unwrap();
        assert_eq!((found.file.as_str(), found.line), ("src/lib.rs", 15));
        // Two blocks fit a module with only `main`: no guess.
        assert_eq!(find(&dir, &[]), None);
        assert_eq!(find(&dir, &["absent".to_owned()]), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_name_is_defined_only_as_a_whole_word() {
        assert!(defines("fn main() {}", "main"));
        assert!(defines("pub fn go<T>() {}", "go"));
        assert!(!defines("fn main_loop() {}", "main"));
        assert!(!defines("fn remain() {}", "main"));
    }
}
