//! Compile tests of the attribute with instrumentation off (the default):
//! every supported form compiles and runs unchanged, and every misuse is one
//! error at the offending token. Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p wasmprof-macros --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
