//! Annotations cost nothing in an ordinary build: the annotated examples
//! (`fib`, and `async-loads` for async functions) and the same source with
//! every `#[wasmprof::instrument]` removed compile to the same code, byte
//! for byte, and import nothing of the host API.

use std::path::Path;
use std::process::Command;

use crate::support::*;
use wasmprof_profile::wasm_info;

fn plain_build(workspace: &Path, target_dir: &Path, package: &str) -> Vec<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--lib",
            "-q",
            "-p",
            package,
            "--target",
            "wasm32-unknown-unknown",
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(workspace)
        .env_remove("WASMPROF_INSTRUMENT")
        .env_remove("RUSTFLAGS")
        .status()
        .unwrap();
    assert!(status.success());
    let artifact = format!("{}.wasm", package.replace('-', "_"));
    std::fs::read(
        target_dir
            .join("wasm32-unknown-unknown/release")
            .join(artifact),
    )
    .unwrap()
}

/// Copies a source tree, editing its text files. Build output (`target`,
/// which an example with a workspace of its own keeps beside its sources)
/// is left behind, and files that are not text are copied as they are.
fn copy_dir(from: &Path, to: &Path, edit: &dyn Fn(&str) -> String) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&entry.path(), &target, edit);
            }
        } else {
            let bytes = std::fs::read(entry.path()).unwrap();
            match String::from_utf8(bytes) {
                Ok(text) => std::fs::write(target, edit(&text)).unwrap(),
                Err(binary) => std::fs::write(target, binary.into_bytes()).unwrap(),
            }
        }
    }
}

#[test]
fn an_ordinary_build_is_the_plain_function() {
    let examples = examples_dir();
    let target_dir = examples.join("target").join("zero-cost");
    const PACKAGES: [&str; 2] = ["fib", "async-loads"];
    let annotated: Vec<Vec<u8>> = PACKAGES
        .iter()
        .map(|package| plain_build(&examples, &target_dir, package))
        .collect();

    // The same crate with the annotations removed, laid out the same way so
    // that file paths (and so the data section) are the same too.
    let scratch = target_dir.join("stripped-workspace");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let runtime = repo_root().join("wasmprof-rt");
    let manifest = std::fs::read_to_string(examples.join("Cargo.toml"))
        .unwrap()
        .replace(
            "\"../wasmprof-rt\"",
            &format!("{:?}", runtime.display().to_string()),
        );
    std::fs::write(scratch.join("Cargo.toml"), manifest).unwrap();
    let members = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir() && e.file_name() != "target");
    for member in members {
        let member = member.file_name();
        copy_dir(&examples.join(&member), &scratch.join(&member), &|text| {
            text.lines()
                .filter(|l| l.trim() != "#[wasmprof::instrument]")
                .map(|l| format!("{l}\n"))
                .collect()
        });
    }
    let _ = std::fs::copy(examples.join("Cargo.lock"), scratch.join("Cargo.lock"));
    for (package, annotated) in PACKAGES.iter().zip(&annotated) {
        // The same target directory: the dependencies, which are the same,
        // are compiled once; the two workspaces' own crates are apart (their
        // paths differ), and each build's `.wasm` is read before the next.
        let stripped = plain_build(&scratch, &target_dir, package);
        let info = wasm_info::inspect(annotated).unwrap();
        assert!(
            !info.has_snapshot_export,
            "{package}: no snapshot export in a plain build"
        );
        assert!(
            !info.imports.iter().any(|i| i.starts_with("prof.")),
            "{package}: no host API import in a plain build: {:?}",
            info.imports
        );
        assert!(
            wasm_info::code_section(annotated).unwrap()
                == wasm_info::code_section(&stripped).unwrap(),
            "{package}: the annotated crate's code differs from the same crate without annotations"
        );
    }
}
