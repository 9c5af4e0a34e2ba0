#!/usr/bin/env bash
# wasm-bindgen-test suites (tests/wasm_boundary.rs → tests/wasm/*.rs) inside wasm, in Node 24, headless
# Chromium, headless Firefox and WebKit:
#   scripts/test-wasm.sh [node|chrome|firefox|webkit|all]...   (default all)
#
# Runs `wasm-pack test --node`, `wasm-pack test --headless --chrome --chromedriver <Debian's>`,
# `wasm-pack test --headless --firefox --geckodriver <cargo-installed>` and, for WebKit,
# `wasm-pack test --release --headless --safari --safaridriver /usr/bin/WebKitWebDriver` under `xvfb-run -a` on the
# wasm_boundary test target only (wasm-pack runs cargo test with wasm-bindgen-test-runner as the runner).
# Node is whichever `node` is first on PATH (Node 24 from .tools/); browsers are driven through drivers
# given by path, so nothing is downloaded; extra capabilities (Chrome flags, the firefox-esr binary) are
# in webdriver.json.
# WebKit: wasm-bindgen-test-runner has no WebKitGTK driver kind, but its "safaridriver" kind only spawns
# the binary with --port=N and opens a W3C session with EMPTY capabilities (webdriver.json is not read
# for it); WebKitWebDriver then starts its default browser, WebKitGTK's MiniBrowser in automation mode,
# which needs a display: hence xvfb-run.
# WebKit runs the RELEASE build of the suites (the optimization level the package ships; the other
# engines run the debug build, with overflow checks): WebKitGTK 2.50's wasm runtime now and then
# traps or computes a wrong answer in the debug build's code, rarely and under load, in tests that
# differ from run to run (std's SipHash inside a HashMap insert, a HashMap lookup that misses, a Vec
# reallocation), with talc and with std's dlmalloc alike, in code with no unsafe that passes every
# run in the other engines. The release build has not failed (docs/browser-support.md;
# scripts/wasm-repeat.sh counts failed runs).
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

sides=("$@")
[ "${#sides[@]}" -gt 0 ] || sides=(all)
for side in "${sides[@]}"; do
  case "$side" in
    node | chrome | firefox | webkit | all) ;;
    *) echo "usage: $0 [node|chrome|firefox|webkit|all]..." >&2; exit 2 ;;
  esac
done
want() { local s; for s in "${sides[@]}"; do [ "$s" = "$1" ] || [ "$s" = all ] && return 0; done; return 1; }

if want node; then
  run_side "node $(node --version)" wasm-pack test --node
fi
if want chrome; then
  chromedriver="$(command -v chromedriver || true)"
  [ -n "$chromedriver" ] || { echo "test-wasm: chromedriver not found; run 'make setup'" >&2; exit 1; }
  run_side "headless chromium $(chromium --version 2>/dev/null | awk '{print $2}')" \
    env WASM_BINDGEN_USE_BROWSER=1 wasm-pack test --headless --chrome --chromedriver "$chromedriver"
fi
if want firefox; then
  geckodriver="$(command -v geckodriver || true)"
  [ -n "$geckodriver" ] || { echo "test-wasm: geckodriver not found; run 'make setup'" >&2; exit 1; }
  [ -x "$STEADFAST_FIREFOX" ] || { echo "test-wasm: $STEADFAST_FIREFOX not found; run 'make setup'" >&2; exit 1; }
  run_side "headless firefox $("$STEADFAST_FIREFOX" --version 2>/dev/null | awk '{print $3}')" \
    env WASM_BINDGEN_USE_BROWSER=1 wasm-pack test --headless --firefox --geckodriver "$geckodriver"
fi
if want webkit; then
  [ -x "$STEADFAST_WEBKITDRIVER" ] || { echo "test-wasm: $STEADFAST_WEBKITDRIVER not found; run 'make setup'" >&2; exit 1; }
  command -v xvfb-run >/dev/null || { echo "test-wasm: xvfb-run not found; run 'make setup'" >&2; exit 1; }
  run_side "webkit (WebKitGTK $(dpkg-query -W -f='${Version}' webkit2gtk-driver 2>/dev/null | cut -d- -f1), MiniBrowser under Xvfb)" \
    env WASM_BINDGEN_USE_BROWSER=1 xvfb-run -a wasm-pack test --release --headless --safari --safaridriver "$STEADFAST_WEBKITDRIVER"
fi
