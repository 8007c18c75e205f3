//! WASI programs that touch files, environment and standard input, as
//! `cargo run` would let them: the current directory preopened by default,
//! `--dir HOST[::GUEST]`, `--no-default-dir`, `--env NAME[=VALUE]`, stdin
//! passed through (`examples/wordcount`).

use std::process::{Command, Stdio};

use wasmprof_tests::*;

const WHOLE_POEM: &str = "wordcount: 4 lines, 28 words of at least 1 letters";

fn assert_counted(run: &Run) {
    let calls = calls_by_function(&run.profile());
    assert_eq!(calls["wordcount::count_line"], 4);
    assert_eq!(calls["wordcount::is_word"], 28);
}

#[test]
fn a_file_named_relative_or_absolute_is_read_from_the_current_directory() {
    let run = wasmprof(&["run", "-p", "wordcount", "--", "wordcount/poem.txt"]);
    run.assert_success();
    assert!(run.stdout.contains(WHOLE_POEM), "{}", run.stdout);
    assert_counted(&run);
    let absolute = examples_dir().join("wordcount/poem.txt");
    let run = wasmprof(&["run", "-p", "wordcount", "--", absolute.to_str().unwrap()]);
    run.assert_success();
    assert!(run.stdout.contains(WHOLE_POEM), "{}", run.stdout);
}

#[test]
fn stdin_and_the_environment_given_reach_the_program() {
    let poem = std::fs::File::open(examples_dir().join("wordcount/poem.txt")).unwrap();
    let output = Command::new(cargo_wasmprof_bin())
        .args([
            "wasmprof",
            "run",
            "-p",
            "wordcount",
            "--env",
            "WORDCOUNT_MIN_LEN=4",
        ])
        .current_dir(examples_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("WASMPROF_INSTRUMENT")
        .env("WORDCOUNT_MIN_LEN", "99")
        .stdin(Stdio::from(poem))
        .output()
        .unwrap();
    let run = Run::from_output(output);
    run.assert_success();
    assert!(
        run.stdout
            .contains("wordcount: 4 lines, 18 words of at least 4 letters"),
        "{}",
        run.stdout
    );
    assert_counted(&run);
}

#[test]
fn only_the_variables_given_are_seen() {
    // WORDCOUNT_MIN_LEN is set here but not given with --env.
    let output = Command::new(cargo_wasmprof_bin())
        .args([
            "wasmprof",
            "run",
            "-p",
            "wordcount",
            "--",
            "wordcount/poem.txt",
        ])
        .current_dir(examples_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("WASMPROF_INSTRUMENT")
        .env("WORDCOUNT_MIN_LEN", "99")
        .output()
        .unwrap();
    let run = Run::from_output(output);
    run.assert_success();
    assert!(run.stdout.contains(WHOLE_POEM), "{}", run.stdout);
}

#[test]
fn dir_maps_a_directory_and_no_default_dir_leaves_the_current_one_out() {
    let run = wasmprof(&[
        "run",
        "-p",
        "wordcount",
        "--no-default-dir",
        "--dir",
        "wordcount::/input",
        "--",
        "/input/poem.txt",
    ]);
    run.assert_success();
    assert!(run.stdout.contains(WHOLE_POEM), "{}", run.stdout);

    let run = wasmprof(&[
        "run",
        "-p",
        "wordcount",
        "--no-default-dir",
        "--",
        "wordcount/poem.txt",
    ]);
    assert_eq!(run.code(), Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("No such file or directory"),
        "{}",
        run.stderr
    );
    // What ran before the failure is in the profile.
    assert_eq!(
        calls_by_function(&run.profile())["wordcount::read_input"],
        1
    );
}

#[test]
fn a_missing_file_or_dir_is_said_clearly() {
    let run = wasmprof(&["run", "-p", "wordcount", "--", "no-such-file.txt"]);
    assert_eq!(run.code(), Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot read no-such-file.txt: No such file or directory"),
        "{}",
        run.stderr
    );
    let run = wasmprof(&["run", "-p", "wordcount", "--dir", "no-such-dir"]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("is not a directory"), "{}", run.stderr);
}
