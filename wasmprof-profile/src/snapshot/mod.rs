//! Turns what the host brought back — the snapshot bytes and how the run
//! ended — into a profile file.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use wasmprof_wire::{Snapshot, Tier};

pub mod count_check;
mod rustc_names;

use crate::profile::{
    self, CountCheck, Function, FunctionTier, FutureStats, Latency, Node, Profile, RunInfo,
    TimerInfo, TimerMode,
};

/// How a run ended, as the host scripts and the wasmtime host say it
/// (`"status"` in their reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The entry point returned (or the program exited with 0).
    Ok,
    /// The program exited with a non-zero code.
    Exit,
    /// The program trapped or threw: a panic, an abort, an unreachable.
    Trap,
    /// `--timeout` stopped it.
    Timeout,
    /// The host failed around it (a load error, a crash, a lost browser).
    Error,
    /// The run was refused as asked for (a wrong `--invoke`).
    Usage,
    /// Ctrl-C stopped it.
    Interrupted,
}

impl RunStatus {
    /// The word the reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Exit => "exit",
            RunStatus::Trap => "trap",
            RunStatus::Timeout => "timeout",
            RunStatus::Error => "error",
            RunStatus::Usage => "usage",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// The program ran to its end, with its own exit code.
    pub fn finished(self) -> bool {
        matches!(self, RunStatus::Ok | RunStatus::Exit)
    }

    /// `Ok` for exit code 0, `Exit` otherwise.
    pub fn of_exit_code(code: i32) -> RunStatus {
        if code == 0 {
            RunStatus::Ok
        } else {
            RunStatus::Exit
        }
    }

    /// A status word from a host script's report; one this version does not
    /// know is an error.
    pub fn from_report(word: Option<&str>) -> RunStatus {
        word.and_then(|w| serde_json::from_value(serde_json::Value::String(w.to_owned())).ok())
            .unwrap_or(RunStatus::Error)
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the run went, as its host saw it: what the profile keeps of the
/// host's account besides the snapshot. Made with [`RunEnding::new`],
/// then the rest set: it grows with what hosts report.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunEnding {
    /// The host and its version (`node v20.20.2`).
    pub host: String,
    /// How the run ended.
    pub status: RunStatus,
    /// What the host said of an ending other than `Ok`: the trap, the error.
    pub message: Option<String>,
    /// The program's exit code.
    pub exit_code: i32,
    /// The run's wall time, the host's start-up included.
    pub wall_nanos: u64,
    /// The resolution of the clock the program was timed with.
    pub timer_resolution_nanos: Option<f64>,
    /// A browser run ended by the grace period while the page still had
    /// work scheduled: what it was (`2 timers, 1 animation frame`).
    pub pending_work: Option<String>,
    /// The part of the run the snapshot covers, when a window was asked for.
    pub window: Option<profile::Window>,
    /// Display frames the page drew (in the window, when there is one).
    pub display_frames: Option<u64>,
    /// Threads of the program still running when its main thread was done.
    pub threads_left_running: usize,
    /// An HTTP handler's requests, as served.
    pub requests: Option<profile::Requests>,
}

impl RunEnding {
    /// A run in `host` that ended as `status`, with nothing else known yet.
    pub fn new(host: String, status: RunStatus) -> RunEnding {
        RunEnding {
            host,
            status,
            message: None,
            exit_code: 0,
            wall_nanos: 0,
            timer_resolution_nanos: None,
            pending_work: None,
            window: None,
            display_frames: None,
            threads_left_running: 0,
            requests: None,
        }
    }

    /// A run no host gave an account of: a snapshot file read on its own.
    pub fn unrecorded() -> RunEnding {
        RunEnding::new("not recorded (a snapshot file)".to_owned(), RunStatus::Ok)
    }
}

/// What the run was, independent of what it measured. Made with
/// `Default`, then its fields set.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunContext {
    /// The package the module was built from.
    pub package: String,
    /// The module's path; its name section names the functions.
    pub module: String,
    /// The module's SHA-256, in hex.
    pub module_sha256: String,
    /// The command that ran it.
    pub command: Vec<String>,
    /// The entry point called.
    pub entry: String,
    /// Crate-wide instrumentation's `--min-size`: functions below it were
    /// left out or only counted.
    pub min_size: Option<usize>,
    /// Those small functions were counted (`--count-small`).
    pub small_counted: bool,
}

/// A snapshot made a profile, and what could not be done on the way.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The profile.
    pub profile: Profile,
    /// What the user should hear: for example, functions that keep the
    /// macro's names because the module could not be read.
    pub warnings: Vec<String>,
}

/// Why a run whose threads were cut in the middle of calls is incomplete.
fn threads_cut(count: usize) -> String {
    format!(
        "{count} thread{s} of the program {were} still inside instrumented calls when its \
         main thread was done: those calls are counted and marked as not returned, and \
         the time they had run is not in this profile",
        s = if count == 1 { "" } else { "s" },
        were = if count == 1 { "was" } else { "were" },
    )
}

/// The threads that were in the middle of a call when the main one was
/// done: the runtime marks a running thread's open calls as not returned.
/// Only counted when the host saw threads outlive the main one. A thread
/// that stood waiting (its innermost open call is one of
/// [`profile::WAIT_FUNCTIONS`], as an idle rayon worker is when rayon-core
/// is instrumented), or that ran no job (every open call is its pool's
/// loop: a worker just started, or looking for work), was cut from
/// nothing: it is idle, not cut off.
fn threads_in_calls(snapshot: &Snapshot, functions: &[Function], host: &RunEnding) -> usize {
    if host.threads_left_running == 0 {
        return 0;
    }
    let open = |n: &&wasmprof_wire::ThreadNode| n.flags & wasmprof_wire::NEVER_RETURNED != 0;
    let named = |node: u32, rule: fn(&str) -> bool| {
        snapshot
            .nodes
            .get(node as usize)
            .and_then(|n| functions.get(n.function as usize))
            .is_some_and(|f| rule(&f.name))
    };
    let waits = |&node: &u32| named(node, profile::is_wait_function);
    let between_jobs = |&node: &u32| named(node, profile::is_between_jobs);
    snapshot
        .threads
        .iter()
        .flatten()
        .filter(|thread| {
            let open: Vec<u32> = thread.nodes.iter().filter(open).map(|n| n.node).collect();
            let innermost = open.iter().filter(|&&node| {
                !open.iter().any(|&other| {
                    snapshot.nodes.get(other as usize).map(|n| n.parent) == Some(node)
                })
            });
            let idle = innermost.clone().all(waits) || open.iter().all(between_jobs);
            !open.is_empty() && !idle
        })
        .count()
}

/// Builds the profile of the run `snapshot` (the runtime's bytes, decoded)
/// records, as `host` saw it end. Frames still running when the snapshot
/// was taken are marked open, and the run incomplete.
pub fn to_profile(snapshot: &Snapshot, host: &RunEnding, context: RunContext) -> Converted {
    const NANOS_PER_MS: f64 = 1e6;
    let open = open_nodes(snapshot);
    let mut warnings = Vec::new();
    let functions = functions(snapshot, &context.module, &mut warnings);
    let count_check = count_check::check(
        snapshot,
        &functions,
        count_check::lazy_marker_names(std::path::Path::new(&context.module)),
    )
    .map(|check| CountCheck {
        threads_left_running: host.threads_left_running as u64,
        ..check
    })
    .map(|check| match host.status {
        RunStatus::Timeout | RunStatus::Interrupted => count_check::excuse_cut_call(check),
        _ => check,
    });
    let times = snapshot.inclusive_times();
    let nodes = snapshot
        .nodes
        .iter()
        .zip(times)
        .enumerate()
        .map(|(index, (n, (inclusive_ms, timing)))| Node {
            parent: (index != 0).then_some(n.parent as usize),
            function: (index != 0 && (n.function as usize) < snapshot.functions.len())
                .then_some(n.function as usize),
            calls: n.calls,
            inclusive_nanos: (inclusive_ms * NANOS_PER_MS).max(0.0),
            // Still running, or cut off the stack without returning.
            open: open.contains(&index) || n.flags & wasmprof_wire::NEVER_RETURNED != 0,
            partly_timed: timing.partly_timed,
            sampled: timing.sampled,
            samples: 0,
        })
        .collect::<Vec<_>>();
    let nodes = if nodes.is_empty() {
        vec![Node::root()]
    } else {
        nodes
    };
    let cut = threads_in_calls(snapshot, &functions, host);
    let complete =
        host.status == RunStatus::Ok && open.is_empty() && host.pending_work.is_none() && cut == 0;
    let incomplete_reason = (!complete).then(|| match (&host.message, open.is_empty()) {
        (Some(message), _) => format!("{}: {message}", host.status),
        _ if cut > 0 => threads_cut(cut),
        (None, true) if host.status == RunStatus::Ok => format!(
            "the run ended by the grace period with {} still pending: what they would \
             have run is not in the profile (--until-exit waits for wasmprof::exit)",
            host.pending_work.as_deref().unwrap_or("work")
        ),
        (None, false) => format!("{}: calls were still running", host.status),
        (None, true) => format!("the program ended with status {}", host.exit_code),
    });
    let profile = Profile {
        format: profile::FORMAT.to_owned(),
        created_unix_nanos: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default(),
        run: RunInfo {
            package: Some(context.package),
            module: context.module,
            module_sha256: context.module_sha256,
            host: host.host.clone(),
            command: context.command,
            entry: context.entry,
            complete,
            incomplete_reason,
            exit_code: host.exit_code,
            wall_nanos: host.wall_nanos,
            min_size: context.min_size.map(|size| size as u64),
            small_counted: context.small_counted,
            max_nodes: Some(u64::from(snapshot.cap)),
            samples_file: None,
            count_check,
            window: host.window,
            display_frames: host.display_frames,
            requests: host.requests.clone(),
        },
        timer: TimerInfo {
            mode: if snapshot.timed {
                TimerMode::Host
            } else {
                TimerMode::None
            },
            resolution_nanos: if snapshot.timed {
                host.timer_resolution_nanos
            } else {
                None
            },
            clock_cost_nanos: snapshot.timed.then_some(snapshot.clock_cost * 1e6),
            sample_interval_nanos: None,
            hybrid: None,
            coverage: None,
        },
        functions,
        memory: snapshot.memory.as_ref().map(profile::MemoryProfile::from),
        frames: snapshot.frames.as_ref().map(profile::Frames::from_snapshot),
        threads: snapshot
            .threads
            .iter()
            .flatten()
            .map(|thread| profile::Thread {
                name: thread.name.clone(),
                read: thread.read.into(),
                nodes: thread
                    .nodes
                    .iter()
                    .map(|n| profile::ThreadNode {
                        node: n.node as usize,
                        calls: n.calls,
                        inclusive_nanos: n.inclusive.max(0.0) * NANOS_PER_MS,
                        partly_timed: snapshot.timed
                            && n.flags & wasmprof_wire::node_flags::PARTLY_TIMED != 0,
                        open: n.flags & wasmprof_wire::NEVER_RETURNED != 0,
                    })
                    .collect(),
            })
            .collect(),
        futures: snapshot
            .futures
            .iter()
            .map(|f| {
                let calls = snapshot.nodes[f.node as usize].calls;
                FutureStats {
                    node: f.node as usize,
                    polls: f.polls,
                    completions: f.completions,
                    cancellations: f.cancellations,
                    pending: calls.saturating_sub(f.completions + f.cancellations),
                    pending_nanos: f.pending_ms * NANOS_PER_MS,
                    latency: (snapshot.timed && f.latency_count > 0).then_some(Latency {
                        count: f.latency_count,
                        total_nanos: f.latency_total_ms * NANOS_PER_MS,
                        median_nanos: f.latency_median_ms * NANOS_PER_MS,
                        max_nanos: f.latency_max_ms * NANOS_PER_MS,
                    }),
                }
            })
            .collect(),
        // Calls past the capacity: under `<overflow>`, each function's own
        // overflow node.
        overflow_calls: snapshot.overflow.map_or(0, |o| {
            snapshot
                .nodes
                .iter()
                .enumerate()
                .filter(|(i, n)| *i as u32 == o || n.parent == o)
                .map(|(_, n)| n.calls)
                .sum()
        }),
        nodes,
    };
    Converted { profile, warnings }
}

/// The snapshot's functions, named as rustc names them where the module
/// (`wasm`) tells (see [`rustc_names`]), else as the macro did.
fn functions(snapshot: &Snapshot, wasm: &str, warnings: &mut Vec<String>) -> Vec<Function> {
    let mut functions: Vec<Function> = snapshot
        .functions
        .iter()
        .map(|f| Function {
            name: f.name.clone(),
            file: f.file.clone(),
            line: f.line,
            column: None,
            tier: Some(match f.tier {
                Tier::Full => FunctionTier::Full,
                Tier::Counted => FunctionTier::Counted,
            }),
            calls: (f.tier == Tier::Counted).then_some(f.calls),
            is_async: f.is_async,
            rustc_name: None,
            is_test: f.is_test,
        })
        .collect();
    let markers: Vec<(Option<u32>, bool)> = snapshot
        .functions
        .iter()
        .map(|f| (f.marker, f.name_given))
        .collect();
    // A snapshot read on its own has no module to name its functions from.
    if !wasm.is_empty() && markers.iter().any(|(marker, _)| marker.is_some()) {
        match rustc_names::marker_names(std::path::Path::new(wasm)) {
            Ok(names) => rustc_names::rename(&mut functions, &markers, &names),
            Err(e) => warnings.push(format!(
                "functions keep the names the macro gave them: {wasm} is unreadable ({})",
                crate::error::with_causes(&e)
            )),
        }
    }
    rustc_names::disambiguate(&mut functions);
    functions
}

/// The nodes on the path from the root to the innermost running call.
fn open_nodes(snapshot: &Snapshot) -> Vec<usize> {
    let mut open = Vec::new();
    let mut at = snapshot.current as usize;
    while at != 0 && at < snapshot.nodes.len() {
        open.push(at);
        at = snapshot.nodes[at].parent as usize;
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmprof_wire::{SnapshotFunction, SnapshotNode};

    fn host(status: RunStatus) -> RunEnding {
        RunEnding {
            host: "node v20".into(),
            status,
            message: (status != RunStatus::Ok).then(|| "RuntimeError: unreachable".into()),
            exit_code: if status == RunStatus::Ok { 0 } else { 101 },
            timer_resolution_nanos: Some(100.0),
            wall_nanos: 5,
            ..RunEnding::unrecorded()
        }
    }

    #[test]
    fn threads_left_idle_leave_the_run_complete_and_threads_cut_in_a_call_do_not() {
        use wasmprof_wire::{SnapshotThread, ThreadNode};
        let thread = |name: &str, flags| SnapshotThread {
            name: name.into(),
            read: wasmprof_wire::ThreadRead::Answered,
            nodes: vec![ThreadNode {
                node: 0,
                flags,
                calls: 1,
                timed_calls: 0,
                inclusive: 0.0,
            }],
        };
        let mut snapshot = snapshot(0);
        snapshot.oracle = Some(Vec::new());
        let result = RunEnding {
            threads_left_running: 3,
            ..host(RunStatus::Ok)
        };
        // Idle workers: everything they did is in.
        snapshot.threads = Some(vec![thread("thread 1", 0), thread("thread 2", 0)]);
        let p = to_profile(&snapshot, &result, context()).profile;
        assert!(p.run.complete, "{:?}", p.run.incomplete_reason);
        assert_eq!(p.run.count_check.unwrap().threads_left_running, 3);
        // A worker in the middle of a call.
        let cut = thread("thread 2", wasmprof_wire::NEVER_RETURNED);
        snapshot.threads.as_mut().unwrap().push(cut);
        let p = to_profile(&snapshot, &result, context()).profile;
        assert!(!p.run.complete);
        let reason = p.run.incomplete_reason.unwrap();
        assert!(
            reason.starts_with("1 thread of the program was still inside instrumented calls"),
            "{reason}"
        );
    }

    #[test]
    fn a_worker_in_its_pool_s_loop_outside_a_job_is_idle_and_one_in_a_job_is_cut() {
        use wasmprof_wire::{SnapshotThread, ThreadNode};
        // A worker's open calls, on the nodes `open`: node 1 is rayon's
        // worker loop, node 2 a job run inside it.
        let worker = |open: &[u32]| SnapshotThread {
            name: "thread 3".into(),
            read: wasmprof_wire::ThreadRead::Answered,
            nodes: open
                .iter()
                .map(|&node| ThreadNode {
                    node,
                    flags: wasmprof_wire::NEVER_RETURNED,
                    calls: 1,
                    timed_calls: 0,
                    inclusive: 0.0,
                })
                .collect(),
        };
        let mut snapshot = snapshot(0);
        snapshot.functions[0].name = "rayon_core::registry::main_loop".into();
        snapshot.functions[1].name =
            "<rayon_core::job::StackJob<L,F,R> as rayon_core::job::Job>::execute".into();
        let result = RunEnding {
            threads_left_running: 1,
            ..host(RunStatus::Ok)
        };
        // Just started, before its first look for work.
        snapshot.threads = Some(vec![worker(&[1])]);
        let p = to_profile(&snapshot, &result, context()).profile;
        assert!(p.run.complete, "{:?}", p.run.incomplete_reason);
        // Running a job.
        snapshot.threads = Some(vec![worker(&[1, 2])]);
        let p = to_profile(&snapshot, &result, context()).profile;
        assert!(!p.run.complete);
    }

    fn snapshot(current: u32) -> Snapshot {
        Snapshot {
            memory: None,
            oracle: None,
            frames: None,
            threads: None,
            timed: true,
            functions: vec![
                SnapshotFunction {
                    name: "a::main".into(),
                    file: "src/main.rs".into(),
                    line: 1,
                    tier: Tier::Full,
                    is_async: false,
                    calls: 0,
                    marker: None,
                    name_given: false,
                    is_test: false,
                },
                SnapshotFunction {
                    name: "a::work".into(),
                    file: "src/main.rs".into(),
                    line: 5,
                    tier: Tier::Full,
                    is_async: true,
                    calls: 0,
                    marker: None,
                    name_given: false,
                    is_test: false,
                },
            ],
            nodes: vec![
                SnapshotNode {
                    parent: u32::MAX,
                    function: u32::MAX,
                    calls: 0,
                    timed_calls: 0,
                    flags: 0,
                    inclusive: 0.0,
                },
                SnapshotNode {
                    parent: 0,
                    function: 0,
                    calls: 1,
                    timed_calls: 1,
                    flags: 0,
                    inclusive: 2.0,
                },
                SnapshotNode {
                    parent: 1,
                    function: 1,
                    calls: 3,
                    timed_calls: 3,
                    flags: 0,
                    inclusive: 1.5,
                },
            ],
            current,
            overflow: None,
            cap: 100,
            clock_cost: 0.0,
            futures: vec![wasmprof_wire::SnapshotFuture {
                node: 2,
                polls: 9,
                completions: 2,
                cancellations: 0,
                pending_ms: 0.5,
                latency_count: 2,
                latency_total_ms: 30.0,
                latency_median_ms: 15.0,
                latency_max_ms: 20.0,
            }],
        }
    }

    fn context() -> RunContext {
        RunContext {
            package: "a".into(),
            module: "a.wasm".into(),
            module_sha256: "ff".into(),
            command: vec![],
            entry: "main".into(),
            ..RunContext::default()
        }
    }

    #[test]
    fn a_finished_run_is_complete_and_in_nanoseconds() {
        let p = to_profile(&snapshot(0), &host(RunStatus::Ok), context()).profile;
        assert!(p.run.complete);
        assert_eq!(p.nodes[1].inclusive_nanos, 2e6);
        assert_eq!(p.nodes[2].calls, 3);
        profile::validate(&p).unwrap();
    }

    #[test]
    fn futures_keep_their_figures_and_the_pending_ones_are_counted() {
        let p = to_profile(&snapshot(2), &host(RunStatus::Trap), context()).profile;
        assert!(p.functions[1].is_async && !p.functions[0].is_async);
        let future = &p.futures[0];
        assert_eq!((future.node, future.polls, future.completions), (2, 9, 2));
        assert_eq!(future.pending, 1, "3 created, 2 completed, none dropped");
        assert_eq!(future.pending_nanos, 0.5e6);
        let latency = future.latency.as_ref().unwrap();
        assert_eq!((latency.count, latency.median_nanos), (2, 15e6));
        profile::validate(&p).unwrap();
    }

    #[test]
    fn a_trap_marks_the_running_frames_open() {
        let p = to_profile(&snapshot(2), &host(RunStatus::Trap), context()).profile;
        assert!(!p.run.complete);
        assert!(p.run.incomplete_reason.unwrap().contains("unreachable"));
        assert!(p.nodes[1].open && p.nodes[2].open && !p.nodes[0].open);
    }
}
