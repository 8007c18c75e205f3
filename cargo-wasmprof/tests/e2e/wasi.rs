//! WASI programs that touch files, environment and standard input, as
//! `cargo run` would let them: the current directory preopened by default,
//! `--dir HOST[::GUEST]`, `--no-default-dir`, `--env NAME[=VALUE]`, stdin
//! passed through (`examples/wordcount`); in every WASI host, Node and the
//! embedded wasmtime, with the same output and the same exact counts.

use crate::support::*;

const WHOLE_POEM: &str = "wordcount: 4 lines, 28 words of at least 1 letters";
const HOSTS: [&str; 2] = ["node", "wasmtime"];

/// `cargo wasmprof run --host HOST ARGS`.
fn run_in(host: &str, args: &[&str]) -> Run {
    let mut all = vec!["run", "--host", host];
    all.extend_from_slice(args);
    wasmprof(&all)
}

fn assert_counted(run: &Run) {
    let calls = calls_by_function(&run.profile());
    assert_eq!(calls["wordcount::count_line"], 4);
    assert_eq!(calls["wordcount::is_word"], 28);
}

#[test]
fn a_file_named_relative_or_absolute_is_read_from_the_current_directory() {
    let absolute = examples_dir().join("wordcount/poem.txt");
    let mut outputs = Vec::new();
    for host in HOSTS {
        let run = run_in(host, &["-p", "wordcount", "--", "wordcount/poem.txt"]);
        run.assert_success();
        assert!(run.stdout.contains(WHOLE_POEM), "{host}: {}", run.stdout);
        assert_counted(&run);
        outputs.push(run.stdout);
        let run = run_in(host, &["-p", "wordcount", "--", absolute.to_str().unwrap()]);
        run.assert_success();
        assert!(run.stdout.contains(WHOLE_POEM), "{host}: {}", run.stdout);
    }
    assert_eq!(outputs[0], outputs[1], "the hosts printed different things");
}

#[test]
fn stdin_and_the_environment_given_reach_the_program() {
    for host in HOSTS {
        stdin_and_environment_in(host);
    }
}

fn stdin_and_environment_in(host: &str) {
    let poem = std::fs::read(examples_dir().join("wordcount/poem.txt")).unwrap();
    // The program sees the value given with --env, not this environment's.
    let run = wasmprof_with_stdin(
        &[
            "run",
            "--host",
            host,
            "-p",
            "wordcount",
            "--env",
            "WORDCOUNT_MIN_LEN=4",
        ],
        &poem,
        &[("WORDCOUNT_MIN_LEN", "99")],
    );
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
    let output = wasmprof_command(&examples_dir())
        .args(["run", "-p", "wordcount", "--", "wordcount/poem.txt"])
        .env("WORDCOUNT_MIN_LEN", "99")
        .output()
        .unwrap();
    let run = Run::from_output(output);
    run.assert_success();
    assert!(run.stdout.contains(WHOLE_POEM), "{}", run.stdout);
}

#[test]
fn dir_maps_a_directory_and_no_default_dir_leaves_the_current_one_out() {
    for host in HOSTS {
        dirs_in(host);
    }
}

fn dirs_in(host: &str) {
    let run = run_in(
        host,
        &[
            "-p",
            "wordcount",
            "--no-default-dir",
            "--dir",
            "wordcount::/input",
            "--",
            "/input/poem.txt",
        ],
    );
    run.assert_success();
    assert!(run.stdout.contains(WHOLE_POEM), "{}", run.stdout);

    let run = run_in(
        host,
        &[
            "-p",
            "wordcount",
            "--no-default-dir",
            "--",
            "wordcount/poem.txt",
        ],
    );
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
    for host in HOSTS {
        let run = run_in(host, &["-p", "wordcount", "--", "no-such-file.txt"]);
        assert_eq!(run.code(), Some(2), "{host}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("cannot read no-such-file.txt: No such file or directory"),
            "{host}: {}",
            run.stderr
        );
    }
    let run = wasmprof(&["run", "-p", "wordcount", "--dir", "no-such-dir"]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("is not a directory"), "{}", run.stderr);
}

#[test]
fn wasmtime_keeps_the_profile_of_a_trap_a_timeout_and_an_exit() {
    let run = run_in(
        "wasmtime",
        &["-p", "faults", "--invoke", "panic_after", "--", "5"],
    );
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(
        calls_of_path(&profile, &["faults::steps", "faults::step"]),
        6
    );
    assert!(profile.nodes.iter().any(|n| n.open));

    let run = run_in(
        "wasmtime",
        &["-p", "faults", "--invoke", "spin", "--timeout", "2s"],
    );
    assert_eq!(run.code(), Some(124), "{}", run.stderr);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    assert!(calls_of_path(&run.profile(), &["faults::forever", "faults::tick"]) > 1000);

    let run = run_in(
        "wasmtime",
        &["-p", "faults", "--invoke", "exit_with", "--", "7"],
    );
    assert_eq!(run.code(), Some(7), "{}", run.stderr);
    assert_eq!(calls_by_function(&run.profile())["faults::step"], 1);
}

#[test]
fn wasmtime_counts_as_node_counts_and_refuses_what_it_cannot_run() {
    let node = run_in("node", &["-p", "appendix-b", "--release"]);
    let wasmtime = run_in("wasmtime", &["-p", "appendix-b", "--release"]);
    node.assert_success();
    wasmtime.assert_success();
    assert_eq!(node.stdout, wasmtime.stdout);
    assert_eq!(
        calls_by_function(&node.profile()),
        calls_by_function(&wasmtime.profile())
    );
    assert!(wasmtime.profile().run.host.starts_with("wasmtime "));

    let run = run_in("wasmtime", &["-p", "fib"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr.contains("needs a JavaScript host"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);
}
