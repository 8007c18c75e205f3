// wasmprof's driver for wasm-bindgen-test binaries, shared by the Node host
// and the browser page: what wasm-bindgen-test-runner's generated script
// does, on a module whose bindings wasmprof generated (without the start
// function, which a test run must not call).
//
// The harness (wasm-bindgen-test's `WasmBindgenTestContext`) prints its
// report through `print`, captures each test's console output and shows it
// only for a failing test unless `nocapture`. Which tests to run, and how
// many the filter left out, cargo-wasmprof decided from the module's
// `__wbgt_` exports and the harness arguments, as the runner does.
//
// test: { tests: [export name], includeIgnored, filtered, nocapture }
(function (global) {
  'use strict';
  const host = global.__wasmprofHost;

  // Before the bindings are loaded, so that the console functions they
  // import are these.
  function captureConsole(test, print) {
    const original = {};
    for (const method of ['debug', 'log', 'info', 'warn', 'error']) {
      original[method] = console[method];
      const handler = `on_console_${method}`;
      console[method] = function (...args) {
        if (test.nocapture) original[method].apply(console, args);
        if (typeof global[handler] === 'function') global[handler](args);
      };
    }
    global.__wbgtest_og_console_log = (...args) => print(args.join(' '));
    global.__wbgtest_og_console_error = (...args) => original.error.apply(console, args);
    global.__wbg_test_invoke = (f) => f();
    return original;
  }

  // Runs the tests; resolves to whether they all passed.
  async function runTests(bindings, test) {
    const exports = host.lastExports();
    const missing = test.tests.filter((name) => !exports || typeof exports[name] !== 'function');
    if (typeof bindings.WasmBindgenTestContext !== 'function' || missing.length) {
      throw new host.UsageError(
        'this module does not look like a wasm-bindgen-test binary of a version wasmprof knows ' +
          `(${missing.length ? 'missing exports: ' + missing.join(', ') : 'no WasmBindgenTestContext'})`,
      );
    }
    for (const method of ['debug', 'log', 'info', 'warn', 'error']) {
      global[`on_console_${method}`] = bindings[`__wbgtest_console_${method}`];
    }
    const cx = new bindings.WasmBindgenTestContext(false);
    cx.include_ignored(!!test.includeIgnored);
    cx.filtered_count(test.filtered | 0);
    return await cx.run(test.tests.map((name) => exports[name]));
  }

  host.bindgenTest = { captureConsole, runTests };
})(globalThis);
