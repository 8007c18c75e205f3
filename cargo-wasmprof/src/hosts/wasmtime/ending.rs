//! How a run in wasmtime ends, and what it leaves: the thread that ticks
//! the epoch (the timeout, and the samples' clock), what an error that
//! ended the program was, and the snapshot read out of its memory.

use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::{Engine, Store, Trap};
use wasmtime_wasi::I32Exit;

use super::sampler::Pace;
use crate::hosts::host::{HostConfig, HostResult, RunStatus};

/// The runtime's export that hands the snapshot over (`wasmprof-core`'s
/// `component.rs`).
pub(super) const SNAPSHOT_INTERFACE: &str = "wasmprof:runtime/snapshot@0.1.0";

/// The thread that ticks the engine's epoch: one tick at the timeout ends
/// the run unless it ends first; with samples, a tick at the sampler's
/// pace, and the timeout is checked at each.
pub(super) struct Ticker {
    done: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Ticker {
    /// Ticks `engine`'s epoch at `pace` in a sampled run, else once at
    /// `config`'s timeout.
    pub(super) fn start(engine: &Engine, config: &HostConfig, pace: Option<&Pace>) -> Ticker {
        let (done, until) = mpsc::channel::<()>();
        let engine = engine.clone();
        let timeout = Duration::from_millis(config.timeout_ms);
        let pace = pace.cloned();
        let thread = std::thread::spawn(move || {
            let next = || pace.as_ref().map_or(timeout, Pace::next_tick);
            while let Err(mpsc::RecvTimeoutError::Timeout) = until.recv_timeout(next()) {
                engine.increment_epoch();
                if pace.is_none() {
                    break;
                }
            }
        });
        Ticker { done, thread }
    }

    pub(super) fn stop(self) {
        let _ = self.done.send(());
        let _ = self.thread.join();
    }
}

/// Writes the snapshot a run left, if it left one, to
/// `config.snapshot_out`; a snapshot that could not be read is the result's
/// to tell.
pub(super) fn keep_snapshot(
    snapshot: Result<Option<Vec<u8>>>,
    config: &HostConfig,
    result: &mut HostResult,
) -> Result<()> {
    match snapshot {
        Ok(Some(bytes)) => {
            std::fs::write(&config.snapshot_out, bytes)
                .with_context(|| format!("could not write {}", config.snapshot_out.display()))?;
            result.snapshot = true;
        }
        Ok(None) => {}
        Err(e) => result.snapshot_error = Some(format!("{e:#}")),
    }
    Ok(())
}

/// How the program failed: its own `exit`, the timeout, or a trap.
pub(super) fn classify(
    error: &anyhow::Error,
    timeout_ms: u64,
    result: &mut HostResult,
) -> Result<()> {
    if let Some(exit) = error.downcast_ref::<I32Exit>() {
        result.status = RunStatus::of_exit_code(exit.0);
        result.exit_code = exit.0;
    } else if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
        result.status = RunStatus::Timeout;
        result.exit_code = 124;
        result.message = Some(format!("timed out after {timeout_ms} ms"));
    } else if let Some(usage) = error.downcast_ref::<UsageError>() {
        result.status = RunStatus::Usage;
        result.exit_code = 2;
        result.message = Some(usage.0.clone());
    } else {
        result.status = RunStatus::Trap;
        result.exit_code = 101;
        let trap = error
            .downcast_ref::<Trap>()
            .map(ToString::to_string)
            .unwrap_or_else(|| format!("{error:#}"));
        result.message = Some(format!(
            "{trap} (a WebAssembly trap: a Rust panic, an out-of-bounds access or an abort)"
        ));
    }
    Ok(())
}

/// A call the flags asked for that cannot be made.
#[derive(Debug)]
pub(super) struct UsageError(pub(super) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Where the instance's shadow stack begins: its `__stack_pointer` before
/// anything ran, if the build exports it (every `cargo wasmprof` build
/// does).
pub(super) fn stack_start<T: 'static>(
    store: &mut Store<T>,
    instance: &wasmtime::Instance,
) -> Option<u32> {
    let pointer = instance.get_global(&mut *store, "__stack_pointer")?;
    pointer.get(&mut *store).i32().map(|p| p as u32)
}

/// After the shadow stack overflowed, its pointer is below address 0,
/// which reads as an address past the memory's end, and the snapshot's
/// own frame would trap there too: it is set back to `start`. The program
/// is over by then. A pointer inside the memory is a live stack's, and is
/// left alone.
pub(super) fn mend_overflowed_stack<T: 'static>(
    store: &mut Store<T>,
    instance: &wasmtime::Instance,
    start: Option<u32>,
    memory_len: usize,
) -> Result<()> {
    let (Some(start), Some(pointer)) = (start, instance.get_global(&mut *store, "__stack_pointer"))
    else {
        return Ok(());
    };
    let overflowed = pointer
        .get(&mut *store)
        .i32()
        .is_some_and(|p| p as u32 as usize > memory_len);
    if overflowed {
        pointer
            .set(&mut *store, wasmtime::Val::I32(start as i32))
            .map_err(anyhow::Error::from)
            .context("could not set the overflowed stack's pointer back")?;
    }
    Ok(())
}

/// The snapshot's bytes out of linear memory (`WPRF`, then its length).
pub(super) fn pull_snapshot<T: 'static>(
    store: &mut Store<T>,
    instance: &wasmtime::Instance,
    shared: Option<&wasmtime::SharedMemory>,
) -> Result<Option<Vec<u8>>> {
    let Ok(snapshot) = instance.get_typed_func::<(), i32>(&mut *store, "__wasmprof_snapshot")
    else {
        return Ok(None);
    };
    let pointer = snapshot.call(&mut *store, ())? as u32 as usize;
    // A threaded module's memory is the shared one it imports; every
    // thread has stopped, so nothing writes it while it is read.
    let data: &[u8] = match shared {
        // SAFETY: `UnsafeCell<u8>` has the layout of `u8`, and no thread of
        // the program runs any more.
        Some(memory) => unsafe {
            std::slice::from_raw_parts(memory.data().as_ptr().cast::<u8>(), memory.data().len())
        },
        None => instance
            .get_memory(&mut *store, "memory")
            .context("the module exports no memory")?
            .data(&*store),
    };
    snapshot_at(data, pointer).map(Some)
}

/// The snapshot that starts at `pointer` in linear memory `data`: `WPRF`,
/// then its whole length.
pub(super) fn snapshot_at(data: &[u8], pointer: usize) -> Result<Vec<u8>> {
    let length = data
        .get(pointer + 4..pointer + 8)
        .map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")) as usize)
        .context("the snapshot pointer is outside memory")?;
    let bytes = data
        .get(pointer..pointer + length)
        .context("the snapshot runs past the end of memory")?;
    Ok(bytes.to_vec())
}
