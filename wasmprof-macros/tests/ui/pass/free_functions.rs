//! Free functions keep their attributes, docs, visibility and inner
//! attributes.
#![deny(warnings, missing_docs, unused_variables)]

/// Documented: `missing_docs` would fail the build if the doc were dropped.
#[wasmprof::instrument]
#[inline]
#[must_use]
pub fn add_one(a: u32) -> u32 {
    a + 1
}

/// The attribute may come after others.
#[inline(never)]
#[wasmprof::instrument]
pub(crate) fn after_other_attributes() -> &'static str {
    "after"
}

/// Inner attributes still apply to the whole function.
#[wasmprof::instrument]
pub fn with_inner_attribute() -> u32 {
    #![allow(unused_variables)]
    let unused = 1;
    2
}

/// Only one of these two survives `cfg`; a dropped `cfg` would be a
/// duplicate definition.
#[wasmprof::instrument]
#[cfg(all())]
pub fn configured() -> u32 {
    1
}

/// The other one.
#[wasmprof::instrument]
#[cfg(any())]
pub fn configured() -> u32 {
    2
}

/// A raw identifier.
#[wasmprof::instrument]
pub fn r#match(x: u32) -> bool {
    x == 3
}

/// Nothing returned, nothing taken.
#[wasmprof::instrument]
pub fn unit() {}

/// Never returns normally.
#[wasmprof::instrument]
pub fn diverges() -> ! {
    panic!("never called")
}

/// Patterns in parameters.
#[wasmprof::instrument]
pub fn patterns((a, b): (u32, u32), [c, ..]: [u32; 3], _: ()) -> u32 {
    a + b + c
}

/// Called only through a function pointer.
#[wasmprof::instrument]
fn through_pointer(x: u32) -> u32 {
    x * 2
}

/// A nested function inside an instrumented one, and an instrumented one
/// inside a plain one.
#[wasmprof::instrument]
pub fn outer() -> u32 {
    fn helper() -> u32 {
        #[wasmprof::instrument]
        fn deep() -> u32 {
            5
        }
        deep()
    }
    helper()
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
pub fn main() {
    assert_eq!(add_one(1), 2);
    assert_eq!(after_other_attributes(), "after");
    assert_eq!(with_inner_attribute(), 2);
    assert_eq!(configured(), 1);
    assert!(r#match(3));
    unit();
    if add_one(0) == 0 {
        diverges();
    }
    assert_eq!(patterns((1, 2), [3, 4, 5], ()), 6);
    let f: fn(u32) -> u32 = through_pointer;
    assert_eq!(f(4), 8);
    assert_eq!(outer(), 5);
}
