//! Memory per function (`run --memory`): a flat profile and a call graph in
//! gprof's manner, in bytes and blocks. Like the futures' section it comes
//! after gprof's own sections, so that tools reading those find them where
//! they expect them.

use super::GprofWriter;
use crate::profile::PathMemory;
use crate::report::memory_graph::{MemoryGraph, call_path, human_bytes};
use crate::report::words::{OUTSIDE, plural};

pub(super) fn write(report: &GprofWriter, text: &mut String) {
    let Some(graph) = MemoryGraph::build(report.profile) else {
        return;
    };
    let Some(memory) = &report.profile.memory else {
        return;
    };
    text.push_str("\x0c\nMemory flat profile\n\n");
    text.push_str(
        "Exact: every allocation, reallocation and free is charged to the instrumented\n\
         call current when it was made (a count-only function's to its caller). A\n\
         reallocation counts as the free of the old block and the allocation of the new.\n\
         Live: allocated here and not freed when the profile was taken, wherever it is\n\
         held. Peak: what was held when the program's live bytes were highest. Total\n\
         bytes: allocated in the calls of the function, its callees included.\n\n",
    );
    text.push_str(&format!(
        "{:>9} {:>12} {:>12} {:>8} {:>9} {:>12} {:>7} {:>11} {:>11} {:>6}  name\n",
        "allocs",
        "bytes",
        "total bytes",
        "reallocs",
        "frees",
        "freed bytes",
        "live",
        "live bytes",
        "peak bytes",
        "grows"
    ));
    let ranked = graph.ranked();
    for &function in &ranked {
        let figures = &graph.functions[function];
        flat_row(
            text,
            &figures.own,
            figures.total_bytes,
            &report.profile.functions[function].name,
        );
    }
    for (figures, name) in [(&graph.outside, OUTSIDE), (&graph.overflow, "<overflow>")] {
        if *figures != PathMemory::default() {
            flat_row(text, figures, figures.alloc_bytes, name);
        }
    }
    text.push('\n');
    text.push_str(&format!(
        "Peak: {} in {}. Live at the end: {} in {}. Linear memory: {} -> {} pages of \
         64 KiB, {}. The profiler's own: {}.\n",
        bytes_exact(memory.peak_bytes),
        plural(memory.peak_blocks, "block"),
        bytes_exact(memory.live_bytes),
        plural(memory.live_blocks, "block"),
        memory.first_pages,
        memory.pages,
        plural(memory.grows.len() as u64 + memory.grows_dropped, "growth"),
        bytes_exact(memory.runtime_bytes),
    ));
    for grow in &memory.grows {
        text.push_str(&format!(
            "  memory.grow {} -> {} pages, asking for {} bytes, in {}\n",
            grow.pages_before,
            grow.pages_after,
            grow.request,
            call_path(report.profile, grow.node, " -> ")
        ));
    }
    if let Some(failed) = &memory.failed {
        text.push_str(&format!(
            "Out of memory: an allocation of {} bytes failed in {}.\n",
            failed.bytes,
            call_path(report.profile, failed.node, " -> ")
        ));
    }
    write_graph(report, &graph, &ranked, text);
}

fn flat_row(text: &mut String, m: &PathMemory, total_bytes: u64, name: &str) {
    text.push_str(&format!(
        "{:>9} {:>12} {:>12} {:>8} {:>9} {:>12} {:>7} {:>11} {:>11} {:>6}  {name}\n",
        m.allocs,
        m.alloc_bytes,
        total_bytes,
        m.reallocs,
        m.frees,
        m.freed_bytes,
        m.live_blocks,
        m.live_bytes,
        m.peak_bytes,
        m.grows,
    ));
}

/// The call graph of bytes allocated: for each function, its callers and
/// its callees with what the calls through each arc allocated.
fn write_graph(report: &GprofWriter, graph: &MemoryGraph, ranked: &[usize], text: &mut String) {
    text.push_str("\nMemory call graph\n\n");
    text.push_str(
        "Bytes allocated in the calls through each arc, by the callee itself (self) and by\n\
         its callees (children); allocs are the callee's own blocks. Caller lines come\n\
         before the function's line, callee lines after.\n\n",
    );
    let mut index = vec![None; report.profile.functions.len()];
    for (position, &function) in ranked.iter().enumerate() {
        index[function] = Some(position + 1);
    }
    let name = |function: usize| match index[function] {
        Some(i) => format!("{} [{i}]", report.profile.functions[function].name),
        None => report.profile.functions[function].name.clone(),
    };
    text.push_str(&format!(
        "{:<7} {:>6} {:>12} {:>12} {:>9}  name\n",
        "index", "%bytes", "self", "children", "allocs"
    ));
    let all = graph.totals.alloc_bytes.max(1) as f64;
    for (position, &function) in ranked.iter().enumerate() {
        for arc in graph.arcs_into(function) {
            let caller = arc.caller.map_or_else(|| "<spontaneous>".to_owned(), name);
            text.push_str(&format!(
                "{:<7} {:>6} {:>12} {:>12} {:>9}      {caller}\n",
                "",
                "",
                arc.self_bytes,
                arc.total_bytes - arc.self_bytes,
                arc.self_allocs
            ));
        }
        let figures = &graph.functions[function];
        text.push_str(&format!(
            "{:<7} {:>6.1} {:>12} {:>12} {:>9}  {}\n",
            format!("[{}]", position + 1),
            100.0 * figures.total_bytes as f64 / all,
            figures.own.alloc_bytes,
            figures.total_bytes.saturating_sub(figures.own.alloc_bytes),
            figures.own.allocs,
            name(function)
        ));
        for arc in graph.arcs_from(function) {
            text.push_str(&format!(
                "{:<7} {:>6} {:>12} {:>12} {:>9}      {}\n",
                "",
                "",
                arc.self_bytes,
                arc.total_bytes - arc.self_bytes,
                arc.self_allocs,
                name(arc.callee)
            ));
        }
        text.push_str("-----------------------------------------------\n");
    }
}

/// `1049576 bytes (1.0 MiB)`.
fn bytes_exact(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{bytes} bytes ({})", human_bytes(bytes))
    }
}
