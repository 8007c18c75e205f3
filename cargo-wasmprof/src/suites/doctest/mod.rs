//! Doctests as tests in the profile.
//!
//! rustdoc builds each doctest as a program of its own (`rust_out.wasm`)
//! and hands it to the runner with no name: neither the arguments nor the
//! environment say which doctest it is. But rustdoc wraps the doctest's
//! code in a function named after its place, `_doctest_main_src_lib_rs_5_0`
//! (file `src/lib.rs`, line 5), for coverage tools to map it back, and
//! that name is in the module's name section. The whole run is the
//! doctest, so its calls go under a test node of that name, timed by the
//! host around the program. A doctest with its own `fn main` has no such
//! wrapper; its place is looked for in the source (`own_main`).

mod own_main;

use std::path::Path;

use wasmprof_profile::profile::{Function, Node, Profile, TimerMode};

/// rustdoc's prefix for the function that holds a doctest's code.
const WRAPPER_PREFIX: &str = "_doctest_main_";

/// The functions a doctest's module defines at its top, `rust_out::NAME`
/// (its `main` left out), by their demangled names.
pub(super) fn defined_functions<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut defined: Vec<String> = names
        .into_iter()
        .filter_map(|mangled| {
            let name = format!("{:#}", rustc_demangle::demangle(mangled));
            let own = name.strip_prefix("rust_out::")?;
            (!own.contains("::") && own != "main").then(|| own.to_owned())
        })
        .collect();
    defined.sort();
    defined.dedup();
    defined
}

/// The place of a doctest with its own `main`, found among the package's
/// doctests (see `own_main`): its file relative to the package and line.
pub(super) fn own_main_place(package_dir: &Path, defined: &[String]) -> Option<(String, u32)> {
    own_main::find(package_dir, defined).map(|block| (block.file, block.line))
}

/// The test name of a doctest that ran in rustdoc's merged binary (edition
/// 2024), from the name its harness gave it (`src/lib.rs - double (line
/// 9)`): the same `<doctest src/lib.rs (line 9)>` as a doctest run alone,
/// its file made relative to the package by `relative`.
pub(super) fn harness_name(name: &str, relative: impl Fn(&str) -> String) -> String {
    let place = name
        .strip_suffix(')')
        .and_then(|rest| rest.rsplit_once(" (line "))
        .and_then(|(head, line)| {
            let line: u32 = line.parse().ok()?;
            // `src/lib.rs - double`, or `src/lib.rs -` for the crate's docs.
            let file = (head.split_once(" - ").map(|(file, _)| file))
                .or_else(|| head.strip_suffix(" -"))
                .unwrap_or(head);
            Some(format!("<doctest {} (line {line})>", relative(file)))
        });
    place.unwrap_or_else(|| format!("<doctest {name}>"))
}

/// `file`, named relative to the directory rustdoc compiled in (the
/// workspace's, which the runner is not told), made relative to the
/// package's: the shortest tail of it that is a file there.
pub(super) fn package_relative(file: &str, package_dir: &Path) -> String {
    let parts: Vec<&str> = file.split('/').collect();
    (0..parts.len())
        .map(|skip| parts[skip..].join("/"))
        .find(|tail| package_dir.join(tail).is_file())
        .unwrap_or_else(|| file.to_owned())
}

/// A doctest's binary: rustdoc's `rust_out` in a temporary directory.
pub(super) fn is_doctest_binary(module: &Path) -> bool {
    module.file_stem().is_some_and(|stem| stem == "rust_out")
        && module
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .is_some_and(|dir| dir.starts_with("rustdoctest"))
}

/// Where a doctest is: its file as the name section spells it (every
/// character but letters and digits made `_`), and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Place {
    pub spelled_file: String,
    pub line: u32,
}

/// The doctest's place, read from the functions' (mangled) names; `None`
/// when the doctest wrote its own `fn main` or an optimised build inlined
/// rustdoc's wrapper away.
pub(super) fn place<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Place> {
    names.into_iter().find_map(|mangled| {
        let name = format!("{:#}", rustc_demangle::demangle(mangled));
        let wrapper = name.rsplit("::").next()?.strip_prefix(WRAPPER_PREFIX)?;
        // `<file>_<line>_<index>`: the file's spelling has underscores of
        // its own, the two numbers none.
        let (rest, index) = wrapper.rsplit_once('_')?;
        let (file, line) = rest.rsplit_once('_')?;
        index.parse::<u32>().ok()?;
        Some(Place {
            spelled_file: file.to_owned(),
            line: line.parse().ok()?,
        })
    })
}

/// The file under `root` whose path rustdoc spelled `spelled` (relative to
/// the directory rustdoc ran in, which may be the workspace's above the
/// package), or `None` when no file there is spelled so.
pub(super) fn find_file(root: &Path, spelled: &str) -> Option<String> {
    let mut files = Vec::new();
    source_files(root, root, 0, &mut files);
    let exact = files.iter().find(|f| spell(f) == spelled);
    let below = || {
        files
            .iter()
            .find(|f| spelled.ends_with(&format!("_{}", spell(f))))
    };
    exact.or_else(below).cloned()
}

/// A path as rustdoc spells it in the wrapper's name.
fn spell(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The `.rs` and `.md` files under `dir` (docs may be included from a
/// README), as `/`-separated paths relative to `root`; build output and
/// hidden directories left out, and a bound on the depth and the count so
/// that a huge tree costs little.
pub(super) fn source_files(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
    const MAX_DEPTH: usize = 8;
    const MAX_FILES: usize = 20_000;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if out.len() >= MAX_FILES {
            return;
        }
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() && depth < MAX_DEPTH => {
                source_files(root, &path, depth + 1, out)
            }
            Ok(kind) if kind.is_file() && (name.ends_with(".rs") || name.ends_with(".md")) => {
                if let Ok(relative) = path.strip_prefix(root) {
                    let parts: Vec<_> = relative
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect();
                    out.push(parts.join("/"));
                }
            }
            _ => {}
        }
    }
}

/// What a doctest's binary holds, and so how its run is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Found {
    /// One doctest, at this file (relative to the package) and line.
    At(String, u32),
    /// One doctest whose place is unknown.
    Somewhere,
    /// Edition 2024's merged doctests, run by a host that cannot tell them
    /// apart (only Node's watches the harness).
    Merged,
}

/// Whether the module is edition 2024's bundle of merged doctests.
pub(super) fn is_merged<'a>(names: impl IntoIterator<Item = &'a str>) -> bool {
    names.into_iter().any(|mangled| {
        format!("{:#}", rustc_demangle::demangle(mangled)).starts_with("doctest_bundle_")
    })
}

/// Puts everything the doctest's run recorded under one test node at the
/// root, named as rustdoc names the doctest's place (`doctest src/lib.rs
/// (line 5)`). Its time is the program's, as the host measured it around
/// the run, so its own time is what the instrumented calls leave.
pub(super) fn make_test(profile: &mut Profile, krate: &str, found: &Found, program_nanos: u64) {
    let (name, file, line) = match found {
        Found::At(file, line) => (
            format!("{krate}::<doctest {file} (line {line})>"),
            file.as_str(),
            *line,
        ),
        Found::Somewhere => (format!("{krate}::<doctest>"), "", 0),
        Found::Merged => (format!("{krate}::<doctests, merged>"), "", 0),
    };
    let function = profile.functions.len();
    profile.functions.push(Function {
        is_test: true,
        ..Function::at(name, file, line)
    });
    let root = Profile::ROOT;
    let children_time: f64 = profile
        .nodes
        .iter()
        .filter(|n| n.parent == Some(root))
        .map(|n| n.inclusive_nanos)
        .sum();
    let timed = profile.timer.mode == TimerMode::Host;
    let test = Node {
        parent: Some(root),
        function: Some(function),
        calls: 1,
        inclusive_nanos: if timed {
            (program_nanos as f64).max(children_time)
        } else {
            0.0
        },
        ..Node::root()
    };
    // The test node goes right after the root, so that every parent still
    // comes before its children.
    let at = root + 1;
    for node in &mut profile.nodes {
        if let Some(parent) = node.parent.as_mut() {
            if *parent >= at {
                *parent += 1;
            } else if *parent == root {
                *parent = at;
            }
        }
    }
    for future in &mut profile.futures {
        if future.node >= at {
            future.node += 1;
        }
    }
    profile.nodes.insert(at, test);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_place_is_read_from_rustdoc_s_wrapper() {
        // `rust_out::main::_doctest_main_src_lib_rs_12_0`, mangled.
        let names = [
            "_ZN8rust_out4main17h0123456789abcdefE",
            "_ZN8rust_out4main29_doctest_main_src_lib_rs_12_017h0123456789abcdefE",
        ];
        assert_eq!(
            place(names),
            Some(Place {
                spelled_file: "src_lib_rs".into(),
                line: 12
            })
        );
        assert_eq!(place(["_ZN8rust_out4main17h0123456789abcdefE"]), None);
        assert_eq!(place(["_doctest_main_nonsense"]), None);
        assert!(is_merged([
            "_ZN19doctest_bundle_202411__doctest_04main17hc6cb98b757fb35a8E"
        ]));
        assert!(!is_merged(names));
    }

    #[test]
    fn the_doctest_s_own_top_level_functions_are_read_from_its_names() {
        let names = [
            "_ZN8rust_out4main17h0123456789abcdefE",
            "_ZN8rust_out6helper17h0123456789abcdefE",
            "_ZN8rust_out4main28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE",
            "_ZN4itoa6Buffer3new17h0123456789abcdefE",
        ];
        assert_eq!(defined_functions(names), ["helper"]);
    }

    #[test]
    fn merged_doctests_are_named_as_doctests_run_alone() {
        let same = |file: &str| file.to_owned();
        assert_eq!(
            harness_name("src/lib.rs - double (line 9)", same),
            "<doctest src/lib.rs (line 9)>"
        );
        assert_eq!(
            harness_name("src/lib.rs - (line 3)", same),
            "<doctest src/lib.rs (line 3)>"
        );
        assert_eq!(harness_name("odd", same), "<doctest odd>");
        // rustdoc compiled in the workspace, above the package.
        let dir = std::env::temp_dir().join(format!("wasmprof-merged-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), "").unwrap();
        let relative = |file: &str| package_relative(file, &dir);
        assert_eq!(
            harness_name("two/src/lib.rs - (line 3)", relative),
            "<doctest src/lib.rs (line 3)>"
        );
        assert_eq!(relative("src/gone.rs"), "src/gone.rs");
        assert_eq!(relative("src/lib.rs"), "src/lib.rs");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_spelled_file_is_found_in_the_package_or_below_the_workspace() {
        let dir = std::env::temp_dir().join(format!("wasmprof-doctest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src/parse")).unwrap();
        std::fs::create_dir_all(dir.join("target/debug")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), "").unwrap();
        std::fs::write(dir.join("src/parse/number-words.rs"), "").unwrap();
        std::fs::write(dir.join("README.md"), "").unwrap();
        std::fs::write(dir.join("target/debug/lib.rs"), "").unwrap();
        assert_eq!(find_file(&dir, "src_lib_rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(
            find_file(&dir, "src_parse_number_words_rs").as_deref(),
            Some("src/parse/number-words.rs")
        );
        // rustdoc ran in the workspace, one level above the package.
        assert_eq!(
            find_file(&dir, "crates_mine_README_md").as_deref(),
            Some("README.md")
        );
        assert_eq!(find_file(&dir, "src_main_rs"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_run_s_calls_go_under_the_doctest() {
        let mut profile = wasmprof_profile::fixtures::ProfileBuilder::timed()
            .path(&["demo::parse"], 2, 1_000_000.0)
            .path(&["demo::parse", "demo::digit"], 6, 500_000.0)
            .path(&["demo::format"], 1, 2_000_000.0)
            .build();
        let roots_before = profile.children()[Profile::ROOT].len();
        let nodes_before = profile.nodes.len();
        let found = Found::At("src/lib.rs".into(), 5);
        make_test(&mut profile, "demo", &found, 10_000_000_000);
        let children = profile.children();
        assert_eq!(children[Profile::ROOT], vec![1]);
        assert_eq!(children[1].len(), roots_before);
        assert_eq!(profile.nodes.len(), nodes_before + 1);
        let test = &profile.nodes[1];
        let function = &profile.functions[test.function.unwrap()];
        assert_eq!(function.name, "demo::<doctest src/lib.rs (line 5)>");
        assert!(function.is_test);
        assert_eq!(test.calls, 1);
        assert_eq!(test.inclusive_nanos, 10_000_000_000.0);
        for (index, node) in profile.nodes.iter().enumerate() {
            assert!(node.parent.is_none_or(|p| p < index));
        }
    }
}
