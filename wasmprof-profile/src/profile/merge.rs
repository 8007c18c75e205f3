//! Several profiles of one program as one: the runs of a test suite, or
//! repeated runs given to `report --input` together.

use std::collections::HashMap;

use super::model::{FutureStats, Latency, Node, Profile};
#[cfg(test)]
use super::validate;

/// Adds `future` (of another profile) to the futures of `node` (see
/// [`Latency::combined`](Latency::combined) for the median).
fn merge_future(into: &mut Profile, node: usize, future: &FutureStats) {
    let Some(merged) = into.futures.iter_mut().find(|f| f.node == node) else {
        into.futures.push(FutureStats {
            node,
            ..future.clone()
        });
        return;
    };
    merged.polls += future.polls;
    merged.completions += future.completions;
    merged.cancellations += future.cancellations;
    merged.pending += future.pending;
    merged.pending_nanos += future.pending_nanos;
    merged.latency = Latency::combined(merged.latency.take(), future.latency.as_ref());
}

/// Merges several profiles of the same program into one: nodes with the same
/// stack of function names are added together. Run information is taken
/// from the first profile; the merged profile is complete only if all are.
pub fn merge(profiles: Vec<Profile>) -> Option<Profile> {
    let mut profiles = profiles.into_iter();
    let mut merged = profiles.next()?;
    for other in profiles {
        merge_into(&mut merged, &other);
    }
    Some(merged)
}

fn merge_into(into: &mut Profile, other: &Profile) {
    into.timer.clock_cost_nanos = match (into.timer.clock_cost_nanos, other.timer.clock_cost_nanos)
    {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let mut function_ids: HashMap<(String, String, u32, Option<u32>), usize> = into
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| ((f.name.clone(), f.file.clone(), f.line, f.column), i))
        .collect();
    let function_map: Vec<usize> = other
        .functions
        .iter()
        .map(|f| {
            let key = (f.name.clone(), f.file.clone(), f.line, f.column);
            let mut added = false;
            let id = *function_ids.entry(key).or_insert_with(|| {
                added = true;
                into.functions.push(f.clone());
                into.functions.len() - 1
            });
            // A counted function's calls are the function's, not a node's.
            if !added {
                if let Some(calls) = f.calls {
                    let merged = &mut into.functions[id];
                    merged.calls = Some(merged.calls.unwrap_or(0) + calls);
                }
            }
            id
        })
        .collect();
    let mut child_index: HashMap<(usize, Option<usize>), usize> = into
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.parent.map(|p| ((p, n.function), i)))
        .collect();
    let mut node_map = vec![Profile::ROOT; other.nodes.len()];
    for (index, node) in other.nodes.iter().enumerate().skip(1) {
        let parent = node_map[node.parent.unwrap_or(Profile::ROOT)];
        let function = node.function.map(|f| function_map[f]);
        let target = *child_index.entry((parent, function)).or_insert_with(|| {
            into.nodes.push(Node {
                parent: Some(parent),
                function,
                calls: 0,
                inclusive_nanos: 0.0,
                open: false,
                partly_timed: false,
                sampled: false,
                samples: 0,
            });
            into.nodes.len() - 1
        });
        let merged = &mut into.nodes[target];
        merged.calls += node.calls;
        merged.inclusive_nanos += node.inclusive_nanos;
        merged.open |= node.open;
        merged.partly_timed |= node.partly_timed;
        merged.sampled |= node.sampled;
        merged.samples += node.samples;
        node_map[index] = target;
    }
    for future in &other.futures {
        merge_future(into, node_map[future.node], future);
    }
    into.merge_threads(other, &node_map);
    match (&mut into.memory, &other.memory) {
        (Some(into), Some(other)) => into.merge_from(other, &node_map),
        (None, Some(other)) => {
            let mut memory = super::MemoryProfile::default();
            memory.merge_from(other, &node_map);
            into.memory = Some(memory);
        }
        _ => {}
    }
    into.overflow_calls += other.overflow_calls;
    into.run.wall_nanos += other.run.wall_nanos;
    // Checked only if every run was: one without the oracle leaves counts
    // that nothing held against another.
    into.run.count_check = match (into.run.count_check.take(), &other.run.count_check) {
        (Some(mut into), Some(other)) => {
            into.functions += other.functions;
            into.differences.extend(other.differences.iter().cloned());
            Some(into)
        }
        _ => None,
    };
    if let (Some(into), Some(other)) = (&mut into.timer.hybrid, &other.timer.hybrid) {
        into.samples += other.samples;
        into.matched_samples += other.matched_samples;
        for unmatched in &other.unmatched {
            match into
                .unmatched
                .iter_mut()
                .find(|u| u.reason == unmatched.reason)
            {
                Some(same) => {
                    same.samples += unmatched.samples;
                    same.nanos += unmatched.nanos;
                }
                None => into.unmatched.push(unmatched.clone()),
            }
        }
    }
    if !other.run.complete {
        into.run.complete = false;
        into.run.incomplete_reason = into
            .run
            .incomplete_reason
            .take()
            .or_else(|| other.run.incomplete_reason.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_adds_matching_paths() {
        let merged = merge(vec![
            crate::fixtures::demo_profile(),
            crate::fixtures::demo_profile(),
        ])
        .unwrap();
        assert_eq!(merged.nodes.len(), 3);
        assert_eq!(merged.nodes[2].calls, 10);
        assert_eq!(merged.nodes[1].inclusive_nanos, 200.0);
    }

    #[test]
    fn merging_adds_the_futures_of_the_same_path() {
        let run = |polls, latency: f64| {
            crate::fixtures::ProfileBuilder::timed()
                .path(&["app::run", "app::load"], 2, 1e6)
                .future(&["app::run", "app::load"], polls, 2, 0, Some(latency))
                .build()
        };
        let merged = merge(vec![run(5, 10e6), run(7, 30e6)]).unwrap();
        assert_eq!(merged.futures.len(), 1);
        let future = &merged.futures[0];
        assert_eq!(merged.nodes[future.node].calls, 4);
        assert_eq!((future.polls, future.completions), (12, 4));
        let latency = future.latency.as_ref().unwrap();
        assert_eq!((latency.count, latency.max_nanos), (4, 30e6));
        assert_eq!(latency.total_nanos, 80e6);
        validate(&merged).unwrap();
    }
}
