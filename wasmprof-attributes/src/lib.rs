//! Which attributes are wasmprof's own, and which may be another crate's
//! attribute macro.
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

/// The attributes the compiler itself gives meaning to, which are no
/// macro of anyone's.
const INERT: &[&str] = &[
    "allow",
    "automatically_derived",
    "bench",
    "cfg",
    "cfg_attr",
    "cold",
    "coverage",
    "deny",
    "deprecated",
    "doc",
    "expect",
    "export_name",
    "forbid",
    "ignore",
    "inline",
    "instruction_set",
    "link_section",
    "linkage",
    "macro_use",
    "must_use",
    "naked",
    "no_mangle",
    "non_exhaustive",
    "optimize",
    "path",
    "should_panic",
    "target_feature",
    "test",
    "track_caller",
    "unsafe",
    "used",
    "warn",
];

/// Tools whose attributes the compiler leaves to them, and ours.
const TOOLS: &[&str] = &[
    "rustfmt",
    "clippy",
    "diagnostic",
    "rustdoc",
    "rust_analyzer",
    RUNTIME,
];

/// Attribute macros, by their last name, known to keep the function they
/// are given, once, with its attributes: wasm-bindgen's.
const KNOWN: &[&str] = &["wasm_bindgen", "wasm_bindgen_test"];

/// Whether the attribute at `path` may be another crate's attribute macro:
/// not the compiler's, a tool's, ours or one known to keep its function.
/// Such a macro may rewrite the function, rename it or write it out more
/// than once, so the `instrument` macro lets it run first, and the
/// crate-wide rewrite gives the function no slot of its crate's block
/// (each copy would share it). (`cfg_attr` is the compiler's: the macro
/// sees what it expands to; the rewrite, which reads the source, looks
/// into it.)
pub fn may_be_macro(path: &[&str]) -> bool {
    match (path.len(), path.first(), path.last()) {
        (_, Some(first), _) if TOOLS.contains(first) => false,
        (_, _, Some(last)) if KNOWN.contains(last) => false,
        (1, Some(only), _) => !INERT.contains(only) && !only.starts_with("rustc_"),
        _ => true,
    }
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

    #[test]
    fn the_compiler_s_tools_and_wasm_bindgen_s_attributes_are_no_other_macro() {
        for path in [
            &["inline"][..],
            &["cfg_attr"],
            &["rustc_legacy_const_generics"],
            &["rustfmt", "skip"],
            &["clippy", "cognitive_complexity"],
            &["wasmprof", "instrument"],
            &["wasm_bindgen"],
            &["wasm_bindgen", "prelude", "wasm_bindgen"],
        ] {
            assert!(!may_be_macro(path), "{path:?}");
        }
    }

    #[test]
    fn any_other_attribute_may_be_a_macro() {
        for path in [
            &["duplicate_item"][..],
            &["duplicate", "duplicate_item"],
            &["tracing", "instrument"],
            &["function_component"],
            &["std", "inline"],
        ] {
            assert!(may_be_macro(path), "{path:?}");
        }
    }
}
