//! `--verify-counts`: the profile's count of every function's calls held
//! against the oracle's, a second count of the same run made by counters
//! that share nothing with the profiler's (`wasmprof_core::oracle`).
//!
//! The two are joined by the function's marker, the table slot that both
//! the runtime's site and the oracle's counter name, so no name can make a
//! match or hide a difference. A function the oracle saw called that the
//! profile does not have at all is a difference too, named from the
//! module's name section.

use std::collections::{BTreeMap, HashMap};

use wasmprof_wire::Snapshot;

use crate::profile::{CountCheck, CountDifference, Function};

/// The check of `snapshot`, whose functions the profile names `functions`
/// (in the snapshot's order); `marker_name` names a marker slot the
/// profile has no function for. `None` when the build had no oracle.
pub fn check(
    snapshot: &Snapshot,
    functions: &[Function],
    marker_name: impl Fn(u32) -> Option<String>,
) -> Option<CountCheck> {
    let oracle = snapshot.oracle.as_ref()?;
    let mut by_marker: BTreeMap<u32, u64> = BTreeMap::new();
    for count in oracle {
        *by_marker.entry(count.marker).or_insert(0) += count.calls;
    }
    let profile_calls = calls_per_function(snapshot);
    let mut check = CountCheck::default();
    for (id, function) in snapshot.functions.iter().enumerate() {
        let Some(marker) = function.marker else {
            continue;
        };
        let oracle = by_marker.remove(&marker).unwrap_or(0);
        let profile = profile_calls[id];
        check.functions += 1;
        if profile != oracle {
            let name = functions.get(id).map_or(&function.name, |f| &f.name);
            check.differences.push(CountDifference {
                function: name.clone(),
                profile,
                oracle,
            });
        }
    }
    // Called, as the oracle saw, and not in the profile at all.
    for (marker, calls) in by_marker.into_iter().filter(|&(_, calls)| calls > 0) {
        check.functions += 1;
        check.differences.push(CountDifference {
            function: marker_name(marker)
                .unwrap_or_else(|| format!("the function of table slot {marker}")),
            profile: 0,
            oracle: calls,
        });
    }
    Some(check)
}

/// A run cut at an arbitrary instruction (the timeout, Ctrl-C) can stop
/// one call between its two counts: the profile's made, the independent
/// one not yet (it comes after the runtime's entry), or for an async
/// function's future the other way round. A single difference of one such
/// call is that, and is set apart; any other difference stands.
pub fn excuse_cut_call(mut check: CountCheck) -> CountCheck {
    if let [only] = check.differences.as_slice() {
        if only.oracle.abs_diff(only.profile) == 1 {
            check.cut_call = Some(only.function.clone());
            check.differences.clear();
        }
    }
    check
}

/// Each snapshot function's calls: its nodes' (a fully instrumented one,
/// overflow nodes included) and its own (a counted one).
fn calls_per_function(snapshot: &Snapshot) -> Vec<u64> {
    let mut calls: Vec<u64> = snapshot.functions.iter().map(|f| f.calls).collect();
    for node in &snapshot.nodes {
        if let Some(total) = calls.get_mut(node.function as usize) {
            *total += node.calls;
        }
    }
    calls
}

/// Names for marker slots, read from the module only when a difference
/// needs one.
pub fn lazy_marker_names(wasm: &std::path::Path) -> impl Fn(u32) -> Option<String> + '_ {
    let names: std::cell::OnceCell<HashMap<u32, String>> = std::cell::OnceCell::new();
    move |slot| {
        names
            .get_or_init(|| super::rustc_names::marker_names(wasm).unwrap_or_default())
            .get(&slot)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmprof_wire::{OracleCount, SnapshotFunction, SnapshotNode, Tier};

    fn function(name: &str, tier: Tier, calls: u64, marker: u32) -> SnapshotFunction {
        SnapshotFunction {
            name: name.into(),
            file: "src/lib.rs".into(),
            line: 1,
            tier,
            is_async: false,
            calls,
            marker: Some(marker),
            name_given: false,
            is_test: false,
        }
    }

    fn node(parent: u32, function: u32, calls: u64) -> SnapshotNode {
        SnapshotNode {
            parent,
            function,
            calls,
            timed_calls: 0,
            flags: 0,
            inclusive: 0.0,
        }
    }

    /// `full` (two paths, 3 + 4 calls), `counted` (5 calls), as the
    /// profile has them, with the oracle's `counts`.
    fn snapshot(counts: &[(u32, u64)]) -> Snapshot {
        Snapshot {
            timed: false,
            functions: vec![
                function("full", Tier::Full, 0, 10),
                function("counted", Tier::Counted, 5, 11),
            ],
            nodes: vec![node(u32::MAX, u32::MAX, 0), node(0, 0, 3), node(1, 0, 4)],
            current: 0,
            overflow: None,
            cap: 100,
            clock_cost: 0.0,
            futures: Vec::new(),
            memory: None,
            oracle: Some(
                counts
                    .iter()
                    .map(|&(marker, calls)| OracleCount { marker, calls })
                    .collect(),
            ),
            frames: None,
            threads: None,
        }
    }

    fn run(counts: &[(u32, u64)]) -> CountCheck {
        check(&snapshot(counts), &[], |slot| {
            (slot == 12).then(|| "missing".to_owned())
        })
        .unwrap()
    }

    #[test]
    fn equal_counts_pass_over_every_path_and_tier() {
        let check = run(&[(10, 7), (11, 5)]);
        assert_eq!(check.functions, 2);
        assert!(check.differences.is_empty(), "{check:?}");
    }

    #[test]
    fn a_lost_call_names_the_function_and_both_counts() {
        let check = run(&[(10, 8), (11, 5)]);
        assert_eq!(
            check.differences,
            [CountDifference {
                function: "full".into(),
                profile: 7,
                oracle: 8
            }]
        );
    }

    #[test]
    fn a_function_missing_from_the_profile_or_the_oracle_is_a_difference() {
        // `counted` never reached the oracle; slot 12 never the profile.
        let check = run(&[(10, 7), (12, 2)]);
        let differences: Vec<(&str, u64, u64)> = check
            .differences
            .iter()
            .map(|d| (d.function.as_str(), d.profile, d.oracle))
            .collect();
        assert_eq!(differences, [("counted", 5, 0), ("missing", 0, 2)]);
        assert_eq!(check.functions, 3);
    }

    #[test]
    fn a_cut_run_sets_apart_one_call_counted_once_and_nothing_more() {
        // The timeout between the two counts of one call of `full`, either
        // way round.
        for counts in [&[(10, 8), (11, 5)][..], &[(10, 6), (11, 5)]] {
            let cut = excuse_cut_call(run(counts));
            assert!(cut.differences.is_empty(), "{cut:?}");
            assert_eq!(cut.cut_call.as_deref(), Some("full"));
        }
        // Two calls either way, or two functions: a difference still.
        for counts in [
            &[(10, 9), (11, 5)][..],
            &[(10, 5), (11, 5)],
            &[(10, 8), (11, 6)],
        ] {
            let check = excuse_cut_call(run(counts));
            assert!(!check.differences.is_empty(), "{counts:?}");
            assert!(check.cut_call.is_none());
        }
    }

    #[test]
    fn without_the_oracle_there_is_no_check() {
        let snapshot = Snapshot {
            oracle: None,
            ..snapshot(&[])
        };
        assert!(check(&snapshot, &[], |_| None).is_none());
    }
}
