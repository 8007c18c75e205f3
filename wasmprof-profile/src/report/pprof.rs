//! `--format pprof`: the gzipped protobuf that `go tool pprof`, Speedscope,
//! Pyroscope and friends read.
//!
//! pprof thinks in samples over stacks; the calling-context tree maps onto
//! that without loss: one sample per tree node that was called, its stack
//! the node's path (leaf first, as pprof wants), its values the node's call
//! count and **self** time. pprof's "cum" of a function, the sum over every
//! sample whose stack contains it, is then exactly our outermost-activation
//! total, and "flat" exactly our self time.
//!
//! Sample types are `calls/count` and `time/nanoseconds`, time being the
//! default. Without a timer (`--timer none`) only `calls/count` is written:
//! a column of zeros would only mislead.
//!
//! One location per function (we know functions, not call sites); ids are
//! the function's index + 1, as pprof reserves 0. The string table is in
//! first-use order, so the same profile always gives the same bytes.
//!
//! A profile with async functions has two more sample types: `polls/count`,
//! the polls of the futures created on that path, and (timed)
//! `latency/nanoseconds`, the summed latency of the completed ones, first
//! poll to completion, wall time; 0 for the other samples. Neither is
//! added to `time`, which for an async function is CPU time in its polls.
//!
//! Stacks deeper than [`MAX_FRAMES_EACH_SIDE`] × 2 + 1 frames (deep
//! recursion) keep their outermost and innermost frames around one
//! `(elided frames)` frame: a 100,000-deep recursion would otherwise write
//! billions of frame ids. Self times stay exact; a function that appears only
//! in the elided middle of such a stack loses that sample from its cum.

pub mod proto;

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;

use crate::error::Error;
use flate2::Compression;
use flate2::write::GzEncoder;
use prost::Message;

use super::callgraph::OVERFLOW_NAME;
use super::node_times::NodeTimes;
use super::preamble;
use super::words::{CALLERS_NOT_TRACKED, OUTSIDE};
use crate::profile::{FunctionTier, PathMemory, Profile};

/// Frames kept at each end of a stack that is too deep.
pub const MAX_FRAMES_EACH_SIDE: usize = 128;
/// The function standing for the frames left out of a deep stack.
pub const ELIDED_NAME: &str = "<elided frames>";

/// A pseudo-frame's name as the pprof file carries it. `go tool pprof`
/// takes `<…>` for C++ template arguments and drops it, which left
/// `<overflow>` and the like with no name at all (shown as the module's):
/// in the file their angle brackets are parentheses.
pub(crate) fn frame_name(name: &str) -> std::borrow::Cow<'_, str> {
    match name.strip_prefix('<').and_then(|n| n.strip_suffix('>')) {
        Some(inner) => format!("({inner})").into(),
        None => name.into(),
    }
}

/// Writes `profile` to `out` as a gzipped pprof protobuf.
///
/// Samples are encoded and compressed one at a time, so memory stays
/// proportional to the number of functions, not of tree nodes.
pub fn write_pprof(profile: &Profile, out: &mut dyn Write) -> crate::Result<()> {
    super::ensure_valid(profile)?;
    let what = "pprof profile";
    let mut gzip = GzEncoder::new(out, Compression::default());
    let tables = Tables::new(profile);
    let mut buffer = tables.header.encode_to_vec();
    gzip.write_all(&buffer).map_err(Error::output(what))?;
    for_each_sample(profile, &tables, |sample| {
        buffer.clear();
        prost::encoding::message::encode(SAMPLE_FIELD, &sample, &mut buffer);
        gzip.write_all(&buffer).map_err(Error::output(what))
    })?;
    gzip.finish().map_err(Error::output(what))?;
    Ok(())
}

/// The whole profile as one message, samples included; `profile` must be
/// valid.
pub fn to_message(profile: &Profile) -> proto::Profile {
    let tables = Tables::new(profile);
    let mut message = tables.header.clone();
    let collected = for_each_sample(profile, &tables, |sample| {
        message.sample.push(sample);
        Ok::<(), Infallible>(())
    });
    match collected {
        Ok(()) => message,
        Err(never) => match never {},
    }
}

/// `Profile.sample`'s field number.
const SAMPLE_FIELD: u32 = 2;

/// Everything but the samples, and what samples refer to.
struct Tables {
    /// The profile message without samples.
    header: proto::Profile,
    /// Location id of every node's function (meaningless for the root).
    location_of_node: Vec<u64>,
    /// Location id of the `<elided frames>` function.
    elided_location: u64,
    timed: bool,
    /// Calls were counted; otherwise the first value is the node's samples.
    counted: bool,
    /// Each count-only function's location and calls.
    count_only: Vec<(u64, u64)>,
    /// The location of the `<callers not tracked>` frame above them.
    not_tracked_location: u64,
    /// Their `tier: counted` label.
    counted_label: Option<proto::Label>,
    /// Per node, the polls and the total latency (ns) of its futures, when
    /// the profile has async functions: two more sample types, `polls` and
    /// `latency` (the latter only when timed).
    futures: Option<Vec<(u64, f64)>>,
    /// Per node, its memory figures, when the profile has them: Go's four
    /// heap sample types.
    memory: Option<Vec<PathMemory>>,
    /// The frame of allocations outside any instrumented call.
    outside_location: u64,
    /// A threaded program's threads: each node's calls and time are split
    /// into one sample per thread, labelled with its name, so that
    /// `-tagfocus thread=…` shows one and `-tags` lists them.
    threads: Vec<ThreadSamples>,
}

/// One thread's share of every node.
struct ThreadSamples {
    label: proto::Label,
    calls: Vec<u64>,
    self_nanos: Vec<f64>,
}

impl ThreadSamples {
    fn of_profile(profile: &Profile, strings: &mut StringTable) -> Vec<ThreadSamples> {
        let key = strings.intern("thread");
        (0..profile.threads.len())
            .map(|index| {
                let view = profile.thread_view(index);
                ThreadSamples {
                    label: proto::Label {
                        key,
                        str: strings.intern(&profile.threads[index].name),
                        ..Default::default()
                    },
                    calls: view.nodes.iter().map(|n| n.calls).collect(),
                    self_nanos: NodeTimes::compute(&view).self_nanos,
                }
            })
            .collect()
    }
}

impl Tables {
    /// The polls (and latency) of `node`'s futures, when the profile has
    /// those sample types; 0 for a node that is no async call.
    fn push_future_values(&self, value: &mut Vec<i64>, node: Option<usize>) {
        let Some(futures) = &self.futures else {
            return;
        };
        let (polls, latency) = node.map_or((0, 0.0), |n| futures[n]);
        value.push(saturating_i64(polls));
        if self.timed {
            value.push(latency.round() as i64);
        }
    }

    /// Allocations and what is in use of `node`, when the profile has
    /// those sample types; 0 for a count-only function's sample.
    fn push_memory_values(&self, value: &mut Vec<i64>, node: Option<usize>) {
        let Some(memory) = &self.memory else {
            return;
        };
        let m = node.map_or_else(PathMemory::default, |n| memory[n]);
        for figure in [m.allocs, m.alloc_bytes, m.live_blocks, m.live_bytes] {
            value.push(saturating_i64(figure));
        }
    }

    /// A sample's values: its calls, its time when the profile is timed,
    /// the polls (and latency) of `futures_of`'s futures and the memory
    /// figures of `memory_of`, when the profile has those types (0 for
    /// `None`).
    fn values(
        &self,
        calls: u64,
        nanos: f64,
        futures_of: Option<usize>,
        memory_of: Option<usize>,
    ) -> Vec<i64> {
        let mut value = vec![saturating_i64(calls)];
        if self.timed {
            value.push(nanos.round() as i64);
        }
        self.push_future_values(&mut value, futures_of);
        self.push_memory_values(&mut value, memory_of);
        value
    }

    /// Whether `node` allocated anything (a sample is due even without
    /// calls or time).
    fn allocated(&self, node: usize) -> bool {
        self.memory
            .as_ref()
            .is_some_and(|memory| memory[node].allocs > 0)
    }

    fn new(profile: &Profile) -> Tables {
        let timed = profile.timer.mode.timed();
        let mut strings = StringTable::default();
        let Values {
            sample_type,
            period_type,
            default_sample_type,
            futures,
            memory,
        } = values(profile, &mut strings);
        let mapping = proto::Mapping {
            id: 1,
            filename: strings.intern(&profile.run.module),
            build_id: strings.intern(&profile.run.module_sha256),
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            ..Default::default()
        };

        let FunctionTable {
            function,
            overflow_id,
            elided_id,
            not_tracked_id,
            outside_id,
            counted,
        } = function_table(profile, &mut strings);
        let location = function
            .iter()
            .map(|f| proto::Location {
                id: f.id,
                mapping_id: mapping.id,
                line: vec![proto::Line {
                    function_id: f.id,
                    line: f.start_line,
                    column: 0,
                }],
                ..Default::default()
            })
            .collect();

        let location_of_node = profile
            .nodes
            .iter()
            .map(|n| n.function.map_or(overflow_id, |f| f as u64 + 1))
            .collect();
        // Counted functions have no node: one sample each, under a frame
        // that says so, labelled with their tier.
        let counted_label = (!counted.is_empty()).then(|| proto::Label {
            key: strings.intern("tier"),
            str: strings.intern("counted"),
            ..Default::default()
        });
        let threads = ThreadSamples::of_profile(profile, &mut strings);
        let mut comment = vec![strings.intern(&preamble::run_line(profile))];
        for note in preamble::notes(profile) {
            comment.push(strings.intern(&note));
        }
        let header = proto::Profile {
            sample_type,
            mapping: vec![mapping],
            location,
            function,
            time_nanos: saturating_i64(profile.created_unix_nanos),
            duration_nanos: saturating_i64(profile.run.wall_nanos),
            period_type: Some(period_type),
            period: 1,
            comment,
            default_sample_type,
            string_table: strings.strings,
            ..Default::default()
        };
        Tables {
            header,
            location_of_node,
            elided_location: elided_id,
            timed,
            counted: profile.timer.mode.counted(),
            count_only: counted,
            not_tracked_location: not_tracked_id,
            counted_label,
            futures,
            memory,
            outside_location: outside_id,
            threads,
        }
    }
}

/// What each sample holds: calls (or samples), the time when timed, and
/// the futures' polls and latency; which of them is the period and the
/// default.
struct Values {
    sample_type: Vec<proto::ValueType>,
    period_type: proto::ValueType,
    default_sample_type: i64,
    /// Per node, its futures' polls and total latency (ns).
    futures: Option<Vec<(u64, f64)>>,
    /// Per node, its memory figures.
    memory: Option<Vec<PathMemory>>,
}

fn values(profile: &Profile, strings: &mut StringTable) -> Values {
    let timed = profile.timer.mode.timed();
    // A sampling profile counts samples, not calls.
    let calls = if profile.timer.mode.counted() {
        value_type(strings, "calls", "count")
    } else {
        value_type(strings, "samples", "count")
    };
    let time = value_type(strings, "time", "nanoseconds");
    let (mut sample_type, period_type, default_sample_type) = if timed {
        (vec![calls, time.clone()], time.clone(), time.r#type)
    } else {
        (vec![calls.clone()], calls.clone(), calls.r#type)
    };
    let futures = (!profile.futures.is_empty()).then(|| {
        sample_type.push(value_type(strings, "polls", "count"));
        if timed {
            sample_type.push(value_type(strings, "latency", "nanoseconds"));
        }
        let mut per_node = vec![(0, 0.0); profile.nodes.len()];
        for future in &profile.futures {
            let latency = future.latency.as_ref().map_or(0.0, |l| l.total_nanos);
            per_node[future.node] = (future.polls, latency);
        }
        per_node
    });
    // Go's heap profile's types, so that `-sample_index=inuse_space` and
    // profiling servers read these as a heap profile.
    let memory = profile.memory.as_ref().map(|memory| {
        for (kind, unit) in [
            ("alloc_objects", "count"),
            ("alloc_space", "bytes"),
            ("inuse_objects", "count"),
            ("inuse_space", "bytes"),
        ] {
            sample_type.push(value_type(strings, kind, unit));
        }
        memory.by_node(profile.nodes.len())
    });
    Values {
        sample_type,
        period_type,
        default_sample_type,
        futures,
        memory,
    }
}

/// The profile's functions, then the pseudo-functions it needs, with
/// their ids.
struct FunctionTable {
    function: Vec<proto::Function>,
    /// `<overflow>`: calls past the tree's capacity.
    overflow_id: u64,
    /// `<elided frames>`: the middle of a stack too deep to keep whole.
    elided_id: u64,
    /// `<callers not tracked>`: above each count-only function.
    not_tracked_id: u64,
    /// `(outside instrumented code)`: allocations made there.
    outside_id: u64,
    /// Each count-only function's id and calls.
    counted: Vec<(u64, u64)>,
}

fn function_table(profile: &Profile, strings: &mut StringTable) -> FunctionTable {
    let mut function = Vec::with_capacity(profile.functions.len() + 2);
    for f in &profile.functions {
        let name = strings.intern(&f.name);
        function.push(proto::Function {
            id: function.len() as u64 + 1,
            name,
            system_name: name,
            filename: strings.intern(&f.file),
            start_line: i64::from(f.line),
        });
    }
    let has_overflow = profile.nodes.iter().skip(1).any(|n| n.function.is_none());
    let is_elided = max_depth(profile) > 2 * MAX_FRAMES_EACH_SIDE + 1;
    let counted: Vec<(u64, u64)> = profile
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.tier == Some(FunctionTier::Counted))
        .filter_map(|(i, f)| Some((i as u64 + 1, f.calls.filter(|&c| c > 0)?)))
        .collect();
    let overflow_id = function.len() as u64 + 1;
    let elided_id = overflow_id + u64::from(has_overflow);
    let not_tracked_id = elided_id + u64::from(is_elided);
    let outside_id = not_tracked_id + u64::from(!counted.is_empty());
    let allocated_outside = profile.memory.as_ref().is_some_and(|m| {
        m.paths
            .iter()
            .any(|p| p.node == Profile::ROOT && p.allocs > 0)
    });
    let pseudo_functions = [
        (has_overflow, OVERFLOW_NAME),
        (is_elided, ELIDED_NAME),
        (!counted.is_empty(), CALLERS_NOT_TRACKED),
        (allocated_outside, OUTSIDE),
    ];
    for (_, pseudo) in pseudo_functions.iter().filter(|(used, _)| *used) {
        let name = strings.intern(&frame_name(pseudo));
        function.push(proto::Function {
            id: function.len() as u64 + 1,
            name,
            system_name: name,
            ..Default::default()
        });
    }
    FunctionTable {
        function,
        overflow_id,
        elided_id,
        not_tracked_id,
        outside_id,
        counted,
    }
}

/// Frames on the deepest path of the tree.
fn max_depth(profile: &Profile) -> usize {
    let mut depth = vec![0; profile.nodes.len()];
    for (index, node) in profile.nodes.iter().enumerate().skip(1) {
        depth[index] = node.parent.map_or(0, |p| depth[p]) + 1;
    }
    depth.into_iter().max().unwrap_or(0)
}

fn value_type(strings: &mut StringTable, kind: &str, unit: &str) -> proto::ValueType {
    proto::ValueType {
        r#type: strings.intern(kind),
        unit: strings.intern(unit),
    }
}

fn saturating_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Calls `emit` with the sample of every called node, in depth-first order.
/// The walk keeps the current path on a stack of its own, so each sample
/// costs its (bounded) stack, not its depth, and no recursion is needed.
fn for_each_sample<E>(
    profile: &Profile,
    tables: &Tables,
    mut emit: impl FnMut(proto::Sample) -> Result<(), E>,
) -> Result<(), E> {
    let times = NodeTimes::compute(profile);
    let children = profile.children();
    let mut path: Vec<u64> = Vec::new();
    let mut work: Vec<(usize, usize)> = vec![(Profile::ROOT, 0)];
    while let Some(frame) = work.last_mut() {
        let (node, position) = *frame;
        let Some(&child) = children[node].get(position) else {
            work.pop();
            path.pop();
            continue;
        };
        frame.1 += 1;
        path.push(tables.location_of_node[child]);
        work.push((child, 0));
        let calls = if tables.counted {
            profile.nodes[child].calls
        } else {
            profile.nodes[child].samples
        };
        // A counted function's path has time and no calls of its own.
        if calls == 0
            && !(tables.timed && times.self_nanos[child] > 0.0)
            && !tables.allocated(child)
        {
            continue;
        }
        let location_id = leaf_first(&path, tables.elided_location);
        if tables.threads.is_empty() {
            emit(proto::Sample {
                location_id,
                value: tables.values(calls, times.self_nanos[child], Some(child), Some(child)),
                label: Vec::new(),
            })?;
            continue;
        }
        for thread in &tables.threads {
            let (calls, time) = (thread.calls[child], thread.self_nanos[child]);
            if calls == 0 && !(tables.timed && time > 0.0) {
                continue;
            }
            emit(proto::Sample {
                location_id: location_id.clone(),
                value: tables.values(calls, time, None, None),
                label: vec![thread.label.clone()],
            })?;
        }
        // Polls and memory are the path's, not a thread's: one sample of
        // their own, without calls or time.
        let polled = tables
            .futures
            .as_ref()
            .is_some_and(|futures| futures[child].0 > 0);
        if polled || tables.allocated(child) {
            emit(proto::Sample {
                location_id,
                value: tables.values(0, 0.0, Some(child), Some(child)),
                label: Vec::new(),
            })?;
        }
    }
    for &(location, calls) in &tables.count_only {
        emit(proto::Sample {
            location_id: vec![location, tables.not_tracked_location],
            value: tables.values(calls, 0.0, None, None),
            label: tables.counted_label.iter().cloned().collect(),
        })?;
    }
    if tables.allocated(Profile::ROOT) {
        emit(proto::Sample {
            location_id: vec![tables.outside_location],
            value: tables.values(0, 0.0, None, Some(Profile::ROOT)),
            label: Vec::new(),
        })?;
    }
    Ok(())
}

/// `path` (outermost first) reversed, with the middle of a too deep stack
/// replaced by one `elided` frame.
fn leaf_first(path: &[u64], elided: u64) -> Vec<u64> {
    if path.len() <= 2 * MAX_FRAMES_EACH_SIDE + 1 {
        return path.iter().rev().copied().collect();
    }
    let inner = &path[path.len() - MAX_FRAMES_EACH_SIDE..];
    let outer = &path[..MAX_FRAMES_EACH_SIDE];
    inner
        .iter()
        .rev()
        .copied()
        .chain(std::iter::once(elided))
        .chain(outer.iter().rev().copied())
        .collect()
}

/// pprof's string table: `""` first, then every string once, in order of
/// first use.
struct StringTable {
    strings: Vec<String>,
    index: HashMap<String, i64>,
}

impl Default for StringTable {
    fn default() -> Self {
        StringTable {
            strings: vec![String::new()],
            index: HashMap::from([(String::new(), 0)]),
        }
    }
}

impl StringTable {
    fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

#[cfg(test)]
mod tests;
