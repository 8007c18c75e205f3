//! Memory per function and per caller→callee arc, summed exactly from the
//! calling-context tree's memory figures (`run --memory`), as
//! [`CallGraph`](super::CallGraph) sums times: nothing is apportioned.
//!
//! A function's *self* figures are its own paths' (what was allocated
//! while it was the innermost instrumented call); its *total* bytes add
//! its callees', counted once per outermost call, so that recursion does
//! not count a byte twice. Allocations outside any instrumented call are
//! the host's, shown as `(outside instrumented code)`.

use crate::profile::{MemoryProfile, PathMemory, Profile};

/// Where memory figures are summed: a function, or no instrumented call.
pub(crate) type FunctionId = usize;

/// Memory of one function, over all its call paths.
#[derive(Debug, Clone, Default)]
pub(crate) struct FunctionMemory {
    /// Its own paths' figures added up.
    pub own: PathMemory,
    /// Bytes and blocks allocated in its calls, its callees' included.
    pub total_bytes: u64,
    pub total_allocs: u64,
}

/// What calls of `callee` made by `caller` allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArcMemory {
    /// `None`: called by the host.
    pub caller: Option<FunctionId>,
    pub callee: FunctionId,
    /// Allocated by the callee itself in those calls.
    pub self_bytes: u64,
    pub self_allocs: u64,
    /// Allocated in those calls, the callee's callees included.
    pub total_bytes: u64,
}

/// The function-level view of a profile's memory.
#[derive(Debug, Clone)]
pub(crate) struct MemoryGraph {
    /// By function id (the profile's).
    pub functions: Vec<FunctionMemory>,
    /// Sorted by callee, then caller (host first).
    pub arcs: Vec<ArcMemory>,
    /// Allocations outside any instrumented call (the root's), and in the
    /// `<overflow>` node's paths.
    pub outside: PathMemory,
    pub overflow: PathMemory,
    /// The sums over every path.
    pub totals: PathMemory,
}

impl MemoryGraph {
    /// `None` when the profile has no memory figures.
    pub(crate) fn build(profile: &Profile) -> Option<MemoryGraph> {
        let memory = profile.memory.as_ref()?;
        Some(Self::from_memory(profile, memory))
    }

    fn from_memory(profile: &Profile, memory: &MemoryProfile) -> MemoryGraph {
        let n = profile.nodes.len();
        let by_node = memory.by_node(n);
        // Inclusive bytes and blocks of every node: children come after
        // their parents, so one backward pass adds each into its parent.
        let mut inclusive: Vec<(u64, u64)> =
            by_node.iter().map(|m| (m.alloc_bytes, m.allocs)).collect();
        for index in (1..n).rev() {
            if let Some(parent) = profile.nodes[index].parent {
                inclusive[parent].0 += inclusive[index].0;
                inclusive[parent].1 += inclusive[index].1;
            }
        }
        let mut functions = vec![FunctionMemory::default(); profile.functions.len()];
        let mut outside = PathMemory::default();
        let mut overflow = PathMemory::default();
        let mut arcs: Vec<ArcMemory> = Vec::new();
        for (index, node) in profile.nodes.iter().enumerate() {
            let own = &by_node[index];
            let Some(function) = node.function else {
                if index == Profile::ROOT {
                    outside.add(own);
                } else {
                    overflow.add(own);
                }
                continue;
            };
            let entry = &mut functions[function];
            entry.own.add(own);
            if !has_ancestor_of(profile, index, function) {
                entry.total_bytes += inclusive[index].0;
                entry.total_allocs += inclusive[index].1;
            }
            if inclusive[index].0 == 0 {
                continue;
            }
            let caller = profile.caller_function(index);
            match arcs
                .iter_mut()
                .find(|a| a.caller == caller && a.callee == function)
            {
                Some(arc) => {
                    arc.self_bytes += own.alloc_bytes;
                    arc.self_allocs += own.allocs;
                    arc.total_bytes += inclusive[index].0;
                }
                None => arcs.push(ArcMemory {
                    caller,
                    callee: function,
                    self_bytes: own.alloc_bytes,
                    self_allocs: own.allocs,
                    total_bytes: inclusive[index].0,
                }),
            }
        }
        arcs.sort_by_key(|a| (a.callee, a.caller.map_or(0, |c| c + 1)));
        MemoryGraph {
            functions,
            arcs,
            outside,
            overflow,
            totals: memory.totals(),
        }
    }

    /// Functions that allocated, freed or grew memory, or whose callees
    /// allocated, by total bytes, then own bytes, then id.
    pub(crate) fn ranked(&self) -> Vec<FunctionId> {
        let mut ranked: Vec<FunctionId> = (0..self.functions.len())
            .filter(|&f| {
                let m = &self.functions[f];
                m.total_bytes > 0 || m.own.frees > 0 || m.own.grows > 0
            })
            .collect();
        ranked.sort_by(|&a, &b| {
            let (x, y) = (&self.functions[a], &self.functions[b]);
            y.total_bytes
                .cmp(&x.total_bytes)
                .then(y.own.alloc_bytes.cmp(&x.own.alloc_bytes))
                .then(a.cmp(&b))
        });
        ranked
    }

    /// The arcs into `callee`, host first.
    pub(crate) fn arcs_into(&self, callee: FunctionId) -> impl Iterator<Item = &ArcMemory> {
        self.arcs.iter().filter(move |a| a.callee == callee)
    }

    /// The arcs out of `caller`.
    pub(crate) fn arcs_from(&self, caller: FunctionId) -> impl Iterator<Item = &ArcMemory> {
        self.arcs
            .iter()
            .filter(move |a| a.caller == Some(caller) && a.callee != caller)
    }
}

/// Whether a node above `index` is also of `function` (a recursive call).
fn has_ancestor_of(profile: &Profile, index: usize, function: usize) -> bool {
    let mut at = profile.nodes[index].parent;
    while let Some(node) = at {
        if profile.nodes[node].function == Some(function) {
            return true;
        }
        at = profile.nodes[node].parent;
    }
    false
}

/// The call path of `node`, outermost first, its names joined by
/// `separator`; where no instrumented call was running, `(outside
/// instrumented code)`.
pub(crate) fn call_path(profile: &Profile, node: usize, separator: &str) -> String {
    let stack = profile.stack(node);
    if stack.is_empty() {
        return super::words::OUTSIDE.to_owned();
    }
    stack
        .iter()
        .map(|&f| profile.functions[f].name.as_str())
        .collect::<Vec<_>>()
        .join(separator)
}

/// A byte count as people read it: `1000 B`, `2.0 KiB`, `1.0 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::memory_profile;

    #[test]
    fn totals_count_callees_once_and_arcs_say_what_calls_through_them_allocated() {
        let profile = memory_profile();
        let graph = MemoryGraph::build(&profile).unwrap();
        let id = |name: &str| {
            profile
                .functions
                .iter()
                .position(|f| f.name == name)
                .unwrap()
        };
        let (outer, inner) = (id("outer"), id("inner"));
        // outer allocates 100 itself; inner, called by outer, 1000 then,
        // recursively, 10 more.
        assert_eq!(graph.functions[outer].own.alloc_bytes, 100);
        assert_eq!(graph.functions[outer].total_bytes, 1110);
        assert_eq!(graph.functions[inner].own.alloc_bytes, 1010);
        assert_eq!(graph.functions[inner].total_bytes, 1010);
        assert_eq!(graph.ranked(), [outer, inner]);
        let into_inner: Vec<_> = graph.arcs_into(inner).collect();
        assert_eq!(into_inner.len(), 2);
        assert_eq!(
            (into_inner[0].caller, into_inner[0].total_bytes),
            (Some(outer), 1010)
        );
        assert_eq!(
            (into_inner[1].caller, into_inner[1].self_bytes),
            (Some(inner), 10)
        );
        assert_eq!(graph.outside.alloc_bytes, 7);
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(human_bytes(1000), "1000 B");
        assert_eq!(human_bytes(2048), "2.0 KiB");
        assert_eq!(human_bytes(1 << 20), "1.0 MiB");
    }
}
