//! wasi-threads in the embedded wasmtime: programs built for
//! `wasm32-wasip1-threads`.
//!
//! Such a module imports its linear memory (`env.memory`, shared) and one
//! host function, `wasi.thread-spawn(start_arg) -> tid`; each new thread
//! instantiates the same module against the same memory in a store of its
//! own and calls its export `wasi_thread_start(tid, start_arg)`. wasmtime
//! dropped its own implementation (`wasmtime-wasi-threads`, with the
//! `wasi-common` WASI it needed) after version 46; this is the same
//! protocol over `wasmtime-wasi`, whose WASI context cannot be shared
//! between stores: each thread gets a context of its own with the run's
//! arguments, environment, directories and output, so a file opened on one
//! thread is not open on another (the program's own threads rarely pass
//! file descriptors around; their results come back through memory).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use wasmtime::{Engine, Module, SharedMemory};

use super::sampler::SharedSamples;

/// Thread ids the protocol allows: positive, below 2^29.
const MAX_THREAD_ID: i32 = 0x1FFF_FFFF;

/// What every thread of one run shares.
pub(super) struct Threads {
    pub(super) engine: Engine,
    pub(super) module: Module,
    pub(super) memory: SharedMemory,
    next_id: AtomicI32,
    /// The run is over: threads still running stop at their next epoch
    /// check.
    pub(super) ending: AtomicBool,
    /// How a thread that did not return ended (a trap, `proc_exit`), the
    /// first such.
    pub(super) failure: Mutex<Option<ThreadEnd>>,
    spawned: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// Each spawned thread's samples, by its id, when the run is sampled.
    samples: Mutex<Vec<(i32, SharedSamples)>>,
}

/// How a thread other than the main one ended the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ThreadEnd {
    Exit(i32),
    Trap { thread: i32, message: String },
}

impl Threads {
    /// The shared memory a threaded module imports, made to its type; `None`
    /// for a module without one.
    pub(super) fn for_module(engine: &Engine, module: &Module) -> Result<Option<Arc<Threads>>> {
        let Some(memory_type) = module.imports().find_map(|import| {
            let ty = import.ty();
            let memory = ty.memory()?;
            (memory.is_shared() && import.module() == "env" && import.name() == "memory")
                .then(|| memory.clone())
        }) else {
            return Ok(None);
        };
        let memory = SharedMemory::new(engine, memory_type)
            .map_err(anyhow::Error::from)
            .context("wasmtime could not make the module's shared memory")?;
        Ok(Some(Arc::new(Threads {
            engine: engine.clone(),
            module: module.clone(),
            memory,
            next_id: AtomicI32::new(1),
            ending: AtomicBool::new(false),
            failure: Mutex::new(None),
            spawned: Mutex::new(Vec::new()),
            samples: Mutex::new(Vec::new()),
        })))
    }

    /// A new thread's id, or `None` when they have run out.
    pub(super) fn next_id(&self) -> Option<i32> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        (id <= MAX_THREAD_ID).then_some(id)
    }

    pub(super) fn keep(&self, handle: std::thread::JoinHandle<()>) {
        self.spawned.lock().expect("not poisoned").push(handle);
    }

    /// Records the first way a thread ended the program.
    pub(super) fn record(&self, end: ThreadEnd) {
        self.failure
            .lock()
            .expect("not poisoned")
            .get_or_insert(end);
    }

    /// The first way a thread ended the program, if one did.
    pub(super) fn first_end(&self) -> Option<ThreadEnd> {
        self.failure.lock().expect("not poisoned").clone()
    }

    /// Tells every thread to stop at its next epoch check.
    pub(super) fn stop_all(&self) {
        self.ending.store(true, Ordering::SeqCst);
        self.engine.increment_epoch();
    }

    /// Keeps a spawned thread's samples, for the run's profile.
    pub(super) fn keep_samples(&self, id: i32, samples: SharedSamples) {
        self.samples
            .lock()
            .expect("not poisoned")
            .push((id, samples));
    }

    /// Every spawned thread's samples, in the order they started.
    pub(super) fn samples(&self) -> Vec<(i32, SharedSamples)> {
        self.samples.lock().expect("not poisoned").clone()
    }

    /// Stops the threads still running (a detached thread, a pool's
    /// workers, or every thread when one trapped) and gives them `wait` to
    /// reach their next epoch check; joins those that did. Nothing of the
    /// profile waits on a thread's exit: the runtime reads each thread
    /// where it stands.
    ///
    /// A thread blocked in `memory.atomic.wait` (a thread pool's idle
    /// worker, waiting for work until the process ends) cannot be stopped:
    /// it is left behind, as the process's exit would leave it. Returns how
    /// many threads had not ended.
    pub(super) fn stop(&self, wait: Duration) -> usize {
        let handles = std::mem::take(&mut *self.spawned.lock().expect("not poisoned"));
        self.stop_all();
        let until = Instant::now() + wait;
        while handles.iter().any(|h| !h.is_finished()) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut left = 0;
        for handle in handles {
            if handle.is_finished() {
                let _ = handle.join();
            } else {
                left += 1;
            }
        }
        left
    }
}

/// How long threads stopped after a trap or a timeout have to reach their
/// next epoch check, before the profile is read as they stand.
pub(super) const STOP_WAIT: Duration = Duration::from_millis(200);
