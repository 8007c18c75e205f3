//! After the test binaries ran: their profiles merged into one, each test
//! found in it (a child of the root, since a test is entered at the root),
//! the slowest named, and with `--per-test` one profile per test.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::rewrite::Planned;
use crate::terminal;
use wasmprof_profile::profile::{self, Function, Profile};
use wasmprof_profile::report::human_duration;

/// The merged profile of a test run and the tests in it.
pub(super) struct Gathered {
    pub profile: Profile,
    pub tests: Vec<TestNode>,
    /// How many test binaries left a profile.
    pub binaries: usize,
}

/// One test's node.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TestNode {
    /// `crate::module::test`: the test binary's crate and the test's path,
    /// which is the name the harness prints after the crate's.
    pub name: String,
    pub node: usize,
    pub calls: u64,
    pub inclusive_nanos: f64,
    /// It never returned: it failed by a trap, or the binary was stopped.
    pub open: bool,
    /// Some of its calls were not timed (a call that never returned).
    pub partly_timed: bool,
}

/// Reads and merges the profiles the runner left in `session_dir`.
pub(super) fn gather(
    session_dir: &Path,
    tests: &[Planned],
    command_line: &[String],
) -> Result<Option<Gathered>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(session_dir)
        .with_context(|| format!("could not read {}", session_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".wasmprof.json"))
        })
        .collect();
    paths.sort();
    let mut profiles = Vec::new();
    for path in &paths {
        match profile::read_profile(path) {
            Ok(profile) => profiles.push(profile),
            Err(e) => terminal::warning(&format!("a test binary's profile is unreadable: {e}")),
        }
    }
    // Run information comes from the first profile: a test binary's, not a
    // doctest's (rustdoc builds those in a temporary directory it deletes).
    profiles.sort_by_key(is_doctest);
    let doctests = profiles.iter().filter(|p| is_doctest(p)).count();
    let binaries = profiles.len();
    let exit_code = profiles
        .iter()
        .map(|p| p.run.exit_code)
        .find(|&c| c != 0)
        .unwrap_or(0);
    let Some(mut merged) = profile::merge(profiles) else {
        return Ok(None);
    };
    merged.run.command = command_line.to_vec();
    merged.run.entry = match doctests {
        0 => format!(
            "tests ({binaries} test binar{})",
            if binaries == 1 { "y" } else { "ies" }
        ),
        _ => format!(
            "tests ({} test binar{}, {doctests} doctest{})",
            binaries - doctests,
            if binaries - doctests == 1 { "y" } else { "ies" },
            if doctests == 1 { "" } else { "s" }
        ),
    };
    merged.run.exit_code = exit_code;
    let tests = find_tests(&merged, tests);
    Ok(Some(Gathered {
        profile: merged,
        tests,
        binaries,
    }))
}

/// A doctest's profile.
fn is_doctest(profile: &Profile) -> bool {
    super::doctest::is_doctest_binary(Path::new(&profile.run.module))
}

/// The root's children that are test functions.
pub(super) fn find_tests(profile: &Profile, tests: &[Planned]) -> Vec<TestNode> {
    // Marked by the runtime; the rewrite's list covers profiles of runtimes
    // before the mark.
    let is_test = |f: &Function| {
        f.is_test
            || tests
                .iter()
                .any(|t| t.line == f.line as usize && t.file.ends_with(Path::new(&f.file)))
    };
    profile
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.parent == Some(Profile::ROOT))
        .filter_map(|(index, n)| {
            let function = &profile.functions[n.function?];
            is_test(function).then(|| TestNode {
                name: function.name.clone(),
                node: index,
                calls: n.calls,
                inclusive_nanos: n.inclusive_nanos,
                open: n.open,
                partly_timed: n.partly_timed,
            })
        })
        .collect()
}

/// What to save of a test run, and how much of it to print.
pub(super) struct SaveOptions {
    /// How many of the slowest tests the summary lists.
    pub(super) top: usize,
    /// `--per-test`: a profile per test too.
    pub(super) per_test: bool,
}

/// Writes the profile (and with `--per-test` one per test) and prints the
/// summary.
pub(super) fn save(
    gathered: &Gathered,
    target_dir: &Path,
    package: &str,
    args: &SaveOptions,
) -> Result<()> {
    let dir = crate::profiles_dir::profiles_dir(target_dir);
    let path = crate::profiles_dir::new_profile_path(&dir, package);
    profile::write_profile(&gathered.profile, &path)?;
    let mut stderr = std::io::stderr().lock();
    wasmprof_profile::report::write_summary(
        &gathered.profile,
        wasmprof_profile::report::DEFAULT_SUMMARY_TOP,
        &mut stderr,
    )?;
    stderr.write_all(slowest_tests(gathered, args.top).as_bytes())?;
    drop(stderr);
    crate::launch::announce_profile(&path, gathered.profile.run.complete);
    if args.per_test {
        let per_test_dir = path.with_file_name(format!(
            "{}.tests",
            path.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("profile.wasmprof.json")
                .trim_end_matches(".wasmprof.json")
        ));
        std::fs::create_dir_all(&per_test_dir)
            .with_context(|| format!("could not create {}", per_test_dir.display()))?;
        for test in &gathered.tests {
            let one = subtree(&gathered.profile, test.node);
            let file = per_test_dir.join(format!("{}.wasmprof.json", file_name_of(&test.name)));
            profile::write_profile(&one, &file)?;
        }
        terminal::status(
            "Per test",
            &format!(
                "{} profiles in {} (`cargo wasmprof report --input FILE`)",
                gathered.tests.len(),
                per_test_dir.display()
            ),
        );
    }
    crate::launch::verified_counts::conclude(gathered.profile.run.count_check.as_ref(), package)
}

/// The test list of the summary: the slowest `top`, and every test that
/// did not return.
pub(super) fn slowest_tests(gathered: &Gathered, top: usize) -> String {
    let tests = &gathered.tests;
    if tests.is_empty() {
        return "no test function was found in the profile\n".to_owned();
    }
    let mut text = String::new();
    let timed = gathered.profile.timer.mode.timed();
    let mut ranked: Vec<&TestNode> = tests.iter().collect();
    if timed {
        ranked.sort_by(|a, b| {
            b.inclusive_nanos
                .total_cmp(&a.inclusive_nanos)
                .then_with(|| a.name.cmp(&b.name))
        });
        let shown = ranked.len().min(top);
        text.push_str(&format!(
            "slowest {shown} of {} tests, in {} test binar{}:\n",
            ranked.len(),
            gathered.binaries,
            if gathered.binaries == 1 { "y" } else { "ies" }
        ));
        for test in &ranked[..shown] {
            text.push_str(&format!(
                "{:>9}  {}{}\n",
                time_of(test),
                test.name,
                flag(test)
            ));
        }
    } else {
        text.push_str(&format!(
            "{} tests ran, in {} test binar{} (no time was measured: --timer none)\n",
            ranked.len(),
            gathered.binaries,
            if gathered.binaries == 1 { "y" } else { "ies" }
        ));
    }
    text.push_str(&leaky_tests(gathered));
    let unfinished: Vec<&str> = tests
        .iter()
        .filter(|t| t.open)
        .map(|t| t.name.as_str())
        .collect();
    if !unfinished.is_empty() {
        text.push_str(&format!(
            "did not return (failed or stopped, their open frames marked): {}\n",
            unfinished.join(", ")
        ));
    }
    text
}

/// With `--memory`: the tests that left memory live, by what they left,
/// the blocks allocated under each test's node and not freed by the end.
fn leaky_tests(gathered: &Gathered) -> String {
    let profile = &gathered.profile;
    let Some(memory) = &profile.memory else {
        return String::new();
    };
    let by_node = memory.by_node(profile.nodes.len());
    // Each node's test: itself if it is one, else its parent's.
    let mut test_of: Vec<Option<usize>> = vec![None; profile.nodes.len()];
    for (position, test) in gathered.tests.iter().enumerate() {
        if let Some(slot) = test_of.get_mut(test.node) {
            *slot = Some(position);
        }
    }
    let mut left = vec![(0u64, 0u64); gathered.tests.len()];
    for (index, node) in profile.nodes.iter().enumerate() {
        if test_of[index].is_none() {
            test_of[index] = node.parent.and_then(|p| test_of[p]);
        }
        if let Some(test) = test_of[index] {
            left[test].0 += by_node[index].live_bytes;
            left[test].1 += by_node[index].live_blocks;
        }
    }
    let mut leaky: Vec<(&str, u64, u64)> = gathered
        .tests
        .iter()
        .zip(&left)
        .filter(|(_, (bytes, _))| *bytes > 0)
        .map(|(test, &(bytes, blocks))| (test.name.as_str(), bytes, blocks))
        .collect();
    if leaky.is_empty() {
        return "no test left memory live\n".to_owned();
    }
    leaky.sort_by_key(|&(name, bytes, _)| (std::cmp::Reverse(bytes), name));
    let mut text = format!(
        "{} left memory live at the end:\n",
        wasmprof_profile::report::plural(leaky.len() as u64, "test")
    );
    for (name, bytes, blocks) in leaky {
        text.push_str(&format!(
            "{:>9}  {name} ({})\n",
            wasmprof_profile::report::human_bytes(bytes),
            wasmprof_profile::report::plural(blocks, "block")
        ));
    }
    text
}

fn time_of(test: &TestNode) -> String {
    if test.open && test.inclusive_nanos == 0.0 {
        "-".to_owned()
    } else {
        human_duration(test.inclusive_nanos)
    }
}

fn flag(test: &TestNode) -> &'static str {
    match (test.open, test.partly_timed) {
        (true, _) => "  (did not return)",
        (false, true) => "  (partly timed)",
        _ => "",
    }
}

/// `wordcount::tests::counts` → `wordcount-tests-counts`.
pub(super) fn file_name_of(test: &str) -> String {
    test.replace("::", "-")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The profile of one test: the root, the test's node and everything below
/// it, with only the functions they name.
pub(super) fn subtree(profile: &Profile, top: usize) -> Profile {
    let mut keep: BTreeSet<usize> = BTreeSet::from([Profile::ROOT, top]);
    // A parent precedes its children, so one pass finds every descendant.
    for (index, node) in profile.nodes.iter().enumerate() {
        if node
            .parent
            .is_some_and(|p| p != Profile::ROOT && keep.contains(&p))
        {
            keep.insert(index);
        }
    }
    let node_map: BTreeMap<usize, usize> = keep
        .iter()
        .enumerate()
        .map(|(new, &old)| (old, new))
        .collect();
    let mut function_map: BTreeMap<usize, usize> = BTreeMap::new();
    let mut functions = Vec::new();
    let mut nodes = Vec::new();
    for &old in &keep {
        let mut node = profile.nodes[old].clone();
        node.parent = node.parent.map(|p| node_map[&p]);
        node.function = node.function.map(|f| {
            *function_map.entry(f).or_insert_with(|| {
                functions.push(profile.functions[f].clone());
                functions.len() - 1
            })
        });
        nodes.push(node);
    }
    let open = nodes.iter().any(|n| n.open);
    let mut one = profile.clone();
    one.futures = profile
        .futures
        .iter()
        .filter_map(|f| {
            let node = *node_map.get(&f.node)?;
            Some(wasmprof_profile::profile::FutureStats { node, ..f.clone() })
        })
        .collect();
    one.memory = profile
        .memory
        .as_ref()
        // The root's are the whole run's, outside every test.
        .map(|memory| {
            memory.restricted(|node| {
                (node != Profile::ROOT)
                    .then(|| node_map.get(&node).copied())
                    .flatten()
            })
        });
    one.remap_threads(|node| node_map.get(&node).copied());
    one.nodes = nodes;
    one.functions = functions;
    one.overflow_calls = 0;
    one.run.wall_nanos = profile.nodes[top].inclusive_nanos as u64;
    one.run.entry = format!(
        "test {}",
        profile.functions[profile.nodes[top].function.unwrap_or(0)].name
    );
    one.run.complete = !open;
    if !open {
        one.run.incomplete_reason = None;
    }
    one
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmprof_profile::profile::Node;

    fn node(parent: Option<usize>, function: Option<usize>, calls: u64, nanos: f64) -> Node {
        Node {
            parent,
            function,
            calls,
            inclusive_nanos: nanos,
            ..Node::root()
        }
    }

    /// Two tests calling `count`, one of them also through `helper`.
    fn two_tests() -> Profile {
        let mut profile = wasmprof_profile::fixtures::appendix_b(true);
        profile.functions = vec![
            Function::at("wc::tests::short", "wc/src/lib.rs", 20),
            Function::at("wc::count", "wc/src/lib.rs", 3),
            Function::at("wc::tests::long", "wc/src/lib.rs", 25),
            Function::at("wc::helper", "wc/src/lib.rs", 9),
        ];
        profile.nodes = vec![
            Node::root(),
            node(Some(0), Some(0), 1, 1_000.0),
            node(Some(1), Some(1), 2, 500.0),
            node(Some(0), Some(2), 1, 9_000.0),
            node(Some(3), Some(3), 1, 8_000.0),
            node(Some(4), Some(1), 5, 7_000.0),
        ];
        profile
    }

    fn planned(path: &str, line: usize) -> Planned {
        Planned {
            file: "/home/me/ws/wc/src/lib.rs".into(),
            line,
            first_line: line,
            path: path.into(),
            kind: crate::rewrite::PlannedKind::Test,
            counted: false,
        }
    }

    #[test]
    fn tests_are_the_root_children_at_a_test_s_place() {
        let profile = two_tests();
        let found = find_tests(
            &profile,
            &[planned("tests::short", 20), planned("tests::long", 25)],
        );
        let names: Vec<(&str, usize)> = found.iter().map(|t| (t.name.as_str(), t.node)).collect();
        assert_eq!(names, [("wc::tests::short", 1), ("wc::tests::long", 3)]);
        let none = find_tests(&profile, &[planned("tests::short", 21)]);
        assert!(none.is_empty());
    }

    #[test]
    fn a_test_s_profile_is_its_subtree() {
        let profile = two_tests();
        let one = subtree(&profile, 3);
        let names: Vec<&str> = one.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["wc::tests::long", "wc::helper", "wc::count"]);
        let shape: Vec<(Option<usize>, Option<usize>, u64)> = one
            .nodes
            .iter()
            .map(|n| (n.parent, n.function, n.calls))
            .collect();
        assert_eq!(
            shape,
            [
                (None, None, 0),
                (Some(0), Some(0), 1),
                (Some(1), Some(1), 1),
                (Some(2), Some(2), 5)
            ]
        );
        profile::validate(&one).unwrap();
    }

    #[test]
    fn the_slowest_tests_come_first_and_failures_are_named() {
        let mut profile = two_tests();
        profile.nodes[1].open = true;
        let tests = find_tests(&profile, &[planned("a", 20), planned("b", 25)]);
        let gathered = Gathered {
            profile,
            tests,
            binaries: 1,
        };
        let text = slowest_tests(&gathered, 5);
        assert_eq!(
            text,
            "slowest 2 of 2 tests, in 1 test binary:\n\
             \x20 9.00 µs  wc::tests::long\n\
             \x20 1.00 µs  wc::tests::short  (did not return)\n\
             did not return (failed or stopped, their open frames marked): wc::tests::short\n"
        );
    }

    #[test]
    fn file_names_keep_the_test_s_name_readable() {
        assert_eq!(
            file_name_of("wc::tests::counts_words"),
            "wc-tests-counts_words"
        );
        assert_eq!(file_name_of("a::<b>"), "a-_b_");
    }
}
