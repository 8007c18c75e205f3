//! `--memory` and the program's global allocator: std's, which the runtime
//! wraps by itself, or the program's own, wrapped in `wasmprof::Recording`
//! in the rewrite's copy of its crate (the crate is copied for that alone
//! when it is not instrumented crate-wide), or by the program in one line
//! where the rewrite cannot (a program has one global allocator, so the
//! runtime cannot add a second).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use cargo_metadata::{Metadata, Package};

/// Which allocator a `--memory` build records (`WASMPROF_MEMORY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordedAllocator {
    /// std's: the runtime installs the recording allocator around it.
    System,
    /// The program's own, wrapped in `wasmprof::Recording` by the program
    /// or by the crate-wide rewrite (of a crate instrumented crate-wide, or
    /// of one copied for its allocator alone).
    Own,
}

impl RecordedAllocator {
    /// The word for `WASMPROF_MEMORY`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RecordedAllocator::System => "system",
            RecordedAllocator::Own => "own",
        }
    }
}

/// A `#[global_allocator]` found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Declared {
    /// The package it is in.
    package: String,
    file: PathBuf,
    line: usize,
    /// The declaration wraps its allocator in `Recording`.
    recorded: bool,
}

/// Every `#[global_allocator]` of the selected packages and the workspace
/// members they depend on, found once in the sources (before the rewrite,
/// which reads them, and after it, which decides).
#[derive(Debug, Default)]
pub(crate) struct Declarations(Vec<Declared>);

impl Declarations {
    /// Scans `packages` and the workspace members they depend on, in file
    /// order.
    pub(crate) fn find(metadata: &Metadata, packages: &[&Package]) -> Declarations {
        let mut declared = Vec::new();
        for package in with_member_dependencies(metadata, packages) {
            for root in source_roots(package) {
                let before = declared.len();
                find_declarations(&root, &mut declared);
                for found in &mut declared[before..] {
                    found.package = package.name.to_string();
                }
            }
        }
        declared.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        declared.dedup();
        Declarations(declared)
    }

    /// The packages that declare an allocator of their own not wrapped in
    /// `wasmprof::Recording`: the rewrite wraps each in its copy.
    pub(crate) fn unwrapped(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .0
            .iter()
            .filter(|d| !d.recorded)
            .map(|d| d.package.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Which allocator to record: an error that shows the one-line wrapper
    /// when a package declares an allocator of its own that is wrapped
    /// neither in the source nor by the rewrite (`wrapped`: the packages
    /// where it did).
    pub(crate) fn choose(&self, wrapped: &[&str]) -> Result<RecordedAllocator> {
        let plain = self
            .0
            .iter()
            .find(|d| !d.recorded && !wrapped.contains(&d.package.as_str()));
        match plain {
            Some(plain) => bail!(
                "{}:{} declares a global allocator of its own, and a program has only one: \
                 `--memory` cannot add its recording allocator beside it, and could not wrap \
                 yours in its copy of the crate (the declaration is not where the rewrite sees \
                 it, as inside a macro). Wrap it in wasmprof's yourself, in one line (it only \
                 forwards in builds without --memory):\n\n    \
                 #[global_allocator]\n    \
                 static ALLOCATOR: wasmprof::Recording<YourAllocator> =\n        \
                 wasmprof::Recording::new(YourAllocator::new());\n",
                plain.file.display(),
                plain.line
            ),
            None if self.0.is_empty() => Ok(RecordedAllocator::System),
            None => Ok(RecordedAllocator::Own),
        }
    }
}

/// `packages` and the workspace members among their dependencies,
/// transitively.
fn with_member_dependencies<'a>(
    metadata: &'a Metadata,
    packages: &[&'a Package],
) -> Vec<&'a Package> {
    let members: Vec<&Package> = metadata.workspace_packages();
    let mut found: Vec<&Package> = packages.to_vec();
    let mut at = 0;
    while at < found.len() {
        let package = found[at];
        for dependency in &package.dependencies {
            if let Some(member) = members.iter().find(|m| m.name.as_str() == dependency.name)
                && !found.iter().any(|f| f.id == member.id)
            {
                found.push(member);
            }
        }
        at += 1;
    }
    found
}

/// The directories of a package's library and binaries.
fn source_roots(package: &Package) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = package
        .targets
        .iter()
        .filter(|t| t.is_lib() || t.is_bin() || t.is_cdylib())
        .filter_map(|t| t.src_path.parent().map(|p| p.as_std_path().to_owned()))
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// Adds the `#[global_allocator]` declarations of the `.rs` files under
/// `dir`. A file that cannot be read is skipped: cargo will say why.
fn find_declarations(dir: &Path, found: &mut Vec<Declared>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_declarations(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs")
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            found.extend(
                declarations_in(&text)
                    .into_iter()
                    .map(|(line, recorded)| Declared {
                        package: String::new(),
                        file: path.clone(),
                        line,
                        recorded,
                    }),
            );
        }
    }
}

/// The lines (1-based) of `#[global_allocator]` attributes in `text`, and
/// whether the item they mark names `Recording`. A plain text search: the
/// attribute cannot be written another way outside a macro.
fn declarations_in(text: &str) -> Vec<(usize, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if !code.contains("#[global_allocator]") {
            continue;
        }
        // The item runs to its `;`.
        let item: String = lines[index..]
            .iter()
            .scan(false, |done, line| {
                if *done {
                    return None;
                }
                *done = line.contains(';');
                Some(*line)
            })
            .collect();
        found.push((index + 1, item.contains("Recording")));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_is_found_with_whether_it_is_recorded() {
        let text = "use x;\n#[global_allocator]\nstatic A: talc::Talck = talc::Talck::new();\n\
                    // #[global_allocator] in a comment\n\
                    #[global_allocator]\nstatic B: wasmprof::Recording<lol_alloc::Lol> =\n    \
                    wasmprof::Recording::new(lol_alloc::Lol::new());\n";
        assert_eq!(declarations_in(text), [(2, false), (5, true)]);
    }

    #[test]
    fn declarations_are_found_in_nested_modules_and_a_plain_one_is_refused_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("alloc")).unwrap();
        std::fs::write(dir.path().join("lib.rs"), "mod alloc;\n").unwrap();
        std::fs::write(
            dir.path().join("alloc/mod.rs"),
            "#[global_allocator]\nstatic A: Bump = Bump::new();\n",
        )
        .unwrap();
        let mut found = Vec::new();
        find_declarations(dir.path(), &mut found);
        assert_eq!(
            found,
            [Declared {
                package: String::new(),
                file: dir.path().join("alloc/mod.rs"),
                line: 1,
                recorded: false
            }]
        );
    }
}
