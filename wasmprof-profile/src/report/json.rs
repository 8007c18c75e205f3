//! `--format json`: the derived tables for scripts, with the raw profile.
//!
//! A script that wants "calls of `add`" or "time `main` spent calling
//! `parse`" should not have to walk the calling-context tree; this gives it
//! the function table and the arcs already summed (exactly, see
//! [`CallGraph`]), and the tree itself under `profile` for anything else.
//!
//! Shape (times in nanoseconds, as floats; `null` where there is nothing):
//!
//! ```json
//! {
//!   "format": "wasmprof-report/1",
//!   "timed": true,
//!   "total_nanos": 131257000.0,
//!   "functions": [
//!     { "id": 2, "name": "demo::add", "file": "src/lib.rs", "line": 9,
//!       "calls": 52500000, "recursive_calls": 0,
//!       "self_nanos": 105000000.0, "total_nanos": 105000000.0,
//!       "cycle": null, "open": false, "tier": "full" }
//!   ],
//!   "arcs": [
//!     { "caller": null, "caller_id": null, "callee": "demo::main", "callee_id": 0,
//!       "calls": 1, "time_nanos": 131257000.0,
//!       "self_nanos": 4000.0, "children_nanos": 131253000.0 }
//!   ],
//!   "cycles": [
//!     { "number": 1, "members": ["demo::is_even", "demo::is_odd"], "member_ids": [3, 4],
//!       "external_calls": 200, "internal_calls": 20200,
//!       "self_nanos": 40800.0, "children_nanos": 0.0 }
//!   ],
//!   "profile": { "format": "wasmprof/2", "...": "the profile file, unchanged" }
//! }
//! ```
//!
//! * `functions` is in the flat profile's order (self time, then calls,
//!   decreasing); `id` is the index in `profile.functions`, except for the
//!   `<overflow>` pseudo-function (calls after the call tree was full),
//!   which comes with the next id, `file` `""` and `line` 0.
//! * `tier` is `full` or, for a count-only function (exact calls, its
//!   time in its callers' self time), `counted`; absent for sampled
//!   profiles.
//! * `calls` counts every call; `recursive_calls` those a function made to
//!   itself directly. `total_nanos` is counted at outermost activations, so
//!   recursion is never counted twice; `cycle` is gprof's `<cycle N>` number.
//! * An arc's `caller` is `null` for calls from the host. `time_nanos` is
//!   the inclusive time of the callee's outermost activations entered
//!   through the arc (0 for a direct recursive call), `self_nanos` the
//!   callee's own time within them, `children_nanos` the rest. Arcs are
//!   sorted by callee id, then caller id, the host first.
//! * A cycle's `internal_calls` are calls between different members.
//! * An async function has `"async": true`; its `calls` are futures created
//!   and its times CPU time, inside its polls. `async_functions` then lists
//!   each with `calls`, `completions`, `cancellations`, `pending`, `polls`,
//!   `cpu_nanos`, `pending_nanos` (CPU time so far of the pending ones) and
//!   `latency` (`count`, `total_nanos`, `median_nanos`, `max_nanos`: first
//!   poll to completion, wall time, never part of a CPU time; `null`
//!   without a clock), in all and per call path (`paths`, each with its
//!   `node` and `path` of function names).

use std::io::{BufWriter, Write};

use crate::error::Error;
use serde::Serialize;

use super::callgraph::{CallGraph, FunctionId};
use super::futures::AsyncFunction;
use super::time_kind::TimeKind;
use crate::profile::{FunctionTier, Profile};

/// The `format` value of the document.
pub(crate) const REPORT_FORMAT: &str = "wasmprof-report/1";

/// Writes the JSON document described in the module docs, pretty-printed
/// and followed by a newline.
pub fn write_json(profile: &Profile, out: &mut dyn Write) -> crate::Result<()> {
    super::ensure_valid(profile)?;
    let graph = CallGraph::build(profile);
    let document = document(profile, &graph);
    let what = "JSON report";
    let mut buffered = BufWriter::new(out);
    serde_json::to_writer_pretty(&mut buffered, &document).map_err(Error::output(what))?;
    buffered.write_all(b"\n").map_err(Error::output(what))?;
    buffered.flush().map_err(Error::output(what))?;
    Ok(())
}

#[derive(Serialize)]
struct Document<'a> {
    format: &'static str,
    timed: bool,
    /// False for an engine's sampling profile: every `calls` is then 0.
    counted: bool,
    total_nanos: f64,
    functions: Vec<FunctionRow<'a>>,
    arcs: Vec<ArcRow<'a>>,
    cycles: Vec<CycleRow<'a>>,
    /// Absent when no async function was called.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    async_functions: Vec<AsyncFunction>,
    profile: &'a Profile,
}

#[derive(Serialize)]
struct FunctionRow<'a> {
    id: FunctionId,
    name: &'a str,
    file: &'a str,
    line: u32,
    calls: u64,
    recursive_calls: u64,
    self_nanos: f64,
    total_nanos: f64,
    cycle: Option<usize>,
    open: bool,
    /// `counted` for a count-only function (no time of its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    tier: Option<FunctionTier>,
    /// An async function: calls are futures created, times CPU time.
    #[serde(rename = "async", skip_serializing_if = "std::ops::Not::not")]
    is_async: bool,
    /// What its times are: `measured`, `partly_timed`, `sampled` or
    /// `not_measured`.
    time: TimeKind,
}

#[derive(Serialize)]
struct ArcRow<'a> {
    caller: Option<&'a str>,
    caller_id: Option<FunctionId>,
    callee: &'a str,
    callee_id: FunctionId,
    /// `null` into a counted function: its calls are not counted per
    /// caller, and its arcs are those the engine's samples found.
    calls: Option<u64>,
    time_nanos: f64,
    self_nanos: f64,
    children_nanos: f64,
}

#[derive(Serialize)]
struct CycleRow<'a> {
    number: usize,
    members: Vec<&'a str>,
    member_ids: Vec<FunctionId>,
    external_calls: u64,
    internal_calls: u64,
    self_nanos: f64,
    children_nanos: f64,
}

fn document<'a>(profile: &'a Profile, graph: &'a CallGraph) -> Document<'a> {
    let name = |f: FunctionId| graph.functions[f].name.as_str();
    let order =
        graph.ranked_by_self_time((0..graph.functions.len()).collect(), |stats| stats.calls);
    let functions = order
        .into_iter()
        .map(|id| {
            let f = &graph.functions[id];
            FunctionRow {
                id,
                name: &f.name,
                file: &f.file,
                line: f.line,
                calls: f.calls,
                recursive_calls: f.recursive_calls,
                self_nanos: f.self_nanos,
                total_nanos: f.total_nanos,
                cycle: graph.cycle_of(id).map(|c| c.number),
                open: f.open,
                tier: profile.functions.get(id).and_then(|f| f.tier),
                is_async: f.is_async,
                time: f.time,
            }
        })
        .collect();
    let arcs = graph
        .arcs
        .iter()
        .map(|a| ArcRow {
            caller: a.caller.map(name),
            caller_id: a.caller,
            callee: name(a.callee),
            callee_id: a.callee,
            calls: graph.arc_calls(a),
            time_nanos: a.total_nanos,
            self_nanos: a.callee_self_nanos,
            children_nanos: a.callee_children_nanos(),
        })
        .collect();
    let cycles = graph
        .cycles
        .iter()
        .map(|c| CycleRow {
            number: c.number,
            members: c.members.iter().map(|&m| name(m)).collect(),
            member_ids: c.members.clone(),
            external_calls: c.external_calls,
            internal_calls: c.internal_calls,
            self_nanos: c.self_nanos,
            children_nanos: c.children_nanos,
        })
        .collect();
    let async_functions = super::futures::summarize(profile);
    Document {
        async_functions,
        format: REPORT_FORMAT,
        timed: graph.timed,
        counted: graph.counted,
        total_nanos: graph.total_nanos,
        functions,
        arcs,
        cycles,
        profile,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{FullDisk, appendix_b, recursion};
    use serde_json::Value;

    fn to_value(profile: &Profile) -> Value {
        let mut bytes = Vec::new();
        write_json(profile, &mut bytes).unwrap();
        assert!(bytes.ends_with(b"}\n"));
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn functions_and_arcs_have_exact_numbers() {
        let json = to_value(&appendix_b(true));
        assert_eq!(json["format"], REPORT_FORMAT);
        let add = &json["functions"][0];
        assert_eq!(add["name"], "add");
        assert_eq!(add["calls"], 52_500_000);
        assert_eq!(add["self_nanos"], 105e6);
        let quarter_to_add = json["arcs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["caller"] == "f_quarter" && a["callee"] == "add")
            .unwrap();
        assert_eq!(quarter_to_add["calls"], 17_500_000);
        assert_eq!(quarter_to_add["time_nanos"], 35e6);
        let from_host = json["arcs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["callee"] == "main")
            .unwrap();
        assert_eq!(from_host["caller"], Value::Null);
        assert_eq!(json["profile"]["format"], "wasmprof/2");
    }

    #[test]
    fn cycles_and_recursion_are_described() {
        let json = to_value(&recursion(false));
        assert_eq!(json["timed"], false);
        let cycle = &json["cycles"][0];
        assert_eq!(cycle["members"], serde_json::json!(["is_even", "is_odd"]));
        assert_eq!(cycle["external_calls"], 200);
        assert_eq!(cycle["internal_calls"], 20_200);
        let fib = json["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "fib")
            .unwrap();
        assert_eq!(fib["calls"], 4_378_200);
        assert_eq!(fib["recursive_calls"], 4_378_000);
        assert_eq!(fib["cycle"], Value::Null);
    }

    #[test]
    fn count_only_functions_say_their_tier() {
        let profile = crate::fixtures::ProfileBuilder::untimed()
            .path(&["main"], 1, 0.0)
            .counted("get", 7)
            .build();
        let value = to_value(&profile);
        let get = value["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "get")
            .unwrap();
        assert_eq!(get["tier"], "counted");
        assert_eq!(get["calls"], 7);
    }

    #[test]
    fn arcs_into_a_counted_function_have_no_count() {
        let profile = crate::fixtures::ProfileBuilder::timed()
            .path(&["main"], 1, 5.0)
            .path(&["main", "get"], 0, 3.0)
            .counted("get", 7)
            .build();
        let value = to_value(&profile);
        let arc = value["arcs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["callee"] == "get")
            .unwrap();
        assert_eq!(arc["caller"], "main");
        assert!(arc["calls"].is_null(), "{arc}");
        assert_eq!(arc["time_nanos"], 3.0);
    }

    #[test]
    fn a_failing_writer_is_an_error_not_a_panic() {
        let err = write_json(&appendix_b(false), &mut FullDisk).unwrap_err();
        let text = crate::error::with_causes(&err);
        assert!(text.contains("disk full"), "{text}");
    }

    #[test]
    fn async_functions_have_their_futures_figures() {
        let profile = crate::fixtures::ProfileBuilder::timed()
            .path(&["app::batch", "app::load"], 3, 6e6)
            .future(&["app::batch", "app::load"], 9, 2, 1, Some(50e6))
            .build();
        let v = to_value(&profile);
        let load = v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "app::load")
            .unwrap();
        assert_eq!(load["async"], true);
        let row = &v["async_functions"][0];
        assert_eq!(row["name"], "app::load");
        assert_eq!(
            (
                &row["calls"],
                &row["completions"],
                &row["cancellations"],
                &row["polls"]
            ),
            (
                &Value::from(3),
                &Value::from(2),
                &Value::from(1),
                &Value::from(9)
            )
        );
        assert_eq!(row["latency"]["median_nanos"], 50e6);
        assert_eq!(row["paths"][0]["path"][1], "app::load");
        let batch = v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "app::batch")
            .unwrap();
        assert!(batch.get("async").is_none(), "sync functions say nothing");
    }
}
