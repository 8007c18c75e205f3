//! Reading, checking and writing profile files.
//!
//! A profile comes from disk, so every index in it is checked before any
//! report trusts it: a corrupt file is an error that names the file, never a
//! panic in a report writer.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::model::{Profile, FORMAT, FORMAT_MAJOR};

/// What can be wrong with a profile file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read profile {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a wasmprof profile (corrupt or truncated JSON: {source}); re-run `cargo wasmprof run` to produce a new one")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path} has format {found:?}, which this wasmprof does not read; expected {FORMAT:?}")]
    UnknownFormat { path: PathBuf, found: String },
    #[error("{path} was written by a newer wasmprof (format {found}); this one reads format wasmprof/{FORMAT_MAJOR}: upgrade with `cargo install cargo-wasmprof`")]
    NewerFormat { path: PathBuf, found: String },
    #[error("{path} is inconsistent: {what}")]
    Inconsistent { path: PathBuf, what: String },
    #[error("cannot write profile {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Reads and checks one profile file.
pub fn read_profile(path: &Path) -> Result<Profile, ProfileError> {
    let bytes = fs::read(path).map_err(|source| ProfileError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse_profile(&bytes, path)
}

/// Parses and checks profile bytes; `path` only names them in errors.
pub fn parse_profile(bytes: &[u8], path: &Path) -> Result<Profile, ProfileError> {
    check_format_field(bytes, path)?;
    let profile: Profile = serde_json::from_slice(bytes).map_err(|source| ProfileError::Json {
        path: path.to_owned(),
        source,
    })?;
    validate(&profile).map_err(|what| ProfileError::Inconsistent {
        path: path.to_owned(),
        what,
    })?;
    Ok(profile)
}

/// Looks at `format` before the rest so that a newer file is refused for its
/// version, not for a field this version does not know.
fn check_format_field(bytes: &[u8], path: &Path) -> Result<(), ProfileError> {
    #[derive(serde::Deserialize)]
    struct Header {
        format: Option<String>,
    }
    let header: Header = serde_json::from_slice(bytes).map_err(|source| ProfileError::Json {
        path: path.to_owned(),
        source,
    })?;
    let found = header.format.unwrap_or_default();
    if found == FORMAT {
        return Ok(());
    }
    let major = found
        .strip_prefix("wasmprof/")
        .and_then(|v| v.split('.').next())
        .and_then(|v| v.parse::<u32>().ok());
    match major {
        Some(m) if m > FORMAT_MAJOR => Err(ProfileError::NewerFormat {
            path: path.to_owned(),
            found,
        }),
        // Version 1 differs only in how the nodes are written.
        Some(1) => Ok(()),
        Some(m) if m == FORMAT_MAJOR => Ok(()),
        _ => Err(ProfileError::UnknownFormat {
            path: path.to_owned(),
            found,
        }),
    }
}

/// Checks every index and number a report relies on.
pub fn validate(profile: &Profile) -> Result<(), String> {
    let root = profile
        .nodes
        .first()
        .ok_or_else(|| "it has no nodes (not even the root)".to_string())?;
    if root.parent.is_some() || root.function.is_some() {
        return Err("node 0 must be the root, with no parent and no function".into());
    }
    for (index, node) in profile.nodes.iter().enumerate().skip(1) {
        match node.parent {
            Some(parent) if parent < index => {}
            Some(parent) => {
                return Err(format!(
                    "node {index} has parent {parent}, which does not come before it"
                ))
            }
            None => return Err(format!("node {index} has no parent")),
        }
        if let Some(function) = node.function {
            if function >= profile.functions.len() {
                return Err(format!(
                    "node {index} names function {function}, but there are only {}",
                    profile.functions.len()
                ));
            }
        }
        if !node.inclusive_nanos.is_finite() || node.inclusive_nanos < 0.0 {
            return Err(format!(
                "node {index} has inclusive time {}",
                node.inclusive_nanos
            ));
        }
    }
    super::invariants::check_times(profile)?;
    for future in &profile.futures {
        if future.node == Profile::ROOT || future.node >= profile.nodes.len() {
            return Err(format!(
                "a futures entry names node {}, which is not an async call path",
                future.node
            ));
        }
    }
    Ok(())
}

/// Writes `profile` to `path` without ever leaving a half-written file: the
/// bytes go to a temporary file beside it that is then renamed.
pub fn write_profile(profile: &Profile, path: &Path) -> Result<(), ProfileError> {
    let write_err = |source| ProfileError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(write_err)?;
    }
    let temporary = path.with_extension("json.partial");
    let file = fs::File::create(&temporary).map_err(write_err)?;
    // Compact and buffered: a million-node profile is one pass of large
    // writes, not a system call per token.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    serde_json::to_writer(&mut out, profile).map_err(|e| write_err(std::io::Error::other(e)))?;
    out.write_all(b"\n").map_err(write_err)?;
    let file = out.into_inner().map_err(|e| write_err(e.into_error()))?;
    file.sync_all().map_err(write_err)?;
    drop(file);
    fs::rename(&temporary, path).map_err(write_err)
}

/// Adds `future` (of another profile) to the futures of `node` (see
/// [`Latency::combined`](super::Latency::combined) for the median).
fn merge_future(into: &mut Profile, node: usize, future: &super::FutureStats) {
    let Some(merged) = into.futures.iter_mut().find(|f| f.node == node) else {
        into.futures.push(super::FutureStats {
            node,
            ..future.clone()
        });
        return;
    };
    merged.polls += future.polls;
    merged.completions += future.completions;
    merged.cancellations += future.cancellations;
    merged.pending += future.pending;
    merged.pending_nanos += future.pending_nanos;
    merged.latency = super::Latency::combined(merged.latency.take(), future.latency.as_ref());
}

/// Merges several profiles of the same program into one: nodes with the same
/// stack of function names are added together. Run information is taken
/// from the first profile; the merged profile is complete only if all are.
pub fn merge(profiles: Vec<Profile>) -> Option<Profile> {
    let mut profiles = profiles.into_iter();
    let mut merged = profiles.next()?;
    for other in profiles {
        merge_into(&mut merged, &other);
    }
    Some(merged)
}

fn merge_into(into: &mut Profile, other: &Profile) {
    use std::collections::HashMap;
    into.timer.clock_cost_nanos = match (into.timer.clock_cost_nanos, other.timer.clock_cost_nanos)
    {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let mut function_ids: HashMap<(String, String, u32, Option<u32>), usize> = into
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| ((f.name.clone(), f.file.clone(), f.line, f.column), i))
        .collect();
    let function_map: Vec<usize> = other
        .functions
        .iter()
        .map(|f| {
            let key = (f.name.clone(), f.file.clone(), f.line, f.column);
            let mut added = false;
            let id = *function_ids.entry(key).or_insert_with(|| {
                added = true;
                into.functions.push(f.clone());
                into.functions.len() - 1
            });
            // A counted function's calls are the function's, not a node's.
            if !added {
                if let Some(calls) = f.calls {
                    let merged = &mut into.functions[id];
                    merged.calls = Some(merged.calls.unwrap_or(0) + calls);
                }
            }
            id
        })
        .collect();
    let mut child_index: HashMap<(usize, Option<usize>), usize> = into
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.parent.map(|p| ((p, n.function), i)))
        .collect();
    let mut node_map = vec![Profile::ROOT; other.nodes.len()];
    for (index, node) in other.nodes.iter().enumerate().skip(1) {
        let parent = node_map[node.parent.unwrap_or(Profile::ROOT)];
        let function = node.function.map(|f| function_map[f]);
        let target = *child_index.entry((parent, function)).or_insert_with(|| {
            into.nodes.push(super::model::Node {
                parent: Some(parent),
                function,
                calls: 0,
                inclusive_nanos: 0.0,
                open: false,
                partly_timed: false,
                sampled: false,
                samples: 0,
            });
            into.nodes.len() - 1
        });
        let merged = &mut into.nodes[target];
        merged.calls += node.calls;
        merged.inclusive_nanos += node.inclusive_nanos;
        merged.open |= node.open;
        merged.partly_timed |= node.partly_timed;
        merged.sampled |= node.sampled;
        merged.samples += node.samples;
        node_map[index] = target;
    }
    for future in &other.futures {
        merge_future(into, node_map[future.node], future);
    }
    into.overflow_calls += other.overflow_calls;
    into.run.wall_nanos += other.run.wall_nanos;
    if let (Some(into), Some(other)) = (&mut into.timer.hybrid, &other.timer.hybrid) {
        into.samples += other.samples;
        into.matched_samples += other.matched_samples;
        for unmatched in &other.unmatched {
            match into
                .unmatched
                .iter_mut()
                .find(|u| u.reason == unmatched.reason)
            {
                Some(same) => {
                    same.samples += unmatched.samples;
                    same.nanos += unmatched.nanos;
                }
                None => into.unmatched.push(unmatched.clone()),
            }
        }
    }
    if !other.run.complete {
        into.run.complete = false;
        into.run.incomplete_reason = into
            .run
            .incomplete_reason
            .take()
            .or_else(|| other.run.incomplete_reason.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::model::*;

    pub(crate) fn sample() -> Profile {
        Profile {
            format: FORMAT.into(),
            created_unix_nanos: 1,
            run: RunInfo {
                package: Some("demo".into()),
                module: "demo.wasm".into(),
                module_sha256: "00".into(),
                host: "node v20".into(),
                command: vec!["cargo".into(), "wasmprof".into(), "run".into()],
                entry: "start".into(),
                complete: true,
                incomplete_reason: None,
                exit_code: 0,
                wall_nanos: 10,
                min_size: None,
                max_nodes: None,
                samples_file: None,
                small_counted: false,
            },
            timer: TimerInfo {
                mode: TimerMode::Host,
                resolution_nanos: Some(1000.0),
                clock_cost_nanos: None,
                sample_interval_nanos: None,
                hybrid: None,
                coverage: None,
            },
            functions: vec![
                Function {
                    name: "demo::main".into(),
                    file: "src/main.rs".into(),
                    line: 3,
                    column: None,
                    tier: None,
                    calls: None,
                    is_async: false,
                    rustc_name: None,
                    is_test: false,
                },
                Function {
                    name: "demo::add".into(),
                    file: "src/main.rs".into(),
                    line: 9,
                    column: None,
                    tier: None,
                    calls: None,
                    is_async: false,
                    rustc_name: None,
                    is_test: false,
                },
            ],
            nodes: vec![
                Node::root(),
                Node {
                    parent: Some(0),
                    function: Some(0),
                    calls: 1,
                    inclusive_nanos: 100.0,
                    open: false,
                    partly_timed: false,
                    sampled: false,
                    samples: 0,
                },
                Node {
                    parent: Some(1),
                    function: Some(1),
                    calls: 5,
                    inclusive_nanos: 40.0,
                    open: false,
                    partly_timed: false,
                    sampled: false,
                    samples: 0,
                },
            ],
            overflow_calls: 0,
            futures: Vec::new(),
        }
    }

    #[test]
    fn round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        write_profile(&sample(), &path).unwrap();
        assert_eq!(read_profile(&path).unwrap(), sample());
        assert!(!path.with_extension("json.partial").exists());
    }

    #[test]
    fn truncated_file_is_a_json_error_naming_the_file() {
        let text = serde_json::to_string(&sample()).unwrap();
        let err =
            parse_profile(&text.as_bytes()[..text.len() / 2], Path::new("x.json")).unwrap_err();
        assert!(matches!(err, ProfileError::Json { .. }), "{err}");
        assert!(err.to_string().contains("x.json"));
    }

    #[test]
    fn newer_major_version_is_refused_for_its_version() {
        let mut value = serde_json::to_value(sample()).unwrap();
        value["format"] = "wasmprof/3".into();
        value["something_new"] = 1.into();
        let err = parse_profile(value.to_string().as_bytes(), Path::new("x.json")).unwrap_err();
        assert!(matches!(err, ProfileError::NewerFormat { .. }), "{err}");
    }

    #[test]
    fn a_version_1_file_with_node_objects_is_still_read() {
        let mut value = serde_json::to_value(sample()).unwrap();
        value["format"] = "wasmprof/1".into();
        value["nodes"] = serde_json::to_value(
            sample()
                .nodes
                .iter()
                .map(|n| {
                    serde_json::json!({
                        "parent": n.parent, "function": n.function, "calls": n.calls,
                        "inclusive_nanos": n.inclusive_nanos,
                    })
                })
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let read = parse_profile(value.to_string().as_bytes(), Path::new("x.json")).unwrap();
        assert_eq!(read.nodes, sample().nodes);
    }

    #[test]
    fn other_json_is_refused_as_unknown_format() {
        let err = parse_profile(br#"{"nodes": []}"#, Path::new("x.json")).unwrap_err();
        assert!(matches!(err, ProfileError::UnknownFormat { .. }), "{err}");
    }

    #[test]
    fn dangling_indices_are_inconsistent_not_a_panic() {
        let mut profile = sample();
        profile.nodes[2].function = Some(7);
        assert!(validate(&profile).unwrap_err().contains("function 7"));
        let mut profile = sample();
        profile.nodes[1].parent = Some(2);
        assert!(validate(&profile).is_err());
    }

    #[test]
    fn self_time_is_inclusive_less_children() {
        assert_eq!(sample().self_nanos(), vec![0.0, 60.0, 40.0]);
    }

    #[test]
    fn merging_adds_matching_paths() {
        let merged = merge(vec![sample(), sample()]).unwrap();
        assert_eq!(merged.nodes.len(), 3);
        assert_eq!(merged.nodes[2].calls, 10);
        assert_eq!(merged.nodes[1].inclusive_nanos, 200.0);
    }

    #[test]
    fn merging_adds_the_futures_of_the_same_path() {
        let run = |polls, latency: f64| {
            crate::testing::ProfileBuilder::timed()
                .path(&["app::run", "app::load"], 2, 1e6)
                .future(&["app::run", "app::load"], polls, 2, 0, Some(latency))
                .build()
        };
        let merged = merge(vec![run(5, 10e6), run(7, 30e6)]).unwrap();
        assert_eq!(merged.futures.len(), 1);
        let future = &merged.futures[0];
        assert_eq!(merged.nodes[future.node].calls, 4);
        assert_eq!((future.polls, future.completions), (12, 4));
        let latency = future.latency.as_ref().unwrap();
        assert_eq!((latency.count, latency.max_nanos), (4, 30e6));
        assert_eq!(latency.total_nanos, 80e6);
        assert!(validate(&merged).is_ok());
    }
}
