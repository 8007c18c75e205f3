//! What kind of test binary a module is, which hosts can run it, and the
//! host configuration every test binary starts from.

use std::path::Path;

use anyhow::{Result, bail};

use super::session::Session;
use crate::build::options::HostKind;
use crate::hosts::host::{HostConfig, LoadAs};
use wasmprof_profile::wasm_info;

/// What kind of test binary a module is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binary {
    /// The standard harness, built for wasm32-wasip1.
    Wasi,
    /// wasm-bindgen-test's, built for wasm32-unknown-unknown.
    BindgenTest,
}

impl Binary {
    /// Tells a test binary from its imports and exports.
    pub(crate) fn recognize(info: &wasm_info::WasmInfo) -> Option<Binary> {
        if info.component
            || info
                .imports
                .iter()
                .any(|i| i.starts_with("wasi_snapshot_preview1."))
        {
            Some(Binary::Wasi)
        } else if info
            .function_exports
            .iter()
            .any(|e| e.starts_with("__wbgt_") || e.starts_with("__wbgb_"))
        {
            Some(Binary::BindgenTest)
        } else {
            None
        }
    }
}

/// How a test binary is run, but for what its kind adds: no entry point of
/// wasmprof's choosing, the engine's sampler when the build is timed, each
/// binary bounded by `--timeout`.
pub(crate) fn test_config(
    kind: LoadAs,
    wasm: &Path,
    run_dir: &Path,
    session: &Session,
) -> HostConfig {
    HostConfig {
        window: None,
        kind,
        wasm: wasm.to_path_buf(),
        js: None,
        invoke: None,
        args: Vec::new(),
        argv: Vec::new(),
        wasi: Default::default(),
        timeout_ms: crate::launch::timeout_millis(&session.host_args),
        until_exit: false,
        sample_interval_micros: session
            .sample
            .then(|| crate::launch::sample_interval_micros(&session.host_args)),
        sample_interval_chosen: session.host_args.sample_interval.is_some(),
        cpuprofile_out: run_dir.join("samples.cpuprofile"),
        snapshot_out: run_dir.join("snapshot.bin"),
        result_out: run_dir.join("result.json"),
        requests: None,
        test: None,
        harness_tests: false,
    }
}

/// Refuses a binary the chosen host cannot run, naming what can; `what`
/// names the binary (or the tests about to be built) in the message.
pub(crate) fn check_host(kind: HostKind, binary: Binary, what: &str) -> Result<()> {
    match (binary, kind) {
        (Binary::Wasi, HostKind::Browser) => bail!(
            "{what}: WASI tests (wasm32-wasip1, the standard harness) cannot run in the \
             browser: use --host node or --host wasmtime (the browser runs wasm-bindgen \
             tests, built for wasm32-unknown-unknown)"
        ),
        (Binary::BindgenTest, HostKind::Wasmtime) => bail!(
            "{what}: wasm-bindgen tests (wasm32-unknown-unknown) need a JavaScript host: use \
             --host node or --host browser (wasmtime runs WASI tests, built for wasm32-wasip1)"
        ),
        _ => Ok(()),
    }
}
