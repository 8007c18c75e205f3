//! Finding the calling-context node a sampled stack stands for.
//!
//! A sample's stack is read outermost first, keeping only the frames that
//! name a fully instrumented function; everything else (functions not
//! instrumented, counted ones, the standard library, JavaScript) is passed
//! over, so its time is its nearest instrumented caller's. The counted
//! functions among the frames below the last instrumented one are kept
//! aside: the sample's time is theirs, and the tree has no node for them
//! (see `counted.rs`). An instrumented
//! call the compiler inlined leaves no frame, so the stack may skip levels
//! of the tree: a frame is then looked for a few levels further down.
//!
//! A missing frame is looked for at the nearest level that has it (the
//! fewest calls hidden), and nothing else is guessed: where the stack fits
//! several paths of the tree (two callers of one function, both inlined),
//! the sample goes to the deepest node that every fitting path shares, and
//! is counted as placed there.

use std::collections::HashMap;

use crate::profile::{FunctionTier, Profile};

/// How many tree levels a missing frame may hide.
const MAX_BRIDGE: usize = 3;
/// Paths followed at once for one stack; past this many the stack is
/// placed where they part.
const MAX_CANDIDATES: usize = 64;

/// Where a stack led.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    /// The node the sample's time belongs to (the root when no frame was
    /// instrumented).
    pub node: usize,
    pub how: Placement,
    /// The counted functions whose frames the stack has below `node`'s,
    /// outermost first, a recursion's repeats as one: the sample ran in
    /// the last of them (or in what it called that was not instrumented).
    /// Empty unless the stack found its node unambiguously (matched or
    /// bridged).
    pub counted: Vec<usize>,
}

/// How a stack found its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// No frame named an instrumented function.
    Outside,
    /// The sample ran in the profiler's own runtime: not the program's
    /// time.
    Runtime,
    /// Every instrumented frame was the next node down.
    Matched,
    /// Some instrumented calls had no frame (inlined), and the tree had
    /// exactly one path for the stack all the same.
    Bridged,
    /// The stack fits several paths of the tree: placed at the deepest node
    /// they share.
    Ambiguous,
    /// A frame the tree has no path for (the engine missed a frame or
    /// credited it to its caller): placed at the deepest node found.
    OffTree,
}

impl Placement {
    /// Whether the sample's time goes to a node of the tree.
    pub(super) fn is_placed(self) -> bool {
        !matches!(self, Placement::Outside | Placement::Runtime)
    }
}

/// A profile's tree, indexed for matching stacks against it.
pub(crate) struct TreeMatcher<'a> {
    profile: &'a Profile,
    /// Fully instrumented functions by the name a sampler shows them with
    /// (an async function also by its body closure's, which its polls run).
    function_of: HashMap<String, usize>,
    /// Counted functions by the same names.
    counted_of: HashMap<String, usize>,
    child_of: HashMap<(usize, usize), usize>,
    children: Vec<Vec<usize>>,
}

impl<'a> TreeMatcher<'a> {
    pub(super) fn new(profile: &'a Profile) -> TreeMatcher<'a> {
        // Counted functions have no node: their frames are kept apart.
        let (counted, full): (Vec<_>, Vec<_>) = profile
            .functions
            .iter()
            .enumerate()
            .partition(|(_, f)| f.tier == Some(FunctionTier::Counted));
        let by_name =
            |functions: Vec<(usize, &crate::profile::Function)>| -> HashMap<String, usize> {
                functions
                    .into_iter()
                    .flat_map(|(index, f)| {
                        std::iter::once(&f.name)
                            .chain(&f.rustc_name)
                            .map(move |name| (name.clone(), index))
                    })
                    .collect()
            };
        let counted_of = by_name(counted);
        let mut function_of = by_name(full);
        for (index, f) in profile.functions.iter().enumerate() {
            if f.is_async {
                // The body's closure, as legacy and v0 symbols name it.
                for name in std::iter::once(&f.name).chain(&f.rustc_name) {
                    function_of.insert(format!("{name}::{{{{closure}}}}"), index);
                    function_of.insert(format!("{name}::{{closure#0}}"), index);
                }
            }
        }
        let child_of = profile
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(index, n)| Some(((n.parent?, n.function?), index)))
            .collect();
        TreeMatcher {
            profile,
            function_of,
            counted_of,
            child_of,
            children: profile.children(),
        }
    }

    /// The node of the stack whose frames are named `names`, outermost
    /// first.
    pub(super) fn locate<'n>(&self, names: impl IntoIterator<Item = &'n str>) -> Located {
        let names: Vec<&str> = names.into_iter().collect();
        if self.in_the_runtime(&names) {
            return Located {
                node: Profile::ROOT,
                how: Placement::Runtime,
                counted: Vec::new(),
            };
        }
        let mut candidates = vec![Profile::ROOT];
        let mut inside = false;
        let mut bridged = false;
        let mut counted: Vec<usize> = Vec::new();
        for name in names {
            let Some(&function) = self.function_of.get(name) else {
                if let Some(&function) = self.counted_of.get(name) {
                    if counted.last() != Some(&function) {
                        counted.push(function);
                    }
                }
                continue;
            };
            inside = true;
            counted.clear();
            let direct: Vec<usize> = candidates
                .iter()
                .filter_map(|&at| self.child_of.get(&(at, function)).copied())
                .collect();
            let next = if direct.is_empty() {
                bridged = true;
                let mut below = Vec::new();
                for &at in &candidates {
                    self.descendants_of(at, function, &mut below);
                }
                below
            } else {
                direct
            };
            if next.is_empty() {
                return Located {
                    node: self.deepest_shared(&candidates),
                    how: Placement::OffTree,
                    counted: Vec::new(),
                };
            }
            if next.len() > MAX_CANDIDATES {
                return Located {
                    node: self.deepest_shared(&next),
                    how: Placement::Ambiguous,
                    counted: Vec::new(),
                };
            }
            candidates = next;
        }
        let how = match (inside, candidates.len() > 1, bridged) {
            (false, _, _) => Placement::Outside,
            (true, true, _) => Placement::Ambiguous,
            (true, false, true) => Placement::Bridged,
            (true, false, false) => Placement::Matched,
        };
        if !matches!(how, Placement::Matched | Placement::Bridged) {
            counted.clear();
        }
        Located {
            node: self.deepest_shared(&candidates),
            how,
            counted,
        }
    }

    /// Whether the sample with the frames `names` ran in the profiler's
    /// runtime (a guard's entry or exit, a site's registration, the
    /// clock's calibration on the first call) rather than in the program.
    /// No clock counts that time as the instrumented call's, and a sampler
    /// that stalls there (calibration takes milliseconds) would otherwise
    /// hand a caller time that its clock never measured.
    fn in_the_runtime(&self, names: &[&str]) -> bool {
        let known =
            |name: &str| self.function_of.contains_key(name) || self.counted_of.contains_key(name);
        // The innermost frame that is the runtime's or the user's decides:
        // a future's polls run the user's body under the runtime's frames.
        names
            .iter()
            .rev()
            .find(|name| is_runtime(name) || known(name))
            .is_some_and(|name| is_runtime(name))
    }

    /// The nodes of `function` at the nearest level, one to [`MAX_BRIDGE`]
    /// levels under `at`, that has any: the fewest calls hidden. Added to
    /// `found` once each.
    fn descendants_of(&self, at: usize, function: usize, found: &mut Vec<usize>) {
        let mut level = vec![at];
        for _ in 0..MAX_BRIDGE {
            let mut next = Vec::new();
            for &node in &level {
                next.extend(self.children[node].iter().copied());
            }
            let before = found.len();
            for &node in &next {
                if self.profile.nodes[node].function == Some(function) && !found.contains(&node) {
                    found.push(node);
                }
            }
            if found.len() > before {
                return;
            }
            level = next;
        }
    }

    /// The deepest node that is `nodes` or an ancestor of each of them.
    fn deepest_shared(&self, nodes: &[usize]) -> usize {
        let Some((&first, rest)) = nodes.split_first() else {
            return Profile::ROOT;
        };
        let path_of = |node: usize| {
            let mut path = vec![node];
            let mut at = node;
            while let Some(parent) = self.profile.nodes[at].parent {
                path.push(parent);
                at = parent;
            }
            path.reverse();
            path
        };
        let mut shared = path_of(first);
        for &node in rest {
            let path = path_of(node);
            let common = shared.iter().zip(&path).take_while(|(a, b)| a == b).count();
            shared.truncate(common);
        }
        shared.last().copied().unwrap_or(Profile::ROOT)
    }
}

/// Whether a frame is the profiler's runtime's own code.
pub fn is_runtime(name: &str) -> bool {
    ["wasmprof_core::", "wasmprof_rt::", "wasmprof_wire::"]
        .iter()
        .any(|runtime| name.contains(runtime))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ProfileBuilder, node_at as node_of};

    /// The thesis's Figure 6.3: `shared` under two callers, `heavy` only
    /// under `from_a`'s.
    fn figure_6_3() -> Profile {
        ProfileBuilder::untimed()
            .path(&["main", "from_a", "shared", "heavy"], 10, 0.0)
            .path(&["main", "from_b", "shared"], 10_000, 0.0)
            .build()
    }

    #[test]
    fn a_stack_with_every_frame_follows_the_tree() {
        let profile = figure_6_3();
        let matcher = TreeMatcher::new(&profile);
        let located = matcher.locate(["main", "js (x.js:1)", "from_b", "shared"]);
        assert_eq!(
            located.node,
            node_of(&profile, &["main", "from_b", "shared"])
        );
        assert_eq!(located.how, Placement::Matched);
        assert_eq!(matcher.locate(["(program)"]).how, Placement::Outside);
    }

    #[test]
    fn samples_in_the_profiler_s_runtime_are_no_function_s() {
        let profile = figure_6_3();
        let matcher = TreeMatcher::new(&profile);
        // The first call calibrates the clock before it reads its start.
        let calibrating = [
            "main",
            "wasmprof_core::guard::enter_slow",
            "wasmprof_core::calibration::calibrate",
            "wasm-to-js",
            "getTime (host-api.js:40)",
        ];
        assert_eq!(matcher.locate(calibrating).how, Placement::Runtime);
        let dropping = [
            "main",
            "from_b",
            "core::ptr::drop_in_place<wasmprof_core::guard::Guard>",
        ];
        assert_eq!(matcher.locate(dropping).how, Placement::Runtime);
        assert!(!Placement::Runtime.is_placed());
        // A future's poll runs the user's body under the runtime's frames.
        let polling = [
            "main",
            "<wasmprof_core::future::Instrumented<F> as core::future::future::Future>::poll",
            "from_b",
            "std::fmt::write",
        ];
        let located = matcher.locate(polling);
        assert_eq!(located.how, Placement::Matched);
        assert_eq!(located.node, node_of(&profile, &["main", "from_b"]));
    }

    #[test]
    fn a_function_named_by_hand_is_found_by_rustc_s_name_for_its_frames() {
        let mut profile = figure_6_3();
        let from_b = profile
            .functions
            .iter()
            .position(|f| f.name == "from_b")
            .unwrap();
        profile.functions[from_b].rustc_name = Some("<app::B as app::Run>::run::inner".into());
        let matcher = TreeMatcher::new(&profile);
        let located = matcher.locate(["main", "<app::B as app::Run>::run::inner"]);
        assert_eq!(located.node, node_of(&profile, &["main", "from_b"]));
        assert_eq!(located.how, Placement::Matched);
    }

    #[test]
    fn an_async_function_s_polls_are_found_by_its_body_under_either_mangling() {
        let profile = ProfileBuilder::untimed()
            .path(&["main", "app::fetch"], 1, 0.0)
            .future(&["main", "app::fetch"], 3, 1, 0, None)
            .build();
        let matcher = TreeMatcher::new(&profile);
        let fetch = node_of(&profile, &["main", "app::fetch"]);
        for body in ["app::fetch::{{closure}}", "app::fetch::{closure#0}"] {
            let located = matcher.locate(["main", body]);
            assert_eq!((located.node, located.how), (fetch, Placement::Matched));
        }
    }

    #[test]
    fn inlined_callers_are_bridged_only_where_one_path_fits() {
        let profile = figure_6_3();
        let matcher = TreeMatcher::new(&profile);
        // `from_a` and `shared` inlined into `main`: only one path has
        // `heavy`.
        let located = matcher.locate(["main", "heavy"]);
        assert_eq!(
            located.node,
            node_of(&profile, &["main", "from_a", "shared", "heavy"])
        );
        assert_eq!(located.how, Placement::Bridged);
        // `shared` itself with both callers inlined: it could be either, so
        // it stays with `main`, and is never given to the busier caller.
        let located = matcher.locate(["main", "shared"]);
        assert_eq!(located.node, node_of(&profile, &["main"]));
        assert_eq!(located.how, Placement::Ambiguous);
        // A later frame settles which `shared` it was.
        let located = matcher.locate(["main", "shared", "heavy"]);
        assert_eq!(
            located.node,
            node_of(&profile, &["main", "from_a", "shared", "heavy"])
        );
        assert_eq!(located.how, Placement::Bridged);
    }

    #[test]
    fn counted_frames_below_the_last_instrumented_one_are_kept_aside() {
        let profile = ProfileBuilder::untimed()
            .path(&["main", "from_a", "shared", "heavy"], 10, 0.0)
            .path(&["main", "from_b", "shared"], 10, 0.0)
            .counted("get", 5)
            .counted("sort", 5)
            .build();
        let function = |name: &str| profile.functions.iter().position(|f| f.name == name);
        let (get, sort) = (function("get").unwrap(), function("sort").unwrap());
        let matcher = TreeMatcher::new(&profile);
        // Counted frames above an instrumented one are that one's callers'
        // business: its node is the runtime's.
        let located = matcher.locate(["main", "get", "from_a", "sort", "core::sort", "sort"]);
        assert_eq!(located.node, node_of(&profile, &["main", "from_a"]));
        assert_eq!(located.how, Placement::Matched);
        assert_eq!(located.counted, vec![sort], "a recursion's repeats as one");
        let located = matcher.locate(["main", "from_a", "get", "std", "sort"]);
        assert_eq!(located.counted, vec![get, sort]);
        // Where the node is not certain, neither is the path below it.
        assert!(matcher.locate(["main", "shared", "get"]).counted.is_empty());
    }

    #[test]
    fn a_frame_the_tree_lacks_stops_at_the_deepest_node_found() {
        let profile = figure_6_3();
        let matcher = TreeMatcher::new(&profile);
        let located = matcher.locate(["main", "from_b", "heavy"]);
        assert_eq!(located.node, node_of(&profile, &["main", "from_b"]));
        assert_eq!(located.how, Placement::OffTree);
    }
}
