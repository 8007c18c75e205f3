//! `wasmprof::exit`: how a program that keeps running after its entry
//! point returns (timers, animation frames, promises) tells the host it is
//! done, for `cargo wasmprof run --until-exit`.

/// Tells the wasmprof host that the program is done and should end with
/// `code`. The host ends the run once the current call has returned to the
/// event loop, so the calls on the stack are measured to their end; then it
/// pulls the profile. Without `--until-exit` it ends the run the same way.
///
/// Does nothing outside a wasmprof host: in an ordinary build (no import is
/// added and the call compiles to nothing) and natively. Nor in a WASI 0.2
/// component, whose run ends when its command or request returns.
#[inline]
pub fn exit(code: i32) {
    imp::exit(code);
}

#[cfg(all(target_family = "wasm", wasmprof_enabled, not(wasmprof_component)))]
mod imp {
    #[link(wasm_import_module = "prof")]
    unsafe extern "C" {
        /// The host API's end of run: `prof.exit(code)`.
        #[link_name = "exit"]
        fn host_exit(code: i32);
    }

    pub(super) fn exit(code: i32) {
        // SAFETY: a host function that takes a number and returns nothing.
        unsafe { host_exit(code) }
    }
}

#[cfg(not(all(target_family = "wasm", wasmprof_enabled, not(wasmprof_component))))]
mod imp {
    #[inline(always)]
    pub(super) fn exit(_code: i32) {}
}
