//! A core module in the embedded wasmtime: a WASI program (`_start`) or a
//! module `--invoke` calls into, with the host API's functions
//! (`prof.getTime`, `prof.exit`) and, for `wasm32-wasip1-threads`, the
//! threads it spawns. Each epoch tick checks the timeout and, in a sampled
//! run, records the guest's stack (`sampler.rs`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use wasmtime::{Engine, Linker, Module, Store, Trap, Val, ValType};
use wasmtime_wasi::I32Exit;
use wasmtime_wasi::p1::{self, WasiP1Ctx};

use super::ending::{
    Ticker, UsageError, classify, keep_snapshot, mend_overflowed_stack, pull_snapshot, stack_start,
};
use super::sampler::{Pace, Samples, SharedSamples};
use super::threads::{STOP_WAIT, ThreadEnd, Threads};
use super::wasi_context::{Outputs, wasi_context};
use crate::hosts::host::{HostConfig, HostResult, LoadAs, RunStatus};

/// What a thread the program spawns is made from.
struct Spawner {
    threads: Arc<Threads>,
    config: HostConfig,
    outputs: Option<Outputs>,
    /// The run's sampler pace, which every thread's samples tell.
    pace: Option<Pace>,
}

/// What the host functions reach.
struct State {
    wasi: WasiP1Ctx,
    /// A threaded module's threads (`wasm32-wasip1-threads`).
    spawner: Option<Arc<Spawner>>,
    started: Instant,
    exit_code: Option<i32>,
    /// This thread's stacks, one at each epoch tick, with `--sample`.
    samples: Option<SharedSamples>,
    /// Where the main instance's shadow stack began (`ending.rs`).
    stack_start: Option<u32>,
    /// When `--timeout` ends the run.
    deadline: Instant,
}

/// Runs a core module (a WASI program, or a module `--invoke` calls into)
/// and fills in `result`: its end, its threads, its snapshot and samples.
pub(super) fn run(
    engine: &Engine,
    config: &HostConfig,
    outputs: Option<&Outputs>,
    result: &mut HostResult,
) -> Result<()> {
    let pace = Pace::of(config);
    let mut store = new_store(
        engine,
        config,
        wasi_context(config, outputs)?.build_p1(),
        pace.clone(),
    );
    let module = Module::from_file(engine, &config.wasm)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("wasmtime could not compile {}", config.wasm.display()))?;
    let threads = Threads::for_module(engine, &module)?;
    if let Some(threads) = &threads {
        store.data_mut().spawner = Some(Arc::new(Spawner {
            threads: threads.clone(),
            config: config.clone(),
            outputs: outputs.cloned(),
            pace: pace.clone(),
        }));
    }
    let linker = host_api(&store, threads.as_deref())?;

    let wall = Instant::now();
    store.data_mut().deadline = wall + Duration::from_millis(config.timeout_ms);
    // Nor is it part of the first sample's.
    if config.sample_interval_micros.is_some() {
        store.data_mut().samples = Some(Samples::new_shared());
    }
    let ticker = Ticker::start(engine, config, pace.as_ref());
    let instance = match linker.instantiate(&mut store, &module) {
        Ok(instance) => instance,
        Err(e) => {
            ticker.stop();
            result.status = RunStatus::Usage;
            result.message = Some(format!("wasmtime could not instantiate the module: {e:#}"));
            return Ok(());
        }
    };
    store.data_mut().stack_start = stack_start(&mut store, &instance);
    let program_started = Instant::now();
    let outcome = enter(&mut store, &instance, config);
    // The program's own time ends with its main thread: a pool's workers
    // wait for work until the process ends, and are no part of it.
    result.program_nanos = program_started.elapsed().as_nanos() as u64;
    let ended_by_itself = threads.as_ref().is_some_and(|t| t.first_end().is_none())
        && match &outcome {
            Ok(_) => true,
            Err(error) => error.downcast_ref::<I32Exit>().is_some(),
        };
    // With threads, a program that ended by itself has its profile read at
    // once, while the threads still running (a pool's workers, idle or
    // not) are there to answer; after a trap or a timeout, once they have
    // stopped.
    let early = ended_by_itself.then(|| take_snapshot(&mut store, &instance, None));
    if let Some(threads) = &threads {
        let wait = if ended_by_itself {
            Duration::ZERO
        } else {
            STOP_WAIT
        };
        result.threads_left_running = threads.stop(wait);
    }
    ticker.stop();
    result.sampler_slowed_to_micros = Pace::slowed_to_micros(pace.as_ref());
    let thread_end = threads.as_ref().and_then(|t| t.first_end());
    match (outcome, thread_end) {
        // Another thread's trap or `proc_exit` ended the program.
        (_, Some(ThreadEnd::Exit(code))) => {
            result.status = RunStatus::of_exit_code(code);
            result.exit_code = code;
        }
        (_, Some(ThreadEnd::Trap { thread, message })) => {
            result.status = RunStatus::Trap;
            result.exit_code = 101;
            result.message = Some(format!(
                "thread {thread}: {message} (a WebAssembly trap: a Rust panic, an \
                     out-of-bounds access or an abort)"
            ));
        }
        (Ok(value), None) => result.return_value = value,
        (Err(error), None) => classify(&error, config.timeout_ms, result)?,
    }
    if let Some(code) = store.data().exit_code
        && result.status == RunStatus::Ok
    {
        result.status = RunStatus::of_exit_code(code);
        result.exit_code = code;
    }
    // The run ends here: what follows (the samples resolved to functions
    // through the line tables, the profile written) is the tool's time,
    // and the threads' busy shares are of the run's.
    result.wall_nanos = wall.elapsed().as_nanos() as u64;
    save_what_it_left(&mut store, &instance, config, early, result)
}

/// The store of one run. Each epoch tick checks the timeout and, when the
/// run is sampled, records the stack.
fn new_store(
    engine: &Engine,
    config: &HostConfig,
    wasi: WasiP1Ctx,
    pace: Option<Pace>,
) -> Store<State> {
    let mut store = Store::new(
        engine,
        State {
            wasi,
            spawner: None,
            started: Instant::now(),
            exit_code: None,
            stack_start: None,
            samples: config.sample_interval_micros.map(|_| Samples::new_shared()),
            // Set again when the program starts: compiling it is not
            // part of its time.
            deadline: Instant::now() + Duration::from_millis(config.timeout_ms),
        },
    );
    store.set_epoch_deadline(1);
    if config.sample_interval_micros.is_some() {
        store.epoch_deadline_callback(move |context| {
            if Instant::now() >= context.data().deadline || context.data().ending() {
                return Ok(wasmtime::UpdateDeadline::Interrupt);
            }
            if let Some(samples) = &context.data().samples {
                let trace = wasmtime::WasmBacktrace::capture(&context);
                if let Ok(mut samples) = samples.lock() {
                    samples.record(&trace);
                }
                if let Some(pace) = &pace {
                    pace.sampled();
                }
            }
            Ok(wasmtime::UpdateDeadline::Continue(1))
        });
    }
    store
}

impl State {
    /// The run is over for every thread.
    fn ending(&self) -> bool {
        self.spawner
            .as_ref()
            .is_some_and(|s| s.threads.ending.load(Ordering::Relaxed))
    }
}

/// WASI and the host API (module "prof": `getTime`, `exit`); for a
/// threaded module, its shared memory and `wasi.thread-spawn`.
fn host_api(store: &Store<State>, threads: Option<&Threads>) -> Result<Linker<State>> {
    let mut linker: Linker<State> = Linker::new(store.engine());
    p1::add_to_linker_sync(&mut linker, |state| &mut state.wasi)?;
    if let Some(threads) = threads {
        linker.define(store, "env", "memory", threads.memory.clone())?;
        linker.func_wrap(
            "wasi",
            "thread-spawn",
            |caller: wasmtime::Caller<'_, State>, start_arg: i32| -> i32 {
                match &caller.data().spawner {
                    Some(spawner) => spawn(spawner, caller.data(), start_arg),
                    None => -1,
                }
            },
        )?;
    }
    linker.func_wrap("prof", "getTime", |caller: wasmtime::Caller<'_, State>| {
        caller.data().started.elapsed().as_secs_f64() * 1e3
    })?;
    linker.func_wrap(
        "prof",
        "exit",
        |mut caller: wasmtime::Caller<'_, State>, code: i32| {
            caller.data_mut().exit_code.get_or_insert(code);
        },
    )?;
    Ok(linker)
}

/// `wasi.thread-spawn`: a new thread running `wasi_thread_start(tid,
/// start_arg)` in a store of its own; its id, or -1 when none could start.
fn spawn(spawner: &Arc<Spawner>, parent: &State, start_arg: i32) -> i32 {
    let Some(id) = spawner.threads.next_id() else {
        return -1;
    };
    let (started, deadline) = (parent.started, parent.deadline);
    let own = spawner.clone();
    let thread = std::thread::Builder::new()
        .name(format!("wasm thread {id}"))
        .spawn(move || {
            if let Err(end) = run_thread(&own, id, start_arg, started, deadline) {
                // One thread's trap or exit ends them all.
                own.threads.record(end);
                own.threads.stop_all();
            }
        });
    match thread {
        Ok(handle) => {
            spawner.threads.keep(handle);
            id
        }
        Err(_) => -1,
    }
}

/// One spawned thread, from instantiation to the return of its start
/// function; how it ended the program if it did not return.
fn run_thread(
    spawner: &Arc<Spawner>,
    id: i32,
    start_arg: i32,
    started: Instant,
    deadline: Instant,
) -> std::result::Result<(), ThreadEnd> {
    let trap = |message: String| ThreadEnd::Trap {
        thread: id,
        message,
    };
    let threads = &spawner.threads;
    let wasi = wasi_context(&spawner.config, spawner.outputs.as_ref())
        .map_err(|e| trap(format!("{e:#}")))?
        .build_p1();
    let mut store = new_store(&threads.engine, &spawner.config, wasi, spawner.pace.clone());
    {
        let state = store.data_mut();
        state.spawner = Some(spawner.clone());
        state.started = started;
        state.deadline = deadline;
        // Each thread is sampled as the main one is, into samples of its
        // own: a worker's long call of a function too short to time is
        // that function's, as on the main thread.
        if let Some(samples) = &state.samples {
            threads.keep_samples(id, samples.clone());
        }
    }
    let linker = host_api(&store, Some(threads)).map_err(|e| trap(format!("{e:#}")))?;
    let instance = match linker.instantiate(&mut store, &threads.module) {
        Ok(instance) => instance,
        // The run ended (or timed out) while the thread was being made:
        // its start code met the epoch's tick, as a running thread does at
        // its next check. Stopped, not a trap of the program's.
        Err(error) if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) => return Ok(()),
        Err(error) => {
            return Err(trap(format!(
                "could not instantiate the module for a new thread: {error:#}"
            )));
        }
    };
    let start = instance
        .get_typed_func::<(i32, i32), ()>(&mut store, "wasi_thread_start")
        .map_err(|_| trap("the module exports no `wasi_thread_start`".to_owned()))?;
    match start.call(&mut store, (id, start_arg)) {
        Ok(()) => Ok(()),
        Err(error) => {
            if let Some(exit) = error.downcast_ref::<I32Exit>() {
                Err(ThreadEnd::Exit(exit.0))
            } else if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
                // Stopped: the run is over, or timed out.
                Ok(())
            } else {
                let message = error
                    .downcast_ref::<Trap>()
                    .map(ToString::to_string)
                    .unwrap_or_else(|| format!("{error:#}"));
                Err(trap(message))
            }
        }
    }
}

/// Calls the entry point: `--invoke`'s function, or a WASI program's
/// `_start`.
fn enter(
    store: &mut Store<State>,
    instance: &wasmtime::Instance,
    config: &HostConfig,
) -> Result<Option<serde_json::Value>> {
    match (&config.invoke, config.kind) {
        (Some(name), _) => invoke(store, instance, name, &config.args),
        (None, LoadAs::Wasi) => instance
            .get_typed_func::<(), ()>(&mut *store, "_start")
            .and_then(|start| start.call(&mut *store, ()))
            .map(|()| None)
            .map_err(anyhow::Error::from),
        (None, kind) => Err(anyhow::Error::new(UsageError(format!(
            "a {kind} module has no entry point: name one with --invoke"
        )))),
    }
}

/// Reads the snapshot out of the module, on the main thread's store,
/// where nothing may interrupt or sample the call that reads it. `stopped`
/// (a threaded module's threads after a trap or a timeout) tells the
/// runtime first that no other thread will run again, so that it waits
/// for none of them.
fn take_snapshot(
    store: &mut Store<State>,
    instance: &wasmtime::Instance,
    stopped: Option<&Threads>,
) -> Result<Option<Vec<u8>>> {
    store.set_epoch_deadline(u64::MAX / 2);
    store.epoch_deadline_callback(|_| Ok(wasmtime::UpdateDeadline::Continue(u64::MAX / 2)));
    let shared = store
        .data()
        .spawner
        .as_ref()
        .map(|s| s.threads.memory.clone());
    let memory_len = match &shared {
        Some(memory) => memory.data_size(),
        None => instance
            .get_memory(&mut *store, "memory")
            // No memory to hold the pointer against: left alone.
            .map_or(usize::MAX, |memory| memory.data_size(&*store)),
    };
    let start = store.data().stack_start;
    mend_overflowed_stack(store, instance, start, memory_len)?;
    if stopped.is_some()
        && let Ok(say) =
            instance.get_typed_func::<(), ()>(&mut *store, "__wasmprof_threads_stopped")
    {
        say.call(&mut *store, ())?;
    }
    pull_snapshot(store, instance, shared.as_ref())
}

/// Writes the samples and the snapshot of a run that is over, trapped or
/// interrupted: the memory is still there to read. `early` is the
/// snapshot already taken when the program ended by itself.
fn save_what_it_left(
    store: &mut Store<State>,
    instance: &wasmtime::Instance,
    config: &HostConfig,
    early: Option<Result<Option<Vec<u8>>>>,
    result: &mut HostResult,
) -> Result<()> {
    let spawner = store.data().spawner.clone();
    let snapshot = match early {
        Some(snapshot) => snapshot,
        None => take_snapshot(store, instance, spawner.as_deref().map(|s| &*s.threads)),
    };
    if let Some(main) = store.data_mut().samples.take() {
        let threads = spawner
            .as_ref()
            .map(|s| s.threads.samples())
            .unwrap_or_default();
        super::sampler::save_threads(&main, &threads, config)?;
    }
    keep_snapshot(snapshot, config, result)
}

/// `--invoke NAME -- ARGS`: numbers converted to the function's parameter
/// types; the first result, if any, comes back as JSON.
fn invoke(
    store: &mut Store<State>,
    instance: &wasmtime::Instance,
    name: &str,
    args: &[String],
) -> Result<Option<serde_json::Value>> {
    let usage = |message: String| anyhow::Error::new(UsageError(message));
    let Some(func) = instance.get_func(&mut *store, name) else {
        return Err(usage(format!(
            "--invoke {name}: the module exports no function of that name"
        )));
    };
    let ty = func.ty(&*store);
    if ty.params().len() != args.len() {
        return Err(usage(format!(
            "--invoke {name}: it takes {} argument(s) but {} were given after --",
            ty.params().len(),
            args.len()
        )));
    }
    let params = ty
        .params()
        .zip(args)
        .map(|(ty, arg)| {
            let bad = || usage(format!("--invoke {name}: argument {arg:?} is not a {ty}"));
            Ok(match ty {
                ValType::I32 => Val::I32(arg.parse::<i64>().map_err(|_| bad())? as i32),
                ValType::I64 => Val::I64(arg.parse().map_err(|_| bad())?),
                ValType::F32 => Val::F32(arg.parse::<f32>().map_err(|_| bad())?.to_bits()),
                ValType::F64 => Val::F64(arg.parse::<f64>().map_err(|_| bad())?.to_bits()),
                _ => return Err(bad()),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut results = vec![Val::I32(0); ty.results().len()];
    func.call(&mut *store, &params, &mut results)?;
    Ok(results.first().map(|value| match value {
        Val::I32(n) => serde_json::json!(n),
        Val::I64(n) => serde_json::json!(n.to_string()),
        Val::F32(bits) => serde_json::json!(f32::from_bits(*bits)),
        Val::F64(bits) => serde_json::json!(f64::from_bits(*bits)),
        _ => serde_json::Value::Null,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::Wasmtime;
    use crate::hosts::host::{Host, HostConfig, LoadAs, RunStatus};

    /// A threaded program whose main thread spawns a thread and spins: the
    /// new thread's instance runs a start function that spins too, so the
    /// timeout's tick finds it still being made.
    const SPAWNS_A_THREAD_STILL_BEING_MADE: &str = r#"
        (module
          (import "env" "memory" (memory 1 1 shared))
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (func $made
            (if (i32.atomic.load (i32.const 0))
              (then (loop $spin (br $spin)))))
          (start $made)
          (func (export "_start")
            (i32.atomic.store (i32.const 0) (i32.const 1))
            (drop (call $spawn (i32.const 0)))
            (loop $spin (br $spin)))
          (func (export "wasi_thread_start") (param i32 i32)))
    "#;

    fn config(wasm: std::path::PathBuf, dir: &std::path::Path, sampled: bool) -> HostConfig {
        HostConfig {
            kind: LoadAs::Wasi,
            wasm,
            js: None,
            invoke: None,
            args: vec![],
            argv: vec!["program".into()],
            wasi: Default::default(),
            timeout_ms: 300,
            until_exit: false,
            window: None,
            sample_interval_micros: sampled.then_some(1_000),
            sample_interval_chosen: true,
            cpuprofile_out: dir.join("c"),
            snapshot_out: dir.join("s"),
            result_out: dir.join("r"),
            test: None,
            requests: None,
            harness_tests: false,
        }
    }

    #[test]
    fn a_thread_stopped_while_it_is_being_made_is_stopped_not_a_trap() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = dir.path().join("threads.wasm");
        std::fs::write(
            &wasm,
            wat::parse_str(SPAWNS_A_THREAD_STILL_BEING_MADE).unwrap(),
        )
        .unwrap();
        for sampled in [false, true] {
            let mut host = Wasmtime::new().unwrap();
            let (result, _) = host
                .run(&config(wasm.clone(), dir.path(), sampled), dir.path(), true)
                .unwrap();
            let result = result.unwrap();
            assert_eq!(
                result.status,
                RunStatus::Timeout,
                "sampled: {sampled}, {:?}",
                result.message
            );
            assert_eq!(result.message.as_deref(), Some("timed out after 300 ms"));
        }
    }
}
