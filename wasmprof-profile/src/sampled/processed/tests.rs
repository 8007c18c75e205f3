use serde_json::{Value, json};

use super::{Refusal, program_samples, threads};
use crate::sampled::gecko::tests::stacks_of;

/// One function of the profile below.
struct Func {
    name: &'static str,
    js: bool,
    file: Option<&'static str>,
    line: Option<i64>,
    column: Option<i64>,
    /// Its frame's category and subcategory.
    category: Option<(u64, u64)>,
}

const FUNCS: [Func; 4] = [
    Func {
        name: "fib.wasm.fib::fib::h9522477cd4191451",
        js: true,
        file: Some("http://127.0.0.1:4000/fib_bg.wasm"),
        line: Some(14800),
        column: None,
        category: Some((1, 1)),
    },
    Func {
        name: "fib_js",
        js: true,
        file: Some("http://127.0.0.1:4000/fib.js"),
        line: Some(8),
        column: Some(23),
        category: Some((1, 0)),
    },
    Func {
        name: "nsRefreshDriver::Tick",
        js: false,
        file: None,
        line: None,
        column: None,
        category: Some((0, 0)),
    },
    Func {
        name: "ArrayForEach",
        js: true,
        file: Some("self-hosted"),
        line: None,
        column: None,
        category: None,
    },
];

/// Each stack's frame (= function) and caller: the browser's tick calls
/// `fib_js`, which calls wasm `fib` through a self-hosted function, and
/// `fib` calls itself.
const STACKS: [(usize, Option<usize>); 5] = [
    (2, None),
    (1, Some(0)),
    (3, Some(1)),
    (0, Some(2)),
    (0, Some(3)),
];

/// The samples: their stacks, one a millisecond.
const SAMPLES: [Option<usize>; 6] = [Some(1), Some(3), Some(4), Some(4), None, Some(0)];

/// The same profile laid out as format `version` lays it out, with its
/// times as `time` or as `timeDeltas`.
fn profile_at(version: u64, deltas: bool) -> Value {
    let mut strings: Vec<String> = Vec::new();
    let mut string = |s: &str| {
        strings.iter().position(|t| t == s).unwrap_or_else(|| {
            strings.push(s.to_owned());
            strings.len() - 1
        })
    };
    let names: Vec<usize> = FUNCS.iter().map(|f| string(f.name)).collect();
    let files: Vec<Option<usize>> = FUNCS.iter().map(|f| f.file.map(&mut string)).collect();
    let null_as = |v: Option<i64>, placeholder: bool| match (v, placeholder) {
        (Some(v), _) => json!(v),
        (None, true) => json!(0),
        (None, false) => Value::Null,
    };
    let mut funcs = json!({
        "length": FUNCS.len(),
        "name": names,
        "resource": vec![if version >= 75 { 0 } else { -1 }; FUNCS.len()],
        "lineNumber": FUNCS.iter().map(|f| null_as(f.line, version >= 75)).collect::<Vec<_>>(),
        "columnNumber": FUNCS.iter().map(|f| null_as(f.column, version >= 75)).collect::<Vec<_>>(),
    });
    // From 58 a file is a source; from 75 whether it has one is a flag.
    let sources: Vec<usize> = files.iter().flatten().copied().collect();
    let file_cells: Vec<Value> = files
        .iter()
        .map(|file| match file {
            Some(s) if version >= 58 => json!(sources.iter().position(|t| t == s).unwrap()),
            Some(s) => json!(s),
            None if version >= 75 => json!(0),
            None => Value::Null,
        })
        .collect();
    funcs[if version >= 58 { "source" } else { "fileName" }] = json!(file_cells);
    if version >= 75 {
        let flags: Vec<u64> = FUNCS
            .iter()
            .map(|f| {
                u64::from(f.js)
                    | if f.file.is_some() { 8 } else { 0 }
                    | if f.line.is_some() { 16 } else { 0 }
                    | if f.column.is_some() { 32 } else { 0 }
            })
            .collect();
        funcs["flags"] = json!(flags);
    } else {
        funcs["isJS"] = json!(FUNCS.iter().map(|f| f.js).collect::<Vec<_>>());
        funcs["relevantForJS"] = json!(vec![false; FUNCS.len()]);
    }
    let category = |f: &Func, at: usize| match (f.category, version >= 71) {
        (Some(pair), _) => json!([pair.0, pair.1][at]),
        (None, true) => json!(0),
        (None, false) => Value::Null,
    };
    let mut frames = json!({
        "length": FUNCS.len(),
        "func": (0..FUNCS.len()).collect::<Vec<_>>(),
        "category": FUNCS.iter().map(|f| category(f, 0)).collect::<Vec<_>>(),
        "subcategory": FUNCS.iter().map(|f| category(f, 1)).collect::<Vec<_>>(),
        "address": vec![-1; FUNCS.len()],
    });
    if version >= 71 {
        let flags: Vec<u64> = FUNCS
            .iter()
            .map(|f| if f.category.is_some() { 4 } else { 0 })
            .collect();
        frames["flags"] = json!(flags);
    }
    let mut stacks = json!({
        "length": STACKS.len(),
        "frame": STACKS.iter().map(|s| s.0).collect::<Vec<_>>(),
    });
    if version >= 66 {
        let offsets: Vec<usize> = (STACKS.iter().enumerate())
            .map(|(i, s)| s.1.map_or(0, |p| i - p))
            .collect();
        stacks["prefixOffset"] = json!(offsets);
    } else {
        stacks["prefix"] = json!(STACKS.iter().map(|s| s.1).collect::<Vec<_>>());
    }
    let mut samples = json!({
        "length": SAMPLES.len(),
        "stack": SAMPLES,
        "weight": null,
        "weightType": "samples",
    });
    let times: Vec<f64> = (0..SAMPLES.len()).map(|i| 10.0 + i as f64).collect();
    if deltas {
        let deltas: Vec<f64> = (0..times.len())
            .map(|i| times[i] - if i == 0 { 0.0 } else { times[i - 1] })
            .collect();
        samples["timeDeltas"] = json!(deltas);
    } else {
        samples["time"] = json!(times);
    }
    let mut thread = json!({
        "name": "GeckoMain",
        "processName": "Isolated Web Content",
        "tid": 25319,
        "pid": "25319",
        "isMainThread": true,
        "samples": samples,
        "markers": {"length": 0, "data": [], "name": []},
    });
    let mut shared = json!({});
    let tables = if version >= 60 {
        &mut shared
    } else {
        &mut thread
    };
    tables["funcTable"] = funcs;
    tables["frameTable"] = frames;
    tables["stackTable"] = stacks;
    if version >= 58 {
        shared["sources"] = json!({"length": sources.len(), "filename": sources});
    }
    if version >= 56 {
        shared["stringArray"] = json!(strings);
    } else {
        thread["stringArray"] = json!(strings);
    }
    json!({
        "meta": {
            "interval": 1.0,
            "startTime": 1_796_681_317_720.3,
            "product": "Firefox",
            "version": 36,
            "preprocessedProfileVersion": version,
            "categories": [
                {"name": "Other", "color": "grey", "subcategories": ["Other"]},
                {"name": "JavaScript", "color": "yellow", "subcategories": ["Other", "Wasm (ion)"]},
            ],
        },
        "libs": [],
        "shared": shared,
        "threads": [thread],
    })
}

fn names(stack: &[&str]) -> Vec<String> {
    stack.iter().map(|s| s.to_string()).collect()
}

#[test]
fn every_version_from_55_to_75_reads_into_the_same_stacks() {
    let expected = vec![
        names(&["fib_js"]),
        names(&["fib_js", "fib::fib::h9522477cd4191451"]),
        names(&[
            "fib_js",
            "fib::fib::h9522477cd4191451",
            "fib::fib::h9522477cd4191451",
        ]),
        names(&[
            "fib_js",
            "fib::fib::h9522477cd4191451",
            "fib::fib::h9522477cd4191451",
        ]),
        // No stack: idle. The browser's own code alone: the browser's.
        names(&["(idle)"]),
        names(&["(browser)"]),
    ];
    for version in [55, 56, 58, 60, 65, 66, 70, 71, 74, 75] {
        for deltas in [false, true] {
            let profile = profile_at(version, deltas);
            let samples = program_samples(&profile)
                .unwrap_or_else(|e| panic!("version {version}: {e:?}"))
                .unwrap_or_else(|| panic!("version {version}: no thread ran wasm"));
            assert_eq!(stacks_of(&samples), expected, "version {version}");
            // The times are the samples' own, in µs, whichever column.
            assert_eq!(samples["startTime"], json!(10_000.0), "version {version}");
        }
    }
}

#[test]
fn a_wasm_frame_is_told_by_its_subcategory_when_its_url_was_sanitised() {
    let mut profile = profile_at(75, false);
    // "Download" with the default privacy settings: every URL the same.
    let strings = profile["shared"]["stringArray"].as_array_mut().unwrap();
    for s in strings.iter_mut() {
        if s.as_str().unwrap().starts_with("http://") {
            *s = json!("http://<URL>");
        }
    }
    let thread = &threads(&profile).unwrap()[0];
    assert_eq!(thread.wasm_samples, 3);
    let nodes = thread.cpuprofile["nodes"].as_array().unwrap();
    let fib = nodes
        .iter()
        .find(|n| n["callFrame"]["functionName"] == "fib::fib::h9522477cd4191451")
        .unwrap();
    // Its offset in the module, where Gecko's label puts it.
    assert_eq!(fib["callFrame"]["columnNumber"], 14800);
    let js = nodes
        .iter()
        .find(|n| n["callFrame"]["functionName"] == "fib_js")
        .unwrap();
    assert_eq!(js["callFrame"]["lineNumber"], 7);
    assert_eq!(js["callFrame"]["columnNumber"], 22);
}

#[test]
fn a_profile_without_javascript_is_all_the_program_s() {
    // What wasmtime's guest profiler writes: no function is JavaScript.
    let mut profile = profile_at(55, true);
    let thread = &mut profile["threads"][0];
    thread["funcTable"]["isJS"] = json!([false, false, false, false]);
    let samples = program_samples(&profile).unwrap().unwrap();
    assert_eq!(
        stacks_of(&samples)[1],
        names(&[
            "nsRefreshDriver::Tick",
            "fib_js",
            "ArrayForEach",
            "fib.wasm.fib::fib::h9522477cd4191451"
        ])
    );
}

#[test]
fn what_is_not_a_processed_sampling_profile_is_refused_with_why() {
    let refusal = |profile: &Value| threads(profile).err().unwrap();
    let mut old = profile_at(55, false);
    old["meta"]["preprocessedProfileVersion"] = json!(48);
    assert_eq!(refusal(&old), Refusal::Version(48));
    let mut new = profile_at(75, false);
    new["meta"]["preprocessedProfileVersion"] = json!(76);
    assert_eq!(refusal(&new), Refusal::Version(76));

    let mut ours = profile_at(55, false);
    ours["meta"]["product"] = json!("appendix-b (wasmprof)");
    assert_eq!(refusal(&ours), Refusal::WrittenByWasmprof);

    let mut traced = profile_at(60, false);
    traced["threads"][0]["samples"]["weightType"] = json!("tracing-ms");
    let Refusal::Shape(why) = refusal(&traced) else {
        panic!("{:?}", refusal(&traced));
    };
    assert!(why.contains("weighted in tracing-ms"), "{why}");

    let mut broken = profile_at(66, false);
    broken["shared"]["stackTable"]
        .as_object_mut()
        .unwrap()
        .remove("prefixOffset");
    let Refusal::Shape(why) = refusal(&broken) else {
        panic!("{:?}", refusal(&broken));
    };
    assert!(why.contains("no `prefixOffset` column"), "{why}");

    // Prefixes that go round, and indexes past the tables, are no stack.
    let mut wild = profile_at(60, false);
    wild["shared"]["stackTable"]["prefix"] = json!([4, 0, 1, 2, 3]);
    wild["threads"][0]["samples"]["stack"] = json!([1, 99, 4, 4, null, 0]);
    let thread = &threads(&wild).unwrap()[0];
    assert_eq!(thread.program_samples, 0);
}

/// A file is untrusted: an index past its table, a negative number or a
/// null in any column of any table is read without a panic (as a stack
/// the tables do not hold, or the column's absence).
#[test]
fn any_cell_out_of_range_is_read_without_a_panic() {
    for version in [55, 60, 66, 71, 75] {
        let profile = profile_at(version, version % 2 == 0);
        let tables = if version >= 60 {
            "/shared"
        } else {
            "/threads/0"
        };
        let samples = "/threads/0/samples".to_owned();
        let all = ["stackTable", "frameTable", "funcTable"].map(|t| format!("{tables}/{t}"));
        for table in all.iter().chain([&samples]) {
            let columns: Vec<String> = profile
                .pointer(table)
                .and_then(Value::as_object)
                .unwrap()
                .keys()
                .filter(|k| *k != "length")
                .cloned()
                .collect();
            for column in columns {
                for wild in [json!(1_000_000_000u64), json!(-3), Value::Null] {
                    let mut broken = profile.clone();
                    let Some(cells) = broken
                        .pointer_mut(&format!("{table}/{column}"))
                        .and_then(Value::as_array_mut)
                    else {
                        continue;
                    };
                    for cell in cells.iter_mut() {
                        *cell = wild.clone();
                    }
                    let _ = threads(&broken);
                }
            }
        }
    }
}
