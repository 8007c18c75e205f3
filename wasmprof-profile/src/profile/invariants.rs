//! What every profile's times must satisfy, whatever measured them: no
//! call path holds less time than its callees together (so no callee holds
//! more than its caller, and no self time is negative).
//!
//! The runtime keeps this by construction, and so do the sampled and hybrid
//! readers, which add samples up the tree. A profile that breaks it shows
//! time where it was not spent, so reading it is an error that names the
//! path, never a report drawn from it.

use super::model::{Profile, TimerMode};

/// Checks that no node's children hold more than the node, allowing each
/// timed call (and each poll of an async function's futures, each timed
/// apart) the uncertainty of its clock reads.
///
/// Left out: the root (the host, never timed), the `<overflow>` node
/// (whose children are calls of every path), and calls still running when
/// the profile was taken (their time is missing, their callees' is not).
pub(crate) fn check_times(profile: &Profile) -> Result<(), String> {
    if !profile.timer.mode.timed() {
        return Ok(());
    }
    let slack_per_call = slack_per_call(profile);
    let mut timed = vec![0u64; profile.nodes.len()];
    for (index, node) in profile.nodes.iter().enumerate() {
        timed[index] = node.calls;
    }
    for future in &profile.futures {
        if let Some(events) = timed.get_mut(future.node) {
            *events += future.polls;
        }
    }
    let mut children_nanos = vec![0.0; profile.nodes.len()];
    let mut children_timed = vec![0u64; profile.nodes.len()];
    for (index, node) in profile.nodes.iter().enumerate().skip(1) {
        if let Some(parent) = node.parent {
            children_nanos[parent] += node.inclusive_nanos;
            children_timed[parent] += timed[index];
        }
    }
    for (index, node) in profile.nodes.iter().enumerate().skip(1) {
        if node.function.is_none() || node.open {
            continue;
        }
        let slack = slack_per_call * (timed[index] + children_timed[index]) as f64
            + node.inclusive_nanos * 1e-9;
        let excess = children_nanos[index] - node.inclusive_nanos;
        if excess > slack {
            return Err(format!(
                "its times do not add up: the calls of `{}` took {}, but the calls they \
                 made took {} (more than the clock's uncertainty, {}). Such a profile shows \
                 time where it was not spent; please report it with the file, and record \
                 the run again",
                path_of(profile, index),
                nanos(node.inclusive_nanos),
                nanos(children_nanos[index]),
                nanos(slack),
            ));
        }
    }
    Ok(())
}

/// How far one timed call's time may be off: a clock read's cost or its
/// resolution, whichever is larger, at each end. Sampled and hybrid times
/// are sums of samples and add up exactly.
fn slack_per_call(profile: &Profile) -> f64 {
    match profile.timer.mode {
        TimerMode::Host => {
            let cost = profile.timer.clock_cost_nanos.unwrap_or(0.0);
            let resolution = profile.timer.resolution_nanos.unwrap_or(0.0);
            2.0 * cost.max(resolution).max(1.0)
        }
        TimerMode::Sampled | TimerMode::Hybrid | TimerMode::None => 0.0,
    }
}

fn path_of(profile: &Profile, node: usize) -> String {
    profile
        .stack(node)
        .iter()
        .map(|&f| profile.functions[f].name.as_str())
        .collect::<Vec<_>>()
        .join(" → ")
}

fn nanos(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.3} ms", value / 1e6)
    } else {
        format!("{:.3} µs", value / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    const MS: f64 = 1e6;

    /// `main` (node 1) calling `a` (node 2) and `b` (node 3), with these
    /// inclusive times in ms.
    fn three(main: f64, a: f64, b: f64) -> Profile {
        let mut profile = ProfileBuilder::timed()
            .path(&["main"], 1, 0.0)
            .path(&["main", "a"], 1000, 0.0)
            .path(&["main", "b"], 1000, 0.0)
            .build();
        for (node, ms) in [(1, main), (2, a), (3, b)] {
            profile.nodes[node].inclusive_nanos = ms * MS;
        }
        profile
    }

    #[test]
    fn a_callee_with_more_time_than_its_caller_is_named() {
        // semver's run before the runtime was mended: 170 ms under 106.5 ms.
        let error = check_times(&three(106.5, 170.0, 0.0)).unwrap_err();
        assert!(error.contains("`main`"), "{error}");
        assert!(error.contains("took 106.500 ms"), "{error}");
        assert!(error.contains("took 170.000 ms"), "{error}");
    }

    #[test]
    fn profiles_that_add_up_pass_within_the_clock_s_uncertainty() {
        assert_eq!(check_times(&three(10.0, 6.0, 4.0)), Ok(()));
        // 1 µs over 2001 calls of a 1 µs clock: within its uncertainty.
        assert_eq!(check_times(&three(10.0, 6.001, 4.0)), Ok(()));
        assert!(check_times(&three(10.0, 16.0, 4.0)).is_err());
    }

    #[test]
    fn a_call_still_running_and_an_untimed_profile_are_not_held_to_it() {
        let mut profile = three(1.0, 50.0, 0.0);
        assert!(check_times(&profile).is_err());
        profile.nodes[1].open = true;
        assert_eq!(check_times(&profile), Ok(()));
        let untimed = ProfileBuilder::untimed()
            .path(&["main", "work"], 5, 0.0)
            .build();
        assert_eq!(check_times(&untimed), Ok(()));
    }

    #[test]
    fn each_poll_of_a_future_is_allowed_a_clock_read_s_uncertainty() {
        // Chromium's async-loads: 10 polls of `run`'s future, 30 of its 4
        // loads', with a clock read measured at 12 µs; the loads came out
        // 0.6 ms over.
        let mut profile = ProfileBuilder::timed()
            .path(&["run", "load"], 4, 0.0)
            .future(&["run"], 10, 1, 0, None)
            .future(&["run", "load"], 30, 4, 0, None)
            .build();
        profile.nodes[1].calls = 1;
        profile.nodes[1].inclusive_nanos = 41.8 * MS;
        profile.nodes[2].inclusive_nanos = 42.4 * MS;
        profile.timer.clock_cost_nanos = Some(12_000.0);
        assert_eq!(check_times(&profile), Ok(()));
        profile.futures.clear();
        assert!(check_times(&profile).is_err(), "without the polls, too far");
    }
}
