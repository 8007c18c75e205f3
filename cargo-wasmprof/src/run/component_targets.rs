//! WASI 0.2 components, and the hosts that cannot run them: said before
//! the build when the target says so, and after it when the file does,
//! never as the host's own stack trace.

use anyhow::Result;

use crate::build::options::is_component_target;
use crate::hosts::host::Host;
use wasmprof_profile::wasm_info::WasmInfo;

/// Refuses a component `--target` for a host without the component model.
pub(crate) fn check_target(target: Option<&str>, host: &dyn Host) -> Result<()> {
    match target {
        Some(target) if is_component_target(target) && !host.components() => Err(refusal(
            &format!("--target {target} builds a WASI 0.2 component"),
            host,
        )),
        _ => Ok(()),
    }
}

/// Refuses a built component for a host without the component model.
pub(crate) fn check_module(info: &WasmInfo, host: &dyn Host) -> Result<()> {
    if info.component && !host.components() {
        return Err(refusal("the build is a WASI 0.2 component", host));
    }
    Ok(())
}

fn refusal(what: &str, host: &dyn Host) -> anyhow::Error {
    anyhow::anyhow!(
        "{what}, and {} cannot run components. Leave --host out or give --host wasmtime: \
         the embedded wasmtime runs WASI 0.2 commands and their tests; or build a core \
         module (--target wasm32-wasip1)",
        host.describe()
    )
}
