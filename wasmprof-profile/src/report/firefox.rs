//! `--format firefox`: the Firefox Profiler's processed format, written
//! with samply's `fxprof-processed-profile` (as wasmtime's guest profiler
//! writes it), which profiler.firefox.com opens.
//!
//! The viewer has samples, weights and markers, and no field for a call
//! count, so each thread of the profile is written as tracks whose sample
//! weights are the figures:
//!
//! - **time**: one sample per call path, weighted by its self time in
//!   microseconds (measured by the clock or estimated from samples), laid
//!   out end to end as speedscope's file is: the stack chart shows the
//!   calling-context tree exactly, each path where its previous sibling
//!   ended, and the call tree's totals are the paths' inclusive times.
//!   Not a timeline: the track's name says so.
//! - **calls**: one sample per call path, weighted by its exact calls: the
//!   call tree's *self* column is each path's calls (its *total* adds its
//!   callees' calls, which is no count of anything).
//! - **samples**, for an engine's sampling profile, or the engine's
//!   samples saved beside an instrumented run: its samples where they fell
//!   in time, a real timeline.
//!
//! - **memory**, for a run with `--memory`: each call path's bytes
//!   allocated, and still live at the end, as one allocation each, which
//!   the viewer's "native allocations" call tree sums (exact figures, laid
//!   out, not in time).
//!
//! Each frame's category says what its time is: measured, partly timed,
//! sampled, or not measured (counted only). Interval markers carry what
//! has a span: the slowest animation frames and an HTTP handler's requests
//! where they ran, on tracks of their own, and a test run's tests over
//! their paths on the time track.

use std::io::Write;
use std::time::Duration;

use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CpuDelta, Frame as FxFrame, FrameFlags, FrameInfo,
    Profile as FxProfile, ReferenceTimestamp, SamplingInterval, ThreadHandle, Timestamp,
};

use super::stacks::{Stacks, Unit};
use super::time_kind::TimeKind;
use crate::error::Error;
use crate::profile::{MemoryProfile, PathMemory, Profile};
use crate::sampled::Span;

pub(crate) fn write_firefox(
    profile: &Profile,
    timeline: &[Span],
    run_samples: Option<(&Profile, &[Span])>,
    out: &mut dyn Write,
) -> crate::Result<()> {
    let written = to_firefox(profile, timeline, run_samples);
    let mut buffered = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut buffered, &written).map_err(Error::output("Firefox profile"))?;
    buffered
        .write_all(b"\n")
        .and_then(|()| buffered.flush())
        .map_err(Error::output("Firefox profile"))
}

/// What each frame's time is, as a category of the viewer's.
pub(super) struct Categories {
    pub(super) measured: CategoryHandle,
    partly: CategoryHandle,
    sampled: CategoryHandle,
    not_measured: CategoryHandle,
    pub(super) frames: CategoryHandle,
}

impl Categories {
    fn add(fx: &mut FxProfile) -> Categories {
        Categories {
            measured: fx.add_category("Measured", CategoryColor::Green),
            partly: fx.add_category("Partly timed", CategoryColor::Yellow),
            sampled: fx.add_category("Sampled", CategoryColor::Blue),
            not_measured: fx.add_category("Counted, not timed", CategoryColor::Gray),
            frames: fx.add_category("Animation frame", CategoryColor::Purple),
        }
    }

    pub(super) fn of(&self, time: TimeKind) -> CategoryHandle {
        match time {
            TimeKind::Measured => self.measured,
            TimeKind::PartlyTimed => self.partly,
            TimeKind::Sampled => self.sampled,
            TimeKind::NotMeasured => self.not_measured,
        }
    }
}

/// The whole profile, in the viewer's terms; `run_samples`, the engine's
/// samples of an instrumented run, as a track in time beside it.
fn to_firefox(
    profile: &Profile,
    timeline: &[Span],
    run_samples: Option<(&Profile, &[Span])>,
) -> FxProfile {
    let name = profile
        .run
        .package
        .clone()
        .unwrap_or_else(|| "wasmprof profile".to_owned());
    let started = Duration::from_nanos(profile.created_unix_nanos);
    let interval = profile
        .timer
        .sample_interval_nanos
        .filter(|i| *i >= 1.0)
        .map_or(SamplingInterval::from_millis(1), |i| {
            SamplingInterval::from_nanos(i as u64)
        });
    let mut fx = FxProfile::new(
        &format!("{name} (wasmprof)"),
        ReferenceTimestamp::from_duration_since_unix_epoch(started),
        interval,
    );
    let categories = Categories::add(&mut fx);
    let process = fx.add_process(&format!("{name} ({})", profile.run.host), 1, at(0.0));
    let mut tid = 0;
    // No track is the process's main thread, whose name the viewer would
    // take from the process: each says what its weights are.
    let mut add_thread = |fx: &mut FxProfile, title: &str| {
        tid += 1;
        let thread = fx.add_thread(process, tid, at(0.0), false);
        fx.set_thread_name(thread, title);
        thread
    };
    let views: Vec<(String, Profile)> = if profile.threads.is_empty() {
        vec![("main".to_owned(), profile.clone())]
    } else {
        (0..profile.threads.len())
            .map(|i| (profile.threads[i].name.clone(), profile.thread_view(i)))
            .collect()
    };
    let sampled = !timeline.is_empty();
    for (thread_name, view) in &views {
        let stacks = Stacks::build(view).in_first_call_order();
        if sampled {
            let thread = add_thread(&mut fx, &format!("{thread_name}: samples"));
            samples_in_time(&mut fx, thread, &stacks, timeline, &categories);
        }
        if stacks.unit == Unit::Nanoseconds {
            let title = if sampled {
                format!("{thread_name}: sampled time (µs) by call path, not a timeline")
            } else {
                format!("{thread_name}: time (µs) by call path, not a timeline")
            };
            let thread = add_thread(&mut fx, &title);
            time_by_path(&mut fx, thread, &stacks, &categories);
            markers::tests(&mut fx, thread, &stacks, view, &categories);
        }
        if stacks.frames.iter().any(|f| f.calls.unwrap_or(0) > 0) {
            let title = format!("{thread_name}: exact calls by call path (the Self column)");
            let thread = add_thread(&mut fx, &title);
            calls_by_path(&mut fx, thread, &stacks, &categories);
        }
    }
    if let Some((samples, timeline)) = run_samples.filter(|(_, t)| !t.is_empty()) {
        let stacks = Stacks::build(samples);
        let thread = add_thread(&mut fx, "the engine's samples of the run, in time");
        samples_in_time(&mut fx, thread, &stacks, timeline, &categories);
    }
    if let Some(requests) = (profile.run.requests.as_ref()).filter(|r| !r.start_nanos.is_empty()) {
        let thread = add_thread(&mut fx, "HTTP requests, when they were served");
        markers::requests(&mut fx, thread, requests, &categories);
    }
    if let Some(memory) = profile.memory.as_ref().filter(|m| !m.paths.is_empty()) {
        let stacks = Stacks::build(profile);
        let figures: [(&str, MemoryFigure); 2] = [
            ("memory: bytes allocated by call path (exact)", |p| {
                p.alloc_bytes
            }),
            (
                "memory: bytes still live at the end by call path (exact)",
                |p| p.live_bytes,
            ),
        ];
        // The viewer's allocations are a process's (its first thread's):
        // each figure is a process of its own.
        for (pid, (title, figure)) in (2..).zip(figures) {
            let process = fx.add_process(title, pid, at(0.0));
            let thread = fx.add_thread(process, pid, at(0.0), false);
            fx.set_thread_name(thread, title);
            allocations_by_path(&mut fx, thread, &stacks, memory, figure, &categories);
        }
    }
    // The page's frames in real time, a track of their own: the tracks of
    // call paths are laid out, not in time.
    if profile.frames.as_ref().is_some_and(|f| !f.worst.is_empty()) {
        let thread = add_thread(&mut fx, "animation frames: the slowest, when they ran");
        markers::animation_frames(&mut fx, thread, profile, &categories);
    }
    fx
}

pub(super) fn at(nanos: f64) -> Timestamp {
    Timestamp::from_nanos_since_reference(nanos.max(0.0) as u64)
}

/// The weight of `nanos` in whole microseconds, as the viewer's weights
/// are integers.
fn micros(nanos: f64) -> i32 {
    (nanos / 1000.0).round().clamp(0.0, f64::from(i32::MAX)) as i32
}

/// The frames of node `node`'s call path, outermost first.
fn path_frames(
    fx: &mut FxProfile,
    stacks: &Stacks,
    node: usize,
    categories: &Categories,
) -> Vec<FrameInfo> {
    let mut path = Vec::new();
    let mut at = Some(node);
    while let Some(n) = at.filter(|&n| n != 0) {
        path.push(n);
        at = stacks.frames[n].parent;
    }
    path.iter()
        .rev()
        .map(|&n| {
            let frame = &stacks.frames[n];
            FrameInfo {
                frame: FxFrame::Label(fx.intern_string(&frame.name)),
                category_pair: categories.of(frame.time).into(),
                flags: FrameFlags::empty(),
            }
        })
        .collect()
}

/// Each call path's self time at the end of the span it is laid out in,
/// each path starting where its previous sibling ended (see the module).
fn time_by_path(
    fx: &mut FxProfile,
    thread: ThreadHandle,
    stacks: &Stacks,
    categories: &Categories,
) {
    // (node, start), children pushed in reverse so that they come in order.
    let mut work: Vec<(usize, f64)> = laid_out_roots(stacks);
    work.reverse();
    let mut samples = Vec::new();
    while let Some((node, start)) = work.pop() {
        let frame = &stacks.frames[node];
        let mut child_start = start;
        let mut children = Vec::with_capacity(frame.children.len());
        for &child in &frame.children {
            children.push((child, child_start));
            child_start += stacks.frames[child].inclusive;
        }
        work.extend(children.into_iter().rev());
        if frame.self_weight > 0.0 {
            samples.push((child_start, node, frame.self_weight));
        }
    }
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (start, node, weight) in samples {
        let frames = path_frames(fx, stacks, node, categories);
        let stack = fx.intern_stack_frames(thread, frames.into_iter());
        fx.add_sample(thread, at(start), stack, CpuDelta::ZERO, micros(weight));
    }
}

/// The root's children, each where its previous sibling ended (ns).
pub(super) fn laid_out_roots(stacks: &Stacks) -> Vec<(usize, f64)> {
    let Some(root) = stacks.frames.first() else {
        return Vec::new();
    };
    let mut start = 0.0;
    root.children
        .iter()
        .map(|&child| {
            let laid = (child, start);
            start += stacks.frames[child].inclusive;
            laid
        })
        .collect()
}

/// Each call path's exact calls as the weight of one sample.
fn calls_by_path(
    fx: &mut FxProfile,
    thread: ThreadHandle,
    stacks: &Stacks,
    categories: &Categories,
) {
    let mut tick = 0.0;
    for node in stacks.depth_first() {
        let calls = stacks.frames[node].calls.unwrap_or(0);
        if node == 0 || calls == 0 {
            continue;
        }
        let frames = path_frames(fx, stacks, node, categories);
        let stack = fx.intern_stack_frames(thread, frames.into_iter());
        // A weight is an `i32`: more calls take more samples.
        let mut left = calls;
        while left > 0 {
            let weight = left.min(i32::MAX as u64);
            fx.add_sample(thread, at(tick), stack, CpuDelta::ZERO, weight as i32);
            tick += 1000.0;
            left -= weight;
        }
    }
}

/// A figure of each call path's memory.
type MemoryFigure = fn(&PathMemory) -> u64;

/// Each call path's `figure` of memory as one allocation of that size,
/// which the viewer's "native allocations" call tree sums by path. Each at
/// an address of its own, and none freed: the viewer pairs an allocation
/// with its free by address, and a path's frees are other paths' blocks.
fn allocations_by_path(
    fx: &mut FxProfile,
    thread: ThreadHandle,
    stacks: &Stacks,
    memory: &MemoryProfile,
    figure: MemoryFigure,
    categories: &Categories,
) {
    let mut tick = 0.0;
    for (address, path) in memory.paths.iter().enumerate() {
        let bytes = figure(path);
        if bytes == 0 || path.node >= stacks.frames.len() {
            continue;
        }
        let frames = path_frames(fx, stacks, path.node, categories);
        let stack = fx.intern_stack_frames(thread, frames.into_iter());
        let size = i64::try_from(bytes).unwrap_or(i64::MAX);
        fx.add_allocation_sample(thread, at(tick), stack, address as u64, size);
        tick += 1000.0;
    }
}

/// An engine's samples where they fell in time, each weighing 1; a span's
/// node is the frame of the same index (see `Stacks`).
fn samples_in_time(
    fx: &mut FxProfile,
    thread: ThreadHandle,
    stacks: &Stacks,
    timeline: &[Span],
    categories: &Categories,
) {
    let mut handles = std::collections::HashMap::new();
    for span in timeline {
        if span.node >= stacks.frames.len() {
            continue;
        }
        let stack = *handles.entry(span.node).or_insert_with(|| {
            let frames = path_frames(fx, stacks, span.node, categories);
            fx.intern_stack_frames(thread, frames.into_iter())
        });
        let busy = CpuDelta::from_nanos(span.nanos.max(0.0) as u64);
        fx.add_sample(thread, at(span.start_nanos), stack, busy, 1);
    }
}

mod markers;

#[cfg(test)]
mod tests;
