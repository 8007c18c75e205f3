//! The native WASI host: wasmtime embedded as a library, so that a WASI
//! program can be profiled where there is no Node. The host API is
//! implemented in Rust (`prof.getTime` from a monotonic clock, `prof.exit`);
//! the snapshot is pulled through the module's export after the program
//! ends, traps or times out (epoch interruption), exactly as the
//! JavaScript hosts do. With `--sample`, the epoch also ticks every
//! `--sample-interval`, and each tick samples the guest's stack
//! (`sampler.rs`).
//!
//! A core module runs in `core_module.rs` (its threads in `threads.rs`), a
//! WASI 0.2 component in `component.rs` (an HTTP handler in `http.rs`);
//! how a run ends and what it leaves is `ending.rs`'s.

mod component;
mod core_module;
mod ending;
mod http;
mod line_tables;
mod request_snapshots;
mod sampler;
mod threads;
mod wasi_context;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use wasmtime::{Config, Engine};

use super::host::{Captured, Host, HostConfig, HostResult};
use crate::build::ModuleKind;
use wasi_context::{captured, new_outputs, wasi_context};

/// The wasmtime this binary embeds (kept with the pin in Cargo.toml).
const WASMTIME_VERSION: &str = "48.0.8";

/// Set, a build with the `jitdump` feature writes `jit-PID.dump` in the
/// current directory.
#[cfg(feature = "jitdump")]
const JITDUMP_VAR: &str = "WASMPROF_JITDUMP";

pub(super) struct Wasmtime {
    engine: Engine,
}

impl Wasmtime {
    pub(super) fn new() -> Result<Wasmtime> {
        let mut config = Config::new();
        // `--timeout` interrupts even a loop that never calls out, and
        // `--sample` samples at each tick.
        config.epoch_interruption(true);
        // A sample needs the whole stack, not the innermost frames alone.
        config.wasm_backtrace_max_frames(std::num::NonZeroUsize::new(1 << 16));
        // `wasm32-wasip1-threads`: a shared memory and atomics.
        config.wasm_threads(true).shared_memory(true);
        // A trapped component cannot be entered again; its core instances,
        // which a trap's core dump lists, still hold the snapshot.
        config.coredump_on_trap(true);
        // For wasmprof's developers (`--features jitdump`): the compiled
        // code, for `perf record -k mono` and `perf inject --jit`.
        #[cfg(feature = "jitdump")]
        if std::env::var_os(JITDUMP_VAR).is_some() {
            config.profiler(wasmtime::ProfilingStrategy::JitDump);
        }
        Ok(Wasmtime {
            engine: Engine::new(&config)
                .map_err(anyhow::Error::from)
                .context("could not start wasmtime")?,
        })
    }
}

impl Host for Wasmtime {
    fn describe(&self) -> String {
        format!("wasmtime {WASMTIME_VERSION}")
    }

    fn samples(&self) -> bool {
        true
    }

    fn threads(&self) -> bool {
        true
    }

    fn components(&self) -> bool {
        true
    }

    fn check_kind(&self, kind: ModuleKind) -> Result<()> {
        match kind {
            ModuleKind::Bindgen => bail!(
                "a wasm-bindgen module needs a JavaScript host: run it with --host node or \
                 --host browser"
            ),
            ModuleKind::Wasi | ModuleKind::Plain => Ok(()),
        }
    }

    fn run(
        &mut self,
        config: &HostConfig,
        _run_dir: &Path,
        capture: bool,
    ) -> Result<(Option<HostResult>, Captured)> {
        let outputs = new_outputs(capture);
        let mut result = HostResult::started(self.describe());
        result.timer_resolution_nanos = Some(clock_resolution_nanos());
        if is_component(&config.wasm)? {
            let new_wasi = || Ok(wasi_context(config, outputs.as_ref())?.build());
            component::run(&self.engine, config, &new_wasi, &mut result)?;
        } else {
            core_module::run(&self.engine, config, outputs.as_ref(), &mut result)?;
        }
        Ok((Some(result), captured(outputs)))
    }
}

/// Whether the file is a component (WASI 0.2) rather than a core module:
/// the two differ in the header's layer field.
fn is_component(wasm: &Path) -> Result<bool> {
    let mut header = [0u8; 8];
    let mut file =
        std::fs::File::open(wasm).with_context(|| format!("could not read {}", wasm.display()))?;
    std::io::Read::read_exact(&mut file, &mut header)
        .with_context(|| format!("{} is not a WebAssembly file", wasm.display()))?;
    Ok(wasmparser::Parser::is_component(&header))
}

/// The smallest step of the clock `prof.getTime` reads.
fn clock_resolution_nanos() -> f64 {
    let mut smallest = Duration::MAX;
    let mut last = Instant::now();
    for _ in 0..20_000 {
        let now = Instant::now();
        let step = now - last;
        if step > Duration::ZERO {
            smallest = smallest.min(step);
            last = now;
        }
    }
    smallest.as_nanos() as f64
}
