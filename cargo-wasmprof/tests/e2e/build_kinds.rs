//! Going back to a kind of build built before compiles nothing: each
//! kind's artifacts are kept beside the others' in the one build
//! directory (`build/kept_kinds.rs`), and what comes back is the module
//! that kind built, byte for byte.

use std::path::{Path, PathBuf};

use crate::support::*;

/// `long-call`'s WASI binary built with `flags`: what cargo compiled, and
/// a copy of the module.
fn built(flags: &[&str], copy_to: &Path) -> (String, PathBuf) {
    let mut args = vec![
        "build",
        "-p",
        "long-call",
        "--release",
        "--host",
        "wasmtime",
    ];
    args.extend_from_slice(&["--bin", "long-call"]);
    args.extend_from_slice(flags);
    let run = wasmprof(&args);
    run.assert_success();
    let module = run
        .stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Finished ")
                .filter(|m| m.ends_with(".wasm"))
        })
        .unwrap_or_else(|| panic!("no module named:\n{}", run.stderr));
    std::fs::copy(module, copy_to).unwrap();
    let compiled = run
        .stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("Compiling"))
        .collect::<Vec<_>>()
        .join("\n");
    (compiled, copy_to.to_path_buf())
}

#[test]
fn a_kind_built_before_compiles_nothing_and_gives_the_same_module() {
    let modules = tempfile::tempdir().unwrap();
    let kinds: [&[&str]; 2] = [
        &[],
        &[
            "--timer",
            "none",
            "--no-default-features",
            "--instrument-all",
        ],
    ];
    let first: Vec<PathBuf> = kinds
        .iter()
        .enumerate()
        .map(|(i, flags)| built(flags, &modules.path().join(format!("{i}.wasm"))).1)
        .collect();
    for (i, flags) in kinds.iter().enumerate() {
        let (compiled, module) = built(flags, &modules.path().join(format!("{i}-again.wasm")));
        assert_eq!(compiled, "", "{flags:?} compiled again");
        assert!(
            std::fs::read(&module).unwrap() == std::fs::read(&first[i]).unwrap(),
            "{flags:?}: the module differs from the one this kind built before"
        );
    }
    // The kind brought back runs as built, its counts exact.
    let run = wasmprof(&[
        "run",
        "-p",
        "long-call",
        "--release",
        "--host",
        "wasmtime",
        "--bin",
        "long-call",
        "--",
        "long",
    ]);
    run.assert_success();
    assert!(!run.stderr.contains("Compiling"), "{}", run.stderr);
    assert_eq!(
        calls_by_function(&run.profile()).get("long_call::step"),
        Some(&200_001),
        "{}",
        run.stderr
    );
}
