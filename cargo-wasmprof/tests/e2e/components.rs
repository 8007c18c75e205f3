//! WASI 0.2 components (`wasm32-wasip2`): `examples/components`, a command
//! whose counts are known, run in the embedded wasmtime as a component,
//! with its profile held against the oracle's count and the arithmetic of
//! its work; the fault cases keep what was collected; its test suite runs
//! through `cargo wasmprof test`.

use crate::support::*;

const COMPONENT: &str = "wasm32-wasip2";

/// `fib(20)` calls itself `2 * fib(21) - 1` times.
const FIB_CALLS: u64 = 2 * 10_946 - 1;
/// One `collatz_len` per start below 1000 and one for the best so far.
const COLLATZ_CALLS: u64 = 2 * 999;

/// `cargo wasmprof run -p components --target wasm32-wasip2 --verify-counts
/// EXTRA`, in the default host for a component.
fn run_component(extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        "-p",
        "components",
        "--target",
        COMPONENT,
        "--verify-counts",
    ];
    args.extend_from_slice(extra);
    let run = wasmprof(&args);
    assert!(
        run.stderr.contains("in wasmtime"),
        "the default host for a component is wasmtime: {}",
        run.stderr
    );
    run
}

/// Whether every count of the run agreed with a second count.
fn verified(run: &Run) -> bool {
    run.stderr
        .contains("Verified every call count of 4 functions")
}

#[test]
fn a_command_component_runs_in_wasmtime_with_exact_counts() {
    let run = run_component(&[]);
    run.assert_success();
    assert!(verified(&run), "{}", run.stderr);
    assert!(run.stdout.contains("fib(20) = 6765"), "{}", run.stdout);
    // Sampled, as a core module's run in wasmtime is by default.
    assert!(
        run.stderr.contains("Samples ") && run.stderr.contains(" samples, every "),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(profile.run.complete, "{:?}", profile.run);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["components::fib"], FIB_CALLS);
    assert_eq!(calls["components::collatz_len"], COLLATZ_CALLS);
    assert_eq!(calls["components::longest_walk"], 1);
    // The reports read it as any other profile.
    let path = run.profile_path();
    let gprof = wasmprof(&["report", "--input", path.to_str().unwrap()]);
    gprof.assert_success();
    assert!(gprof.stdout.contains("components::fib"), "{}", gprof.stdout);
}

#[test]
fn a_component_that_panics_exits_or_hangs_keeps_its_profile() {
    // A trap poisons the component instance; the profile comes out of its
    // core module all the same.
    let panicked = run_component(&["--", "panic"]);
    assert_eq!(panicked.code(), Some(101), "{}", panicked.stderr);
    assert!(
        panicked.stderr.contains("asked to panic after the work"),
        "{}",
        panicked.stderr
    );
    let exited = run_component(&["--", "exit"]);
    // WASI 0.2's `exit` carries success or failure, not the code.
    assert_eq!(exited.code(), Some(1), "{}", exited.stderr);
    for run in [&panicked, &exited] {
        assert!(verified(run), "{}", run.stderr);
        let profile = run.profile();
        assert!(!profile.run.complete);
        let calls = calls_by_function(&profile);
        assert_eq!(calls["components::fib"], FIB_CALLS, "{}", run.stderr);
        assert_eq!(calls["components::collatz_len"], COLLATZ_CALLS);
    }
    // Cut at any instruction, one call can be counted by the oracle and
    // not yet by the profiler: the check sets that one apart.
    let hung = run_component(&["--timeout", "2s", "--", "spin"]);
    assert_eq!(hung.code(), Some(124), "{}", hung.stderr);
    assert!(verified(&hung), "{}", hung.stderr);
    assert!(
        hung.stderr.contains("timed out after 2000 ms"),
        "{}",
        hung.stderr
    );
    let calls = calls_by_function(&hung.profile());
    assert!(calls["components::fib"] > FIB_CALLS, "{calls:?}");
}

#[test]
fn a_components_test_suite_runs_through_cargo_wasmprof_test() {
    let run = wasmprof(&["test", "-p", "components", "--target", COMPONENT]);
    run.assert_success();
    assert!(run.stdout.contains("2 passed"), "{}", run.stdout);
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    // fib(10) and the 111 steps of 27's walk.
    assert_eq!(calls["components::fib"], 177);
    assert_eq!(calls["components::step"], 111);
    assert_eq!(calls["components::tests::fib_of_ten"], 1);
    assert_eq!(calls["components::tests::collatz_of_27"], 1);
}

#[test]
fn hosts_without_components_are_refused_before_the_build() {
    let run = wasmprof(&[
        "run",
        "-p",
        "components",
        "--target",
        COMPONENT,
        "--host",
        "node",
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("builds a WASI 0.2 component, and Node")
            && run.stderr.contains("cannot run components"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);
    for host in ["node", "browser"] {
        let test = wasmprof(&[
            "test",
            "-p",
            "components",
            "--target",
            COMPONENT,
            "--host",
            host,
        ]);
        assert_eq!(test.code(), Some(1), "{}", test.stderr);
        assert!(
            test.stderr.contains("cannot run components"),
            "{}",
            test.stderr
        );
    }
}

/// `fib(12)` calls itself `2 * fib(13) - 1` times.
const FIB_12_CALLS: u64 = 2 * 233 - 1;

#[test]
fn an_http_handler_serves_n_requests_each_counted_exactly_with_its_latency() {
    let run = wasmprof(&[
        "run",
        "-p",
        "http-handler",
        "--target",
        COMPONENT,
        "--requests",
        "50",
        "--path",
        "/fib/12",
        "--verify-counts",
    ]);
    run.assert_success();
    assert!(
        run.stderr
            .contains("Verified every call count of 2 functions"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("requests: 50 × GET /fib/12 (50 × 200), latency median"),
        "{}",
        run.stderr
    );
    // Sampled, every request's store by the same sampler.
    assert!(
        run.stderr.contains("Samples ") && !run.stderr.contains("(0 samples"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    assert!(profile.run.complete, "{:?}", profile.run);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["http_handler::route"], 50);
    assert_eq!(calls["http_handler::fib"], 50 * FIB_12_CALLS);
    let requests = profile.run.requests.as_ref().expect("the requests");
    assert_eq!(requests.latency_nanos.len(), 50);
    assert!(requests.latency_nanos.iter().all(|&n| n > 0));
    assert!(requests.statuses.iter().all(|&s| s == 200));
    // Each request's own calls, by its name.
    assert_eq!(profile.threads.len(), 50);
    for (index, thread) in profile.threads.iter().enumerate() {
        assert_eq!(thread.name, format!("request {}", index + 1));
        let alone = calls_by_function(&profile.thread_view(index));
        assert_eq!(alone["http_handler::fib"], FIB_12_CALLS, "{}", thread.name);
    }
    let one = wasmprof(&[
        "report",
        "--input",
        run.profile_path().to_str().unwrap(),
        "--thread",
        "request 7",
    ]);
    one.assert_success();
    assert!(one.stdout.contains("(thread request 7)"), "{}", one.stdout);
}

/// `--memory` over many requests: each instance's memory is its own, so
/// the allocations add up request by request and the peak is one
/// request's.
#[test]
fn a_handler_s_memory_over_n_requests_is_n_times_one_request_s() {
    let memory_of = |requests: &str| {
        let run = wasmprof(&[
            "run",
            "-p",
            "http-handler",
            "--target",
            COMPONENT,
            "--memory",
            "--requests",
            requests,
            "--path",
            "/fib/12",
        ]);
        run.assert_success();
        let profile = run.profile();
        let memory = profile.memory.expect("memory recorded");
        let totals = memory.totals();
        let route = profile
            .functions
            .iter()
            .position(|f| f.name == "http_handler::route")
            .expect("route in the profile");
        let route_allocs: u64 = memory
            .paths
            .iter()
            .filter(|p| profile.nodes[p.node].function == Some(route))
            .map(|p| p.allocs)
            .sum();
        (totals, memory.peak_bytes, route_allocs)
    };
    let (one, one_peak, one_route) = memory_of("1");
    let (seven, seven_peak, seven_route) = memory_of("7");
    assert!(one.allocs > 0 && one_route > 0, "{one:?}");
    assert_eq!(seven.allocs, 7 * one.allocs, "{one:?} {seven:?}");
    assert_eq!(seven.alloc_bytes, 7 * one.alloc_bytes);
    assert_eq!(seven.frees, 7 * one.frees);
    assert_eq!(seven.live_bytes, 7 * one.live_bytes);
    assert_eq!(seven_route, 7 * one_route);
    assert_eq!(seven_peak, one_peak);
    assert_eq!(
        seven.peak_bytes, seven_peak,
        "the paths' peaks are one request's"
    );
}

#[test]
fn a_handler_that_panics_ends_the_run_and_keeps_the_requests_before() {
    let run = wasmprof(&[
        "run",
        "-p",
        "http-handler",
        "--target",
        COMPONENT,
        "--requests",
        "3",
        "--path",
        "/panic",
        "--verify-counts",
    ]);
    assert_eq!(run.code(), Some(101), "{}", run.stderr);
    assert!(
        run.stderr.contains("asked to panic by /panic"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("request 1 to /panic"), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert_eq!(calls_by_function(&profile)["http_handler::route"], 1);
    // A command is not served requests.
    let command = wasmprof(&[
        "run",
        "-p",
        "components",
        "--target",
        COMPONENT,
        "--verify-counts",
        "--requests",
        "2",
    ]);
    assert_eq!(command.code(), Some(1), "{}", command.stderr);
    assert!(
        command.stderr.contains("the component is a command"),
        "{}",
        command.stderr
    );
}

/// A workspace of two throwaway components that cannot run here. Not
/// `--offline`: a fresh machine's registry cache lacks wit-bindgen's macro
/// crates, which no example uses; its version is pinned instead.
fn unrunnable_components() -> std::path::PathBuf {
    let dir = examples_dir().join("target").join("e2e-components-scratch");
    let _ = std::fs::remove_dir_all(&dir);
    let runtime = repo_root().join("wasmprof-rt");
    let manifest = |name: &str, kind: &str, extra: &str| {
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{kind}\n\
             [dependencies]\nwasmprof = {{ package = \"wasmprof-rt\", path = {:?} }}\n{extra}",
            runtime.display()
        )
    };
    let files = [
        (
            "Cargo.toml",
            "[workspace]\nresolver = \"2\"\nmembers = [\"reactor\", \"imports\"]\n".to_owned(),
        ),
        (
            "reactor/Cargo.toml",
            manifest("reactor", "[lib]\ncrate-type = [\"cdylib\"]\n", ""),
        ),
        (
            "reactor/src/lib.rs",
            "#[wasmprof::instrument]\n#[no_mangle]\npub extern \"C\" fn answer() -> i32 {\n    42\n}\n"
                .to_owned(),
        ),
        (
            "imports/Cargo.toml",
            manifest(
                "imports",
                "",
                "wit-bindgen = { version = \"=0.57.1\", default-features = false, features = [\"macros\", \"realloc\"] }\n",
            ),
        ),
        (
            "imports/src/main.rs",
            "wit_bindgen::generate!({ inline: \"package my:host; interface log { log: func(message: string); } \
             world program { import log; }\", world: \"program\" });\n\n\
             #[wasmprof::instrument]\nfn main() {\n    my::host::log::log(\"hello\");\n}\n"
                .to_owned(),
        ),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn a_reactor_and_a_component_with_imports_wasmtime_lacks_are_told_what_runs() {
    let dir = unrunnable_components();
    let reactor = wasmprof_in(&dir, &["run", "-p", "reactor", "--target", COMPONENT]);
    assert_eq!(reactor.code(), Some(1), "{}", reactor.stderr);
    assert!(
        reactor
            .stderr
            .contains("exports neither `wasi:cli/run` nor `wasi:http/incoming-handler`"),
        "{}",
        reactor.stderr
    );
    let imports = wasmprof_in(&dir, &["run", "-p", "imports", "--target", COMPONENT]);
    assert_eq!(imports.code(), Some(1), "{}", imports.stderr);
    assert!(
        imports.stderr.contains("the component imports my:host/log")
            && imports.stderr.contains("does not provide"),
        "{}",
        imports.stderr
    );
}

#[test]
fn a_component_writes_its_snapshot_file_for_other_hosts_and_report_reads_it() {
    // What `wasmtime run --dir DIR::/out --env WASMPROF_SNAPSHOT=/out/…`
    // does, here in the embedded wasmtime: the runtime writes the file at
    // exit, or from its panic hook.
    let dir = examples_dir()
        .join("target")
        .join("e2e-components-snapshots");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let preopen = format!("{}::/out", dir.display());
    for ending in ["", "panic"] {
        let variable = format!("WASMPROF_SNAPSHOT=/out/run-{ending}.wprf");
        let mut args = vec![
            "run",
            "-p",
            "components",
            "--target",
            COMPONENT,
            "--verify-counts",
            "--dir",
            &preopen,
            "--env",
            &variable,
        ];
        if !ending.is_empty() {
            args.extend(["--", ending]);
        }
        wasmprof(&args);
        let file = dir.join(format!("run-{ending}.wprf"));
        assert!(file.is_file(), "{ending:?}: no snapshot file");
        let report = wasmprof(&["report", "--input", file.to_str().unwrap()]);
        report.assert_success();
        // gprof's flat profile: fib's one call from outside and its own
        // calls of itself; collatz_len's line with its count.
        assert!(
            report
                .stdout
                .contains(&format!("components::fib 1+{}", FIB_CALLS - 1)),
            "{ending:?}: {}",
            report.stdout
        );
        assert!(
            report
                .stdout
                .lines()
                .any(|line| line.contains("components::collatz_len")
                    && line
                        .split_whitespace()
                        .any(|word| word == COLLATZ_CALLS.to_string())),
            "{ending:?}: {}",
            report.stdout
        );
    }
    let truncated = dir.join("truncated.wprf");
    let bytes = std::fs::read(dir.join("run-.wprf")).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let report = wasmprof(&["report", "--input", truncated.to_str().unwrap()]);
    assert_eq!(report.code(), Some(1), "{}", report.stderr);
    assert!(
        report
            .stderr
            .contains("is a wasmprof snapshot that cannot be read"),
        "{}",
        report.stderr
    );
}

/// jco in Node, another WASI 0.2 host: `examples/jco/run.mjs` transpiles the
/// component, runs it on preview2-shim and writes the profile out of the
/// core module inside it, after a panic or an exit too; `report --input`
/// reads the file and holds its counts against the build's own second
/// count (--verify-counts).
#[test]
fn jco_in_node_runs_the_component_and_report_reads_its_profile() {
    let build = wasmprof(&[
        "build",
        "-p",
        "components",
        "--target",
        COMPONENT,
        "--verify-counts",
    ]);
    build.assert_success();
    let wasm = build
        .stderr
        .lines()
        .filter_map(|line| line.trim().strip_prefix("Finished "))
        .find(|path| path.ends_with(".wasm"))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("no component named: {}", build.stderr));
    let script = examples_dir().join("jco").join("run.mjs");
    let dir = tempfile::tempdir().unwrap();
    for (ending, code) in [("", 0), ("panic", 1), ("exit", 1)] {
        let file = dir.path().join(format!("jco-{ending}.wprf"));
        let jco = std::process::Command::new("node")
            .arg(&script)
            .args([wasm.as_os_str(), file.as_os_str()])
            .args((!ending.is_empty()).then_some(ending))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&jco.stderr);
        assert_eq!(jco.status.code(), Some(code), "{ending:?}: {stderr}");
        assert!(
            String::from_utf8_lossy(&jco.stdout).contains("fib(20) = 6765"),
            "{ending:?}: {stderr}"
        );
        let report = wasmprof(&["report", "--input", file.to_str().unwrap()]);
        report.assert_success();
        assert!(
            report
                .stderr
                .contains("Verified every call count of 4 functions"),
            "{ending:?}: {}",
            report.stderr
        );
        assert!(
            report
                .stdout
                .contains(&format!("components::fib 1+{}", FIB_CALLS - 1)),
            "{ending:?}: {}",
            report.stdout
        );
        let json = wasmprof(&[
            "report",
            "--input",
            file.to_str().unwrap(),
            "--format",
            "json",
        ]);
        json.assert_success();
        let calls: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        let calls_of = |name: &str| {
            calls["functions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == name)
                .and_then(|f| f["calls"].as_u64())
        };
        assert_eq!(calls_of("components::fib"), Some(FIB_CALLS), "{ending:?}");
        assert_eq!(
            calls_of("components::collatz_len"),
            Some(COLLATZ_CALLS),
            "{ending:?}"
        );
    }
    // What is not a profiled component is told, with nothing written.
    let plain = dir.path().join("plain.wprf");
    let refused = std::process::Command::new("node")
        .arg(&script)
        .args([script.as_os_str(), plain.as_os_str()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is not a WebAssembly component"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!plain.exists());
}
