// Runs a libtest binary built for wasm32-wasip1 in Node's WASI, with the
// arguments after the file name (a filter, `--exact`, …). The runtime's
// clock import, `prof.getTime`, is Node's `performance.now`. Exits with the
// binary's status; a failed test aborts it, which Node reports as an error.
import { WASI } from 'node:wasi';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [file, ...args] = process.argv.slice(2);
const module = new WebAssembly.Module(readFileSync(file));
const wasi = new WASI({ version: 'preview1', args: [file, ...args], env: {}, returnOnExit: true });
const imports = { wasi_snapshot_preview1: wasi.wasiImport, prof: { getTime: () => performance.now() } };
for (const wanted of WebAssembly.Module.imports(module)) {
  if (!(wanted.module in imports) || !(wanted.name in imports[wanted.module])) {
    throw new Error(`the test binary imports ${wanted.module}.${wanted.name}, which this runner does not provide`);
  }
}
process.exitCode = wasi.start(new WebAssembly.Instance(module, imports));
