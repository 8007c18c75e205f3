//! `report --diff BASE`: what changed from one profile to another, per
//! function: exact calls, self and inclusive time, ranked by how much
//! changed; and the check CI wants, `--fail-if-slower PCT`.
//!
//! Functions are matched by name. Times are compared as they are: run a
//! program several times per side (several `--input`s, several `--diff`s)
//! before trusting a few percent.

use std::collections::BTreeMap;

use crate::error::{Error, Which};

use super::callgraph::CallGraph;
use super::stacks::Stacks;
use super::units::human_duration;
use crate::profile::Profile;

/// The memory totals that grew by more than a threshold: the check that
/// stands beside [`too_slow`] for memory.
pub use super::memory_diff::too_much as too_much_memory;

/// One function on either side.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionChange {
    /// The function's name, by which the two sides are matched.
    pub name: String,
    /// In the base profile; `None`: not in it.
    pub base: Option<Side>,
    /// In the new profile; `None`: not in it.
    pub new: Option<Side>,
}

/// A function's figures in one of the two profiles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    /// Its calls.
    pub calls: u64,
    /// Time in its own code.
    pub self_nanos: f64,
    /// Time in its calls, callees included (each call path once).
    pub total_nanos: f64,
}

impl FunctionChange {
    fn side(side: &Option<Side>) -> Side {
        side.unwrap_or(Side {
            calls: 0,
            self_nanos: 0.0,
            total_nanos: 0.0,
        })
    }

    /// How much its self time grew (negative: shrank).
    pub fn self_change(&self) -> f64 {
        Self::side(&self.new).self_nanos - Self::side(&self.base).self_nanos
    }

    /// How many more calls it had (negative: fewer).
    pub fn calls_change(&self) -> i128 {
        i128::from(Self::side(&self.new).calls) - i128::from(Self::side(&self.base).calls)
    }
}

/// The comparison of two profiles.
#[derive(Debug, Clone)]
pub struct Diff {
    /// Every function of either profile, most changed first.
    pub functions: Vec<FunctionChange>,
    /// The base profile's total time.
    pub base_total: f64,
    /// The new profile's total time.
    pub new_total: f64,
    /// Both sides are timed (else counts only).
    pub timed: bool,
    /// Both sides are counted (else sampled, without call counts).
    pub counted: bool,
}

/// Compares `new` with `base`; both must be of one kind (both timed, or
/// both counts only; both counted, or both sampled).
pub fn diff(base: &Profile, new: &Profile) -> crate::Result<Diff> {
    super::ensure_valid(base)?;
    super::ensure_valid(new)?;
    let (b, n) = (base.timer.mode, new.timer.mode);
    if b.timed() != n.timed() || b.counted() != n.counted() {
        return Err(Error::NotComparable {
            base: format!("{b:?}"),
            new: format!("{n:?}"),
        });
    }
    let base_graph = CallGraph::build(base);
    let new_graph = CallGraph::build(new);
    let sides = |graph: &CallGraph| -> BTreeMap<String, Side> {
        graph
            .functions
            .iter()
            .enumerate()
            .filter(|(id, _)| graph.is_active(*id))
            .map(|(_, f)| {
                (
                    f.name.clone(),
                    Side {
                        calls: f.calls,
                        self_nanos: f.self_nanos,
                        total_nanos: f.total_nanos,
                    },
                )
            })
            .collect()
    };
    let base_sides = sides(&base_graph);
    let new_sides = sides(&new_graph);
    let mut names: Vec<&String> = base_sides.keys().chain(new_sides.keys()).collect();
    names.sort();
    names.dedup();
    let timed = new_graph.timed;
    let mut functions: Vec<FunctionChange> = names
        .into_iter()
        .map(|name| FunctionChange {
            name: name.clone(),
            base: base_sides.get(name).copied(),
            new: new_sides.get(name).copied(),
        })
        .collect();
    functions.sort_by(|a, b| {
        let key = |c: &FunctionChange| {
            if timed {
                c.self_change().abs()
            } else {
                c.calls_change().unsigned_abs() as f64
            }
        };
        key(b).total_cmp(&key(a)).then_with(|| a.name.cmp(&b.name))
    });
    Ok(Diff {
        functions,
        base_total: base_graph.total_nanos,
        new_total: new_graph.total_nanos,
        timed,
        counted: new_graph.counted,
    })
}

fn percent(change: f64, base: f64) -> String {
    if base > 0.0 {
        format!("{:+.1}%", 100.0 * change / base)
    } else if change == 0.0 {
        "0".to_owned()
    } else {
        "new".to_owned()
    }
}

fn signed_duration(nanos: f64) -> String {
    if nanos < 0.0 {
        format!("-{}", human_duration(-nanos))
    } else {
        format!("+{}", human_duration(nanos))
    }
}

/// The table: the totals, then every function that changed, most first.
pub(crate) fn render_diff(diff: &Diff, top: Option<usize>) -> String {
    let mut text = String::new();
    if diff.timed {
        text.push_str(&format!(
            "total: {} -> {} ({}, {})\n",
            human_duration(diff.base_total),
            human_duration(diff.new_total),
            signed_duration(diff.new_total - diff.base_total),
            percent(diff.new_total - diff.base_total, diff.base_total)
        ));
    }
    let changed: Vec<&FunctionChange> = diff.functions.iter().filter(|c| c.base != c.new).collect();
    let shown = top.unwrap_or(changed.len()).min(changed.len());
    text.push_str(&format!(
        "{} of {} functions changed{}:\n",
        changed.len(),
        diff.functions.len(),
        if shown < changed.len() {
            format!(" (the {shown} that changed most)")
        } else {
            String::new()
        }
    ));
    if diff.timed {
        text.push_str(&format!(
            "{:>10}  {:>8}  {:>10}  {:>8}  {:>14}  {:>14}  function\n",
            "Δself", "self%", "Δtotal", "total%", "calls base", "calls new"
        ));
    } else {
        text.push_str(&format!(
            "{:>14}  {:>14}  {:>12}  function\n",
            "calls base", "calls new", "Δcalls"
        ));
    }
    for change in &changed[..shown] {
        let base = FunctionChange::side(&change.base);
        let new = FunctionChange::side(&change.new);
        let status = match (&change.base, &change.new) {
            (None, _) => "  (new)",
            (_, None) => "  (vanished)",
            _ => "",
        };
        let calls = |side: &Option<Side>, value: u64| match side {
            Some(_) if diff.counted => value.to_string(),
            Some(_) => "-".to_owned(),
            None => "absent".to_owned(),
        };
        if diff.timed {
            text.push_str(&format!(
                "{:>10}  {:>8}  {:>10}  {:>8}  {:>14}  {:>14}  {}{status}\n",
                signed_duration(new.self_nanos - base.self_nanos),
                percent(new.self_nanos - base.self_nanos, base.self_nanos),
                signed_duration(new.total_nanos - base.total_nanos),
                percent(new.total_nanos - base.total_nanos, base.total_nanos),
                calls(&change.base, base.calls),
                calls(&change.new, new.calls),
                change.name
            ));
        } else {
            text.push_str(&format!(
                "{:>14}  {:>14}  {:>+12}  {}{status}\n",
                calls(&change.base, base.calls),
                calls(&change.new, new.calls),
                change.calls_change(),
                change.name
            ));
        }
    }
    text
}

/// `--fail-if-slower PCT`: why the new profile is too slow, if it is. The
/// named functions' inclusive times are checked, or the total.
pub fn too_slow(diff: &Diff, functions: &[String], pct: f64) -> crate::Result<Vec<String>> {
    if !diff.timed {
        return Err(Error::NoTimes {
            needs: "a slowdown check",
        });
    }
    let mut failures = Vec::new();
    let mut check = |what: &str, base: f64, new: f64| {
        if base > 0.0 && (new - base) / base * 100.0 > pct {
            failures.push(format!(
                "{what} got slower by {:.1}% ({} -> {}), more than {pct}%",
                100.0 * (new - base) / base,
                human_duration(base),
                human_duration(new)
            ));
        }
    };
    if functions.is_empty() {
        check("the total", diff.base_total, diff.new_total);
    }
    for name in functions {
        let change = diff
            .functions
            .iter()
            .find(|c| c.name == *name)
            .ok_or_else(|| Error::NoSuchFunction {
                name: name.clone(),
                which: Which::Either,
            })?;
        match (&change.base, &change.new) {
            (Some(base), Some(new)) => check(name, base.total_nanos, new.total_nanos),
            (None, _) => {
                return Err(Error::NoSuchFunction {
                    name: name.clone(),
                    which: Which::Base,
                });
            }
            (_, None) => {
                return Err(Error::NoSuchFunction {
                    name: name.clone(),
                    which: Which::New,
                });
            }
        }
    }
    Ok(failures)
}

/// For the differential flame graph: per node of `new`, how the self
/// weight of the same call path changed, as a fraction of the base's
/// (`None` where the base has no such path or had none of it).
pub(crate) fn path_changes(base: &Profile, new: &Profile) -> Vec<Option<f64>> {
    let base_stacks = Stacks::build(base);
    let new_stacks = Stacks::build(new);
    let mut base_paths: BTreeMap<Vec<&str>, f64> = BTreeMap::new();
    for node in 1..base_stacks.frames.len() {
        *base_paths.entry(base_stacks.path(node)).or_default() +=
            base_stacks.frames[node].self_weight;
    }
    (0..new_stacks.frames.len())
        .map(|node| {
            if node == 0 {
                return Some(0.0);
            }
            let base = base_paths.get(&new_stacks.path(node)).copied()?;
            let new = new_stacks.frames[node].self_weight;
            (base > 0.0).then(|| (new - base) / base)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    fn base() -> Profile {
        ProfileBuilder::timed()
            .path(&["main"], 1, 100.0)
            .path(&["main", "parse"], 10, 1_000.0)
            .path(&["main", "old"], 1, 50.0)
            .build()
    }

    fn slower() -> Profile {
        ProfileBuilder::timed()
            .path(&["main"], 1, 100.0)
            .path(&["main", "parse"], 10, 3_000.0)
            .path(&["main", "fresh"], 2, 40.0)
            .build()
    }

    #[test]
    fn the_slowed_function_tops_the_table_with_new_and_vanished_ones_marked() {
        let diff = diff(&base(), &slower()).unwrap();
        assert_eq!(diff.functions[0].name, "parse");
        let table = render_diff(&diff, None);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("total: 1.15 µs -> 3.14 µs"), "{table}");
        assert!(lines[3].ends_with("parse"), "{table}");
        assert!(lines[3].contains("+200.0%"), "{table}");
        assert!(table.contains("fresh  (new)"), "{table}");
        assert!(table.contains("old  (vanished)"), "{table}");
        // `main`'s own time is the same; its inclusive time grew.
        assert!(lines.last().unwrap().ends_with("  main"), "{table}");
        assert!(lines.last().unwrap().contains("+0 ns"), "{table}");
    }

    #[test]
    fn fail_if_slower_checks_the_total_or_the_named_functions() {
        let diff = diff(&base(), &slower()).unwrap();
        assert_eq!(too_slow(&diff, &[], 50.0).unwrap().len(), 1);
        assert!(too_slow(&diff, &[], 500.0).unwrap().is_empty());
        let parse = too_slow(&diff, &["parse".into()], 10.0).unwrap();
        assert!(
            parse[0].starts_with("parse got slower by 200.0%"),
            "{parse:?}"
        );
        assert!(too_slow(&diff, &["main".into()], 500.0).unwrap().is_empty());
        assert!(too_slow(&diff, &["nope".into()], 1.0).is_err());
        let same = super::diff(&base(), &base()).unwrap();
        assert!(too_slow(&same, &[], 0.0).unwrap().is_empty());
        assert_eq!(
            render_diff(&same, None).lines().nth(1).unwrap(),
            "0 of 3 functions changed:"
        );
    }

    #[test]
    fn profiles_of_different_kinds_are_refused() {
        let untimed = ProfileBuilder::untimed().path(&["main"], 1, 0.0).build();
        assert!(diff(&base(), &untimed).is_err());
    }

    #[test]
    fn path_changes_follow_the_call_paths() {
        let changes = path_changes(&base(), &slower());
        let stacks = Stacks::build(&slower());
        let of = |path: &[&str]| {
            let node = (1..stacks.frames.len())
                .find(|&n| stacks.path(n) == path)
                .unwrap();
            changes[node]
        };
        assert_eq!(of(&["main", "parse"]), Some(2.0));
        assert_eq!(of(&["main", "fresh"]), None);
        assert_eq!(of(&["main"]), Some(0.0));
    }
}
