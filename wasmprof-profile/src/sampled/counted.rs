//! Call paths for the counted functions the engine's samples saw.
//!
//! A counted function has no node: its calls are counted per function, its
//! callers are not tracked, and no clock times it. A long call of one would
//! be its caller's self time. The engine's sampler sees its frame all the
//! same (builds whose runs are sampled keep instrumented functions out of
//! line), below the frame of its nearest fully instrumented caller, whose
//! node the tree has. So each counted function a sample ran in gets a node
//! under that caller's, with no calls (they are the function's, not a
//! path's) and only the time the samples give it.
//!
//! A fully instrumented function that a counted one called keeps its node
//! where the runtime put it, under the counted function's caller: its time
//! is not part of the counted function's.

use std::collections::HashMap;

use crate::profile::{Node, Profile};

/// Finds or adds the nodes of counted functions under a profile's nodes.
pub(crate) struct CountedNodes {
    /// Nodes of counted functions, by parent and function.
    node_of: HashMap<(usize, usize), usize>,
    /// The first node this added: those after it are all its own.
    first_added: usize,
}

impl CountedNodes {
    pub(super) fn new(profile: &Profile) -> CountedNodes {
        let node_of = profile
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| profile.is_counted_path(n))
            .filter_map(|(index, n)| Some(((n.parent?, n.function?), index)))
            .collect();
        CountedNodes {
            node_of,
            first_added: profile.nodes.len(),
        }
    }

    /// The node of the path `at` → `counted[0]` → `counted[1]` …, added as
    /// needed; `at` itself when `counted` is empty.
    pub(super) fn node(&mut self, profile: &mut Profile, at: usize, counted: &[usize]) -> usize {
        counted.iter().fold(at, |parent, &function| {
            *self.node_of.entry((parent, function)).or_insert_with(|| {
                profile.nodes.push(Node {
                    parent: Some(parent),
                    function: Some(function),
                    ..Node::root()
                });
                profile.nodes.len() - 1
            })
        })
    }

    /// Takes the added nodes that ended with no time out again (a caller
    /// whose measured time its measured callees already fill leaves its
    /// counted callees none): they would be arcs without calls or time.
    pub(super) fn drop_empty(self, profile: &mut Profile) {
        let first = self.first_added;
        let mut new_index: Vec<Option<usize>> = (0..profile.nodes.len()).map(Some).collect();
        let mut kept = first;
        for index in first..profile.nodes.len() {
            let node = &profile.nodes[index];
            let parent_kept = node.parent.and_then(|p| new_index[p]).is_some();
            if parent_kept && node.inclusive_nanos > 0.0 {
                new_index[index] = Some(kept);
                kept += 1;
            } else {
                new_index[index] = None;
            }
        }
        let mut index = 0;
        profile.nodes.retain(|_| {
            let keep = new_index[index].is_some();
            index += 1;
            keep
        });
        for node in &mut profile.nodes[first..] {
            node.parent = node.parent.and_then(|p| new_index[p]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ProfileBuilder, node_at};

    #[test]
    fn each_path_of_counted_functions_gets_one_node_under_its_caller() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "run"], 1, 10.0)
            .counted("get", 5)
            .counted("parse", 7)
            .build();
        let function = |name: &str| profile.functions.iter().position(|f| f.name == name);
        let (get, parse) = (function("get").unwrap(), function("parse").unwrap());
        let run = node_at(&profile, &["main", "run"]);
        let mut nodes = CountedNodes::new(&profile);
        let first = nodes.node(&mut profile, run, &[get]);
        assert_eq!(nodes.node(&mut profile, run, &[get]), first);
        let nested = nodes.node(&mut profile, run, &[get, parse]);
        assert_eq!(profile.nodes[nested].parent, Some(first));
        assert_eq!(nodes.node(&mut profile, run, &[]), run);
        assert_eq!(profile.nodes[first].calls, 0, "calls stay the function's");
        assert!(profile.is_counted_path(&profile.nodes[nested]));

        profile.nodes[first].inclusive_nanos = 2.0;
        let other = nodes.node(&mut profile, run, &[parse]);
        profile.nodes[other].inclusive_nanos = 1.0;
        nodes.drop_empty(&mut profile);
        assert_eq!(
            profile.nodes.len(),
            first + 2,
            "the empty `get → parse` is gone"
        );
        assert_eq!(node_at(&profile, &["main", "run", "parse"]), first + 1);
        assert_eq!(profile.nodes[first + 1].parent, Some(run));
        crate::profile::validate(&profile).unwrap();
    }
}
