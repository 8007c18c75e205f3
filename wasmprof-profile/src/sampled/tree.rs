//! Building a [`Profile`]'s calling-context tree out of sampled stacks: one
//! function per distinct frame (name, script and position), one node per
//! distinct path, each sample's time added to the node of its stack.

use std::collections::HashMap;

use crate::profile::{Function, Node, Profile};
use crate::rust_names::rust_name;

/// A frame as the engines write it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Frame {
    pub name: String,
    /// The script or module URL; empty for the engine's pseudo-frames.
    pub url: String,
    /// 0-based line (0 for wasm), or -1 when unknown.
    pub line: i64,
    /// 0-based column (for wasm, the function body's offset in the module),
    /// or -1 when unknown.
    pub column: i64,
}

impl Frame {
    fn is_wasm(&self) -> bool {
        self.url.starts_with("wasm://")
            || self.url.ends_with(".wasm")
            || self.name.starts_with("wasm-function[")
    }

    /// How reports name the frame: Rust names demangled without their hash,
    /// JavaScript functions with their script and line, the engine's
    /// pseudo-frames as they are.
    pub(crate) fn display_name(&self) -> String {
        if self.is_wasm() {
            return rust_name(&self.name);
        }
        let name = if self.name.is_empty() {
            "(anonymous)"
        } else {
            &self.name
        };
        if self.url.is_empty() {
            return name.to_owned();
        }
        let script = self.url.rsplit('/').next().unwrap_or(&self.url);
        if self.line >= 0 {
            format!("{name} ({script}:{})", self.line + 1)
        } else {
            format!("{name} ({script})")
        }
    }
}

/// The tree as it grows.
#[derive(Default)]
pub(crate) struct TreeBuilder {
    /// Names of `wasm-function[N]` frames: the `--module`'s, or those of a
    /// module a `file://` URL names, read once per URL.
    module_names: Option<HashMap<u32, String>>,
    names_by_url: HashMap<String, Option<HashMap<u32, String>>>,
    functions: Vec<Function>,
    function_ids: HashMap<Frame, usize>,
    nodes: Vec<Node>,
    children: HashMap<(usize, usize), usize>,
    timeline: Vec<Span>,
}

/// One sample in time: the node its stack leads to, and the time it
/// stands for, `[start, start + nanos)` from the profile's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// The profile node the sample's stack leads to.
    pub node: usize,
    /// When the span starts, from the profile's start.
    pub start_nanos: f64,
    /// How long it lasts.
    pub nanos: f64,
}

impl TreeBuilder {
    pub(crate) fn new(module_names: Option<HashMap<u32, String>>) -> TreeBuilder {
        TreeBuilder {
            nodes: vec![Node::root()],
            module_names,
            ..TreeBuilder::default()
        }
    }

    /// `wasm-function[N]`'s name from the module, if it can be had.
    fn module_name(&mut self, frame: &Frame) -> Option<String> {
        let index: u32 = frame
            .name
            .strip_prefix("wasm-function[")?
            .strip_suffix(']')?
            .parse()
            .ok()?;
        if let Some(names) = &self.module_names {
            return names.get(&index).cloned();
        }
        let path = frame.url.strip_prefix("file://")?;
        let names = self
            .names_by_url
            .entry(frame.url.clone())
            .or_insert_with(|| {
                std::fs::read(path)
                    .ok()
                    .and_then(|bytes| crate::wasm_info::function_names(&bytes).ok())
            });
        names.as_ref()?.get(&index).cloned()
    }

    /// The function of `frame`, added on first sight.
    pub(crate) fn function(&mut self, frame: &Frame) -> usize {
        if let Some(&id) = self.function_ids.get(frame) {
            return id;
        }
        let id = self.functions.len();
        let name = match self.module_name(frame) {
            Some(name) => rust_name(&name),
            None => frame.display_name(),
        };
        self.functions.push(Function {
            column: u32::try_from(frame.column).ok(),
            ..Function::at(
                name,
                frame.url.clone(),
                u32::try_from(frame.line + 1).unwrap_or(0),
            )
        });
        self.function_ids.insert(frame.clone(), id);
        id
    }

    /// The node for `function` called from `parent`, added on first sight.
    pub(crate) fn child(&mut self, parent: usize, function: usize) -> usize {
        *self.children.entry((parent, function)).or_insert_with(|| {
            self.nodes.push(Node {
                parent: Some(parent),
                function: Some(function),
                ..Node::root()
            });
            self.nodes.len() - 1
        })
    }

    /// One sample of `weight_nanos` whose innermost frame is `node`,
    /// taken `end_nanos` after the profile started.
    pub(crate) fn add_sample(&mut self, node: usize, weight_nanos: f64, start_nanos: f64) {
        self.timeline.push(Span {
            node,
            start_nanos,
            nanos: weight_nanos,
        });
        let node = &mut self.nodes[node];
        node.samples += 1;
        node.inclusive_nanos += weight_nanos;
    }

    /// The samples in the order of time (what a flame chart draws).
    pub(crate) fn take_timeline(&mut self) -> Vec<Span> {
        let mut timeline = std::mem::take(&mut self.timeline);
        timeline.sort_by(|a, b| a.start_nanos.total_cmp(&b.start_nanos));
        timeline
    }

    /// The functions and nodes, with each node's time made inclusive.
    pub(crate) fn finish(mut self) -> (Vec<Function>, Vec<Node>) {
        // Parents come before their children, so one backward pass adds
        // every node's time into its parent after its own children's.
        for index in (1..self.nodes.len()).rev() {
            let time = self.nodes[index].inclusive_nanos;
            if let Some(parent) = self.nodes[index].parent {
                self.nodes[parent].inclusive_nanos += time;
            }
        }
        (self.functions, self.nodes)
    }
}

/// Each sample stands for the time from it to the next sample, as Chrome
/// DevTools and speedscope count it, so that the numbers match theirs; the
/// last one for the mean interval, but no later than the profile's `end`
/// where the file gives one (DevTools' Performance panel, seen in Chromium
/// 156: a last sample half an interval before `endTime` gets half an
/// interval), and the time before the first sample is no sample's. Returns
/// the weight of every sample, in the order given, and the typical
/// (median) interval; timestamps out of order are sorted first, as
/// DevTools does.
pub(crate) fn weights(timestamps: &[f64], end: Option<f64>) -> (Vec<f64>, Option<f64>) {
    let interval = typical_gap(timestamps);
    let mut order: Vec<usize> = (0..timestamps.len()).collect();
    // The engines write them in order; only a file that is not pays for
    // sorting.
    if !timestamps.windows(2).all(|w| w[0] <= w[1]) {
        order.sort_by(|&a, &b| timestamps[a].total_cmp(&timestamps[b]));
    }
    let mut weights = vec![0.0; timestamps.len()];
    for pair in order.windows(2) {
        weights[pair[0]] = timestamps[pair[1]] - timestamps[pair[0]];
    }
    if let (Some(&first), Some(&last)) = (order.first(), order.last()) {
        let mean = match order.len() {
            0 | 1 => interval.unwrap_or(0.0),
            n => (timestamps[last] - timestamps[first]) / (n - 1) as f64,
        };
        let until_end = end.map_or(f64::INFINITY, |end| (end - timestamps[last]).max(0.0));
        weights[last] = mean.min(until_end);
    }
    (weights, interval)
}

/// The median positive gap between consecutive timestamps (as sorted), from
/// at most 100,000 of them spread over the profile.
fn typical_gap(timestamps: &[f64]) -> Option<f64> {
    const AT_MOST: usize = 100_000;
    let mut sorted_sample: Vec<f64> = Vec::new();
    if timestamps.windows(2).all(|w| w[0] <= w[1]) {
        let stride = (timestamps.len() / AT_MOST).max(1);
        sorted_sample.extend(
            (1..timestamps.len())
                .step_by(stride)
                .map(|i| timestamps[i] - timestamps[i - 1]),
        );
    } else {
        let mut sorted = timestamps.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted_sample.extend(sorted.windows(2).map(|w| w[1] - w[0]));
    }
    sorted_sample.retain(|g| *g > 0.0);
    sorted_sample.sort_by(f64::total_cmp);
    sorted_sample.get(sorted_sample.len() / 2).copied()
}

/// A profile of sampled stacks, with the run information a report prints.
pub(crate) fn sampled_profile(
    source: &str,
    engine: &str,
    functions: Vec<Function>,
    nodes: Vec<Node>,
    duration_nanos: f64,
    interval_nanos: Option<f64>,
) -> Profile {
    use crate::profile::{FORMAT, RunInfo, TimerInfo, TimerMode};
    Profile {
        memory: None,
        format: FORMAT.to_owned(),
        created_unix_nanos: 0,
        run: RunInfo {
            package: None,
            module: source.to_owned(),
            module_sha256: String::new(),
            host: engine.to_owned(),
            command: Vec::new(),
            entry: "sampled".into(),
            complete: true,
            incomplete_reason: None,
            exit_code: 0,
            wall_nanos: duration_nanos.max(0.0) as u64,
            min_size: None,
            max_nodes: None,
            samples_file: None,
            count_check: None,
            window: None,
            display_frames: None,
            requests: None,
            small_counted: false,
        },
        timer: TimerInfo {
            mode: TimerMode::Sampled,
            resolution_nanos: None,
            clock_cost_nanos: None,
            sample_interval_nanos: interval_nanos,
            hybrid: None,
            coverage: None,
        },
        functions,
        nodes,
        overflow_calls: 0,
        threads: Vec::new(),
        frames: None,
        futures: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str, url: &str, line: i64, column: i64) -> Frame {
        Frame {
            name: name.into(),
            url: url.into(),
            line,
            column,
        }
    }

    #[test]
    fn javascript_frames_keep_their_script_and_line() {
        assert_eq!(
            frame("main", "http://127.0.0.1:1/page-host.js", 29, 19).display_name(),
            "main (page-host.js:30)"
        );
        assert_eq!(
            frame("", "file:///a/b.js", 0, 0).display_name(),
            "(anonymous) (b.js:1)"
        );
        assert_eq!(frame("(idle)", "", -1, -1).display_name(), "(idle)");
        assert_eq!(
            frame(
                "fib::fib::h00959e66f4db9792",
                "http://x/fib_bg.wasm",
                0,
                14782
            )
            .display_name(),
            "fib::fib"
        );
    }

    #[test]
    fn two_functions_of_one_name_stay_apart_and_one_function_is_one() {
        let mut tree = TreeBuilder::new(None);
        let a = tree.function(&frame("f", "a.js", 1, 2));
        let b = tree.function(&frame("f", "b.js", 1, 2));
        assert_ne!(a, b);
        assert_eq!(tree.function(&frame("f", "a.js", 1, 2)), a);
        let na = tree.child(0, a);
        let nb = tree.child(na, b);
        assert_eq!(tree.child(na, b), nb);
        tree.add_sample(nb, 3.0, 0.0);
        tree.add_sample(na, 1.0, 3.0);
        let (functions, nodes) = tree.finish();
        assert_eq!(functions.len(), 2);
        assert_eq!(
            (nodes[na].inclusive_nanos, nodes[nb].inclusive_nanos),
            (4.0, 3.0)
        );
        assert_eq!((nodes[na].samples, nodes[0].inclusive_nanos), (1, 4.0));
    }

    #[test]
    fn a_sample_stands_for_the_time_until_the_next_as_devtools_counts_it() {
        // Out of order, sorted first: 10 → 20 → 35; the last gets the
        // mean interval, (35 - 10) / 2.
        let (w, interval) = weights(&[10.0, 35.0, 20.0], None);
        assert_eq!(w, vec![10.0, 12.5, 15.0]);
        assert_eq!(interval, Some(15.0));
        let (w, _) = weights(&[0.0, 2.0, 4.0], None);
        assert_eq!(w, vec![2.0, 2.0, 2.0]);
        assert_eq!(weights(&[], None), (vec![], None));
        // In order: the same, without sorting.
        let (w, _) = weights(&[10.0, 20.0, 35.0], None);
        assert_eq!(w, vec![10.0, 15.0, 12.5]);
        // The profile's end comes before a whole interval has passed: the
        // last sample gets the time until it, none if it is at the end.
        let (w, _) = weights(&[0.0, 2.0, 4.0], Some(5.0));
        assert_eq!(w, vec![2.0, 2.0, 1.0]);
        let (w, _) = weights(&[0.0, 2.0, 4.0], Some(4.0));
        assert_eq!(w, vec![2.0, 2.0, 0.0]);
        let (w, _) = weights(&[0.0, 2.0, 4.0], Some(100.0));
        assert_eq!(w, vec![2.0, 2.0, 2.0]);
    }
}
