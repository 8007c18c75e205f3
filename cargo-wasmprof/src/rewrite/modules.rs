//! Where the file of `mod name;` is, by rustc's rules.
//!
//! A module file is found from the directory of the module that declares
//! it: `src/lib.rs` (and `main.rs`, `mod.rs`, and every file loaded through
//! `#[path]`) owns the directory it is in, so its `mod x;` is `x.rs` or
//! `x/mod.rs` beside it; any other file `src/a.rs` owns `src/a/`, so its
//! `mod x;` is `src/a/x.rs` or `src/a/x/mod.rs`. An inline `mod m { ... }`
//! adds `m/` to the directory. `#[path = "p"]` on `mod x;` is relative to
//! the directory of the declaring file (plus the inline modules around the
//! declaration); on an inline module it names the directory itself.

use std::path::{Component, Path, PathBuf};

/// The directory that `mod x;` declarations of a module resolve against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModDir {
    /// The directory the declaring file is in, plus inline modules.
    pub dir: PathBuf,
    /// For a non-`mod.rs` file `a.rs`: `a`, the directory its children go
    /// into, not yet added to `dir`.
    pub relative: Option<String>,
}

/// Where a file module's source is, and how its own children resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModFile {
    pub file: PathBuf,
    pub dir: ModDir,
}

impl ModDir {
    /// The crate root (`src/lib.rs`, `src/main.rs`, `[lib] path`).
    pub(crate) fn root(file: &Path) -> ModDir {
        ModDir {
            dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
            relative: None,
        }
    }

    /// Every place `mod name;` may be, in the order rustc tries them.
    pub(crate) fn file_module_candidates(&self, name: &str, path: Option<&str>) -> Vec<ModFile> {
        if let Some(path) = path {
            let file = normalize(&self.dir.join(path));
            // Every `#[path]` file owns its directory, as a `mod.rs` does.
            let dir = ModDir {
                dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
                relative: None,
            };
            return vec![ModFile { file, dir }];
        }
        let base = match &self.relative {
            Some(relative) => self.dir.join(relative),
            None => self.dir.clone(),
        };
        vec![
            ModFile {
                file: base.join(format!("{name}.rs")),
                dir: ModDir {
                    dir: base.clone(),
                    relative: Some(name.to_owned()),
                },
            },
            ModFile {
                file: base.join(name).join("mod.rs"),
                dir: ModDir {
                    dir: base.join(name),
                    relative: None,
                },
            },
        ]
    }

    /// The directory of an inline `mod name { ... }`.
    pub(crate) fn inline_module(&self, name: &str, path: Option<&str>) -> ModDir {
        if let Some(path) = path {
            return ModDir {
                dir: normalize(&self.dir.join(path)),
                relative: None,
            };
        }
        let mut dir = self.dir.clone();
        if let Some(relative) = &self.relative {
            dir.push(relative);
        }
        dir.push(name);
        ModDir {
            dir,
            relative: None,
        }
    }
}

/// `a/b/../c` as `a/c`, without asking the file system (a `..` through a
/// symbolic link means what it says in the source, not on disk).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether `path` is inside `dir` (both normalised).
pub(crate) fn is_inside(path: &Path, dir: &Path) -> bool {
    normalize(path).starts_with(normalize(dir))
}
