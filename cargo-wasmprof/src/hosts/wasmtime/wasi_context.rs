//! What a program in wasmtime may see of the world: its arguments,
//! environment and preopened directories, and its output, captured (a
//! benchmark's, a test's) or the terminal's.

use anyhow::{Context, Result};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::hosts::host::{Captured, HostConfig};

/// Output a captured run may print (a benchmark's).
const CAPTURE_BYTES: usize = 64 << 20;

/// The output pipes of a captured run, shared by its threads.
pub(super) type Outputs = (MemoryOutputPipe, MemoryOutputPipe);

/// The pipes a captured run writes to; `None` for the terminal.
pub(super) fn new_outputs(capture: bool) -> Option<Outputs> {
    capture.then(|| {
        (
            MemoryOutputPipe::new(CAPTURE_BYTES),
            MemoryOutputPipe::new(CAPTURE_BYTES),
        )
    })
}

/// What a captured run printed.
pub(super) fn captured(outputs: Option<Outputs>) -> Captured {
    match outputs {
        Some((stdout, stderr)) => Captured {
            stdout: stdout.contents().to_vec(),
            stderr: stderr.contents().to_vec(),
        },
        None => Captured::default(),
    }
}

/// What the program may see: its arguments, environment and preopened
/// directories, and its output, captured or the terminal's.
pub(super) fn wasi_context(
    config: &HostConfig,
    outputs: Option<&Outputs>,
) -> Result<WasiCtxBuilder> {
    let mut wasi = WasiCtxBuilder::new();
    wasi.args(&config.argv);
    for (name, value) in &config.wasi.env {
        wasi.env(name, value);
    }
    for (guest, host) in &config.wasi.preopens {
        wasi.preopened_dir(host, guest, FsPerms::ReadWrite)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("could not preopen {}", host.display()))?;
    }
    match outputs {
        Some((stdout, stderr)) => {
            wasi.stdout(stdout.clone()).stderr(stderr.clone());
        }
        None => {
            wasi.inherit_stdio();
        }
    }
    Ok(wasi)
}
