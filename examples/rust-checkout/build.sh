#!/usr/bin/env bash
# Build the Rust checkout page: cargo (wasm32, release) → wasm-bindgen --target web → wasm-opt → pkg/.
#   examples/rust-checkout/build.sh        then: node examples/rust-checkout/server.mjs
# Prints the module's size (what steadfast's async API costs a Rust→wasm app, with the page's code).
set -euo pipefail
# shellcheck source=../../scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/env.sh"
cd "$STEADFAST_ROOT/examples/rust-checkout"
target="$STEADFAST_ROOT/target/rust-checkout"
cargo build --quiet --release --target wasm32-unknown-unknown --target-dir "$target"
rm -rf pkg
wasm-bindgen --target web --out-dir pkg "$target/wasm32-unknown-unknown/release/rust_checkout.wasm"
# The npm build's flags (scripts/build.sh says why --low-memory-unused is safe: the stack sits first).
"$STEADFAST_WASM_OPT" -Oz --converge --low-memory-unused --strip-producers --strip-target-features \
  pkg/rust_checkout_bg.wasm -o pkg/rust_checkout_bg.wasm
node -e '
  const { readFileSync } = require("node:fs"); const z = require("node:zlib");
  const b = readFileSync("pkg/rust_checkout_bg.wasm");
  console.log("rust-checkout: pkg/rust_checkout_bg.wasm %s KB raw, %s KB gzip -9",
    (b.length / 1024).toFixed(1), (z.gzipSync(b, { level: 9 }).length / 1024).toFixed(1));'
