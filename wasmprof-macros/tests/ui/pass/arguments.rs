//! `name = "..."` and `crate = path`, for crates that re-export the runtime.
#![deny(warnings)]

mod reexport {
    pub use wasmprof;
}

mod deeper {
    pub mod again {
        pub use ::wasmprof as runtime;
    }
}

#[wasmprof::instrument(name = "custom")]
fn renamed() -> u32 {
    1
}

#[wasmprof::instrument(crate = ::wasmprof)]
fn absolute() -> u32 {
    2
}

#[wasmprof::instrument(crate = self::reexport::wasmprof, name = "both")]
fn through_reexport() -> u32 {
    3
}

#[wasmprof::instrument(crate = deeper::again::runtime,)]
fn renamed_runtime() -> u32 {
    4
}

#[wasmprof::instrument()]
fn empty_parentheses() -> u32 {
    5
}

struct S;

impl S {
    #[wasmprof::instrument(name = "custom_method")]
    fn method(&self) -> u32 {
        6
    }
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
pub fn main() {
    assert_eq!(renamed(), 1);
    assert_eq!(absolute(), 2);
    assert_eq!(through_reexport(), 3);
    assert_eq!(renamed_runtime(), 4);
    assert_eq!(empty_parentheses(), 5);
    assert_eq!(S.method(), 6);
}
