//! Rust functions named one way, whatever wrote the name.
//!
//! A name reaches a profile from a mangled symbol, from the linker's
//! name section (already demangled, with v0's crate disambiguators), or
//! from an engine's sampled frame (the name section's name). rustc mangles
//! with the legacy scheme on stable and with v0 on nightly (which
//! wasmprof's web-worker builds use), and the two demangle a method
//! differently: an inherent one as `app::Engine::fire` and
//! `<app::Engine>::fire`, and one whose impl stands in another module
//! than its type as `app::io::<impl core::fmt::Display for app::Engine>::fmt`
//! and `<app::Engine as core::fmt::Display>::fmt`. Profiles of one program
//! must name its functions alike on either toolchain, so that they diff and
//! merge, so both are written the one way that holds what both say:
//! `app::Engine::fire`, `<app::Engine as core::fmt::Display>::fmt`. What
//! cannot be made alike stays: a generic impl's parameters are named in
//! legacy symbols (`<app::Tree<T> as Index<usize>>::index`) and left out
//! in v0 ones (`Tree<_>`), and v0 numbers closures (`{closure#0}` for
//! `{{closure}}`).

/// `_ZN…E` and `_R…` demangled, `crate::f::h0123…` without its hash, and
/// a name the linker already demangled from a v0 symbol without its
/// crates' disambiguators (`app[5f1c…]::f`); a method named by its type
/// whichever mangling named it.
pub(crate) fn rust_name(name: &str) -> String {
    let demangled = if let Ok(demangled) = rustc_demangle::try_demangle(name) {
        format!("{demangled:#}")
    } else {
        match name.rsplit_once("::h") {
            Some((path, hash))
                if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                path.to_owned()
            }
            _ => without_disambiguators(name),
        }
    };
    inherent_method_as_path(impl_by_its_type(demangled))
}

/// `app[5f1c2b3a4d5e6f70]::f` as `app::f`. A disambiguator is a long run
/// of hex digits: a slice type's brackets (`[f32]`) stay.
fn without_disambiguators(name: &str) -> String {
    const SHORTEST: usize = 8;
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('[') {
        let (before, from) = rest.split_at(open);
        out.push_str(before);
        let inner = &from[1..];
        match inner.find(']') {
            Some(close)
                if close >= SHORTEST && inner[..close].chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                rest = &inner[close + 1..];
            }
            _ => {
                out.push('[');
                rest = inner;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Legacy's `app::io::<impl Display for app::Engine>::fmt` as v0's
/// `<app::Engine as Display>::fmt`, and `app::io::<impl app::Engine>::f`
/// as `<app::Engine>::f`: the type says whose method it is, the module
/// where the impl stands does not.
fn impl_by_its_type(name: String) -> String {
    let Some(open) = name.find("::<impl ") else {
        return name;
    };
    let inside = &name[open + "::<".len()..];
    let Some(close) = closing_bracket(inside) else {
        return name;
    };
    let header = &inside["impl ".len()..close];
    let after = &inside[close + 1..];
    let for_at = outside_brackets(header)
        .find_map(|(at, _)| header[at..].starts_with(" for ").then_some(at));
    match for_at {
        Some(at) => format!(
            "<{} as {}>{after}",
            &header[at + " for ".len()..],
            &header[..at]
        ),
        None => format!("<{header}>{after}"),
    }
}

/// v0's `<app::Engine>::fire` as legacy's `app::Engine::fire`. Only a
/// path loses its brackets: a trait's method (`<u8 as Hash>::hash`), a
/// slice's (`<[u8]>::len`) or a trait object's (`<dyn Any>::is`) need
/// them to read.
fn inherent_method_as_path(name: String) -> String {
    let Some(inside) = name.strip_prefix('<') else {
        return name;
    };
    let Some(close) = closing_bracket(inside) else {
        return name;
    };
    let (self_type, after) = (&inside[..close], &inside[close + 1..]);
    if after.starts_with("::") && is_path(self_type) {
        format!("{self_type}{after}")
    } else {
        name
    }
}

/// Where the `>` closing a `<` just before `text` is.
fn closing_bracket(text: &str) -> Option<usize> {
    outside_brackets(text).find_map(|(at, c)| (c == '>').then_some(at))
}

/// A path such as `app::Stack<u32>`: it starts with a name, and holds no
/// space outside its generic arguments (`u8 as Hash`, `dyn Any` do).
fn is_path(text: &str) -> bool {
    text.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && outside_brackets(text).all(|(_, c)| c != ' ')
}

/// The characters of `text` outside any brackets it opens, with their
/// places; a closing bracket it did not open is outside. A function
/// type's `->` closes nothing.
fn outside_brackets(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut depth = 0usize;
    let mut previous = ' ';
    text.char_indices().filter(move |&(_, c)| {
        let arrow = c == '>' && previous == '-';
        previous = c;
        match c {
            '<' | '(' | '[' => {
                depth += 1;
                false
            }
            '>' | ')' | ']' if !arrow && depth > 0 => {
                depth -= 1;
                false
            }
            _ => depth == 0 && !arrow,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_names_lose_their_mangling_and_hash() {
        assert_eq!(
            rust_name("_ZN10appendix_b3add17h7741d246eb22c1f8E"),
            "appendix_b::add"
        );
        assert_eq!(rust_name("fib::fib::h00959e66f4db9792"), "fib::fib");
        assert_eq!(rust_name("_RNvCs1234_7mycrate4main"), "mycrate::main");
        assert_eq!(rust_name("wasm-function[75]"), "wasm-function[75]");
        assert_eq!(rust_name("not::a::hash::hxyz"), "not::a::hash::hxyz");
    }

    #[test]
    fn names_the_linker_demangled_from_v0_symbols_lose_their_disambiguators() {
        assert_eq!(
            rust_name("<rayon_web[c113ec7d1800d415]::Mixer as core[2b3a]::Fn<[f32]>>::call"),
            "<rayon_web::Mixer as core[2b3a]::Fn<[f32]>>::call"
        );
        assert_eq!(
            rust_name("rayon_web[c113ec7d1800d415]::chunk"),
            "rayon_web::chunk"
        );
        assert_eq!(rust_name("a[b"), "a[b");
    }

    /// The symbols are rustc's for `impl Engine { fn fire(&self) }` in
    /// crate `m`, from `nm` of one object built both ways.
    #[test]
    fn an_inherent_method_has_one_name_under_either_mangling() {
        let legacy = rust_name("_ZN1m6Engine4fire17h1fb8d5c246012a9eE");
        let v0 = rust_name("_RNvMCsdNnOaZtHeaB_1mNtB2_6Engine4fire");
        assert_eq!(legacy, "m::Engine::fire");
        assert_eq!(v0, legacy);
        assert_eq!(
            rust_name("<opt_in[5f1c2b3a4d5e6f70]::engine::Engine>::fire::{closure#0}"),
            "opt_in::engine::Engine::fire::{closure#0}"
        );
    }

    /// rustc's symbols for an impl in another module than its type, from
    /// `nm` of one object built both ways.
    #[test]
    fn an_impl_away_from_its_type_is_named_by_the_type_under_either_mangling() {
        let legacy = rust_name(
            "_ZN1g5other83_$LT$impl$u20$core..ops..index..Index$LT$usize$GT$$u20$for$u20$g..Tree$LT$T$GT$$GT$5index15__wasmprof_here17h125ca316af3cdfdfE",
        );
        assert_eq!(
            legacy,
            "<g::Tree<T> as core::ops::index::Index<usize>>::index::__wasmprof_here"
        );
        let v0 = rust_name(
            "_RNvNvXNtCs5K2gxTujwD5_1g5otherINtB6_4TreepEINtNtNtCseqjPbERlUDJ_4core3ops5index5IndexjE5index15___wasmprof_here",
        );
        // The one difference left: v0 does not name the impl's parameter.
        assert_eq!(v0, legacy.replace("Tree<T>", "Tree<_>"));
        assert_eq!(
            rust_name("rhai::func::script::<impl rhai::engine::Engine>::call_script_fn"),
            "rhai::engine::Engine::call_script_fn"
        );
        assert_eq!(rust_name("core::slice::<impl [T]>::len"), "<[T]>::len");
        assert_eq!(
            rust_name("app::<impl app::Callback<fn(u8) -> u8> for app::Button>::on::{{closure}}"),
            "<app::Button as app::Callback<fn(u8) -> u8>>::on::{{closure}}"
        );
    }

    #[test]
    fn only_a_path_loses_its_brackets() {
        assert_eq!(
            rust_name("<app::Stack<alloc::vec::Vec<u8>>>::push"),
            "app::Stack<alloc::vec::Vec<u8>>::push"
        );
        assert_eq!(
            rust_name("<app::Table<fn(u8) -> u8>>::get"),
            "app::Table<fn(u8) -> u8>::get"
        );
        for kept in [
            "<u128 as itoa::Unsigned>::fmt",
            "<[u8]>::len",
            "<dyn core::any::Any>::is",
            "<&str as app::Show>::show",
            "<fn() -> u8 as app::Call>::call",
            "<app::Engine>",
            "<app::Engine",
        ] {
            assert_eq!(rust_name(kept), kept);
        }
    }
}
