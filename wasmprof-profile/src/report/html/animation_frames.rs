//! The page's Frames section: the animation frames' rate and
//! distribution, and each of the slowest frames' own calls, as a nested
//! list of call paths. Written out as HTML: it needs no script.

use std::fmt::Write as _;

use crate::html_text::escape;
use crate::profile::Profile;
use crate::report::animation_frames::{overview, tree};
use crate::report::units::human_duration;

/// The section, or nothing for a profile without frames.
pub(super) fn section(profile: &Profile) -> Option<String> {
    let frames = profile.frames.as_ref()?;
    let mut html = String::from("<section id=\"frames\"><h2>Frames</h2>\n");
    let _ = writeln!(html, "<p>{}.</p>", escape(&overview(frames)));
    if !frames.worst.is_empty() {
        html.push_str(
            "<p class=\"hint\">The slowest frames, each with what ran in it alone: the \
             calls of each call path in that frame, and their time.</p>\n",
        );
    }
    for frame in &frames.worst {
        let _ = writeln!(
            html,
            "<h3>Frame {} at {}: {}</h3>",
            frame.index,
            escape(&human_duration(frame.start_nanos)),
            escape(&human_duration(frame.duration_nanos))
        );
        let lines = tree(profile, frame);
        if lines.is_empty() {
            html.push_str(
                "<p>No instrumented call: the framework's or the browser's own work.</p>\n",
            );
            continue;
        }
        html.push_str("<table class=\"frame\"><thead><tr><th>calls</th><th>time</th><th class=\"name\">function</th></tr></thead><tbody>\n");
        for line in lines {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td>{}</td><td class=\"name\" style=\"padding-left:{}em\">{}</td></tr>",
                line.calls,
                escape(&human_duration(line.inclusive_nanos)),
                line.depth * 2,
                escape(&line.name)
            );
        }
        html.push_str("</tbody></table>\n");
    }
    html.push_str("</section>\n");
    Some(html)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;
    use crate::profile::{Frame, FrameCalls, Frames};

    #[test]
    fn the_section_shows_the_rate_and_each_slow_frame_s_calls_escaped() {
        let mut profile = ProfileBuilder::timed()
            .path(&["app::frame"], 3, 9.0)
            .path(&["app::frame", "Vec<T>::push"], 120, 6.0)
            .build();
        let push = profile.nodes.len() - 1;
        assert!(section(&profile).is_none());
        profile.frames = Some(Frames {
            count: 3,
            span_nanos: 32e6,
            median_nanos: 1e6,
            p95_nanos: 5e6,
            p99_nanos: 5e6,
            worst_nanos: 5e6,
            worst: vec![Frame {
                index: 2,
                start_nanos: 32e6,
                duration_nanos: 5e6,
                calls: vec![
                    FrameCalls {
                        node: push - 1,
                        calls: 1,
                        inclusive_nanos: 4e6,
                    },
                    FrameCalls {
                        node: push,
                        calls: 40,
                        inclusive_nanos: 2e6,
                    },
                ],
            }],
        });
        let html = section(&profile).unwrap();
        assert!(
            html.contains("3 frames in 32.0 ms (62.5 per second)"),
            "{html}"
        );
        assert!(
            html.contains("<h3>Frame 2 at 32.0 ms: 5.00 ms</h3>"),
            "{html}"
        );
        assert!(
            html.contains("padding-left:2em\">Vec&lt;T&gt;::push</td>"),
            "{html}"
        );
    }
}
