// node-host.js against fixture modules, as cargo-wasmprof runs it: a config
// file in, a result file and the raw snapshot out. Each ending a program
// can have must give the status and exit code the Rust side expects, and
// the snapshot must be saved in every one of them.
//
// Run: node --test cargo-wasmprof/src/js/tests/ (the crate's unit test
// `run::host::tests::the_host_scripts_pass_their_own_tests` does). With
// WASMPROF_RUN_STATUSES set (by that test, from the Rust enum), every
// status seen must be one of them.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const fixtures = require('./wasm-fixtures.js');

const HOST = path.join(__dirname, '..', 'node-host.js');
const KNOWN_STATUSES = process.env.WASMPROF_RUN_STATUSES
  ? process.env.WASMPROF_RUN_STATUSES.split(',')
  : null;
// The fields of HostResult (run/host.rs) every result must carry.
const FIELDS = ['status', 'message', 'exitCode', 'returnValue', 'host', 'timerResolutionNanos', 'wallNanos', 'programNanos', 'snapshot'];

// Runs node-host.js on `wasm` with `config` over the defaults; returns the
// process's exit code, its streams, the result and the snapshot saved.
function runHost(wasm, config = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasmprof-host-test-'));
  try {
    fs.writeFileSync(path.join(dir, 'module.wasm'), wasm);
    const full = {
      kind: 'plain',
      wasm: path.join(dir, 'module.wasm'),
      args: [],
      argv: [],
      wasi: { preopens: {}, env: {} },
      timeoutMs: 24 * 60 * 60 * 1000,
      untilExit: false,
      snapshotOut: path.join(dir, 'snapshot.bin'),
      resultOut: path.join(dir, 'result.json'),
      ...config,
    };
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(full));
    const child = spawnSync(process.execPath, [HOST, path.join(dir, 'config.json')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const result = JSON.parse(fs.readFileSync(full.resultOut, 'utf8'));
    for (const field of FIELDS) assert.ok(field in result, `the result has no ${field}: ${JSON.stringify(result)}`);
    if (KNOWN_STATUSES) assert.ok(KNOWN_STATUSES.includes(result.status), `status ${result.status} is not one of ${KNOWN_STATUSES}`);
    const snapshot = fs.existsSync(full.snapshotOut) ? new Uint8Array(fs.readFileSync(full.snapshotOut)) : null;
    return { code: child.status, stderr: child.stderr, result, snapshot };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function assertSnapshotSaved(run) {
  assert.equal(run.result.snapshot, true, JSON.stringify(run.result));
  assert.deepEqual(run.snapshot, fixtures.SNAPSHOT);
}

test('a call that returns ends ok, with its value and the snapshot', () => {
  const run = runHost(fixtures.program(), { invoke: 'answer' });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.result.status, 'ok');
  assert.equal(run.result.exitCode, 0);
  assert.equal(run.result.returnValue, 42);
  assert.ok(run.result.programNanos > 0 && run.result.wallNanos >= run.result.programNanos, JSON.stringify(run.result));
  assertSnapshotSaved(run);
});

test("--invoke's arguments reach the function as numbers", () => {
  const run = runHost(fixtures.program(), { invoke: 'add_one', args: ['41'] });
  assert.equal(run.result.returnValue, 42, run.stderr);
});

test('a trap ends with status trap and code 101, and keeps the snapshot', () => {
  const run = runHost(fixtures.program(), { invoke: 'trap' });
  assert.equal(run.code, 101, run.stderr);
  assert.equal(run.result.status, 'trap');
  assert.equal(run.result.exitCode, 101);
  assert.match(run.result.message, /unreachable/);
  assertSnapshotSaved(run);
});

test('a loop that never returns is stopped at the timeout, with code 124 and the snapshot', () => {
  const run = runHost(fixtures.program(), { invoke: 'spin', timeoutMs: 300 });
  assert.equal(run.code, 124, run.stderr);
  assert.equal(run.result.status, 'timeout');
  assert.equal(run.result.exitCode, 124);
  assert.match(run.result.message, /timed out after 300 ms/);
  assertSnapshotSaved(run);
});

test("wasmprof::exit's code is the run's", () => {
  const run = runHost(fixtures.program(), { invoke: 'exit_3' });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(run.result.status, 'exit');
  assert.equal(run.result.exitCode, 3);
  assertSnapshotSaved(run);
});

test('an export that does not exist is a usage error that lists the exports', () => {
  const run = runHost(fixtures.program(), { invoke: 'nope' });
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.result.status, 'usage');
  assert.match(run.result.message, /--invoke nope: the module exports no function of that name/);
  assert.match(run.result.message, /answer, add_one, trap, spin, exit_3/);
});

test('an argument that is not a number is a usage error', () => {
  const run = runHost(fixtures.program(), { invoke: 'add_one', args: ['forty'] });
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.result.status, 'usage');
  assert.match(run.result.message, /argument "forty" is not a number/);
});

test('a module that imports what a plain host lacks is refused, naming the import', () => {
  const run = runHost(fixtures.needsAnEnvironment(), { invoke: 'answer' });
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.result.status, 'usage');
  assert.match(run.result.message, /imports env\.missing/);
  assert.equal(run.result.snapshot, false, 'no instance, no snapshot');
});

test('--until-exit: a program that runs out of work without wasmprof::exit is an error', () => {
  const run = runHost(fixtures.program(), { invoke: 'answer', untilExit: true });
  assert.equal(run.code, 1, run.stderr);
  assert.equal(run.result.status, 'error');
  assert.match(run.result.message, /without calling wasmprof::exit/);
  assertSnapshotSaved(run);
});
