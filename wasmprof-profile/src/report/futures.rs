//! The figures only futures have, per async function and per call path:
//! calls (futures created), completions, cancellations, pending futures,
//! polls and latency. Every text and data report takes them from here.
//!
//! An async function's time elsewhere in the reports is CPU time: the time
//! inside its futures' polls. Latency is something else, wall time from a
//! future's first poll to its completion, awaits included; it is reported
//! apart and never added to any time.

use serde::Serialize;

use crate::profile::{Latency, Profile};

/// One async function, over all its call paths (the rows of the JSON
/// report's `async_functions`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AsyncFunction {
    /// Index in `Profile::functions`.
    #[serde(rename = "id")]
    pub function: usize,
    pub name: String,
    #[serde(flatten)]
    pub figures: Figures,
    /// Its call paths, most calls first.
    pub paths: Vec<AsyncPath>,
}

/// One call path of an async function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AsyncPath {
    pub node: usize,
    /// Function names from the outermost caller down to the async function.
    pub path: Vec<String>,
    #[serde(flatten)]
    pub figures: Figures,
}

/// What the futures of one function or path did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Figures {
    /// Futures created.
    pub calls: u64,
    pub completions: u64,
    pub cancellations: u64,
    pub pending: u64,
    pub polls: u64,
    /// CPU time in polls (the node's inclusive time).
    pub cpu_nanos: f64,
    /// CPU time so far of the pending futures.
    pub pending_nanos: f64,
    /// Latency of the completed futures, when there was a clock.
    pub latency: Option<Latency>,
}

impl Figures {
    /// Polls per future created.
    pub(crate) fn polls_per_call(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.polls as f64 / self.calls as f64
        }
    }

    fn add(&mut self, other: &Figures) {
        self.calls += other.calls;
        self.completions += other.completions;
        self.cancellations += other.cancellations;
        self.pending += other.pending;
        self.polls += other.polls;
        self.cpu_nanos += other.cpu_nanos;
        self.pending_nanos += other.pending_nanos;
        // The median kept is the busiest path's, which [`median_is_exact`]
        // flags.
        self.latency = Latency::combined(self.latency.take(), other.latency.as_ref());
    }
}

/// The async functions of `profile`, most CPU time first, then most calls.
pub(crate) fn summarize(profile: &Profile) -> Vec<AsyncFunction> {
    let mut functions: Vec<AsyncFunction> = Vec::new();
    for future in &profile.futures {
        let Some(node) = profile.nodes.get(future.node) else {
            continue;
        };
        let Some(function) = node.function else {
            continue;
        };
        let figures = Figures {
            calls: node.calls,
            completions: future.completions,
            cancellations: future.cancellations,
            pending: future.pending,
            polls: future.polls,
            cpu_nanos: node.inclusive_nanos,
            pending_nanos: future.pending_nanos,
            latency: future.latency.clone(),
        };
        let path = AsyncPath {
            node: future.node,
            path: path_names(profile, future.node),
            figures,
        };
        match functions.iter_mut().find(|f| f.function == function) {
            Some(entry) => entry.paths.push(path),
            None => functions.push(AsyncFunction {
                function,
                name: profile.functions[function].name.clone(),
                figures: Figures::default(),
                paths: vec![path],
            }),
        }
    }
    for entry in &mut functions {
        entry.paths.sort_by(|a, b| {
            b.figures
                .calls
                .cmp(&a.figures.calls)
                .then(a.node.cmp(&b.node))
        });
        // A path nested in another path of the same function (recursion)
        // has its CPU time counted there already.
        let mut total = Figures::default();
        for path in &entry.paths {
            total.add(&path.figures);
        }
        total.cpu_nanos = entry
            .paths
            .iter()
            .filter(|p| !has_ancestor_of(profile, p.node, entry.function))
            .map(|p| p.figures.cpu_nanos)
            .sum();
        entry.figures = total;
    }
    functions.sort_by(|a, b| {
        b.figures
            .cpu_nanos
            .total_cmp(&a.figures.cpu_nanos)
            .then(b.figures.calls.cmp(&a.figures.calls))
            .then(a.name.cmp(&b.name))
    });
    functions
}

/// Whether the function's median latency is exact: it has one path (the
/// median over several paths is only the busiest path's).
pub(crate) fn median_is_exact(function: &AsyncFunction) -> bool {
    function.paths.len() == 1
}

fn path_names(profile: &Profile, node: usize) -> Vec<String> {
    let mut names = Vec::new();
    let mut at = Some(node);
    while let Some(index) = at.filter(|&i| i != Profile::ROOT) {
        let n = &profile.nodes[index];
        names.push(match n.function {
            Some(f) => profile.functions[f].name.clone(),
            None => super::callgraph::OVERFLOW_NAME.to_owned(),
        });
        at = n.parent;
    }
    names.reverse();
    names
}

fn has_ancestor_of(profile: &Profile, node: usize, function: usize) -> bool {
    let mut at = profile.nodes[node].parent;
    while let Some(index) = at.filter(|&i| i != Profile::ROOT) {
        if profile.nodes[index].function == Some(function) {
            return true;
        }
        at = profile.nodes[index].parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    #[test]
    fn paths_are_summed_per_function_and_latency_kept_apart() {
        let profile = ProfileBuilder::timed()
            .path(&["app::batch"], 1, 1e6)
            .path(&["app::batch", "app::load"], 3, 6e6)
            .path(&["app::main", "app::load"], 1, 2e6)
            .future(&["app::batch", "app::load"], 9, 2, 1, Some(50e6))
            .future(&["app::main", "app::load"], 1, 0, 0, None)
            .build();
        let summary = summarize(&profile);
        assert_eq!(summary.len(), 1, "only load has futures here");
        let load = &summary[0];
        assert_eq!(load.name, "app::load");
        assert_eq!(
            (
                load.figures.calls,
                load.figures.completions,
                load.figures.cancellations
            ),
            (4, 2, 1)
        );
        assert_eq!((load.figures.pending, load.figures.polls), (1, 10));
        assert_eq!(load.figures.cpu_nanos, 8e6);
        assert_eq!(load.paths[0].path, ["app::batch", "app::load"]);
        assert_eq!(load.figures.latency.as_ref().unwrap().median_nanos, 50e6);
        assert!(!median_is_exact(load));
        assert_eq!(load.paths[0].figures.polls_per_call(), 3.0);
    }
}
