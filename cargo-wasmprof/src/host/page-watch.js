// wasmprof's watcher in a user's own page (--page): the page loads the
// module itself, so the entry point has settled once the instrumented
// instance exists, the page has loaded, and the task that ran the start
// function is over. Reports through the DevTools binding, as page-host.js.
(function () {
  'use strict';
  const host = globalThis.__wasmprofHost;
  const resolutionNanos = host.measureResolution();
  const report = (message) => {
    if (typeof globalThis.__wasmprofReport === 'function') {
      globalThis.__wasmprofReport(JSON.stringify(message));
    }
  };
  host.onExit((code) => {
    setTimeout(() => report({ type: 'exit', code, programNanos: Math.round(performance.now() * 1e6), resolutionNanos }), 0);
  });
  function settleWhenInstantiated() {
    if (!host.hasInstance()) {
      setTimeout(settleWhenInstantiated, 20);
      return;
    }
    setTimeout(() => report({
      type: 'settled', status: 'ok', exitCode: 0, message: null, returnValue: null,
      programNanos: Math.round(performance.now() * 1e6), resolutionNanos,
    }), 0);
  }
  window.addEventListener('load', settleWhenInstantiated);
})();
