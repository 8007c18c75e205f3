//! The README's "Using it", followed word for word as a newcomer would: a
//! new crate outside this repository, `cargo wasmprof add`, an annotated
//! function, `cargo wasmprof run`, and its exact counts.

use crate::support::{calls_by_function, repo_root, wasmprof_in};

const MAIN_RS: &str = "#[wasmprof::instrument]\nfn fib(n: u32) -> u64 {\n    \
                       if n < 2 {\n        n as u64\n    } else {\n        \
                       fib(n - 1) + fib(n - 2)\n    }\n}\n\n\
                       fn main() {\n    println!(\"fib(15) = {}\", fib(15));\n}\n";

#[test]
fn a_new_crate_is_profiled_after_cargo_wasmprof_add_and_one_attribute() {
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("first-steps");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let manifest = krate.join("Cargo.toml");
    // As `cargo new` writes it, with a comment that must survive.
    std::fs::write(
        &manifest,
        "[package]\nname = \"first-steps\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         # added by hand\n[dependencies]\n",
    )
    .unwrap();
    std::fs::write(krate.join("src/main.rs"), MAIN_RS).unwrap();

    let add = wasmprof_in(&krate, &["add"]);
    add.assert_success();
    let runtime = repo_root().join("wasmprof-rt");
    let line = format!(
        "wasmprof = {{ package = \"wasmprof-rt\", path = \"{}\" }}",
        runtime.display()
    );
    assert_eq!(add.stdout, format!("{line}\n"));
    assert!(add.stderr.contains("Adding"), "{}", add.stderr);
    let written = std::fs::read_to_string(&manifest).unwrap();
    assert_eq!(
        written,
        format!(
            "[package]\nname = \"first-steps\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             # added by hand\n[dependencies]\n{line}\n"
        )
    );

    // Twice is refused, and the manifest is left as it was.
    let again = wasmprof_in(&krate, &["add"]);
    assert_eq!(again.code(), Some(1), "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("already depends on the runtime, as `wasmprof`"),
        "{}",
        again.stderr
    );
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), written);

    // This repository's lock file pins the runtime's own dependencies.
    std::fs::copy(repo_root().join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    // The crate's own cargo configuration sets rustflags (as crates that
    // use getrandom on the web set `--cfg getrandom_backend`): the
    // instrumented build keeps them, or it would not compile.
    std::fs::create_dir_all(krate.join(".cargo")).unwrap();
    std::fs::write(
        krate.join(".cargo/config.toml"),
        "[build]\nrustflags = [\"--cfg\", \"first_steps_configured\"]\n",
    )
    .unwrap();
    std::fs::write(
        krate.join("src/main.rs"),
        format!(
            "{MAIN_RS}\n#[cfg(not(first_steps_configured))]\n\
             compile_error!(\"the rustflags of .cargo/config.toml were dropped\");\n"
        ),
    )
    .unwrap();
    let run = wasmprof_in(&krate, &["run"]);
    run.assert_success();
    assert_eq!(run.stdout, "fib(15) = 610\n");
    // fib(n) makes 2·fib(n+1) − 1 calls: 1973 for n = 15.
    assert_eq!(calls_by_function(&run.profile())["first_steps::fib"], 1973);
    assert!(
        run.stderr.contains("1973  first_steps::fib"),
        "{}",
        run.stderr
    );
}

#[test]
fn crates_io_s_unrelated_wasmprof_is_named_and_left_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("Cargo.toml");
    let text = "[package]\nname = \"habit\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                [dependencies]\nwasmprof = \"0.1\"\n";
    std::fs::write(&manifest, text).unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let add = wasmprof_in(dir.path(), &["add"]);
    assert_eq!(add.code(), Some(1), "{}", add.stderr);
    assert!(
        add.stderr
            .contains("not wasmprof's runtime but the package `wasmprof`")
            && add.stderr.contains("unrelated wasmtime profiler")
            && add.stderr.contains("left as it was"),
        "{}",
        add.stderr
    );
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), text);
}
