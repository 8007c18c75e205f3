//! Programs built for threads, and the hosts that cannot start them: said
//! before the build when the target says so, and after it when the module
//! does (a shared memory), never as the host's own stack trace.

use anyhow::Result;

use crate::build::options::is_threaded_target;
use crate::hosts::host::Host;
use wasmprof_profile::wasm_info::WasmInfo;

/// Refuses a threaded `--target` for a host without threads.
pub(crate) fn check_target(target: Option<&str>, host: &dyn Host) -> Result<()> {
    match target {
        Some(target) if is_threaded_target(target) && !host.threads() => Err(refusal(
            &format!("--target {target} builds a program with threads"),
            host,
        )),
        _ => Ok(()),
    }
}

/// Refuses a built module with a shared memory for a host without threads.
pub(crate) fn check_module(info: &WasmInfo, host: &dyn Host) -> Result<()> {
    if info.shared_memory && !host.threads() {
        return Err(refusal(
            "the module was built for threads (its memory is shared)",
            host,
        ));
    }
    Ok(())
}

fn refusal(what: &str, host: &dyn Host) -> anyhow::Error {
    anyhow::anyhow!(
        "{what}, and {} cannot start threads (it has no wasi-threads). Run it with \
         --host wasmtime, which starts every thread of a wasm32-wasip1-threads program \
         and profiles each; or build it without threads (--target wasm32-wasip1)",
        host.describe()
    )
}
