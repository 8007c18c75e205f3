//! The section gprof has no counterpart for: the page's animation frames,
//! their rate and distribution, and the slowest frames' own call trees. It
//! comes last, with the other sections of wasmprof's own.

use super::GprofWriter;
use crate::report::animation_frames::{overview, tree};
use crate::report::units::human_duration_ascii;

pub(super) fn write(report: &GprofWriter, text: &mut String) {
    let Some(frames) = &report.profile.frames else {
        return;
    };
    text.push_str("\x0c\nAnimation frames\n\n");
    text.push_str(&overview(frames));
    text.push_str(".\n\n");
    if frames.worst.is_empty() {
        return;
    }
    text.push_str(
        "The slowest frames, each with what ran in it alone: the calls of each call path\n\
         in that frame and their time (exact counts; time as the clock measured it).\n",
    );
    for frame in &frames.worst {
        text.push_str(&format!(
            "\nframe {} at {} into the frames: {}\n",
            frame.index,
            human_duration_ascii(frame.start_nanos),
            human_duration_ascii(frame.duration_nanos)
        ));
        let lines = tree(report.profile, frame);
        if lines.is_empty() {
            text.push_str("    no instrumented call (the framework's or the browser's own work)\n");
            continue;
        }
        text.push_str(&format!("{:>9} {:>10}  name\n", "calls", "time"));
        for line in lines {
            text.push_str(&format!(
                "{:>9} {:>10}  {}{}\n",
                line.calls,
                human_duration_ascii(line.inclusive_nanos),
                "  ".repeat(line.depth),
                line.name
            ));
        }
    }
}
