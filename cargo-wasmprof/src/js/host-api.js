// wasmprof's host API, one implementation for every JavaScript host: Node
// loads it with `require`, the browser page with a classic <script> before
// any module. It defines `globalThis.__wasmprofHost`:
//
//   api                 the import object of module "prof" (getTime, exit, and
//                       the thesis's arc functions as no-ops)
//   snapshotBytes()     the profile copied out of the instrumented instance's
//                       linear memory (null when no instance exports
//                       `__wasmprof_snapshot`); callable after a trap too
//   snapshotBase64()    the same, as base64, for hosts that pull it as text
//   pendingFutures()    futures of instrumented async functions still pending
//                       (0 without an instrumented instance)
//   futurePolls()       polls of those futures so far (wrapping; 0 without)
//   invoke(exports, name, args)
//                       calls an exported function with numeric arguments,
//                       throwing UsageError when the call cannot be made
//   classify(error)     { status, exitCode, message } for a thrown error
//   measureResolution() the smallest step of the clock, in nanoseconds
//   onExit(listener)    called with the code of `wasmprof::exit(code)`
//   lastExports()       the raw exports of the newest instance (wasm-bindgen's
//                       JS wraps only some; a test harness needs the rest)
//   watchPendingWork()  (browser) from now on, counts the timers, intervals,
//                       animation frames and fetches the page has pending
//   pendingWork()       those counts, or null when not watched
//   watchActivity(f)    calls f({type:'active'}) each 100 ms in which the
//                       page ran a frame, timer, interval or fetch callback,
//                       or had an animation frame pending
//   later(fn, ms)       setTimeout, for the hosts' own timers: never counted
//   resetFrames()       (browser) forgets the frames so far: a window opens
//   displayFrames()     (browser) display frames drawn since the page loaded
//                       or the last resetFrames(), whatever the build
//
// The instance is found by watching WebAssembly.instantiate(Streaming) and
// `new WebAssembly.Instance`, so it works whoever instantiates the module:
// wasm-bindgen's generated JS, a user's page, or the hosts themselves. A
// module that imports "prof" gets this API even if its loader did not pass it.
(function (global) {
  'use strict';
  if (global.__wasmprofHost) return;

  const clock = global.performance;
  const exitListeners = [];
  let exitCode = null;

  const api = {
    getTime: () => clock.now(),
    // `wasmprof::exit(code)`: the program says it is done. The host ends the
    // run once the current call has returned to the event loop, so the
    // calls on the stack are closed, not cut off.
    exit: (code) => {
      if (exitCode !== null) return;
      exitCode = code | 0;
      for (const listener of exitListeners) listener(exitCode);
    },
    clearResults: () => {},
    addArcData: () => {},
    setArcData: () => {},
    printResults: () => {},
  };

  let profiled = null;
  let newest = null;
  // Where the profiled instance's shadow stack began (its `__stack_pointer`
  // when it was made), if the build exports the pointer.
  let stackStart = null;
  function remember(instance) {
    if (instance && instance.exports) newest = instance;
    if (instance && instance.exports && typeof instance.exports.__wasmprof_snapshot === 'function') {
      profiled = instance;
      const pointer = instance.exports.__stack_pointer;
      stackStart = pointer instanceof WebAssembly.Global ? pointer.value >>> 0 : null;
    }
    return instance;
  }

  // After the shadow stack overflowed, its pointer is below address 0,
  // which reads as an address past the memory's end, and the snapshot's own
  // frame would trap there too: it is set back to where the stack began.
  // The program is over by then. A pointer inside the memory is left alone:
  // it is a live stack's (a worker's, which wasm-bindgen gives a stack of
  // its own), and nothing says it overflowed.
  function mendOverflowedStack() {
    const pointer = profiled.exports.__stack_pointer;
    const memory = profiled.exports.memory;
    if (stackStart === null || !(pointer instanceof WebAssembly.Global) || !memory) return;
    if ((pointer.value >>> 0) > memory.buffer.byteLength) {
      pointer.value = stackStart;
    }
  }

  function withProf(module, imports) {
    const wanted = WebAssembly.Module.imports(module).some((i) => i.module === 'prof');
    if (!wanted || (imports && imports.prof)) return imports;
    return Object.assign({}, imports, { prof: api });
  }

  const OriginalInstance = WebAssembly.Instance;
  function PatchedInstance(module, imports) {
    return remember(new OriginalInstance(module, withProf(module, imports)));
  }
  PatchedInstance.prototype = OriginalInstance.prototype;
  WebAssembly.Instance = PatchedInstance;

  const originalInstantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async function (source, imports) {
    if (source instanceof WebAssembly.Module) {
      return remember(await originalInstantiate.call(WebAssembly, source, withProf(source, imports)));
    }
    const module = await WebAssembly.compile(source);
    const instance = await originalInstantiate.call(WebAssembly, module, withProf(module, imports));
    remember(instance);
    return { module, instance };
  };
  if (typeof WebAssembly.instantiateStreaming === 'function') {
    WebAssembly.instantiateStreaming = async function (response, imports) {
      const module = await WebAssembly.compileStreaming(response);
      const instance = await originalInstantiate.call(WebAssembly, module, withProf(module, imports));
      remember(instance);
      return { module, instance };
    };
  }

  function snapshotBytes() {
    if (!profiled) return null;
    mendOverflowedStack();
    const pointer = profiled.exports.__wasmprof_snapshot() >>> 0;
    const memory = profiled.exports.memory;
    const length = new DataView(memory.buffer).getUint32(pointer + 4, true);
    return new Uint8Array(memory.buffer.slice(pointer, pointer + length));
  }

  function snapshotBase64() {
    const bytes = snapshotBytes();
    if (bytes === null) return null;
    if (typeof Buffer !== 'undefined') return Buffer.from(bytes).toString('base64');
    let text = '';
    const chunk = 0x8000;
    for (let i = 0; i < bytes.length; i += chunk) {
      text += String.fromCharCode.apply(null, bytes.subarray(i, i + chunk));
    }
    return btoa(text);
  }

  function pendingFutures() {
    if (!profiled || typeof profiled.exports.__wasmprof_pending_futures !== 'function') return 0;
    return profiled.exports.__wasmprof_pending_futures() >>> 0;
  }

  function futurePolls() {
    if (!profiled || typeof profiled.exports.__wasmprof_future_polls !== 'function') return 0;
    return profiled.exports.__wasmprof_future_polls() >>> 0;
  }

  class UsageError extends Error {}

  function invoke(exports, name, args) {
    const fn = exports[name];
    if (typeof fn !== 'function') {
      const names = Object.keys(exports).filter((k) => typeof exports[k] === 'function' && !k.startsWith('__') && k !== 'default');
      throw new UsageError(`--invoke ${name}: the module exports no function of that name; exported functions: ${names.join(', ') || '(none)'}`);
    }
    if (fn.length !== args.length) {
      throw new UsageError(`--invoke ${name}: it takes ${fn.length} argument(s) but ${args.length} were given after --`);
    }
    const values = args.map((a) => {
      if (/^-?\d+$/.test(a) && Math.abs(Number(a)) > Number.MAX_SAFE_INTEGER) return BigInt(a);
      const n = Number(a);
      if (Number.isNaN(n)) throw new UsageError(`--invoke ${name}: argument ${JSON.stringify(a)} is not a number`);
      return n;
    });
    return fn(...values);
  }

  function classify(error) {
    if (error instanceof UsageError) {
      return { status: 'usage', exitCode: 2, message: error.message };
    }
    if (error instanceof WebAssembly.RuntimeError) {
      return {
        status: 'trap',
        exitCode: 101,
        message: `${error.message} (a WebAssembly trap: a Rust panic, an out-of-bounds access or an abort)`,
      };
    }
    return { status: 'error', exitCode: 1, message: String((error && error.stack) || error) };
  }

  function measureResolution() {
    // Smallest step of the clock seen over a short spin.
    let smallest = Infinity;
    let last = clock.now();
    for (let i = 0; i < 20000 && smallest > 0.0001; i++) {
      const now = clock.now();
      if (now > last) {
        smallest = Math.min(smallest, now - last);
        last = now;
      }
    }
    return Number.isFinite(smallest) ? smallest * 1e6 : null;
  }

  // What the page still has scheduled, so that a run ended by the grace
  // period can say what it cut off. The page scripts install the watch
  // before the program's own scripts run; their own timers use `later`.
  const later = global.setTimeout.bind(global);
  let pendingWork = null;
  // Callbacks the page has run since it loaded: animation frames, timers,
  // intervals, fetches settled. A page that runs them is at work, even if
  // it prints nothing (a render loop); the run's grace period ends only a
  // page that runs none.
  let callbacks = 0;
  function watchPendingWork() {
    if (pendingWork || typeof global.requestAnimationFrame !== 'function') return;
    const timers = new Set();
    const intervals = new Set();
    const frames = new Set();
    let fetches = 0;
    const real = {
      setTimeout: global.setTimeout,
      clearTimeout: global.clearTimeout,
      setInterval: global.setInterval,
      clearInterval: global.clearInterval,
      requestAnimationFrame: global.requestAnimationFrame,
      cancelAnimationFrame: global.cancelAnimationFrame,
      fetch: global.fetch,
    };
    global.setTimeout = function (handler, ...rest) {
      if (typeof handler !== 'function') return real.setTimeout.call(global, handler, ...rest);
      const id = real.setTimeout.call(global, function (...args) {
        timers.delete(id);
        callbacks++;
        return handler.apply(this, args);
      }, ...rest);
      timers.add(id);
      return id;
    };
    // The two clear functions take either kind of id.
    const forget = (id) => { timers.delete(id); intervals.delete(id); };
    global.clearTimeout = function (id) { forget(id); return real.clearTimeout.call(global, id); };
    global.setInterval = function (handler, ...rest) {
      if (typeof handler !== 'function') return real.setInterval.call(global, handler, ...rest);
      const id = real.setInterval.call(global, function (...args) {
        callbacks++;
        return handler.apply(this, args);
      }, ...rest);
      intervals.add(id);
      return id;
    };
    global.clearInterval = function (id) { forget(id); return real.clearInterval.call(global, id); };
    global.requestAnimationFrame = function (callback) {
      const id = real.requestAnimationFrame.call(global, function (time) {
        frames.delete(id);
        callbacks++;
        countDisplayFrame(time);
        const marks = frameMarks();
        if (!marks) return callback(time);
        // The runtime keeps each frame's duration, and the slowest
        // frames' own calls (see wasmprof-core's frames.rs).
        marks.__wasmprof_frame_begin();
        const start = performance.now();
        try {
          return callback(time);
        } finally {
          marks.__wasmprof_frame_end(start, performance.now() - start);
        }
      });
      frames.add(id);
      return id;
    };
    global.cancelAnimationFrame = function (id) {
      frames.delete(id);
      return real.cancelAnimationFrame.call(global, id);
    };
    if (typeof real.fetch === 'function') {
      global.fetch = function (...args) {
        fetches++;
        const done = () => { fetches--; callbacks++; };
        const response = real.fetch.apply(global, args);
        response.then(done, done);
        return response;
      };
    }
    pendingWork = () => ({ timers: timers.size, intervals: intervals.size, frames: frames.size, fetches });
  }

  // Display frames the page drew, counted here whatever the build (a plain
  // one has no runtime to count them): so that a frame rate can be set
  // beside the instrumented build's. Every animation-frame callback of one
  // display frame gets that frame's timestamp.
  let displayFrames = { count: 0, last: null };
  function countDisplayFrame(time) {
    if (time === displayFrames.last) return;
    displayFrames.count++;
    displayFrames.last = time;
  }

  // The instrumented instance's frame exports, when it has them.
  function frameMarks() {
    const exports = profiled && profiled.exports;
    return exports && typeof exports.__wasmprof_frame_begin === 'function' ? exports : null;
  }

  // A recording window opens: the frames so far are not in it.
  function resetFrames() {
    displayFrames = { count: 0, last: null };
    const exports = frameMarks();
    if (exports) exports.__wasmprof_frames_reset();
  }

  // Tells `report` every tenth of a second in which the page ran a
  // callback, or waited for an animation frame it asked for, so that the
  // host knows the program is at work. A frame asked for is work to come:
  // the browser delivers it when it can (a WebGL page drawn in software
  // may wait long for the next).
  function watchActivity(report) {
    let seen = callbacks;
    const tick = () => {
      const work = pendingWork ? pendingWork() : null;
      if (callbacks !== seen || (work && work.frames > 0)) {
        seen = callbacks;
        report({ type: 'active', callbacks });
      }
      later(tick, 100);
    };
    later(tick, 100);
  }

  global.__wasmprofHost = {
    api,
    watchPendingWork,
    watchActivity,
    resetFrames,
    displayFrames: () => displayFrames.count,
    pendingWork: () => (pendingWork ? pendingWork() : null),
    later,
    snapshotBytes,
    snapshotBase64,
    pendingFutures,
    futurePolls,
    hasInstance: () => profiled !== null,
    lastExports: () => (newest ? newest.exports : null),
    invoke,
    classify,
    UsageError,
    measureResolution,
    onExit: (listener) => exitListeners.push(listener),
    exitCode: () => exitCode,
  };
  // What wasm-bindgen's `require("prof")` / `import … from "prof"` resolves to.
  global.__wasmprofHostApi = api;
})(globalThis);
