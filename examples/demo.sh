#!/usr/bin/env bash
# Builds cargo-wasmprof, runs the thesis's validation program (appendix-b)
# in Node with every function instrumented, and prints its gprof report.
#
# The demo runs in Node, so the tool is built without the embedded wasmtime
# (`--no-default-features`): the whole demo took 160 s on 2 cores, where
# building wasmtime too made it take over ten minutes. cargo shows its
# progress; nothing here is silent for long.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "demo: building cargo-wasmprof for Node and the browsers (without wasmtime: about 2½ minutes on 2 cores)" >&2
cargo build --release --locked --no-default-features -p cargo-wasmprof
wasmprof=target/release/cargo-wasmprof
echo "demo: profiling examples/appendix-b in Node, every function instrumented" >&2
"$wasmprof" wasmprof run --release --manifest-path examples/Cargo.toml -p appendix-b
"$wasmprof" wasmprof report --manifest-path examples/Cargo.toml
