// Small WebAssembly modules, assembled here byte by byte, that stand for an
// instrumented program in the host scripts' own tests: each exports what
// the runtime exports (`memory`, `__wasmprof_snapshot`) and does one thing
// a real program can do (return, trap, spin, call `prof.exit`). No Rust
// build is needed to run the hosts against them.
'use strict';

// The snapshot the fixtures hold: the runtime's magic, its length (the
// host reads it at offset 4), then bytes the host must copy unchanged.
const SNAPSHOT = Uint8Array.from([0x57, 0x50, 0x52, 0x46, 12, 0, 0, 0, 1, 2, 3, 4]);
const SNAPSHOT_AT = 16;

const I32 = 0x7f;

function uleb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

function sleb(n) {
  const out = [];
  while (true) {
    const byte = n & 0x7f;
    n >>= 7;
    const done = (n === 0 && !(byte & 0x40)) || (n === -1 && (byte & 0x40));
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

const name = (text) => [...uleb(text.length), ...Buffer.from(text, 'utf8')];
const vec = (items) => [...uleb(items.length), ...items.flat()];
const section = (id, body) => [id, ...uleb(body.length), ...body];

// Instructions the fixtures use.
const op = {
  unreachable: [0x00],
  loopForever: [0x03, 0x40, 0x0c, 0x00, 0x0b], // loop; br 0; end
  i32: (n) => [0x41, ...sleb(n)],
  call: (index) => [0x10, ...uleb(index)],
};

// A module from its imports ({module, name, params, results}) and functions
// ({export, params, results, body}); every module exports a memory holding
// SNAPSHOT and `__wasmprof_snapshot`, which returns where it is.
function assemble({ imports = [], functions = [] }) {
  const all = [
    ...functions,
    { export: '__wasmprof_snapshot', params: [], results: [I32], body: op.i32(SNAPSHOT_AT) },
  ];
  const types = [...imports, ...all].map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]);
  const importEntries = imports.map((f, i) => [...name(f.module), ...name(f.name), 0x00, ...uleb(i)]);
  const functionTypes = all.map((_, i) => uleb(imports.length + i));
  const exports = [
    [...name('memory'), 0x02, 0x00],
    ...all.map((f, i) => [...name(f.export), 0x00, ...uleb(imports.length + i)]),
  ];
  const bodies = all.map((f) => {
    const body = [0x00, ...f.body, 0x0b]; // no locals; the code; end
    return [...uleb(body.length), ...body];
  });
  const data = [[0x00, ...op.i32(SNAPSHOT_AT), 0x0b, ...vec([...SNAPSHOT].map((b) => [b]))]];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    ...section(2, vec(importEntries)),
    ...section(3, vec(functionTypes)),
    ...section(5, vec([[0x00, 0x01]])), // one page, no maximum
    ...section(7, vec(exports)),
    ...section(10, vec(bodies)),
    ...section(11, vec(data)),
  ]);
}

// A program of every ending the hosts must tell apart, by export.
function program() {
  return assemble({
    imports: [{ module: 'prof', name: 'exit', params: [I32], results: [] }],
    functions: [
      { export: 'answer', params: [], results: [I32], body: op.i32(42) },
      { export: 'add_one', params: [I32], results: [I32], body: [0x20, 0x00, ...op.i32(1), 0x6a] },
      { export: 'trap', params: [], results: [], body: op.unreachable },
      { export: 'spin', params: [], results: [], body: op.loopForever },
      { export: 'exit_3', params: [], results: [], body: [...op.i32(3), ...op.call(0)] },
    ],
  });
}

// A module that imports what no plain host has.
function needsAnEnvironment() {
  return assemble({
    imports: [{ module: 'env', name: 'missing', params: [], results: [] }],
    functions: [{ export: 'answer', params: [], results: [I32], body: op.i32(42) }],
  });
}

module.exports = { SNAPSHOT, program, needsAnEnvironment };
