use serde_json::Value;

use super::*;
use crate::fixtures::{appendix_b, memory_profile, two_workers};

fn written(profile: &Profile, timeline: &[Span]) -> Value {
    written_with(profile, timeline, None)
}

fn written_with(
    profile: &Profile,
    timeline: &[Span],
    run_samples: Option<(&Profile, &[Span])>,
) -> Value {
    let mut out = Vec::new();
    write_firefox(profile, timeline, run_samples, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// Each sample of `thread`: the names of its stack, outermost first, and
/// its weight.
fn samples_of(thread: &Value) -> Vec<(Vec<String>, i64)> {
    rows_of(thread, "samples")
}

/// The same of the thread's table `table` (`nativeAllocations`).
fn rows_of(thread: &Value, table: &str) -> Vec<(Vec<String>, i64)> {
    let strings = thread["stringArray"].as_array().unwrap();
    let funcs = &thread["funcTable"]["name"];
    let frame_func = &thread["frameTable"]["func"];
    let stacks = &thread["stackTable"];
    let samples = &thread[table];
    (0..samples["length"].as_u64().unwrap() as usize)
        .map(|i| {
            let mut names = Vec::new();
            let mut at = samples["stack"][i].as_u64();
            while let Some(stack) = at {
                let frame = stacks["frame"][stack as usize].as_u64().unwrap() as usize;
                let func = frame_func[frame].as_u64().unwrap() as usize;
                let name = funcs[func].as_u64().unwrap() as usize;
                names.push(strings[name].as_str().unwrap().to_owned());
                at = stacks["prefix"][stack as usize].as_u64();
            }
            names.reverse();
            (names, samples["weight"][i].as_i64().unwrap_or(1))
        })
        .collect()
}

fn thread<'a>(file: &'a Value, name_starts: &str) -> &'a Value {
    file["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"].as_str().unwrap().starts_with(name_starts))
        .unwrap_or_else(|| panic!("no track {name_starts}"))
}

#[test]
fn a_profile_s_times_and_exact_calls_are_the_weights_of_a_track_each() {
    let profile = appendix_b(true);
    let file = written(&profile, &[]);
    assert_eq!(file["meta"]["product"], "appendix_b (wasmprof)");
    let calls = samples_of(thread(&file, "main: exact calls"));
    // Every path's calls, once: the Self column is the count.
    let total: i64 = calls.iter().map(|(_, w)| w).sum();
    let counted: u64 = profile.nodes.iter().map(|n| n.calls).sum();
    assert_eq!(total as u64, counted);
    let quarter_add = calls
        .iter()
        .find(|(path, _)| path == &["main", "f_main_4", "f_quarter", "add"])
        .unwrap();
    assert_eq!(quarter_add.1, 10_000_000);
    // Time: each path's self time in µs; laid out in first-call order.
    let time = samples_of(thread(&file, "main: time (µs) by call path"));
    let add = time
        .iter()
        .find(|(path, _)| path == &["main", "f_main_1", "add"])
        .unwrap();
    assert_eq!(add.1, 20_000);
    let self_total: i64 = time.iter().map(|(_, w)| w).sum();
    let measured: f64 = profile.self_nanos().iter().sum();
    assert_eq!(self_total, (measured / 1000.0).round() as i64);
    // Each frame's category says its time is measured.
    let categories = file["meta"]["categories"].as_array().unwrap();
    let category = thread(&file, "main: time")["frameTable"]["category"][0]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(categories[category]["name"], "Measured");
}

#[test]
fn each_thread_has_tracks_of_its_own() {
    let file = written(&two_workers(), &[]);
    let names: Vec<&str> = file["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"worker-1: exact calls by call path (the Self column)"));
    let worker = samples_of(thread(&file, "worker-1: exact calls"));
    assert_eq!(worker, vec![(vec!["work".to_owned()], 5)]);
}

#[test]
fn an_engine_s_samples_are_a_track_in_time_order() {
    let profile = appendix_b(true);
    let add = crate::fixtures::node_at(&profile, &["main", "f_half", "add"]);
    let timeline: Vec<Span> = (0..3)
        .map(|i| Span {
            node: add,
            start_nanos: f64::from(i) * 100_000.0,
            nanos: 100_000.0,
        })
        .collect();
    let file = written(&profile, &timeline);
    let track = thread(&file, "main: samples");
    let sampled = samples_of(track);
    assert_eq!(sampled.len(), 3);
    assert!(
        sampled
            .iter()
            .all(|(path, w)| path == &["main", "f_half", "add"] && *w == 1)
    );
    assert_eq!(
        track["samples"]["timeDeltas"],
        serde_json::json!([0.0, 0.1, 0.1])
    );
}

#[test]
fn a_run_s_own_samples_are_a_track_in_time_beside_its_exact_tracks() {
    let run = appendix_b(true);
    let samples = appendix_b(true);
    let add = crate::fixtures::node_at(&samples, &["main", "f_main_1", "add"]);
    let timeline = [Span {
        node: add,
        start_nanos: 0.0,
        nanos: 100_000.0,
    }];
    let file = written_with(&run, &[], Some((&samples, &timeline)));
    let track = thread(&file, "the engine's samples of the run");
    assert_eq!(
        samples_of(track),
        vec![(
            vec!["main".to_owned(), "f_main_1".to_owned(), "add".to_owned()],
            1
        )]
    );
    // The exact tracks are there as ever.
    thread(&file, "main: exact calls");
}

#[test]
fn memory_is_each_path_s_bytes_as_allocations_on_tracks_of_its_own() {
    let profile = memory_profile();
    let file = written(&profile, &[]);
    let allocated = rows_of(
        thread(&file, "memory: bytes allocated by call path"),
        "nativeAllocations",
    );
    let memory = profile.memory.as_ref().unwrap();
    let total: i64 = allocated.iter().map(|(_, bytes)| bytes).sum();
    assert_eq!(
        total as u64,
        memory.paths.iter().map(|p| p.alloc_bytes).sum::<u64>()
    );
    assert!(allocated.contains(&(vec!["outer".to_owned(), "inner".to_owned()], 1000)));
    // Outside any instrumented call: the root's own.
    assert!(allocated.contains(&(vec![], 7)), "{allocated:?}");
    let live = rows_of(
        thread(&file, "memory: bytes still live at the end"),
        "nativeAllocations",
    );
    assert_eq!(
        live,
        vec![(vec!["outer".to_owned(), "inner".to_owned()], 400)]
    );
}

/// The interval markers of the track whose name starts with `track`: each
/// one's name, start and end (ms) and data.
fn markers_of(file: &Value, track: &str) -> Vec<(String, f64, f64, Value)> {
    let thread = thread(file, track);
    let strings = thread["stringArray"].as_array().unwrap();
    let markers = &thread["markers"];
    (0..markers["length"].as_u64().unwrap() as usize)
        .map(|i| {
            let name = strings[markers["name"][i].as_u64().unwrap() as usize]
                .as_str()
                .unwrap()
                .to_owned();
            (
                name,
                markers["startTime"][i].as_f64().unwrap(),
                markers["endTime"][i].as_f64().unwrap(),
                markers["data"][i].clone(),
            )
        })
        .collect()
}

#[test]
fn an_http_handler_s_requests_are_markers_when_they_were_served() {
    let mut profile = appendix_b(true);
    profile.run.requests = Some(crate::profile::Requests {
        path: "/items?page=2".into(),
        latency_nanos: vec![3_000_000, 1_500_000],
        statuses: vec![200, 404],
        start_nanos: vec![1_000_000, 5_000_000],
    });
    let file = written(&profile, &[]);
    let markers = markers_of(&file, "HTTP requests");
    assert_eq!(markers.len(), 2);
    let (name, start, end, data) = &markers[1];
    assert_eq!(name, "HTTP request");
    assert_eq!((*start, *end), (5.0, 6.5));
    assert_eq!(data["number"], 2.0);
    assert_eq!(data["status"], 404.0);
    assert_eq!(data["latency"], 1.5);
    // A profile from before the start times were kept has no such track.
    profile.run.requests.as_mut().unwrap().start_nanos.clear();
    let file = written(&profile, &[]);
    assert!(
        (file["threads"].as_array().unwrap().iter())
            .all(|t| !t["name"].as_str().unwrap().starts_with("HTTP"))
    );
}

#[test]
fn a_test_run_s_tests_are_markers_over_their_paths_on_the_time_track() {
    let mut profile = appendix_b(true);
    // appendix-b's four `f_main_N`, entered from `main`: as if `main`'s
    // callees were tests, make `main` itself the test.
    let main = (profile.functions.iter())
        .position(|f| f.name == "main")
        .unwrap();
    profile.functions[main].is_test = true;
    let file = written(&profile, &[]);
    let markers = markers_of(&file, "main: time (µs) by call path");
    assert_eq!(markers.len(), 1, "{markers:?}");
    let (name, start, end, data) = &markers[0];
    assert_eq!(name, "Test");
    // A string field is an index into the thread's strings.
    let strings = &thread(&file, "main: time (µs) by call path")["stringArray"];
    assert_eq!(strings[data["test"].as_u64().unwrap() as usize], "main");
    assert_eq!(data["calls"], 1.0);
    // Over its path, laid out from 0 for its inclusive time.
    let main_node = (profile.nodes.iter())
        .position(|n| n.function == Some(main))
        .unwrap();
    let inclusive_ms = profile.nodes[main_node].inclusive_nanos / 1e6;
    assert_eq!(*start, 0.0);
    assert!((end - inclusive_ms).abs() < 1e-6, "{end} {inclusive_ms}");
}
