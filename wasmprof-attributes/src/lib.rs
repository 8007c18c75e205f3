//! Which attributes are wasmprof's own.
//!
//! A user chooses by hand what is instrumented with `#[instrument]` and
//! `#[skip]`, under the runtime's name (`wasmprof::skip`), under the name
//! their manifest gives the runtime, or bare where the name is imported.
//! Two readers must agree on which attributes those are: the
//! `#[wasmprof::instrument]` macro, on the items of an instrumented block,
//! and `cargo wasmprof`'s crate-wide rewrite, which must leave an item the
//! user marked to the user's choice. This crate is that rule, in one place.
//!
//! It takes an attribute's path as its segments' names, so that it needs
//! no parser: both readers parse with syn.

#![deny(missing_docs)]

/// The attributes by which a user chooses what is instrumented.
pub const CHOICES: [&str; 2] = ["instrument", "skip"];

/// The runtime's own crate name, whatever the user's manifest calls it.
pub const RUNTIME: &str = "wasmprof";

/// What a reader knows of where an attribute is written.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// A bare `#[skip]` is ours: inside a block the macro instruments,
    /// or in a crate that imports the runtime's attributes by name.
    pub bare_is_ours: bool,
    /// The runtime's path where the crate names it otherwise: the macro's
    /// `crate = path`, or a dependency renamed in the manifest (`prof`).
    pub runtime: &'a [&'a str],
}

/// Whether the attribute at `path` is ours and called `which`
/// (`"instrument"` or `"skip"`).
pub fn is_ours(path: &[&str], which: &str, scope: &Scope<'_>) -> bool {
    let Some((last, prefix)) = path.split_last() else {
        return false;
    };
    if *last != which {
        return false;
    }
    match prefix.last() {
        None => scope.bare_is_ours,
        Some(owner) => *owner == RUNTIME || (!scope.runtime.is_empty() && prefix == scope.runtime),
    }
}

/// Whether the attribute at `path` is one of the user's own choices (an
/// `instrument` or a `skip` of ours): an item that has one is left as the
/// user marked it.
pub fn is_choice(path: &[&str], scope: &Scope<'_>) -> bool {
    CHOICES.iter().any(|which| is_ours(path, which, scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MACRO: Scope<'static> = Scope {
        bare_is_ours: true,
        runtime: &[],
    };
    const RENAMED: Scope<'static> = Scope {
        bare_is_ours: false,
        runtime: &["prof"],
    };

    #[test]
    fn the_runtime_s_name_is_ours_wherever_it_is_read() {
        for scope in [MACRO, RENAMED] {
            assert!(is_ours(&["wasmprof", "skip"], "skip", &scope));
            assert!(is_ours(&["wasmprof", "instrument"], "instrument", &scope));
            assert!(!is_ours(&["wasmprof", "skip"], "instrument", &scope));
            assert!(!is_ours(&["tracing", "instrument"], "instrument", &scope));
        }
    }

    #[test]
    fn a_bare_attribute_is_ours_only_where_the_scope_says_so() {
        assert!(is_ours(&["skip"], "skip", &MACRO));
        assert!(!is_ours(&["skip"], "skip", &RENAMED));
        assert!(!is_choice(&[], &MACRO));
    }

    #[test]
    fn a_renamed_runtime_is_ours_by_its_whole_path() {
        assert!(is_ours(&["prof", "skip"], "skip", &RENAMED));
        assert!(!is_ours(&["prof", "skip"], "skip", &MACRO));
        assert!(!is_ours(&["other", "prof", "skip"], "skip", &RENAMED));
        let nested = Scope {
            bare_is_ours: true,
            runtime: &["my_crate", "profiling"],
        };
        assert!(is_ours(&["my_crate", "profiling", "skip"], "skip", &nested));
        assert!(!is_ours(&["profiling", "skip"], "skip", &nested));
    }

    #[test]
    fn an_item_marked_either_way_is_the_user_s_choice() {
        assert!(is_choice(&["wasmprof", "skip"], &MACRO));
        assert!(is_choice(&["instrument"], &MACRO));
        assert!(!is_choice(&["inline"], &MACRO));
        assert!(!is_choice(&["wasmprof", "main"], &MACRO));
    }
}
