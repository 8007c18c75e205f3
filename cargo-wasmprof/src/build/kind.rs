//! What tells cargo that one kind of build's code differs from another's,
//! while keeping every kind the same program, type for type.
//!
//! A kind of build (a timer, kept frames, `--memory`, `--verify-counts`,
//! a crate-wide copy's settings) changes the runtime and what depends on
//! it: the user's crates and the rewritten ones. It changes nothing else:
//! js-sys, web-sys, serde and the rest of a dependency tree are the same
//! code in every kind.
//!
//! Each kind builds in a directory of its own (`build_dirs`), and the kind
//! reaches only the runtime's build script, as `WASMPROF_BUILD`, which the
//! script watches: should a directory ever see another kind, cargo runs the
//! script again and compiles the runtime and its dependents anew. Nothing
//! else carries it, on purpose:
//! - a flag in `RUSTFLAGS` reaches every crate, tools included, and would
//!   compile the shared tools once per kind;
//! - a setting of the runtime's own profile changes its `-C metadata`, and
//!   so the `TypeId`s of every type in its dependents: a program that hashes
//!   them (rhai resolves functions by such hashes) then does other work in
//!   each kind, and no kind's counts could be checked against another's.
//!
//! cargo's `-C metadata` does not depend on the directory, so every
//! instrumented kind of a program is the same program, type for type. The
//! module is taken out of cargo's hands before the next build of the kind
//! may overwrite it (`DirLock`).

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

    /// The name of the kind's build directory (`build_dirs`): its identity,
    /// with the copy's settings after a `+`.
    pub(crate) fn dir_name(&self) -> String {
        self.identity.replace('/', "+")
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
