//! A Chrome DevTools `.cpuprofile` of any profile, for DevTools'
//! Performance panel ("Load profile") and every tool that reads Node's
//! `--cpu-prof` output.
//!
//! The format is a sampler's: a tree of call frames and a list of samples
//! in time order. An instrumented profile has no samples, so they are made
//! from the tree: each call path gets as many samples, one interval apart,
//! as its self time holds intervals, in depth-first order, the remainders
//! carried per function so that each function's total stays within one
//! interval of its measured time. The tree and its paths are the real
//! ones; the order of the samples in time is not: siblings come in the
//! order of their first call, and the file says so in its `$wasmprof`
//! field, which DevTools ignores.
//!
//! DevTools shows nothing of a profile that starts at time 0 (an empty
//! track, "Range: - - -"), so the samples start one second in, as if the
//! engine's clock had run that long.
//!
//! DevTools also turns the file's microseconds into milliseconds and back
//! in floating point, and nests one call in another when the first ends a
//! rounding error after the second starts: with whole-microsecond samples,
//! its Bottom-up once put `f_main_2` under the `add` that `f_main_1` called
//! last, and charged 50 ms of `add` to `main`. So every time in the file
//! is a whole number of 1/1024 ms (the interval is a power of two of a
//! millisecond), which both units hold exactly.

use std::collections::HashMap;
use std::io::Write;

use crate::error::Error;
use serde::Serialize;

use super::stacks::{Stacks, Unit};
use crate::profile::Profile;

/// About this many samples are made, whatever the run's length.
const SAMPLES: f64 = 200_000.0;

/// Where the samples start on the engine's clock, in microseconds: not 0,
/// which DevTools' Performance panel takes for no time at all.
const START_MICROS: f64 = 1_000_000.0;

/// The finest interval: 1/1024 ms, just under a microsecond.
const FINEST_INTERVAL_EXPONENT: i32 = -10;

/// The sample interval in microseconds: the smallest power of two of a
/// millisecond that makes at most about `SAMPLES` samples, so that every
/// sample's time is exact in milliseconds and in microseconds.
fn sample_interval_micros(total_micros: f64) -> f64 {
    let per_sample_millis = total_micros / 1_000.0 / SAMPLES;
    let exponent = if per_sample_millis > 0.0 {
        (per_sample_millis.log2().ceil() as i32).max(FINEST_INTERVAL_EXPONENT)
    } else {
        FINEST_INTERVAL_EXPONENT
    };
    1_000.0 * 2f64.powi(exponent)
}

pub(crate) fn write_cpuprofile(profile: &Profile, out: &mut dyn Write) -> crate::Result<()> {
    let file = CpuProfile::from_profile(profile)?;
    let mut buffered = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut buffered, &file).map_err(Error::output(".cpuprofile"))?;
    buffered
        .write_all(b"\n")
        .and_then(|()| buffered.flush())
        .map_err(Error::output(".cpuprofile"))
}

/// The file as JSON, for the tests.
#[cfg(test)]
fn cpuprofile(profile: &Profile) -> crate::Result<serde_json::Value> {
    Ok(serde_json::to_value(CpuProfile::from_profile(profile)?).unwrap())
}

/// The file, typed, so that a million nodes are written straight.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CpuProfile<'a> {
    nodes: Vec<CpuNode<'a>>,
    start_time: f64,
    end_time: f64,
    samples: Vec<usize>,
    time_deltas: Vec<f64>,
    #[serde(rename = "$wasmprof")]
    wasmprof: Origin,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CpuNode<'a> {
    id: usize,
    call_frame: CallFrame<'a>,
    hit_count: usize,
    children: Vec<usize>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallFrame<'a> {
    function_name: &'a str,
    script_id: &'static str,
    url: &'a str,
    line_number: i64,
    column_number: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Origin {
    source: &'static str,
    synthesized_samples: bool,
    sample_interval_micros: f64,
    note: &'static str,
}

impl<'a> CpuProfile<'a> {
    fn from_profile(profile: &'a Profile) -> crate::Result<CpuProfile<'a>> {
        let stacks = Stacks::build(profile).in_first_call_order();
        if stacks.unit == Unit::Calls {
            return Err(Error::NoTimes {
                needs: "a .cpuprofile",
            });
        }
        let interval = sample_interval_micros(stacks.total() / 1_000.0);
        let mut nodes = Vec::with_capacity(stacks.frames.len());
        let mut samples: Vec<usize> = Vec::new();
        let mut carried: HashMap<Option<usize>, f64> = HashMap::new();
        for node in stacks.depth_first() {
            let frame = &stacks.frames[node];
            let function = frame.function.and_then(|f| profile.functions.get(f));
            let (name, url, line, column) = match (node, function) {
                (0, _) => ("(root)", "", -1, -1),
                (_, Some(f)) => (
                    f.name.as_str(),
                    f.file.as_str(),
                    i64::from(f.line) - 1,
                    f.column.map_or(-1, |c| i64::from(c) - 1),
                ),
                (_, None) => (super::callgraph::OVERFLOW_NAME, "", -1, -1),
            };
            let share = carried.entry(frame.function).or_insert(0.0);
            *share += frame.self_weight / 1_000.0 / interval;
            let hits = share.floor();
            *share -= hits;
            let hits = hits as usize;
            samples.extend(std::iter::repeat_n(node + 1, hits));
            nodes.push(CpuNode {
                id: node + 1,
                call_frame: CallFrame {
                    function_name: name,
                    script_id: "0",
                    url,
                    line_number: line,
                    column_number: column,
                },
                hit_count: hits,
                children: frame.children.iter().map(|c| c + 1).collect(),
            });
        }
        // The first sample at the start, each one standing for the interval
        // after it, the last one's ending at `endTime`: DevTools' reading.
        let mut time_deltas = vec![interval; samples.len()];
        if let Some(first) = time_deltas.first_mut() {
            *first = 0.0;
        }
        Ok(CpuProfile {
            nodes,
            start_time: START_MICROS,
            end_time: START_MICROS + samples.len() as f64 * interval,
            samples,
            time_deltas,
            wasmprof: Origin {
                source: match profile.timer.mode {
                    crate::profile::TimerMode::Host => "instrumented",
                    crate::profile::TimerMode::Hybrid => "hybrid",
                    _ => "sampled",
                },
                synthesized_samples: true,
                sample_interval_micros: interval,
                note: "samples made from wasmprof's calling-context tree: each call path has as \
                       many samples as its self time holds intervals; the paths and totals are \
                       real, the order of the samples in time is not a timeline: siblings \
                       come in the order of their first call",
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{appendix_b, recursion};

    #[test]
    fn devtools_gets_a_start_after_zero_and_calls_in_first_call_order() {
        let file = cpuprofile(&appendix_b(true)).unwrap();
        let start = file["startTime"].as_f64().unwrap();
        assert!(start > 0.0, "DevTools shows nothing of a profile at 0");
        let deltas = file["timeDeltas"].as_array().unwrap();
        let interval = file["$wasmprof"]["sampleIntervalMicros"].as_f64().unwrap();
        let sum: f64 = deltas.iter().map(|d| d.as_f64().unwrap()).sum();
        assert_eq!(deltas[0], 0.0, "the first sample is at the start");
        assert_eq!(file["endTime"].as_f64().unwrap(), start + sum + interval);
        // appendix B's `main` calls `f_main_1` first; `f_half` sorts first.
        let names: Vec<&str> = (file["nodes"].as_array().unwrap().iter())
            .map(|n| n["callFrame"]["functionName"].as_str().unwrap())
            .collect();
        assert_eq!(names[..3], ["(root)", "main", "f_main_1"]);
    }

    #[test]
    fn every_time_is_exact_in_milliseconds_and_in_microseconds() {
        for total_micros in [0.0, 0.5, 311_072.0, 4.0e9] {
            let interval = sample_interval_micros(total_micros);
            let millis = interval / 1_000.0;
            assert_eq!(millis, 2f64.powi(millis.log2() as i32), "{interval}");
            assert!(total_micros / interval <= 2.0 * SAMPLES + 1.0);
        }
        // Any sample's time survives DevTools' trip through milliseconds.
        let file = cpuprofile(&appendix_b(true)).unwrap();
        let mut at = file["startTime"].as_f64().unwrap();
        for delta in file["timeDeltas"].as_array().unwrap() {
            at += delta.as_f64().unwrap();
            assert_eq!((at / 1_000.0) * 1_000.0, at);
            assert_eq!((at / 1_000.0).fract() * 1024.0 % 1.0, 0.0);
        }
    }

    #[test]
    fn a_count_only_profile_is_refused_with_what_to_use() {
        let err = cpuprofile(&recursion(false)).unwrap_err().to_string();
        assert!(err.contains("a .cpuprofile needs times"), "{err}");
    }

    #[test]
    fn wasmprof_s_own_reader_gets_the_same_totals_back() {
        let profile = appendix_b(true);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("appendix_b.cpuprofile");
        let mut file = std::fs::File::create(&path).unwrap();
        write_cpuprofile(&profile, &mut file).unwrap();
        drop(file);
        let read = crate::input::read(&path, &Default::default()).unwrap();
        assert_eq!(read.kind, crate::input::InputKind::CpuProfile);
        let totals = |p: &Profile| -> HashMap<String, (f64, f64)> {
            let graph = crate::report::CallGraph::build(p);
            graph
                .functions
                .iter()
                .filter(|f| f.total_nanos > 0.0)
                // The reader adds where a frame is to its name.
                .map(|f| {
                    let name = f.name.split(" (").next().unwrap().to_owned();
                    (name, (f.self_nanos, f.total_nanos))
                })
                .collect()
        };
        let expected = totals(&profile);
        let found = totals(&read.profile);
        let all: f64 = expected.values().map(|(s, _)| s).sum();
        for (name, (self_nanos, total_nanos)) in &expected {
            let (got_self, got_total) = found[name];
            if *self_nanos > all / 1000.0 {
                assert!(
                    (got_self - self_nanos).abs() <= self_nanos * 0.01,
                    "{name} self: {got_self} vs {self_nanos}"
                );
            }
            assert!(
                (got_total - total_nanos).abs() <= total_nanos * 0.01,
                "{name} total: {got_total} vs {total_nanos}"
            );
        }
    }

    #[test]
    fn samples_add_up_to_each_function_s_self_time() {
        let profile = appendix_b(true);
        let file = cpuprofile(&profile).unwrap();
        let interval = file["$wasmprof"]["sampleIntervalMicros"].as_f64().unwrap();
        let stacks = Stacks::build(&profile);
        let mut expected: HashMap<String, f64> = HashMap::new();
        for frame in &stacks.frames[1..] {
            *expected.entry(frame.name.clone()).or_default() += frame.self_weight / 1e3;
        }
        let mut found: HashMap<String, f64> = HashMap::new();
        for node in file["nodes"].as_array().unwrap() {
            let name = node["callFrame"]["functionName"]
                .as_str()
                .unwrap()
                .to_owned();
            *found.entry(name).or_default() += node["hitCount"].as_f64().unwrap() * interval;
        }
        for (name, micros) in expected {
            let got = found.get(&name).copied().unwrap_or(0.0);
            assert!(
                (got - micros).abs() <= interval,
                "{name}: {got} vs {micros}"
            );
        }
        let samples = file["samples"].as_array().unwrap().len();
        assert_eq!(samples, file["timeDeltas"].as_array().unwrap().len());
    }
}
