//! JS Self-Profiling API traces: what `await profiler.stop()` gives a page,
//! `{resources, frames, stacks, samples}`. Samples carry a timestamp (ms)
//! and, unless the page was idle, a stack; a stack is a frame and its parent
//! stack. Lines and columns are 1-based (for wasm, the column is the
//! function body's offset plus one).

use serde::Deserialize;

use super::tree::{Frame, Span, TreeBuilder, sampled_profile, weights};
use super::{Options, Problems};
use crate::profile::Profile;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Trace {
    #[serde(default)]
    pub resources: Vec<String>,
    pub frames: Vec<TraceFrame>,
    pub stacks: Vec<TraceStack>,
    pub samples: Vec<TraceSample>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TraceFrame {
    #[serde(default)]
    pub name: String,
    pub resource_id: Option<usize>,
    pub line: Option<i64>,
    pub column: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TraceStack {
    pub frame_id: usize,
    pub parent_id: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TraceSample {
    pub timestamp: f64,
    pub stack_id: Option<usize>,
}

const MILLIS: f64 = 1e6;

pub(crate) fn convert(
    trace: &Trace,
    source: &str,
    options: &Options,
    problems: &mut Problems,
) -> (Profile, Vec<Span>) {
    let mut tree = TreeBuilder::new(options.module_names.clone());
    let mut stacks = Stacks {
        trace,
        functions: frame_functions(trace, &mut tree, problems),
        node_of: vec![None; trace.stacks.len()],
    };
    let timestamps: Vec<f64> = trace.samples.iter().map(|s| s.timestamp).collect();
    if timestamps.iter().any(|t| !t.is_finite()) {
        problems.add("samples whose timestamp is not a number (left out)", 1);
    }
    // A trace has no end of its own: the last sample gets the mean interval.
    let (weights, interval) = weights(&timestamps, None);
    let idle = tree.function(&Frame {
        name: "(idle)".into(),
        url: String::new(),
        line: -1,
        column: -1,
    });
    for (sample, weight) in trace.samples.iter().zip(weights) {
        if !sample.timestamp.is_finite() || !weight.is_finite() {
            continue;
        }
        let node = match sample.stack_id {
            None if options.hide_idle => continue,
            None => tree.child(Profile::ROOT, idle),
            Some(stack) => match stacks.resolve(stack, problems, &mut tree) {
                Some(node) => node,
                None => continue,
            },
        };
        tree.add_sample(node, weight * MILLIS, sample.timestamp * MILLIS);
    }
    // From the first sample's start, as the profile's duration counts.
    let mut timeline = tree.take_timeline();
    if let Some(origin) = timeline.first().map(|s| s.start_nanos) {
        for span in &mut timeline {
            span.start_nanos -= origin;
        }
    }
    let (functions, nodes) = tree.finish();
    let engine = format!("JS Self-Profiling API ({} samples)", trace.samples.len());
    let profile = sampled_profile(
        source,
        &engine,
        functions,
        nodes,
        duration(&timestamps, interval) * MILLIS,
        interval.map(|i| i * MILLIS),
    );
    (profile, timeline)
}

/// The function of every frame, its URL from the trace's resources.
fn frame_functions(
    trace: &Trace,
    tree: &mut TreeBuilder,
    problems: &mut Problems,
) -> Vec<Option<usize>> {
    trace
        .frames
        .iter()
        .map(|frame| {
            let url = match frame.resource_id {
                Some(id) => match trace.resources.get(id) {
                    Some(url) => url.clone(),
                    None => {
                        problems.add("frames naming no resource", 1);
                        String::new()
                    }
                },
                None => String::new(),
            };
            // 1-based here, 0-based in .cpuprofile: one key for both.
            Some(tree.function(&Frame {
                name: frame.name.clone(),
                url,
                line: frame.line.map_or(-1, |l| l - 1),
                column: frame.column.map_or(-1, |c| c - 1),
            }))
        })
        .collect()
}

/// The trace's stacks, each resolved to its node once, outermost first.
struct Stacks<'a> {
    trace: &'a Trace,
    functions: Vec<Option<usize>>,
    /// `None` while being resolved, so that a cycle of parents is found
    /// instead of followed; `Some(None)` for a stack that cannot be placed.
    node_of: Vec<Option<Option<usize>>>,
}

impl Stacks<'_> {
    fn resolve(
        &mut self,
        stack: usize,
        problems: &mut Problems,
        tree: &mut TreeBuilder,
    ) -> Option<usize> {
        let mut chain = Vec::new();
        let mut at = Some(stack);
        let mut base = Profile::ROOT;
        while let Some(s) = at {
            match self.node_of.get(s) {
                None => {
                    problems.add("stacks naming no stack", 1);
                    return None;
                }
                Some(Some(resolved)) => {
                    base = (*resolved)?;
                    break;
                }
                Some(None) => {}
            }
            if chain.contains(&s) || chain.len() > self.trace.stacks.len() {
                problems.add("stacks on a cycle of parents", 1);
                return None;
            }
            chain.push(s);
            at = self.trace.stacks[s].parent_id;
        }
        for &s in chain.iter().rev() {
            let function = match self.functions.get(self.trace.stacks[s].frame_id) {
                Some(Some(f)) => *f,
                _ => {
                    problems.add("stacks naming no frame", 1);
                    self.node_of[s] = Some(None);
                    return None;
                }
            };
            base = tree.child(base, function);
            self.node_of[s] = Some(Some(base));
        }
        Some(base)
    }
}

/// From the first sample to the end of the last (ms).
fn duration(timestamps: &[f64], interval: Option<f64>) -> f64 {
    let finite = timestamps.iter().copied().filter(|t| t.is_finite());
    let first = finite.clone().fold(f64::INFINITY, f64::min);
    let last = finite.fold(f64::NEG_INFINITY, f64::max);
    if first.is_finite() {
        last - first + interval.unwrap_or(0.0)
    } else {
        0.0
    }
}
