//! The page's Memory section (`run --memory`): the totals, the top
//! allocators, what was live at the end and held at the peak, by call
//! path, each growth of linear memory, and the flame graph of bytes
//! allocated. Written out as HTML: it needs no script.

use std::fmt::Write as _;

use crate::html_text::escape;
use crate::profile::{MemoryWeight, PathMemory, Profile};
use crate::report::flamegraph::{self, FlameOptions};
use crate::report::memory_graph::{MemoryGraph, call_path, human_bytes};
use crate::report::words::{OUTSIDE, plural};

/// Rows each table shows at most.
const TOP: usize = 20;

/// The section, or nothing for a profile without memory.
pub(super) fn section(profile: &Profile) -> Option<String> {
    let memory = profile.memory.as_ref()?;
    let graph = MemoryGraph::build(profile)?;
    let mut html = String::from("<section id=\"memory\"><h2>Memory</h2>\n");
    let _ = writeln!(
        html,
        "<p>{} allocations, {} in all. Peak: {} in {}. Live at the end: {} in {}. \
         Linear memory: {} &rarr; {} pages of 64 KiB, {}. The profiler's own: {}.</p>",
        graph.totals.allocs,
        human_bytes(graph.totals.alloc_bytes),
        human_bytes(memory.peak_bytes),
        plural(memory.peak_blocks, "block"),
        human_bytes(memory.live_bytes),
        plural(memory.live_blocks, "block"),
        memory.first_pages,
        memory.pages,
        plural(memory.grows.len() as u64 + memory.grows_dropped, "growth"),
        human_bytes(memory.runtime_bytes),
    );
    if let Some(failed) = &memory.failed {
        let _ = writeln!(
            html,
            "<p class=\"warning\">Out of memory: an allocation of {} failed in {}.</p>",
            human_bytes(failed.bytes),
            escape(&call_path(profile, failed.node, " → "))
        );
    }
    html.push_str("<h3>Top allocators</h3>\n<table class=\"memory\"><thead><tr>\
        <th>allocs</th><th>bytes</th><th>total bytes</th><th>reallocs</th><th>frees</th>\
        <th>live bytes</th><th>peak bytes</th><th class=\"name\">function</th></tr></thead><tbody>\n");
    for &function in graph.ranked().iter().take(TOP) {
        let figures = &graph.functions[function];
        row(
            &mut html,
            &figures.own,
            figures.total_bytes,
            &profile.functions[function].name,
        );
    }
    if graph.outside != PathMemory::default() {
        row(
            &mut html,
            &graph.outside,
            graph.outside.alloc_bytes,
            OUTSIDE,
        );
    }
    html.push_str("</tbody></table>\n");
    let by_node = memory.by_node(profile.nodes.len());
    for (title, figure, empty) in [
        (
            "Live at the end, by the path that allocated it",
            MemoryWeight::LiveBytes,
            "Nothing allocated was still live.",
        ),
        (
            "Held at the peak",
            MemoryWeight::PeakBytes,
            "Nothing was held at the peak.",
        ),
    ] {
        let _ = writeln!(html, "<h3>{title}</h3>");
        let mut paths: Vec<(usize, u64)> = by_node
            .iter()
            .enumerate()
            .map(|(node, m)| (node, m.weight(figure)))
            .filter(|&(_, bytes)| bytes > 0)
            .collect();
        paths.sort_by_key(|&(node, bytes)| (std::cmp::Reverse(bytes), node));
        if paths.is_empty() {
            let _ = writeln!(html, "<p>{empty}</p>");
            continue;
        }
        html.push_str("<table class=\"memory\"><thead><tr><th>bytes</th><th class=\"name\">call path</th></tr></thead><tbody>\n");
        for &(node, bytes) in paths.iter().take(TOP) {
            let _ = writeln!(
                html,
                "<tr><td>{bytes}</td><td class=\"name\">{}</td></tr>",
                escape(&call_path(profile, node, " → "))
            );
        }
        html.push_str("</tbody></table>\n");
    }
    if !memory.grows.is_empty() {
        html.push_str("<h3>Growths of linear memory</h3>\n<table class=\"memory\"><thead><tr>\
            <th>pages</th><th>asked for</th><th class=\"name\">call path</th></tr></thead><tbody>\n");
        for grow in memory.grows.iter().take(TOP * 5) {
            let _ = writeln!(
                html,
                "<tr><td>{} &rarr; {}</td><td>{}</td><td class=\"name\">{}</td></tr>",
                grow.pages_before,
                grow.pages_after,
                human_bytes(grow.request),
                escape(&call_path(profile, grow.node, " → "))
            );
        }
        html.push_str("</tbody></table>\n");
    }
    let flame = flamegraph::render_flamegraph(
        profile,
        &FlameOptions {
            weight: Some(MemoryWeight::AllocBytes),
            title: Some("bytes allocated".to_owned()),
            ..FlameOptions::default()
        },
    );
    let flame = flame
        .split_once("?>\n")
        .map_or(flame.as_str(), |(_, svg)| svg);
    let _ = writeln!(
        html,
        "<h3>Flame graph of bytes allocated</h3><div class=\"flame\">{flame}</div>\n</section>"
    );
    Some(html)
}

fn row(html: &mut String, m: &PathMemory, total_bytes: u64, name: &str) {
    let _ = writeln!(
        html,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td class=\"name\">{}</td></tr>",
        m.allocs,
        m.alloc_bytes,
        total_bytes,
        m.reallocs,
        m.frees,
        m.live_bytes,
        m.peak_bytes,
        escape(name)
    );
}
