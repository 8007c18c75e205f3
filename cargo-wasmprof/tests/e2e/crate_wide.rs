//! Crate-wide instrumentation on the examples: `crate-wide` has no
//! annotation and no wasmprof dependency at all and is built with
//! `--instrument-all`; `opt-in` asks for it in its manifest, with include
//! and exclude patterns and `#[wasmprof::skip]`.
//!
//! Builds that differ in their flags but make the same `.wasm` file use
//! target directories of their own, so that the tests can run side by side.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::*;

/// Every function of `crate-wide` that runs, with its exact call count.
const CRATE_WIDE_CALLS: &[(&str, u64)] = &[
    ("crate_wide::main", 1),
    ("crate_wide::total_area", 1),
    ("crate_wide::sum_of", 1),
    ("crate_wide::evens_below", 1),
    ("crate_wide::tiny", 4),
    ("crate_wide::inline::banner", 1),
    ("crate_wide::versions::newest", 1),
    ("crate_wide::geometry::Circle::new", 2),
    ("crate_wide::geometry::Square::new", 1),
    (
        "<crate_wide::geometry::Circle as crate_wide::geometry::Shape>::area",
        4,
    ),
    (
        "<crate_wide::geometry::Square as crate_wide::geometry::Shape>::area",
        2,
    ),
    ("crate_wide::geometry::Shape::describe", 3),
    ("crate_wide::text::count_words", 1),
    ("crate_wide::text::words::split", 1),
    ("crate_wide::text::words::is_word", 9),
    ("crate_wide::numbers::fib", 177),
    ("crate_wide::numbers::square", 5),
];

/// Where each function's source is, relative to the examples workspace.
fn file_of(name: &str) -> &'static str {
    if name.contains("::geometry::") {
        "crate-wide/src/geometry.rs"
    } else if name.contains("::text::words::") {
        "crate-wide/src/text/words.rs"
    } else if name.contains("::text::") {
        "crate-wide/src/text/mod.rs"
    } else if name.contains("::numbers::") {
        "crate-wide/src/support/numbers_impl.rs"
    } else {
        "crate-wide/src/main.rs"
    }
}

/// The 1-based line of a function in a file of the examples workspace:
/// `fn NAME`, for a method after the line of its `impl` or `trait`.
fn line_of(file: &str, name: &str) -> u32 {
    let text = std::fs::read_to_string(examples_dir().join(file)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // `<crate::Type as crate::Trait>::method`: the type owns it.
    let plain = match name.strip_prefix('<').and_then(|n| n.split_once(" as ")) {
        Some((ty, rest)) => format!("{ty}::{}", rest.rsplit("::").next().unwrap()),
        None => name.to_owned(),
    };
    let mut parts = plain.rsplit("::");
    let function = parts.next().unwrap();
    let owner = parts.next().filter(|o| o.starts_with(char::is_uppercase));
    let start = match owner {
        Some(owner) => lines
            .iter()
            .position(|l| {
                (l.starts_with("impl ") || l.starts_with("pub trait "))
                    && (l.contains(&format!(" {owner} ")) || l.ends_with(&format!(" {owner} {{")))
            })
            .unwrap_or_else(|| panic!("no impl or trait of {owner} in {file}")),
        None => 0,
    };
    let index = lines[start..]
        .iter()
        .position(|l| {
            l.contains(&format!("fn {function}(")) || l.contains(&format!("fn {function}<"))
        })
        .unwrap_or_else(|| panic!("no `fn {function}` in {file}"));
    (start + index) as u32 + 1
}

/// Every file under `dir`, however deep.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files
}

/// A directory's fingerprint: every file's path and bytes.
fn snapshot_tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files_under(dir)
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

/// The time each file under `dir` was last written.
fn modified_times(dir: &Path) -> BTreeMap<PathBuf, std::time::SystemTime> {
    files_under(dir)
        .into_iter()
        .map(|path| {
            let time = std::fs::metadata(&path).unwrap().modified().unwrap();
            (path, time)
        })
        .collect()
}

fn user_files() -> BTreeMap<PathBuf, Vec<u8>> {
    let examples = examples_dir();
    let mut files = snapshot_tree(&examples.join("crate-wide"));
    for name in ["Cargo.toml", "Cargo.lock"] {
        let path = examples.join(name);
        files.insert(path.clone(), std::fs::read(&path).unwrap());
    }
    files
}

#[test]
fn every_function_is_counted_at_its_own_file_and_line_and_the_sources_stay_untouched() {
    let before = user_files();
    let plain = wasmprof(&["run", "-p", "crate-wide", "--no-instrument"]);
    plain.assert_success();
    let run = wasmprof(&[
        "run",
        "-p",
        "crate-wide",
        "--instrument-all",
        "--min-size",
        "0",
    ]);
    run.assert_success();
    assert!(
        run.stderr
            .contains("Rewriting crate-wide v0.1.0: 17 functions instrumented crate-wide"),
        "{}",
        run.stderr
    );
    // The program computes what the plain build computes.
    assert!(run.stdout.contains("crate-wide: area"), "{}", run.stdout);
    assert_eq!(run.stdout, plain.stdout);

    let profile = run.profile();
    assert!(profile.run.complete);
    assert_eq!(profile.run.min_size, None);
    let calls = calls_by_function(&profile);
    let expected: BTreeMap<String, u64> = CRATE_WIDE_CALLS
        .iter()
        .map(|&(name, count)| (name.to_owned(), count))
        .collect();
    // Exactly these: no const fn (`scale`), no extern block (`host_only`),
    // no function written by a macro (`double`), no function nested in a
    // function (`is_separator`), no closure.
    assert_eq!(calls, expected);

    // Each at its file and line as in the editor, not in the rewritten copy.
    for function in &profile.functions {
        let file = file_of(&function.name);
        assert_eq!(function.file, file, "{}", function.name);
        assert_eq!(
            function.line,
            line_of(file, &function.name),
            "{}",
            function.name
        );
    }

    // Callers are the enclosing functions, closures included.
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "crate_wide::main",
                "crate_wide::total_area",
                "<crate_wide::geometry::Circle as crate_wide::geometry::Shape>::area"
            ]
        ),
        2
    );
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "crate_wide::main",
                "crate_wide::geometry::Shape::describe",
                "<crate_wide::geometry::Circle as crate_wide::geometry::Shape>::area"
            ]
        ),
        2
    );
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "crate_wide::main",
                "crate_wide::sum_of",
                "crate_wide::numbers::square"
            ]
        ),
        5
    );
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "crate_wide::main",
                "crate_wide::text::count_words",
                "crate_wide::text::words::is_word"
            ]
        ),
        9
    );

    // A second build with nothing changed rewrites nothing on disk, even
    // after a build with other flags (its own shadow copy) in the same
    // target directory: cargo, which goes by the files' times, then
    // recompiles only what the change of kind asks for (the runtime and its
    // dependents), never a copied crate for its copy's sake. (Other tests
    // build other kinds beside this one, so what cargo compiles is not
    // asserted here.)
    let copy = examples_dir().join("target/wasmprof/host/shadow/all-min0/workspace");
    let written = modified_times(&copy);
    assert!(
        written
            .keys()
            .any(|path| path.ends_with("crate-wide/src/main.rs")),
        "{written:?}"
    );
    wasmprof(&["build", "-p", "opt-in"]).assert_success();
    wasmprof(&[
        "build",
        "-p",
        "crate-wide",
        "--instrument-all",
        "--min-size",
        "0",
    ])
    .assert_success();
    assert!(
        modified_times(&copy) == written,
        "the second build wrote its copy again"
    );

    // Not a byte of the user's tree was written.
    assert!(before == user_files(), "the user's files changed");
}

/// The functions that are fully instrumented by default: `main` is the
/// entry, `total_area` and `count_words` loop, `fib` recurses; every other
/// function is a few lines without a loop, and counted only.
const CRATE_WIDE_FULL: &[&str] = &[
    "crate_wide::main",
    "crate_wide::total_area",
    "crate_wide::text::count_words",
    "crate_wide::numbers::fib",
];

#[test]
fn by_default_small_functions_are_counted_only_with_the_same_counts() {
    let target_dir = examples_dir().join("target").join("e2e-min-size");
    let target = target_dir.to_str().unwrap();
    // Without the engine's samples, which would give a counted function
    // that kept its frame (this build is not optimised) a sampled path.
    let run = wasmprof(&[
        "run",
        "-p",
        "crate-wide",
        "--instrument-all",
        "--no-sample",
        "--target-dir",
        target,
    ]);
    run.assert_success();
    assert!(
        run.stderr.contains(
            "17 functions instrumented crate-wide, 13 of them small (size below 40, no loop) \
             and counted only"
        ),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert_eq!(profile.run.min_size, Some(40));
    assert!(profile.run.small_counted);
    // Every function, with the count it has with --min-size 0.
    let expected: BTreeMap<String, u64> = CRATE_WIDE_CALLS
        .iter()
        .map(|&(name, count)| (name.to_owned(), count))
        .collect();
    assert_eq!(calls_by_function(&profile), expected);
    let counted = counted_functions(&profile);
    for (name, _) in CRATE_WIDE_CALLS {
        assert_eq!(
            counted.contains(*name),
            !CRATE_WIDE_FULL.contains(name),
            "{name}"
        );
    }
    // Counted functions have no node: without samples, their time is their
    // callers'.
    for node in &profile.nodes {
        if let Some(f) = node.function {
            assert!(!counted.contains(&profile.functions[f].name));
        }
    }

    let note = "NOTE: 13 functions marked (counted) were counted only (smaller than --min-size \
                40, with no loop or recursion; --min-size 0 times them all): their calls are \
                exact, their time is in their callers' self time, and their callers are not \
                tracked.";
    // The summary and the report give one line of legend; `--explain`
    // says it at length.
    let legend = legend_line(&run.stderr);
    assert!(
        legend.contains("(counted) counted only, its time in the caller's"),
        "summary:\n{}",
        run.stderr
    );
    let path = run.profile_path();
    let input = path.to_str().unwrap();
    let report = wasmprof(&["report", "--input", input]);
    report.assert_success();
    let header: Vec<&str> = report.stdout.lines().take(4).collect();
    assert_eq!(legend_line(&header.join("\n")), legend, "gprof header");
    let explained = wasmprof(&["report", "--input", input, "--explain"]);
    explained.assert_success();
    assert!(
        explained.stdout.lines().any(|line| line == note),
        "--explain:\n{}",
        explained.stdout
    );
    let flat_line = report
        .stdout
        .lines()
        .find(|l| l.ends_with(" crate_wide::text::words::is_word (counted)"))
        .unwrap_or_else(|| panic!("no marked line for is_word:\n{}", report.stdout));
    assert!(flat_line.contains(" 9 "), "{flat_line}");
    assert!(
        report.stdout.contains("<callers not tracked>"),
        "{}",
        report.stdout
    );
    // JSON names the tier; pprof labels the samples, as go tool pprof reads them.
    let json = wasmprof(&["report", "--input", input, "--format", "json"]);
    json.assert_success();
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let is_word = document["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "crate_wide::text::words::is_word")
        .unwrap();
    assert_eq!(
        (is_word["tier"].as_str(), is_word["calls"].as_u64()),
        (Some("counted"), Some(9))
    );
    let pprof = target_dir.join("crate-wide.pb.gz");
    wasmprof(&[
        "report",
        "--input",
        input,
        "--format",
        "pprof",
        "-o",
        pprof.to_str().unwrap(),
    ])
    .assert_success();
    let tags = go_pprof(&["-tags", "-sample_index=calls", pprof.to_str().unwrap()]);
    assert!(
        tags.contains("tier: Total") && tags.contains("counted"),
        "{tags}"
    );
}

#[test]
fn no_count_small_leaves_small_functions_out_and_the_report_says_so() {
    let target_dir = examples_dir().join("target").join("e2e-no-count-small");
    let run = wasmprof(&[
        "run",
        "-p",
        "crate-wide",
        "--instrument-all",
        "--no-count-small",
        "--target-dir",
        target_dir.to_str().unwrap(),
    ]);
    run.assert_success();
    assert!(
        run.stderr.contains(
            "4 functions instrumented crate-wide (left out: 13 small ones (size below 40, no \
             loop; --count-small counts them)"
        ),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert_eq!(profile.run.min_size, Some(40));
    assert!(!profile.run.small_counted);
    let expected: BTreeMap<String, u64> = CRATE_WIDE_CALLS
        .iter()
        .filter(|(name, _)| CRATE_WIDE_FULL.contains(name))
        .map(|&(name, count)| (name.to_owned(), count))
        .collect();
    assert_eq!(calls_by_function(&profile), expected);
    assert!(
        legend_line(&run.stderr).contains("functions under --min-size 40 not instrumented"),
        "summary:\n{}",
        run.stderr
    );
}

#[test]
fn the_manifest_opt_in_honours_include_exclude_and_skip() {
    let run = wasmprof(&["run", "-p", "opt-in"]);
    run.assert_success();
    assert!(run.stdout.contains("opt-in: total"), "{}", run.stdout);
    let calls = calls_by_function(&run.profile());
    let expected: BTreeMap<String, u64> = [
        // include = ["engine", "main"]
        ("opt_in::main", 1),
        ("opt_in::engine::run", 1),
        ("opt_in::engine::step", 5),
        ("opt_in::engine::Engine::fire", 1),
        // Not included, but annotated by hand.
        ("opt_in::ui::footer", 1),
    ]
    .into_iter()
    .map(|(name, count)| (name.to_owned(), count))
    .collect();
    // Left out: `engine::cache::lookup` and `engine::trace` (exclude),
    // `engine::quiet` and `Engine::idle` (#[wasmprof::skip]), `ui::show`
    // (not included).
    assert_eq!(calls, expected);
}

#[test]
fn a_registry_dependency_is_instrumented_in_place() {
    let target_dir = examples_dir().join("target").join("e2e-instrument-crate");
    let run = wasmprof(&[
        "run",
        "-p",
        "crate-wide",
        "--instrument-crate",
        "semver",
        "--min-size",
        "0",
        "--target-dir",
        target_dir.to_str().unwrap(),
    ]);
    run.assert_success();
    assert!(
        run.stdout.contains("newest 1.10.0-beta.2"),
        "{}",
        run.stdout
    );
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    // Only the dependency: crate-wide itself was not asked for.
    assert!(
        calls
            .keys()
            .all(|name| name.starts_with("semver::") || name.starts_with("<semver::")),
        "{:?}",
        calls.keys()
    );
    assert_eq!(calls["semver::Version::parse"], 3);
    // An impl written away from its type is named by the type, as v0
    // symbols name it (legacy ones name the module it stands in).
    let from_str = "<semver::Version as core::str::traits::FromStr>::from_str";
    assert_eq!(calls[from_str], 3);
    assert_eq!(
        calls_of_path(&profile, &["semver::Version::parse", from_str]),
        3
    );
    // At the registry source's own paths and lines.
    for function in &profile.functions {
        assert!(
            function.file.contains("/semver-1.0.28/src/") && !function.file.contains("/wasmprof/"),
            "{} at {}",
            function.name,
            function.file
        );
        assert_function_at_its_line(function, std::path::Path::new("/"));
    }
}

/// A directory of throwaway files outside the examples workspace.
fn scratch_dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = examples_dir()
        .join("target")
        .join("e2e-crate-wide-scratch")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A throwaway crate of its own, for the failure cases.
fn scratch_crate(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n"
    );
    let mut all = vec![("Cargo.toml", manifest.as_str())];
    all.extend_from_slice(files);
    scratch_dir(name, &all)
}

#[test]
fn a_crate_that_does_not_parse_is_refused_with_its_position() {
    let dir = scratch_crate(
        "broken",
        &[
            ("src/main.rs", "mod parser;\nfn main() {}\n"),
            ("src/parser.rs", "pub fn ok() {}\n\npub fn bad( {\n}\n"),
        ],
    );
    let before = snapshot_tree(&dir);
    let run = wasmprof_in(&dir, &["build", "--instrument-all", "--offline"]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    let parser = dir.join("src/parser.rs");
    assert!(
        run.stderr.contains(&format!(
            "crate-wide instrumentation of `broken` failed: {}:3:",
            parser.display()
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("Nothing was changed in your sources"),
        "{}",
        run.stderr
    );
    // Nothing was written beside the sources: only the target directory and
    // the lock file `cargo metadata` makes are new.
    let after: BTreeMap<_, _> = snapshot_tree(&dir)
        .into_iter()
        .filter(|(p, _)| !p.starts_with(dir.join("target")) && !p.ends_with("Cargo.lock"))
        .collect();
    assert!(before == after, "the crate's files changed");
}

#[test]
fn a_compile_error_in_a_rewritten_crate_names_the_function_and_how_to_leave_it_out() {
    let dir = scratch_crate(
        "fails",
        &[
            ("src/main.rs", "mod parser;\nfn main() { parser::ok(); }\n"),
            (
                "src/parser.rs",
                "pub fn ok() {}\n\npub fn bad() -> u32 {\n    let n: u32 = \"text\";\n    n\n}\n",
            ),
        ],
    );
    let run = wasmprof_in(&dir, &["build", "--instrument-all", "--offline"]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    // cargo's own error, passed through, then ours.
    assert!(run.stderr.contains("error[E0308]"), "{}", run.stderr);
    for expected in [
        "`fails` failed to compile instrumented crate-wide by wasmprof",
        &format!(
            "fails::parser::bad ({}:3)",
            dir.join("src/parser.rs").display()
        ),
        "--exclude-path fails::parser::bad",
    ] {
        assert!(run.stderr.contains(expected), "{expected}:\n{}", run.stderr);
    }
    assert!(!run.stderr.contains("fails::parser::ok "), "{}", run.stderr);
}

#[test]
fn syn_and_proc_macro2_themselves_can_be_instrumented_beside_the_attribute() {
    // wasmprof-macros is built from syn and proc-macro2: instrumented, they
    // use the runtime without the attribute, and no cycle forms. The lock
    // file is this workspace's, so the versions are the ones it pins.
    let dir = scratch_dir(
        "parses-rust",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"parses-rust\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nsyn = { version = \"2\", features = [\"full\"] }\n\n[workspace]\n",
            ),
            (
                "src/main.rs",
                "fn main() {\n    let source = \"fn a() {} struct B { x: u32 } mod c { pub fn d() {} }\";\n    \
                 let mut items = 0;\n    for _ in 0..3 {\n        \
                 items += count(source);\n    }\n    println!(\"items {items}\");\n}\n\n\
                 fn count(source: &str) -> usize {\n    \
                 syn::parse_file(source).expect(\"parses\").items.len()\n}\n",
            ),
        ],
    );
    std::fs::copy(repo_root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let run = wasmprof_in(
        &dir,
        &[
            "run",
            "--instrument-all",
            "--instrument-crate",
            "syn",
            "--instrument-crate",
            "proc-macro2",
            "--no-sample",
        ],
    );
    run.assert_success();
    assert_eq!(run.stdout, "items 9\n");
    assert!(!run.stderr.contains("cyclic"), "{}", run.stderr);
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    assert_eq!(calls["parses_rust::count"], 3);
    assert_eq!(calls["syn::parse_file"], 3);
    // `count` is small, so counted only: syn's calls are under `main`.
    assert_eq!(
        calls_of_path(&profile, &["parses_rust::main", "syn::parse_file"]),
        3
    );
    let of = |prefix: &str| {
        calls
            .keys()
            .filter(|n| n.trim_start_matches('<').starts_with(prefix))
            .count()
    };
    assert!(of("syn::") >= 50, "{} syn functions", of("syn::"));
    assert!(
        of("proc_macro2::") >= 10,
        "{} proc-macro2 functions",
        of("proc_macro2::")
    );
}

#[test]
fn a_module_path_outside_the_crate_is_refused_and_a_build_script_reading_sources_is_pointed_out() {
    let dir = scratch_crate(
        "outside",
        &[
            (
                "src/main.rs",
                "#[path = \"../../shared.rs\"]\nmod shared;\nfn main() { shared::s(); }\n",
            ),
            (
                "build.rs",
                "fn main() { let _ = std::fs::read_to_string(\"src/main.rs\"); }\n",
            ),
        ],
    );
    std::fs::write(dir.parent().unwrap().join("shared.rs"), "pub fn s() {}\n").unwrap();
    let run = wasmprof_in(&dir, &["build", "--instrument-all", "--offline"]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "{}:2: the `#[path]` of module `shared` points outside the crate",
            dir.join("src/main.rs").display()
        )),
        "{}",
        run.stderr
    );

    // Excluding the module in the manifest is the way out; the build
    // script's reading of its sources is then pointed out.
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!("{text}\n[package.metadata.wasmprof]\nexclude = [\"shared\"]\n"),
    )
    .unwrap();
    let run = wasmprof_in(&dir, &["build", "--instrument-all", "--offline"]);
    run.assert_success();
    assert!(
        run.stderr
            .contains("warning: the build script of `outside`")
            && run.stderr.contains("seems to read the crate's sources"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_path_dependency_outside_the_workspace_in_edition_2015_and_a_taken_wasmprof_name() {
    // `app` has a dependency called `wasmprof` that is not the runtime, so
    // its copy gets the runtime under another name; `old` is an edition
    // 2015 crate outside the workspace, instrumented with --instrument-crate.
    let dir = scratch_dir(
        "deps",
        &[
            (
                "ws/Cargo.toml",
                "[workspace]\nmembers = [\"app\"]\nresolver = \"2\"\n",
            ),
            (
                "ws/app/Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nold = { path = \"../../old\" }\n\
                 wasmprof = { path = \"../../fake\", package = \"fake-wasmprof\" }\n",
            ),
            (
                "ws/app/src/main.rs",
                "fn main() {\n    let sum = (0..4).map(old::twice).sum::<u32>();\n    \
                 println!(\"{} {}\", wasmprof::name(), sum);\n}\n",
            ),
            (
                "old/Cargo.toml",
                "[package]\nname = \"old\"\nversion = \"0.1.0\"\n",
            ),
            (
                "old/src/lib.rs",
                "//! Edition 2015.\n\npub fn twice(x: u32) -> u32 {\n    let y = x * 2;\n    y\n}\n",
            ),
            (
                "fake/Cargo.toml",
                "[package]\nname = \"fake-wasmprof\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "fake/src/lib.rs",
                "pub fn name() -> &'static str {\n    \"fake\"\n}\n",
            ),
        ],
    );
    let run = wasmprof_in(
        &dir.join("ws"),
        &[
            "run",
            "--instrument-all",
            "--instrument-crate",
            "old",
            "--min-size",
            "0",
            "--offline",
        ],
    );
    run.assert_success();
    assert!(run.stdout.contains("fake 12"), "{}", run.stdout);
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    let expected: BTreeMap<String, u64> = [("app::main", 1), ("old::twice", 4)]
        .into_iter()
        .map(|(name, count)| (name.to_owned(), count))
        .collect();
    assert_eq!(calls, expected);
    let twice = profile
        .functions
        .iter()
        .find(|f| f.name == "old::twice")
        .unwrap();
    assert_eq!(
        (twice.file.as_str(), twice.line),
        (dir.join("old/src/lib.rs").to_str().unwrap(), 3)
    );
    // The originals are as they were.
    assert_eq!(
        std::fs::read_to_string(dir.join("old/src/lib.rs")).unwrap(),
        "//! Edition 2015.\n\npub fn twice(x: u32) -> u32 {\n    let y = x * 2;\n    y\n}\n"
    );
}

#[test]
fn crates_that_cannot_be_instrumented_are_refused_by_name() {
    for (krate, reason) in [
        (
            "wasm-bindgen",
            "the wasm-bindgen CLI runs its functions in an interpreter",
        ),
        ("wasmprof-macros", "is wasmprof itself"),
        ("no-such-crate", "no package of that name"),
    ] {
        let run = wasmprof(&["build", "-p", "fib", "--instrument-crate", krate]);
        assert_eq!(run.code(), Some(1), "{krate}: {}", run.stderr);
        assert!(run.stderr.contains(reason), "{krate}: {}", run.stderr);
        assert!(!run.stderr.contains("Compiling"), "{}", run.stderr);
    }
}

/// The one line of legend a summary or a text report has, checked to be
/// the only note and to say where the long text is.
fn legend_line(text: &str) -> &str {
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("NOTE:")).collect();
    assert_eq!(notes.len(), 1, "one line of legend:\n{text}");
    assert!(
        notes[0].ends_with("; more: `cargo wasmprof report --explain`"),
        "{}",
        notes[0]
    );
    notes[0]
}
