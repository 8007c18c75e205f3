// The generated page's runner for a program with threads on web workers
// (kind `bindgen-threads`), which page-host.js calls; the worker's side is
// thread-host.js.
//
// A program with threads runs on a worker (thread-host.js), since its pool
// blocks the thread that waits for it. Once the worker has instantiated
// the module, the page instantiates it too, on the same shared memory, as
// one more thread: host-api.js then reads the profile from the page, even
// while the worker is busy, has trapped or hangs.
export class WorkerOutcome extends Error {
  constructor(outcome) {
    super(outcome.message);
    this.outcome = outcome;
  }
}

// `started(at)` is called when the program's time begins: when the page
// lets the worker go, and again, with the time on the page's clock, once
// the worker's thread pool has started. `poolStarting(threads)` is called
// when the worker starts its pool, which may never finish starting.
export async function runOnWorker(host, config, started, poolStarting) {
  const module = await WebAssembly.compileStreaming(fetch(config.wasmUrl));
  const worker = new Worker('/__wasmprof/thread-host.js', { type: 'module' });
  let settle;
  const settled = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  worker.onerror = (event) => {
    settle.reject(new Error(`the program's worker failed: ${event.message || 'it could not start'}`));
  };
  // The workers' output, and a pool worker's trap: a trap on any thread
  // ends the run, as in wasmtime (the pool would wait for it for ever).
  const channel = new BroadcastChannel('wasmprof');
  channel.onmessage = ({ data }) => {
    switch (data && data.type) {
      case 'wasmprof_console':
        (console[data.level] || console.log)(data.text);
        break;
      case 'wasmprof_pool_failed':
        fail({
          status: 'trap',
          exitCode: 101,
          message: `a worker of the thread pool: ${data.message} (a WebAssembly trap: a Rust panic, an out-of-bounds access or an abort)`,
        });
        break;
      default:
    }
  };
  // The threads still running stop where they are, so that the profile
  // read next is what happened up to the failure.
  const fail = (outcome) => {
    worker.terminate();
    settle.reject(new WorkerOutcome(outcome));
  };
  worker.onmessage = async ({ data }) => {
    switch (data && data.type) {
      case 'wasmprof_exit':
        host.api.exit(data.code);
        break;
      case 'wasmprof_ready':
        try {
          const bindings = await import(config.jsUrl);
          // A thread of its own (a stack size given): the start function
          // runs only on the program's first.
          bindings.initSync({ module, memory: data.memory, thread_stack_size: 1 << 20 });
        } catch (error) {
          settle.reject(error);
          return;
        }
        started();
        worker.postMessage({ type: 'wasmprof_go' });
        break;
      case 'wasmprof_pool_starting':
        poolStarting(data.threads);
        break;
      case 'wasmprof_pool_started':
        started(data.at - performance.timeOrigin);
        break;
      case 'wasmprof_settled':
        if (data.outcome) fail(data.outcome);
        else settle.resolve(data.value);
        break;
      default:
    }
  };
  worker.postMessage({
    type: 'wasmprof_start',
    jsUrl: config.jsUrl,
    module,
    invoke: config.invoke,
    args: config.args,
    threads: config.threads || navigator.hardwareConcurrency,
  });
  return await settled;
}
