//! `unsafe fn`, `extern "C" fn` and both.
#![deny(warnings)]

#[wasmprof::instrument]
unsafe fn read(p: *const u32) -> u32 {
    // SAFETY: the caller passes a valid pointer.
    unsafe { *p }
}

#[wasmprof::instrument]
extern "C" fn callback(x: i32) -> i32 {
    x * 2
}

#[wasmprof::instrument]
#[allow(clippy::missing_safety_doc)]
pub unsafe extern "C" fn exported(p: *mut u8, len: usize) -> usize {
    // SAFETY: the caller passes `len` writable bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(p, len) };
    bytes.fill(7);
    len
}

#[wasmprof::instrument]
#[unsafe(no_mangle)]
pub extern "C" fn wasmprof_ui_test_no_mangle() -> u32 {
    11
}

#[wasmprof::instrument]
#[track_caller]
fn caller_line() -> u32 {
    std::panic::Location::caller().line()
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
pub fn main() {
    let x = 5;
    assert_eq!(unsafe { read(&x) }, 5);
    let f: extern "C" fn(i32) -> i32 = callback;
    assert_eq!(f(3), 6);
    let mut buf = [0u8; 4];
    assert_eq!(unsafe { exported(buf.as_mut_ptr(), buf.len()) }, 4);
    assert_eq!(buf, [7; 4]);
    assert_eq!(wasmprof_ui_test_no_mangle(), 11);
    let line = line!() + 1;
    assert_eq!(caller_line(), line);
}
