//! Tests as the harness named them (wasmprof-core's `harness.rs`): the
//! Node host saw libtest write `test NAME ... ` before each test, or the
//! Node host and the page saw wasm-bindgen-test poll a test first and then
//! write its result, and told the runtime, which recorded the test's calls
//! under a root node named by its number. Here the numbers get the names, so that a test written by
//! `rstest` or `test_case`, which nobody instrumented, is a test in the
//! profile all the same.

use std::collections::HashMap;

use wasmprof_profile::profile::Profile;

/// The module the runtime gives harness tests' functions; their name is
/// the test's number.
const HARNESS_PREFIX: &str = "__wasmprof_harness::";

/// The names the harness gives (`tests::adds::case_1`: libtest's, and
/// wasm-bindgen-test's, which drops the crate to look alike) as the rewrite
/// names a test, in the crate `krate` of the test binary
/// (`krate::tests::adds::case_1`).
pub(super) fn in_crate(names: &[Option<String>], krate: &str) -> Vec<Option<String>> {
    (names.iter())
        .map(|name| name.as_ref().map(|name| format!("{krate}::{name}")))
        .collect()
}

/// Names the harness tests of `profile` after `names` (the host's list, in
/// the order the tests ran, with their crate; `None` for a test the harness
/// announced and then ignored). A test that was instrumented as a test too
/// is then recorded twice, one inside the other under one name: only the
/// instrumented one, which the user wrote, is kept. `krate` names a test
/// the list has no name for.
pub(super) fn name_tests(profile: &mut Profile, names: &[Option<String>], krate: &str) {
    let mut harness = Vec::new();
    let mut ignored = Vec::new();
    // Tests the list has no name for: one still running at the end.
    let mut unnamed = Vec::new();
    for (index, function) in profile.functions.iter_mut().enumerate() {
        let Some(number) = function.name.strip_prefix(HARNESS_PREFIX) else {
            continue;
        };
        let name = number
            .parse::<usize>()
            .ok()
            .and_then(|n| names.get(n.checked_sub(1)?));
        function.name = match name {
            Some(Some(name)) => name.clone(),
            Some(None) => {
                ignored.push(index);
                format!("{krate}::<ignored test {number}>")
            }
            None => {
                unnamed.push(index);
                format!("{krate}::<test {number}>")
            }
        };
        function.is_test = true;
        harness.push(index);
    }
    if harness.is_empty() {
        return;
    }
    let children = profile.children();
    // Tests instrumented as tests that sit at the root by themselves: an
    // async one is recorded there at its first poll, not inside the
    // harness's node (and its runtime does not mark it a test).
    let instrumented_at_root: Vec<&str> = children[Profile::ROOT]
        .iter()
        .filter_map(|&n| profile.nodes[n].function)
        .filter(|&f| !harness.contains(&f))
        .map(|f| profile.functions[f].name.as_str())
        .collect();
    let remove: Vec<bool> = profile
        .nodes
        .iter()
        .enumerate()
        .map(|(index, node)| {
            let Some(function) = node.function.filter(|f| harness.contains(f)) else {
                return false;
            };
            // Announced, then ignored: it ran nothing.
            if ignored.contains(&function) && children[index].is_empty() {
                return true;
            }
            if children[index].is_empty()
                && instrumented_at_root.contains(&profile.functions[function].name.as_str())
            {
                return true;
            }
            // The instrumented test inside is the user's: the harness's
            // node goes when it has that test's name, or none (a test still
            // running at the end, whose result was never written).
            let unnamed = unnamed.contains(&function);
            match children[index].as_slice() {
                [only] => profile.nodes[*only].function.is_some_and(|f| {
                    let inner = &profile.functions[f];
                    f != function
                        && inner.is_test
                        && (unnamed || inner.name == profile.functions[function].name)
                }),
                _ => false,
            }
        })
        .collect();
    remove_nodes(profile, &remove);
    // The functions of the harness tests taken out name no node now.
    let used: Vec<bool> = {
        let mut used = vec![false; profile.functions.len()];
        for function in profile.nodes.iter().filter_map(|n| n.function) {
            used[function] = true;
        }
        used
    };
    let unused = |f: usize| harness.contains(&f) && !used[f];
    let mut new_function = Vec::with_capacity(profile.functions.len());
    let mut kept = 0;
    for f in 0..profile.functions.len() {
        new_function.push(kept);
        if !unused(f) {
            kept += 1;
        }
    }
    let mut f = 0;
    profile.functions.retain(|_| {
        f += 1;
        !unused(f - 1)
    });
    for node in &mut profile.nodes {
        node.function = node.function.map(|f| new_function[f]);
    }
}

/// Takes the nodes marked in `remove` out of the tree; their children go
/// to their parents.
fn remove_nodes(profile: &mut Profile, remove: &[bool]) {
    if !remove.iter().any(|&r| r) {
        return;
    }
    let mut new_index: Vec<Option<usize>> = Vec::with_capacity(profile.nodes.len());
    let mut kept = 0;
    for &removed in remove {
        new_index.push((!removed).then(|| {
            kept += 1;
            kept - 1
        }));
    }
    // A node's new parent: its nearest ancestor that stays.
    let mut parent_of: HashMap<usize, Option<usize>> = HashMap::new();
    for index in 0..profile.nodes.len() {
        let mut parent = profile.nodes[index].parent;
        while let Some(p) = parent.filter(|&p| remove[p]) {
            parent = profile.nodes[p].parent;
        }
        parent_of.insert(index, parent.and_then(|p| new_index[p]));
    }
    let old_parents: Vec<Option<usize>> = profile.nodes.iter().map(|n| n.parent).collect();
    let mut index = 0;
    profile.nodes.retain(|_| {
        index += 1;
        !remove[index - 1]
    });
    for (old, node) in (0..remove.len())
        .filter(|&i| !remove[i])
        .zip(&mut profile.nodes)
    {
        node.parent = parent_of[&old];
    }
    // A node taken out gives its memory to the nearest ancestor that stays.
    if let Some(memory) = &mut profile.memory {
        let kept_or_ancestor = |node: usize| {
            let mut at = Some(node);
            while let Some(n) = at {
                if let Some(new) = new_index.get(n).copied().flatten() {
                    return new;
                }
                at = old_parents.get(n).copied().flatten();
            }
            0
        };
        memory.renumber(kept_or_ancestor);
    }
    profile
        .futures
        .retain_mut(|future| match new_index[future.node] {
            Some(node) => {
                future.node = node;
                true
            }
            None => false,
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmprof_profile::fixtures::{ProfileBuilder, node_at};

    #[test]
    fn harness_tests_take_their_names_and_a_test_recorded_twice_is_kept_once() {
        let mut profile = ProfileBuilder::timed()
            .path(&["__wasmprof_harness::1", "t::add"], 2, 1000.0)
            .path(
                &["__wasmprof_harness::2", "t::tests::plain", "t::add"],
                1,
                500.0,
            )
            .path(&["__wasmprof_harness::3"], 1, 10.0)
            .path(&["__wasmprof_harness::4"], 1, 0.0)
            .path(&["t::tests::polled"], 1, 30.0)
            .path(&["__wasmprof_harness::5", "t::tests::hangs"], 1, 10.0)
            .path(&["__wasmprof_harness::6"], 1, 10.0)
            .build();
        let plain = profile
            .functions
            .iter()
            .position(|f| f.name == "t::tests::plain")
            .unwrap();
        profile.functions[plain].is_test = true;
        let hangs = (profile.functions.iter())
            .position(|f| f.name == "t::tests::hangs")
            .unwrap();
        profile.functions[hangs].is_test = true;
        let names = [
            Some("tests::adds::case_1".to_owned()),
            Some("tests::plain".to_owned()),
            None,
            Some("tests::polled".to_owned()),
        ];
        name_tests(&mut profile, &in_crate(&names, "t"), "t");
        let case = node_at(&profile, &["t::tests::adds::case_1", "t::add"]);
        assert_eq!(profile.nodes[case].calls, 2);
        // The instrumented test, directly under the root.
        let add = node_at(&profile, &["t::tests::plain", "t::add"]);
        assert_eq!(profile.nodes[add].calls, 1);
        // An ignored test is no test; the number the host had no name for
        // still is one.
        assert!(!profile.functions.iter().any(|f| f.name.contains("ignored")));
        node_at(&profile, &["t::<test 6>"]);
        // A test still running at the end has no name from the harness; the
        // instrumented test inside it is at the root.
        node_at(&profile, &["t::tests::hangs"]);
        assert!(!profile.functions.iter().any(|f| f.name == "t::<test 5>"));
        // An async test, recorded at the root at its first poll: once.
        let polled = profile
            .functions
            .iter()
            .filter(|f| f.name == "t::tests::polled");
        assert_eq!(polled.count(), 1);
        let named_plain = profile
            .functions
            .iter()
            .filter(|f| f.name == "t::tests::plain");
        assert_eq!(named_plain.count(), 1, "no two functions print alike");
        assert!(
            profile
                .functions
                .iter()
                .filter(|f| f.name.starts_with("t::tests::adds"))
                .all(|f| f.is_test)
        );
        wasmprof_profile::profile::validate(&profile).unwrap();
    }
}
