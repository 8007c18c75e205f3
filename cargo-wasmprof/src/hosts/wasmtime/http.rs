//! HTTP handler components (`wasi:http/incoming-handler`) served by the
//! embedded wasmtime, as `wasmtime serve` serves them: wasmtime-wasi-http
//! on tokio, a new instance for each request, no socket (the requests are
//! made here and handed to the handler directly).
//!
//! Each request's instance hands over its own snapshot once its response
//! is complete (`take`, or from the core module after a trap); the
//! request's latency is the time from the call of `handle` to the last
//! byte of its response body.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use wasmtime::component::{Component, Instance, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, WasmCoreDump};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::bindings::{Proxy, ProxyPre};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::ending::{SNAPSHOT_INTERFACE, classify, snapshot_at};
use super::sampler::SharedSamples;
use crate::hosts::host::{HostResult, RunStatus};

/// What the export `incoming-handler` is named, at any WASI 0.2 version.
pub(super) const HANDLER_INTERFACE: &str = "wasi:http/incoming-handler@0.2";

/// What the WASI and HTTP functions reach, for one request.
struct RequestState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
}

impl WasiView for RequestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for RequestState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: Default::default(),
        }
    }
}

/// One request served.
pub(super) struct Served {
    /// The response's status, if the handler set one.
    pub status: Option<u16>,
    /// When the handler was called.
    pub started: Instant,
    pub latency: Duration,
    /// The request's snapshot, if its instance left one.
    pub snapshot: Option<Vec<u8>>,
    /// How the handler failed, if it did: the status and the message.
    pub failure: Option<(RunStatus, String)>,
}

/// The handler, compiled and linked once, ready to be instantiated for
/// each request.
pub(super) struct Server {
    engine: Engine,
    pre: ProxyPre<RequestState>,
    runtime: tokio::runtime::Runtime,
}

/// The engine for handlers: wasmtime-wasi-http is asynchronous.
fn engine() -> Result<Engine> {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.coredump_on_trap(true);
    Engine::new(&config)
        .map_err(anyhow::Error::from)
        .context("could not start wasmtime")
}

impl Server {
    /// Compiles and links the handler; an error names what it imports that
    /// is not there.
    pub(super) fn new(wasm: &std::path::Path) -> Result<Server> {
        let engine = engine()?;
        let component = Component::from_file(&engine, wasm)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("wasmtime could not compile {}", wasm.display()))?;
        let mut linker: Linker<RequestState> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        let pre = linker
            .instantiate_pre(&component)
            .map_err(anyhow::Error::from)
            .context("wasmtime cannot link the handler")?;
        let pre = ProxyPre::new(pre)
            .map_err(anyhow::Error::from)
            .context("the component is not a wasi:http/proxy handler")?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .context("could not start the HTTP host's event loop")?;
        Ok(Server {
            engine,
            pre,
            runtime,
        })
    }

    pub(super) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Serves one `GET path` in an instance of its own.
    pub(super) fn serve(
        &self,
        wasi: WasiCtx,
        path: &str,
        deadline: Instant,
        samples: Option<&SharedSamples>,
    ) -> Result<Served> {
        self.runtime
            .block_on(serve_one(&self.pre, wasi, path, deadline, samples))
    }
}

async fn serve_one(
    pre: &ProxyPre<RequestState>,
    wasi: WasiCtx,
    path: &str,
    deadline: Instant,
    samples: Option<&SharedSamples>,
) -> Result<Served> {
    let mut store = Store::new(
        pre.engine(),
        RequestState {
            wasi,
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
        },
    );
    // The time between two requests is no sample's.
    super::sampler::resume(samples);
    // One request runs at a time, on one thread: the sampler's pace need
    // not count it (`sampler::Pace`).
    super::sampler::watch(&mut store, deadline, samples, None);
    let request = hyper::Request::get(format!("http://localhost{path}"))
        .body(Empty::<Bytes>::new())
        .with_context(|| format!("--path {path:?} is not a request path"))?;
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let request = store
        .data_mut()
        .http()
        .new_incoming_request(Scheme::Http, request)
        .map_err(anyhow::Error::from)?;
    let response_out = store
        .data_mut()
        .http()
        .new_response_outparam(sender)
        .map_err(anyhow::Error::from)?;
    let instance = pre
        .instance_pre()
        .instantiate_async(&mut store)
        .await
        .map_err(anyhow::Error::from)
        .context("wasmtime could not instantiate the handler")?;
    let proxy = Proxy::new(&mut store, &instance).map_err(anyhow::Error::from)?;
    let started = Instant::now();
    // The handler runs beside the reading of its response, which it may
    // stream after setting it. Its snapshot is taken as soon as it is done,
    // and then its store dropped: a handler that trapped before it set a
    // response has its response channel closed only then.
    let handler = tokio::task::spawn(async move {
        let handled = proxy
            .wasi_http_incoming_handler()
            .call_handle(&mut store, request, response_out)
            .await
            .map_err(anyhow::Error::from);
        let finished = Instant::now();
        store.set_epoch_deadline(u64::MAX / 2);
        let snapshot = match &handled {
            Ok(()) => take(&mut store, &instance).await,
            Err(error) => match error.downcast_ref::<WasmCoreDump>() {
                Some(dump) => from_core_dump(&mut store, dump).await,
                None => Ok(None),
            },
        };
        (handled, snapshot, finished)
    });
    let mut status = None;
    let mut failure = None;
    match receiver.await {
        Ok(Ok(response)) => {
            status = Some(response.status().as_u16());
            if let Err(e) = response.into_body().collect().await {
                failure = Some((RunStatus::Error, format!("the response body failed: {e:?}")));
            }
        }
        Ok(Err(code)) => {
            failure = Some((RunStatus::Error, format!("the handler answered {code:?}")));
        }
        // The handler ended without setting a response: its result says why.
        Err(_) => {}
    }
    let body_read = Instant::now();
    let (handled, snapshot, finished) = handler.await.context("the handler's task failed")?;
    // To the last byte of the response or the handler's return, whichever
    // is later; the snapshot's own time is not the request's.
    let latency = body_read.max(finished) - started;
    let snapshot = snapshot?;
    match &handled {
        Ok(()) => {}
        Err(error) => {
            let mut result = HostResult::started(String::new());
            classify(error, 0, &mut result)?;
            if result.status == RunStatus::Timeout {
                result.message = Some("timed out".to_owned());
            }
            failure = Some((
                result.status,
                result.message.unwrap_or_else(|| format!("{error:#}")),
            ));
        }
    }
    if failure.is_none() && status.is_none() {
        failure = Some((
            RunStatus::Error,
            "the handler returned without setting a response".to_owned(),
        ));
    }
    Ok(Served {
        status,
        started,
        latency,
        snapshot,
        failure,
    })
}

/// The snapshot through the runtime's export (see `component.rs`).
async fn take(store: &mut Store<RequestState>, instance: &Instance) -> Result<Option<Vec<u8>>> {
    let Some(interface) = instance.get_export_index(&mut *store, None, SNAPSHOT_INTERFACE) else {
        return Ok(None);
    };
    let Some(function) = instance.get_export_index(&mut *store, Some(&interface), "take") else {
        bail!("the component's wasmprof export has no `take`");
    };
    let take = instance
        .get_typed_func::<(), (Vec<u8>,)>(&mut *store, &function)
        .map_err(anyhow::Error::from)
        .context("the component's `take` is not the runtime's")?;
    let (bytes,) = take
        .call_async(&mut *store, ())
        .await
        .map_err(anyhow::Error::from)?;
    Ok(Some(bytes))
}

/// The snapshot from the core module of an instance that trapped.
async fn from_core_dump(
    store: &mut Store<RequestState>,
    dump: &WasmCoreDump,
) -> Result<Option<Vec<u8>>> {
    for instance in dump.instances() {
        let Ok(snapshot) = instance.get_typed_func::<(), i32>(&mut *store, "__wasmprof_snapshot")
        else {
            continue;
        };
        let pointer = snapshot
            .call_async(&mut *store, ())
            .await
            .map_err(anyhow::Error::from)? as u32 as usize;
        let memory = instance
            .get_memory(&mut *store, "memory")
            .context("the handler's core module exports no memory")?;
        return snapshot_at(memory.data(&*store), pointer).map(Some);
    }
    Ok(None)
}
