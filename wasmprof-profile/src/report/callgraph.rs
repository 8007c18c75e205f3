//! Per-function and per-arc numbers derived exactly from the calling-context
//! tree.
//!
//! gprof only knows caller→callee arcs, so it must *apportion* a callee's time
//! among its callers in proportion to call counts, which is wrong whenever
//! calls differ in cost. The tree keeps every call path, so every number here
//! is a sum over tree nodes and nothing is apportioned:
//!
//! * a function's **self time** is the sum of the self times of its nodes;
//! * its **total time** is the sum of the inclusive times of its *outermost
//!   activations*, nodes with no ancestor of the same function, so that
//!   recursion never counts the same nanosecond twice;
//! * an **arc** caller→callee sums the callee's nodes whose parent runs the
//!   caller; its time is that of the callee's outermost activations entered
//!   through the arc.
//!
//! Functions that call each other in a loop form a **cycle** (a strongly
//! connected component of size two or more, gprof's `<cycle N>`). For gprof's
//! call graph, a cycle is one unit: the time an outside caller pays for a call
//! into it is the whole cycle's, and a member's "children" are only callees
//! outside the cycle. Those numbers are kept apart (`entry_*`, `children_nanos`)
//! from the plain per-function ones.

use std::collections::HashMap;

use super::cycles::strongly_connected_components;
use super::node_times::NodeTimes;
use super::time_kind::{self, TimeKind};
use crate::profile::{FunctionTier, Profile, TimerMode};

/// Index into [`CallGraph::functions`]: the index in `Profile::functions`, or
/// `Profile::functions.len()` for the `<overflow>` pseudo-function.
pub(crate) type FunctionId = usize;

/// The name shown for calls the runtime could not place in the tree.
pub(crate) const OVERFLOW_NAME: &str = "<overflow>";

/// What one function did over the whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionStats {
    pub name: String,
    pub file: String,
    pub line: u32,
    /// Every call, recursive or not.
    pub calls: u64,
    /// Calls the function made to itself directly (gprof's `r` in `n+r`).
    pub recursive_calls: u64,
    /// Time in the function's own body, summed over all its activations.
    pub self_nanos: f64,
    /// Inclusive time of its outermost activations.
    pub total_nanos: f64,
    /// Time in callees outside the function's own cycle (or outside the
    /// function itself when it is in no cycle): gprof's "children" column.
    pub children_nanos: f64,
    /// Index into [`CallGraph::cycles`] when the function is in a cycle.
    pub cycle: Option<usize>,
    /// Some activation was still running when the profile was taken.
    pub open: bool,
    /// This is the `<overflow>` pseudo-function, not a real one.
    pub is_overflow: bool,
    /// Counted only (the count-only tier): exact calls, no time of its own.
    pub counted_only: bool,
    /// An `async fn`: calls are futures created, time is CPU time in polls.
    pub is_async: bool,
    /// What its time is: measured, partly, estimated, or none.
    pub time: TimeKind,
}

pub(crate) use super::time_kind::COUNTED_MARK;
/// What the text reports put after an async function's name.
pub(crate) const ASYNC_MARK: &str = " (async)";

impl FunctionStats {
    /// The name, marked with what its time is (a sampling profile's rows
    /// are all sampled, which its notes say, and are left unmarked) and
    /// when the function is async.
    pub fn marked_name(&self, mode: TimerMode) -> String {
        let time = match (self.time, mode) {
            (TimeKind::Sampled, TimerMode::Sampled) | (_, TimerMode::None) => "",
            (time, _) => time.mark(),
        };
        let asynchronous = if self.is_async && !self.counted_only {
            ASYNC_MARK
        } else {
            ""
        };
        format!("{}{asynchronous}{time}", self.name)
    }

    /// Calls from anywhere but the function itself (gprof's `n` in `n+r`).
    pub fn non_recursive_calls(&self) -> u64 {
        self.calls - self.recursive_calls
    }
}

/// Calls from one function (or the host) to another.
#[derive(Debug, Clone, PartialEq)]
pub struct Arc {
    /// `None` when the host called (gprof's `<spontaneous>`).
    pub caller: Option<FunctionId>,
    pub callee: FunctionId,
    pub calls: u64,
    /// Inclusive time of the callee's outermost activations entered through
    /// this arc; zero for a direct recursive call, already inside one.
    pub total_nanos: f64,
    /// The callee's self time within those activations, its deeper recursive
    /// activations included.
    pub callee_self_nanos: f64,
    /// For gprof: self time of the callee's whole cycle (the callee alone if
    /// it is in none) in activations entered through this arc from outside
    /// the cycle. Zero for arcs within a cycle and for recursive arcs.
    pub entry_self_nanos: f64,
    /// For gprof: the rest of those activations' time, spent outside the cycle.
    pub entry_children_nanos: f64,
}

impl Arc {
    /// The callee's time in callees of its own, within this arc's activations.
    pub fn callee_children_nanos(&self) -> f64 {
        (self.total_nanos - self.callee_self_nanos).max(0.0)
    }
}

/// Functions that call each other in a loop, reported as one unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    /// 1-based, in order of decreasing time: what `<cycle N>` shows.
    pub number: usize,
    /// Sorted by function id.
    pub members: Vec<FunctionId>,
    /// Calls into the cycle from outside it, the host included.
    pub external_calls: u64,
    /// Calls between different members (recursive calls of a member to
    /// itself are not counted, as in gprof).
    pub internal_calls: u64,
    pub self_nanos: f64,
    /// Time in callees outside the cycle.
    pub children_nanos: f64,
}

/// The function-level view of a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct CallGraph {
    /// Each function's totals, in the profile's order of functions.
    pub functions: Vec<FunctionStats>,
    /// Sorted by callee, then caller (host first).
    pub arcs: Vec<Arc>,
    /// Positions in `arcs` sorted by caller (host first), then callee: the
    /// index behind [`CallGraph::arcs_from`].
    arcs_by_caller: Vec<usize>,
    /// Sorted by number.
    pub cycles: Vec<Cycle>,
    /// Self time of every node summed: the whole measured time.
    pub total_nanos: f64,
    /// Whether times were measured at all (`--timer host`, or samples).
    pub timed: bool,
    /// Whether calls were counted (not for an engine's sampling profile).
    pub counted: bool,
}

impl CallGraph {
    /// Derives the function-level view. `profile` must be valid (see
    /// [`crate::profile::validate`]); everything here is then in range.
    pub fn build(profile: &Profile) -> CallGraph {
        let tree = NodeTimes::compute(profile);
        let node_function = node_functions(profile);
        let mut functions = function_table(profile, &node_function);
        let (mut arcs, arc_of_node) = collect_arcs(profile, &node_function);

        let cycle_of = find_cycles(functions.len(), &arcs);
        let cycle_count = cycle_of.iter().flatten().map(|&c| c + 1).max().unwrap_or(0);
        for (id, stats) in functions.iter_mut().enumerate() {
            stats.cycle = cycle_of[id];
        }
        let group_of: Vec<usize> = (0..functions.len())
            .map(|f| cycle_of[f].map_or(f, |c| functions.len() + c))
            .collect();
        let roots = outermost_activations(
            profile,
            &node_function,
            &group_of,
            functions.len() + cycle_count,
        );

        let mut total_nanos = 0.0;
        for node in 1..profile.nodes.len() {
            let Some(function) = node_function[node] else {
                continue;
            };
            let self_nanos = tree.self_nanos[node];
            total_nanos += self_nanos;
            let stats = &mut functions[function];
            stats.self_nanos += self_nanos;
            if roots.function[node] == node {
                stats.total_nanos += tree.inclusive[node];
                arcs[arc_of_node[node]].total_nanos += tree.inclusive[node];
            }
            arcs[arc_of_node[roots.function[node]]].callee_self_nanos += self_nanos;
            if roots.group[node] == node {
                arcs[arc_of_node[node]].entry_children_nanos += tree.inclusive[node];
            }
            arcs[arc_of_node[roots.group[node]]].entry_self_nanos += self_nanos;
            let parent_function = profile.nodes[node].parent.and_then(|p| node_function[p]);
            if let Some(parent_function) = parent_function {
                if group_of[parent_function] != group_of[function] {
                    functions[parent_function].children_nanos += tree.inclusive[node];
                }
            }
        }
        for arc in &mut arcs {
            // Until here `entry_children_nanos` held the entries' inclusive time.
            arc.entry_children_nanos = (arc.entry_children_nanos - arc.entry_self_nanos).max(0.0);
        }

        let cycles = summarize_cycles(&mut functions, &arcs, cycle_count);
        let mut arcs_by_caller: Vec<usize> = (0..arcs.len()).collect();
        arcs_by_caller.sort_by_key(|&a| (arcs[a].caller, arcs[a].callee));
        CallGraph {
            functions,
            arcs,
            arcs_by_caller,
            cycles,
            total_nanos,
            timed: profile.timer.mode.timed(),
            counted: profile.timer.mode.counted(),
        }
    }

    /// Arcs into `callee`, host first, then by caller id.
    pub fn arcs_into(&self, callee: FunctionId) -> impl Iterator<Item = &Arc> {
        let start = self.arcs.partition_point(|a| a.callee < callee);
        self.arcs[start..]
            .iter()
            .take_while(move |a| a.callee == callee)
    }

    /// Arcs out of `caller`, by callee id.
    pub fn arcs_from(&self, caller: FunctionId) -> impl Iterator<Item = &Arc> {
        let start = self
            .arcs_by_caller
            .partition_point(|&a| self.arcs[a].caller < Some(caller));
        self.arcs_by_caller[start..]
            .iter()
            .map(|&a| &self.arcs[a])
            .take_while(move |a| a.caller == Some(caller))
    }

    /// The cycle `function` belongs to, if any.
    pub fn cycle_of(&self, function: FunctionId) -> Option<&Cycle> {
        self.functions[function].cycle.map(|c| &self.cycles[c])
    }

    /// Calls into `function` that count for gprof's `n/m` "m": calls from
    /// outside its cycle when it is in one, else its non-recursive calls.
    pub fn entry_calls(&self, function: FunctionId) -> u64 {
        match self.cycle_of(function) {
            Some(cycle) => cycle.external_calls,
            None => self.functions[function].non_recursive_calls(),
        }
    }

    /// Whether a call from `caller` to `callee` stays inside one cycle or is
    /// a direct recursive call: gprof shows only its count.
    pub fn is_internal(&self, caller: Option<FunctionId>, callee: FunctionId) -> bool {
        match caller {
            None => false,
            Some(caller) if caller == callee => true,
            Some(caller) => {
                let cycle = self.functions[callee].cycle;
                cycle.is_some() && cycle == self.functions[caller].cycle
            }
        }
    }

    /// Whether the function did anything worth a line: gprof leaves out
    /// functions with neither calls nor time.
    pub fn is_active(&self, function: FunctionId) -> bool {
        let stats = &self.functions[function];
        stats.calls > 0 || stats.self_nanos > 0.0 || stats.total_nanos > 0.0
    }

    /// `functions` in the order of gprof's flat profile: by self time, then
    /// by `calls` (both decreasing), then by name.
    pub fn ranked_by_self_time(
        &self,
        mut functions: Vec<FunctionId>,
        calls: impl Fn(&FunctionStats) -> u64,
    ) -> Vec<FunctionId> {
        functions.sort_by(|&a, &b| {
            let (fa, fb) = (&self.functions[a], &self.functions[b]);
            fb.self_nanos
                .total_cmp(&fa.self_nanos)
                .then(calls(fb).cmp(&calls(fa)))
                .then_with(|| fa.name.cmp(&fb.name))
                .then(a.cmp(&b))
        });
        functions
    }

    /// The calls through an arc, or `None` into a counted function, whose
    /// calls are counted per function, not per caller (its arcs are those
    /// the engine's samples found it under).
    pub fn arc_calls(&self, arc: &Arc) -> Option<u64> {
        (!self.functions[arc.callee].counted_only).then_some(arc.calls)
    }

    /// The functions worth a line (see [`CallGraph::is_active`]).
    pub fn active_functions(&self) -> Vec<FunctionId> {
        (0..self.functions.len())
            .filter(|&f| self.is_active(f))
            .collect()
    }
}

/// The function of every node: `None` for the root, the overflow id for the
/// overflow node.
fn node_functions(profile: &Profile) -> Vec<Option<FunctionId>> {
    let overflow = profile.functions.len();
    profile
        .nodes
        .iter()
        .enumerate()
        .map(|(index, node)| match node.function {
            _ if index == Profile::ROOT => None,
            Some(function) => Some(function),
            None => Some(overflow),
        })
        .collect()
}

/// Names and call counts; the `<overflow>` entry exists only if some node
/// needs it, so that ids match `Profile::functions` otherwise.
fn function_table(profile: &Profile, node_function: &[Option<FunctionId>]) -> Vec<FunctionStats> {
    let blank = |name: &str, file: &str, line: u32, is_overflow: bool| FunctionStats {
        name: name.to_owned(),
        file: file.to_owned(),
        line,
        calls: 0,
        recursive_calls: 0,
        self_nanos: 0.0,
        total_nanos: 0.0,
        children_nanos: 0.0,
        cycle: None,
        open: false,
        is_overflow,
        counted_only: false,
        is_async: false,
        time: TimeKind::Measured,
    };
    let kinds = time_kind::of_functions(profile);
    let mut functions: Vec<FunctionStats> = profile
        .functions
        .iter()
        .zip(kinds)
        .map(|(f, time)| FunctionStats {
            time,
            counted_only: f.tier == Some(FunctionTier::Counted),
            is_async: f.is_async,
            calls: f.calls.unwrap_or(0),
            ..blank(&f.name, &f.file, f.line, false)
        })
        .collect();
    let overflow = profile.functions.len();
    if node_function.contains(&Some(overflow)) {
        functions.push(blank(OVERFLOW_NAME, "", 0, true));
    }
    for (node, function) in node_function.iter().enumerate() {
        let Some(function) = *function else { continue };
        let caller = profile.nodes[node].parent.and_then(|p| node_function[p]);
        let stats = &mut functions[function];
        stats.calls += profile.nodes[node].calls;
        if caller == Some(function) {
            stats.recursive_calls += profile.nodes[node].calls;
        }
        stats.open |= profile.nodes[node].open;
        if stats.is_overflow {
            stats.time = stats
                .time
                .combine(time_kind::of_node(profile, &profile.nodes[node]));
        }
    }
    functions
}

/// One arc per (caller, callee) pair, sorted, and the arc of every node
/// (unused for the root).
fn collect_arcs(profile: &Profile, node_function: &[Option<FunctionId>]) -> (Vec<Arc>, Vec<usize>) {
    let mut calls: HashMap<(FunctionId, Option<FunctionId>), u64> = HashMap::new();
    for (node, function) in node_function.iter().enumerate() {
        if let Some(callee) = *function {
            let caller = profile.nodes[node].parent.and_then(|p| node_function[p]);
            *calls.entry((callee, caller)).or_default() += profile.nodes[node].calls;
        }
    }
    let mut keys: Vec<(FunctionId, Option<FunctionId>)> = calls.keys().copied().collect();
    keys.sort_unstable();
    let index: HashMap<(FunctionId, Option<FunctionId>), usize> =
        keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let arcs = keys
        .iter()
        .map(|&(callee, caller)| Arc {
            caller,
            callee,
            calls: calls[&(callee, caller)],
            total_nanos: 0.0,
            callee_self_nanos: 0.0,
            entry_self_nanos: 0.0,
            entry_children_nanos: 0.0,
        })
        .collect();
    let arc_of_node = node_function
        .iter()
        .enumerate()
        .map(|(node, function)| match *function {
            Some(callee) => {
                let caller = profile.nodes[node].parent.and_then(|p| node_function[p]);
                index[&(callee, caller)]
            }
            None => usize::MAX,
        })
        .collect();
    (arcs, arc_of_node)
}

/// The cycle of every function: strongly connected components of two or
/// more functions, numbered from 0 in the order Tarjan's algorithm finds
/// them (renumbered by time later).
fn find_cycles(function_count: usize, arcs: &[Arc]) -> Vec<Option<usize>> {
    let edges: Vec<(usize, usize)> = arcs
        .iter()
        .filter_map(|a| a.caller.map(|caller| (caller, a.callee)))
        .filter(|(caller, callee)| caller != callee)
        .collect();
    let component = strongly_connected_components(function_count, &edges);
    let mut size = HashMap::new();
    for &c in &component {
        *size.entry(c).or_insert(0usize) += 1;
    }
    let mut cycle_number = HashMap::new();
    component
        .iter()
        .map(|c| {
            (size[c] > 1).then(|| {
                let next = cycle_number.len();
                *cycle_number.entry(*c).or_insert(next)
            })
        })
        .collect()
}

/// For every node, the outermost node on its path (itself included) that
/// runs the same function, and the one that runs a function of the same
/// group (its cycle, or the function alone).
struct Roots {
    function: Vec<usize>,
    group: Vec<usize>,
}

/// A depth-first walk of the tree that remembers, per function and per
/// group, which node on the current path entered it first. Iterative: a
/// deep recursion in the profiled program makes a deep tree.
fn outermost_activations(
    profile: &Profile,
    node_function: &[Option<FunctionId>],
    group_of: &[usize],
    group_count: usize,
) -> Roots {
    let children = profile.children();
    let count = profile.nodes.len();
    let mut roots = Roots {
        function: (0..count).collect(),
        group: (0..count).collect(),
    };
    let mut active_function: Vec<Option<usize>> = vec![None; group_of.len()];
    let mut active_group: Vec<Option<usize>> = vec![None; group_count];
    let mut work: Vec<(usize, usize)> = vec![(Profile::ROOT, 0)];
    while let Some(frame) = work.last_mut() {
        let (node, position) = *frame;
        if let Some(&child) = children[node].get(position) {
            frame.1 += 1;
            if let Some(function) = node_function[child] {
                let group = group_of[function];
                roots.function[child] = *active_function[function].get_or_insert(child);
                roots.group[child] = *active_group[group].get_or_insert(child);
            }
            work.push((child, 0));
            continue;
        }
        work.pop();
        if let Some(function) = node_function[node] {
            if roots.function[node] == node {
                active_function[function] = None;
            }
            if roots.group[node] == node {
                active_group[group_of[function]] = None;
            }
        }
    }
    roots
}

/// Totals per cycle, numbered 1.. by decreasing time, then calls, then the
/// name of the first member, so that `<cycle 1>` is the costliest.
fn summarize_cycles(
    functions: &mut [FunctionStats],
    arcs: &[Arc],
    cycle_count: usize,
) -> Vec<Cycle> {
    let mut members = vec![Vec::new(); cycle_count];
    for (function, stats) in functions.iter().enumerate() {
        if let Some(c) = stats.cycle {
            members[c].push(function);
        }
    }
    let mut cycles: Vec<Cycle> = members
        .into_iter()
        .map(|members| Cycle {
            number: 0,
            members,
            external_calls: 0,
            internal_calls: 0,
            self_nanos: 0.0,
            children_nanos: 0.0,
        })
        .collect();
    for arc in arcs {
        let Some(c) = functions[arc.callee].cycle else {
            continue;
        };
        match arc.caller {
            Some(caller) if caller == arc.callee => {}
            Some(caller) if functions[caller].cycle == Some(c) => {
                cycles[c].internal_calls += arc.calls;
            }
            _ => cycles[c].external_calls += arc.calls,
        }
    }
    for cycle in &mut cycles {
        cycle.self_nanos = cycle.members.iter().map(|&f| functions[f].self_nanos).sum();
        cycle.children_nanos = cycle
            .members
            .iter()
            .map(|&f| functions[f].children_nanos)
            .sum();
    }
    let first_names: Vec<&str> = cycles
        .iter()
        .map(|cycle| {
            let names = cycle.members.iter().map(|&f| functions[f].name.as_str());
            names.min().unwrap_or_default()
        })
        .collect();
    let mut order: Vec<usize> = (0..cycle_count).collect();
    order.sort_by(|&a, &b| {
        let (ca, cb) = (&cycles[a], &cycles[b]);
        (cb.self_nanos + cb.children_nanos)
            .total_cmp(&(ca.self_nanos + ca.children_nanos))
            .then(cb.external_calls.cmp(&ca.external_calls))
            .then_with(|| first_names[a].cmp(first_names[b]))
    });
    let mut renumber = vec![0; cycle_count];
    for (position, &old) in order.iter().enumerate() {
        renumber[old] = position;
    }
    for stats in functions.iter_mut() {
        stats.cycle = stats.cycle.map(|c| renumber[c]);
    }
    let mut sorted: Vec<Cycle> = order.iter().map(|&old| cycles[old].clone()).collect();
    for (position, cycle) in sorted.iter_mut().enumerate() {
        cycle.number = position + 1;
    }
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ProfileBuilder, appendix_b, recursion};

    fn id(graph: &CallGraph, name: &str) -> FunctionId {
        graph
            .functions
            .iter()
            .position(|f| f.name == name)
            .unwrap_or_else(|| panic!("no function {name}"))
    }

    fn arc<'g>(graph: &'g CallGraph, caller: Option<&str>, callee: &str) -> &'g Arc {
        let caller = caller.map(|c| id(graph, c));
        let callee = id(graph, callee);
        graph
            .arcs
            .iter()
            .find(|a| a.caller == caller && a.callee == callee)
            .expect("arc")
    }

    #[test]
    fn appendix_b_counts_are_exact() {
        let graph = CallGraph::build(&appendix_b(true));
        let calls = |name| graph.functions[id(&graph, name)].calls;
        assert_eq!(calls("add"), 52_500_000);
        assert_eq!(calls("f_quarter"), 7);
        assert_eq!(calls("f_half"), 3);
        assert_eq!(arc(&graph, Some("f_quarter"), "add").calls, 17_500_000);
        assert_eq!(arc(&graph, Some("f_main_4"), "f_quarter").calls, 4);
        assert_eq!(arc(&graph, None, "main").calls, 1);
        assert!(graph.cycles.is_empty());
    }

    #[test]
    fn arc_times_are_exact_not_apportioned() {
        // `slow` is called once from a and nine times from b, but a's call
        // is the expensive one: gprof would give b 90% of slow's time.
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 0.0)
            .path(&["main", "a"], 1, 0.0)
            .path(&["main", "a", "slow"], 1, 900.0)
            .path(&["main", "b"], 1, 0.0)
            .path(&["main", "b", "slow"], 9, 90.0)
            .build();
        let graph = CallGraph::build(&profile);
        assert_eq!(arc(&graph, Some("a"), "slow").total_nanos, 900.0);
        assert_eq!(arc(&graph, Some("b"), "slow").total_nanos, 90.0);
        assert_eq!(arc(&graph, Some("b"), "slow").entry_self_nanos, 90.0);
        assert_eq!(graph.functions[id(&graph, "slow")].self_nanos, 990.0);
        assert_eq!(graph.total_nanos, 990.0);
    }

    #[test]
    fn recursion_is_counted_once_in_total_time() {
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "fib"], 2, 100.0)
            .path(&["main", "fib", "fib"], 4, 50.0)
            .path(&["main", "fib", "fib", "fib"], 8, 25.0)
            .path(&["main", "fib", "fib", "fib", "leaf"], 8, 5.0)
            .build();
        let graph = CallGraph::build(&profile);
        let fib = &graph.functions[id(&graph, "fib")];
        assert_eq!(fib.calls, 14);
        assert_eq!(fib.recursive_calls, 12);
        assert_eq!(fib.non_recursive_calls(), 2);
        assert_eq!(fib.self_nanos, 175.0);
        assert_eq!(fib.total_nanos, 180.0);
        assert_eq!(fib.children_nanos, 5.0);
        let main = &graph.functions[id(&graph, "main")];
        assert_eq!(main.total_nanos, 190.0);
        assert_eq!(main.children_nanos, 180.0);
        let recursive = arc(&graph, Some("fib"), "fib");
        assert_eq!((recursive.calls, recursive.total_nanos), (12, 0.0));
        assert_eq!(arc(&graph, Some("main"), "fib").callee_self_nanos, 175.0);
        assert_eq!(arc(&graph, Some("main"), "fib").entry_children_nanos, 5.0);
    }

    #[test]
    fn mutual_recursion_is_a_cycle_with_gprof_counts() {
        let graph = CallGraph::build(&recursion(false));
        assert_eq!(graph.cycles.len(), 1);
        let cycle = &graph.cycles[0];
        assert_eq!(cycle.number, 1);
        assert_eq!((cycle.external_calls, cycle.internal_calls), (200, 20_200));
        let even = id(&graph, "is_even");
        let odd = id(&graph, "is_odd");
        assert_eq!(cycle.members, {
            let mut m = vec![even, odd];
            m.sort();
            m
        });
        assert_eq!(graph.functions[even].calls, 10_200);
        assert_eq!(arc(&graph, Some("is_odd"), "is_even").calls, 10_000);
        let fib = &graph.functions[id(&graph, "fib")];
        assert_eq!(
            (fib.non_recursive_calls(), fib.recursive_calls),
            (200, 4_378_000)
        );
        assert_eq!(fib.cycle, None);
    }

    #[test]
    fn a_cycle_is_one_unit_for_its_outside_callers() {
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 1.0)
            .path(&["main", "even"], 1, 10.0)
            .path(&["main", "even", "odd"], 1, 20.0)
            .path(&["main", "even", "odd", "even"], 1, 30.0)
            .path(&["main", "even", "odd", "even", "leaf"], 1, 7.0)
            .build();
        let graph = CallGraph::build(&profile);
        let entry = arc(&graph, Some("main"), "even");
        assert_eq!(entry.total_nanos, 67.0);
        assert_eq!(entry.entry_self_nanos, 60.0);
        assert_eq!(entry.entry_children_nanos, 7.0);
        assert_eq!(entry.callee_self_nanos, 40.0);
        let inside = arc(&graph, Some("even"), "odd");
        assert_eq!(
            (inside.entry_self_nanos, inside.entry_children_nanos),
            (0.0, 0.0)
        );
        assert_eq!(inside.total_nanos, 57.0, "odd's outermost activation");
        let even = &graph.functions[id(&graph, "even")];
        assert_eq!(
            (even.self_nanos, even.children_nanos, even.total_nanos),
            (40.0, 7.0, 67.0)
        );
        let cycle = &graph.cycles[0];
        assert_eq!((cycle.self_nanos, cycle.children_nanos), (60.0, 7.0));
    }

    #[test]
    fn self_time_is_never_negative_and_open_frames_keep_their_children() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main"], 1, 0.0)
            .path(&["main", "work"], 3, 30.0)
            .build();
        // main was still running: its own time is missing from the file.
        profile.nodes[1].inclusive_nanos = 0.0;
        profile.nodes[1].open = true;
        let graph = CallGraph::build(&profile);
        let main = &graph.functions[id(&graph, "main")];
        assert!(main.open);
        assert_eq!((main.self_nanos, main.total_nanos), (0.0, 30.0));
        assert!(graph.functions.iter().all(|f| f.self_nanos >= 0.0));
        assert!(graph.arcs.iter().all(|a| a.entry_children_nanos >= 0.0));
    }

    #[test]
    fn overflow_node_is_a_pseudo_function_without_time() {
        let mut profile = ProfileBuilder::timed().path(&["main"], 1, 100.0).build();
        profile.nodes.push(crate::profile::Node {
            parent: Some(0),
            function: None,
            calls: 42,
            inclusive_nanos: 77.0,
            open: false,
            partly_timed: false,
            sampled: false,
            samples: 0,
        });
        profile.overflow_calls = 42;
        let graph = CallGraph::build(&profile);
        let overflow = graph.functions.last().unwrap();
        assert!(overflow.is_overflow);
        assert_eq!(overflow.name, OVERFLOW_NAME);
        assert_eq!((overflow.calls, overflow.self_nanos), (42, 0.0));
        assert_eq!(graph.total_nanos, 100.0);
    }

    #[test]
    fn a_very_deep_tree_does_not_overflow_the_stack() {
        let depth = 100_000;
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "down"], 1, 0.0)
            .build();
        let down_function = profile.nodes[2].function;
        for parent in 2..depth + 1 {
            profile.nodes.push(crate::profile::Node {
                parent: Some(parent),
                function: down_function,
                calls: 1,
                inclusive_nanos: 0.0,
                open: false,
                partly_timed: false,
                sampled: false,
                samples: 0,
            });
        }
        for node in profile.nodes.iter_mut() {
            node.inclusive_nanos = 1.0;
        }
        let graph = CallGraph::build(&profile);
        let down = &graph.functions[id(&graph, "down")];
        assert_eq!(down.calls, depth as u64);
        assert_eq!(down.recursive_calls, depth as u64 - 1);
        assert_eq!(down.total_nanos, 1.0);
        assert_eq!(down.self_nanos, 1.0);
    }
}
