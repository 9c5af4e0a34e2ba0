#!/usr/bin/env bash
# The async Rust API (cargo feature `web`) inside wasm, in Node 24 and/or headless Chromium:
#   scripts/test-wasm-web.sh [node|chrome|worker|all]   (default all)
# `worker` runs the same tests inside a dedicated Web Worker in headless Chromium (no `window` there:
# setTimeout, AbortSignal and fetch come from the worker's global object).
#
# Starts tests/web/server.mjs on 127.0.0.1 (ephemeral port) and passes its origin to the wasm tests
# at compile time (STEADFAST_TEST_ORIGIN), then runs `wasm-pack test … --features web --test web_wasm`.
# (wasm-pack builds every test target, and the boundary suite needs the default `exports` feature; the
# configuration of a Rust app, `--no-default-features --features web`, is what examples/rust-checkout
# builds and tests/browser/rust-checkout.test.mjs runs.)
# Like scripts/test-wasm.sh, each run must print "test result: ok. N passed" with N > 0, or this fails
# (a browser run without WASM_BINDGEN_USE_BROWSER=1 silently runs nothing).
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-60}"
side="${1:-all}"
case "$side" in
  node | chrome | worker | all) ;;
  *) echo "usage: $0 [node|chrome|worker|all]" >&2; exit 2 ;;
esac

out="$(mktemp)"
node tests/web/server.mjs >"$out" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 100); do
  grep -q '^origin ' "$out" && break
  kill -0 "$server" 2>/dev/null || { cat "$out" >&2; echo "test-wasm-web: server did not start" >&2; exit 1; }
  sleep 0.1
done
STEADFAST_TEST_ORIGIN="$(sed -n 's/^origin //p' "$out")"
[ -n "$STEADFAST_TEST_ORIGIN" ] || { echo "test-wasm-web: no origin from the server" >&2; exit 1; }
export STEADFAST_TEST_ORIGIN
echo "test-wasm-web: server at $STEADFAST_TEST_ORIGIN"

# Each run also says where it runs (STEADFAST_TEST_GLOBAL, compiled in), and a test checks the global
# object is that one: a worker run that silently ran in a window would fail.
export STEADFAST_TEST_GLOBAL
run_side() { # run_side <label> <wasm-pack test flags...>
  local label="$1"; shift
  local log; log="$(mktemp)"
  echo "test-wasm-web: $label"
  "$@" -- --features web --test web_wasm 2>&1 | tee "$log"
  local passed
  passed="$(sed -n 's/^test result: ok\. \([0-9][0-9]*\) passed.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')"
  rm -f "$log"
  if [ "$passed" -eq 0 ]; then
    echo "test-wasm-web: $label ran NO test (expected 'test result: ok. N passed' with N > 0)" >&2
    return 1
  fi
  echo "test-wasm-web: $label: $passed passed"
}

if [ "$side" = node ] || [ "$side" = all ]; then
  STEADFAST_TEST_GLOBAL=node run_side "node $(node --version)" wasm-pack test --node
fi
if [ "$side" != node ]; then
  chromedriver="$(command -v chromedriver || true)"
  [ -n "$chromedriver" ] || { echo "test-wasm-web: chromedriver not found; run 'make setup'" >&2; exit 1; }
  chromium_version="$(chromium --version 2>/dev/null | awk '{print $2}')"
  if [ "$side" = chrome ] || [ "$side" = all ]; then
    STEADFAST_TEST_GLOBAL=window run_side "headless chromium $chromium_version" \
      env WASM_BINDGEN_USE_BROWSER=1 wasm-pack test --headless --chrome --chromedriver "$chromedriver"
  fi
  if [ "$side" = worker ] || [ "$side" = all ]; then
    STEADFAST_TEST_GLOBAL=worker run_side "headless chromium $chromium_version, dedicated worker" \
      env WASM_BINDGEN_USE_DEDICATED_WORKER=1 wasm-pack test --headless --chrome --chromedriver "$chromedriver"
  fi
fi
