// wasmprof's Node.js host.
//
// Runs one instrumented WebAssembly module, provides the host API it imports
// (module "prof": getTime), and afterwards copies the profile out of the
// module's linear memory through its `__wasmprof_snapshot` export: after a
// normal return, after a trap or panic, after `process.exit`, and after a
// timeout, so nothing the module collected is lost.
//
// Usage: node wasmprof-host.js CONFIG.json
// CONFIG: { kind: "bindgen" | "wasi" | "plain", wasm, js?, invoke?, args[],
//           argv[], timeoutMs, snapshotOut, resultOut }
// The result file says how the run ended; the snapshot file holds the raw
// snapshot bytes (format documented in wasmprof-rt's snapshot module).
'use strict';

const fs = require('fs');
const vm = require('vm');
const { performance } = require('perf_hooks');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const started = performance.now();

// ---- The host API -------------------------------------------------------
// `getTime` is the only function an instrumented module needs. The thesis's
// arc functions are provided too, as no-ops, so that modules instrumented
// by other tools following that API still link.
const hostApi = {
  getTime: () => performance.now(),
  clearResults: () => {},
  addArcData: () => {},
  setArcData: () => {},
  printResults: () => {},
};
globalThis.__wasmprofHostApi = hostApi;

// ---- Find the instance --------------------------------------------------
// Whoever instantiates the module (wasm-bindgen's generated JS, or this
// file), the instance that exports `__wasmprof_snapshot` is the one to read.
let profiled = null;
function remember(instance) {
  if (instance && instance.exports && typeof instance.exports.__wasmprof_snapshot === 'function') {
    profiled = instance;
  }
  return instance;
}
const OriginalInstance = WebAssembly.Instance;
function PatchedInstance(module, imports) {
  return remember(new OriginalInstance(module, imports));
}
PatchedInstance.prototype = OriginalInstance.prototype;
WebAssembly.Instance = PatchedInstance;
const originalInstantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async function (source, imports) {
  const result = await originalInstantiate.call(WebAssembly, source, imports);
  remember(result instanceof OriginalInstance ? result : result.instance);
  return result;
};

// ---- Outcome bookkeeping ------------------------------------------------
const result = {
  status: 'ok', // ok | exit | trap | timeout | error
  message: null,
  exitCode: 0,
  returnValue: null,
  host: `node ${process.version}`,
  timerResolutionNanos: measureResolution(),
  wallNanos: 0,
  // Time inside the program proper, from the entry call to the end of what
  // it scheduled, without Node's start-up or compiling the module (except
  // for a start function, which runs while the module loads); what a
  // benchmark compares.
  programNanos: 0,
  snapshot: false,
};

function measureResolution() {
  // Smallest step of performance.now() seen over a short spin.
  let smallest = Infinity;
  let last = performance.now();
  for (let i = 0; i < 20000 && smallest > 0.0001; i++) {
    const now = performance.now();
    if (now > last) {
      smallest = Math.min(smallest, now - last);
      last = now;
    }
  }
  return Number.isFinite(smallest) ? smallest * 1e6 : null;
}

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
  if (!profiled) {
    return false;
  }
  const pointer = profiled.exports.__wasmprof_snapshot() >>> 0;
  const memory = profiled.exports.memory;
  const view = new DataView(memory.buffer);
  const length = view.getUint32(pointer + 4, true);
  fs.writeFileSync(config.snapshotOut, new Uint8Array(memory.buffer, pointer, length));
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
  } else if (error instanceof WebAssembly.RuntimeError) {
    result.status = 'trap';
    result.exitCode = 101;
    result.message = `${error.message} (a WebAssembly trap: a Rust panic, an out-of-bounds access or an abort)`;
  } else {
    result.status = 'error';
    result.exitCode = 1;
    result.message = String(error && error.stack || error);
  }
}

// ---- Entry points ---------------------------------------------------------
function loadPlain() {
  const module = new WebAssembly.Module(fs.readFileSync(config.wasm));
  const imports = { prof: hostApi };
  const missing = WebAssembly.Module.imports(module)
    .filter((i) => !(imports[i.module] && i.name in imports[i.module]))
    .map((i) => `${i.module}.${i.name}`);
  if (missing.length) {
    throw new UsageError(`the module imports ${missing.join(', ')}, which a plain host cannot provide; build it with wasm-bindgen or for wasm32-wasip1`);
  }
  return new WebAssembly.Instance(module, imports).exports;
}

class UsageError extends Error {}

// Marks the start of the program proper.
function entering() {
  programStarted = performance.now();
}

function invoke(exports) {
  const fn = exports[config.invoke];
  if (typeof fn !== 'function') {
    const names = Object.keys(exports).filter((k) => typeof exports[k] === 'function' && !k.startsWith('__'));
    throw new UsageError(`--invoke ${config.invoke}: the module exports no function of that name; exported functions: ${names.join(', ') || '(none)'}`);
  }
  if (fn.length !== config.args.length) {
    throw new UsageError(`--invoke ${config.invoke}: it takes ${fn.length} argument(s) but ${config.args.length} were given after --`);
  }
  const args = config.args.map((a) => {
    if (/^-?\d+$/.test(a) && Math.abs(Number(a)) > Number.MAX_SAFE_INTEGER) return BigInt(a);
    const n = Number(a);
    if (Number.isNaN(n)) throw new UsageError(`--invoke ${config.invoke}: argument ${JSON.stringify(a)} is not a number`);
    return n;
  });
  entering();
  return fn(...args);
}

function main() {
  switch (config.kind) {
    case 'bindgen': {
      if (!config.invoke) entering();
      const exports = require(config.js);
      return config.invoke ? invoke(exports) : undefined;
    }
    case 'plain':
      return invoke(loadPlain());
    case 'wasi': {
      const { WASI } = require('wasi');
      const wasi = new WASI({
        version: 'preview1',
        args: config.argv,
        env: process.env,
        returnOnExit: true,
      });
      const module = new WebAssembly.Module(fs.readFileSync(config.wasm));
      const instance = new WebAssembly.Instance(module, {
        wasi_snapshot_preview1: wasi.wasiImport,
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
      throw new UsageError(`unknown module kind ${config.kind}`);
  }
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
    if (error instanceof UsageError) {
      result.status = 'usage';
      result.exitCode = 2;
      result.message = error.message;
    } else {
      classify(error);
    }
    finish();
    realExit(result.exitCode);
    return;
  }
  // Let work the program scheduled (futures, timers) run to the end.
  process.exitCode = result.exitCode;
  process.once('beforeExit', () => {
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
