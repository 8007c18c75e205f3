//! Animation frames in the text reports: the rate and the frame-time
//! distribution in one line, and a slow frame's own call tree, each call
//! path with its exact calls and time in that frame alone.

use std::collections::BTreeSet;

use super::units::human_duration;
use crate::profile::{Frame, Frames, Profile};

/// `185 frames in 3.02 s (61.0 per second); a frame took median 96.0 µs, p95 …`.
pub(crate) fn overview(frames: &Frames) -> String {
    let rate = match frames.rate_hz() {
        Some(hz) => format!(
            " in {} ({hz:.1} per second)",
            human_duration(frames.span_nanos)
        ),
        None => String::new(),
    };
    format!(
        "{} frame{}{rate}; a frame's callback took median {}, p95 {}, p99 {}, worst {}",
        frames.count,
        if frames.count == 1 { "" } else { "s" },
        human_duration(frames.median_nanos),
        human_duration(frames.p95_nanos),
        human_duration(frames.p99_nanos),
        human_duration(frames.worst_nanos),
    )
}

/// One line of a frame's call tree.
pub(crate) struct FrameLine {
    /// Depth among the frame's own paths: 0 for a path entered from the
    /// frame's callback.
    pub depth: usize,
    pub calls: u64,
    pub inclusive_nanos: f64,
    pub name: String,
    /// The path's node in the profile's call tree.
    pub node: usize,
}

/// The frame's call paths as a tree, callers before their callees.
pub(crate) fn tree(profile: &Profile, frame: &Frame) -> Vec<FrameLine> {
    let in_frame: BTreeSet<usize> = frame.calls.iter().map(|c| c.node).collect();
    let depth_of = |mut node: usize| {
        let mut depth = 0;
        while let Some(parent) = profile.nodes.get(node).and_then(|n| n.parent) {
            if in_frame.contains(&parent) {
                depth += 1;
            }
            node = parent;
        }
        depth
    };
    // Depth first, in node order: a node's parent has a smaller index.
    let mut order: Vec<usize> = Vec::new();
    let roots = in_frame
        .iter()
        .copied()
        .filter(|&n| !ancestors(profile, n).any(|a| in_frame.contains(&a)));
    let mut stack: Vec<usize> = roots.collect::<Vec<_>>();
    stack.reverse();
    while let Some(node) = stack.pop() {
        order.push(node);
        let mut children: Vec<usize> = in_frame
            .iter()
            .copied()
            .filter(|&c| nearest_frame_ancestor(profile, c, &in_frame) == Some(node))
            .collect();
        children.reverse();
        stack.extend(children);
    }
    order
        .into_iter()
        .filter_map(|node| {
            let calls = frame.calls.iter().find(|c| c.node == node)?;
            let name = profile.nodes[node]
                .function
                .and_then(|f| profile.functions.get(f))
                .map_or("<unknown>", |f| f.name.as_str());
            Some(FrameLine {
                depth: depth_of(node),
                calls: calls.calls,
                inclusive_nanos: calls.inclusive_nanos,
                name: name.to_owned(),
                node,
            })
        })
        .collect()
}

fn ancestors(profile: &Profile, node: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(profile.nodes.get(node).and_then(|n| n.parent), |&p| {
        profile.nodes.get(p).and_then(|n| n.parent)
    })
}

fn nearest_frame_ancestor(
    profile: &Profile,
    node: usize,
    in_frame: &BTreeSet<usize>,
) -> Option<usize> {
    ancestors(profile, node).find(|a| in_frame.contains(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;
    use crate::profile::FrameCalls;

    #[test]
    fn a_frame_s_tree_nests_its_paths_under_their_callers() {
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "frame"], 3, 9.0)
            .path(&["main", "frame", "row"], 120, 6.0)
            .path(&["main", "frame", "paint"], 3, 2.0)
            .build();
        let node = |path: &[&str]| crate::fixtures::node_at(&profile, path);
        let frame = Frame {
            index: 1,
            start_nanos: 16e6,
            duration_nanos: 5e6,
            calls: vec![
                FrameCalls {
                    node: node(&["main", "frame", "paint"]),
                    calls: 1,
                    inclusive_nanos: 1e6,
                },
                FrameCalls {
                    node: node(&["main", "frame"]),
                    calls: 1,
                    inclusive_nanos: 4e6,
                },
                FrameCalls {
                    node: node(&["main", "frame", "row"]),
                    calls: 40,
                    inclusive_nanos: 2e6,
                },
            ],
        };
        let lines: Vec<(usize, u64, String)> = tree(&profile, &frame)
            .into_iter()
            .map(|l| (l.depth, l.calls, l.name))
            .collect();
        assert_eq!(
            lines,
            [
                (0, 1, "frame".to_owned()),
                (1, 40, "row".to_owned()),
                (1, 1, "paint".to_owned()),
            ]
        );
    }

    #[test]
    fn the_overview_gives_rate_and_distribution() {
        let frames = Frames {
            count: 61,
            span_nanos: 1e9,
            median_nanos: 96_000.0,
            p95_nanos: 200_000.0,
            p99_nanos: 1e6,
            worst_nanos: 5e6,
            worst: Vec::new(),
        };
        assert_eq!(
            overview(&frames),
            "61 frames in 1.00 s (60.0 per second); a frame's callback took median 96.0 µs, \
             p95 200 µs, p99 1.00 ms, worst 5.00 ms"
        );
    }
}
