//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>),
//! which speedscope and the Firefox Profiler open: an "evented" profile,
//! open and close events of every call path laid end to end. That is the
//! calling-context tree exactly, with nothing sampled or apportioned: each
//! node opens where its previous sibling closed and stays open for its
//! inclusive weight; its self weight is the time after its last child.
//! Siblings come in the order of their first call, and the profile's name
//! says that this is no timeline.
//!
//! A page's slowest animation frames follow, one profile each (speedscope
//! lists them in its profile menu), laid out the same way from that frame's
//! own calls under its callback: a hitch read as a flame chart.

use std::collections::HashMap;
use std::io::Write;

use crate::error::Error;
use serde::Serialize;

use super::stacks::{Stacks, Unit};
use crate::profile::Profile;

pub(crate) fn write_speedscope(profile: &Profile, out: &mut dyn Write) -> crate::Result<()> {
    let mut buffered = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut buffered, &File::from_profile(profile))
        .map_err(Error::output("speedscope file"))?;
    buffered
        .write_all(b"\n")
        .and_then(|()| buffered.flush())
        .map_err(Error::output("speedscope file"))
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
    profiles: Vec<Evented>,
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
        let mut table = FrameTable::new(profile);
        let name = profile
            .run
            .package
            .clone()
            .unwrap_or_else(|| "wasmprof profile".to_owned());
        // speedscope shows the profile's name above its views: the place to
        // say what "Time Order" means here.
        let order = "call paths in first-call order, not a timeline";
        let merged = call_paths(profile, &mut table, format!("{name} ({order})"));
        let unit = merged.unit;
        let mut profiles = vec![merged];
        // A threaded program: each thread's own calls follow, one profile
        // each, after the merged one.
        for (index, thread) in profile.threads.iter().enumerate() {
            let view = profile.thread_view(index);
            let title = format!("{name}, thread {} ({order})", thread.name);
            profiles.push(call_paths(&view, &mut table, title));
        }
        // Frames are timed: they have no place in a profile of bytes.
        if unit == "nanoseconds" {
            profiles.extend(slow_frames(profile, &mut table));
        }
        File {
            schema: "https://www.speedscope.app/file-format-schema.json",
            shared: Shared {
                frames: table.frames,
            },
            profiles,
            name,
            active_profile_index: 0,
            exporter: format!("wasmprof {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// `profile`'s calling-context tree as one evented profile named `name`:
/// each node opens where its previous sibling closed and stays open for its
/// inclusive weight. `profile` may be a view of the one `table` names
/// functions for (the same functions, other figures).
fn call_paths(profile: &Profile, table: &mut FrameTable, name: String) -> Evented {
    let stacks = Stacks::build(profile).in_first_call_order();
    let mut events = Vec::with_capacity(stacks.frames.len() * 2);
    if !stacks.frames.is_empty() {
        // (node, start, closing): each child opens where the previous one
        // closed.
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
            let index = table.index(frame.function);
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
    monotonic(&mut events);
    Evented {
        kind: "evented",
        name,
        unit: match stacks.unit {
            Unit::Nanoseconds => "nanoseconds",
            Unit::Bytes => "bytes",
            Unit::Calls | Unit::Blocks => "none",
        },
        start_value: 0.0,
        end_value: stacks.total(),
        events,
    }
}

/// The format's shared frames: one per function (and one for
/// `<overflow>`), shared between events and profiles.
struct FrameTable<'a> {
    profile: &'a Profile,
    frames: Vec<Frame<'a>>,
    of_function: HashMap<Option<usize>, usize>,
}

impl<'a> FrameTable<'a> {
    fn new(profile: &'a Profile) -> FrameTable<'a> {
        FrameTable {
            profile,
            frames: Vec::new(),
            of_function: HashMap::new(),
        }
    }

    /// A frame of wasmprof's own, not a function's.
    fn named(&mut self, name: &'static str) -> usize {
        match self
            .frames
            .iter()
            .position(|f| f.name == name && f.file.is_none())
        {
            Some(index) => index,
            None => {
                self.frames.push(Frame {
                    name,
                    file: None,
                    line: None,
                    col: None,
                });
                self.frames.len() - 1
            }
        }
    }

    fn index(&mut self, function: Option<usize>) -> usize {
        let profile = self.profile;
        let frames = &mut self.frames;
        *self.of_function.entry(function).or_insert_with(|| {
            let function = function.and_then(|f| profile.functions.get(f));
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
        })
    }
}

/// A node closes at its start plus its time, and its last callee at the sum
/// of its callees' times, added one by one: in floating point the two can
/// differ in the last bit, and speedscope refuses a file whose events step
/// back ("Samples must be provided in increasing order", seen on a Leptos
/// app's profile). Holding each event at least where the previous one was
/// moves none by more than that bit.
fn monotonic(events: &mut [Event]) {
    let mut latest = 0.0f64;
    for event in events {
        latest = latest.max(event.at);
        event.at = latest;
    }
}

/// The root of a slow frame's profile: the callback, as long as it took;
/// its self time is what ran outside instrumented code (the page's own
/// JavaScript, the browser's calls, functions not instrumented).
const FRAME_CALLBACK: &str = "(animation frame callback)";

/// One profile for each of the slowest frames, slowest first: the frame's
/// callback, and in it the frame's own call paths, each as long as its time
/// in that frame.
fn slow_frames(profile: &Profile, table: &mut FrameTable) -> Vec<Evented> {
    let Some(frames) = &profile.frames else {
        return Vec::new();
    };
    let mut worst: Vec<&crate::profile::Frame> = frames.worst.iter().collect();
    worst.sort_by(|a, b| b.duration_nanos.total_cmp(&a.duration_nanos));
    worst
        .into_iter()
        .map(|frame| {
            let lines = super::animation_frames::tree(profile, frame);
            let mut events = Vec::with_capacity(lines.len() * 2 + 2);
            let callback = table.named(FRAME_CALLBACK);
            events.push(Event {
                kind: "O",
                frame: callback,
                at: 0.0,
            });
            // The paths open: (depth, shared frame, where it closes, where
            // its next callee opens).
            let mut open: Vec<(usize, usize, f64, f64)> = Vec::new();
            let mut next_root = 0.0;
            for line in &lines {
                while open.last().is_some_and(|o| o.0 >= line.depth) {
                    let (_, index, closes, _) = open.pop().unwrap_or_default();
                    events.push(Event {
                        kind: "C",
                        frame: index,
                        at: closes,
                    });
                }
                let start = match open.last_mut() {
                    Some(parent) => {
                        let start = parent.3;
                        parent.3 += line.inclusive_nanos;
                        start
                    }
                    None => {
                        let start = next_root;
                        next_root += line.inclusive_nanos;
                        start
                    }
                };
                let index = table.index(profile.nodes[line.node].function);
                events.push(Event {
                    kind: "O",
                    frame: index,
                    at: start,
                });
                open.push((line.depth, index, start + line.inclusive_nanos, start));
            }
            while let Some((_, index, closes, _)) = open.pop() {
                events.push(Event {
                    kind: "C",
                    frame: index,
                    at: closes,
                });
            }
            // The callback closes after its calls, even where rounding made
            // them a little longer than it.
            let end = frame.duration_nanos.max(next_root);
            events.push(Event {
                kind: "C",
                frame: callback,
                at: end,
            });
            monotonic(&mut events);
            Evented {
                kind: "evented",
                name: format!(
                    "frame {} ({}), one of the slowest: its own calls",
                    frame.index,
                    super::units::human_duration(frame.duration_nanos)
                ),
                unit: "nanoseconds",
                start_value: 0.0,
                end_value: end,
                events,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ProfileBuilder, appendix_b};

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
        for profile in [appendix_b(true), crate::fixtures::recursion(false)] {
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

    #[test]
    fn a_threaded_program_has_a_profile_per_thread_after_the_merged_one() {
        let file = speedscope(&crate::fixtures::two_workers());
        let profiles = file["profiles"].as_array().unwrap();
        let names: Vec<&str> = profiles
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert!(names[0].starts_with("threads (call paths"), "{names:?}");
        assert!(
            names[2].starts_with("threads, thread worker-0 ("),
            "{names:?}"
        );
        let lengths: Vec<f64> = profiles
            .iter()
            .map(|p| p["endValue"].as_f64().unwrap())
            .collect();
        assert_eq!(lengths, [8_000.0, 0.0, 3_000.0, 5_000.0]);
    }

    #[test]
    fn each_slow_frame_is_a_profile_of_its_own_calls() {
        use crate::profile::{Frame as PageFrame, FrameCalls, Frames};
        let mut profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "frame"], 3, 9.0)
            .path(&["main", "frame", "row"], 120, 6.0)
            .path(&["main", "frame", "paint"], 3, 2.0)
            .build();
        let node = |path: &[&str]| crate::fixtures::node_at(&profile, path);
        let calls = |path: &[&str], calls: u64, nanos: f64| FrameCalls {
            node: node(path),
            calls,
            inclusive_nanos: nanos,
        };
        let slow = PageFrame {
            index: 7,
            start_nanos: 100e6,
            duration_nanos: 5e6,
            calls: vec![
                calls(&["main", "frame"], 1, 4e6),
                calls(&["main", "frame", "row"], 40, 2e6),
                calls(&["main", "frame", "paint"], 1, 1e6),
            ],
        };
        let slower = PageFrame {
            index: 2,
            duration_nanos: 8e6,
            ..slow.clone()
        };
        profile.frames = Some(Frames {
            count: 10,
            span_nanos: 160e6,
            median_nanos: 1e6,
            p95_nanos: 5e6,
            p99_nanos: 8e6,
            worst_nanos: 8e6,
            worst: vec![slow, slower],
        });
        let file = speedscope(&profile);
        let profiles = file["profiles"].as_array().unwrap();
        assert_eq!(profiles.len(), 3, "the whole run, then each slow frame");
        assert!(
            profiles[1]["name"]
                .as_str()
                .unwrap()
                .starts_with("frame 2 (8.00 ms)"),
            "slowest first: {}",
            profiles[1]["name"]
        );
        let names: Vec<&str> = file["shared"]["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        let shape: Vec<(&str, &str, f64)> = profiles[2]["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap(),
                    names[e["frame"].as_u64().unwrap() as usize],
                    e["at"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("O", FRAME_CALLBACK, 0.0),
                ("O", "frame", 0.0),
                ("O", "row", 0.0),
                ("C", "row", 2e6),
                ("O", "paint", 2e6),
                ("C", "paint", 3e6),
                ("C", "frame", 4e6),
                ("C", FRAME_CALLBACK, 5e6),
            ]
        );
        assert_eq!(profiles[2]["endValue"], 5e6);
    }
}
