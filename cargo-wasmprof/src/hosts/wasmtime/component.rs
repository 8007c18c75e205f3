//! WASI 0.2 components (`wasm32-wasip2`) in the embedded wasmtime: a
//! command run through `wasi:cli/run`, with the WASI 0.2 interfaces
//! wasmtime-wasi implements, or an HTTP handler served its requests
//! (`http.rs`).
//!
//! The profile leaves the component through the runtime's export
//! `wasmprof:runtime/snapshot@0.1.0` (`take`), called once the command has
//! returned. A trap, an exit or the timeout poisons the component instance,
//! which then cannot be entered again; the core module inside it can, and
//! the trap's core dump names it, so the snapshot is pulled from there as
//! from any core module (`__wasmprof_snapshot`).
//!
//! Sampled runs are sampled as core modules are (`sampler.rs`):
//! every store of the run, one per request for a handler, records into the
//! same samples.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use wasmtime::component::{Component, Instance, Linker, ResourceTable};
use wasmtime::{Engine, Store, WasmCoreDump};
use wasmtime_wasi::p2::bindings::sync::Command;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::ending::{SNAPSHOT_INTERFACE, Ticker, classify, keep_snapshot, pull_snapshot};
use super::http::{self, HANDLER_INTERFACE};
use super::request_snapshots;
use super::sampler::{Pace, new_shared, resume, save_shared, watch};
use crate::hosts::host::{HostConfig, HostResult, HttpRequests, RunStatus};

/// What a command exports, at any WASI 0.2 version.
const RUN_INTERFACE: &str = "wasi:cli/run@0.2";
/// The WASI 0.2 packages wasmtime-wasi gives a command.
const COMMAND_PACKAGES: [&str; 6] = [
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
];
/// And a handler, with wasmtime-wasi-http.
const HTTP_PACKAGE: &str = "wasi:http/";

/// What the WASI functions reach.
struct ComponentState {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for ComponentState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// What a component is, by what it exports.
enum Shape {
    Command,
    Handler,
}

/// Runs the component as a command, or serves it requests as an HTTP
/// handler, and leaves its snapshot in `config.snapshot_out`; how it ended
/// goes into `result`. `new_wasi` makes the WASI context of an instance.
pub(super) fn run(
    engine: &Engine,
    config: &HostConfig,
    new_wasi: &dyn Fn() -> Result<WasiCtx>,
    result: &mut HostResult,
) -> Result<()> {
    let component = Component::from_file(engine, &config.wasm)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("wasmtime could not compile {}", config.wasm.display()))?;
    let shape = match (&config.invoke, shape(engine, &component, config)) {
        (Some(name), _) => Err(format!(
            "--invoke {name}: a component is entered through its `wasi:cli/run` or \
             `wasi:http/incoming-handler` export; --invoke calls a core module's exports"
        )),
        (None, shape) => shape,
    };
    let shape = match shape {
        Ok(shape) => shape,
        Err(message) => {
            result.status = RunStatus::Usage;
            result.exit_code = 2;
            result.message = Some(message);
            return Ok(());
        }
    };
    if let Shape::Handler = shape {
        let requests = config.requests.clone().unwrap_or(HttpRequests {
            count: 1,
            path: "/".to_owned(),
        });
        return serve(config, &requests, new_wasi, result);
    }
    let wasi = new_wasi()?;
    let mut linker: Linker<ComponentState> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    let wall = Instant::now();
    let mut store = Store::new(
        engine,
        ComponentState {
            wasi,
            table: ResourceTable::new(),
        },
    );
    let samples = new_shared(config);
    let pace = Pace::of(config);
    watch(
        &mut store,
        wall + Duration::from_millis(config.timeout_ms),
        samples.as_ref(),
        pace.as_ref(),
    );
    let ticker = Ticker::start(engine, config, pace.as_ref());
    let instance = match linker.instantiate(&mut store, &component) {
        Ok(instance) => instance,
        Err(e) => {
            ticker.stop();
            result.status = RunStatus::Usage;
            result.exit_code = 2;
            result.message = Some(format!(
                "wasmtime could not instantiate the component: {e:#}"
            ));
            return Ok(());
        }
    };
    let program_started = Instant::now();
    // Compiling and linking are no sample's time.
    resume(samples.as_ref());
    let outcome = Command::new(&mut store, &instance)
        .and_then(|command| command.wasi_cli_run().call_run(&mut store))
        .map_err(anyhow::Error::from);
    result.program_nanos = program_started.elapsed().as_nanos() as u64;
    ticker.stop();
    result.sampler_slowed_to_micros = Pace::slowed_to_micros(pace.as_ref());
    // Nothing may interrupt the calls that read the snapshot.
    store.set_epoch_deadline(u64::MAX / 2);
    let snapshot = match outcome {
        Ok(returned) => {
            if returned.is_err() {
                // `main` returned an error: std has printed it.
                result.status = RunStatus::of_exit_code(1);
                result.exit_code = 1;
            }
            take(&mut store, &instance)
        }
        Err(error) => {
            classify(&error, config.timeout_ms, result)?;
            match error.downcast_ref::<WasmCoreDump>() {
                Some(dump) => from_core_dump(&mut store, dump),
                None => Ok(None),
            }
        }
    };
    // The run ends here, not after the samples are resolved and saved.
    result.wall_nanos = wall.elapsed().as_nanos() as u64;
    save_shared(samples.as_ref(), config)?;
    keep_snapshot(snapshot, config, result)
}

/// What the component is, or why it cannot run here: it is neither a
/// command nor a handler, or it imports what wasmtime-wasi does not give.
fn shape(
    engine: &Engine,
    component: &Component,
    config: &HostConfig,
) -> std::result::Result<Shape, String> {
    let ty = component.component_type();
    let exports: Vec<&str> = ty.exports(engine).map(|(name, _)| name).collect();
    let exports_one = |prefix: &str| exports.iter().any(|name| name.starts_with(prefix));
    let (shape, given) = if exports_one(HANDLER_INTERFACE) {
        (Shape::Handler, "a handler")
    } else if exports_one(RUN_INTERFACE) {
        if config.requests.is_some() {
            return Err(
                "--requests and --path serve an HTTP handler, and the component is a command \
                 (it exports `wasi:cli/run`): leave them out"
                    .to_owned(),
            );
        }
        (Shape::Command, "a command")
    } else {
        let own: Vec<&str> = exports
            .iter()
            .copied()
            .filter(|name| !name.starts_with(SNAPSHOT_INTERFACE))
            .collect();
        return Err(format!(
            "the component exports neither `wasi:cli/run` nor `wasi:http/incoming-handler` (it \
             exports {}): wasmprof runs WASI 0.2 commands, built from a `main` for \
             wasm32-wasip2, and serves HTTP handlers requests (--requests N --path PATH)",
            if own.is_empty() {
                "nothing".to_owned()
            } else {
                own.join(", ")
            }
        ));
    };
    let mut packages = COMMAND_PACKAGES.to_vec();
    if let Shape::Handler = shape {
        packages.push(HTTP_PACKAGE);
    }
    let missing: Vec<&str> = ty
        .imports(engine)
        .map(|(name, _)| name)
        .filter(|name| !packages.iter().any(|p| name.starts_with(p)))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the component imports {}, which the embedded wasmtime does not provide: it gives \
             {given} the WASI 0.2 interfaces of {}",
            missing.join(", "),
            packages
                .iter()
                .map(|p| p.trim_end_matches('/'))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(shape)
}

/// Serves the handler its requests, one instance each, and leaves the
/// requests' snapshots merged (`request_snapshots.rs`).
fn serve(
    config: &HostConfig,
    requests: &HttpRequests,
    new_wasi: &dyn Fn() -> Result<WasiCtx>,
    result: &mut HostResult,
) -> Result<()> {
    let server = match http::Server::new(&config.wasm) {
        Ok(server) => server,
        Err(e) => {
            result.status = RunStatus::Usage;
            result.exit_code = 2;
            result.message = Some(format!("{e:#}"));
            return Ok(());
        }
    };
    let wall = Instant::now();
    let deadline = wall + Duration::from_millis(config.timeout_ms);
    let samples = new_shared(config);
    let ticker = Ticker::start(server.engine(), config, Pace::of(config).as_ref());
    let mut served = wasmprof_profile::profile::Requests {
        path: requests.path.clone(),
        latency_nanos: Vec::new(),
        statuses: Vec::new(),
        start_nanos: Vec::new(),
    };
    let mut snapshots = Vec::new();
    let mut outcome = Ok(());
    for number in 1..=requests.count {
        let request = match server.serve(new_wasi()?, &requests.path, deadline, samples.as_ref()) {
            Ok(request) => request,
            Err(e) => {
                outcome = Err(e);
                break;
            }
        };
        served.latency_nanos.push(request.latency.as_nanos() as u64);
        let since_start = request.started.saturating_duration_since(wall);
        served.start_nanos.push(since_start.as_nanos() as u64);
        served.statuses.push(request.status.unwrap_or(0));
        if let Some(bytes) = request.snapshot {
            match wasmprof_wire::Snapshot::decode(&bytes) {
                Ok(snapshot) => snapshots.push((format!("request {number}"), snapshot)),
                Err(e) => result.snapshot_error = Some(format!("request {number}: {e}")),
            }
        }
        if let Some((status, message)) = request.failure {
            result.status = status;
            result.exit_code = match status {
                RunStatus::Timeout => 124,
                RunStatus::Usage => 2,
                RunStatus::Trap => 101,
                _ => 1,
            };
            result.message = Some(format!("request {number} to {}: {message}", requests.path));
            break;
        }
    }
    ticker.stop();
    result.program_nanos = wall.elapsed().as_nanos() as u64;
    result.wall_nanos = result.program_nanos;
    if let Err(e) = outcome {
        result.status = RunStatus::Error;
        result.exit_code = 1;
        result.message = Some(format!("{e:#}"));
    }
    result.requests = Some(served);
    save_shared(samples.as_ref(), config)?;
    let merged = request_snapshots::merge(snapshots).map(|m| m.map(|m| m.encode()));
    keep_snapshot(merged, config, result)
}

/// The snapshot through the runtime's export, from an instance that
/// returned normally. `None` when the component has no profiler in it.
fn take(store: &mut Store<ComponentState>, instance: &Instance) -> Result<Option<Vec<u8>>> {
    let Some(interface) = instance.get_export_index(&mut *store, None, SNAPSHOT_INTERFACE) else {
        return Ok(None);
    };
    let function = instance
        .get_export_index(&mut *store, Some(&interface), "take")
        .context("the component's wasmprof export has no `take`")?;
    let take = instance
        .get_typed_func::<(), (Vec<u8>,)>(&mut *store, &function)
        .map_err(anyhow::Error::from)
        .context("the component's `take` is not the runtime's")?;
    let (bytes,) = take.call(&mut *store, ())?;
    Ok(Some(bytes))
}

/// The snapshot from the core instance inside a component that trapped,
/// exited or was interrupted.
fn from_core_dump(
    store: &mut Store<ComponentState>,
    dump: &WasmCoreDump,
) -> Result<Option<Vec<u8>>> {
    for instance in dump.instances() {
        if instance
            .get_export(&mut *store, "__wasmprof_snapshot")
            .is_some()
        {
            return pull_snapshot(store, instance, None);
        }
    }
    Ok(None)
}
