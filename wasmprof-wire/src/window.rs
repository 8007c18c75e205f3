//! What happened between two snapshots of one run: the later less the
//! earlier. A recording window (`--after`, `--duration`) is two snapshots
//! taken between the page's tasks, when no call is running, so each call
//! counted in the window began and ended in it, and each time is whole.
//!
//! The runtime's tree only grows: a node keeps its index for the whole run
//! and new paths are appended. So the earlier snapshot's nodes are a
//! prefix of the later one's, which is checked, not assumed.

use crate::{OracleCount, Snapshot, SnapshotMemory};

/// Why two snapshots cannot be subtracted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowError(pub String);

impl std::fmt::Display for WindowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WindowError {}

impl Snapshot {
    /// This snapshot less `earlier`, a snapshot of the same run taken
    /// before: every count and time of what ran in between.
    ///
    /// Live and peak memory, and the median and longest latency of
    /// futures, are not sums: they stay as at this snapshot.
    pub fn since(&self, earlier: &Snapshot) -> Result<Snapshot, WindowError> {
        self.check_grown_from(earlier)?;
        let mut window = self.clone();
        for (node, before) in window.nodes.iter_mut().zip(&earlier.nodes) {
            node.calls = node.calls.saturating_sub(before.calls);
            node.timed_calls = node.timed_calls.saturating_sub(before.timed_calls);
            node.inclusive = (node.inclusive - before.inclusive).max(0.0);
            // Flags say how calls were timed: a path not taken in the
            // window has no calls to say it of. (One taken keeps them,
            // which can only over-warn.)
            if node.calls == 0 {
                node.flags = 0;
            }
        }
        for (function, before) in window.functions.iter_mut().zip(&earlier.functions) {
            function.calls = function.calls.saturating_sub(before.calls);
        }
        for future in &mut window.futures {
            let Some(before) = earlier.futures.iter().find(|f| f.node == future.node) else {
                continue;
            };
            future.polls = future.polls.saturating_sub(before.polls);
            future.completions = future.completions.saturating_sub(before.completions);
            future.cancellations = future.cancellations.saturating_sub(before.cancellations);
            future.latency_count = future.latency_count.saturating_sub(before.latency_count);
            future.latency_total_ms = (future.latency_total_ms - before.latency_total_ms).max(0.0);
        }
        if let (Some(memory), Some(before)) = (&mut window.memory, &earlier.memory) {
            memory_since(memory, before);
        }
        if let (Some(oracle), Some(before)) = (&mut window.oracle, &earlier.oracle) {
            oracle_since(oracle, before);
        }
        if let Some(threads) = &mut window.threads {
            threads_since(threads, earlier.threads.as_deref().unwrap_or_default());
        }
        Ok(window)
    }

    fn check_grown_from(&self, earlier: &Snapshot) -> Result<(), WindowError> {
        if self.timed != earlier.timed || self.oracle.is_some() != earlier.oracle.is_some() {
            return Err(WindowError(
                "the two snapshots are of different builds".to_owned(),
            ));
        }
        if earlier.nodes.len() > self.nodes.len() || earlier.functions.len() > self.functions.len()
        {
            return Err(WindowError(
                "the earlier snapshot has more nodes or functions than the later one".to_owned(),
            ));
        }
        let moved = (earlier.nodes.iter().zip(&self.nodes))
            .position(|(a, b)| a.parent != b.parent || a.function != b.function);
        if let Some(index) = moved {
            return Err(WindowError(format!(
                "node {index} is another call path in the later snapshot: the tree was rebuilt \
                 between them"
            )));
        }
        let renamed =
            (earlier.functions.iter().zip(&self.functions)).position(|(a, b)| a.name != b.name);
        if let Some(index) = renamed {
            return Err(WindowError(format!(
                "function {index} is another function in the later snapshot"
            )));
        }
        Ok(())
    }
}

fn memory_since(memory: &mut SnapshotMemory, before: &SnapshotMemory) {
    for path in &mut memory.paths {
        let Some(old) = before.paths.iter().find(|p| p.node == path.node) else {
            continue;
        };
        path.allocs = path.allocs.saturating_sub(old.allocs);
        path.alloc_bytes = path.alloc_bytes.saturating_sub(old.alloc_bytes);
        path.frees = path.frees.saturating_sub(old.frees);
        path.freed_bytes = path.freed_bytes.saturating_sub(old.freed_bytes);
        path.reallocs = path.reallocs.saturating_sub(old.reallocs);
        path.grows = path.grows.saturating_sub(old.grows);
        path.grown_pages = path.grown_pages.saturating_sub(old.grown_pages);
    }
    // The growths kept one by one are in the order they happened.
    let kept_before = before.grows.len().min(memory.grows.len());
    memory.grows.drain(..kept_before);
    memory.grows_dropped = memory.grows_dropped.saturating_sub(before.grows_dropped);
    memory.first_pages = before.pages;
}

fn oracle_since(oracle: &mut [OracleCount], before: &[OracleCount]) {
    for count in oracle {
        if let Some(old) = before.iter().find(|o| o.marker == count.marker) {
            count.calls = count.calls.saturating_sub(old.calls);
        }
    }
}

/// Each thread's counters less what the same thread (the same place in the
/// list, the same name) had at the earlier snapshot; a thread the earlier
/// one did not have ran entirely in the window.
fn threads_since(threads: &mut [crate::SnapshotThread], earlier: &[crate::SnapshotThread]) {
    for (index, thread) in threads.iter_mut().enumerate() {
        let Some(before) = earlier.get(index).filter(|b| b.name == thread.name) else {
            continue;
        };
        let before: std::collections::HashMap<u32, &crate::ThreadNode> =
            before.nodes.iter().map(|n| (n.node, n)).collect();
        for node in &mut thread.nodes {
            if let Some(b) = before.get(&node.node) {
                node.calls = node.calls.saturating_sub(b.calls);
                node.timed_calls = node.timed_calls.saturating_sub(b.timed_calls);
                node.inclusive = (node.inclusive - b.inclusive).max(0.0);
            }
        }
        thread.nodes.retain(|n| n.calls > 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NO_FUNCTION, SnapshotFunction, SnapshotNode, Tier};

    fn node(parent: u32, function: u32, calls: u64, inclusive: f64) -> SnapshotNode {
        SnapshotNode {
            parent,
            function,
            calls,
            timed_calls: calls,
            flags: 0,
            inclusive,
        }
    }

    fn function(name: &str, calls: u64) -> SnapshotFunction {
        SnapshotFunction {
            name: name.to_owned(),
            file: "src/lib.rs".to_owned(),
            line: 1,
            tier: Tier::Full,
            is_async: false,
            calls,
            marker: None,
            name_given: false,
            is_test: false,
        }
    }

    fn snapshot(nodes: Vec<SnapshotNode>, functions: Vec<SnapshotFunction>) -> Snapshot {
        Snapshot {
            timed: true,
            functions,
            nodes,
            current: 0,
            overflow: None,
            cap: 1024,
            clock_cost: 0.0,
            futures: Vec::new(),
            memory: None,
            oracle: Some(vec![OracleCount {
                marker: 7,
                calls: 40,
            }]),
            frames: None,
            threads: None,
        }
    }

    #[test]
    fn a_window_has_each_thread_s_calls_in_it_and_threads_new_in_it_whole() {
        let share = |name: &str, node, calls| crate::SnapshotThread {
            name: name.into(),
            read: crate::ThreadRead::Answered,
            nodes: vec![crate::ThreadNode {
                node,
                flags: 0,
                calls,
                timed_calls: calls,
                inclusive: calls as f64,
            }],
        };
        let functions = vec![function("app::work", 0)];
        let mut earlier = snapshot(
            vec![node(0, NO_FUNCTION, 0, 0.0), node(0, 0, 3, 3.0)],
            functions.clone(),
        );
        earlier.threads = Some(vec![share("main", 1, 2), share("worker-0", 1, 1)]);
        let mut later = snapshot(
            vec![node(0, NO_FUNCTION, 0, 0.0), node(0, 0, 10, 10.0)],
            functions,
        );
        later.threads = Some(vec![
            share("main", 1, 5),
            share("worker-0", 1, 1),
            share("worker-1", 1, 4),
        ]);
        let window = later.since(&earlier).unwrap();
        let threads = window.threads.unwrap();
        assert_eq!(threads[0].nodes[0].calls, 3);
        assert!(threads[1].nodes.is_empty(), "worker-0 ran nothing in it");
        assert_eq!(threads[2].nodes[0].calls, 4);
        assert_eq!(threads[2].nodes[0].inclusive, 4.0);
    }

    #[test]
    fn a_window_has_what_ran_in_it_and_the_paths_new_in_it() {
        let earlier = snapshot(
            vec![node(0, NO_FUNCTION, 0, 0.0), node(0, 0, 10, 5.0)],
            vec![function("app::frame", 0), function("app::count", 3)],
        );
        let mut later = snapshot(
            vec![
                node(0, NO_FUNCTION, 0, 0.0),
                node(0, 0, 25, 12.5),
                node(1, 0, 4, 1.0),
            ],
            vec![function("app::frame", 0), function("app::count", 9)],
        );
        later.oracle = Some(vec![OracleCount {
            marker: 7,
            calls: 100,
        }]);
        let window = later.since(&earlier).unwrap();
        assert_eq!(window.nodes[1].calls, 15);
        assert_eq!(window.nodes[1].timed_calls, 15);
        assert_eq!(window.nodes[1].inclusive, 7.5);
        // A path first taken in the window is all the window's.
        assert_eq!(window.nodes[2].calls, 4);
        assert_eq!(window.functions[1].calls, 6);
        assert_eq!(window.oracle.unwrap()[0].calls, 60);
    }

    #[test]
    fn snapshots_of_another_tree_or_in_the_wrong_order_are_refused() {
        let earlier = snapshot(
            vec![node(0, NO_FUNCTION, 0, 0.0), node(0, 0, 10, 5.0)],
            vec![function("app::frame", 0)],
        );
        let other = snapshot(
            vec![node(0, NO_FUNCTION, 0, 0.0), node(0, 1, 10, 5.0)],
            vec![function("app::frame", 0), function("app::draw", 0)],
        );
        assert!(other.since(&earlier).unwrap_err().0.contains("node 1"));
        let root_only = snapshot(vec![node(0, NO_FUNCTION, 0, 0.0)], vec![]);
        assert!(root_only.since(&earlier).is_err());
    }
}
