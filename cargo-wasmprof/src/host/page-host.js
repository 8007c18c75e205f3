// wasmprof's runner in the generated page: loads the module the way
// wasm-bindgen's `web` target does (or instantiates a plain module), calls
// the entry point, and tells the host how it went through the DevTools
// binding `__wasmprofReport` (absent under --serve, where a person runs it).
//
// host-api.js has already run, and set `__wasmprofHost.config`:
// { kind, jsUrl?, wasmUrl, invoke?, args[] }
const host = globalThis.__wasmprofHost;
const config = host.config;
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
  setTimeout(() => report({ type: 'exit', code, programNanos: programNanos(), resolutionNanos }), 0);
});

async function main() {
  switch (config.kind) {
    case 'bindgen': {
      const bindings = await import(config.jsUrl);
      // Compiled first, so that the program's time is the start function's
      // (which runs inside init), not the download and the compiler's.
      const module = await WebAssembly.compileStreaming(fetch(config.wasmUrl));
      if (!config.invoke) programStarted = performance.now();
      await bindings.default({ module_or_path: module });
      if (!config.invoke) return undefined;
      programStarted = performance.now();
      return await host.invoke(bindings, config.invoke, config.args);
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

main().then(
  (value) => {
    report({
      type: 'settled',
      status: 'ok',
      exitCode: 0,
      message: null,
      returnValue: typeof value === 'bigint' ? value.toString() : value === undefined ? null : value,
      programNanos: programNanos(),
      resolutionNanos,
    });
  },
  (error) => {
    const outcome = host.classify(error);
    if (outcome.status !== 'usage') console.error(String((error && error.stack) || error));
    report(Object.assign({ type: 'settled', returnValue: null, programNanos: programNanos(), resolutionNanos }, outcome));
  },
);
