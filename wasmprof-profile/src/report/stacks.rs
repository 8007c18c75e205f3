//! The calling-context tree as the pictures draw it: every node with its
//! name, its inclusive and self weight, and its children in a stable order.
//!
//! The weight is time (nanoseconds) when the profile has times, and calls
//! when it has only counts (`--timer none`): a count-only flame graph is
//! one of calls, and says so. Nothing is apportioned: an instrumented
//! profile's tree is exact, each node a real call path.

use super::callgraph::OVERFLOW_NAME;
use super::node_times::NodeTimes;
use super::time_kind::{self, TimeKind};
use crate::profile::{MemoryWeight, Profile};

/// What a weight counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Nanoseconds,
    Calls,
    /// Memory (`--weight`): bytes, or blocks allocated.
    Bytes,
    Blocks,
}

impl Unit {
    /// Time where the profile was timed, calls where it was only counted.
    pub(crate) fn for_profile(profile: &Profile) -> Unit {
        if profile.timer.mode.timed() {
            Unit::Nanoseconds
        } else {
            Unit::Calls
        }
    }
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frame {
    /// The function's name (`<overflow>` for the overflow node).
    pub name: String,
    /// `file:line`, when known.
    pub location: Option<String>,
    /// The profile's function index.
    pub function: Option<usize>,
    pub parent: Option<usize>,
    /// Children ordered by name, so that two runs draw alike.
    pub children: Vec<usize>,
    pub inclusive: f64,
    pub self_weight: f64,
    /// Exact calls through this path (0 in a sampled profile); `None` on a
    /// counted function's path, whose calls are the function's.
    pub calls: Option<u64>,
    /// Still running when the profile was taken.
    pub open: bool,
    /// What its time is: measured, partly, estimated, or none.
    pub time: TimeKind,
    pub depth: usize,
}

/// Every node of a profile, index 0 the root (named `all`).
pub(crate) struct Stacks {
    pub frames: Vec<Frame>,
    pub unit: Unit,
}

impl Stacks {
    pub(crate) fn build(profile: &Profile) -> Stacks {
        Self::weighed(profile, None)
    }

    /// The tree weighed by a memory figure of each path (`--weight`), or,
    /// with `None` or a profile without memory, by time or calls.
    pub(crate) fn weighed(profile: &Profile, weight: Option<MemoryWeight>) -> Stacks {
        let memory = weight.zip(profile.memory.as_ref()).map(|(weight, memory)| {
            let own: Vec<f64> = memory
                .by_node(profile.nodes.len())
                .iter()
                .map(|m| m.weight(weight) as f64)
                .collect();
            let unit = match weight {
                MemoryWeight::Allocs => Unit::Blocks,
                _ => Unit::Bytes,
            };
            (own, unit)
        });
        let unit = memory
            .as_ref()
            .map_or_else(|| Unit::for_profile(profile), |(_, unit)| *unit);
        let times = NodeTimes::compute(profile);
        let count = profile.nodes.len();
        // Count-only: a node weighs its calls, and its subtree's; memory:
        // its own figure, and its subtree's.
        let own: Vec<f64> = match &memory {
            Some((own, _)) => own.clone(),
            None => profile.nodes.iter().map(|n| n.calls as f64).collect(),
        };
        let mut subtree = own.clone();
        for node in (1..count).rev() {
            if let Some(parent) = profile.nodes[node].parent {
                subtree[parent] += subtree[node];
            }
        }
        let mut frames: Vec<Frame> = profile
            .nodes
            .iter()
            .enumerate()
            .map(|(index, node)| {
                let function = node.function.and_then(|f| profile.functions.get(f));
                let name = match (index, function) {
                    (0, _) => "all".to_owned(),
                    (_, Some(f)) => f.name.clone(),
                    (_, None) => OVERFLOW_NAME.to_owned(),
                };
                let (inclusive, self_weight) = match unit {
                    Unit::Nanoseconds => (times.inclusive[index], times.self_nanos[index]),
                    Unit::Calls | Unit::Bytes | Unit::Blocks => (subtree[index], own[index]),
                };
                Frame {
                    name,
                    location: function.map(|f| format!("{}:{}", f.file, f.line)),
                    function: node.function,
                    parent: node.parent,
                    children: Vec::new(),
                    inclusive,
                    self_weight,
                    calls: (!profile.is_counted_path(node)).then_some(node.calls),
                    open: node.open,
                    time: time_kind::of_node(profile, node),
                    depth: 0,
                }
            })
            .collect();
        if frames.is_empty() {
            return Stacks { frames, unit };
        }
        // The root's weight is everything under it, and with memory what
        // was allocated outside any instrumented call.
        let outside = match unit {
            Unit::Bytes | Unit::Blocks => own[0],
            Unit::Nanoseconds | Unit::Calls => 0.0,
        };
        let total: f64 = (1..count)
            .filter(|&n| profile.nodes[n].parent == Some(0))
            .map(|n| frames[n].inclusive)
            .sum();
        frames[0].inclusive = total + outside;
        frames[0].self_weight = outside;
        for node in 1..count {
            if let Some(parent) = frames[node].parent {
                frames[parent].children.push(node);
                frames[node].depth = frames[parent].depth + 1;
            }
        }
        let names: Vec<String> = frames.iter().map(|f| f.name.clone()).collect();
        for frame in &mut frames {
            frame
                .children
                .sort_by(|&a, &b| names[a].cmp(&names[b]).then(a.cmp(&b)));
        }
        Stacks { frames, unit }
    }

    /// The same tree with each node's children in the order of their first
    /// call (the order the runtime made their nodes in), for the formats
    /// that lay calls out in time: an instrumented profile has no timeline,
    /// but it knows which path ran first, and an order by name would invent
    /// one.
    pub(crate) fn in_first_call_order(mut self) -> Stacks {
        for frame in &mut self.frames {
            frame.children.sort_unstable();
        }
        self
    }

    /// The names from the root's child down to `node`.
    pub(crate) fn path(&self, node: usize) -> Vec<&str> {
        let mut path = Vec::new();
        let mut current = Some(node);
        while let Some(n) = current.filter(|&n| n != 0) {
            path.push(self.frames[n].name.as_str());
            current = self.frames[n].parent;
        }
        path.reverse();
        path
    }

    pub(crate) fn total(&self) -> f64 {
        self.frames.first().map_or(0.0, |f| f.inclusive)
    }

    /// The nodes in depth-first order, children in their stable order.
    pub(crate) fn depth_first(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.frames.len());
        let mut stack = vec![0];
        while let Some(node) = stack.pop() {
            if self.frames.is_empty() {
                break;
            }
            order.push(node);
            stack.extend(self.frames[node].children.iter().rev());
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    #[test]
    fn weights_are_times_or_calls() {
        let profile = ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "b"], 2, 20.0)
            .path(&["main", "a"], 3, 30.0)
            .build();
        let stacks = Stacks::build(&profile);
        assert_eq!(stacks.unit, Unit::Nanoseconds);
        assert_eq!(stacks.total(), 60.0);
        let main = stacks.frames[0].children[0];
        assert_eq!(stacks.frames[main].self_weight, 10.0);
        let names: Vec<&str> = stacks.frames[main]
            .children
            .iter()
            .map(|&c| stacks.frames[c].name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"], "children by name");

        let untimed = ProfileBuilder::untimed()
            .path(&["main"], 1, 0.0)
            .path(&["main", "a"], 3, 0.0)
            .build();
        let stacks = Stacks::build(&untimed);
        assert_eq!(stacks.unit, Unit::Calls);
        assert_eq!(stacks.total(), 4.0);
        assert_eq!(stacks.path(2), ["main", "a"]);
    }

    #[test]
    fn memory_weights_are_each_path_s_figure_with_its_subtree_s() {
        let profile = crate::fixtures::memory_profile();
        let stacks = Stacks::weighed(&profile, Some(MemoryWeight::AllocBytes));
        assert_eq!(stacks.unit, Unit::Bytes);
        // 1110 under `outer`, and 7 outside any instrumented call.
        assert_eq!(stacks.total(), 1117.0);
        assert_eq!(stacks.frames[0].self_weight, 7.0);
        let outer = stacks.frames[0].children[0];
        assert_eq!(
            (
                stacks.frames[outer].inclusive,
                stacks.frames[outer].self_weight
            ),
            (1110.0, 100.0)
        );
        let live = Stacks::weighed(&profile, Some(MemoryWeight::LiveBytes));
        assert_eq!(live.total(), 400.0);
        let blocks = Stacks::weighed(&profile, Some(MemoryWeight::Allocs));
        assert_eq!((blocks.unit, blocks.total()), (Unit::Blocks, 5.0));
    }
}
