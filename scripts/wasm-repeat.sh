#!/usr/bin/env bash
# Run the wasm boundary suites (tests/wasm_boundary.rs) many times in one browser engine and count
# the runs that failed, naming the tests that failed in each: a rare engine fault shows as a count.
#
#   scripts/wasm-repeat.sh <chrome|firefox|webkit> <debug|release> [runs=100]
#
# Builds the suite once (cargo, the given profile) and runs the same .wasm `runs` times through
# wasm-bindgen-test-runner, driven as scripts/test-wasm.sh drives it. Prints one line per failed run
# and a last line `wasm-repeat: <engine> <profile>: <runs> runs, <failed> failed`. Exits 0 either way:
# it measures, it does not gate (scripts/test-wasm.sh does).
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

engine="${1:-}"
profile="${2:-}"
runs="${3:-100}"
case "$engine" in chrome | firefox | webkit) ;; *) echo "usage: $0 <chrome|firefox|webkit> <debug|release> [runs]" >&2; exit 2 ;; esac
case "$profile" in debug) flags=() ;; release) flags=(--release) ;; *) echo "usage: $0 <chrome|firefox|webkit> <debug|release> [runs]" >&2; exit 2 ;; esac
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "wasm-repeat: runs must be a positive integer, got '$runs'" >&2; exit 2; }

wasm="$(cargo build --tests "${flags[@]}" --target wasm32-unknown-unknown --test wasm_boundary --message-format=json 2>/dev/null |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const hit = s.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((m) => m.reason === "compiler-artifact" && m.target?.name === "wasm_boundary" && m.profile?.test).pop();
    if (!hit) process.exit(1);
    process.stdout.write(hit.filenames.find((f) => f.endsWith(".wasm")));
  })')" || { echo "wasm-repeat: could not build the wasm_boundary suite" >&2; exit 1; }

run_once() {
  case "$engine" in
    chrome) env WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER="$(command -v chromedriver)" wasm-bindgen-test-runner "$wasm" ;;
    firefox) env WASM_BINDGEN_USE_BROWSER=1 GECKODRIVER="$(command -v geckodriver)" wasm-bindgen-test-runner "$wasm" ;;
    webkit) env WASM_BINDGEN_USE_BROWSER=1 SAFARIDRIVER="$STEADFAST_WEBKITDRIVER" xvfb-run -a wasm-bindgen-test-runner "$wasm" ;;
  esac
}

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
failed=0
for i in $(seq "$runs"); do
  if run_once >"$log" 2>&1 && grep -q '^test result: ok\. [1-9]' "$log"; then continue; fi
  failed=$((failed + 1))
  names="$(sed -n 's/^test \(.*\) \.\.\. FAIL$/\1/p' "$log" | tr '\n' ' ')"
  first="$(grep -m1 -E 'RuntimeError|panicked at|driver status' "$log" | sed 's/^ *//' | cut -c1-160 || true)"
  echo "wasm-repeat: run $i failed: ${names:-(no test named)} — ${first:-see the runner output}"
done
echo "wasm-repeat: $engine $profile: $runs runs, $failed failed"
