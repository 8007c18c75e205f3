//! Hand-built profiles for the report tests, and golden-file comparison.
//!
//! The two reference programs are those GNU gprof was run on in
//! `shared/reference/` (appendix-b.c and recursion.c), rebuilt as trees with
//! the call counts gprof printed, so that our output can be held against
//! real gprof output.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::profile::{FORMAT, Function, Node, Profile, RunInfo, TimerInfo, TimerMode};

/// Builds a [`Profile`] from call paths, giving self times; inclusive times
/// are derived so that the tree is consistent.
pub struct ProfileBuilder {
    profile: Profile,
    self_nanos: Vec<f64>,
    child_index: HashMap<(usize, usize), usize>,
}

/// The node reached by exactly this path of function names from the root.
pub fn node_at(profile: &Profile, path: &[&str]) -> usize {
    (0..profile.nodes.len())
        .find(|&i| {
            let names: Vec<&str> = profile
                .stack(i)
                .iter()
                .map(|&f| profile.functions[f].name.as_str())
                .collect();
            names == path
        })
        .unwrap_or_else(|| panic!("no node at {path:?}"))
}

impl ProfileBuilder {
    pub fn timed() -> Self {
        Self::new(TimerMode::Host)
    }

    pub fn untimed() -> Self {
        Self::new(TimerMode::None)
    }

    fn new(mode: TimerMode) -> Self {
        let profile = Profile {
            memory: None,
            format: FORMAT.into(),
            created_unix_nanos: 1_700_000_000_123_456_789,
            run: RunInfo {
                package: Some("demo".into()),
                module: "target/wasm32-unknown-unknown/release/demo.wasm".into(),
                module_sha256: "5e1f".repeat(16),
                host: "node v20.20.2".into(),
                command: vec!["cargo".into(), "wasmprof".into(), "run".into()],
                entry: "start".into(),
                complete: true,
                incomplete_reason: None,
                exit_code: 0,
                wall_nanos: 0,
                min_size: None,
                max_nodes: None,
                samples_file: None,
                count_check: None,
                window: None,
                display_frames: None,
                requests: None,
                small_counted: false,
            },
            timer: TimerInfo {
                mode,
                resolution_nanos: (mode == TimerMode::Host).then_some(1000.0),
                clock_cost_nanos: None,
                sample_interval_nanos: None,
                hybrid: None,
                coverage: None,
            },
            functions: Vec::new(),
            nodes: vec![Node::root()],
            overflow_calls: 0,
            threads: Vec::new(),
            frames: None,
            futures: Vec::new(),
        };
        ProfileBuilder {
            profile,
            self_nanos: vec![0.0],
            child_index: HashMap::new(),
        }
    }

    pub fn package(mut self, package: &str) -> Self {
        self.profile.run.package = Some(package.into());
        self
    }

    /// Adds `calls` calls and `self_nanos` of self time to the node at the
    /// end of `path` (function names, outermost first).
    pub fn path(mut self, path: &[&str], calls: u64, self_nanos: f64) -> Self {
        let node = self.node(path);
        self.profile.nodes[node].calls += calls;
        self.self_nanos[node] += self_nanos;
        self
    }

    /// Charges the node at the end of `path` (the root for `[]`) with
    /// `allocs` blocks of `bytes` in all, of which `live_bytes` (in as
    /// many blocks as were not freed, at most one) are still live.
    pub fn allocated(mut self, path: &[&str], allocs: u64, bytes: u64, live_bytes: u64) -> Self {
        let node = if path.is_empty() { 0 } else { self.node(path) };
        let memory = self
            .profile
            .memory
            .get_or_insert_with(crate::profile::MemoryProfile::default);
        let live_blocks = u64::from(live_bytes > 0);
        memory.paths.push(crate::profile::PathMemory {
            node,
            allocs,
            alloc_bytes: bytes,
            frees: allocs - live_blocks,
            freed_bytes: bytes - live_bytes,
            live_blocks,
            live_bytes,
            peak_blocks: live_blocks,
            peak_bytes: live_bytes,
            ..crate::profile::PathMemory::default()
        });
        memory.paths.sort_by_key(|p| p.node);
        memory.live_blocks += live_blocks;
        memory.live_bytes += live_bytes;
        memory.peak_blocks += live_blocks;
        memory.peak_bytes += live_bytes;
        self
    }

    /// Adds a count-only function: `calls` calls, no node.
    pub fn counted(mut self, name: &str, calls: u64) -> Self {
        let function = self.function(name);
        let f = &mut self.profile.functions[function];
        f.tier = Some(crate::profile::FunctionTier::Counted);
        f.calls = Some(calls);
        self
    }

    /// Makes the function at the end of `path` async, with these figures
    /// for its futures there; pending ones are the calls left over, each
    /// completed one took `latency_nanos`.
    pub fn future(
        mut self,
        path: &[&str],
        polls: u64,
        completions: u64,
        cancellations: u64,
        latency_nanos: Option<f64>,
    ) -> Self {
        let node = self.node(path);
        if let Some(function) = self.profile.nodes[node].function {
            self.profile.functions[function].is_async = true;
        }
        self.profile.futures.push(crate::profile::FutureStats {
            node,
            polls,
            completions,
            cancellations,
            pending: 0,
            pending_nanos: 0.0,
            latency: latency_nanos.map(|nanos| crate::profile::Latency {
                count: completions,
                total_nanos: nanos * completions as f64,
                median_nanos: nanos,
                max_nanos: nanos,
            }),
        });
        self
    }

    /// Marks every node of `path` as still running: like the runtime, the
    /// file then has no time for them (their children's time is known).
    pub fn open(mut self, path: &[&str]) -> Self {
        for depth in 1..=path.len() {
            let node = self.node(&path[..depth]);
            self.profile.nodes[node].open = true;
        }
        self
    }

    fn node(&mut self, path: &[&str]) -> usize {
        let mut node = Profile::ROOT;
        for name in path {
            let function = self.function(name);
            node = match self.child_index.get(&(node, function)) {
                Some(&child) => child,
                None => {
                    self.profile.nodes.push(Node {
                        parent: Some(node),
                        function: Some(function),
                        calls: 0,
                        inclusive_nanos: 0.0,
                        open: false,
                        partly_timed: false,
                        sampled: false,
                        samples: 0,
                    });
                    self.self_nanos.push(0.0);
                    let child = self.profile.nodes.len() - 1;
                    self.child_index.insert((node, function), child);
                    child
                }
            };
        }
        node
    }

    fn function(&mut self, name: &str) -> usize {
        if let Some(index) = self.profile.functions.iter().position(|f| f.name == name) {
            return index;
        }
        let line = 10 * (self.profile.functions.len() as u32 + 1);
        self.profile
            .functions
            .push(Function::at(name, "src/lib.rs", line));
        self.profile.functions.len() - 1
    }

    pub fn build(mut self) -> Profile {
        for future in &mut self.profile.futures {
            let calls = self.profile.nodes[future.node].calls;
            future.pending = calls.saturating_sub(future.completions + future.cancellations);
        }
        let timed = self.profile.timer.mode == TimerMode::Host;
        let mut inclusive = self.self_nanos.clone();
        for node in (1..self.profile.nodes.len()).rev() {
            if let Some(parent) = self.profile.nodes[node].parent {
                inclusive[parent] += inclusive[node];
            }
        }
        for (node, time) in self.profile.nodes.iter_mut().zip(&inclusive) {
            node.inclusive_nanos = if timed && !node.open { *time } else { 0.0 };
        }
        self.profile.nodes[Profile::ROOT].inclusive_nanos = 0.0;
        let measured: f64 = inclusive[1..]
            .iter()
            .zip(&self.profile.nodes[1..])
            .filter(|(_, n)| n.parent == Some(Profile::ROOT))
            .map(|(t, _)| t)
            .sum();
        self.profile.run.wall_nanos = (measured * 1.05) as u64 + 2_000_000;
        self.profile
    }
}

const MILLI: f64 = 1e6;

/// appendix-b.c: `main` calls the `f_*` functions, which call `add`
/// 52,500,000 times in all. Self times are made up (2 ns per `add`, 0.5 ns
/// per loop iteration in the callers) so that the report has something to show.
/// A threaded program's profile: `work` called 3 times (3 µs) by
/// `worker-0` and 5 times (5 µs) by `worker-1`, nothing on `main`.
pub fn two_workers() -> Profile {
    use crate::profile::{Thread, ThreadNode};
    let mut profile = ProfileBuilder::timed()
        .package("threads")
        .path(&["work"], 8, 8_000.0)
        .build();
    let work = node_at(&profile, &["work"]);
    let share = |calls: u64| ThreadNode {
        node: work,
        calls,
        inclusive_nanos: calls as f64 * 1_000.0,
        partly_timed: false,
        open: false,
    };
    let thread = |name: &str, nodes: Vec<ThreadNode>| Thread {
        name: name.into(),
        read: Default::default(),
        nodes,
    };
    profile.threads = vec![
        thread("main", Vec::new()),
        thread("worker-0", vec![share(3)]),
        thread("worker-1", vec![share(5)]),
    ];
    profile
}

/// A rayon pool seen with rayon-core instrumented: the worker's loop never
/// returns, and holds 4 µs of work and 2 µs idle; the main thread spends
/// 9 of its 10 µs blocked on the latch while the pool works.
pub fn rayon_pool() -> Profile {
    use crate::profile::{Thread, ThreadNode};
    let loop_path = ["rayon_core::registry::main_loop"];
    let idle = [loop_path[0], "rayon_core::sleep::Sleep::no_work_found"];
    let sleep = [idle[0], idle[1], "rayon_core::sleep::Sleep::sleep"];
    let chunk = [loop_path[0], "chunk"];
    let join = ["join"];
    let latch = ["join", "rayon_core::latch::LockLatch::wait_and_reset"];
    let mut profile = ProfileBuilder::timed()
        .package("pool")
        .path(&loop_path, 1, 0.0)
        .path(&chunk, 4, 4_000.0)
        .path(&idle, 3, 2_000.0)
        .path(&sleep, 1, 1_500.0)
        .path(&join, 1, 10_000.0)
        .path(&latch, 1, 9_000.0)
        .build();
    let share = |path: &[&str], calls, nanos, open| ThreadNode {
        node: node_at(&profile, path),
        calls,
        inclusive_nanos: nanos,
        partly_timed: false,
        open,
    };
    let worker = vec![
        share(&loop_path, 1, 0.0, true),
        share(&chunk, 4, 4_000.0, false),
        share(&idle, 3, 2_000.0, false),
        share(&sleep, 1, 1_500.0, false),
    ];
    let main = vec![
        share(&join, 1, 10_000.0, false),
        share(&latch, 1, 9_000.0, false),
    ];
    profile.threads = vec![
        Thread {
            name: "main".into(),
            read: Default::default(),
            nodes: main,
        },
        Thread {
            name: "thread 1".into(),
            read: Default::default(),
            nodes: worker,
        },
    ];
    profile.run.wall_nanos = 20_000;
    profile
}

pub fn appendix_b(timed: bool) -> Profile {
    let builder = if timed {
        ProfileBuilder::timed()
    } else {
        ProfileBuilder::untimed()
    };
    builder
        .package("appendix_b")
        .path(&["main"], 1, 4_000.0)
        .path(&["main", "f_main_1"], 1, 5.0 * MILLI)
        .path(&["main", "f_main_1", "add"], 10_000_000, 20.0 * MILLI)
        .path(&["main", "f_main_2"], 1, 5.0 * MILLI)
        .path(&["main", "f_main_2", "add"], 10_000_000, 20.0 * MILLI)
        .path(&["main", "f_main_3"], 1, 1_000.0)
        .path(&["main", "f_main_3", "f_half"], 2, 5.0 * MILLI)
        .path(
            &["main", "f_main_3", "f_half", "add"],
            10_000_000,
            20.0 * MILLI,
        )
        .path(&["main", "f_main_4"], 1, 1_000.0)
        .path(&["main", "f_main_4", "f_quarter"], 4, 5.0 * MILLI)
        .path(
            &["main", "f_main_4", "f_quarter", "add"],
            10_000_000,
            20.0 * MILLI,
        )
        .path(&["main", "f_half"], 1, 2.5 * MILLI)
        .path(&["main", "f_half", "add"], 5_000_000, 10.0 * MILLI)
        .path(&["main", "f_half_2"], 1, 1_000.0)
        .path(&["main", "f_half_2", "f_quarter"], 2, 2.5 * MILLI)
        .path(
            &["main", "f_half_2", "f_quarter", "add"],
            5_000_000,
            10.0 * MILLI,
        )
        .path(&["main", "f_quarter"], 1, 1.25 * MILLI)
        .path(&["main", "f_quarter", "add"], 2_500_000, 5.0 * MILLI)
        .build()
}

/// recursion.c: 200 times `fib(20)` (4,378,000 recursive calls in all) and
/// `is_even(101)`, which alternates with `is_odd` down to 0. Made-up self
/// times when `timed`: 3 ns per `fib` call, 2 ns per `is_even`/`is_odd`.
pub fn recursion(timed: bool) -> Profile {
    let mut builder = if timed {
        ProfileBuilder::timed()
    } else {
        ProfileBuilder::untimed()
    }
    .package("recursion")
    .path(&["main"], 1, 1000.0);
    let mut path = vec!["main"];
    for calls in fib_calls_by_depth(20) {
        path.push("fib");
        builder = builder.path(&path, 200 * calls, 3.0 * (200 * calls) as f64);
    }
    let mut path = vec!["main"];
    for n in (0..=101).rev() {
        path.push(if n % 2 == 1 { "is_even" } else { "is_odd" });
        builder = builder.path(&path, 200, 400.0);
    }
    builder.build()
}

/// How many calls `fib(n)` makes at each depth of its recursion, itself at 0.
fn fib_calls_by_depth(n: u32) -> Vec<u64> {
    // by_n[k][d]: calls at depth d in the call tree of fib(k).
    let mut by_n: Vec<Vec<u64>> = vec![vec![1], vec![1]];
    for k in 2..=n as usize {
        let mut counts = vec![1];
        let (a, b) = (&by_n[k - 1], &by_n[k - 2]);
        for d in 0..a.len().max(b.len()) {
            counts.push(a.get(d).copied().unwrap_or(0) + b.get(d).copied().unwrap_or(0));
        }
        by_n.push(counts);
    }
    by_n.swap_remove(n as usize)
}

/// Compares `actual` with this crate's `tests/data/NAME` byte for byte;
/// with `WASMPROF_BLESS=1` in the environment, rewrites the file instead.
pub fn assert_golden(name: &str, actual: &str) {
    assert_golden_in(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
        name,
        actual,
    );
}

/// [`assert_golden`] for the golden files of another crate, in `dir`.
pub fn assert_golden_in(dir: &std::path::Path, name: &str, actual: &str) {
    let path = dir.join(name);
    if std::env::var_os("WASMPROF_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create tests/data");
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; run with WASMPROF_BLESS=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .map_or(expected.lines().count().min(actual.lines().count()), |l| l);
        panic!(
            "{} differs from the output at line {}:\n--- expected\n{}\n--- actual\n{}\n\
             (re-bless with WASMPROF_BLESS=1 if the change is intended)",
            path.display(),
            line + 1,
            expected.lines().nth(line).unwrap_or("<end of file>"),
            actual.lines().nth(line).unwrap_or("<end of output>"),
        );
    }
}

#[test]
fn fib_calls_by_depth_agrees_with_running_fib() {
    /// Counts the calls of a real `fib(n)` at each depth as it recurses.
    fn walk(n: u32, depth: usize, counts: &mut Vec<u64>) -> u64 {
        if counts.len() <= depth {
            counts.push(0);
        }
        counts[depth] += 1;
        if n < 2 {
            return u64::from(n);
        }
        walk(n - 1, depth + 1, counts) + walk(n - 2, depth + 1, counts)
    }
    for n in [0, 1, 2, 5, 20] {
        let mut counts = Vec::new();
        walk(n, 0, &mut counts);
        assert_eq!(fib_calls_by_depth(n), counts, "fib({n})");
    }
    assert_eq!(fib_calls_by_depth(20).iter().sum::<u64>(), 21_891);
}

/// A writer that always fails, as a full disk would: report writers must
/// return its error, never panic.
pub struct FullDisk;

impl std::io::Write for FullDisk {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("disk full"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A profile with memory: `outer` allocates 100 bytes and calls `inner`,
/// which allocates 1000 (400 of them still live) and, calling itself, 10
/// more; 7 bytes are allocated outside any instrumented call.
pub fn memory_profile() -> Profile {
    ProfileBuilder::timed()
        .path(&["outer"], 1, 500.0)
        .path(&["outer", "inner"], 1, 300.0)
        .path(&["outer", "inner", "inner"], 1, 100.0)
        .allocated(&[], 1, 7, 0)
        .allocated(&["outer"], 1, 100, 0)
        .allocated(&["outer", "inner"], 2, 1000, 400)
        .allocated(&["outer", "inner", "inner"], 1, 10, 0)
        .build()
}

/// A small profile of three nodes: `main` (100 ns, once) calling `add`
/// (40 ns, five times).
pub fn demo_profile() -> Profile {
    Profile {
        memory: None,
        format: FORMAT.into(),
        created_unix_nanos: 1,
        run: RunInfo {
            package: Some("demo".into()),
            module: "demo.wasm".into(),
            module_sha256: "00".into(),
            host: "node v20".into(),
            command: vec!["cargo".into(), "wasmprof".into(), "run".into()],
            entry: "start".into(),
            complete: true,
            incomplete_reason: None,
            exit_code: 0,
            wall_nanos: 10,
            min_size: None,
            max_nodes: None,
            samples_file: None,
            count_check: None,
            window: None,
            display_frames: None,
            requests: None,
            small_counted: false,
        },
        timer: TimerInfo {
            mode: TimerMode::Host,
            resolution_nanos: Some(1000.0),
            clock_cost_nanos: None,
            sample_interval_nanos: None,
            hybrid: None,
            coverage: None,
        },
        functions: vec![
            Function::at("demo::main", "src/main.rs", 3),
            Function::at("demo::add", "src/main.rs", 9),
        ],
        nodes: vec![
            Node::root(),
            Node {
                parent: Some(0),
                function: Some(0),
                calls: 1,
                inclusive_nanos: 100.0,
                open: false,
                partly_timed: false,
                sampled: false,
                samples: 0,
            },
            Node {
                parent: Some(1),
                function: Some(1),
                calls: 5,
                inclusive_nanos: 40.0,
                open: false,
                partly_timed: false,
                sampled: false,
                samples: 0,
            },
        ],
        overflow_calls: 0,
        threads: Vec::new(),
        frames: None,
        futures: Vec::new(),
    }
}

/// A fully instrumented function of a runtime snapshot, at `src/main.rs:1`.
pub fn snapshot_function(name: &str) -> wasmprof_wire::SnapshotFunction {
    wasmprof_wire::SnapshotFunction {
        name: name.into(),
        file: "src/main.rs".into(),
        line: 1,
        tier: wasmprof_wire::Tier::Full,
        is_async: false,
        calls: 0,
        marker: None,
        name_given: false,
        is_test: false,
    }
}

/// A snapshot node whose calls were all timed, `inclusive` ms in all.
pub fn snapshot_node(
    parent: u32,
    function: u32,
    calls: u64,
    inclusive: f64,
) -> wasmprof_wire::SnapshotNode {
    wasmprof_wire::SnapshotNode {
        parent,
        function,
        calls,
        timed_calls: calls,
        flags: 0,
        inclusive,
    }
}
