// wasmprof's runner for a program with threads, in a module worker that
// the generated page starts (page-threads.js, kind `bindgen-threads`).
//
// A thread pool on web workers (wasm-bindgen-rayon's) blocks the thread
// that waits for its work, and a page's main thread may not block; so the
// program runs here. The page joins the module's shared memory as one
// more thread, from which the host reads the profile whenever it wants it,
// while this worker is busy, after a trap, or on a timeout.
//
// The page and this worker speak in messages of type:
//   page → worker  wasmprof_start { jsUrl, module, invoke, args, threads }
//   worker → page  wasmprof_ready { memory }   the module is instantiated
//   page → worker  wasmprof_go                 the page has joined
//   worker → page  wasmprof_pool_starting { threads }  initThreadPool called
//   worker → page  wasmprof_pool_started { at }  initThreadPool resolved, at
//                                              this time since the epoch (ms)
//   worker → page  wasmprof_exit { code }      wasmprof::exit(code)
//   worker → page  wasmprof_settled { outcome | value }
// and, on the BroadcastChannel `wasmprof`, from this worker and the pool's:
//   wasmprof_console { level, text }
//   wasmprof_pool_failed { message }         a pool worker trapped
//
// The page's messages are listened for before anything is awaited: one
// that arrives while nothing listens is lost.
function waitFor(type) {
  return new Promise((resolve) => {
    self.addEventListener('message', function listener({ data }) {
      if (!data || data.type !== type) return;
      self.removeEventListener('message', listener);
      resolve(data);
    });
  });
}
const started = waitFor('wasmprof_start');
const go = waitFor('wasmprof_go');

// The host API (host-api.js) is loaded here too, for `invoke`, `classify`
// and the clock the module imports; the pool's own workers, which load the
// bindings by themselves, get the clock from prof.js.
const hostApiText = await (await fetch('/__wasmprof/host-api.js')).text();
new Function(hostApiText)();
const host = globalThis.__wasmprofHost;

// What the program prints reaches the page's console, which the host
// relays to the terminal; a worker's own console it does not see. It goes
// by the channel the pool's workers use too (thread_page.rs), which the
// page reads while this worker is blocked waiting for the pool. The
// function's name tells the Firefox host, which also hears a worker's own
// console, that the page relays this call (bidi_driver.rs).
const channel = new BroadcastChannel('wasmprof');
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  const original = console[level].bind(console);
  console[level] = function wasmprofRelayed(...values) {
    original(...values);
    channel.postMessage({ type: 'wasmprof_console', level, text: values.map(String).join(' ') });
  };
}

host.onExit((code) => postMessage({ type: 'wasmprof_exit', code }));

const start = await started;
try {
  const bindings = await import(start.jsUrl);
  const exports = await bindings.default({ module_or_path: start.module });
  postMessage({ type: 'wasmprof_ready', memory: exports.memory });
  await go;
  if (typeof bindings.initThreadPool === 'function') {
    postMessage({ type: 'wasmprof_pool_starting', threads: start.threads });
    await bindings.initThreadPool(start.threads);
    // The pool's start is the host's doing (a page calls it once, when
    // it loads): the program's time begins after it, on the clock every
    // thread of the page shares.
    postMessage({ type: 'wasmprof_pool_started', at: performance.timeOrigin + performance.now() });
  }
  let value = null;
  if (start.invoke) {
    value = await host.invoke(bindings, start.invoke, start.args);
  }
  // Only what a message can carry, as the page's own runner reports it.
  const plain =
    typeof value === 'bigint' ? value.toString()
    : value === undefined ? null
    : typeof value === 'object' && value !== null ? JSON.parse(JSON.stringify(value) ?? 'null')
    : value;
  postMessage({ type: 'wasmprof_settled', value: plain });
} catch (error) {
  const outcome = host.classify(error);
  if (outcome.status !== 'usage') console.error(String((error && error.stack) || error));
  postMessage({ type: 'wasmprof_settled', outcome });
}
