//! What tells cargo that one kind of build's code differs from another's in
//! the one build directory, while the code no kind changes is shared.
//!
//! A kind of build (a timer, kept frames, `--memory`, `--verify-counts`,
//! a crate-wide copy's settings) changes the runtime and what depends on
//! it: the user's crates and the rewritten ones. It changes nothing else:
//! js-sys, web-sys, serde and the rest of a dependency tree are the same
//! code in every kind, and are compiled once.
//!
//! So the kind reaches only the runtime's build script, as
//! `WASMPROF_BUILD`, which the script watches: when the kind changes, cargo
//! runs the script again and compiles the runtime and its dependents anew,
//! in place. Nothing else carries it, on purpose:
//! - a flag in `RUSTFLAGS` reaches every crate, and compiled the whole
//!   tree once per kind;
//! - a setting of the runtime's own profile changes its `-C metadata`, and
//!   so the `TypeId`s of every type in its dependents: a program that hashes
//!   them (rhai resolves functions by such hashes) then does other work in
//!   each kind, and no kind's counts could be checked against another's.
//!
//! Kept in place, every instrumented kind of a program is the same program,
//! type for type. The module is taken out of cargo's hands before the next
//! build may overwrite it (`DirLock`).

use std::process::Command;

/// The variable the runtime's build script watches.
const KIND_VAR: &str = "WASMPROF_BUILD";

/// An instrumented kind of build. A plain build has none: it is the user's
/// build, with the runtime switched off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BuildKind {
    /// Everything that tells the kind apart, as one string.
    identity: String,
}

impl BuildKind {
    /// The kind named `mode` (its directory's name), of the crate-wide
    /// copy with settings `shadow_key` if there is one. Every copy gives its
    /// rewritten crates the same paths, so its settings are part of the kind.
    pub(crate) fn new(mode: &str, shadow_key: Option<&str>) -> BuildKind {
        let identity = match shadow_key {
            Some(key) => format!("{mode}/{key}"),
            None => mode.to_owned(),
        };
        BuildKind { identity }
    }

    /// Gives the kind to the runtime's build script.
    pub(crate) fn set_env(kind: Option<&BuildKind>, command: &mut Command) {
        match kind {
            Some(kind) => command.env(KIND_VAR, &kind.identity),
            None => command.env_remove(KIND_VAR),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_var(kind: Option<&BuildKind>) -> Option<String> {
        let mut command = Command::new("cargo");
        command.env(KIND_VAR, "stale");
        BuildKind::set_env(kind, &mut command);
        command
            .get_envs()
            .find(|(name, _)| *name == KIND_VAR)
            .and_then(|(_, value)| value.map(|v| v.to_string_lossy().into_owned()))
    }

    #[test]
    fn each_kind_and_copy_names_itself_to_the_runtime() {
        assert_eq!(
            kind_var(Some(&BuildKind::new("host", None))).as_deref(),
            Some("host")
        );
        assert_eq!(
            kind_var(Some(&BuildKind::new("none", Some("all-min40-count")))).as_deref(),
            Some("none/all-min40-count")
        );
        assert_ne!(
            BuildKind::new("host", Some("all-min40-count")),
            BuildKind::new("host", Some("all-min0-count"))
        );
        // A plain build clears what an outer build may have set.
        assert_eq!(kind_var(None), None);
    }
}
