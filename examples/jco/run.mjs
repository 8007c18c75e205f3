#!/usr/bin/env node
// Runs a WASI 0.2 command component built by `cargo wasmprof build
// --target wasm32-wasip2` in Node, with jco's transpiler and its
// preview2-shim as the WASI host, and writes the profile the component's
// wasmprof runtime kept to a file that `cargo wasmprof report --input`
// reads:
//
//   npm ci --prefix examples/jco
//   node examples/jco/run.mjs [--dir HOST[::GUEST]]... app.wasm app.wprf [ARGS]...
//
// The profile is read from the core module inside the component (its
// `__wasmprof_snapshot` export and its memory), not through the
// component's `wasmprof:runtime/snapshot` export: after a trap the
// component model forbids entering the component again, and the core
// instance still holds every call made until then. So a program that
// panics, traps or exits keeps its profile too. One that never ends does
// not: the wasm holds Node's only thread, so end it with the embedded
// wasmtime's `--timeout` instead.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const usage = 'usage: node run.mjs [--dir HOST[::GUEST]]... COMPONENT.wasm PROFILE.wprf [ARGS]...';

/** The command line: preopened directories, the component, the profile's path and the program's arguments. */
function parseArguments(argv) {
  const preopens = {};
  let rest = argv;
  while (rest[0] === '--dir') {
    if (rest.length < 2) fail(`--dir needs a directory\n${usage}`);
    const [host, guest = host] = rest[1].split('::');
    preopens[guest] = host;
    rest = rest.slice(2);
  }
  if (rest.length < 2 || rest[0].startsWith('-')) fail(usage);
  const [component, profile, ...args] = rest;
  return { preopens, component, profile, args };
}

function fail(message) {
  console.error(`wasmprof-jco-run: ${message}`);
  process.exit(2);
}

/** jco's packages, installed next to this script by `npm ci`. */
async function loadJco() {
  try {
    const { transpile, writeFiles } = await import('@bytecodealliance/jco-transpile');
    const { WASIShim } = await import('@bytecodealliance/preview2-shim/instantiation');
    return { transpile, writeFiles, WASIShim };
  } catch (error) {
    const here = fileURLToPath(new URL('.', import.meta.url));
    fail(`jco is not installed next to this script (${error.message}); run: npm ci --prefix ${here}`);
  }
}

/** The bytes of the snapshot the runtime keeps in `core`'s memory. */
function snapshotOf(core) {
  const at = core.exports.__wasmprof_snapshot() >>> 0;
  const memory = core.exports.memory;
  const length = new DataView(memory.buffer).getUint32(at + 4, true);
  return new Uint8Array(memory.buffer, at, length);
}

const { preopens, component, profile, args } = parseArguments(process.argv.slice(2));
const { transpile, writeFiles, WASIShim } = await loadJco();

/** Refuses a file that is not a component before jco's parser does, less clearly. */
function checkIsComponent(path) {
  let header;
  try {
    header = readFileSync(path).subarray(0, 8);
  } catch (error) {
    fail(`could not read ${path}: ${error.message}`);
  }
  const magic = header.subarray(0, 4).toString('latin1') === '\0asm';
  if (magic && header[4] === 1 && header[6] === 0) {
    fail(`${path} is a core module, not a component: build for wasm32-wasip2, or run it with cargo wasmprof run`);
  }
  if (!magic || header[6] !== 1) fail(`${path} is not a WebAssembly component`);
}

checkIsComponent(component);

// The transpiled module imports preview2-shim by name, so it is written
// where this package's node_modules resolve.
const work = mkdtempSync(join(fileURLToPath(new URL('.', import.meta.url)), '.transpiled-'));
let transpiled;
try {
  const { files } = await transpile(component, { outDir: work, name: 'component', instantiation: 'async' });
  await writeFiles(files);
  transpiled = await import(pathToFileURL(join(work, 'component.js')));
} catch (error) {
  rmSync(work, { recursive: true, force: true });
  fail(`jco could not transpile ${component}: ${error.message ?? error}`);
}

// Every core instance the component makes, to find the profiled one.
const cores = [];
const getCoreModule = (path) => WebAssembly.compile(readFileSync(join(work, path)));
const instantiateCore = async (module, imports) => {
  const instance = await WebAssembly.instantiate(module, imports);
  cores.push(instance);
  return instance;
};
const shim = new WASIShim({ sandbox: { args: [component, ...args], preopens, env: process.env } });
let instance;
try {
  instance = await transpiled.instantiate(getCoreModule, shim.getImportObject(), instantiateCore);
} catch (error) {
  rmSync(work, { recursive: true, force: true });
  fail(`the component could not be instantiated: ${error.message ?? error}`);
}
rmSync(work, { recursive: true, force: true });
const profiled = cores.find((core) => typeof core.exports.__wasmprof_snapshot === 'function');
if (!profiled) fail(`${component} has no wasmprof runtime: build it with cargo wasmprof build --target wasm32-wasip2`);
if (typeof instance.run?.run !== 'function') {
  fail(`${component} is not a command (it exports no wasi:cli/run); run.mjs runs commands`);
}

// WASI's exit ends Node inside the call, so the profile is also written
// from the process's exit.
let written = false;
function writeProfile() {
  if (written) return;
  written = true;
  try {
    writeFileSync(profile, snapshotOf(profiled));
  } catch (error) {
    console.error(`wasmprof-jco-run: could not write the profile to ${profile}: ${error.message}`);
    process.exitCode = 1;
  }
}
process.on('exit', writeProfile);
try {
  instance.run.run();
} catch (error) {
  console.error(`wasmprof-jco-run: the component stopped: ${error.message ?? error}`);
  process.exitCode = 1;
}
writeProfile();
