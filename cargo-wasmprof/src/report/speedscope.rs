//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>),
//! which speedscope and the Firefox Profiler open: an "evented" profile,
//! open and close events of every call path laid end to end. That is the
//! calling-context tree exactly, with nothing sampled or apportioned: each
//! node opens where its previous sibling closed and stays open for its
//! inclusive weight; its self weight is the time after its last child.
//! Siblings come in the order of their first call, and the profile's name
//! says that this is no timeline.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Context;
use serde::Serialize;

use super::stacks::{Stacks, Unit};
use crate::profile::Profile;

pub(crate) fn write_speedscope(profile: &Profile, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut buffered = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut buffered, &File::from_profile(profile))
        .context("cannot write the speedscope file")?;
    buffered
        .write_all(b"\n")
        .and_then(|()| buffered.flush())
        .context("cannot write the speedscope file")
}

/// The file as JSON, for the tests.
#[cfg(test)]
fn speedscope(profile: &Profile) -> serde_json::Value {
    serde_json::to_value(File::from_profile(profile)).unwrap_or(serde_json::Value::Null)
}

/// The file, typed: a million events are written straight, not built as
/// JSON values first.
#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared<'a>,
    profiles: [Evented; 1],
    name: String,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: u32,
    exporter: String,
}

#[derive(Serialize)]
struct Shared<'a> {
    frames: Vec<Frame<'a>>,
}

#[derive(Serialize)]
struct Frame<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    col: Option<u32>,
}

#[derive(Serialize)]
struct Evented {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: f64,
    #[serde(rename = "endValue")]
    end_value: f64,
    events: Vec<Event>,
}

#[derive(Serialize)]
struct Event {
    #[serde(rename = "type")]
    kind: &'static str,
    frame: usize,
    at: f64,
}

impl<'a> File<'a> {
    fn from_profile(profile: &'a Profile) -> File<'a> {
        let stacks = Stacks::build(profile).in_first_call_order();
        // One frame per function (and one for `<overflow>`), as the format
        // shares frames between events.
        let mut frame_of: HashMap<Option<usize>, usize> = HashMap::new();
        let mut frames: Vec<Frame<'a>> = Vec::new();
        let mut events = Vec::with_capacity(stacks.frames.len() * 2);
        if !stacks.frames.is_empty() {
            // (node, start, closing): each child opens where the previous
            // one closed.
            let mut work: Vec<(usize, f64, bool)> = Vec::new();
            let mut at = 0.0;
            let mut roots = Vec::new();
            for &child in &stacks.frames[0].children {
                roots.push((child, at, false));
                at += stacks.frames[child].inclusive;
            }
            work.extend(roots.into_iter().rev());
            while let Some((node, start, closing)) = work.pop() {
                let frame = &stacks.frames[node];
                let index = *frame_of.entry(frame.function).or_insert_with(|| {
                    let function = frame.function.and_then(|f| profile.functions.get(f));
                    frames.push(Frame {
                        name: match function {
                            Some(f) => f.name.as_str(),
                            None => super::callgraph::OVERFLOW_NAME,
                        },
                        file: function.map(|f| f.file.as_str()),
                        line: function.map(|f| f.line),
                        col: function.and_then(|f| f.column),
                    });
                    frames.len() - 1
                });
                if closing {
                    events.push(Event {
                        kind: "C",
                        frame: index,
                        at: start + frame.inclusive,
                    });
                    continue;
                }
                events.push(Event {
                    kind: "O",
                    frame: index,
                    at: start,
                });
                work.push((node, start, true));
                let mut at = start;
                let mut children = Vec::with_capacity(frame.children.len());
                for &child in &frame.children {
                    children.push((child, at, false));
                    at += stacks.frames[child].inclusive;
                }
                work.extend(children.into_iter().rev());
            }
        }
        // A frame closes at its start plus its time, and its last callee at
        // the sum of its callees' times, added one by one: in floating
        // point the two can differ in the last bit, and speedscope refuses
        // a file whose events step back ("Samples must be provided in
        // increasing order", seen on a Leptos app's profile). Holding each
        // event at least where the previous one was moves none by more
        // than that bit.
        let mut latest = 0.0f64;
        for event in &mut events {
            latest = latest.max(event.at);
            event.at = latest;
        }
        let name = profile
            .run
            .package
            .clone()
            .unwrap_or_else(|| "wasmprof profile".to_owned());
        // speedscope shows the profile's name above its views: the place to
        // say what "Time Order" means here.
        let profile_name = format!("{name} (call paths in first-call order, not a timeline)");
        File {
            schema: "https://www.speedscope.app/file-format-schema.json",
            shared: Shared { frames },
            profiles: [Evented {
                kind: "evented",
                name: profile_name,
                unit: match stacks.unit {
                    Unit::Nanoseconds => "nanoseconds",
                    Unit::Bytes => "bytes",
                    Unit::Calls | Unit::Blocks => "none",
                },
                start_value: 0.0,
                end_value: stacks.total(),
                events,
            }],
            name,
            active_profile_index: 0,
            exporter: format!("wasmprof {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{appendix_b, ProfileBuilder};

    #[test]
    fn events_nest_and_last_as_long_as_each_path() {
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "a"], 1, 30.0)
            .path(&["main", "b"], 2, 20.0)
            .build();
        let file = speedscope(&profile);
        let events = file["profiles"][0]["events"].as_array().unwrap();
        let shape: Vec<(String, String, f64)> = events
            .iter()
            .map(|e| {
                let frame = e["frame"].as_u64().unwrap() as usize;
                (
                    e["type"].as_str().unwrap().to_owned(),
                    file["shared"]["frames"][frame]["name"]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    e["at"].as_f64().unwrap(),
                )
            })
            .collect();
        let expected = [
            ("O", "main", 0.0),
            ("O", "a", 0.0),
            ("C", "a", 30.0),
            ("O", "b", 30.0),
            ("C", "b", 50.0),
            ("C", "main", 60.0),
        ];
        assert_eq!(shape.len(), expected.len());
        for ((t, n, at), (et, en, eat)) in shape.iter().zip(expected) {
            assert_eq!((t.as_str(), n.as_str(), *at), (et, en, eat));
        }
        assert_eq!(file["profiles"][0]["endValue"], 60.0);
    }

    #[test]
    fn events_never_step_back_when_sums_round_differently() {
        // 0.1 + (0.2 + 0.3) < (0.1 + 0.2) + 0.3 in floating point: `main`
        // would close before its last callee does.
        let profile = ProfileBuilder::timed()
            .path(&["first"], 1, 0.1)
            .path(&["main"], 1, 0.0)
            .path(&["main", "a"], 1, 0.2)
            .path(&["main", "b"], 1, 0.3)
            .build();
        let file = speedscope(&profile);
        let ats: Vec<f64> = file["profiles"][0]["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["at"].as_f64().unwrap())
            .collect();
        assert!(ats.windows(2).all(|w| w[0] <= w[1]), "{ats:?}");
    }

    #[test]
    fn siblings_come_in_the_order_of_their_first_call() {
        // `main` called `f_main_1` first, then `f_half`: not by name.
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "f_main_1"], 1, 30.0)
            .path(&["main", "f_half"], 1, 20.0)
            .build();
        let file = speedscope(&profile);
        let opened: Vec<&str> = file["profiles"][0]["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "O")
            .map(|e| {
                let frame = e["frame"].as_u64().unwrap() as usize;
                file["shared"]["frames"][frame]["name"].as_str().unwrap()
            })
            .collect();
        assert_eq!(opened, ["main", "f_main_1", "f_half"]);
        let name = file["profiles"][0]["name"].as_str().unwrap();
        assert!(name.contains("first-call order, not a timeline"), "{name}");
    }

    #[test]
    fn files_validate_against_speedscope_s_published_schema() {
        let schema_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/speedscope/file-format-schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        for profile in [appendix_b(true), crate::testing::recursion(false)] {
            let file = speedscope(&profile);
            let errors: Vec<String> = validator
                .iter_errors(&file)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
        // The validator does find a broken file.
        let mut broken = speedscope(&appendix_b(true));
        broken["profiles"][0]["unit"] = serde_json::json!("parsecs");
        assert!(!validator.is_valid(&broken));
    }

    #[test]
    fn the_events_of_a_real_profile_balance() {
        let file = speedscope(&appendix_b(true));
        let events = file["profiles"][0]["events"].as_array().unwrap();
        let mut open = Vec::new();
        let mut last = 0.0;
        for event in events {
            let at = event["at"].as_f64().unwrap();
            assert!(at >= last - 1e-6, "events in order");
            last = at;
            match event["type"].as_str().unwrap() {
                "O" => open.push(event["frame"].clone()),
                _ => assert_eq!(open.pop().unwrap(), event["frame"]),
            }
        }
        assert!(open.is_empty());
    }
}
