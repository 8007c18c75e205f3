//! An HTTP handler's requests, each served by an instance of its own with a
//! snapshot of its own, as one snapshot: the calls of every request merged
//! on their call paths, and each request's share kept as a thread of the
//! snapshot named after it (`request 7`), so that `report --thread` shows
//! one request alone as it shows one thread.
//!
//! Every instance runs the same module, but registers its functions in the
//! order it first calls them: they are matched by name, file and line.

use std::collections::HashMap;

use anyhow::{Result, bail};
use wasmprof_wire::{
    NodeId, OracleCount, Snapshot, SnapshotFuture, SnapshotMemory, SnapshotNode, SnapshotThread,
    ThreadNode,
};

/// The merged snapshot of `requests` (each with its thread's name);
/// `None` without any.
pub(crate) fn merge(requests: Vec<(String, Snapshot)>) -> Result<Option<Snapshot>> {
    let mut requests = requests.into_iter();
    let Some((first_name, first)) = requests.next() else {
        return Ok(None);
    };
    let mut merged = Merged::new(&first);
    merged.add(first_name, first)?;
    for (name, snapshot) in requests {
        merged.add(name, snapshot)?;
    }
    Ok(Some(merged.finish()))
}

struct Merged {
    snapshot: Snapshot,
    functions: HashMap<(String, String, u32), u32>,
    nodes: HashMap<(NodeId, u32), NodeId>,
    oracle: HashMap<u32, u64>,
    threads: Vec<SnapshotThread>,
}

impl Merged {
    fn new(first: &Snapshot) -> Merged {
        let root = first.nodes.first().copied().unwrap_or(SnapshotNode {
            parent: u32::MAX,
            function: u32::MAX,
            calls: 0,
            timed_calls: 0,
            flags: 0,
            inclusive: 0.0,
        });
        Merged {
            snapshot: Snapshot {
                timed: first.timed,
                functions: Vec::new(),
                nodes: vec![SnapshotNode {
                    calls: 0,
                    timed_calls: 0,
                    inclusive: 0.0,
                    flags: 0,
                    ..root
                }],
                current: 0,
                overflow: None,
                cap: first.cap,
                clock_cost: first.clock_cost,
                futures: Vec::new(),
                memory: None,
                oracle: first.oracle.as_ref().map(|_| Vec::new()),
                frames: None,
                threads: None,
            },
            functions: HashMap::new(),
            nodes: HashMap::new(),
            oracle: HashMap::new(),
            threads: Vec::new(),
        }
    }

    fn add(&mut self, name: String, snapshot: Snapshot) -> Result<()> {
        if snapshot.threads.is_some() {
            bail!("a handler's request recorded calls on more than one thread");
        }
        let functions: Vec<u32> = snapshot
            .functions
            .iter()
            .map(|f| {
                let key = (f.name.clone(), f.file.clone(), f.line);
                let next = self.snapshot.functions.len() as u32;
                let id = *self.functions.entry(key).or_insert(next);
                if id == next {
                    self.snapshot
                        .functions
                        .push(wasmprof_wire::SnapshotFunction {
                            calls: 0,
                            ..f.clone()
                        });
                }
                self.snapshot.functions[id as usize].calls += f.calls;
                id
            })
            .collect();
        // A node comes after its parent: the tree grows from the root.
        let mut map: Vec<NodeId> = vec![0; snapshot.nodes.len()];
        let mut shares = Vec::with_capacity(snapshot.nodes.len());
        for (index, node) in snapshot.nodes.iter().enumerate() {
            let to = if index == 0 {
                0
            } else {
                let Some(&parent) = map
                    .get(node.parent as usize)
                    .filter(|_| (node.parent as usize) < index)
                else {
                    bail!("a request's snapshot has node {index} before its parent");
                };
                let function = functions
                    .get(node.function as usize)
                    .copied()
                    .unwrap_or(node.function);
                let next = self.snapshot.nodes.len() as NodeId;
                let to = *self.nodes.entry((parent, function)).or_insert(next);
                if to == next {
                    self.snapshot.nodes.push(SnapshotNode {
                        parent,
                        function,
                        calls: 0,
                        timed_calls: 0,
                        flags: 0,
                        inclusive: 0.0,
                    });
                }
                to
            };
            map[index] = to;
            let into = &mut self.snapshot.nodes[to as usize];
            into.calls += node.calls;
            into.timed_calls += node.timed_calls;
            into.inclusive += node.inclusive;
            into.flags |= node.flags;
            if index != 0 {
                shares.push(ThreadNode {
                    node: to,
                    flags: node.flags,
                    calls: node.calls,
                    timed_calls: node.timed_calls,
                    inclusive: node.inclusive,
                });
            }
        }
        if snapshot.current != 0 {
            self.snapshot.current = map[snapshot.current as usize];
        }
        if let Some(overflow) = snapshot.overflow {
            self.snapshot.overflow = Some(map[overflow as usize]);
        }
        self.snapshot.cap = self.snapshot.cap.max(snapshot.cap);
        self.snapshot.clock_cost = self.snapshot.clock_cost.max(snapshot.clock_cost);
        for future in &snapshot.futures {
            self.add_future(SnapshotFuture {
                node: map[future.node as usize],
                ..*future
            });
        }
        if let Some(memory) = &snapshot.memory {
            let node_map = |node: NodeId| map.get(node as usize).copied().unwrap_or(0);
            match &mut self.snapshot.memory {
                Some(into) => into.merge_from(memory, node_map),
                None => {
                    let mut first = SnapshotMemory::default();
                    first.merge_from(memory, node_map);
                    self.snapshot.memory = Some(first);
                }
            }
        }
        for count in snapshot.oracle.iter().flatten() {
            *self.oracle.entry(count.marker).or_insert(0) += count.calls;
        }
        self.threads.push(SnapshotThread {
            name,
            read: wasmprof_wire::ThreadRead::Answered,
            nodes: shares,
        });
        Ok(())
    }

    /// The futures of one call path, added to those of other requests.
    fn add_future(&mut self, future: SnapshotFuture) {
        let Some(into) = self
            .snapshot
            .futures
            .iter_mut()
            .find(|f| f.node == future.node)
        else {
            self.snapshot.futures.push(future);
            return;
        };
        into.polls += future.polls;
        into.completions += future.completions;
        into.cancellations += future.cancellations;
        into.pending_ms += future.pending_ms;
        // The median of medians stands for the median: each request's
        // futures are few.
        let count = into.latency_count + future.latency_count;
        if count > 0 {
            into.latency_median_ms = (into.latency_median_ms * into.latency_count as f64
                + future.latency_median_ms * future.latency_count as f64)
                / count as f64;
        }
        into.latency_count = count;
        into.latency_total_ms += future.latency_total_ms;
        into.latency_max_ms = into.latency_max_ms.max(future.latency_max_ms);
    }

    fn finish(mut self) -> Snapshot {
        if let Some(oracle) = &mut self.snapshot.oracle {
            let mut counts: Vec<OracleCount> = self
                .oracle
                .into_iter()
                .map(|(marker, calls)| OracleCount { marker, calls })
                .collect();
            counts.sort_by_key(|c| c.marker);
            *oracle = counts;
        }
        self.snapshot.threads = Some(self.threads);
        self.snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmprof_profile::fixtures::{snapshot_function as function, snapshot_node as node};

    /// One request: `route` → `fib` (called `fibs` times), its functions
    /// registered in the order given.
    fn request(order: &[&str], fibs: u64) -> Snapshot {
        let id = |name: &str| order.iter().position(|n| *n == name).unwrap() as u32;
        Snapshot {
            timed: true,
            functions: order.iter().map(|n| function(n)).collect(),
            nodes: vec![
                node(u32::MAX, u32::MAX, 0, 0.0),
                node(0, id("route"), 1, 2.0),
                node(1, id("fib"), fibs, 1.5),
            ],
            current: 0,
            overflow: None,
            cap: 100,
            clock_cost: 0.0,
            futures: Vec::new(),
            memory: None,
            oracle: Some(vec![OracleCount {
                marker: 3,
                calls: fibs,
            }]),
            frames: None,
            threads: None,
        }
    }

    #[test]
    fn requests_merge_on_their_paths_whatever_order_their_functions_registered_in() {
        let merged = merge(vec![
            ("request 1".into(), request(&["route", "fib"], 10)),
            ("request 2".into(), request(&["fib", "route"], 7)),
        ])
        .unwrap()
        .unwrap();
        let names: Vec<&str> = merged.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["route", "fib"]);
        assert_eq!(merged.nodes.len(), 3);
        assert_eq!(merged.nodes[2].function, 1);
        assert_eq!(merged.nodes[2].calls, 17);
        assert_eq!(merged.nodes[1].calls, 2);
        assert_eq!(merged.nodes[1].inclusive, 4.0);
        assert_eq!(merged.oracle.as_ref().unwrap()[0].calls, 17);
        let threads = merged.threads.unwrap();
        assert_eq!(threads[1].name, "request 2");
        let fib = threads[1].nodes.iter().find(|n| n.node == 2).unwrap();
        assert_eq!(fib.calls, 7);
    }

    #[test]
    fn a_snapshot_that_names_a_child_before_its_parent_is_refused() {
        let mut bad = request(&["route", "fib"], 1);
        bad.nodes[1].parent = 2;
        assert!(merge(vec![("request 1".into(), bad)]).is_err());
    }
}
