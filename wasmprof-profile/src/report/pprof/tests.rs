//! The pprof output decoded with prost, and read by the real `go tool pprof`.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;
use std::process::Command;

use super::*;
use crate::fixtures::{FullDisk, ProfileBuilder, appendix_b, recursion, two_workers};
use crate::report::callgraph::CallGraph;

fn encode(profile: &Profile) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_pprof(profile, &mut bytes).expect("writing to a Vec");
    bytes
}

fn decode(gzipped: &[u8]) -> proto::Profile {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(gzipped)
        .read_to_end(&mut bytes)
        .expect("gzip");
    proto::Profile::decode(bytes.as_slice()).expect("a pprof profile")
}

fn string(message: &proto::Profile, index: i64) -> &str {
    &message.string_table[usize::try_from(index).expect("non-negative")]
}

/// Every sample as (function names leaf first, values).
fn samples(message: &proto::Profile) -> Vec<(Vec<&str>, Vec<i64>)> {
    let function_name: HashMap<u64, &str> = message
        .function
        .iter()
        .map(|f| (f.id, string(message, f.name)))
        .collect();
    let location_name: HashMap<u64, &str> = message
        .location
        .iter()
        .map(|l| (l.id, function_name[&l.line[0].function_id]))
        .collect();
    message
        .sample
        .iter()
        .map(|s| {
            let names = s.location_id.iter().map(|id| location_name[id]).collect();
            (names, s.value.clone())
        })
        .collect()
}

#[test]
fn the_file_is_a_well_formed_profile() {
    let message = decode(&encode(&appendix_b(true)));
    assert_eq!(message.string_table[0], "");
    let unique: HashSet<&String> = message.string_table.iter().collect();
    assert_eq!(unique.len(), message.string_table.len(), "no string twice");
    let types: Vec<(&str, &str)> = message
        .sample_type
        .iter()
        .map(|t| (string(&message, t.r#type), string(&message, t.unit)))
        .collect();
    assert_eq!(types, [("calls", "count"), ("time", "nanoseconds")]);
    assert_eq!(string(&message, message.default_sample_type), "time");
    assert_eq!(message.time_nanos, 1_700_000_000_123_456_789);
    assert_eq!(
        message.duration_nanos,
        appendix_b(true).run.wall_nanos as i64
    );

    let function_ids: HashSet<u64> = message.function.iter().map(|f| f.id).collect();
    let location_ids: HashSet<u64> = message.location.iter().map(|l| l.id).collect();
    assert!(!function_ids.contains(&0) && !location_ids.contains(&0));
    assert_eq!(function_ids.len(), message.function.len());
    for location in &message.location {
        assert_eq!(location.mapping_id, 1);
        assert!(function_ids.contains(&location.line[0].function_id));
    }
    for sample in &message.sample {
        assert_eq!(sample.value.len(), 2);
        assert!(
            sample
                .location_id
                .iter()
                .all(|id| location_ids.contains(id))
        );
        assert!(sample.value.iter().all(|&v| v >= 0));
    }
    let add = message
        .function
        .iter()
        .find(|f| string(&message, f.name) == "add")
        .expect("add");
    assert_eq!(string(&message, add.system_name), "add");
    assert_eq!(string(&message, add.filename), "src/lib.rs");
    assert_eq!(add.start_line, 30);
}

#[test]
fn one_sample_per_node_with_its_path_leaf_first_and_its_self_time() {
    let profile = appendix_b(true);
    let message = decode(&encode(&profile));
    assert_eq!(message.sample.len(), profile.nodes.len() - 1);
    let samples = samples(&message);
    assert!(samples.contains(&(vec!["add", "f_quarter", "main"], vec![2_500_000, 5_000_000])));
    assert!(samples.contains(&(
        vec!["add", "f_quarter", "f_half_2", "main"],
        vec![5_000_000, 10_000_000]
    )));
    let calls_of_add: i64 = samples
        .iter()
        .filter(|(stack, _)| stack[0] == "add")
        .map(|(_, v)| v[0])
        .sum();
    assert_eq!(calls_of_add, 52_500_000);
    let time: i64 = samples.iter().map(|(_, v)| v[1]).sum();
    assert_eq!(time as f64, CallGraph::build(&profile).total_nanos);
}

#[test]
fn streamed_file_equals_the_whole_message_and_is_deterministic() {
    let profile = recursion(true);
    let bytes = encode(&profile);
    assert_eq!(decode(&bytes), to_message(&profile));
    assert_eq!(bytes, encode(&profile));
}

#[test]
fn untimed_profiles_have_only_calls() {
    let message = decode(&encode(&recursion(false)));
    assert_eq!(message.sample_type.len(), 1);
    assert_eq!(string(&message, message.default_sample_type), "calls");
    assert!(message.sample.iter().all(|s| s.value.len() == 1));
}

#[test]
fn futures_add_polls_and_latency_sample_types() {
    let profile = crate::fixtures::ProfileBuilder::timed()
        .path(&["app::batch"], 1, 1e6)
        .path(&["app::batch", "app::load"], 3, 6e6)
        .future(&["app::batch", "app::load"], 9, 2, 1, Some(50e6))
        .build();
    let message = decode(&encode(&profile));
    let types: Vec<&str> = message
        .sample_type
        .iter()
        .map(|t| string(&message, t.r#type))
        .collect();
    assert_eq!(types, ["calls", "time", "polls", "latency"]);
    let mut samples = samples(&message);
    samples.sort();
    assert_eq!(
        samples,
        [
            (vec!["app::batch"], vec![1, 1_000_000, 0, 0]),
            (
                vec!["app::load", "app::batch"],
                vec![3, 6_000_000, 9, 100_000_000]
            ),
        ]
    );
}

#[test]
fn overflow_gets_a_location_of_its_own() {
    let mut profile = ProfileBuilder::timed().path(&["main"], 1, 10.0).build();
    profile.nodes.push(crate::profile::Node {
        parent: Some(0),
        function: None,
        calls: 7,
        inclusive_nanos: 3.0,
        open: false,
        partly_timed: false,
        sampled: false,
        samples: 0,
    });
    let message = decode(&encode(&profile));
    assert!(samples(&message).contains(&(vec!["(overflow)"], vec![7, 0])));
    assert!(
        !message
            .string_table
            .iter()
            .any(|s| s.as_str() == frame_name(ELIDED_NAME))
    );
    // go tool pprof shows it by that name, not as the module's.
    let scratch = tempfile::tempdir().expect("temporary directory");
    let file = scratch.path().join("overflow.pb.gz");
    std::fs::write(&file, encode(&profile)).expect("write");
    let top = go_tool_pprof(&["-top", "-sample_index=calls"], &file, scratch.path())
        .expect("go is installed");
    assert_eq!(parse_top(&top)["(overflow)"].0, 7, "{top}");
}

#[test]
fn deep_stacks_keep_both_ends() {
    let depth = 1000;
    let mut path = vec!["main"];
    path.extend(vec!["down"; depth - 1]);
    let mut builder = ProfileBuilder::timed();
    // Only the deepest node is called here: one sample.
    builder = builder.path(&path, 1, 5.0);
    let message = decode(&encode(&builder.build()));
    let samples = samples(&message);
    assert_eq!(samples.len(), 1);
    let (stack, values) = &samples[0];
    assert_eq!(stack.len(), 2 * MAX_FRAMES_EACH_SIDE + 1);
    assert_eq!(stack[MAX_FRAMES_EACH_SIDE], frame_name(ELIDED_NAME));
    assert_eq!(stack.last(), Some(&"main"));
    assert_eq!(values, &vec![1, 5]);
}

#[test]
fn a_failing_writer_is_an_error_not_a_panic() {
    let err = write_pprof(&appendix_b(true), &mut FullDisk).unwrap_err();
    let text = crate::error::with_causes(&err);
    assert!(text.contains("disk full"), "{text}");
}

/// Runs `go tool pprof ARGS FILE` in an environment that needs no network
/// and no writable home; `None` if `go` is not installed.
fn go_tool_pprof(args: &[&str], file: &Path, scratch: &Path) -> Option<String> {
    let mut command = Command::new("go");
    command
        .arg("tool")
        .arg("pprof")
        .args(args)
        .arg(file)
        .env("GOCACHE", scratch.join("gocache"))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "")
        .env("PPROF_TMPDIR", scratch)
        .env("PPROF_BINARY_PATH", scratch);
    if std::env::var_os("HOME").is_none() {
        command.env("HOME", scratch);
    }
    let output = match command.output() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        other => other.expect("running go tool pprof"),
    };
    assert!(
        output.status.success(),
        "go tool pprof {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8(output.stdout).expect("UTF-8"))
}

/// `name -> (flat, cum)` from `pprof -top`, with the unit suffix removed.
fn parse_top(text: &str) -> HashMap<String, (i64, i64)> {
    let rows = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1);
    let number = |field: &str| -> i64 {
        field
            .trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap_or_else(|_| panic!("a number: {field}"))
    };
    rows.map(|row| {
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert!(fields.len() >= 6, "unexpected -top row: {row}");
        (
            fields[5..].join(" "),
            (number(fields[0]), number(fields[3])),
        )
    })
    .collect()
}

#[test]
fn go_tool_pprof_reads_the_file_and_shows_the_exact_numbers() {
    let scratch = tempfile::tempdir().expect("temporary directory");
    for (name, profile) in [
        ("appendix_b", appendix_b(true)),
        ("recursion", recursion(true)),
    ] {
        let file = scratch.path().join(format!("{name}.pb.gz"));
        let mut out = std::fs::File::create(&file).expect("create");
        write_pprof(&profile, &mut out).expect("write");
        drop(out);

        // Never skipped: without `go`, install golang-go (`.ci/run` does).
        let raw = go_tool_pprof(&["-raw"], &file, scratch.path())
            .expect("go tool pprof checks the file: install golang-go");
        assert!(raw.contains("calls/count time/nanoseconds[dflt]"), "{raw}");
        for function in &profile.functions {
            let location = format!(
                " M=1 {} {}:{} s={}",
                function.name, function.file, function.line, function.line
            );
            assert!(raw.contains(&location), "{location:?} not in\n{raw}");
        }

        let graph = CallGraph::build(&profile);
        let options = ["-top", "-nodefraction=0", "-nodecount=100000"];
        let time = go_tool_pprof(
            &[&options[..], &["-unit=ns"]].concat(),
            &file,
            scratch.path(),
        )
        .expect("go is installed");
        let time = parse_top(&time);
        let calls = go_tool_pprof(
            &[&options[..], &["-sample_index=calls"]].concat(),
            &file,
            scratch.path(),
        )
        .expect("go is installed");
        let calls = parse_top(&calls);
        assert_eq!(time.len(), graph.functions.len(), "{time:?}");
        for stats in &graph.functions {
            let (flat, cum) = time[&stats.name];
            assert_eq!(flat as f64, stats.self_nanos, "flat time of {}", stats.name);
            assert_eq!(cum as f64, stats.total_nanos, "cum time of {}", stats.name);
            assert_eq!(
                calls[&stats.name].0 as u64, stats.calls,
                "calls of {}",
                stats.name
            );
        }
        if name == "appendix_b" {
            assert_eq!(time["add"], (105_000_000, 105_000_000));
            assert_eq!(time["f_quarter"], (8_750_000, 43_750_000));
            assert_eq!(calls["add"].0, 52_500_000);
        } else {
            assert_eq!(calls["fib"].0, 4_378_200);
            assert_eq!(calls["is_even"].0, 10_200);
        }
    }
}

#[test]
fn a_threaded_program_s_samples_are_labelled_by_thread_and_sum_to_the_merged_figures() {
    let profile = two_workers();
    let message = decode(&encode(&profile));
    let mut by_thread = HashMap::new();
    for sample in &message.sample {
        assert_eq!(sample.label.len(), 1, "{sample:?}");
        let label = &sample.label[0];
        assert_eq!(string(&message, label.key), "thread");
        by_thread.insert(string(&message, label.str).to_owned(), sample.value.clone());
    }
    assert_eq!(by_thread.len(), 2, "{by_thread:?}");
    assert_eq!(by_thread["worker-0"], vec![3, 3_000]);
    assert_eq!(by_thread["worker-1"], vec![5, 5_000]);

    // The real pprof lists the threads and shows one alone.
    let scratch = tempfile::tempdir().expect("temporary directory");
    let file = scratch.path().join("threads.pb.gz");
    std::fs::write(&file, encode(&profile)).expect("write");
    let tags = go_tool_pprof(&["-tags", "-sample_index=calls"], &file, scratch.path())
        .expect("go tool pprof checks the file: install golang-go");
    assert!(tags.contains("thread: Total 8.0"), "{tags}");
    assert!(tags.contains("5.0 (62.50%): worker-1"), "{tags}");
    let alone = go_tool_pprof(
        &["-top", "-sample_index=calls", "-tagfocus=thread=worker-0"],
        &file,
        scratch.path(),
    )
    .expect("go is installed");
    assert_eq!(parse_top(&alone)["work"].0, 3, "{alone}");
}

#[test]
fn count_only_functions_are_samples_under_callers_not_tracked() {
    let profile = ProfileBuilder::timed()
        .path(&["main"], 1, 5_000.0)
        .counted("get", 1000)
        .build();
    let message = decode(&encode(&profile));
    let text = |i: i64| message.string_table[i as usize].as_str();
    let function_name = |location: u64| {
        let location = message.location.iter().find(|l| l.id == location).unwrap();
        let id = location.line[0].function_id;
        text(message.function.iter().find(|f| f.id == id).unwrap().name)
    };
    let labelled: Vec<&proto::Sample> = message
        .sample
        .iter()
        .filter(|s| !s.label.is_empty())
        .collect();
    assert_eq!(labelled.len(), 1);
    let sample = labelled[0];
    let stack: Vec<&str> = sample
        .location_id
        .iter()
        .map(|&l| function_name(l))
        .collect();
    assert_eq!(stack, ["get", "(callers not tracked)"]);
    assert_eq!(sample.value, [1000, 0]);
    let label = &sample.label[0];
    assert_eq!((text(label.key), text(label.str)), ("tier", "counted"));
    let without = decode(&encode(&appendix_b(true)));
    assert!(!without.string_table.iter().any(|s| s == "counted"));
}

#[test]
fn a_counted_function_s_sampled_path_is_a_sample_with_time_and_no_calls() {
    let profile = ProfileBuilder::timed()
        .path(&["main"], 1, 5_000.0)
        .path(&["main", "get"], 0, 2_000.0)
        .counted("get", 1000)
        .build();
    let message = decode(&encode(&profile));
    let all = samples(&message);
    assert!(
        all.contains(&(vec!["get", "main"], vec![0, 2_000])),
        "{all:?}"
    );
    assert!(all.contains(&(vec!["main"], vec![1, 5_000])), "{all:?}");
    assert!(all.contains(&(vec!["get", "(callers not tracked)"], vec![1000, 0])));
}

#[test]
fn memory_adds_go_s_heap_sample_types_that_go_tool_pprof_reads() {
    let profile = crate::fixtures::memory_profile();
    let message = decode(&encode(&profile));
    let types: Vec<&str> = message
        .sample_type
        .iter()
        .map(|t| string(&message, t.r#type))
        .collect();
    assert_eq!(
        types,
        [
            "calls",
            "time",
            "alloc_objects",
            "alloc_space",
            "inuse_objects",
            "inuse_space"
        ]
    );
    let outside = samples(&message)
        .into_iter()
        .find(|(names, _)| names == &[OUTSIDE])
        .expect("a sample of the allocations outside instrumented code");
    assert_eq!(outside.1, [0, 0, 1, 7, 0, 0]);

    let scratch = tempfile::tempdir().expect("temporary directory");
    let file = scratch.path().join("memory.pb.gz");
    std::fs::write(&file, encode(&profile)).expect("write");
    let options = ["-top", "-nodefraction=0", "-nodecount=100000", "-unit=B"];
    let top = |index: &str| {
        let args = [&options[..], &[index]].concat();
        parse_top(&go_tool_pprof(&args, &file, scratch.path()).expect("go is installed"))
    };
    let in_use = top("-sample_index=inuse_space");
    assert_eq!(in_use["inner"], (400, 400), "{in_use:?}");
    assert_eq!(in_use["outer"], (0, 400), "{in_use:?}");
    let allocated = top("-sample_index=alloc_space");
    assert_eq!(allocated["outer"], (100, 1110), "{allocated:?}");
    assert_eq!(allocated["inner"], (1010, 1010), "{allocated:?}");
    assert_eq!(allocated.get(OUTSIDE), Some(&(7, 7)), "{allocated:?}");
}
