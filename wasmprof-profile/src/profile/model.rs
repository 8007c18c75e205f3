//! The profile file: what one run of an instrumented module measured.
//!
//! The file is JSON so that scripts can read it without this crate; its
//! `format` field carries a major version so that an old `report` refuses a
//! newer file instead of misreading it.

use serde::{Deserialize, Serialize};

/// The `format` value this version of wasmprof writes.
pub const FORMAT: &str = "wasmprof/2";
/// The major version this version of wasmprof reads.
pub const FORMAT_MAJOR: u32 = 2;

/// One profile: the calling-context tree of a run with the functions it names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Always [`FORMAT`] when written by this version.
    pub format: String,
    /// When the run ended, in nanoseconds since the Unix epoch.
    pub created_unix_nanos: u64,
    /// The program that was run and how.
    pub run: RunInfo,
    /// How times were measured.
    pub timer: TimerInfo,
    /// Every instrumented function that was entered at least once; indexed by
    /// [`Node::function`].
    pub functions: Vec<Function>,
    /// The calling-context tree. `nodes[0]` is the root (no function): the
    /// host, "spontaneous" in gprof's words. A node's parent always has a
    /// smaller index than the node. Written as columns (`wasmprof/2`);
    /// `wasmprof/1`'s array of node objects is read too.
    #[serde(with = "super::columns")]
    pub nodes: Vec<Node>,
    /// Calls that arrived after the tree reached its node cap. They are
    /// counted in an `<overflow>` node and not attributed to a function.
    #[serde(default)]
    pub overflow_calls: u64,
    /// What the futures of async functions did, one entry per async call
    /// path (node).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub futures: Vec<FutureStats>,
    /// Memory per call path, when the build recorded it (`--memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<super::MemoryProfile>,
    /// The animation frames, when a page ran any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<super::Frames>,
    /// Each thread's share of `nodes`, when more than one thread made
    /// instrumented calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<super::Thread>,
}

/// The futures of one async function on one call path: its node's calls
/// are the futures created, its time their polls' (CPU time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FutureStats {
    /// The node (an async function's call path).
    pub node: usize,
    /// Polls of its futures.
    pub polls: u64,
    /// Futures that completed.
    pub completions: u64,
    /// Dropped before completing.
    pub cancellations: u64,
    /// Neither completed nor dropped when the profile was taken.
    pub pending: u64,
    /// CPU time so far of the pending ones (part of the node's time).
    #[serde(default)]
    pub pending_nanos: f64,
    /// From first poll to completion, over the completed futures: wall time,
    /// awaits included, never part of any CPU time. Absent without a clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
}

/// Latencies of completed futures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// The completed futures measured.
    pub count: u64,
    /// Their latencies' sum.
    pub total_nanos: f64,
    /// The median: exact up to 4096 completions, from a uniform sample
    /// past them.
    pub median_nanos: f64,
    /// The longest.
    pub max_nanos: f64,
}

impl Latency {
    /// The latencies of two sets of futures together. Counts, totals and
    /// maxima add up; medians do not, and the one kept is that of the set
    /// with more completions, an estimate.
    pub fn combined(a: Option<Latency>, b: Option<&Latency>) -> Option<Latency> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Latency {
                count: a.count + b.count,
                total_nanos: a.total_nanos + b.total_nanos,
                median_nanos: if b.count > a.count {
                    b.median_nanos
                } else {
                    a.median_nanos
                },
                max_nanos: a.max_nanos.max(b.max_nanos),
            }),
            (a, b) => a.or_else(|| b.cloned()),
        }
    }
}

/// The program that was run, the host that ran it and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The cargo package the module was built from, if known.
    pub package: Option<String>,
    /// Path of the `.wasm` module that ran.
    pub module: String,
    /// SHA-256 of the module's bytes, hex.
    pub module_sha256: String,
    /// The host, e.g. `node v20.20.2`.
    pub host: String,
    /// The command line that produced the profile.
    pub command: Vec<String>,
    /// How the entry point was reached: `start`, `main`, `invoke NAME`.
    pub entry: String,
    /// Whether the run finished normally. When false, `incomplete_reason`
    /// says why and the frames still open are marked with [`Node::open`].
    pub complete: bool,
    /// Why the profile is incomplete: a trap, a panic, a timeout.
    pub incomplete_reason: Option<String>,
    /// The program's exit status as the host saw it.
    pub exit_code: i32,
    /// Wall-clock time of the whole run as the host measured it, in nanoseconds.
    pub wall_nanos: u64,
    /// Crate-wide instrumentation did not fully instrument functions
    /// smaller than this (`--min-size`, in syntax nodes) that had no loop:
    /// their time is their callers' self time. Absent when no size
    /// threshold applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size: Option<u64>,
    /// Those small functions were counted (their functions' `tier` is
    /// `counted`) rather than left out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub small_counted: bool,
    /// The call tree's capacity in nodes, as the module was built
    /// (`--max-nodes`); calls past it kept their count, not their path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<u64>,
    /// The engine's own samples of the same run (`run --sample`): the
    /// `.cpuprofile` saved beside this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_file: Option<String>,
    /// `--verify-counts`: every function's calls held against a second,
    /// independent count of the same run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_check: Option<CountCheck>,
    /// `--after`, `--duration`: the profile holds only what ran in this
    /// part of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Display frames the page drew (in the window, when there is one), as
    /// the page host counted them apart from the runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_frames: Option<u64>,
    /// An HTTP handler served requests (`--requests`): each request's
    /// calls are the share of the profile's thread of the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Requests>,
}

/// The requests an HTTP handler was served, and how long each took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requests {
    /// The path and query of each GET.
    pub path: String,
    /// Each request's latency, in the order served: from the call of the
    /// handler to the last byte of its response, in nanoseconds.
    pub latency_nanos: Vec<u64>,
    /// Each request's response status (0 when it set none).
    pub statuses: Vec<u16>,
    /// When each request's handler was called, from the start of serving
    /// (empty in profiles from before it was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_nanos: Vec<u64>,
}

impl Requests {
    /// The latency at quantile `q` (0.5 the median), by the nearest-rank
    /// method; `None` without requests.
    pub fn latency_quantile(&self, q: f64) -> Option<u64> {
        let mut sorted = self.latency_nanos.clone();
        sorted.sort_unstable();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
        sorted.get(rank - 1).copied()
    }
}

/// A part of a run, from its start (when the page began to load).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Where it starts.
    pub start_nanos: u64,
    /// Where it ends.
    pub end_nanos: u64,
}

/// What `--verify-counts` found: the profile's count of each function's
/// calls against the oracle's, counters compiled in beside the profiler's
/// that share nothing with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountCheck {
    /// Functions whose two counts were compared.
    pub functions: u64,
    /// Those whose counts differ (none, when the profile is right).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<CountDifference>,
    /// Threads still running when the profile was taken, whose calls the
    /// independent count has and the profile has not: the differences'
    /// cause, not a bug.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub threads_left_running: u64,
    /// The function of the one call a timeout or an interrupt cut between
    /// its two counts (the profile's made and the independent one not yet,
    /// or for an async function the other way round), taken out of
    /// `differences`: a run cut at any instruction can be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_call: Option<String>,
}

/// One function whose two counts differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountDifference {
    /// The function's name.
    pub function: String,
    /// Its calls in the profile: the nodes' and, counted only, its own.
    pub profile: u64,
    /// Its calls as the oracle counted them.
    pub oracle: u64,
}

/// How times in this profile were measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    /// `host` (the host's clock around each call) or `none` (counts only).
    pub mode: TimerMode,
    /// The clock's resolution in nanoseconds as the host measured it, if timed.
    pub resolution_nanos: Option<f64>,
    /// What one read of the clock cost, as the runtime measured it before
    /// timing the first call, in nanoseconds: each timed call's time has
    /// its reads taken out, and is uncertain by about that much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_cost_nanos: Option<f64>,
    /// The typical time between two samples: of a sampled profile, or of
    /// the engine's samples saved beside an instrumented run (`--sample`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval_nanos: Option<f64>,
    /// For a hybrid profile: how the samples were attributed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridInfo>,
    /// For a profile timed by the host clock with the engine's samples of
    /// the same run: what the samples added where the clock could not time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageInfo>,
}

/// What the engine's samples gave the nodes whose calls were too short to
/// time: each holds its share of its caller's measured time as the samples
/// share it, never less than the clock measured of it (marked `sampled`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CoverageInfo {
    /// Samples taken during the run.
    pub samples: u64,
    /// Nodes whose time is now estimated from samples.
    pub nodes: u64,
    /// Time those nodes gained, taken from their callers' self time.
    pub added_nanos: f64,
}

/// How the samples of a hybrid profile found their calling contexts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HybridInfo {
    /// Samples taken during the run.
    pub samples: u64,
    /// Samples whose stack led to a node of the tree.
    pub matched_samples: u64,
    /// Samples left out or attributed with a caveat, by reason.
    pub unmatched: Vec<UnmatchedSamples>,
}

/// Samples that could not be attributed as they were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnmatchedSamples {
    /// Why they could not be.
    pub reason: String,
    /// How many samples.
    pub samples: u64,
    /// The time they stand for.
    pub nanos: f64,
}

/// Which clock, if any, timed the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerMode {
    /// The host's `getTime` was read on entry and exit of every call.
    Host,
    /// No clock was read: calls are counted, times are all zero.
    None,
    /// An engine's sampler: times come from samples, and no call was
    /// counted (every `calls` is zero; [`Node::samples`] says how many
    /// samples each path has).
    Sampled,
    /// Exact counts from instrumentation without a clock (`--timer none`),
    /// and times from the engine's samples of the same run, each sample
    /// attributed to the calling-context node its stack leads to.
    Hybrid,
}

impl TimerMode {
    /// Whether the profile has times.
    pub fn timed(self) -> bool {
        self != TimerMode::None
    }

    /// Whether the profile has call counts.
    pub fn counted(self) -> bool {
        self != TimerMode::Sampled
    }
}

/// One instrumented function: a static site in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    /// `crate::module::Type::method`.
    pub name: String,
    /// The source file as rustc saw it (`src/lib.rs`).
    pub file: String,
    /// 1-based line of the function.
    pub line: u32,
    /// For a function read from a sampling profile: the column (for a wasm
    /// function, its body's offset in the module), which keeps two
    /// functions of one name in one script apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// How an instrumented function was instrumented; absent for a
    /// function read from a sampling profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<FunctionTier>,
    /// For a counted function, its exact number of calls: it has no node,
    /// its callers are not tracked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
    /// An `async fn`: its calls are futures created, its time their polls'.
    #[serde(rename = "async", default, skip_serializing_if = "std::ops::Not::not")]
    pub is_async: bool,
    /// The name rustc gives it, where `name` was given by hand (or kept
    /// from before another crate's macro renamed it): what the engines'
    /// samplers call its frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc_name: Option<String>,
    /// A test function (entered at the root): the runtime says so, however
    /// the test was written (by hand, or by a `macro_rules!` macro).
    #[serde(rename = "test", default, skip_serializing_if = "std::ops::Not::not")]
    pub is_test: bool,
}

impl Function {
    /// A function known by its name and source place alone: no tier, no
    /// counts of its own, not async, not a test (as a sampling profile's
    /// functions are).
    pub fn at(name: impl Into<String>, file: impl Into<String>, line: u32) -> Function {
        Function {
            name: name.into(),
            file: file.into(),
            line,
            column: None,
            tier: None,
            calls: None,
            is_async: false,
            rustc_name: None,
            is_test: false,
        }
    }
}

/// How an instrumented function was instrumented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionTier {
    /// Each call path is a node: counted and, when timed, timed.
    Full,
    /// Calls counted, nothing more: no node, no time (the function's time
    /// is in its callers' self time), callers not tracked
    /// (`#[wasmprof::instrument(count)]`, the small functions of crate-wide
    /// instrumentation).
    Counted,
}

/// One calling context: a function reached through one path from the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Index of the parent node; `None` only for the root.
    pub parent: Option<usize>,
    /// Index into [`Profile::functions`]; `None` for the root and the
    /// overflow node.
    pub function: Option<usize>,
    /// Exact number of calls through this path.
    pub calls: u64,
    /// Time spent in those calls including callees, in nanoseconds.
    pub inclusive_nanos: f64,
    /// The call was still running when the profile was taken (trap, panic,
    /// timeout); its time is missing from `inclusive_nanos`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
    /// Some calls were too short to time (shorter than a few clock reads):
    /// `inclusive_nanos` covers the timed ones, and the time of the others
    /// is in the parent's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partly_timed: bool,
    /// The calls were timed on a sample (they were short enough for timing
    /// each to cost too much): `inclusive_nanos` is estimated from it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sampled: bool,
    /// For a sampled profile: how many samples had exactly this stack.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samples: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Node {
    /// The root: the host, with no parent, no function and no calls.
    pub fn root() -> Node {
        Node {
            parent: None,
            function: None,
            calls: 0,
            inclusive_nanos: 0.0,
            open: false,
            partly_timed: false,
            sampled: false,
            samples: 0,
        }
    }
}

impl Profile {
    /// The root node's index.
    pub const ROOT: usize = 0;

    /// Self time of every node: its inclusive time less its children's,
    /// never negative (clock rounding could otherwise make it so).
    pub fn self_nanos(&self) -> Vec<f64> {
        let mut self_time: Vec<f64> = self.nodes.iter().map(|n| n.inclusive_nanos).collect();
        for node in &self.nodes {
            if let Some(parent) = node.parent {
                self_time[parent] -= node.inclusive_nanos;
            }
        }
        self_time.iter().map(|t| t.max(0.0)).collect()
    }

    /// The children of every node, each list in index order.
    pub fn children(&self) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); self.nodes.len()];
        for (index, node) in self.nodes.iter().enumerate() {
            if let Some(parent) = node.parent {
                children[parent].push(index);
            }
        }
        children
    }

    /// Whether `node` is a counted function's call path: one the engine's
    /// samples gave it, with time and no calls of its own.
    pub fn is_counted_path(&self, node: &Node) -> bool {
        node.function
            .and_then(|f| self.functions.get(f))
            .is_some_and(|f| f.tier == Some(FunctionTier::Counted))
    }

    /// The function of `node`'s parent, or `None` when called from the host.
    pub fn caller_function(&self, node: usize) -> Option<usize> {
        self.nodes[node].parent.and_then(|p| self.nodes[p].function)
    }

    /// The functions on the path from the root to `node`, outermost first.
    pub fn stack(&self, node: usize) -> Vec<usize> {
        let mut stack = Vec::new();
        let mut current = Some(node);
        while let Some(n) = current {
            if let Some(f) = self.nodes[n].function {
                stack.push(f);
            }
            current = self.nodes[n].parent;
        }
        stack.reverse();
        stack
    }
}

#[cfg(test)]
mod tests {
    use super::RunInfo;

    #[test]
    fn run_info_without_a_size_threshold_reads_and_writes_as_before() {
        let old = r#"{"package":"p","module":"m.wasm","module_sha256":"00","host":"node",
            "command":[],"entry":"main","complete":true,"incomplete_reason":null,
            "exit_code":0,"wall_nanos":1}"#;
        let mut run: RunInfo = serde_json::from_str(old).unwrap();
        assert_eq!(run.min_size, None);
        assert!(!serde_json::to_string(&run).unwrap().contains("min_size"));
        run.min_size = Some(3);
        let text = serde_json::to_string(&run).unwrap();
        assert!(text.contains(r#""min_size":3"#), "{text}");
        assert_eq!(serde_json::from_str::<RunInfo>(&text).unwrap(), run);
    }
}
