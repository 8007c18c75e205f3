use std::path::{Path, PathBuf};

use super::*;

const INSTRUMENT: &str = "#[::wasmprof::instrument] ";
const SKIP: &str = "#[::wasmprof::skip] ";
const COUNT: &str = "#[::wasmprof::instrument(count)] ";

/// A crate in a temporary directory, from `(relative path, text)` pairs.
struct Crate {
    dir: tempfile::TempDir,
}

impl Crate {
    fn new(files: &[(&str, &str)]) -> Crate {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Crate { dir }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn spec(&self, roots: &[&str]) -> CrateSpec {
        CrateSpec {
            crate_name: "app".into(),
            package_root: self.dir.path().to_path_buf(),
            roots: roots.iter().map(|r| self.path(r)).collect(),
            runtime: Runtime::new("wasmprof"),
            filter: Filter::default(),
            functions: true,
            tests: false,
            bare_attributes_are_ours: false,
            dependency: false,
            edition_2015: false,
            direct: false,
            wrap_allocator: false,
        }
    }

    fn rewrite(&self, spec: &CrateSpec) -> Rewritten {
        rewrite_crate(spec).unwrap()
    }

    fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(self.dir.path()).unwrap()
    }
}

/// The rewritten text without the slots the rewrite gives each function
/// (`__slot = N` in its attribute) and a root's declaration of the block
/// they index, with the slots found: `(counted, slot)` in text order.
fn without_slots(rewritten: &str) -> (String, Vec<(bool, u32)>) {
    let mut text = rewritten.to_owned();
    if let Some(at) = text.find("::wasmprof::__site_block!(") {
        assert!(
            text[at..].ends_with(");\n"),
            "the block is declared last:\n{rewritten}"
        );
        text.truncate(at);
    }
    let mut slots = Vec::new();
    while let Some(at) = text.find("__slot = ") {
        let digits = text[at + 9..].find(|c: char| !c.is_ascii_digit()).unwrap();
        let slot = text[at + 9..at + 9 + digits].parse().unwrap();
        let (start, counted) = if text[..at].ends_with("(count, ") {
            (at - 2, true)
        } else if text[..at].ends_with(", ") {
            (at - 2, false)
        } else {
            assert!(text[..at].ends_with('('), "{rewritten}");
            (at - 1, false)
        };
        let mut end = at + 9 + digits;
        if text[..at].ends_with('(') {
            end += 1; // its `)`, the `(` above
        }
        slots.push((counted, slot));
        text.replace_range(start..end, "");
    }
    (text, slots)
}

/// Every insertion as (line, inserted text, what follows it on the line),
/// after checking that removing them gives back the original, line for
/// line (slots left out: see [`without_slots`]).
fn insertions(original: &str, rewritten: &str) -> Vec<(usize, &'static str, String)> {
    let rewritten = &without_slots(rewritten).0;
    assert_eq!(
        original.lines().count(),
        rewritten.lines().count(),
        "line count changed:\n{rewritten}"
    );
    let mut found = Vec::new();
    for (index, (old, new)) in original.lines().zip(rewritten.lines()).enumerate() {
        let mut rest = new.to_owned();
        for marker in [INSTRUMENT, SKIP, COUNT] {
            while let Some(at) = rest.find(marker) {
                let after: String = rest[at + marker.len()..]
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                found.push((index + 1, marker, after));
                rest.replace_range(at..at + marker.len(), "");
            }
        }
        assert_eq!(
            old,
            rest,
            "line {} changed beyond the insertions",
            index + 1
        );
    }
    found.sort();
    found
}

const LIB: &str = r#"//! A crate with one of everything.

use std::fmt;

/// Documented, with an attribute.
#[inline]
pub fn documented(x: u32) -> u32 {
    x + 1
}

fn generic<T: Clone>(value: &T) -> T { value.clone() }

fn returns_impl() -> impl Iterator<Item = u32> {
    (0..3).map(|x| x * 2)
}

const fn constant() -> u32 { 3 }

async fn later() {}

extern "C" {
    fn from_host(x: i32) -> i32;
}

macro_rules! make {
    ($name:ident) => {
        fn $name() {}
    };
}
make!(generated);

fn outer() -> u32 {
    fn inner() -> u32 { 1 }
    let add = |a: u32| a + inner();
    add(2)
}

pub struct Point { x: i32 }

impl Point {
    pub fn new(x: i32) -> Point { Point { x } }
    pub const ORIGIN: Point = Point { x: 0 };
    pub const fn zero() -> Point { Point { x: 0 } }
    fn get(&self) -> i32 {
        self.x
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "{}", self.x) }
}

pub trait Shape {
    fn area(&self) -> f64;
    fn describe(&self) -> String { format!("{}", self.area()) }
}

mod nested {
    pub(crate) unsafe fn raw() {}
    pub mod deeper { pub fn deepest() {} }
}
"#;

#[test]
fn attributes_go_on_each_items_own_lines_and_no_line_moves() {
    let krate = Crate::new(&[("src/lib.rs", LIB)]);
    let out = krate.rewrite(&krate.spec(&["src/lib.rs"]));
    let text = &out.files[&krate.path("src/lib.rs")];
    assert_eq!(
        insertions(LIB, text),
        vec![
            // Before the item's attributes (not its doc comment): expanded
            // first, ours sees the function as written.
            (6, INSTRUMENT, "#[inline]".into()),
            (11, INSTRUMENT, "fn generic<T:".into()),
            (13, INSTRUMENT, "fn returns_impl()".into()),
            (19, INSTRUMENT, "async fn".into()),
            (32, INSTRUMENT, "fn outer()".into()),
            (40, INSTRUMENT, "impl Point".into()),
            (41, INSTRUMENT, "pub fn".into()),
            (44, INSTRUMENT, "fn get(&self)".into()),
            (49, INSTRUMENT, "impl fmt::Display".into()),
            (50, INSTRUMENT, "fn fmt(&self,".into()),
            (53, INSTRUMENT, "pub trait".into()),
            (55, INSTRUMENT, "fn describe(&self)".into()),
            (59, INSTRUMENT, "pub(crate) unsafe".into()),
            (60, INSTRUMENT, "pub fn".into()),
        ]
    );
    let planned: Vec<(usize, &str)> = out
        .planned
        .iter()
        .map(|p| (p.line, p.path.as_str()))
        .collect();
    assert_eq!(
        planned,
        vec![
            (7, "documented"),
            (11, "generic"),
            (13, "returns_impl"),
            (19, "later"),
            (32, "outer"),
            (41, "Point::new"),
            (44, "Point::get"),
            (50, "Point::fmt"),
            (55, "Shape::describe"),
            (59, "nested::raw"),
            (60, "nested::deeper::deepest"),
        ]
    );
    // const functions (one free, one associated) are not instrumentable,
    // async ones are; the rest
    // (the extern block, the macro's function, the nested `inner`, the
    // closure) is not seen at all.
    assert_eq!(out.stats.not_instrumentable, 2);
    assert_eq!(out.stats.instrumented, 11);
}

#[test]
fn wasmprof_attributes_of_the_user_are_honoured() {
    let lib = r#"
#[wasmprof::skip]
fn skipped() {}
#[wasmprof::instrument(name = "custom")]
fn annotated() {}
#[wasmprof::skip]
impl A { fn a(&self) {} }
#[wasmprof::skip]
mod quiet { fn q() {} mod file; }
#[wasmprof::instrument]
mod loud { fn l() {} }
impl B {
    #[wasmprof::skip]
    fn hidden(&self) {}
    fn shown(&self) {}
}
#[skip]
fn bare() {}
"#;
    // `mod quiet`'s `mod file;` must not even be looked for.
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    let out = krate.rewrite(&spec);
    let text = &out.files[&krate.path("src/lib.rs")];
    assert_eq!(
        insertions(lib, text),
        vec![
            (12, INSTRUMENT, "impl B".into()),
            (15, INSTRUMENT, "fn shown(&self)".into()),
            (17, INSTRUMENT, "#[skip]".into())
        ]
    );
    let paths: Vec<&str> = out.planned.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["B::shown", "bare"]);
    // Someone else's `#[skip]` may be a macro that writes the function out
    // twice: no slot (see `copies.rs`).
    assert!(
        text.contains("#[::wasmprof::instrument] #[skip]\nfn bare() {}"),
        "{text}"
    );
    // In a crate that uses wasmprof, a bare `#[skip]` is taken for ours.
    spec.bare_attributes_are_ours = true;
    let out = krate.rewrite(&spec);
    let paths: Vec<&str> = out.planned.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["B::shown"]);
}

#[test]
fn small_and_excluded_functions_stay_out_with_a_skip_inside_blocks() {
    let lib = r#"
fn tiny() -> u32 { 1 }
fn big(v: &[u32]) -> u32 {
    let mut s = 0;
    for x in v { s += x; }
    s
}
fn branches(x: bool) -> u32 { if x { let y = 1; y } else { 2 } }
impl Thing {
    fn small(&self) -> u32 { self.0 }
    fn large(&self) -> u32 {
        let a = self.0;
        a * 2
    }
    const fn konst(&self) -> u32 { 0 }
}
mod noisy { pub fn n() { let a = 1; let b = 2; } }
"#;
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.filter.min_size = 5;
    spec.filter.exclude = vec!["noisy::*".into()];
    let out = krate.rewrite(&spec);
    let text = &out.files[&krate.path("src/lib.rs")];
    assert_eq!(
        insertions(lib, text),
        vec![
            (3, INSTRUMENT, "fn big(v:".into()),
            (8, INSTRUMENT, "fn branches(x:".into()),
            (9, INSTRUMENT, "impl Thing".into()),
            (10, SKIP, "fn small(&self)".into()),
            (11, INSTRUMENT, "fn large(&self)".into()),
        ]
    );
    assert_eq!(out.stats.small, 2);
    assert_eq!(out.stats.instrumented, 3);
    // A whole module excluded is not read at all: it is named instead.
    assert_eq!(out.stats.excluded, 0);
    assert_eq!(
        out.stats.excluded_modules,
        [format!("{}::noisy", spec.crate_name)]
    );

    // Include patterns: only what they name.
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.filter.include = vec!["Thing::*".into(), "app::tiny".into()];
    let out = krate.rewrite(&spec);
    let paths: Vec<&str> = out.planned.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["tiny", "Thing::small", "Thing::large"]);
}

#[test]
fn small_functions_are_counted_by_default() {
    let lib = r#"
fn tiny() -> u32 { 1 }
fn big(v: &[u32]) -> u32 {
    let mut s = 0;
    for x in v { s += x; }
    s
}
impl Thing {
    fn small(&self) -> u32 { self.0 }
    fn large(&self) -> u32 {
        let a = self.0;
        a * 2
    }
}
impl Small {
    fn get(&self) -> u32 { self.0 }
    fn excluded(&self) -> u32 { self.0 }
}
"#;
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.filter.min_size = 5;
    spec.filter.count_small = true;
    spec.filter.exclude = vec!["Small::excluded".into()];
    let out = krate.rewrite(&spec);
    let text = &out.files[&krate.path("src/lib.rs")];
    assert_eq!(
        insertions(lib, text),
        vec![
            (2, COUNT, "fn tiny()".into()),
            (3, INSTRUMENT, "fn big(v:".into()),
            (8, INSTRUMENT, "impl Thing".into()),
            (9, COUNT, "fn small(&self)".into()),
            (10, INSTRUMENT, "fn large(&self)".into()),
            (15, COUNT, "impl Small".into()),
            (16, COUNT, "fn get(&self)".into()),
            (17, SKIP, "fn excluded(&self)".into()),
        ]
    );
    assert_eq!(out.stats.instrumented, 5);
    assert_eq!(out.stats.counted, 3);
    assert_eq!(out.stats.small, 0);
    let counted: Vec<&str> = out
        .planned
        .iter()
        .filter(|p| p.counted)
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(counted, ["tiny", "Thing::small", "Small::get"]);
}

#[test]
fn an_impl_with_nothing_wanted_gets_no_attribute() {
    let lib = "impl A {\n    fn a(&self) {}\n    const fn b() {}\n}\n";
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.filter.exclude = vec!["A::a".into()];
    let out = krate.rewrite(&spec);
    assert!(out.files.is_empty(), "{:?}", out.files);
    assert_eq!(out.stats.instrumented, 0);
}

#[test]
fn module_files_are_found_as_rustc_finds_them() {
    let krate = Crate::new(&[
        (
            "src/lib.rs",
            "mod a;\nmod c;\n#[path = \"other/x_impl.rs\"]\nmod x;\nmod inl { mod z; }\n#[cfg(windows)]\nmod absent;\nfn root() {}\n",
        ),
        ("src/a.rs", "mod b;\nmod q { mod r; }\npub fn in_a() {}\n"),
        ("src/a/b.rs", "pub fn in_b() {}\n"),
        ("src/a/q/r.rs", "pub fn in_r() {}\n"),
        ("src/c/mod.rs", "mod d;\npub fn in_c() {}\n"),
        ("src/c/d.rs", "pub fn in_d() {}\n"),
        // A `#[path]` file owns its directory, as a mod.rs does.
        ("src/other/x_impl.rs", "mod y;\npub fn in_x() {}\n"),
        ("src/other/y.rs", "pub fn in_y() {}\n"),
        ("src/inl/z.rs", "pub fn in_z() {}\n"),
        // Not reachable: no `mod` names it.
        ("src/orphan.rs", "pub fn orphan() {}\n"),
        // Not a root: tests, benches, examples, build scripts stay out.
        ("tests/t.rs", "fn t() {}\n"),
        ("build.rs", "fn main() {}\n"),
    ]);
    let out = krate.rewrite(&krate.spec(&["src/lib.rs"]));
    let mut found: Vec<(String, String)> = out
        .planned
        .iter()
        .map(|p| {
            (
                p.path.clone(),
                krate.relative(&p.file).display().to_string(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("a::b::in_b", "src/a/b.rs"),
            ("a::in_a", "src/a.rs"),
            ("a::q::r::in_r", "src/a/q/r.rs"),
            ("c::d::in_d", "src/c/d.rs"),
            ("c::in_c", "src/c/mod.rs"),
            ("inl::z::in_z", "src/inl/z.rs"),
            ("root", "src/lib.rs"),
            ("x::in_x", "src/other/x_impl.rs"),
            ("x::y::in_y", "src/other/y.rs"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert!(!out.read.contains(&krate.path("src/orphan.rs")));
}

#[test]
fn binaries_and_libraries_share_files_once() {
    let krate = Crate::new(&[
        ("src/lib.rs", "pub mod shared;\n"),
        (
            "src/main.rs",
            "#[path = \"shared.rs\"] mod shared;\nfn main() {}\n",
        ),
        ("src/shared.rs", "pub fn s() {}\n"),
    ]);
    let out = krate.rewrite(&krate.spec(&["src/lib.rs", "src/main.rs"]));
    assert_eq!(out.stats.instrumented, 2);
    assert_eq!(
        out.files[&krate.path("src/shared.rs")],
        "#[::wasmprof::instrument(__slot = 0)] pub fn s() {}\n"
    );
    // Each root declares a block for every slot of the package, as a
    // file may be in more than one of its crates.
    assert_eq!(
        out.files[&krate.path("src/lib.rs")],
        "pub mod shared;\n::wasmprof::__site_block!(2, 0);\n"
    );
    assert_eq!(
        out.files[&krate.path("src/main.rs")],
        "#[path = \"shared.rs\"] mod shared;\n#[::wasmprof::instrument(__slot = 1)] fn main() {}\n\
         ::wasmprof::__site_block!(2, 0);\n"
    );
}

#[test]
fn each_function_gets_a_slot_of_its_tier_once_across_files() {
    let krate = Crate::new(&[
        (
            "src/lib.rs",
            "mod a;\nfn tiny() {}\nfn big(v: &[u8]) -> usize { v.iter().filter(|b| **b > 3).count() }\n\
             impl T { fn small(&self) {} fn large(&self, v: &[u8]) -> usize { v.iter().map(|b| *b as usize).sum() } }\n\
             async fn later() {}\n",
        ),
        ("src/a.rs", "pub fn other() {}\n"),
    ]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.filter.min_size = 5;
    spec.filter.count_small = true;
    let out = krate.rewrite(&spec);
    let mut slots = Vec::new();
    for file in ["src/lib.rs", "src/a.rs"] {
        let text = &out
            .files
            .get(&krate.path(file))
            .unwrap_or_else(|| panic!("{file}: {:#?}", out.files));
        slots.extend(without_slots(text).1);
    }
    // Depth first: the root's functions, then its module's; an async fn
    // has none (its site keeps no per-thread state).
    assert_eq!(
        slots,
        [(true, 0), (false, 0), (true, 1), (false, 1), (true, 2)],
        "{:#?}",
        out.files
    );
    assert!(out.files[&krate.path("src/lib.rs")].ends_with("\n::wasmprof::__site_block!(2, 3);\n"));
}

/// A function an attribute macro may write out twice (`#[duplicate_item]`),
/// directly or through its impl block or module, takes no slot: the copies
/// would share it. The compiler's own attributes and `#[wasm_bindgen]`
/// change nothing.
#[test]
fn a_function_a_macro_may_copy_gets_no_slot() {
    let lib = "#[duplicate_item(n; [a]; [b])]\nfn n() {}\n\
               #[inline] #[wasm_bindgen]\nfn kept() {}\n\
               #[duplicate_item(T; [u8]; [u16])]\nimpl X for T { fn m(&self) {} }\n\
               #[some_macro]\nmod inner { fn i() {} }\n\
               fn plain() {}\n";
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let out = krate.rewrite(&krate.spec(&["src/lib.rs"]));
    let text = &out.files[&krate.path("src/lib.rs")];
    let slotted: Vec<&str> = text.lines().filter(|l| l.contains("__slot")).collect();
    assert_eq!(
        slotted,
        [
            "#[::wasmprof::instrument(__slot = 0)] #[inline] #[wasm_bindgen]",
            "#[::wasmprof::instrument(__slot = 1)] fn plain() {}"
        ],
        "{text}"
    );
    let paths: Vec<&str> = out.planned.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["n", "kept", "T::m", "inner::i", "plain"], "{text}");
    assert!(
        text.ends_with("\n::wasmprof::__site_block!(2, 0);\n"),
        "{text}"
    );
}

#[test]
fn a_path_outside_the_crate_is_an_error_naming_the_line() {
    let krate = Crate::new(&[
        (
            "app/src/lib.rs",
            "fn f() {}\n\n#[path = \"../../shared/util.rs\"]\nmod util;\n",
        ),
        ("shared/util.rs", "pub fn u() {}\n"),
    ]);
    let mut spec = krate.spec(&["app/src/lib.rs"]);
    spec.package_root = krate.path("app");
    let error = rewrite_crate(&spec).unwrap_err().to_string();
    let expected = format!(
        "{}:4: the `#[path]` of module `util` points outside the crate, to {}; crate-wide \
         instrumentation rewrites only files inside {}. Leave the module out with \
         `exclude = [\"util\"]` under `[package.metadata.wasmprof]` in the crate's Cargo.toml, \
         or build without crate-wide instrumentation of this crate",
        krate.path("app/src/lib.rs").display(),
        krate.path("shared/util.rs").display(),
        krate.path("app").display()
    );
    assert_eq!(error, expected);
    // Excluded, the module is not followed, and the copy reads it from
    // where it is.
    spec.filter.exclude = vec!["util".into()];
    let out = rewrite_crate(&spec).unwrap();
    assert_eq!(out.stats.instrumented, 1);
    assert_eq!(
        out.files[&krate.path("app/src/lib.rs")],
        format!(
            "#[::wasmprof::instrument(__slot = 0)] fn f() {{}}\n\n#[path = {:?}]\nmod util;\n\
             ::wasmprof::__site_block!(1, 0);\n",
            krate.path("shared/util.rs").display().to_string()
        )
    );
}

#[test]
fn a_file_that_does_not_parse_is_reported_at_its_position() {
    let krate = Crate::new(&[
        ("src/lib.rs", "mod broken;\n"),
        (
            "src/broken.rs",
            "fn ok() {}\n\nfn bad() {\n    let x = ;\n}\n",
        ),
    ]);
    let error = rewrite_crate(&krate.spec(&["src/lib.rs"]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        format!(
            "{}:4:13: cannot parse this file for crate-wide instrumentation: expected an expression",
            krate.path("src/broken.rs").display()
        )
    );
}

#[test]
fn byte_order_marks_shebangs_and_wide_characters_keep_positions() {
    let main = "\u{feff}#!/usr/bin/env run-cargo-script\n// été ☃\nfn main() { let s = \"☃\"; }\n/* ☃ */ fn after() {}\n";
    let krate = Crate::new(&[("src/main.rs", main)]);
    let out = krate.rewrite(&krate.spec(&["src/main.rs"]));
    assert_eq!(
        out.files[&krate.path("src/main.rs")],
        "\u{feff}#!/usr/bin/env run-cargo-script\n// été ☃\n#[::wasmprof::instrument(__slot = 0)] fn main() { let s = \"☃\"; }\n/* ☃ */ #[::wasmprof::instrument(__slot = 1)] fn after() {}\n::wasmprof::__site_block!(2, 0);\n"
    );
}

#[test]
fn a_renamed_runtime_is_named_in_the_attribute() {
    let krate = Crate::new(&[(
        "src/lib.rs",
        "fn f() {}\nimpl A { fn small(&self) {} fn big(&self) { g(); h(); } }\n",
    )]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.runtime = Runtime::new(RENAMED_RUNTIME);
    spec.filter.min_size = 1;
    let out = krate.rewrite(&spec);
    assert_eq!(
        out.files[&krate.path("src/lib.rs")],
        "fn f() {}\n#[::__wasmprof_rt::instrument(crate = ::__wasmprof_rt)] impl A { \
         #[::__wasmprof_rt::skip] fn small(&self) {} \
         #[::__wasmprof_rt::instrument(crate = ::__wasmprof_rt, __slot = 0)] fn big(&self) { g(); h(); } }\n\
         ::__wasmprof_rt::__site_block!(1, 0);\n"
    );
}

#[test]
fn dependencies_are_quiet_and_edition_2015_gets_its_extern_crates() {
    let lib = "//! Old crate.\n#![cfg_attr(not(feature = \"std\"), no_std)]\npub fn f() {}";
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.dependency = true;
    spec.edition_2015 = true;
    let out = krate.rewrite(&spec);
    assert_eq!(
        out.files[&krate.path("src/lib.rs")],
        "#![allow(warnings)] //! Old crate.\n#![cfg_attr(not(feature = \"std\"), no_std)]\n\
         #[::wasmprof::instrument(__slot = 0)] pub fn f() {}\n\
         #[cfg(not(not (feature = \"std\")))] #[allow(unused_extern_crates)] extern crate core;\n\
         #[allow(unused_extern_crates)] extern crate wasmprof;\n\
         ::wasmprof::__site_block!(1, 0);\n"
    );
    // An inner attribute goes before an outer one at the same place.
    let krate = Crate::new(&[("src/lib.rs", "pub fn f() {}\n")]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.dependency = true;
    assert_eq!(
        krate.rewrite(&spec).files[&krate.path("src/lib.rs")],
        "#![allow(warnings)] #[::wasmprof::instrument(__slot = 0)] pub fn f() {}\n\
         ::wasmprof::__site_block!(1, 0);\n"
    );
    // A crate without functions to instrument stays as it is.
    let krate = Crate::new(&[("src/lib.rs", "pub const X: u32 = 1;\n")]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.dependency = true;
    spec.edition_2015 = true;
    assert!(krate.rewrite(&spec).files.is_empty());
}

#[test]
fn other_attribute_macros_come_after_ours() {
    let lib = "/// Starts.\n#[wasm_bindgen(start)]\npub fn start() {}\n\
               #[wasm_bindgen]\nimpl Counter {\n    /// New.\n    #[wasm_bindgen(constructor)]\n    pub fn new() -> Counter { Counter }\n}\n";
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.filter.exclude = vec!["Counter::new".into(), "nothing".into()];
    let out = krate.rewrite(&spec);
    assert_eq!(out.stats.instrumented, 1);
    let text = &out.files[&krate.path("src/lib.rs")];
    assert_eq!(
        insertions(lib, text),
        vec![(2, INSTRUMENT, "#[wasm_bindgen(start)]".into())]
    );
    spec.filter.exclude.clear();
    let out = krate.rewrite(&spec);
    let text = &out.files[&krate.path("src/lib.rs")];
    assert_eq!(
        insertions(lib, text),
        vec![
            (2, INSTRUMENT, "#[wasm_bindgen(start)]".into()),
            (4, INSTRUMENT, "#[wasm_bindgen]".into()),
            (7, INSTRUMENT, "#[wasm_bindgen(constructor)]".into()),
        ]
    );
}

#[test]
fn allocators_descriptors_and_naked_functions_are_left_alone() {
    let lib = "unsafe impl GlobalAlloc for A { unsafe fn alloc(&self, l: Layout) -> *mut u8 { f(l) } }\n\
               impl WasmDescribe for C { fn describe() { inform(1) } }\n\
               impl B { #[naked] fn n() {} fn ok(&self) {} }\n";
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let out = krate.rewrite(&krate.spec(&["src/lib.rs"]));
    assert_eq!(
        out.files[&krate.path("src/lib.rs")],
        "unsafe impl GlobalAlloc for A { unsafe fn alloc(&self, l: Layout) -> *mut u8 { f(l) } }\n\
         impl WasmDescribe for C { fn describe() { inform(1) } }\n\
         #[::wasmprof::instrument] impl B { #[::wasmprof::skip] #[naked] fn n() {} \
         #[::wasmprof::instrument(__slot = 0)] fn ok(&self) {} }\n\
         ::wasmprof::__site_block!(1, 0);\n"
    );
    // The crate is known to be an allocator: the functions its allocator
    // calls cannot be told apart, so a dependency is left out as a whole.
    assert_eq!(out.stats.allocators, 1);
    assert_eq!(out.stats.not_instrumentable, 3);
}

#[test]
fn text_read_with_include_str_is_pointed_out() {
    let krate = Crate::new(&[(
        "src/lib.rs",
        "pub const SRC: &str = include_str!(\"lib.rs\");\npub const R: &str = include_str!(\"../README.md\");\nfn f() {}\n",
    )]);
    let out = krate.rewrite(&krate.spec(&["src/lib.rs"]));
    assert_eq!(out.warnings.len(), 1);
    assert!(
        out.warnings[0].contains("reads `lib.rs` as text"),
        "{:?}",
        out.warnings
    );
}

#[test]
fn module_directories() {
    use modules::ModDir;
    let root = ModDir::root(Path::new("/c/src/lib.rs"));
    let a = root.file_module_candidates("a", None);
    assert_eq!(a[0].file, Path::new("/c/src/a.rs"));
    assert_eq!(a[1].file, Path::new("/c/src/a/mod.rs"));
    let b = a[0].dir.file_module_candidates("b", None);
    assert_eq!(b[0].file, Path::new("/c/src/a/b.rs"));
    assert_eq!(b[1].file, Path::new("/c/src/a/b/mod.rs"));
    // `#[path]` in a non-mod.rs file is relative to the file's directory.
    let p = a[0].dir.file_module_candidates("p", Some("p_impl.rs"));
    assert_eq!(p[0].file, Path::new("/c/src/p_impl.rs"));
    // Inline modules add a directory; in a non-mod.rs file, after its own.
    let inline = a[0].dir.inline_module("inl", None);
    assert_eq!(
        inline.file_module_candidates("z", None)[0].file,
        Path::new("/c/src/a/inl/z.rs")
    );
    let inline = a[0].dir.inline_module("inl", None);
    assert_eq!(
        inline.file_module_candidates("z", Some("zz.rs"))[0].file,
        Path::new("/c/src/a/inl/zz.rs")
    );
    // `#[path]` on an inline module names its directory.
    let inline = root.inline_module("inl", Some("elsewhere"));
    assert_eq!(
        inline.file_module_candidates("z", None)[0].file,
        Path::new("/c/src/elsewhere/z.rs")
    );
    assert_eq!(
        root.file_module_candidates("r#match", None)[0].file,
        Path::new("/c/src/r#match.rs")
    );
}

#[test]
fn shadow_paths() {
    let shadow = shadow::ShadowRoot::new(PathBuf::from("/t/wasmprof/host/shadow/all"));
    assert_eq!(
        shadow.in_workspace(
            Path::new("/home/u/ws/app/src/lib.rs"),
            Path::new("/home/u/ws")
        ),
        Some(PathBuf::from(
            "/t/wasmprof/host/shadow/all/workspace/app/src/lib.rs"
        ))
    );
    assert_eq!(
        shadow.in_workspace(Path::new("/elsewhere/x"), Path::new("/home/u/ws")),
        None
    );
    assert_eq!(
        shadow.dependency(Path::new("/home/u/.cargo/registry/src/i/semver-1.0.28")),
        Path::new(
            "/t/wasmprof/host/shadow/all/workspace/.wasmprof-deps/home/u/.cargo/registry/src/i/semver-1.0.28"
        )
    );
    // One flag, whatever is copied: relative paths under the dependency
    // directory map back to the absolute originals.
    assert_eq!(
        shadow::remap_flags(),
        ["--remap-path-prefix=.wasmprof-deps=/"]
    );
}

#[test]
fn syncing_writes_only_what_changed_and_removes_what_is_gone() {
    use std::collections::BTreeMap;
    let src = Crate::new(&[
        ("Cargo.toml", "[package]\n"),
        ("src/lib.rs", "fn f() {}\n"),
        ("src/gone.rs", "fn g() {}\n"),
        (".git/HEAD", "ref\n"),
        ("target/CACHEDIR.TAG", "x\n"),
        ("target/debug/big", "x\n"),
        ("Cargo.lock", "lock\n"),
    ]);
    let dst = tempfile::tempdir().unwrap();
    let dst = dst.path().join("copy");
    let mut overrides = BTreeMap::new();
    overrides.insert(src.path("src/lib.rs"), b"#[x] fn f() {}\n".to_vec());
    let stats = shadow::sync_tree(src.dir.path(), &dst, &overrides, &[], &["Cargo.lock"]).unwrap();
    assert_eq!(stats.written, 3);
    assert_eq!(
        std::fs::read_to_string(dst.join("src/lib.rs")).unwrap(),
        "#[x] fn f() {}\n"
    );
    assert!(!dst.join(".git").exists());
    assert!(!dst.join("target").exists());
    assert!(!dst.join("Cargo.lock").exists());
    let written_at = std::fs::metadata(dst.join("src/lib.rs"))
        .unwrap()
        .modified()
        .unwrap();

    std::fs::remove_file(src.path("src/gone.rs")).unwrap();
    std::fs::write(dst.join("Cargo.lock"), "cargo's\n").unwrap();
    // What lives in the copy where the original has a skipped directory is
    // not the sync's: another copy may be there.
    std::fs::create_dir_all(dst.join("target/other")).unwrap();
    std::fs::write(dst.join("target/other/file"), "x\n").unwrap();
    let stats = shadow::sync_tree(src.dir.path(), &dst, &overrides, &[], &["Cargo.lock"]).unwrap();
    assert_eq!(
        stats,
        shadow::SyncStats {
            written: 0,
            removed: 1,
            unchanged: 2
        }
    );
    assert_eq!(
        std::fs::metadata(dst.join("src/lib.rs"))
            .unwrap()
            .modified()
            .unwrap(),
        written_at
    );
    assert!(!dst.join("src/gone.rs").exists());
    assert!(dst.join("target/other/file").exists());
    assert_eq!(
        std::fs::read_to_string(dst.join("Cargo.lock")).unwrap(),
        "cargo's\n"
    );
}

#[test]
fn entries_are_instrumented_however_small_and_small_helpers_are_not() {
    let lib = r#"
fn main() {}
#[no_mangle]
pub extern "C" fn run() -> u32 { 1 }
fn helper() -> u32 { 1 }
#[wasm_bindgen]
impl Counter {
    pub fn get(&self) -> u32 { self.0 }
    fn private(&self) -> u32 { self.0 }
}
"#;
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.filter.min_size = super::size::DEFAULT_MIN_SIZE;
    let out = krate.rewrite(&spec);
    let paths: Vec<&str> = out.planned.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["main", "run", "Counter::get"]);
    assert_eq!(out.stats.small, 2, "helper and Counter::private");
}

#[test]
fn tests_alone_marks_test_functions_and_nothing_else() {
    let lib = "pub fn count(s: &str) -> usize {\n    s.split_whitespace().count()\n}\n\n\
               impl Counter { fn bump(&mut self) { for _ in 0..2 {} } }\n\
               pub struct Counter;\n\n\
               #[cfg(test)]\nmod tests {\n    #[test]\n    fn counts() {\n        \
               assert_eq!(super::count(\"a b\"), 2);\n    }\n\n    \
               #[wasm_bindgen_test::wasm_bindgen_test]\n    fn in_js() {}\n\n    \
               #[test]\n    async fn later() {}\n\n    fn helper() {}\n}\n";
    let krate = Crate::new(&[
        ("src/lib.rs", lib),
        ("tests/words.rs", "#[test]\nfn two_words() {}\n"),
    ]);
    let mut spec = krate.spec(&["src/lib.rs", "tests/words.rs"]);
    spec.functions = false;
    spec.tests = true;
    let out = krate.rewrite(&spec);
    let planned: Vec<(String, PlannedKind)> = out
        .planned
        .iter()
        .map(|p| (p.path.clone(), p.kind))
        .collect();
    assert_eq!(
        planned,
        [
            ("tests::counts".to_owned(), PlannedKind::Test),
            ("tests::in_js".to_owned(), PlannedKind::Test),
            ("tests::later".to_owned(), PlannedKind::Test),
            ("two_words".to_owned(), PlannedKind::Test),
        ]
    );
    assert_eq!(
        out.stats.not_instrumentable, 0,
        "async tests are marked too"
    );
    let rewritten = &out.files[&krate.path("src/lib.rs")];
    assert_eq!(rewritten.lines().count(), lib.lines().count());
    assert!(rewritten.contains("    #[::wasmprof::instrument(test)] #[test]\n    fn counts()"));
    assert!(!rewritten.contains("#[::wasmprof::instrument] "));
    assert_eq!(
        out.files[&krate.path("tests/words.rs")],
        "#[::wasmprof::instrument(test)] #[test]\nfn two_words() {}\n"
    );
}

#[test]
fn tests_with_every_function_marks_both() {
    let lib = "fn work() { for _ in 0..3 {} }\n#[test]\nfn works() { work() }\n";
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.tests = true;
    let out = krate.rewrite(&spec);
    assert_eq!(
        out.files[&krate.path("src/lib.rs")],
        "#[::wasmprof::instrument(__slot = 0)] fn work() { for _ in 0..3 {} }\n\
         #[::wasmprof::instrument(test)] #[test]\nfn works() { work() }\n\
         ::wasmprof::__site_block!(1, 0);\n"
    );
}

#[test]
fn tests_written_by_a_macro_are_marked_inside_its_body() {
    let text = "macro_rules! test {\n    ($($name:ident($v:expr))*) => {\n        $(\n            \
                #[test]\n            fn $name() { assert!($v > 0); }\n        )*\n    };\n}\n\
                macro_rules! not_tests { () => { #[inline] fn f() {} #[cfg(test)] fn g() {} }; }\n\
                test! { one(1) two(2) }\n";
    let krate = Crate::new(&[("tests/test.rs", text)]);
    let mut spec = krate.spec(&["tests/test.rs"]);
    spec.functions = false;
    spec.tests = true;
    let out = krate.rewrite(&spec);
    let rewritten = &out.files[&krate.path("tests/test.rs")];
    assert_eq!(rewritten.lines().count(), text.lines().count());
    assert!(
        rewritten.contains("            #[::wasmprof::instrument(test)] #[test]\n"),
        "{rewritten}"
    );
    assert_eq!(
        rewritten.matches("instrument(test)").count(),
        1,
        "{rewritten}"
    );
    assert_eq!(out.stats.macro_tests, 1);
}

#[test]
fn a_crate_the_attribute_depends_on_gets_its_bodies_wrapped_in_place() {
    let lib = "pub fn parse(input: &str) -> usize {\n    input.len()\n}\n\
               pub struct Cursor;\n\
               impl Cursor {\n    pub fn eof(&self) -> bool { for _ in 0..2 {} true }\n}\n\
               impl<T: Clone> Sealed for T {\n    fn seal(&self) -> u8 { for _ in 0..2 {} 1 }\n}\n\
               pub trait Sealed { fn seal(&self) -> u8; fn open(&self) -> u8 { for _ in 0..2 {} 0 } }\n\
               pub async fn later() {}\n\
               pub fn inner() {\n    #![allow(unused)]\n    for _ in 0..2 {}\n}\n";
    let krate = Crate::new(&[("src/lib.rs", lib)]);
    let mut spec = krate.spec(&["src/lib.rs"]);
    spec.direct = true;
    spec.runtime = Runtime::core();
    spec.filter.min_size = 0;
    let out = krate.rewrite(&spec);
    let rewritten = &out.files[&krate.path("src/lib.rs")];
    // The block the slots index, on a line of its own after the last.
    let (rewritten, block) = rewritten
        .split_once("::__wasmprof_core::__site_block!(4, 0);\n")
        .map(|(text, rest)| (text, rest.is_empty()))
        .unwrap_or((rewritten, false));
    assert!(block, "{rewritten}");
    assert_eq!(
        rewritten.lines().count(),
        lib.lines().count(),
        "{rewritten}"
    );
    assert!(
        !rewritten.contains("instrument]"),
        "no attribute: {rewritten}"
    );
    let wrapped = |name: &str, by_self: bool, line: usize, slot: u32| {
        let self_type = if by_self {
            "::core::option::Option::Some((|| ::core::any::type_name::<Self>()) as fn() -> &'static str)"
        } else {
            "::core::option::Option::None"
        };
        format!(
            "{{ ::__wasmprof_core::__instrument_body! {{ __slot = full {slot}, name = {name:?}, \
             given = false, line = {line}, self_type = {self_type}, body = {{"
        )
    };
    for (name, by_self, line, slot) in [
        ("parse", false, 1, 0),
        ("eof", true, 6, 1),
        ("Sealed::seal", false, 9, 2),
        ("Sealed::open", false, 11, 3),
    ] {
        assert!(
            rewritten.contains(&wrapped(name, by_self, line, slot)),
            "{name}:\n{rewritten}"
        );
    }
    assert!(rewritten.contains("input.len()\n} } }\n"), "{rewritten}");
    // An async fn and a body with inner attributes are left as they are.
    assert!(rewritten.contains("pub async fn later() {}"), "{rewritten}");
    assert!(
        rewritten.contains("pub fn inner() {\n    #![allow(unused)]"),
        "{rewritten}"
    );
    assert_eq!(out.stats.not_instrumentable, 2);
}

#[test]
fn the_crates_the_attribute_depends_on_are_the_macros_dependencies() {
    let manifest = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../wasmprof-macros/Cargo.toml"),
    )
    .unwrap();
    let doc: toml_edit::DocumentMut = manifest.parse().unwrap();
    let mut direct: Vec<&str> = doc["dependencies"]
        .as_table()
        .unwrap()
        .iter()
        .map(|(name, _)| name)
        // wasmprof's own, never instrumented.
        .filter(|name| !name.starts_with("wasmprof-"))
        .collect();
    // And what they depend on in turn.
    direct.push("unicode-ident");
    direct.sort();
    assert_eq!(direct, plan::MACRO_DEPENDENCIES);
}

#[test]
fn with_memory_the_crate_s_global_allocator_is_wrapped_where_it_is_written() {
    let main = "use lol_alloc::{AssumeSingleThreaded, FreeListAllocator};\n\
                #[global_allocator]\n\
                static ALLOCATOR: AssumeSingleThreaded<FreeListAllocator> =\n    \
                unsafe { AssumeSingleThreaded::new(FreeListAllocator::new()) };\n\
                static PLAIN: u32 = 7;\n";
    let krate = Crate::new(&[("src/main.rs", main)]);
    let spec = CrateSpec {
        wrap_allocator: true,
        ..krate.spec(&["src/main.rs"])
    };
    let out = krate.rewrite(&spec);
    assert_eq!(
        out.files[&krate.path("src/main.rs")],
        "use lol_alloc::{AssumeSingleThreaded, FreeListAllocator};\n\
         #[global_allocator]\n\
         static ALLOCATOR: ::wasmprof::Recording<AssumeSingleThreaded<FreeListAllocator>> =\n    \
         ::wasmprof::Recording::new(unsafe { AssumeSingleThreaded::new(FreeListAllocator::new()) });\n\
         static PLAIN: u32 = 7;\n"
    );
    assert_eq!(out.stats.wrapped_allocators, 1);
    // Without --memory, and when the program wrapped it already, as it is.
    let out = krate.rewrite(&krate.spec(&["src/main.rs"]));
    assert_eq!(
        out.files
            .get(&krate.path("src/main.rs"))
            .map(String::as_str)
            .unwrap_or(main),
        main
    );
    assert_eq!(out.stats.wrapped_allocators, 0);
}
