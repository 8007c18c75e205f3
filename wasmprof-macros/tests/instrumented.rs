//! The attribute with instrumentation on: builds `tests/instrumented/app.rs`
//! with `WASMPROF_INSTRUMENT=host`, then runs each of its tests alone, as a
//! test of its own here: what the functions return, exact call counts,
//! names and lines, checked against the runtime's snapshot (see that file).
//! A failure names the behaviour and shows what the fixture printed.
//!
//! Instrumentation is decided by the runtime's build script, so it needs a
//! build of its own: a small crate generated under `CARGO_TARGET_TMPDIR`
//! with a target directory of its own, so that the workspace's build is not
//! rebuilt or locked. The first run compiles syn (tens of seconds); later
//! runs only the app. Each test runs the built binary in a process of its
//! own: counted functions' counters and the panic hook belong to it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One test here per test of the fixture's, by the same name.
macro_rules! behaviours {
    ($($name:ident),* $(,)?) => {
        /// Every behaviour checked, in the order of `app.rs`.
        const BEHAVIOURS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                behaves(stringify!($name));
            }
        )*
    };
}

behaviours![
    instrumentation_is_on,
    a_free_function_is_counted_and_returns_what_it_returns,
    a_call_inside_another_is_under_it,
    an_early_return_ends_the_call,
    the_question_mark_ends_the_call,
    a_generic_function_has_one_site_for_every_instantiation,
    recursion_is_counted_at_every_depth,
    a_panic_unwinding_through_a_call_ends_it,
    renamed_reexported_unsafe_extern_and_impl_trait_functions_are_counted,
    methods_of_every_receiver_are_named_by_their_type,
    an_impl_block_of_a_generic_type_is_instrumented_but_skip_and_const,
    a_blanket_impl_is_named_by_its_trait,
    a_module_s_trait_impls_and_default_methods_are_instrumented,
    the_ui_pass_tests_run_instrumented_and_are_recorded,
    every_function_is_named_at_the_line_of_its_fn,
];

/// A test added to the fixture without one here would never run.
#[test]
fn every_test_of_the_fixture_has_one_here() {
    let output = Command::new(fixture())
        .args(["--list", "--format=terse"])
        .output()
        .expect("the fixture's test binary runs");
    let listed = String::from_utf8_lossy(&output.stdout);
    let mut in_fixture: Vec<&str> = listed
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .collect();
    let mut here = BEHAVIOURS.to_vec();
    in_fixture.sort_unstable();
    here.sort_unstable();
    assert_eq!(in_fixture, here, "the fixture's tests against this file's");
}

/// Runs the fixture's test `name` alone, in a process of its own.
fn behaves(name: &str) {
    let output = Command::new(fixture())
        .args([name, "--exact", "--test-threads=1"])
        .output()
        .expect("the fixture's test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed; 0 failed"),
        "{name} failed in the instrumented fixture ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
}

/// The fixture's test binary, built once for every test here.
fn fixture() -> &'static Path {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BUILT.get_or_init(build_fixture) {
        Ok(path) => path,
        Err(why) => panic!("{why}"),
    }
}

/// Builds the fixture's tests with instrumentation on, and returns the
/// test binary cargo made.
fn build_fixture() -> Result<PathBuf, String> {
    let macros = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wasmprof-instrumented");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let manifest = dir.join("Cargo.toml");
    write_if_changed(&manifest, &fixture_manifest(macros));
    // The workspace's lock: the fixture resolves to the same versions, with
    // no registry look-up.
    let lock = macros.join("../Cargo.lock");
    if lock.exists() {
        std::fs::copy(&lock, dir.join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    }

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .env("WASMPROF_INSTRUMENT", "host")
        .env("WASMPROF_INSTRUMENT_NATIVE", "1")
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cargo could not start: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let executable = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == "fixture")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from));
    match executable {
        Some(path) if output.status.success() => Ok(path),
        _ => Err(format!(
            "the instrumented fixture did not build ({}):\n{stderr}",
            output.status
        )),
    }
}

fn fixture_manifest(macros: &Path) -> String {
    let app = macros.join("tests/instrumented/app.rs");
    let runtime = macros.join("../wasmprof-rt");
    format!(
        r#"# Generated by wasmprof-macros/tests/instrumented.rs
[package]
name = "fixture"
version = "0.0.0"
edition = "2021"
publish = false

[[test]]
name = "fixture"
path = {app}

[dependencies]
wasmprof = {{ package = "wasmprof-rt", path = {runtime} }}
async-trait = "0.1"

[workspace]
"#,
        app = toml_string(&app),
        runtime = toml_string(&runtime),
    )
}

/// A TOML basic string; Rust's escaping of a path is valid TOML.
fn toml_string(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

/// Keeps the manifest's timestamp when nothing changed, so cargo does not
/// rebuild the fixture.
fn write_if_changed(path: &Path, contents: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(contents) {
        std::fs::write(path, contents).unwrap();
    }
}
