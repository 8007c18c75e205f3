// wasmprof's Node.js host.
//
// Runs one instrumented WebAssembly module, provides the host API it imports
// (module "prof": getTime), and afterwards copies the profile out of the
// module's linear memory through its `__wasmprof_snapshot` export: after a
// normal return, after a trap or panic, after `process.exit`, and after a
// timeout, so nothing the module collected is lost.
//
// Usage: node wasmprof-host.js CONFIG.json (host-api.js beside it)
// CONFIG: { kind: "bindgen" | "bindgen-test" | "wasi" | "plain", wasm, js?,
//           invoke?, args[], argv[],
//           wasi: { preopens: {guest: host}, env: {name: value} },
//           test?: (see bindgen-test.js), timeoutMs, untilExit, snapshotOut,
//           resultOut }
// The result file says how the run ended; the snapshot file holds the raw
// snapshot bytes (format documented in wasmprof-rt's snapshot module).
'use strict';

const fs = require('fs');
const vm = require('vm');
const { performance } = require('perf_hooks');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const started = performance.now();

// ---- The host API (shared with the browser page) -------------------------
require('./host-api.js');
const host = globalThis.__wasmprofHost;
const hostApi = host.api;

// ---- Outcome bookkeeping ------------------------------------------------
const result = {
  status: 'ok', // ok | exit | trap | timeout | error
  message: null,
  exitCode: 0,
  returnValue: null,
  host: `node ${process.version}`,
  timerResolutionNanos: host.measureResolution(),
  wallNanos: 0,
  // Time inside the program proper, from the entry call to the end of what
  // it scheduled, without Node's start-up or compiling the module (except
  // for a start function, which runs while the module loads); what a
  // benchmark compares.
  programNanos: 0,
  snapshot: false,
};

let programStarted = null;
let finished = false;
function finish() {
  if (finished) return;
  finished = true;
  const now = performance.now();
  result.wallNanos = Math.round((now - started) * 1e6);
  if (programStarted !== null) {
    result.programNanos = Math.round((now - programStarted) * 1e6);
  }
  try {
    result.snapshot = writeSnapshot();
  } catch (e) {
    result.snapshot = false;
    result.snapshotError = String(e && e.message || e);
  }
  fs.writeFileSync(config.resultOut, JSON.stringify(result));
}

function writeSnapshot() {
  const bytes = host.snapshotBytes();
  if (bytes === null) return false;
  fs.writeFileSync(config.snapshotOut, bytes);
  return true;
}

// A program that calls process.exit still gets its profile written.
const realExit = process.exit.bind(process);
process.exit = (code) => {
  if (!finished) {
    result.status = code ? 'exit' : 'ok';
    result.exitCode = code === undefined ? (process.exitCode || 0) : Number(code) || 0;
    finish();
  }
  realExit(result.exitCode);
};

function classify(error) {
  if (error && error.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
    result.status = 'timeout';
    result.exitCode = 124;
    result.message = `timed out after ${config.timeoutMs} ms`;
  } else {
    Object.assign(result, host.classify(error));
  }
}

// `wasmprof::exit(code)`: end the run once the current call has returned.
host.onExit((code) => {
  setImmediate(() => {
    if (finished) return;
    result.status = code ? 'exit' : 'ok';
    result.exitCode = code;
    finish();
    realExit(code);
  });
});

// ---- Entry points ---------------------------------------------------------
function loadPlain() {
  const module = new WebAssembly.Module(fs.readFileSync(config.wasm));
  const imports = { prof: hostApi };
  const missing = WebAssembly.Module.imports(module)
    .filter((i) => !(imports[i.module] && i.name in imports[i.module]))
    .map((i) => `${i.module}.${i.name}`);
  if (missing.length) {
    throw new host.UsageError(`the module imports ${missing.join(', ')}, which a plain host cannot provide; build it with wasm-bindgen or for wasm32-wasip1`);
  }
  return new WebAssembly.Instance(module, imports).exports;
}

// Marks the start of the program proper.
function entering() {
  programStarted = performance.now();
}

function invoke(exports) {
  entering();
  return host.invoke(exports, config.invoke, config.args);
}

function main() {
  switch (config.kind) {
    case 'bindgen': {
      if (!config.invoke) entering();
      const exports = require(config.js);
      return config.invoke ? invoke(exports) : undefined;
    }
    case 'bindgen-test': {
      require('./bindgen-test.js');
      const driver = host.bindgenTest;
      const watcher = driver.watchTests();
      result.harnessTests = watcher.names;
      driver.captureConsole(config.test, (line) => process.stdout.write(`${line}\n`), watcher);
      const bindings = require(config.js);
      entering();
      return driver.runTests(bindings, config.test).then((passed) => {
        if (!passed) {
          result.status = 'exit';
          result.exitCode = 1;
          result.message = 'some tests failed';
        }
      });
    }
    case 'plain':
      return invoke(loadPlain());
    case 'wasi': {
      const { WASI } = require('wasi');
      // What the program may see, as cargo-wasmprof decided it: its
      // preopened directories (guest path -> host path) and environment.
      const wasi = new WASI({
        version: 'preview1',
        args: config.argv,
        env: config.wasi.env,
        preopens: config.wasi.preopens,
        returnOnExit: true,
      });
      // Reachable until the process ends: otherwise a collection that the
      // module's growing memory sets off may destroy the WASI object in the
      // middle of one of its calls. A script that ran examples/walks this
      // way with the object in a local aborted in uvwasi_destroy, on a
      // mutex still locked by fd_write.
      globalThis.__wasmprofWasi = wasi;
      const module = new WebAssembly.Module(fs.readFileSync(config.wasm));
      let instance = null;
      const wasiImport = config.harnessTests
        ? watchHarness(wasi.wasiImport, () => instance)
        : wasi.wasiImport;
      instance = new WebAssembly.Instance(module, {
        wasi_snapshot_preview1: wasiImport,
        prof: hostApi,
      });
      if (config.invoke) {
        wasi.initialize(instance);
        return invoke(instance.exports);
      }
      entering();
      const code = wasi.start(instance);
      if (code) {
        result.status = 'exit';
        result.exitCode = code;
      }
      return undefined;
    }
    default:
      throw new host.UsageError(`unknown module kind ${config.kind}`);
  }
}

// libtest, on wasm, runs its tests one at a time and writes `test NAME ... `
// before each (and flushes it). Seeing that line on standard output, the
// host tells the runtime that a test begins, so that the calls made until
// the next are that test's: a test that no one instrumented (one written by
// rstest or test_case) is a test in the profile. `test result:` ends the
// last. The names go back in the result, null for a test the harness
// announced and then ignored.
function watchHarness(wasiImport, getInstance) {
  const decoder = new TextDecoder();
  const begin = /^test (.+) \.\.\. /;
  let line = '';
  // The test whose result ends the line, if one began on it.
  let begun = 0;
  result.harnessTests = [];
  const tell = (number) => {
    const exports = getInstance() && getInstance().exports;
    if (exports && typeof exports.__wasmprof_harness_test === 'function') {
      exports.__wasmprof_harness_test(number);
    }
  };
  const seen = (text) => {
    line += text;
    let newline;
    while (true) {
      const started = begin.exec(line);
      if (started) {
        result.harnessTests.push(started[1]);
        begun = result.harnessTests.length;
        tell(begun);
        line = line.slice(started[0].length);
        continue;
      }
      if ((newline = line.indexOf('\n')) < 0) break;
      // An ignored test is announced too, and never runs: no test.
      if (begun && line.startsWith('ignored')) result.harnessTests[begun - 1] = null;
      begun = 0;
      if (line.startsWith('test result: ')) tell(0);
      line = line.slice(newline + 1);
    }
  };
  return {
    ...wasiImport,
    fd_write(fd, iovs, iovsLength, written) {
      const instance = getInstance();
      if (fd === 1 && instance && instance.exports.memory) {
        try {
          const memory = instance.exports.memory.buffer;
          const view = new DataView(memory);
          for (let i = 0; i < iovsLength; i++) {
            const at = view.getUint32(iovs + 8 * i, true);
            const length = view.getUint32(iovs + 8 * i + 4, true);
            seen(decoder.decode(new Uint8Array(memory, at, length), { stream: true }));
          }
        } catch (e) {
          // Watching is a courtesy: the write itself must go through.
        }
      }
      return wasiImport.fd_write(fd, iovs, iovsLength, written);
    },
  };
}

// A program busy in a loop that its entry call did not start (a promise's
// callback, a test of wasm-bindgen-test) is out of reach of both the timer
// and vm's timeout. A watchdog thread then asks V8, through the inspector,
// to run this between two of the loop's iterations: the profile is written
// from where the program stands, and the process ends at once.
globalThis.__wasmprofWatchdog = () => {
  if (finished) return;
  classify(timeoutError());
  finish();
  // Not process.exit: the inspector session would make Node wait for it.
  process.kill(process.pid, 'SIGKILL');
};

function startWatchdog(afterMs) {
  const { Worker } = require('worker_threads');
  const watchdog = new Worker(
    `const inspector = require('inspector');
     const { workerData } = require('worker_threads');
     const session = new inspector.Session();
     session.connectToMainThread();
     setTimeout(() => {
       session.post('Runtime.evaluate', { expression: 'globalThis.__wasmprofWatchdog()' });
     }, workerData.afterMs);`,
    { eval: true, workerData: { afterMs } },
  );
  watchdog.unref();
}

async function run() {
  // The whole run, including promises and timers the program leaves behind,
  // is bounded; the timer does not itself keep Node alive.
  const deadline = setTimeout(() => {
    classify(timeoutError());
    finish();
    realExit(result.exitCode);
  }, config.timeoutMs);
  deadline.unref();
  // Only for a --timeout (a day stands for none); a little later than the
  // timer, which ends a program that is not busy more gently.
  if (config.timeoutMs < 24 * 60 * 60 * 1000) startWatchdog(config.timeoutMs + 200);
  globalThis.__wasmprofMain = main;
  try {
    // vm's timeout interrupts even a loop that never returns to JavaScript.
    let value = vm.runInThisContext('__wasmprofMain()', {
      timeout: config.timeoutMs,
      breakOnSigint: true,
    });
    if (value && typeof value.then === 'function') {
      value = await value;
    }
    if (config.invoke) {
      result.returnValue = typeof value === 'bigint' ? value.toString() : value === undefined ? null : value;
    }
  } catch (error) {
    classify(error);
    finish();
    realExit(result.exitCode);
    return;
  }
  // Let work the program scheduled (futures, timers) run to the end. With
  // --until-exit, a program that runs out of work without calling
  // wasmprof::exit never will: that is an error.
  process.exitCode = result.exitCode;
  process.once('beforeExit', () => {
    if (config.untilExit && host.exitCode() === null) {
      result.status = 'error';
      result.exitCode = 1;
      result.message = 'the program ended without calling wasmprof::exit (--until-exit)';
    }
    finish();
    realExit(result.exitCode);
  });
}

function timeoutError() {
  const e = new Error('timeout');
  e.code = 'ERR_SCRIPT_EXECUTION_TIMEOUT';
  return e;
}

process.on('uncaughtException', (error) => {
  classify(error);
  finish();
  realExit(result.exitCode);
});

run();
