// wasmprof's runner in the generated page: loads the module the way
// wasm-bindgen's `web` target does (or instantiates a plain module), calls
// the entry point, and tells the host how it went through the DevTools
// binding `__wasmprofReport` (absent under --serve, where a person runs it).
//
// host-api.js has already run, and set `__wasmprofHost.config`:
// { kind, jsUrl?, wasmUrl, invoke?, args[], test?, threads? } (for `bindgen-test`,
// bindgen-test.js has run too)
import { runOnWorker, WorkerOutcome } from '/__wasmprof/page-threads.js';

const host = globalThis.__wasmprofHost;
const config = host.config;
// A test harness ends the run itself; a program may leave work scheduled.
if (!config.test) host.watchPendingWork();
const resolutionNanos = host.measureResolution();
let programStarted = null;

function report(message) {
  // Also left on the host object, for whoever drives a --serve page.
  if (message.type === 'settled') host.settled = message;
  if (typeof globalThis.__wasmprofReport === 'function') {
    globalThis.__wasmprofReport(JSON.stringify(message));
  }
}

function programNanos() {
  return programStarted === null ? 0 : Math.round((performance.now() - programStarted) * 1e6);
}

host.onExit((code) => {
  // After the current call has returned to the event loop.
  host.later(() => report({ type: 'exit', code, programNanos: programNanos(), resolutionNanos }), 0);
});

// A wasm-bindgen program on the page's own thread: its start function,
// then `--invoke`'s.
async function runOnPage(bindings) {
  // Compiled first, so that the program's time is the start function's
  // (which runs inside init), not the download and the compiler's.
  const module = await WebAssembly.compileStreaming(fetch(config.wasmUrl));
  if (!config.invoke) programStarted = performance.now();
  await bindings.default({ module_or_path: module });
  if (!config.invoke) return undefined;
  programStarted = performance.now();
  return await host.invoke(bindings, config.invoke, config.args);
}

async function main() {
  switch (config.kind) {
    case 'bindgen':
      return await runOnPage(await import(config.jsUrl));
    case 'bindgen-threads': {
      const bindings = await import(config.jsUrl);
      // A thread pool (wasm-bindgen-rayon's) blocks the thread that waits
      // for it, which a page's may not: the program runs on a worker.
      // Workers the program starts itself (wasm_thread's, or its own
      // `new Worker`) are started from the page's thread, as the program
      // expects: it runs here.
      if (typeof bindings.initThreadPool !== 'function') return await runOnPage(bindings);
      // The host hears of the pool's start, to say so if it never ends.
      return await runOnWorker(
        host,
        config,
        (at) => {
          programStarted = at ?? performance.now();
          if (at !== undefined) report({ type: 'pool', started: true });
        },
        (threads) => report({ type: 'pool', started: false, threads }),
      );
    }
    case 'bindgen-test': {
      const driver = host.bindgenTest;
      const print = console.log.bind(console);
      harnessTests = driver.watchTests();
      const watcher = harnessTests;
      relayHarnessOutput(document.getElementById('output'), (line) => {
        watcher.line(line);
        print(line);
      });
      driver.captureConsole(config.test, print, watcher);
      const bindings = await import(config.jsUrl);
      const module = await WebAssembly.compileStreaming(fetch(config.wasmUrl));
      await bindings.default({ module_or_path: module });
      programStarted = performance.now();
      const passed = await driver.runTests(bindings, config.test);
      return passed ? undefined : TESTS_FAILED;
    }
    case 'plain': {
      const { instance } = await WebAssembly.instantiateStreaming(fetch(config.wasmUrl), { prof: host.api });
      programStarted = performance.now();
      return await host.invoke(instance.exports, config.invoke, config.args);
    }
    default:
      throw new host.UsageError(`a ${config.kind} module cannot run in the browser`);
  }
}

// wasm-bindgen-test's browser formatter writes its report into
// `<pre id="output">`, setting the whole text each time; each complete line
// goes to `print`, and so to the console, which the host relays to the
// terminal. The lines are seen as the text is set, not later from an
// observer: a test's result line marks where the next test begins, which
// the formatter's caller does at once.
function relayHarnessOutput(pre, print) {
  const text = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent');
  let shown = 0;
  Object.defineProperty(pre, 'textContent', {
    configurable: true,
    get() {
      return text.get.call(this);
    },
    set(value) {
      text.set.call(this, value);
      const content = String(value);
      const end = content.lastIndexOf('\n') + 1;
      if (end <= shown) return;
      const lines = content.slice(shown, end - 1).split('\n');
      // The formatter starts by adding a newline to whatever was there.
      if (shown === 0 && lines[0] === '') lines.shift();
      shown = end;
      for (const line of lines) print(line);
    },
  });
}

// The tests' names, as the harness reported them (`bindgen-test` only).
let harnessTests = null;

const TESTS_FAILED = { testsFailed: true };

// An async program goes on after its entry point returns: a
// `#[wasm_bindgen(start)] async fn` hands its promise to no one, and tasks
// started with `spawn_local` run from the event loop. While futures of
// instrumented async functions are pending, every change in their polls is
// reported: a sign of life, like console output, that keeps the run going
// past `--grace` for as long as the futures make progress.
function watchFutures() {
  let lastPolls = null;
  const tick = () => {
    const pending = host.pendingFutures();
    const polls = host.futurePolls();
    if (polls !== lastPolls) {
      lastPolls = polls;
      report({ type: 'futures', pending, polls });
    }
    if (pending > 0) host.later(tick, 5);
  };
  tick();
}

main().then(
  (value) => {
    if (value === TESTS_FAILED) {
      report({
        type: 'settled',
        status: 'exit',
        exitCode: 1,
        message: 'some tests failed',
        returnValue: null,
        programNanos: programNanos(),
        resolutionNanos,
        harnessTests: harnessTests && harnessTests.names,
      });
      return;
    }
    report({
      type: 'settled',
      status: 'ok',
      exitCode: 0,
      message: null,
      returnValue: typeof value === 'bigint' ? value.toString() : value === undefined ? null : value,
      programNanos: programNanos(),
      resolutionNanos,
      harnessTests: harnessTests && harnessTests.names,
    });
    watchFutures();
    if (!config.test) host.watchActivity(report);
  },
  (error) => {
    // The worker's outcome was classified, and its stack printed, there.
    const outcome = error instanceof WorkerOutcome ? error.outcome : host.classify(error);
    if (outcome.status !== 'usage' && !(error instanceof WorkerOutcome)) {
      console.error(String((error && error.stack) || error));
    }
    report(
      Object.assign(
        {
          type: 'settled',
          returnValue: null,
          programNanos: programNanos(),
          resolutionNanos,
          harnessTests: harnessTests && harnessTests.names,
        },
        outcome,
      ),
    );
  },
);
