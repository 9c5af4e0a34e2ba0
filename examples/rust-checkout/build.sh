#!/usr/bin/env bash
# Build the Rust checkout page: cargo (wasm32, release) → wasm-bindgen --target web → wasm-opt → pkg/.
#   examples/rust-checkout/build.sh        then: node examples/rust-checkout/server.mjs
# Prints the module's size, the size of the same page without steadfast (baseline/: one plain fetch
# per click, same profile and flags, built but not served), and the difference: what steadfast's
# async API (retry + breaker + store, the key and the fingerprint) adds to a Rust→wasm app.
set -euo pipefail
# shellcheck source=../../scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/env.sh"
cd "$STEADFAST_ROOT/examples/rust-checkout"
target="$STEADFAST_ROOT/target/rust-checkout"
cargo build --quiet --release --target wasm32-unknown-unknown --target-dir "$target"
cargo build --quiet --release --target wasm32-unknown-unknown --target-dir "$target" --manifest-path baseline/Cargo.toml
rm -rf pkg baseline/pkg
wasm-bindgen --target web --out-dir pkg "$target/wasm32-unknown-unknown/release/rust_checkout.wasm"
wasm-bindgen --target web --out-dir baseline/pkg "$target/wasm32-unknown-unknown/release/rust_checkout_baseline.wasm"
# The npm build's flags (scripts/build.sh says why --low-memory-unused is safe: the stack sits first).
for m in pkg/rust_checkout_bg.wasm baseline/pkg/rust_checkout_baseline_bg.wasm; do
  "$STEADFAST_WASM_OPT" -Oz --converge --low-memory-unused --strip-producers --strip-target-features "$m" -o "$m"
done
node -e '
  const { readFileSync } = require("node:fs"); const z = require("node:zlib");
  const size = (f) => { const b = readFileSync(f); return [b.length, z.gzipSync(b, { level: 9 }).length]; };
  const kb = (n) => (n / 1024).toFixed(1);
  const [raw, gz] = size("pkg/rust_checkout_bg.wasm");
  const [braw, bgz] = size("baseline/pkg/rust_checkout_baseline_bg.wasm");
  console.log("rust-checkout: pkg/rust_checkout_bg.wasm %s KB raw, %s KB gzip -9", kb(raw), kb(gz));
  console.log("rust-checkout: the same page without steadfast (baseline/) %s KB raw, %s KB gzip -9", kb(braw), kb(bgz));
  console.log("rust-checkout: what steadfast adds to the page: %s KB raw, %s KB gzip -9", kb(raw - braw), kb(gz - bgz));'
