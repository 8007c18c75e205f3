//! An interactive SVG flame graph of the calling-context tree: one box per
//! call path, as wide as its inclusive weight, children above their caller
//! (or below, `--icicle`). Hovering shows the name, time, share and exact
//! calls; a click zooms on a frame; "Search" highlights the frames whose
//! name matches a regular expression and sums their share without counting
//! nested matches twice. The script is inline: the file opens on its own,
//! offline, in any browser.
//!
//! Written here rather than with inferno (CDDL-1.0, a licence this
//! project's MIT/Apache users may not want to take on): the tree is exact,
//! not folded samples to be merged, so the layout is a walk of it.
//! Colours are stable: a crate (the name's first `::` segment) keeps one
//! hue in every graph, its functions lighter or darker by their name.

use std::fmt::Write as _;
use std::io::Write;

use crate::error::Error;

use super::stacks::{Stacks, Unit};
use super::units::human_duration;
use crate::html_text::escape;
use crate::profile::{MemoryWeight, Profile};

/// How the graph is drawn.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlameOptions {
    /// Callers above their callees (top-down).
    pub icicle: bool,
    /// Differential colouring: per node (of this profile), how its self
    /// weight changed against the base, as a fraction of the base (`None`:
    /// new in this profile).
    pub diff: Option<Vec<Option<f64>>>,
    /// The title; the program's package by default.
    pub title: Option<String>,
    /// Widths by a memory figure of each path (`--weight`) instead of
    /// time or calls.
    pub weight: Option<MemoryWeight>,
}

const WIDTH: f64 = 1200.0;
const FRAME_HEIGHT: f64 = 16.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 28.0;
const SIDE: f64 = 10.0;
/// Frames narrower than this many pixels are left out (their weight stays
/// in their caller's box): a profile of 100,000 nodes stays light.
const MIN_WIDTH_PX: f64 = 0.1;
/// At most this many frames are drawn, the widest: a browser stays quick
/// with them, and narrower ones are a pixel or less wide anyway.
const MAX_FRAMES: usize = 12_000;
/// Roughly the advance of a 12px monospace character.
const CHAR_WIDTH: f64 = 7.2;

pub(crate) fn write_flamegraph(
    profile: &Profile,
    options: &FlameOptions,
    out: &mut dyn Write,
) -> crate::Result<()> {
    out.write_all(render_flamegraph(profile, options).as_bytes())
        .map_err(Error::output("flame graph"))
}

/// The SVG document.
pub(crate) fn render_flamegraph(profile: &Profile, options: &FlameOptions) -> String {
    let stacks = Stacks::weighed(profile, options.weight);
    let total = stacks.total();
    let drawn = drawn_frames(&stacks, total);
    let title = options.title.clone().unwrap_or_else(|| {
        format!(
            "{}{}",
            profile.run.package.as_deref().unwrap_or("wasmprof profile"),
            if options.icicle { " (icicle)" } else { "" }
        )
    });
    let note = match (stacks.unit, profile.timer.mode) {
        (Unit::Bytes | Unit::Blocks, _) => match options.weight {
            Some(MemoryWeight::AllocBytes) => "widths: bytes allocated (exact)",
            Some(MemoryWeight::LiveBytes) => "widths: bytes still live at the end (exact)",
            Some(MemoryWeight::PeakBytes) => "widths: bytes held at the peak (exact)",
            _ => "widths: blocks allocated (exact)",
        },
        (Unit::Calls, _) => "widths: exact calls (no time was measured)",
        (_, crate::profile::TimerMode::Sampled) => "widths: sampled time",
        (_, crate::profile::TimerMode::Hybrid) => "widths: sampled time; calls exact",
        _ => "widths: measured time; calls exact",
    };
    // x of every drawn frame, in weight units from the graph's left edge.
    let mut x = vec![0.0; stacks.frames.len()];
    let mut boxes = Vec::with_capacity(drawn.len());
    for &node in &drawn {
        let frame = &stacks.frames[node];
        let mut next = x[node];
        for &child in &frame.children {
            x[child] = next;
            next += stacks.frames[child].inclusive;
        }
        let share = if total > 0.0 {
            100.0 * frame.inclusive / total
        } else {
            0.0
        };
        boxes.push(FrameBox {
            x: x[node],
            width: frame.inclusive,
            depth: frame.depth,
            name: frame.name.clone(),
            info: info_line(frame, stacks.unit, share, profile.timer.mode.counted()),
            fill: match &options.diff {
                Some(diff) => diff_colour(diff.get(node).copied().flatten(), node == 0),
                None => colour(&frame.name, node == 0),
            },
        });
    }
    render_boxes(
        &boxes,
        &Layout {
            total,
            title,
            note: note.to_owned(),
            icicle: options.icicle,
            unit: match stacks.unit {
                Unit::Nanoseconds => "ns",
                Unit::Calls => "calls",
                Unit::Bytes => "bytes",
                Unit::Blocks => "blocks",
            },
            ruler: false,
        },
    )
}

/// One box to draw: where, how wide (in the graph's weight units), which
/// row, and what it says.
pub(crate) struct FrameBox {
    pub x: f64,
    pub width: f64,
    pub depth: usize,
    pub name: String,
    pub info: String,
    pub fill: String,
}

/// What the whole graph needs besides its boxes.
pub(crate) struct Layout {
    /// The weight the full width stands for.
    pub total: f64,
    pub title: String,
    /// The note at the top left: what the widths are.
    pub note: String,
    pub icicle: bool,
    pub unit: &'static str,
    /// A time ruler above the frames (a flame chart's x-axis is time), which
    /// the script draws for the window shown, zoomed or not.
    pub ruler: bool,
}

/// The height of the ruler's row.
const RULER_HEIGHT: f64 = 18.0;

/// The SVG of a flame graph or flame chart: the boxes, the buttons and the
/// script that zooms and searches.
pub(crate) fn render_boxes(boxes: &[FrameBox], layout: &Layout) -> String {
    let total = layout.total;
    let max_depth = boxes.iter().map(|b| b.depth).max().unwrap_or(0);
    let top = if layout.ruler {
        TOP + RULER_HEIGHT
    } else {
        TOP
    };
    let height = top + (max_depth as f64 + 1.0) * FRAME_HEIGHT + BOTTOM;
    let mut svg = String::with_capacity(boxes.len() * 220 + 8_000);
    let _ = write!(
        svg,
        r##"<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg" data-total="{total}" data-unit="{unit}" data-icicle="{icicle}">
<style>
text {{ font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; fill: #000; }}
.f text {{ pointer-events: none; }}
.f:hover rect {{ stroke: #000; stroke-width: 0.5; cursor: pointer; }}
#title {{ font-size: 17px; text-anchor: middle; }}
.button {{ cursor: pointer; fill: #333; text-decoration: underline; }}
.hidden {{ display: none; }}
.faded rect {{ fill-opacity: 0.45; }}
</style>
<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#f8f8f8"/>
<text id="title" x="{mid}" y="22">{title}</text>
<text id="note" x="{SIDE}" y="22" fill="#555">{note}</text>
<text id="reset" class="button hidden" x="{SIDE}" y="{details_y}">Reset zoom</text>
<text id="search" class="button" x="{search_x}" y="22">Search</text>
<text id="details" x="{details_x}" y="{details_y}"> </text>
<text id="matched" x="{matched_x}" y="{details_y}" text-anchor="end"> </text>
{ruler}<g id="frames">
"##,
        unit = layout.unit,
        icicle = layout.icicle,
        mid = WIDTH / 2.0,
        title = escape(&layout.title),
        note = escape(&layout.note),
        search_x = WIDTH - SIDE - 50.0,
        details_x = SIDE + 100.0,
        details_y = height - 10.0,
        matched_x = WIDTH - SIDE,
        ruler = if layout.ruler {
            format!(
                "<g id=\"ruler\" data-y=\"{}\" data-height=\"{}\"></g>\n",
                TOP,
                height - TOP - BOTTOM
            )
        } else {
            String::new()
        },
    );
    let scale = if total > 0.0 {
        (WIDTH - 2.0 * SIDE) / total
    } else {
        0.0
    };
    for b in boxes {
        let y = if layout.icicle {
            top + b.depth as f64 * FRAME_HEIGHT
        } else {
            height - BOTTOM - (b.depth as f64 + 1.0) * FRAME_HEIGHT
        };
        let px = SIDE + b.x * scale;
        let pw = b.width * scale;
        let _ = writeln!(
            svg,
            r#"<g class="f" data-x="{}" data-w="{}" data-d="{}" data-n="{}"><title>{}</title><rect x="{px:.2}" y="{y}" width="{pw:.2}" height="{h}" rx="2" fill="{}"/><text x="{tx:.2}" y="{ty}">{}</text></g>"#,
            b.x,
            b.width,
            b.depth,
            escape(&b.name),
            escape(&b.info),
            b.fill,
            escape(&fit(&b.name, pw)),
            h = FRAME_HEIGHT - 1.0,
            tx = px + 3.0,
            ty = y + 11.5,
        );
    }
    svg.push_str("</g>\n<script><![CDATA[\n");
    svg.push_str(SCRIPT);
    svg.push_str("\n]]></script>\n</svg>\n");
    svg
}

/// The frames wide enough to draw, in depth-first order (a caller before
/// its callees): at least [`MIN_WIDTH_PX`] wide, and no more than
/// [`MAX_FRAMES`] of them, the widest kept. A callee is never wider than
/// its caller, so what is kept is a tree from the root.
fn drawn_frames(stacks: &Stacks, total: f64) -> Vec<usize> {
    if stacks.frames.is_empty() {
        return Vec::new();
    }
    let mut min = total * MIN_WIDTH_PX / (WIDTH - 2.0 * SIDE);
    let mut widths: Vec<f64> = stacks.frames[1..]
        .iter()
        .map(|f| f.inclusive)
        .filter(|&w| w > 0.0 && w >= min)
        .collect();
    // Frames exactly as wide as the narrowest kept: only as many as fit.
    let mut ties_allowed = usize::MAX;
    if widths.len() > MAX_FRAMES {
        let at = widths.len() - MAX_FRAMES;
        widths.select_nth_unstable_by(at, f64::total_cmp);
        min = min.max(widths[at]);
        let wider = widths.iter().filter(|&&w| w > min).count();
        ties_allowed = MAX_FRAMES.saturating_sub(wider);
    }
    let mut order = Vec::new();
    let mut stack = vec![0];
    while let Some(node) = stack.pop() {
        let frame = &stacks.frames[node];
        if node != 0 {
            if frame.inclusive <= 0.0 || frame.inclusive < min {
                continue;
            }
            if frame.inclusive == min {
                if ties_allowed == 0 {
                    continue;
                }
                ties_allowed -= 1;
            }
        }
        order.push(node);
        stack.extend(frame.children.iter().rev());
    }
    order
}

/// What hovering a frame shows.
fn info_line(frame: &super::stacks::Frame, unit: Unit, share: f64, counted: bool) -> String {
    let mut text = frame.name.clone();
    match unit {
        Unit::Nanoseconds => {
            let _ = write!(
                text,
                " ({}, {share:.2}%; self {}",
                human_duration(frame.inclusive),
                human_duration(frame.self_weight)
            );
        }
        Unit::Calls => {
            let _ = write!(text, " ({share:.2}% of calls");
        }
        Unit::Bytes => {
            let _ = write!(
                text,
                " ({}, {share:.2}%; self {}",
                super::memory_graph::human_bytes(frame.inclusive as u64),
                super::memory_graph::human_bytes(frame.self_weight as u64)
            );
        }
        Unit::Blocks => {
            let _ = write!(
                text,
                " ({} blocks, {share:.2}%; self {}",
                group_digits(frame.inclusive as u64),
                group_digits(frame.self_weight as u64)
            );
        }
    }
    if counted && frame.function.is_some() {
        match frame.calls {
            Some(calls) => {
                let _ = write!(text, "; {} calls", group_digits(calls));
            }
            None => text.push_str("; calls counted per function, not per path"),
        }
    }
    if unit == Unit::Nanoseconds && frame.function.is_some() {
        let _ = write!(text, "; {}", frame.time.describe());
    }
    text.push(')');
    if frame.open {
        text.push_str(" [still running when the profile was taken]");
    }
    if let Some(location) = &frame.location {
        let _ = write!(text, " {location}");
    }
    text
}

fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The label that fits in `width` pixels: the whole name; else the
/// function's own name (what follows the last `::` outside brackets), cut
/// at its end with `..` if need be; else nothing. The tail of a long name
/// ("..80)", "..rter") would tell nothing.
fn fit(name: &str, width: f64) -> String {
    let room = ((width - 6.0) / CHAR_WIDTH).floor();
    if room < 3.0 {
        return String::new();
    }
    let room = room as usize;
    if name.chars().count() <= room {
        return name.to_owned();
    }
    let own = own_name(name);
    let length = own.chars().count();
    if length <= room {
        return own.to_owned();
    }
    // At least three letters of the name before the `..`.
    if room < 5 {
        return String::new();
    }
    let start: String = own.chars().take(room - 2).collect();
    format!("{start}..")
}

/// A path's last segment outside brackets: `fmt` of
/// `<u128 as itoa::Unsigned>::fmt`, `go` of `a::<impl Foo<T>>::go`.
fn own_name(name: &str) -> &str {
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = name.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => start = i + 2,
            _ => {}
        }
    }
    &name[start.min(name.len())..]
}

/// A stable colour: the crate's band of hues, and within it a hue and a
/// lightness of the function's own, so that a crate is known by its colour
/// and two neighbours of one crate still differ.
pub(crate) fn colour(name: &str, root: bool) -> String {
    if root {
        return "rgb(200,200,200)".to_owned();
    }
    let krate = name.split("::").next().unwrap_or(name);
    let own = fnv(name);
    // Reds to blues; purple and magenta stay free for search matches and
    // for what a comparison finds new.
    let band = (fnv(krate) % 221) as i64;
    let hue = (band + (own % 41) as i64 - 20).clamp(0, 240);
    let saturation = 55 + (own / 41) % 30;
    let lightness = 55 + (own / 1230) % 25;
    format!("hsl({hue},{saturation}%,{lightness}%)")
}

pub(crate) fn diff_colour(change: Option<f64>, root: bool) -> String {
    if root {
        return "rgb(200,200,200)".to_owned();
    }
    match change {
        None => "rgb(190,120,230)".to_owned(),
        Some(change) => {
            let strength = (change.abs().min(1.0) * 200.0) as u32;
            let rest = 255 - strength;
            if change >= 0.0 {
                format!("rgb(255,{rest},{rest})")
            } else {
                format!("rgb({rest},{rest},255)")
            }
        }
    }
}

fn fnv(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x100_0000_01b3);
    }
    hash
}

/// Zoom, search and details, in the SVG itself. Frames carry their x and
/// width in weight units (`data-x`, `data-w`) and their depth (`data-d`).
const SCRIPT: &str = include_str!("flamegraph.js");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ProfileBuilder, appendix_b};

    #[test]
    fn every_wide_frame_is_drawn_with_its_calls_and_share() {
        let svg = render_flamegraph(&appendix_b(true), &FlameOptions::default());
        assert!(svg.starts_with("<?xml"));
        assert!(svg.contains("<script><![CDATA["));
        assert!(svg.contains("f_quarter"));
        assert!(
            svg.contains(" calls; measured)"),
            "exact calls in the tooltip"
        );
        // One group per frame; the root is drawn as `all`.
        assert!(svg.contains("<title>all ("));
        let groups = svg.matches("<g class=\"f\"").count();
        assert!(groups > 5, "{groups}");
    }

    #[test]
    fn a_counted_function_s_sampled_path_says_its_calls_are_the_function_s() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "get"], 0, 10.0)
            .counted("get", 7)
            .build();
        for node in &mut profile.nodes[1..] {
            node.sampled = node.calls == 0;
        }
        let svg = render_flamegraph(&profile, &FlameOptions::default());
        assert!(
            svg.contains("; calls counted per function, not per path; estimated from samples)"),
            "{svg}"
        );
        assert!(!svg.contains("; 0 calls"));
    }

    #[test]
    fn icicles_hang_from_the_top() {
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "leaf"], 1, 10.0)
            .build();
        let flame = render_flamegraph(&profile, &FlameOptions::default());
        let icicle = render_flamegraph(
            &profile,
            &FlameOptions {
                icicle: true,
                ..Default::default()
            },
        );
        let y_of_all = |svg: &str| -> f64 {
            let at = svg.find("<title>all").unwrap();
            let y = &svg[at..];
            let y = &y[y.find(" y=\"").unwrap() + 4..];
            y[..y.find('"').unwrap()].parse().unwrap()
        };
        assert!(y_of_all(&icicle) < y_of_all(&flame));
    }

    #[test]
    fn names_are_escaped_and_labels_fit() {
        let profile = ProfileBuilder::timed()
            .path(&["a::<impl Foo<T>>::go"], 1, 10.0)
            .build();
        let svg = render_flamegraph(&profile, &FlameOptions::default());
        assert!(svg.contains("a::&lt;impl Foo&lt;T&gt;&gt;::go"));
        assert!(!svg.contains("<impl"));
        // The function's own name, never the end of a long one.
        assert_eq!(fit("crate::module::function", 80.0), "function");
        assert_eq!(fit("crate::module::function", 50.0), "func..");
        assert_eq!(fit("<u128 as itoa::Unsigned>::fmt", 60.0), "fmt");
        assert_eq!(fit("lexer (app.js:1:1740)", 60.0), "lexer..");
        assert_eq!(fit("crate::module::function", 30.0), "");
        assert_eq!(fit("f", 1.0), "");
    }

    #[test]
    fn a_crate_keeps_its_band_of_hues_and_its_functions_differ() {
        let hue = |name: &str| -> i64 {
            let c = colour(name, false);
            c[4..c.find(',').unwrap()].parse().unwrap()
        };
        let names: Vec<String> = (0..40).map(|i| format!("fib::f{i}")).collect();
        let hues: Vec<i64> = names.iter().map(|n| hue(n)).collect();
        let (low, high) = (hues.iter().min().unwrap(), hues.iter().max().unwrap());
        assert!(high - low <= 40, "one crate, one band: {hues:?}");
        let colours: std::collections::HashSet<String> =
            names.iter().map(|n| colour(n, false)).collect();
        assert!(colours.len() >= 35, "{} colours of 40", colours.len());
        assert_eq!(colour("fib::fib", false), colour("fib::fib", false));
    }

    #[test]
    fn at_most_the_widest_frames_are_drawn() {
        use crate::profile::{Function, Node};
        // 200 chains of 100 calls, the later chains wider, and within a
        // chain every frame as wide as the chain.
        let mut profile = ProfileBuilder::timed().build();
        profile.functions = (0..200)
            .map(|c| Function::at(format!("f{c}"), "src/lib.rs", c + 1))
            .collect();
        for chain in 0..200usize {
            let mut parent = 0;
            for depth in 0..100 {
                profile.nodes.push(Node {
                    parent: Some(parent),
                    function: Some(chain),
                    calls: 1,
                    inclusive_nanos: (1 + chain) as f64 * (100 - depth) as f64,
                    ..Node::root()
                });
                parent = profile.nodes.len() - 1;
            }
        }
        let svg = render_flamegraph(&profile, &FlameOptions::default());
        let drawn = svg.matches("<g class=\"f\"").count();
        assert!(drawn <= MAX_FRAMES + 1, "{drawn}");
        assert!(drawn > MAX_FRAMES / 2, "{drawn}");
        // The widest chain is drawn from its first call.
        assert!(svg.contains("<title>f199 ("));

        // Every frame as wide as every other: still a tree, and no more.
        for node in &mut profile.nodes[1..] {
            node.inclusive_nanos = 1.0;
        }
        let svg = render_flamegraph(&profile, &FlameOptions::default());
        let drawn = svg.matches("<g class=\"f\"").count();
        assert!(drawn <= MAX_FRAMES + 1 && drawn > 100, "{drawn}");
    }

    #[test]
    fn tiny_frames_are_left_out() {
        let mut builder = ProfileBuilder::timed().path(&["main"], 1, 1e9);
        for i in 0..1000 {
            builder = builder.path(&["main", &format!("tiny{i}")], 1, 1.0);
        }
        let svg = render_flamegraph(&builder.build(), &FlameOptions::default());
        assert!(!svg.contains("tiny1"), "a 0.001 px frame is not drawn");
        // The frames they sit on are drawn: the root and main, no more.
        assert!(svg.contains("data-n=\"main\""), "{svg}");
        assert_eq!(svg.matches("<g class=\"f\"").count(), 2, "{svg}");
    }
}
