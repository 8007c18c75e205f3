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

  // wasm-bindgen-test runs one test at a time, polling its future through
  // `__wbg_test_invoke`, and writes `test NAME ... ok` when it ends. So the
  // first poll after a result begins the next test, and the runtime is told
  // there (`__wasmprof_harness_test`, as for libtest), so that the calls
  // until the result are that test's, also for a test written by a macro,
  // which nobody instrumented. The name, known only at the end, goes in
  // `names`, in the order the tests ran; a test reported ignored is never
  // polled, and begins nothing.
  function watchTests() {
    const names = [];
    let running = false;
    const tell = (number) => {
      const exports = host.lastExports();
      if (exports && typeof exports.__wasmprof_harness_test === 'function') {
        exports.__wasmprof_harness_test(number);
      }
    };
    return {
      names,
      polled() {
        if (running) return;
        running = true;
        tell(names.length + 1);
      },
      line(text) {
        const ended = /^test (.+) \.\.\. /.exec(text);
        if (!ended || !running) return;
        names.push(ended[1]);
        running = false;
        tell(0);
      },
    };
  }

  // Before the bindings are loaded, so that the console functions they
  // import are these. `watcher` (from `watchTests`) sees each poll and, where
  // the harness prints through the console (Node), each line.
  function captureConsole(test, print, watcher) {
    const original = {};
    for (const method of ['debug', 'log', 'info', 'warn', 'error']) {
      original[method] = console[method];
      const handler = `on_console_${method}`;
      console[method] = function (...args) {
        if (test.nocapture) original[method].apply(console, args);
        if (typeof global[handler] === 'function') global[handler](args);
      };
    }
    global.__wbgtest_og_console_log = (...args) => {
      const line = args.join(' ');
      watcher.line(line);
      print(line);
    };
    global.__wbgtest_og_console_error = (...args) => original.error.apply(console, args);
    global.__wbg_test_invoke = (f) => {
      watcher.polled();
      f();
    };
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

  host.bindgenTest = { watchTests, captureConsole, runTests };
})(globalThis);
