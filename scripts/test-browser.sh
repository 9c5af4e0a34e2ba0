#!/usr/bin/env bash
# End-to-end browser suites: tests/browser/*.test.mjs, run by node's test runner on Node 24, one file at a
# time (each drives a Chromium: two at once on two cores only makes them flaky). Other .mjs files there are
# helpers and are not run. The suites import 'steadfast' by name (scripts/install-tarball.sh puts the packed
# package in tests/node_modules) and get STEADFAST_TARBALL, STEADFAST_ROOT and STEADFAST_CHROMIUM (Debian's
# chromium: give it to playwright-core as executablePath, never `npx playwright install`).
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

shopt -s nullglob
files=(tests/browser/*.test.mjs)
if [ "${#files[@]}" -eq 0 ]; then
  echo "test-browser: no tests/browser/*.test.mjs yet; skipped"
  exit 0
fi
[ -n "$STEADFAST_CHROMIUM" ] || { echo "test-browser: chromium not found; run 'make setup'" >&2; exit 1; }
STEADFAST_TARBALL="$(scripts/install-tarball.sh)"
export STEADFAST_TARBALL
mkdir -p tests/.out

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
node --test --test-reporter=spec --test-concurrency=1 "${files[@]}" 2>&1 | tee "$log"
passed="$(sed -n 's/^ℹ pass \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)"
if [ "${passed:-0}" -eq 0 ]; then
  echo "test-browser: node --test ran NO passing test" >&2
  exit 1
fi
