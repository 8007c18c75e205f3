use serde_json::{Value, json};

use super::*;

const WASM: &str = "http://127.0.0.1:41977/app_bg.wasm";

/// A Gecko thread whose frames are `labels` (with `categories`), whose
/// stacks are (prefix, frame) pairs, and whose samples are (stack, ms).
fn thread(
    name: &str,
    labels: &[(&str, u64)],
    stacks: &[(Option<u64>, u64)],
    samples: &[(Option<u64>, f64)],
) -> Value {
    json!({
        "name": name,
        "processType": "tab",
        "tid": 7,
        "registerTime": 1.0,
        "samples": {
            "schema": { "stack": 0, "time": 1, "threadCPUDelta": 2 },
            "data": samples.iter().map(|(s, t)| json!([s, t, 100])).collect::<Vec<_>>(),
        },
        "stackTable": {
            "schema": { "prefix": 0, "frame": 1 },
            "data": stacks.iter().map(|(p, f)| json!([p, f])).collect::<Vec<_>>(),
        },
        // Rows without their trailing empty cells, as Gecko writes them.
        "frameTable": {
            "schema": { "location": 0, "relevantForJS": 1, "innerWindowID": 2,
                        "implementation": 3, "line": 4, "column": 5,
                        "category": 6, "subcategory": 7 },
            "data": labels.iter().enumerate()
                .map(|(i, (_, category))| json!([i, false, 0, null, null, null, category]))
                .collect::<Vec<_>>(),
        },
        "stringTable": labels.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
    })
}

fn profile(threads: Vec<Value>, processes: Vec<Value>) -> Value {
    json!({
        "meta": {
            "version": 34,
            "startTime": 1000.0,
            "interval": 1.0,
            "categories": [
                { "name": "Idle" }, { "name": "Other" }, { "name": "JavaScript" },
                { "name": "GC / CC" },
            ],
        },
        "threads": threads,
        "processes": processes,
    })
}

/// The names of each sample's stack in a `.cpuprofile`, outermost first.
pub(in crate::sampled) fn stacks_of(cpuprofile: &Value) -> Vec<Vec<String>> {
    let nodes = cpuprofile["nodes"].as_array().unwrap();
    let mut parent = HashMap::new();
    let mut name = HashMap::new();
    for node in nodes {
        let id = node["id"].as_u64().unwrap();
        name.insert(
            id,
            node["callFrame"]["functionName"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        for child in node["children"].as_array().unwrap() {
            parent.insert(child.as_u64().unwrap(), id);
        }
    }
    cpuprofile["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mut at = s.as_u64().unwrap();
            let mut stack = vec![];
            while let Some(&up) = parent.get(&at) {
                stack.push(name[&at].clone());
                at = up;
            }
            stack.reverse();
            stack
        })
        .collect()
}

#[test]
fn labels_say_which_frames_are_the_program_s() {
    let wasm = classify(
        &format!("app.wasm.app::work::h47b1755df0c921c7 ({WASM}:73512)"),
        None,
    );
    assert_eq!(
        wasm,
        FrameKind::Program {
            name: "app::work::h47b1755df0c921c7".into(),
            url: WASM.into(),
            line: 0,
            column: 73512,
            wasm: true,
        }
    );
    // A module without a name of its own, and a function without one.
    assert!(matches!(
        classify(&format!("wasm-function[346] ({WASM}:10)"), None),
        FrameKind::Program { name, .. } if name == "wasm-function[346]"
    ));
    let script = classify(
        "__wbg_init (http://127.0.0.1:41977/app.js:434:31)[14]",
        None,
    );
    assert_eq!(
        script,
        FrameKind::Program {
            name: "__wbg_init".into(),
            url: "http://127.0.0.1:41977/app.js".into(),
            line: 433,
            column: 30,
            wasm: false,
        }
    );
    // Another origin's script, when the page's is known, is not.
    assert_eq!(
        classify(
            "track (https://elsewhere.example/t.js:1:1)",
            Some("http://127.0.0.1:41977")
        ),
        FrameKind::Browser
    );
    for browser in [
        "js::RunScript",
        "slow entry trampoline (in wasm)",
        "AsyncFunctionNext (self-hosted:780:27)[42]",
        "promise callback",
        "0x7f50b2d1a26f",
        "(root)",
        "onLoad (resource://gre/modules/x.sys.mjs:3:4)",
    ] {
        assert_eq!(classify(browser, None), FrameKind::Browser, "{browser}");
    }
}

#[test]
fn a_thread_s_program_frames_make_its_stacks_and_the_rest_is_set_apart() {
    let labels = [
        ("(root)", 1),
        ("js::RunScript", 2),
        ("go (http://127.0.0.1:41977/app.js:10:1)[3]", 2),
        ("slow entry trampoline (in wasm)", 2),
        (
            "app.wasm.app::main::h0000000000000001 (http://127.0.0.1:41977/app_bg.wasm:100)",
            2,
        ),
        (
            "app.wasm.app::work::h0000000000000002 (http://127.0.0.1:41977/app_bg.wasm:200)",
            2,
        ),
        ("CanvasRenderingContext2D.putImageData", 1),
        ("nsThread::ProcessNextEvent", 0),
        ("GC", 3),
    ];
    let stacks = [
        (None, 0),    // 0 (root)
        (Some(0), 1), // 1 RunScript
        (Some(1), 2), // 2 go
        (Some(2), 3), // 3 trampoline
        (Some(3), 4), // 4 main
        (Some(4), 5), // 5 work
        (Some(4), 6), // 6 main → putImageData
        (Some(0), 7), // 7 idle
        (Some(1), 8), // 8 GC
        (Some(0), 1), // 9 RunScript alone
    ];
    let samples = [
        (Some(5), 10.0),
        (Some(5), 11.0),
        (Some(6), 12.0),
        (Some(7), 13.0),
        (Some(8), 14.0),
        (Some(9), 15.0),
        (None, 16.0),
    ];
    let gecko = profile(
        vec![thread("GeckoMain", &labels, &stacks, &samples)],
        vec![],
    );
    let threads = threads(&gecko, None).unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].wasm_samples, 3);
    assert_eq!(threads[0].program_samples, 3);
    let cpu = &threads[0].cpuprofile;
    let go = "go";
    let main = "app::main::h0000000000000001";
    let work = "app::work::h0000000000000002";
    assert_eq!(
        stacks_of(cpu),
        vec![
            vec![go, main, work],
            vec![go, main, work],
            vec![go, main],
            vec!["(idle)"],
            vec!["(garbage collector)"],
            vec!["(browser)"],
            vec!["(idle)"],
        ]
    );
    // Times in µs, from the first sample; the last stands for an interval.
    assert_eq!(cpu["startTime"], 10_000.0);
    assert_eq!(cpu["endTime"], 17_000.0);
    assert_eq!(
        cpu["timeDeltas"],
        json!([0.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0])
    );
}

#[test]
fn the_program_s_threads_are_the_ones_that_ran_its_wasm_the_main_one_first() {
    let wasm = (
        "app.wasm.app::work (http://127.0.0.1:41977/app_bg.wasm:200)",
        2,
    );
    let other = ("nsThread::ProcessNextEvent", 1);
    let one = |name: &str, label| {
        thread(
            name,
            &[label],
            &[(None, 0)],
            &[(Some(0), 5.0), (Some(0), 6.0)],
        )
    };
    let parent = profile(vec![one("GeckoMain", other)], vec![]);
    let mut tab = profile(
        vec![
            one("DOM Worker", wasm),
            one("GeckoMain", wasm),
            one("DOM Worker", other),
        ],
        vec![],
    );
    tab["meta"]["startTime"] = json!(1500.0);
    let mut gecko = parent;
    gecko["processes"] = json!([tab]);
    let merged = program_samples(&gecko, None).unwrap().unwrap();
    let stacks = stacks_of(&merged);
    assert_eq!(
        stacks,
        vec![
            vec!["app::work"],
            vec!["app::work"],
            vec!["(worker 1)", "app::work"],
            vec!["(worker 1)", "app::work"],
        ]
    );
    // The tab's process started 500 ms after the first.
    assert_eq!(merged["startTime"], 505_000.0);
    // A profile in which no thread ran wasm has no program samples.
    let none = profile(vec![one("GeckoMain", other)], vec![]);
    assert_eq!(program_samples(&none, None).unwrap(), None);
}

#[test]
fn a_profile_of_another_shape_is_told_apart_and_a_broken_one_refused() {
    let gecko = profile(vec![], vec![]);
    assert!(is_gecko(&gecko));
    let mut processed = gecko.clone();
    processed["meta"]["preprocessedProfileVersion"] = json!(55);
    assert!(!is_gecko(&processed));
    assert!(is_processed(&processed));
    assert!(!is_gecko(&json!({ "nodes": [], "samples": [] })));
    let mut broken = thread(
        "GeckoMain",
        &[("(root)", 1)],
        &[(None, 0)],
        &[(Some(0), 1.0)],
    );
    broken["stackTable"]["schema"] = json!({ "frame": 1 });
    let error = threads(&profile(vec![broken], vec![]), None).unwrap_err();
    assert!(error.contains("no `prefix` column"), "{error}");
    // A stack whose prefixes go round is left out, not followed.
    let looped = thread(
        "GeckoMain",
        &[("app.wasm.f (http://h/app.wasm:1)", 2)],
        &[(Some(1), 0), (Some(0), 0)],
        &[(Some(0), 1.0)],
    );
    let threads = threads(&profile(vec![looped], vec![]), None).unwrap();
    assert_eq!(stacks_of(&threads[0].cpuprofile), vec![vec!["(browser)"]]);
}

#[test]
fn a_sleeping_thread_s_repeated_stack_is_idle_time() {
    let labels = [(
        "app.wasm.app::main (http://127.0.0.1:41977/app_bg.wasm:100)",
        2,
    )];
    let mut gecko = profile(
        vec![thread(
            "DOM Worker",
            &labels,
            &[(None, 0)],
            &[(Some(0), 10.0), (Some(0), 11.0), (Some(0), 12.0)],
        )],
        vec![],
    );
    // Asleep from the second sample on: no CPU used since the one before,
    // and Gecko repeats the stack the thread fell asleep in.
    for sample in 1..3 {
        gecko["threads"][0]["samples"]["data"][sample][2] = json!(0);
    }
    let threads = threads(&gecko, None).unwrap();
    assert_eq!(threads[0].wasm_samples, 1);
    assert_eq!(
        stacks_of(&threads[0].cpuprofile),
        vec![vec!["app::main"], vec!["(idle)"], vec!["(idle)"]]
    );
}

#[test]
fn a_sample_naming_a_stack_past_the_table_is_the_browser_s_not_a_panic() {
    let labels = [(
        "app.wasm.app::main (http://127.0.0.1:41977/app_bg.wasm:100)",
        2,
    )];
    let gecko = profile(
        vec![thread(
            "GeckoMain",
            &labels,
            &[(None, 0), (Some(7), 0)],
            &[(Some(0), 10.0), (Some(99), 11.0), (Some(1), 12.0)],
        )],
        vec![],
    );
    let threads = threads(&gecko, None).unwrap();
    assert_eq!(threads[0].wasm_samples, 1);
    assert_eq!(
        stacks_of(&threads[0].cpuprofile),
        vec![vec!["app::main"], vec!["(browser)"], vec!["(browser)"]]
    );
}

/// A file is untrusted: any cell of any table set to an index past its
/// table, a negative number or a null is read without a panic.
#[test]
fn any_cell_out_of_range_is_read_without_a_panic() {
    let labels = [
        ("go (http://127.0.0.1:41977/app.js:10:1)[3]", 2),
        (
            "app.wasm.app::main (http://127.0.0.1:41977/app_bg.wasm:100)",
            2,
        ),
    ];
    let thread = thread(
        "GeckoMain",
        &labels,
        &[(None, 0), (Some(0), 1)],
        &[(Some(1), 10.0), (Some(0), 11.0)],
    );
    for table in ["samples", "stackTable", "frameTable"] {
        let width = thread[table]["schema"].as_object().unwrap().len();
        for column in 0..width {
            for wild in [json!(1_000_000_000u64), json!(-3), Value::Null] {
                let mut broken = thread.clone();
                for row in broken[table]["data"].as_array_mut().unwrap() {
                    let row = row.as_array_mut().unwrap();
                    if column < row.len() {
                        row[column] = wild.clone();
                    }
                }
                let _ = threads(&profile(vec![broken], vec![]), None);
            }
        }
    }
}
