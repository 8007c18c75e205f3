//! `--format flamechart`: a sampling profile in time order, as DevTools'
//! Performance panel shows it. The x-axis is time from the first sample;
//! each box is a stretch of consecutive samples whose stacks share that
//! frame (the same call path, unbroken); where the engine was idle there is
//! a gap. An instrumented profile has counts and totals but no order in
//! time, so it has no flame chart: its flame graph is exact instead.

use std::io::Write;

use crate::error::Error;

use super::flamegraph::{FrameBox, Layout, colour, render_boxes};
use super::stacks::Stacks;
use super::units::human_duration;
use crate::profile::Profile;
use crate::sampled::Span;

/// Stacks whose outermost frame is one of these are the engine waiting:
/// drawn as gaps.
const IDLE: &[&str] = &["(idle)"];

pub(crate) fn write_flamechart(
    profile: &Profile,
    timeline: &[Span],
    out: &mut dyn Write,
) -> crate::Result<()> {
    let svg = render_flamechart(profile, timeline)?;
    out.write_all(svg.as_bytes())
        .map_err(Error::output("flame chart"))
}

pub(crate) fn render_flamechart(profile: &Profile, timeline: &[Span]) -> crate::Result<String> {
    if timeline.is_empty() {
        return Err(Error::NoTimeline);
    }
    let stacks = Stacks::build(profile);
    let start = timeline[0].start_nanos;
    let end = timeline
        .iter()
        .map(|s| s.start_nanos + s.nanos)
        .fold(start, f64::max);
    let total = end - start;
    // Boxes still growing, one per depth: (node, start).
    let mut open: Vec<(usize, f64)> = Vec::new();
    let mut boxes = Vec::new();
    let close = |node: usize, from: f64, to: f64, boxes: &mut Vec<FrameBox>| {
        let frame = &stacks.frames[node];
        boxes.push(FrameBox {
            x: from - start,
            width: to - from,
            depth: frame.depth - 1,
            name: frame.name.clone(),
            info: format!(
                "{} ({} from {} to {})",
                frame.name,
                human_duration(to - from),
                human_duration(from - start),
                human_duration(to - start)
            ),
            fill: colour(&frame.name, false),
        });
    };
    let mut last_end = start;
    for span in timeline {
        let path = node_path(&stacks, span.node);
        let idle = path
            .first()
            .is_some_and(|&n| IDLE.contains(&stacks.frames[n].name.as_str()));
        let contiguous = (span.start_nanos - last_end).abs() <= 1e-6 * total.max(1.0);
        let keep = if idle || !contiguous {
            0
        } else {
            open.iter()
                .zip(&path)
                .take_while(|((node, _), here)| node == *here)
                .count()
        };
        while open.len() > keep {
            let (node, from) = open.pop().expect("open is longer than keep");
            close(node, from, last_end, &mut boxes);
        }
        if !idle {
            for &node in &path[keep..] {
                open.push((node, span.start_nanos));
            }
        }
        last_end = span.start_nanos + span.nanos;
    }
    while let Some((node, from)) = open.pop() {
        close(node, from, last_end, &mut boxes);
    }
    boxes.sort_by(|a, b| a.depth.cmp(&b.depth).then(a.x.total_cmp(&b.x)));
    Ok(render_boxes(
        &boxes,
        &Layout {
            total,
            title: format!(
                "{} (flame chart)",
                profile.run.package.as_deref().unwrap_or("sampling profile")
            ),
            note: format!("time runs left to right: {}", human_duration(total)),
            icicle: true,
            unit: "ns",
            ruler: true,
        },
    ))
}

/// The nodes from the root's child down to `node`.
fn node_path(stacks: &Stacks, node: usize) -> Vec<usize> {
    let mut path = Vec::new();
    let mut current = Some(node);
    while let Some(n) = current.filter(|&n| n != 0) {
        path.push(n);
        current = stacks.frames[n].parent;
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    fn span(node: usize, start: f64, nanos: f64) -> Span {
        Span {
            node,
            start_nanos: start,
            nanos,
        }
    }

    #[test]
    fn consecutive_samples_of_a_frame_make_one_box_and_idle_time_a_gap() {
        let mut builder = ProfileBuilder::timed()
            .path(&["main"], 0, 1.0)
            .path(&["main", "a"], 0, 1.0)
            .path(&["main", "b"], 0, 1.0)
            .path(&["(idle)"], 0, 1.0);
        builder = builder.path(&["main", "a", "leaf"], 0, 1.0);
        let profile = builder.build();
        let stacks = Stacks::build(&profile);
        let find = |path: &[&str]| {
            (1..stacks.frames.len())
                .find(|&n| stacks.path(n) == path)
                .unwrap()
        };
        let (main, a, b, leaf, idle) = (
            find(&["main"]),
            find(&["main", "a"]),
            find(&["main", "b"]),
            find(&["main", "a", "leaf"]),
            find(&["(idle)"]),
        );
        let timeline = [
            span(a, 0.0, 10.0),
            span(leaf, 10.0, 10.0),
            span(b, 20.0, 10.0),
            span(idle, 30.0, 10.0),
            span(main, 40.0, 10.0),
        ];
        let svg = render_flamechart(&profile, &timeline).unwrap();
        let boxes: Vec<&str> = svg
            .lines()
            .filter_map(|l| l.split("<title>").nth(1))
            .map(|t| t.split(" (").next().unwrap())
            .collect();
        // main twice (the idle gap splits it), a once over 20 ns, leaf, b.
        assert_eq!(boxes, ["main", "main", "a", "b", "leaf"]);
        assert!(svg.contains("<title>a (20 ns from 0 ns to 20 ns)"), "{svg}");
        assert!(!svg.contains("<title>(idle)"));
    }

    #[test]
    fn an_instrumented_profile_has_no_flame_chart() {
        let profile = ProfileBuilder::timed().path(&["main"], 1, 1.0).build();
        let err = render_flamechart(&profile, &[]).unwrap_err().to_string();
        assert!(err.contains("needs samples in time order"), "{err}");
    }
}
