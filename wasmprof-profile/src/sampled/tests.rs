//! The readers on profiles the real engines wrote (see
//! `tests/data/sampled/README.md` for how they were recorded) and on bad
//! input.

use std::path::{Path, PathBuf};

use super::*;
use crate::input::{Input, InputKind, read as read_input};
use crate::report::CallGraph;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sampled")
        .join(name)
}

fn read(name: &str, hide_idle: bool) -> Input {
    read_input(
        &fixture(name),
        &Options {
            hide_idle,
            ..Options::default()
        },
    )
    .unwrap()
}

/// Self time per function name, in ms, largest first.
fn self_ms(profile: &Profile) -> Vec<(String, f64)> {
    let graph = CallGraph::build(profile);
    let mut rows: Vec<(String, f64)> = graph
        .functions
        .iter()
        .map(|f| (f.name.clone(), f.self_nanos / 1e6))
        .filter(|(_, ms)| *ms > 0.0)
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    rows
}

fn root_total(profile: &Profile) -> f64 {
    profile
        .nodes
        .iter()
        .filter(|n| n.parent == Some(Profile::ROOT))
        .map(|n| n.inclusive_nanos)
        .sum()
}

#[test]
fn node_cpu_prof_of_a_rust_wasi_program() {
    let input = read("node-appendix-b.cpuprofile", false);
    assert_eq!(input.kind, InputKind::CpuProfile);
    assert!(input.problems.is_empty(), "{}", input.problems.describe());
    let profile = &input.profile;
    assert_eq!(profile.timer.mode, crate::profile::TimerMode::Sampled);
    // Every sample stands for the time until the next, the last for the
    // mean interval but not past `endTime`, and the time before the first
    // sample is no sample's, as DevTools counts them: 155.6 ms for this
    // file, as DevTools and speedscope show it (the profile's span, 170.1
    // ms, starts 14.5 ms before the first sample).
    let interval = profile.timer.sample_interval_nanos.unwrap();
    // Asked for 100 µs; a busy 2-core machine gives about 200.
    assert!((90_000.0..1_000_000.0).contains(&interval), "{interval}");
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("node-appendix-b.cpuprofile")).unwrap(),
    )
    .unwrap();
    let deltas: Vec<f64> = (file["timeDeltas"].as_array().unwrap().iter())
        .map(|d| d.as_f64().unwrap())
        .collect();
    let from_first: f64 = deltas[1..].iter().sum();
    let mean = from_first / (deltas.len() - 1) as f64;
    let last_at = file["startTime"].as_f64().unwrap() + deltas.iter().sum::<f64>();
    let until_end = file["endTime"].as_f64().unwrap() - last_at;
    let devtools_micros = from_first + mean.min(until_end);
    let total = root_total(profile);
    assert!(
        (devtools_micros * 1e3 - total).abs() < 1e3,
        "{total} ns, DevTools {devtools_micros} µs"
    );
    // Mangled names from the name section come out as Rust paths, and the
    // nine paths through `add` are one function.
    let names: Vec<&str> = profile.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.iter().filter(|n| **n == "appendix_b::add").count(), 1);
    assert!(names.contains(&"appendix_b::f_quarter"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("_ZN")), "{names:?}");
    // The program's own functions take nearly all the time.
    let rows = self_ms(profile);
    let program: f64 = rows
        .iter()
        .filter(|(n, _)| n.starts_with("appendix_b::"))
        .map(|(_, ms)| ms)
        .sum();
    assert!(program > 0.5 * total / 1e6, "{rows:?}");
    assert!(profile.nodes.iter().all(|n| n.calls == 0));
}

#[test]
fn a_devtools_protocol_profile_from_chromium() {
    let input = read("chromium-fib.cpuprofile", false);
    assert_eq!(input.kind, InputKind::CpuProfile);
    let rows = self_ms(&input.profile);
    assert_eq!(rows[0].0, "(idle)", "{rows:?}");
    let hidden = read("chromium-fib.cpuprofile", true);
    let rows = self_ms(&hidden.profile);
    assert_eq!(rows[0].0, "fib::fib", "{rows:?}");
    assert!(!rows.iter().any(|(n, _)| n == "(idle)"));
    assert!(
        rows.iter()
            .any(|(n, _)| n == "measureResolution (host-api.js:140)"),
        "JavaScript frames keep script and line: {rows:?}"
    );
    // The recursion is one function however deep its stack.
    let fib = input
        .profile
        .functions
        .iter()
        .filter(|f| f.name == "fib::fib")
        .count();
    assert_eq!(fib, 1);
}

#[test]
fn a_self_profiling_trace_from_chromium() {
    let input = read("chromium-fib.selfprofile.json", false);
    assert_eq!(input.kind, InputKind::SelfProfilingTrace);
    assert!(input.problems.is_empty(), "{}", input.problems.describe());
    let profile = &input.profile;
    let interval = profile.timer.sample_interval_nanos.unwrap();
    // Chromium samples about every 10 ms whatever the page asks for.
    assert!((5e6..20e6).contains(&interval), "{interval}");
    let total = root_total(profile);
    let duration = profile.run.wall_nanos as f64;
    assert!((total - duration).abs() < interval, "{total} of {duration}");
    let names: Vec<&str> = profile.functions.iter().map(|f| f.name.as_str()).collect();
    assert!(names.contains(&"fib::fib"), "{names:?}");
    assert!(names.contains(&"fib::fib_js"), "{names:?}");
    // The same wasm function has the same key as in the .cpuprofile of the
    // same run: the trace's 1-based column is made 0-based.
    let fib = profile
        .functions
        .iter()
        .find(|f| f.name == "fib::fib")
        .unwrap();
    let other = read("chromium-fib.cpuprofile", false);
    let same = other
        .profile
        .functions
        .iter()
        .find(|f| f.name == "fib::fib")
        .unwrap();
    assert_eq!(fib.column, same.column);
    let with_idle = total;
    let hidden = read("chromium-fib.selfprofile.json", true);
    assert!(root_total(&hidden.profile) < with_idle);
}

fn write_temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn error_of(text: &str) -> String {
    let (_dir, path) = write_temp("bad.json", text);
    match read_input(&path, &Options::default()) {
        Ok(_) => panic!("{text} was accepted"),
        Err(e) => crate::error::with_causes(&e),
    }
}

#[test]
fn the_wrong_shape_is_an_error_naming_the_file() {
    assert!(error_of("{\"nodes\": [{\"id\": 1}").contains("truncated"));
    assert!(error_of("[1, 2, 3]").contains("not a JSON object"));
    assert!(error_of("{\"hello\": 1}").contains("does not read"));
    assert!(error_of("{\"traceEvents\": []}").contains("looks like a Chrome trace"));
    let e = error_of("{\"nodes\": 3, \"samples\": [], \"timeDeltas\": []}");
    assert!(
        e.contains("bad.json is a .cpuprofile that cannot be read"),
        "{e}"
    );
    let e = error_of("{\"frames\": [], \"stacks\": [], \"samples\": [{\"stackId\": 0}]}");
    assert!(
        e.contains("is a JS Self-Profiling trace that cannot be read"),
        "{e}"
    );
}

#[test]
fn records_that_name_nothing_or_loop_are_counted_and_left_out() {
    let cpuprofile = r#"{"nodes": [
        {"id": 1, "callFrame": {"functionName": "(root)", "url": ""}, "children": [2, 99]},
        {"id": 2, "callFrame": {"functionName": "a", "url": "x.js", "lineNumber": 0, "columnNumber": 0}},
        {"id": 3, "callFrame": {"functionName": "b", "url": "x.js"}, "children": [4]},
        {"id": 4, "callFrame": {"functionName": "c", "url": "x.js"}, "children": [3]}],
      "startTime": 0, "endTime": 400, "samples": [2, 3, 77, 2], "timeDeltas": [100, 100, -1e300, 100]}"#;
    let (_dir, path) = write_temp("odd.cpuprofile", cpuprofile);
    let input = read_input(&path, &Options::default()).unwrap();
    let problems = input.problems.describe();
    assert!(
        problems.contains("1 children that name no node"),
        "{problems}"
    );
    assert!(
        problems.contains("1 samples of nodes on a cycle"),
        "{problems}"
    );
    assert!(
        problems.contains("1 samples that name no node"),
        "{problems}"
    );
    assert!(
        problems.contains("time deltas that are not numbers or longer"),
        "{problems}"
    );
    crate::profile::validate(&input.profile).unwrap();

    let trace = r#"{"resources": [], "frames": [{"name": "f", "resourceId": 7}],
      "stacks": [{"frameId": 0, "parentId": 1}, {"frameId": 0, "parentId": 0}, {"frameId": 5}],
      "samples": [{"timestamp": 1, "stackId": 0}, {"timestamp": 2, "stackId": 2},
                  {"timestamp": 3, "stackId": 9}, {"timestamp": 4}]}"#;
    let (_dir, path) = write_temp("odd.json", trace);
    let input = read_input(&path, &Options::default()).unwrap();
    let problems = input.problems.describe();
    assert!(problems.contains("stacks on a cycle"), "{problems}");
    assert!(problems.contains("stacks naming no frame"), "{problems}");
    assert!(problems.contains("stacks naming no stack"), "{problems}");
    assert!(problems.contains("frames naming no resource"), "{problems}");
    crate::profile::validate(&input.profile).unwrap();
}

#[test]
fn an_empty_profile_reports_nothing_rather_than_failing() {
    let (_dir, path) = write_temp(
        "empty.cpuprofile",
        r#"{"nodes": [], "startTime": 0, "endTime": 0, "samples": [], "timeDeltas": []}"#,
    );
    let input = read_input(&path, &Options::default()).unwrap();
    assert_eq!(input.profile.nodes.len(), 1);
}

mod generated {
    //! Profiles generated at random, well-formed JSON with ids that dangle,
    //! parents that loop and deltas of any size, and the recorded fixtures
    //! cut and bit-flipped: the readers answer each with a profile that
    //! passes validation or an error, never a panic or an endless loop.

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn read_bytes(bytes: &[u8], name: &str) -> Result<Input> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        read_input(&path, &Options::default())
    }

    fn check(bytes: &[u8], name: &str) {
        if let Ok(input) = read_bytes(bytes, name) {
            crate::profile::validate(&input.profile).unwrap();
            let mut out = Vec::new();
            for format in [crate::report::Format::Gprof, crate::report::Format::Pprof] {
                crate::report::render(
                    &input.profile,
                    &crate::report::RenderOptions::format(format),
                    &mut out,
                )
                .unwrap();
            }
        }
    }

    fn cpuprofile() -> impl Strategy<Value = serde_json::Value> {
        let node = (
            0u64..12,
            prop::collection::vec(0u64..14, 0..4),
            "[a-z()_]{0,6}",
            -2i64..3,
        );
        (
            prop::collection::vec(node, 0..12),
            prop::collection::vec(0u64..14, 0..40),
            prop::collection::vec(-1e7f64..1e7, 0..40),
            -1e6f64..1e6,
            -1e6f64..1e9,
        )
            .prop_map(|(nodes, samples, deltas, start, end)| {
                let nodes: Vec<_> = nodes
                    .into_iter()
                    .map(|(id, children, name, line)| {
                        json!({"id": id, "children": children,
                               "callFrame": {"functionName": name, "url": "x.js", "lineNumber": line, "columnNumber": line}})
                    })
                    .collect();
                json!({"nodes": nodes, "samples": samples, "timeDeltas": deltas, "startTime": start, "endTime": end})
            })
    }

    fn trace() -> impl Strategy<Value = serde_json::Value> {
        let frame = (
            "[a-z:_]{0,8}",
            prop::option::of(0usize..4),
            prop::option::of(-1i64..5),
        );
        let stack = (0usize..8, prop::option::of(0usize..10));
        let sample = (-1e3f64..1e6, prop::option::of(0usize..10));
        (
            prop::collection::vec(frame, 0..6),
            prop::collection::vec(stack, 0..10),
            prop::collection::vec(sample, 0..40),
        )
            .prop_map(|(frames, stacks, samples)| {
                let frames: Vec<_> = frames
                    .into_iter()
                    .map(|(name, resource, line)| json!({"name": name, "resourceId": resource, "line": line, "column": line}))
                    .collect();
                let stacks: Vec<_> = stacks
                    .into_iter()
                    .map(|(frame, parent)| json!({"frameId": frame, "parentId": parent}))
                    .collect();
                let samples: Vec<_> = samples
                    .into_iter()
                    .map(|(timestamp, stack)| json!({"timestamp": timestamp, "stackId": stack}))
                    .collect();
                json!({"resources": ["a.js", "b.wasm"], "frames": frames, "stacks": stacks, "samples": samples})
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn any_cpuprofile_reads_or_is_refused(profile in cpuprofile()) {
            check(profile.to_string().as_bytes(), "gen.cpuprofile");
        }

        #[test]
        fn any_trace_reads_or_is_refused(trace in trace()) {
            check(trace.to_string().as_bytes(), "gen.json");
        }

        #[test]
        fn cut_or_flipped_fixtures_read_or_are_refused(
            which in 0usize..3,
            cut in 0.0f64..1.0,
            flips in prop::collection::vec((0.0f64..1.0, any::<u8>()), 0..4),
        ) {
            let name = ["node-appendix-b.cpuprofile", "chromium-fib.cpuprofile", "chromium-fib.selfprofile.json"][which];
            let mut bytes = std::fs::read(fixture(name)).unwrap();
            for (at, byte) in flips {
                let at = ((bytes.len() - 1) as f64 * at) as usize;
                bytes[at] = byte;
            }
            bytes.truncate(((bytes.len() as f64) * cut) as usize + 1);
            check(&bytes, name);
        }
    }
}

/// A module with one imported and one defined function, the latter named
/// `name` in its name section.
fn module_with_a_named_function(name: &str) -> Vec<u8> {
    fn section(id: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![id, content.len() as u8];
        out.extend_from_slice(content);
        out
    }
    let mut module = b"\0asm\x01\0\0\0".to_vec();
    module.extend(section(1, &[1, 0x60, 0, 0])); // type 0: () -> ()
    module.extend(section(2, &[1, 1, b'm', 1, b'f', 0, 0])); // import m.f: function 0
    module.extend(section(3, &[1, 0])); // function 1 has type 0
    module.extend(section(10, &[1, 2, 0, 0x0b])); // its body: end
    // One naming: function 1 is `name`.
    let mut function_names = vec![1, 1, name.len() as u8];
    function_names.extend_from_slice(name.as_bytes());
    let mut custom = vec![4];
    custom.extend_from_slice(b"name");
    custom.push(1); // subsection 1: function names
    custom.push(function_names.len() as u8);
    custom.extend(function_names);
    module.extend(section(0, &custom));
    module
}

#[test]
fn wasm_function_frames_are_named_from_the_module() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("app.wasm");
    std::fs::write(
        &module,
        module_with_a_named_function("_ZN3app4work17h0123456789abcdefE"),
    )
    .unwrap();
    let profile = format!(
        r#"{{"nodes": [
            {{"id": 1, "callFrame": {{"functionName": "(root)", "url": ""}}, "children": [2]}},
            {{"id": 2, "callFrame": {{"functionName": "wasm-function[1]", "url": "file://{}", "lineNumber": 0, "columnNumber": 40}}}}],
          "startTime": 0, "endTime": 200, "samples": [2, 2], "timeDeltas": [100, 100]}}"#,
        module.display()
    );
    let path = dir.path().join("p.cpuprofile");
    std::fs::write(&path, profile).unwrap();
    // Found from the frame's file:// URL …
    let input = read_input(&path, &Options::default()).unwrap();
    assert_eq!(input.profile.functions[0].name, "app::work");
    // … or from --module, whatever the URL says.
    let elsewhere = std::fs::read_to_string(&path).unwrap().replace(
        &format!("file://{}", module.display()),
        "http://host/app_bg.wasm",
    );
    std::fs::write(&path, elsewhere).unwrap();
    let plain = read_input(&path, &Options::default()).unwrap();
    assert_eq!(plain.profile.functions[0].name, "wasm-function[1]");
    let named = read_input(&path, &Options::default().with_module(&module).unwrap()).unwrap();
    assert_eq!(named.profile.functions[0].name, "app::work");
}
