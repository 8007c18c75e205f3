//! Node times every report agrees on.

use crate::profile::Profile;

/// Inclusive and self time of every node, made consistent: a node's
/// inclusive time is never less than its children's. Clock rounding could
/// otherwise make it so, and so does a frame still open when the run stopped
/// (its own time is missing): the children's sum is then a lower bound.
/// The overflow nodes' time is left out: calls past the node cap are still
/// inside their real caller's time, where the tree cannot show them.
pub(super) struct NodeTimes {
    /// Inclusive time of every node; 0 for the root.
    pub inclusive: Vec<f64>,
    /// Self time of every node, never negative; 0 for the root.
    pub self_nanos: Vec<f64>,
}

impl NodeTimes {
    pub(super) fn compute(profile: &Profile) -> NodeTimes {
        let timed = profile.timer.mode.timed();
        let count = profile.nodes.len();
        // The overflow node, and the functions' overflow nodes under it.
        let mut overflowed = vec![false; count];
        for node in 1..count {
            let n = &profile.nodes[node];
            overflowed[node] =
                n.function.is_none() || n.parent.is_some_and(|p| p != 0 && overflowed[p]);
        }
        let mut children_sum = vec![0.0; count];
        let mut inclusive = vec![0.0; count];
        for node in (1..count).rev() {
            let is_overflow = overflowed[node];
            let own = if timed && !is_overflow {
                profile.nodes[node].inclusive_nanos
            } else {
                0.0
            };
            inclusive[node] = own.max(children_sum[node]);
            if let Some(parent) = profile.nodes[node].parent {
                children_sum[parent] += inclusive[node];
            }
        }
        let self_nanos = (0..count)
            .map(|n| (inclusive[n] - children_sum[n]).max(0.0))
            .collect();
        NodeTimes {
            inclusive,
            self_nanos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    #[test]
    fn inclusive_is_never_less_than_the_children() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main"], 1, 0.0)
            .path(&["main", "a"], 1, 30.0)
            .path(&["main", "b"], 1, 20.0)
            .build();
        profile.nodes[1].inclusive_nanos = 45.0; // rounding: less than 30 + 20
        let times = NodeTimes::compute(&profile);
        assert_eq!(times.inclusive[1], 50.0);
        assert_eq!(times.self_nanos[1..], [0.0, 30.0, 20.0]);
    }

    #[test]
    fn untimed_profiles_have_no_time() {
        let mut profile = ProfileBuilder::untimed().path(&["main"], 1, 0.0).build();
        profile.nodes[1].inclusive_nanos = 5.0;
        assert_eq!(NodeTimes::compute(&profile).inclusive, vec![0.0, 0.0]);
    }
}
