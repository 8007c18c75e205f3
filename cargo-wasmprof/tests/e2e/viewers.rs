//! The files `cargo wasmprof report` writes, opened in the viewers people
//! use, show the numbers of the gprof report: Chrome DevTools' Performance
//! panel ("Load profile", then Bottom-up) and speedscope (its Sandwich
//! view).

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::devtools::bottom_up_rows;
use crate::support::firefox_profiler;
use crate::support::shown::Row;
use crate::support::speedscope::sandwich_rows;
use crate::support::*;
use wasmprof_profile::report::CallGraph;

/// Self and total milliseconds per function, as the gprof report has them.
fn gprof_times(profile: &Profile) -> BTreeMap<String, (f64, f64)> {
    CallGraph::build(profile)
        .functions
        .iter()
        .filter(|f| f.total_nanos > 0.0)
        .map(|f| (f.name.clone(), (f.self_nanos / 1e6, f.total_nanos / 1e6)))
        .collect()
}

/// The sample interval of a `.cpuprofile` that `report` wrote, in
/// milliseconds: a power of two of a millisecond, longer for a longer
/// profile.
fn interval_ms(cpuprofile: &Path) -> f64 {
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cpuprofile).unwrap()).unwrap();
    let micros = file["$wasmprof"]["sampleIntervalMicros"]
        .as_f64()
        .expect("the interval wasmprof wrote");
    micros / 1e3
}

/// A `.cpuprofile`'s samples round each function's self time to within
/// one sample interval, and a viewer may charge a sample with the interval
/// before it rather than after it (speedscope ends the last sample at its
/// own time, not at `endTime`), which moves one more interval: two
/// intervals for a self time…
fn self_slack_ms(interval_ms: f64) -> f64 {
    2.0 * interval_ms
}

/// …and a total sums that rounding over the paths below it.
fn total_slack_ms(total_ms: f64, interval_ms: f64) -> f64 {
    self_slack_ms(interval_ms) + total_ms * 5e-4
}

/// Each function a viewer shows has the report's times, to the digits the
/// viewer shows, within the file's sampling (`interval_ms`).
fn assert_same_times<'a>(
    viewer: &str,
    rows: impl IntoIterator<Item = &'a Row>,
    expected: &BTreeMap<String, (f64, f64)>,
    interval_ms: f64,
) {
    for row in rows {
        let Some(&(self_ms, total_ms)) = expected.get(&row.name) else {
            panic!("{viewer} shows {row:?}, which the report does not have");
        };
        assert!(
            row.self_time.matches(self_ms, self_slack_ms(interval_ms))
                && row
                    .total_time
                    .matches(total_ms, total_slack_ms(total_ms, interval_ms)),
            "{viewer}: {}: shows self {:?}, total {:?}; the report has {self_ms:.4} ms, {total_ms:.4} ms \
             (sampled every {interval_ms} ms)",
            row.name,
            row.self_time,
            row.total_time
        );
    }
}

/// `cargo wasmprof report --input INPUT --format FORMAT -o OUT`.
fn report_as(input: &Path, format: &str, out: &Path) {
    wasmprof(&[
        "report",
        "--input",
        input.to_str().unwrap(),
        "--format",
        format,
        "-o",
        out.to_str().unwrap(),
    ])
    .assert_success();
}

#[test]
fn chrome_devtools_bottom_up_shows_the_report_s_times_for_an_instrumented_run() {
    let run = wasmprof(&["run", "-p", "appendix-b", "--release", "--no-sample"]);
    run.assert_success();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("appendix-b.cpuprofile");
    report_as(&run.profile_path(), "cpuprofile", &file);
    let rows = bottom_up_rows(&file);
    let expected = gprof_times(&run.profile());
    // Every function with time of its own is there, `add` with its 52.5
    // million calls' time under its own name, not under `main`.
    let shown: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    for (name, (self_ms, _)) in &expected {
        if *self_ms >= 0.1 {
            assert!(shown.contains(&name.as_str()), "{name} missing: {shown:?}");
        }
    }
    assert_same_times("DevTools", &rows, &expected, interval_ms(&file));
}

/// The `.cpuprofile` that `report` writes from the engine's own samples.
/// Only the program's functions are compared: DevTools folds some of
/// Node's own frames into their callers, which the report keeps apart.
#[test]
fn chrome_devtools_bottom_up_shows_the_report_s_times_for_an_engine_profile() {
    let run = wasmprof(&["run", "-p", "appendix-b", "--release", "--sample"]);
    run.assert_success();
    let samples = run.profile().run.samples_file.expect("a .cpuprofile");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("samples.cpuprofile");
    report_as(Path::new(&samples), "cpuprofile", &file);
    let read = wasmprof_profile::input::read(Path::new(&samples), &Default::default()).unwrap();
    let expected = gprof_times(&read.profile);
    let rows = bottom_up_rows(&file);
    let wasm: Vec<&Row> = rows
        .iter()
        .filter(|r| r.name.starts_with("appendix_b::"))
        .collect();
    assert!(wasm.len() >= 6, "{rows:?}");
    assert_same_times("DevTools", wasm, &expected, interval_ms(&file));
}

/// speedscope imports the speedscope JSON and the `.cpuprofile` with the
/// report's times, to the digits its Sandwich view shows.
#[test]
fn speedscope_sandwich_shows_the_report_s_times() {
    let run = wasmprof(&["run", "-p", "appendix-b", "--release", "--no-sample"]);
    run.assert_success();
    let expected = gprof_times(&run.profile());
    let dir = tempfile::tempdir().unwrap();
    // The speedscope JSON is not sampled; the `.cpuprofile`'s interval
    // bounds both.
    let cpuprofile = dir.path().join("appendix-b.cpuprofile");
    report_as(&run.profile_path(), "cpuprofile", &cpuprofile);
    let interval = interval_ms(&cpuprofile);
    for (format, importer) in [
        ("speedscope", "speedscope json file"),
        ("cpuprofile", "Chrome CPU Profile"),
    ] {
        let file = dir.path().join(format!("appendix-b.{format}.json"));
        report_as(&run.profile_path(), format, &file);
        let (imported_as, rows) = sandwich_rows(&file);
        assert_eq!(imported_as, importer, "{format}");
        let shown: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        for name in expected.keys() {
            assert!(
                shown.contains(&name.as_str()),
                "{format}: {name} missing: {shown:?}"
            );
        }
        assert_same_times(
            &format!("speedscope ({format})"),
            &rows,
            &expected,
            interval,
        );
    }
}

/// image-kernels drawing 30 animation frames in Chromium.
fn thirty_frames() -> Run {
    let run = wasmprof(&[
        "run",
        "-p",
        "image-kernels",
        "--release",
        "--host",
        "browser",
        "--invoke",
        "animate",
        "--",
        "30",
        "0",
    ]);
    run.assert_success();
    run
}

/// A page's slowest frames come as profiles of their own after the whole
/// run's; speedscope opens the file at the whole run, with every function.
#[test]
fn speedscope_opens_a_profile_with_its_slow_frames() {
    let run = thirty_frames();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("frames.speedscope.json");
    report_as(&run.profile_path(), "speedscope", &file);
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let profiles = written["profiles"].as_array().unwrap();
    assert!(profiles.len() > 1, "{}", written["profiles"]);
    assert!(
        profiles[1]["name"]
            .as_str()
            .unwrap()
            .contains("one of the slowest"),
        "{}",
        profiles[1]["name"]
    );
    let (imported_as, rows) = sandwich_rows(&file);
    assert_eq!(imported_as, "speedscope json file");
    assert!(
        rows.iter().any(|r| r.name == "image_kernels::draw_frame"),
        "{rows:?}"
    );
}

/// The Firefox Profiler's own loader reads `--format firefox`: the exact
/// calls are the calls track's self weights, function by function as the
/// profile counted them; the times are the time track's, in µs.
#[test]
fn the_firefox_profiler_loads_the_exact_calls_and_times_of_a_run() {
    let run = wasmprof(&["run", "-p", "appendix-b", "--release", "--no-sample"]);
    run.assert_success();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("appendix-b.firefox.json");
    report_as(&run.profile_path(), "firefox", &file);
    let loaded = firefox_profiler::Loaded::load(&file);
    let profile = run.profile();
    let calls = calls_by_function(&profile);
    let track = loaded.thread("main: exact calls by call path");
    let shown = loaded.functions(&track);
    assert_eq!(shown.len(), calls.len(), "{shown:?}");
    for (name, self_calls, _) in &shown {
        assert_eq!(*self_calls as u64, calls[name.as_str()], "{name}");
    }
    assert!(
        shown
            .iter()
            .any(|(name, calls, _)| name == "appendix_b::add" && *calls == 52_500_000.0)
    );
    // Time, in whole µs per path: each function's within a µs per path of
    // the report's.
    let expected = gprof_times(&profile);
    let track = loaded.thread("main: time (µs) by call path");
    for (name, self_micros, total_micros) in loaded.functions(&track) {
        let (self_ms, total_ms) = expected[&name];
        let paths = profile.nodes.len() as f64;
        assert!(
            (self_micros / 1e3 - self_ms).abs() <= paths * 1e-3,
            "{name}: self"
        );
        assert!(
            (total_micros / 1e3 - total_ms).abs() <= paths * 1e-3,
            "{name}: total"
        );
    }
}

/// A page's slowest animation frames are interval markers the viewer
/// lists, on a track of their own; each frame's `draw_frame` is counted;
/// the run's own samples are a track in time.
#[test]
fn the_firefox_profiler_shows_a_page_s_slowest_frames_as_markers() {
    let run = thirty_frames();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("frames.firefox.json");
    report_as(&run.profile_path(), "firefox", &file);
    let loaded = firefox_profiler::Loaded::load(&file);
    let worst = run.profile().frames.expect("frames").worst.len();
    assert!(worst > 0);
    let track = loaded.thread("animation frames");
    let markers = loaded.json(&["thread", "markers", "--thread", &track]);
    assert_eq!(markers["totalMarkerCount"], worst, "{markers}");
    assert_eq!(markers["byType"][0]["markerName"], "Animation frame");
    let calls = loaded.thread("main: exact calls");
    let draw = loaded
        .functions(&calls)
        .into_iter()
        .find(|(name, ..)| name == "image_kernels::draw_frame")
        .expect("draw_frame's calls");
    assert_eq!(draw.1, 30.0);
    // The run was sampled: its samples are a track in time beside.
    let samples = loaded.thread("the engine's samples of the run");
    assert!(!loaded.functions(&samples).is_empty());
}

/// An HTTP handler's run with `--memory`: each request is an interval
/// marker where it was served, with its status, and each call path's bytes
/// allocated are the viewer's "native allocations" call tree.
#[test]
fn the_firefox_profiler_shows_requests_as_markers_and_memory_as_allocations() {
    let run = wasmprof(&[
        "run",
        "-p",
        "http-handler",
        "--release",
        "--target",
        "wasm32-wasip2",
        "--memory",
        "--requests",
        "4",
        "--path",
        "/fib/12",
    ]);
    run.assert_success();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("handler.firefox.json");
    report_as(&run.profile_path(), "firefox", &file);
    let loaded = firefox_profiler::Loaded::load(&file);
    let track = loaded.thread("HTTP requests");
    let markers = loaded.json(&["thread", "markers", "--thread", &track]);
    assert_eq!(markers["totalMarkerCount"], 4, "{markers}");
    let requests = &markers["byType"][0];
    assert_eq!(requests["markerName"], "HTTP request");
    let labels: Vec<&str> = (requests["topMarkers"].as_array().unwrap().iter())
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"request 1 to /fib/12: 200"), "{labels:?}");
    // Bytes allocated, by function, as the profile has them.
    let profile = run.profile();
    let memory = profile.memory.as_ref().expect("--memory");
    let mut expected: BTreeMap<String, f64> = BTreeMap::new();
    for path in &memory.paths {
        if let Some(function) = profile.nodes[path.node].function {
            *expected
                .entry(profile.functions[function].name.clone())
                .or_default() += path.alloc_bytes as f64;
        }
    }
    expected.retain(|_, bytes| *bytes > 0.0);
    assert!(!expected.is_empty(), "the handler allocates");
    let allocations = loaded.thread("memory: bytes allocated");
    let functions = loaded.json(&[
        "thread",
        "functions",
        "--thread",
        &allocations,
        "--limit",
        "0",
    ]);
    // Asked of a track without samples of time, the viewer sums its
    // allocations (the summary's strategy).
    assert_eq!(functions["callTreeSummaryStrategy"], "native-allocations");
    let shown: BTreeMap<String, f64> = (functions["functions"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["selfSamples"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shown, expected);
}

/// A test run's tests are interval markers over their paths on the time
/// track, named, one per test.
#[test]
fn the_firefox_profiler_shows_a_test_run_s_tests_as_markers() {
    let run = wasmprof(&["test", "-p", "memory"]);
    run.assert_success();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tests.firefox.json");
    report_as(&run.profile_path(), "firefox", &file);
    let loaded = firefox_profiler::Loaded::load(&file);
    let track = loaded.thread("main: time (µs) by call path");
    let markers = loaded.json(&["thread", "markers", "--thread", &track]);
    let tests = &markers["byType"][0];
    assert_eq!(tests["markerName"], "Test", "{markers}");
    let mut names: Vec<&str> = (tests["topMarkers"].as_array().unwrap().iter())
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "memory::tests::a_kilobyte_is_leaked",
            "memory::tests::a_vec_grows_to_a_hundred"
        ]
    );
}

/// `--open` serves the file for the Firefox Profiler, which opens it from
/// the link printed: to the profiler's origin only, at a path nobody else
/// knows, to requests addressed to the server alone, until Ctrl-C. Any
/// profile goes: here one Firefox itself recorded.
#[test]
fn open_serves_the_firefox_profiler_s_file_until_ctrl_c() {
    use std::io::{BufRead, BufReader, Read, Write};
    let input = repo_root().join("wasmprof-profile/tests/data/sampled/firefox-fib.gecko.json");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fib.firefox.json");
    let mut child = spawn_wasmprof(&[
        "report",
        "--input",
        input.to_str().unwrap(),
        "--format",
        "firefox",
        "--open",
        "-o",
        out.to_str().unwrap(),
    ]);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let link = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no link printed: {said}"
        );
        said.push_str(&line);
        if let Some(rest) = line.split("https://profiler.firefox.com/from-url/").nth(1) {
            break rest.split('/').next().unwrap().to_owned();
        }
    };
    let url = percent_decoded(&link);
    let (addr, path) = url
        .strip_prefix("http://")
        .and_then(|u| u.split_once('/'))
        .expect("a loopback URL");
    let get = |host: &str| {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        reply
    };
    let reply = get(addr);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply:.200}");
    assert!(
        reply.contains("Access-Control-Allow-Origin: https://profiler.firefox.com"),
        "{reply:.300}"
    );
    let body = reply.split("\r\n\r\n").nth(1).unwrap();
    let served: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(served["meta"]["product"], "wasmprof profile (wasmprof)");
    assert!(get("rebound.example").starts_with("HTTP/1.1 421"));
    unsafe { libc_kill(child.id() as i32, 2) };
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // Not with another format: the flag says what it goes with.
    let refused = wasmprof(&["report", "--input", input.to_str().unwrap(), "--open"]);
    assert_eq!(refused.code(), Some(1), "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("--open serves a file for the Firefox Profiler")
    );
    // A device gives nothing back to serve.
    let device = wasmprof(&[
        "report",
        "--input",
        input.to_str().unwrap(),
        "--format",
        "firefox",
        "--open",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(device.code(), Some(1), "{}", device.stderr);
    assert!(
        device.stderr.contains("/dev/null is not a regular file"),
        "{}",
        device.stderr
    );
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}
