#!/usr/bin/env bash
# Builds cargo-wasmprof, runs the thesis's validation program (appendix-b)
# in Node with every function instrumented, and prints its gprof report.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p cargo-wasmprof
wasmprof=target/release/cargo-wasmprof
"$wasmprof" wasmprof run --release --manifest-path examples/Cargo.toml -p appendix-b
"$wasmprof" wasmprof report --manifest-path examples/Cargo.toml
