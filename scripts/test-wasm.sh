#!/usr/bin/env bash
# wasm-bindgen-test suites (tests/wasm_boundary.rs → tests/wasm/*.rs) inside wasm, in Node 24 and/or
# headless Chromium:   scripts/test-wasm.sh [node|chrome|all]   (default all)
#
# Runs `wasm-pack test --node` and `wasm-pack test --headless --chrome --chromedriver <Debian's>` on the
# wasm_boundary test target only (wasm-pack runs cargo test with wasm-bindgen-test-runner as the runner).
# Node is whichever `node` is first on PATH (Node 24 from .tools/); Chromium is driven through Debian's
# chromedriver, given by path, so nothing is downloaded; extra Chrome flags are in webdriver.json.
# (wasm-pack's own version check needs the network and says so; it is harmless here.)
# A browser run without WASM_BINDGEN_USE_BROWSER=1 silently runs nothing and exits 0, so every run must
# print "test result: ok. N passed" with N > 0, or this script fails.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-60}"

run_side() { # run_side <label> <wasm-pack test flags...> (env assignments go before, via `env`)
  local label="$1"; shift
  local log; log="$(mktemp)"
  echo "test-wasm: $label"
  "$@" -- --test wasm_boundary 2>&1 | tee "$log"
  local passed
  passed="$(sed -n 's/^test result: ok\. \([0-9][0-9]*\) passed.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')"
  rm -f "$log"
  if [ "$passed" -eq 0 ]; then
    echo "test-wasm: $label ran NO test (expected 'test result: ok. N passed' with N > 0)" >&2
    return 1
  fi
  echo "test-wasm: $label: $passed passed"
}

side="${1:-all}"
case "$side" in
  node | chrome | all) ;;
  *) echo "usage: $0 [node|chrome|all]" >&2; exit 2 ;;
esac
if [ "$side" != chrome ]; then
  run_side "node $(node --version)" wasm-pack test --node
fi
if [ "$side" != node ]; then
  chromedriver="$(command -v chromedriver || true)"
  [ -n "$chromedriver" ] || { echo "test-wasm: chromedriver not found; run 'make setup'" >&2; exit 1; }
  run_side "headless chromium $(chromium --version 2>/dev/null | awk '{print $2}')" \
    env WASM_BINDGEN_USE_BROWSER=1 wasm-pack test --headless --chrome --chromedriver "$chromedriver"
fi
