//! Memory against a base (`report --diff`, `--fail-if-more-memory`): the
//! totals, and per function what it allocated and left live, by name, as
//! exact as the figures are.

use std::collections::BTreeMap;

use super::memory_graph::{MemoryGraph, human_bytes};
use super::words::OUTSIDE;
use crate::error::{Error, Which};
use crate::profile::Profile;

/// A function's bytes allocated and bytes left live.
type Figures = (u64, u64);

/// Per function name (and the allocations outside instrumented code), its
/// own figures.
fn by_name(profile: &Profile, graph: &MemoryGraph) -> BTreeMap<String, Figures> {
    let mut names = BTreeMap::new();
    for (id, figures) in graph.functions.iter().enumerate() {
        let own = &figures.own;
        if own.alloc_bytes > 0 || own.live_bytes > 0 {
            let entry = names
                .entry(profile.functions[id].name.clone())
                .or_insert((0, 0));
            entry.0 += own.alloc_bytes;
            entry.1 += own.live_bytes;
        }
    }
    if graph.outside.alloc_bytes > 0 {
        names.insert(
            OUTSIDE.to_owned(),
            (graph.outside.alloc_bytes, graph.outside.live_bytes),
        );
    }
    names
}

/// The comparison's memory section, when both profiles have memory.
pub(crate) fn render(base: &Profile, new: &Profile, top: usize) -> Option<String> {
    let (base_memory, new_memory) = (base.memory.as_ref()?, new.memory.as_ref()?);
    let (base_graph, new_graph) = (MemoryGraph::build(base)?, MemoryGraph::build(new)?);
    let mut text = String::from("\nmemory:\n");
    for (what, before, after) in [
        (
            "allocated",
            base_graph.totals.alloc_bytes,
            new_graph.totals.alloc_bytes,
        ),
        ("peak", base_memory.peak_bytes, new_memory.peak_bytes),
        (
            "live at the end",
            base_memory.live_bytes,
            new_memory.live_bytes,
        ),
    ] {
        text.push_str(&format!(
            "  {what}: {} -> {} ({})\n",
            human_bytes(before),
            human_bytes(after),
            change(before, after)
        ));
    }
    let (before, after) = (by_name(base, &base_graph), by_name(new, &new_graph));
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    let figures = |map: &BTreeMap<String, Figures>, name: &String| map.get(name).copied();
    let mut changed: Vec<(&String, Option<Figures>, Option<Figures>)> = names
        .into_iter()
        .map(|name| (name, figures(&before, name), figures(&after, name)))
        .filter(|(_, b, a)| b != a)
        .collect();
    let delta = |b: Option<Figures>, a: Option<Figures>| {
        a.map_or(0, |a| a.0) as i128 - b.map_or(0, |b| b.0) as i128
    };
    changed.sort_by_key(|&(name, b, a)| (std::cmp::Reverse(delta(b, a).abs()), name.clone()));
    if changed.is_empty() {
        text.push_str("  no function allocated differently\n");
        return Some(text);
    }
    text.push_str(&format!(
        "  {:>14}  {:>14}  {:>12}  {:>12}  function\n",
        "bytes base", "bytes new", "live base", "live new"
    ));
    for &(name, b, a) in changed.iter().take(top) {
        let cell = |f: Option<Figures>, pick: fn(Figures) -> u64| {
            f.map_or_else(|| "-".to_owned(), |f| pick(f).to_string())
        };
        text.push_str(&format!(
            "  {:>14}  {:>14}  {:>12}  {:>12}  {name}{}\n",
            cell(b, |f| f.0),
            cell(a, |f| f.0),
            cell(b, |f| f.1),
            cell(a, |f| f.1),
            match (b, a) {
                (None, _) => " (new)",
                (_, None) => " (gone)",
                _ => "",
            }
        ));
    }
    if changed.len() > top {
        text.push_str(&format!("  … and {} more\n", changed.len() - top));
    }
    Some(text)
}

/// `+12.5 %`, or `new` from nothing.
fn change(before: u64, after: u64) -> String {
    if before == 0 {
        return if after == 0 { "=".into() } else { "new".into() };
    }
    let pct = 100.0 * (after as f64 - before as f64) / before as f64;
    format!("{pct:+.1} %")
}

/// What `--fail-if-more-memory PCT` finds: the totals (bytes allocated,
/// the peak, what is live at the end) that grew by more than `pct` percent.
pub fn too_much(base: &Profile, new: &Profile, pct: f64) -> crate::Result<Vec<String>> {
    let (Some(base_memory), Some(new_memory)) = (&base.memory, &new.memory) else {
        return Err(Error::NoMemory {
            which: if base.memory.is_none() {
                Which::Base
            } else {
                Which::New
            },
        });
    };
    let mut failures = Vec::new();
    for (what, before, after) in [
        (
            "bytes allocated",
            base_memory.totals().alloc_bytes,
            new_memory.totals().alloc_bytes,
        ),
        ("peak", base_memory.peak_bytes, new_memory.peak_bytes),
        (
            "live at the end",
            base_memory.live_bytes,
            new_memory.live_bytes,
        ),
    ] {
        let limit = before as f64 * (1.0 + pct / 100.0);
        if after as f64 > limit {
            failures.push(format!(
                "{what} grew from {before} to {after} bytes ({}), more than the {pct} % allowed",
                change(before, after)
            ));
        }
    }
    Ok(failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    fn with_leak(leak: u64) -> Profile {
        ProfileBuilder::timed()
            .path(&["main"], 1, 10.0)
            .path(&["main", "load"], 1, 10.0)
            .allocated(&["main"], 2, 200, 0)
            .allocated(&["main", "load"], 1, 100 + leak, leak)
            .build()
    }

    #[test]
    fn the_comparison_names_the_function_that_allocates_more() {
        let text = render(&with_leak(0), &with_leak(500), 10).unwrap();
        assert!(
            text.contains("allocated: 300 B -> 800 B (+166.7 %)"),
            "{text}"
        );
        assert!(
            text.contains("live at the end: 0 B -> 500 B (new)"),
            "{text}"
        );
        assert!(
            text.contains("             100             600             0           500  load\n"),
            "{text}"
        );
        assert!(!text.contains("  main\n"), "main did not change: {text}");
    }

    #[test]
    fn more_memory_than_allowed_fails_and_a_profile_without_memory_is_an_error() {
        let failures = too_much(&with_leak(0), &with_leak(500), 20.0).unwrap();
        assert_eq!(failures.len(), 3, "{failures:?}");
        assert!(failures[0].starts_with("bytes allocated grew from 300 to 800"));
        assert!(
            too_much(&with_leak(10), &with_leak(10), 0.0)
                .unwrap()
                .is_empty()
        );
        let plain = ProfileBuilder::timed().path(&["main"], 1, 1.0).build();
        let error = too_much(&plain, &with_leak(0), 5.0).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the base profile has no memory figures"),
            "{error}"
        );
    }
}
