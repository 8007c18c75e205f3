// wasmprof's watcher in a user's own page (--page): the page loads the
// module itself, so the entry point has settled once the instrumented
// instance exists, the page has loaded, and the task that ran the start
// function is over. Reports through the DevTools binding, as page-host.js.
(function () {
  'use strict';
  const host = globalThis.__wasmprofHost;
  host.watchPendingWork();
  const resolutionNanos = host.measureResolution();
  const report = (message) => {
    if (typeof globalThis.__wasmprofReport === 'function') {
      globalThis.__wasmprofReport(JSON.stringify(message));
    }
  };
  host.onExit((code) => {
    host.later(() => report({ type: 'exit', code, programNanos: Math.round(performance.now() * 1e6), resolutionNanos }), 0);
  });
  // A page that has loaded but instantiated no instrumented module after
  // this long is not loading the build wasmprof serves.
  const PATIENCE_MS = 10000;
  let loadedAt = null;
  function settleWhenInstantiated() {
    if (loadedAt === null) loadedAt = performance.now();
    if (!host.hasInstance()) {
      if (performance.now() - loadedAt > PATIENCE_MS) {
        report({
          type: 'settled', status: 'error', exitCode: 1, returnValue: null, programNanos: 0, resolutionNanos,
          message: `the page loaded but instantiated no instrumented module within ${PATIENCE_MS / 1000} s: ` +
            `it must load the crate's wasm-bindgen JS (${host.config.moduleNames}) as the web target does`,
        });
        return;
      }
      host.later(settleWhenInstantiated, 20);
      return;
    }
    host.later(() => report({
      type: 'settled', status: 'ok', exitCode: 0, message: null, returnValue: null,
      programNanos: Math.round(performance.now() * 1e6), resolutionNanos,
    }), 0);
    host.watchActivity(report);
  }
  window.addEventListener('load', settleWhenInstantiated);
})();
