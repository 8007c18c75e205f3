//! Whether an item may be written out more than once by an attribute
//! macro: `#[duplicate_item]` writes a function once per substitution,
//! and any attribute macro may do the same with what it is given.
//!
//! A function the rewrite instruments gets a slot in its crate's block of
//! per-thread state (see `Slots`), a number fixed in the text. A copy of
//! the function carries the same text, and so the same number: with
//! threads, two functions then counted their calls in one counter (as
//! `--verify-counts` showed for a function under `duplicate` 2.0's
//! `#[duplicate_item]`). A function
//! under an attribute that may be a macro gets no slot instead: its site
//! keeps a thread-local of its own, declared in its body, which each copy
//! declares anew.
//!
//! Which attributes may be a macro is `wasmprof_attributes::may_be_macro`'s
//! rule, which the `instrument` macro follows too. (An item with
//! wasmprof's own attributes is left to the user's choice before this is
//! asked.)

use syn::{Attribute, Meta};

/// Whether any of `attrs` may be an attribute macro, which could write
/// the item out more than once. `cfg_attr` is looked into.
pub(super) fn may_copy(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| meta_may_copy(&attr.meta))
}

fn meta_may_copy(meta: &Meta) -> bool {
    let path = meta.path();
    if path.is_ident("cfg_attr") {
        return cfg_attr_may_copy(meta);
    }
    let names = path_names(path);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    wasmprof_attributes::may_be_macro(&names)
}

/// A path's segments by name, as `wasmprof_attributes`' rules take them.
pub(super) fn path_names(path: &syn::Path) -> Vec<String> {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect()
}

/// `#[cfg_attr(condition, a, b, …)]`: whether any of `a`, `b`, … may copy.
/// One that cannot be read is taken to.
fn cfg_attr_may_copy(meta: &Meta) -> bool {
    let Meta::List(list) = meta else {
        return true;
    };
    let parsed =
        list.parse_args_with(syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated);
    match parsed {
        Ok(metas) => metas.iter().skip(1).any(meta_may_copy),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::may_copy;

    fn attrs(source: &str) -> Vec<syn::Attribute> {
        let item: syn::ItemFn = syn::parse_str(&format!("{source} fn f() {{}}")).unwrap();
        item.attrs
    }

    fn copies(source: &str) -> bool {
        may_copy(&attrs(source))
    }

    #[test]
    fn the_compiler_s_and_its_tools_attributes_copy_nothing() {
        for source in [
            "",
            "/// Docs.\n#[inline(always)] #[must_use]",
            "#[cold] #[track_caller] #[allow(clippy::x)] #[cfg(test)]",
            "#[rustfmt::skip] #[clippy::cognitive_complexity = \"100\"]",
            "#[unsafe(no_mangle)] #[deprecated(note = \"old\")]",
            "#[cfg_attr(feature = \"x\", inline, must_use)]",
            "#[wasm_bindgen] #[wasm_bindgen::prelude::wasm_bindgen(js_name = g)]",
        ] {
            assert!(!copies(source), "{source}");
        }
    }

    #[test]
    fn any_other_attribute_may_be_a_macro_that_copies() {
        for source in [
            "#[duplicate::duplicate_item(n; [a]; [b])]",
            "#[duplicate_item(n; [a]; [b])]",
            "#[tracing::instrument]",
            "#[cfg_attr(feature = \"x\", inline, my_macro)]",
        ] {
            assert!(copies(source), "{source}");
        }
    }
}
