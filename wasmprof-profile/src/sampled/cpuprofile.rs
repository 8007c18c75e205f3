//! Chrome DevTools and Node `.cpuprofile` files, and the bare result of the
//! DevTools protocol's `Profiler.stop` (`{"profile": {…}}`).
//!
//! Time comes from the timestamps: sample `i` was taken at `startTime` plus
//! the sum of `timeDeltas[0..=i]` (µs), and stands for the time until the
//! next sample, the last one for the mean interval but not past `endTime`,
//! as DevTools counts them
//! (`tree::weights`): the same file shows the same numbers here and there.
//! The parent chains come from `children`.

use std::collections::HashMap;

use serde::Deserialize;

use super::tree::{Frame, Span, TreeBuilder, sampled_profile, weights};
use super::{Options, Problems};
use crate::profile::Profile;

/// The file's shape, as far as wasmprof reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CpuProfile {
    pub nodes: Vec<CpuNode>,
    #[serde(default)]
    pub start_time: f64,
    #[serde(default)]
    pub end_time: f64,
    #[serde(default)]
    pub samples: Vec<u64>,
    #[serde(default)]
    pub time_deltas: Vec<f64>,
}

/// `Profiler.stop`'s result.
#[derive(Debug, Deserialize)]
pub(crate) struct Wrapped {
    pub profile: CpuProfile,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CpuNode {
    pub id: u64,
    pub call_frame: CallFrame,
    #[serde(default)]
    pub children: Vec<u64>,
    /// Some writers give the parent instead of (or besides) children.
    #[serde(default)]
    pub parent: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallFrame {
    #[serde(default)]
    pub function_name: String,
    #[serde(default)]
    pub url: String,
    #[serde(default = "minus_one")]
    pub line_number: i64,
    #[serde(default = "minus_one")]
    pub column_number: i64,
}

fn minus_one() -> i64 {
    -1
}

const MICROS: f64 = 1e3;

/// The profile as a wasmprof [`Profile`]; what was wrong with the records
/// is counted in `problems`.
pub(crate) fn convert(
    profile: &CpuProfile,
    source: &str,
    options: &Options,
    problems: &mut Problems,
) -> (Profile, Vec<Span>) {
    let by_id: HashMap<u64, usize> = profile
        .nodes
        .iter()
        .enumerate()
        .map(|(index, node)| (node.id, index))
        .collect();
    if by_id.len() != profile.nodes.len() {
        problems.add(
            "nodes sharing an id (the first was kept)",
            profile.nodes.len() - by_id.len(),
        );
    }
    let parent = parents(profile, &by_id, problems);
    let mut tree = TreeBuilder::new(options.module_names.clone());
    let placed = place_nodes(profile, &parent, &mut tree);
    let timestamps = sample_times(profile, problems);
    let (weights, interval) = weights(&timestamps, Some(profile.end_time));
    let idle_name = "(idle)";
    for ((sample, weight), at) in profile.samples[..timestamps.len()]
        .iter()
        .zip(weights)
        .zip(&timestamps)
    {
        let Some(&index) = by_id.get(sample) else {
            problems.add("samples that name no node (left out)", 1);
            continue;
        };
        let Some(node) = placed[index] else {
            problems.add("samples of nodes on a cycle of parents (left out)", 1);
            continue;
        };
        if options.hide_idle && profile.nodes[index].call_frame.function_name == idle_name {
            continue;
        }
        tree.add_sample(node, weight * MICROS, (at - profile.start_time) * MICROS);
    }
    let timeline = tree.take_timeline();
    let (functions, nodes) = tree.finish();
    let engine = format!(
        "V8's sampler (.cpuprofile, {} samples)",
        profile.samples.len()
    );
    let span = (profile.end_time - profile.start_time).max(0.0);
    let profile = sampled_profile(
        source,
        &engine,
        functions,
        nodes,
        span * MICROS,
        interval.map(|i| i * MICROS),
    );
    (profile, timeline)
}

/// The parent of every node, from `children` (or `parent`); a node claimed
/// by two parents keeps the first, which also breaks cycles below.
fn parents(
    profile: &CpuProfile,
    by_id: &HashMap<u64, usize>,
    problems: &mut Problems,
) -> Vec<Option<usize>> {
    let mut parent: Vec<Option<usize>> = vec![None; profile.nodes.len()];
    for (index, node) in profile.nodes.iter().enumerate() {
        for child in &node.children {
            match by_id.get(child) {
                Some(&c) if c != index && parent[c].is_none() => parent[c] = Some(index),
                Some(_) => problems.add("children listed twice or under themselves", 1),
                None => problems.add("children that name no node", 1),
            }
        }
    }
    for (index, node) in profile.nodes.iter().enumerate() {
        if let (Some(p), None) = (node.parent, parent[index]) {
            match by_id.get(&p) {
                Some(&p) if p != index => parent[index] = Some(p),
                _ => problems.add("parents that name no node", 1),
            }
        }
    }
    parent
}

/// Each node's place in the tree, parents first: walked down from the
/// nodes nobody claims. A cycle has no such start, so its nodes are never
/// reached (`None`) and their samples are counted as unplaced.
fn place_nodes(
    profile: &CpuProfile,
    parent: &[Option<usize>],
    tree: &mut TreeBuilder,
) -> Vec<Option<usize>> {
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); profile.nodes.len()];
    for (index, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            kids[*p].push(index);
        }
    }
    let mut placed: Vec<Option<usize>> = vec![None; profile.nodes.len()];
    let mut work: Vec<(usize, usize)> = Vec::new();
    for (index, p) in parent.iter().enumerate() {
        if p.is_none() {
            work.push((index, Profile::ROOT));
        }
    }
    while let Some((index, tree_parent)) = work.pop() {
        let frame = &profile.nodes[index].call_frame;
        let at = if frame.function_name == "(root)" && tree_parent == Profile::ROOT {
            Profile::ROOT
        } else {
            let function = tree.function(&Frame {
                name: frame.function_name.clone(),
                url: frame.url.clone(),
                line: frame.line_number,
                column: frame.column_number,
            });
            tree.child(tree_parent, function)
        };
        placed[index] = Some(at);
        for &kid in &kids[index] {
            work.push((kid, at));
        }
    }
    placed
}

/// When each sample was taken, from the deltas, kept within the profile;
/// a delta that is not a number or longer than the profile is skipped.
fn sample_times(profile: &CpuProfile, problems: &mut Problems) -> Vec<f64> {
    if profile.time_deltas.len() != profile.samples.len() {
        problems.add(
            "samples without a time delta, or deltas without a sample (left out)",
            profile.time_deltas.len().abs_diff(profile.samples.len()),
        );
    }
    let count = profile.samples.len().min(profile.time_deltas.len());
    let mut timestamps = Vec::with_capacity(count);
    let mut at = profile.start_time;
    let span = (profile.end_time - profile.start_time).max(0.0);
    for &delta in &profile.time_deltas[..count] {
        if !delta.is_finite() || delta.abs() > span.max(1.0) * 2.0 {
            problems.add(
                "time deltas that are not numbers or longer than the profile",
                1,
            );
        } else {
            at += delta;
        }
        timestamps.push(at.clamp(profile.start_time, profile.end_time.max(profile.start_time)));
    }
    timestamps
}
