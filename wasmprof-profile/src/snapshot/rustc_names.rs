//! Functions named as rustc names them.
//!
//! The macro can only guess a method's name from its own tokens: it sees
//! `impl Unsigned for u128`, not which `Unsigned`, and one site serves every
//! instantiation of a generic impl. rustc knows: each site carries a marker
//! function nested in the instrumented one (the runtime's `site::Marker`),
//! whose table slot the snapshot gives, and the module's name section names
//! the marker `<u128 as itoa::Unsigned>::fmt::__wasmprof_here`, the impl's
//! generics as written (`<(A,) as tachys::view::Render>::build`). Those are
//! also the names the engines' samplers show, so sampled stacks match them.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Result};

use crate::profile::Function;
use crate::rust_names::rust_name;
use crate::wasm_info;

/// The marker's own last segment.
const MARKER: &str = "::__wasmprof_here";

/// The enclosing function's name for each marker slot of the module at
/// `wasm`; empty when it has no names (stripped) or no markers.
pub(super) fn marker_names(wasm: &Path) -> Result<HashMap<u32, String>> {
    let bytes = std::fs::read(wasm).map_err(|source| Error::Read {
        path: wasm.to_owned(),
        source,
    })?;
    let names = wasm_info::function_names(&bytes)?;
    let slots = wasm_info::table_slots(&bytes)?;
    Ok(slots
        .into_iter()
        .filter_map(|(slot, function)| {
            let name = names.get(&function)?;
            Some((slot, enclosing_function(&rust_name(name))?))
        })
        .collect())
}

/// `f` for `f::__wasmprof_here`; an `async fn`'s marker may sit in its
/// body's closure, which is the function too.
fn enclosing_function(marker: &str) -> Option<String> {
    let mut name = marker.strip_suffix(MARKER)?;
    loop {
        let shorter = name
            .strip_suffix("::{{closure}}")
            .or_else(|| name.rsplit_once("::{closure#").map(|(before, _)| before))
            .filter(|_| name.ends_with('}'));
        match shorter {
            Some(shorter) => name = shorter,
            None => return Some(name.to_owned()),
        }
    }
}

/// Renames each function whose marker the module names. `markers[i]` is
/// function `i`'s marker slot, and whether its name was given by hand: then
/// the name stays, and rustc's is kept beside it to match sampled frames.
pub(super) fn rename(
    functions: &mut [Function],
    markers: &[(Option<u32>, bool)],
    names: &HashMap<u32, String>,
) {
    for (function, (marker, given)) in functions.iter_mut().zip(markers) {
        let Some(name) = marker.and_then(|slot| names.get(&slot)) else {
            continue;
        };
        if *given {
            function.rustc_name = (*name != function.name).then(|| name.clone());
        } else {
            function.name.clone_from(name);
        }
    }
}

/// Two different functions never share a printed name: where they would
/// (a guessed name, or two versions of one crate), each gets its place.
pub(super) fn disambiguate(functions: &mut [Function]) {
    let mut places: HashMap<String, Vec<(String, u32)>> = HashMap::new();
    for f in functions.iter() {
        let seen = places.entry(f.name.clone()).or_default();
        if !seen.contains(&(f.file.clone(), f.line)) {
            seen.push((f.file.clone(), f.line));
        }
    }
    for f in functions.iter_mut() {
        if places.get(&f.name).is_some_and(|seen| seen.len() > 1) {
            f.name = format!("{} @ {}:{}", f.name, f.file, f.line);
        }
    }
    // Copies of one function that a macro wrote at one place (rstest
    // writes the test's body into each case) are numbered in the order
    // they first ran.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for f in functions.iter_mut() {
        let copies = seen.entry(f.name.clone()).or_default();
        *copies += 1;
        if *copies > 1 {
            f.name = format!("{} (copy {copies})", f.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_names_the_function_it_is_nested_in() {
        assert_eq!(
            enclosing_function("<u128 as itoa::Unsigned>::fmt::__wasmprof_here").as_deref(),
            Some("<u128 as itoa::Unsigned>::fmt")
        );
        assert_eq!(
            enclosing_function("app::Stack<T>::push::__wasmprof_here").as_deref(),
            Some("app::Stack<T>::push")
        );
        assert_eq!(
            enclosing_function("app::fetch::{{closure}}::__wasmprof_here").as_deref(),
            Some("app::fetch")
        );
        assert_eq!(
            enclosing_function("app::fetch::{closure#0}::__wasmprof_here").as_deref(),
            Some("app::fetch")
        );
        assert_eq!(enclosing_function("app::other"), None);
    }

    #[test]
    fn functions_sharing_a_name_are_told_apart_by_their_place() {
        let mut functions = vec![
            Function::at("a::parse", "src/a.rs", 3),
            Function::at("a::parse", "src/b.rs", 9),
            Function::at("a::other", "src/a.rs", 12),
        ];
        disambiguate(&mut functions);
        let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["a::parse @ src/a.rs:3", "a::parse @ src/b.rs:9", "a::other"]
        );
    }

    #[test]
    fn copies_written_by_a_macro_at_one_place_are_numbered() {
        let mut functions = vec![
            Function::at("t::adds::adds", "src/lib.rs", 25),
            Function::at("t::adds::adds", "src/lib.rs", 25),
            Function::at("t::adds::adds", "src/lib.rs", 25),
        ];
        disambiguate(&mut functions);
        let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "t::adds::adds",
                "t::adds::adds (copy 2)",
                "t::adds::adds (copy 3)"
            ]
        );
    }

    #[test]
    fn a_function_with_a_marker_takes_rustc_s_name() {
        let mut functions = vec![Function::at("u128::fmt", "src/lib.rs", 3)];
        let names = HashMap::from([(7, "<u128 as itoa::Unsigned>::fmt".to_owned())]);
        rename(&mut functions, &[(Some(7), false)], &names);
        assert_eq!(functions[0].name, "<u128 as itoa::Unsigned>::fmt");
        rename(&mut functions, &[(None, false)], &HashMap::new());
        assert_eq!(functions[0].name, "<u128 as itoa::Unsigned>::fmt");
    }

    #[test]
    fn a_name_given_by_hand_stays_and_rustc_s_matches_frames() {
        let mut functions = vec![Function::at("app::Counter", "src/lib.rs", 9)];
        let names = HashMap::from([(
            3,
            "<app::Counter as yew::functional::FunctionProvider>::run::inner".to_owned(),
        )]);
        rename(&mut functions, &[(Some(3), true)], &names);
        assert_eq!(functions[0].name, "app::Counter");
        assert_eq!(
            functions[0].rustc_name.as_deref(),
            Some("<app::Counter as yew::functional::FunctionProvider>::run::inner")
        );
    }
}
