//! The samples of several threads as one `.cpuprofile`.
//!
//! V8 samples each thread on its own: the page's and every dedicated
//! worker's profiler give a profile each; Firefox's profile holds a
//! table of samples per thread (`gecko.rs`). A `.cpuprofile` has one thread,
//! so the workers' are written after the page's, one after the other,
//! each under a frame that names it (`(worker 1)`), as the wasmtime host
//! writes its threads': the file holds the time of all the threads
//! together, as the instrumented profile's merged tree holds their calls,
//! and each thread's samples keep their own intervals.

use serde_json::{Value, json};

/// A profile without samples, for a page that was not sampled because it
/// runs none of the program: its workers' are appended to it.
pub fn no_samples() -> Value {
    json!({
        "nodes": [{
            "id": 1,
            "callFrame": {
                "functionName": "(root)",
                "scriptId": "0",
                "url": "",
                "lineNumber": -1,
                "columnNumber": -1,
            },
            "children": [],
        }],
        "startTime": 0,
        "endTime": 0,
        "samples": [],
        "timeDeltas": [],
    })
}

/// `first` (the page's profile, or the main thread's) with each of
/// `workers` appended, under a frame named for it (`(worker 1)`). Profiles that are not of the expected shape are
/// left out, and counted in the second value.
pub fn merged(first: Value, workers: &[(String, Value)]) -> (Value, usize) {
    let mut merged = first;
    let mut left_out = 0;
    for (name, worker) in workers {
        if append(&mut merged, worker, name).is_none() {
            left_out += 1;
        }
    }
    (merged, left_out)
}

/// Appends `other`'s nodes (renumbered past `into`'s, its root's children
/// under a node `name`), samples and deltas to `into`.
fn append(into: &mut Value, other: &Value, name: &str) -> Option<()> {
    let nodes = other["nodes"].as_array()?;
    let samples = other["samples"].as_array()?;
    let deltas = other["timeDeltas"].as_array()?;
    let duration = other["endTime"].as_f64()? - other["startTime"].as_f64()?;
    // `into` is changed only once both are known to be of the shape.
    into["samples"].as_array()?;
    into["timeDeltas"].as_array()?;
    into["endTime"].as_f64()?;
    let root = into["nodes"]
        .as_array()?
        .iter()
        .find(|n| n["callFrame"]["functionName"] == "(root)")?["id"]
        .as_u64()?;
    let next = into["nodes"]
        .as_array()?
        .iter()
        .filter_map(|n| n["id"].as_u64())
        .max()?
        + 1;
    // `other`'s ids move past `into`'s; its root becomes the thread's node.
    let other_root = nodes
        .iter()
        .find(|n| n["callFrame"]["functionName"] == "(root)")?["id"]
        .as_u64()?;
    let moved = |id: u64| next + id;
    let mut added = Vec::with_capacity(nodes.len());
    for node in nodes {
        let id = node["id"].as_u64()?;
        let mut node = node.clone();
        node["id"] = json!(moved(id));
        if let Some(children) = node["children"].as_array() {
            let children: Vec<u64> = children
                .iter()
                .filter_map(Value::as_u64)
                .map(moved)
                .collect();
            node["children"] = json!(children);
        }
        if id == other_root {
            node["callFrame"] = json!({
                "functionName": format!("({name})"),
                "scriptId": "0",
                "url": "",
                "lineNumber": -1,
                "columnNumber": -1,
            });
        }
        added.push(node);
    }
    let into_nodes = into["nodes"].as_array_mut()?;
    let root_node = into_nodes.iter_mut().find(|n| n["id"] == root)?;
    match root_node["children"].as_array_mut() {
        Some(children) => children.push(json!(moved(other_root))),
        None => root_node["children"] = json!([moved(other_root)]),
    }
    into_nodes.extend(added);
    let samples: Vec<Value> = samples
        .iter()
        .filter_map(Value::as_u64)
        .map(|s| json!(moved(s)))
        .collect();
    into["samples"].as_array_mut()?.extend(samples);
    into["timeDeltas"]
        .as_array_mut()?
        .extend(deltas.iter().cloned());
    let end = into["endTime"].as_f64()? + duration;
    into["endTime"] = json!(end);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(names: &[&str], samples: &[u64], start: f64, end: f64) -> Value {
        let mut nodes = vec![json!({
            "id": 1, "callFrame": {"functionName": "(root)", "url": ""},
            "children": (2..names.len() as u64 + 2).collect::<Vec<_>>(),
        })];
        for (index, name) in names.iter().enumerate() {
            nodes.push(json!({
                "id": index as u64 + 2,
                "callFrame": {"functionName": name, "url": "app.wasm"},
            }));
        }
        json!({
            "nodes": nodes,
            "startTime": start,
            "endTime": end,
            "samples": samples,
            "timeDeltas": vec![100; samples.len()],
        })
    }

    #[test]
    fn a_worker_s_samples_follow_the_page_s_under_a_frame_that_names_it() {
        let page = profile(&["main"], &[2, 2], 1_000.0, 1_200.0);
        let worker = profile(&["chunk"], &[2, 2, 2], 5_000.0, 5_300.0);
        let (merged, left_out) = merged(page, &[("worker 1".to_owned(), worker)]);
        assert_eq!(left_out, 0);
        assert_eq!(merged["endTime"], 1_500.0);
        assert_eq!(merged["samples"].as_array().unwrap().len(), 5);
        assert_eq!(merged["timeDeltas"].as_array().unwrap().len(), 5);
        // It reads as any profile does, the worker's calls under its frame.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("merged.cpuprofile");
        std::fs::write(&path, merged.to_string()).unwrap();
        let read = crate::input::read(&path, &Default::default()).unwrap();
        let profile = read.profile;
        let chunk = (0..profile.nodes.len())
            .find(|&i| {
                let names: Vec<&str> = profile
                    .stack(i)
                    .iter()
                    .map(|&f| profile.functions[f].name.as_str())
                    .collect();
                names == ["(worker 1)", "chunk"]
            })
            .expect("the worker's path");
        assert_eq!(profile.nodes[chunk].samples, 3);
    }

    #[test]
    fn the_workers_of_a_page_not_sampled_are_the_whole_profile() {
        let worker = profile(&["chunk"], &[2, 2, 2], 5_000.0, 5_300.0);
        let (merged, left_out) = merged(no_samples(), &[("worker 1".to_owned(), worker)]);
        assert_eq!(left_out, 0);
        assert_eq!(merged["endTime"], 300.0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("merged.cpuprofile");
        std::fs::write(&path, merged.to_string()).unwrap();
        let profile = crate::input::read(&path, &Default::default())
            .unwrap()
            .profile;
        let chunk = (0..profile.nodes.len())
            .find(|&i| profile.nodes[i].samples == 3)
            .expect("the worker's samples");
        let names: Vec<&str> = profile
            .stack(chunk)
            .iter()
            .map(|&f| profile.functions[f].name.as_str())
            .collect();
        assert_eq!(names, ["(worker 1)", "chunk"]);
    }

    #[test]
    fn a_profile_of_another_shape_is_left_out_and_counted() {
        let page = profile(&["main"], &[2], 0.0, 100.0);
        let (merged, left_out) = merged(page.clone(), &[("worker 1".to_owned(), json!({}))]);
        assert_eq!(left_out, 1);
        assert_eq!(merged, page);
    }
}
