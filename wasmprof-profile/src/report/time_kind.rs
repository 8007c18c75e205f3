//! What a reported time is: measured by the clock, partly measured,
//! estimated from samples, or not measured at all. Every row and frame of
//! every report says it, so that an estimate is never read as a
//! measurement; the notes at the top of a report are the legend.

use serde::Serialize;

use crate::profile::{FunctionTier, Node, Profile, TimerMode};

/// What the text reports put after a count-only function's name.
pub(crate) const COUNTED_MARK: &str = " (counted)";

/// How a function's or a call path's time was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeKind {
    /// Every call timed by the clock.
    Measured,
    /// Some calls were too short to time: the time is of the others, and
    /// the rest is in the caller's self time.
    PartlyTimed,
    /// Estimated from the engine's samples: a sampling or hybrid profile,
    /// or a timed node whose calls were too short to time.
    Sampled,
    /// No time of its own: counted only, or a profile without a clock.
    NotMeasured,
}

impl TimeKind {
    /// What the text reports put after a name, with a leading space;
    /// empty for a measured time.
    pub fn mark(self) -> &'static str {
        match self {
            TimeKind::Measured => "",
            TimeKind::PartlyTimed => " (partly timed)",
            TimeKind::Sampled => " (sampled)",
            TimeKind::NotMeasured => COUNTED_MARK,
        }
    }

    /// A few words for a tooltip or a table's title.
    pub fn describe(self) -> &'static str {
        match self {
            TimeKind::Measured => "measured",
            TimeKind::PartlyTimed => "partly measured: some calls too short to time",
            TimeKind::Sampled => "estimated from samples",
            TimeKind::NotMeasured => "not measured: counted only",
        }
    }

    /// The kind of a time made of several: the least certain.
    pub fn combine(self, other: TimeKind) -> TimeKind {
        self.max(other)
    }
}

/// What one node's time is.
pub(crate) fn of_node(profile: &Profile, node: &Node) -> TimeKind {
    match profile.timer.mode {
        TimerMode::None => TimeKind::NotMeasured,
        TimerMode::Sampled | TimerMode::Hybrid => TimeKind::Sampled,
        TimerMode::Host if node.sampled => TimeKind::Sampled,
        TimerMode::Host if node.partly_timed => TimeKind::PartlyTimed,
        TimerMode::Host => TimeKind::Measured,
    }
}

/// What each function's time is: the least certain of its nodes'. A
/// counted function's is not measured, unless the engine's samples gave it
/// call paths (then it is estimated from them).
pub(crate) fn of_functions(profile: &Profile) -> Vec<TimeKind> {
    let counted: Vec<bool> = profile
        .functions
        .iter()
        .map(|f| f.tier == Some(FunctionTier::Counted))
        .collect();
    let mut kinds: Vec<TimeKind> = counted
        .iter()
        .map(|&counted| match profile.timer.mode {
            TimerMode::None => TimeKind::NotMeasured,
            _ if counted => TimeKind::NotMeasured,
            _ => TimeKind::Measured,
        })
        .collect();
    for node in &profile.nodes {
        let Some(function) = node.function else {
            continue;
        };
        let Some(kind) = kinds.get_mut(function) else {
            continue;
        };
        if counted[function] && profile.timer.mode.timed() {
            *kind = TimeKind::Sampled;
        } else if *kind != TimeKind::NotMeasured {
            *kind = kind.combine(of_node(profile, node));
        }
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ProfileBuilder;

    #[test]
    fn every_kind_is_told_apart() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "exact"], 1, 5.0)
            .path(&["main", "short"], 100, 0.0)
            .path(&["main", "estimated"], 100, 2.0)
            .path(&["main", "short", "estimated"], 1, 1.0)
            .counted("get", 1000)
            .build();
        let index = |name: &str| {
            profile
                .functions
                .iter()
                .position(|f| f.name == name)
                .unwrap()
        };
        let (short, estimated) = (index("short"), index("estimated"));
        for node in &mut profile.nodes {
            node.partly_timed = node.function == Some(short);
            node.sampled = node.function == Some(estimated) && node.calls == 1;
        }
        let kinds = of_functions(&profile);
        assert_eq!(kinds[index("exact")], TimeKind::Measured);
        assert_eq!(kinds[index("main")], TimeKind::Measured);
        assert_eq!(kinds[short], TimeKind::PartlyTimed);
        assert_eq!(kinds[estimated], TimeKind::Sampled, "one node of two");
        assert_eq!(kinds[index("get")], TimeKind::NotMeasured);
        assert_eq!(kinds[short].mark(), " (partly timed)");
        profile.timer.mode = TimerMode::Hybrid;
        assert_eq!(of_functions(&profile)[index("exact")], TimeKind::Sampled);
        assert_eq!(of_functions(&profile)[index("get")], TimeKind::NotMeasured);
    }

    #[test]
    fn a_counted_function_with_sampled_paths_is_estimated() {
        let mut profile = ProfileBuilder::timed()
            .path(&["main", "get"], 0, 5.0)
            .counted("get", 1000)
            .build();
        let get = profile
            .functions
            .iter()
            .position(|f| f.name == "get")
            .unwrap();
        for node in &mut profile.nodes {
            node.sampled = node.function == Some(get);
        }
        assert_eq!(of_functions(&profile)[get], TimeKind::Sampled);
        profile.timer.mode = TimerMode::None;
        assert_eq!(of_functions(&profile)[get], TimeKind::NotMeasured);
    }
}
