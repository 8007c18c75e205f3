// host-api.js, the host API shared by Node and the page: it finds the
// instrumented instance however the module is instantiated, gives a module
// importing "prof" the API even when its loader did not, copies the
// snapshot out, and names how a thrown error ends a run.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fixtures = require('./wasm-fixtures.js');

require('../host-api.js');
const host = globalThis.__wasmprofHost;

test('before any instance there is no snapshot and no future', () => {
  assert.equal(host.snapshotBytes(), null);
  assert.equal(host.pendingFutures(), 0);
});

test('an instance made without the "prof" import gets the API, and its snapshot is copied out', async () => {
  const { instance } = await WebAssembly.instantiate(fixtures.program(), {});
  assert.deepEqual(host.snapshotBytes(), fixtures.SNAPSHOT);
  assert.equal(host.snapshotBase64(), Buffer.from(fixtures.SNAPSHOT).toString('base64'));
  assert.equal(host.lastExports(), instance.exports);
  // The API's exit reaches the listeners once, with the program's code.
  const codes = [];
  host.onExit((code) => codes.push(code));
  instance.exports.exit_3();
  instance.exports.exit_3();
  assert.deepEqual(codes, [3]);
  assert.equal(host.exitCode(), 3);
});

test('`new WebAssembly.Instance` is seen too', () => {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(fixtures.program()));
  assert.equal(host.lastExports(), instance.exports);
  assert.equal(host.invoke(instance.exports, 'add_one', ['1']), 2);
});

test('invoke refuses an unknown export and an argument that is not a number', () => {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(fixtures.program()));
  assert.throws(() => host.invoke(instance.exports, 'nope', []), host.UsageError);
  assert.throws(() => host.invoke(instance.exports, 'add_one', ['x']), /argument "x" is not a number/);
});

test('classify: usage 2, trap 101, anything else error 1', () => {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(fixtures.program()));
  let trap;
  try {
    instance.exports.trap();
  } catch (e) {
    trap = e;
  }
  assert.deepEqual(
    [host.classify(new host.UsageError('no')), host.classify(trap), host.classify(new Error('boom'))].map((r) => [r.status, r.exitCode]),
    [['usage', 2], ['trap', 101], ['error', 1]],
  );
  assert.match(host.classify(trap).message, /a WebAssembly trap/);
});
