//! `--format html`: one self-contained page, for a browser opened on the
//! file itself (`file://`, offline: no network, no CDN). It holds the run's
//! metadata and notes, the summary, the flat profile as a table that sorts
//! and filters, a call-graph view (a function with its callers and callees,
//! each arc's exact calls and time, a click away from the next), and the
//! flame graph.
//!
//! The page gets functions and arcs, never the whole tree: a profile of
//! 100,000 nodes has far fewer functions, and the flame graph leaves out
//! frames too narrow to see. The script (`html/report.js`) builds the
//! views from the JSON in the page.

use std::io::Write;

use crate::error::Error;
use serde_json::json;

use super::callgraph::CallGraph;
use super::flamegraph::{self, FlameOptions};
use super::preamble;
use super::summary::render_summary;
use super::time_kind::TimeKind;
use crate::html_text::{escape, script_json};
use crate::profile::Profile;

mod animation_frames;
mod memory_section;

const SCRIPT: &str = include_str!("html/report.js");
const STYLE: &str = include_str!("html/report.css");

pub(crate) fn write_html(profile: &Profile, out: &mut dyn Write) -> crate::Result<()> {
    out.write_all(render_html(profile).as_bytes())
        .map_err(Error::output("HTML report"))
}

pub(crate) fn render_html(profile: &Profile) -> String {
    let graph = CallGraph::build(profile);
    // An engine's profile counts samples, not calls: its table shows them.
    let sampled = profile.timer.mode == crate::profile::TimerMode::Sampled;
    let mut self_samples = vec![0u64; graph.functions.len()];
    for node in &profile.nodes {
        if let Some(samples) = node.function.and_then(|f| self_samples.get_mut(f)) {
            *samples += node.samples;
        }
    }
    let functions: Vec<serde_json::Value> = graph
        .functions
        .iter()
        .enumerate()
        .filter(|(id, _)| graph.is_active(*id))
        .map(|(id, f)| {
            let mut function = json!({
                "id": id,
                "name": f.name,
                "file": f.file,
                "line": f.line,
                "calls": f.calls,
                "self": f.self_nanos,
                "total": f.total_nanos,
                "open": f.open,
                "cycle": f.cycle.map(|c| graph.cycles[c].number),
            });
            if f.counted_only {
                function["countedOnly"] = json!(true);
            }
            if sampled {
                function["samples"] = json!(self_samples.get(id).copied().unwrap_or(0));
            }
            // A wasm frame's place is its byte offset (DevTools' `:1:1740`).
            if let Some(column) = profile.functions.get(id).and_then(|f| f.column) {
                function["column"] = json!(column);
            }
            if f.is_async {
                function["async"] = json!(true);
            }
            if f.time != TimeKind::Measured && profile.timer.mode.timed() {
                function["timeMark"] = json!(f.time.mark().trim());
                function["timeKind"] = json!(f.time.describe());
            }
            function
        })
        .collect();
    let arcs: Vec<serde_json::Value> = graph
        .arcs
        .iter()
        .map(|a| {
            json!({
                "caller": a.caller,
                "callee": a.callee,
                "calls": graph.arc_calls(a),
                "total": a.total_nanos,
                "self": a.callee_self_nanos,
            })
        })
        .collect();
    let timer = &profile.timer;
    let run = &profile.run;
    let title = page_title(profile);
    let data = json!({
        "title": title,
        "sampled": sampled,
        "runLine": preamble::run_line(profile),
        "notes": preamble::notes(profile),
        "meta": {
            "package": run.package,
            "module": run.module,
            "host": run.host,
            "entry": run.entry,
            "command": run.command.join(" "),
            "timer": format!("{:?}", timer.mode).to_lowercase(),
            "resolutionNanos": timer.resolution_nanos,
            "sampleIntervalNanos": timer.sample_interval_nanos,
            "complete": run.complete,
            "incompleteReason": run.incomplete_reason,
            // An engine's profile read from a file tells no exit status.
            "exitCode": (!sampled).then_some(run.exit_code),
            "wallNanos": run.wall_nanos,
        },
        "timed": graph.timed,
        "counted": graph.counted,
        "totalNanos": graph.total_nanos,
        "functions": functions,
        "arcs": arcs,
    });
    let flame = flamegraph::render_flamegraph(profile, &FlameOptions::default());
    // Inline SVG: no XML declaration inside HTML.
    let flame = flame
        .split_once("?>\n")
        .map_or(flame.as_str(), |(_, svg)| svg)
        .to_owned();
    // The run line and notes are the page's header already.
    let summary = render_summary(profile, super::DEFAULT_SUMMARY_TOP);
    let summary = match summary.find("\ntop ") {
        Some(at) => summary[at + 1..].to_owned(),
        None => summary,
    };
    let memory = memory_section::section(profile).unwrap_or_default();
    let frames = animation_frames::section(profile).unwrap_or_default();
    let mut section_links = if memory.is_empty() {
        ""
    } else {
        " <a href=\"#memory\">Memory</a>"
    }
    .to_owned();
    if !frames.is_empty() {
        section_links.push_str(" <a href=\"#frames\">Frames</a>");
    }
    let calls_header = if sampled {
        "<th data-key=\"samples\" data-numeric>samples</th>"
    } else {
        "<th data-key=\"calls\" data-numeric>calls</th>"
    };
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>wasmprof: {title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>wasmprof: {title}</h1><p id=\"run-line\"></p><ul id=\"notes\"></ul></header>\n\
         <nav><a href=\"#summary\">Summary</a> <a href=\"#flat\">Flat profile</a> \
         <a href=\"#graph\">Call graph</a> <a href=\"#flame\">Flame graph</a>{section_links} \
         <a href=\"#run\">Run</a></nav>\n\
         <section id=\"summary\"><h2>Summary</h2><pre>{summary}</pre></section>\n\
         <section id=\"flat\"><h2>Flat profile</h2>\
         <input id=\"filter\" type=\"search\" placeholder=\"Filter functions (text or /regex/)\">\
         <span id=\"shown\"></span>\
         <table id=\"functions\"><thead><tr>\
         <th data-key=\"self\" data-numeric>self</th><th data-key=\"selfShare\" data-numeric>self %</th>\
         <th data-key=\"total\" data-numeric>total</th>{calls_header}\
         <th data-key=\"name\" class=\"name\">function</th><th data-key=\"place\" class=\"where\">where</th></tr></thead>\
         <tbody></tbody></table></section>\n\
         <section id=\"graph\"><h2>Call graph</h2><p class=\"hint\">Click a function anywhere \
         to see who calls it and what it calls.</p><div id=\"focus\"></div></section>\n\
         <section id=\"flame\"><h2>Flame graph</h2><div class=\"flame\">{flame}</div></section>\n\
         {memory}{frames}\
         <section id=\"run\"><h2>Run</h2><table id=\"meta\"></table></section>\n\
         <script type=\"application/json\" id=\"data\">{data}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        title = escape(&title),
        summary = escape(&summary),
        data = script_json(&data),
    )
}

/// What the page is about: the package, or for an engine's profile read
/// from a file, that file's name; never a generic "wasmprof profile".
fn page_title(profile: &Profile) -> String {
    if let Some(package) = &profile.run.package {
        return package.clone();
    }
    let module = std::path::Path::new(&profile.run.module);
    match module.file_name() {
        Some(name) => name.to_string_lossy().into_owned(),
        None if !profile.run.module.is_empty() => profile.run.module.clone(),
        None => "a profile".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ProfileBuilder, appendix_b};

    #[test]
    fn the_page_holds_everything_and_fetches_nothing() {
        let page = render_html(&appendix_b(true));
        assert!(page.starts_with("<!doctype html>"));
        for needle in [
            "id=\"functions\"",
            "id=\"focus\"",
            "<svg",
            "id=\"data\"",
            "f_quarter",
        ] {
            assert!(page.contains(needle), "{needle}");
        }
        for remote in ["http://", "https://", "src=\"", "href=\"http", "@import"] {
            let found = page
                .match_indices(remote)
                .map(|(at, _)| &page[at.saturating_sub(40)..(at + 60).min(page.len())])
                .filter(|context| !context.contains("www.w3.org/2000/svg"))
                .collect::<Vec<_>>();
            assert!(found.is_empty(), "{remote}: {found:?}");
        }
    }

    #[test]
    fn a_recursive_function_s_calls_are_all_its_calls() {
        // gprof's flat profile shows fib's 200 calls from main; the page,
        // as JSON and pprof, every call.
        let page = render_html(&crate::fixtures::recursion(false));
        assert!(
            page.contains(r#"{"calls":4378200,"cycle":null,"file":"src/lib.rs","id":1,"line":20,"name":"fib","#),
            "{page}"
        );
    }

    #[test]
    fn counted_functions_are_flagged_for_the_page() {
        let profile = crate::fixtures::ProfileBuilder::timed()
            .path(&["main"], 1, 5.0)
            .counted("get", 9)
            .build();
        let page = render_html(&profile);
        assert!(
            page.contains(r#""countedOnly":true"#),
            "no flag in the page's data"
        );
        assert_eq!(page.matches(r#""countedOnly":true"#).count(), 1);
        assert!(!render_html(&appendix_b(true)).contains(r#""countedOnly""#));
    }

    #[test]
    fn async_functions_are_flagged_for_the_page() {
        let page = render_html(
            &ProfileBuilder::timed()
                .path(&["app::batch", "app::load"], 3, 6e6)
                .future(&["app::batch", "app::load"], 9, 3, 0, Some(20e6))
                .build(),
        );
        assert_eq!(page.matches(r#""async":true"#).count(), 1);
        assert!(page.contains("(async)"), "the script marks them");
    }

    #[test]
    fn a_profile_with_memory_gets_a_memory_section_and_others_none() {
        let page = render_html(&crate::fixtures::memory_profile());
        assert!(page.contains("<a href=\"#memory\">Memory</a>"), "the link");
        let section = &page[page.find("<section id=\"memory\">").expect("the section")..];
        assert!(section.contains("<h3>Top allocators</h3>"), "{section}");
        // inner's 400 live bytes, under the path that allocated them.
        assert!(
            section.contains("<tr><td>400</td><td class=\"name\">outer → inner</td></tr>"),
            "{section}"
        );
        assert!(
            section.contains("widths: bytes allocated"),
            "its flame graph"
        );
        assert!(!render_html(&appendix_b(true)).contains("id=\"memory\""));
    }

    #[test]
    fn a_name_cannot_close_the_data_script() {
        let mut profile = appendix_b(true);
        profile.functions[0].name = "</script><b>".into();
        let page = render_html(&profile);
        assert!(!page.contains("</script><b>"));
    }
}
