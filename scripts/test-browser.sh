#!/usr/bin/env bash
# End-to-end browser suites: tests/browser/*.test.mjs, run by node's test runner on Node 24, one file at a
# time (each drives a Chromium: two at once on two cores only makes them flaky). Other .mjs files there are
# helpers and are not run. The suites install the packed package into their own throwaway projects under
# tests/.out/ (scripts/install-tarball.sh also puts it in tests/node_modules) and get STEADFAST_TARBALL (a
# copy of dist/steadfast-*.tgz), STEADFAST_ROOT and STEADFAST_CHROMIUM (Debian's chromium: give it to
# playwright-core as executablePath, never `npx playwright install`).
# The last line is CI's summary: `browser: N passed, M failed` (exit 1 unless M = 0 and N > 0).
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

shopt -s nullglob
files=(tests/browser/*.test.mjs)
if [ "${#files[@]}" -eq 0 ]; then
  echo "test-browser: no tests/browser/*.test.mjs found (a step that tests nothing must not pass)" >&2
  exit 1
fi
[ -n "$STEADFAST_CHROMIUM" ] || { echo "test-browser: chromium not found; run 'make setup'" >&2; exit 1; }
scripts/install-tarball.sh >/dev/null
mkdir -p tests/.out
# The suites install this copy into their own consumer projects: the same bytes even if dist/ is rebuilt.
shopt -s nullglob
tarballs=(dist/steadfast-*.tgz)
[ "${#tarballs[@]}" -eq 1 ] || { echo "test-browser: expected one dist/steadfast-*.tgz; run 'make build'" >&2; exit 1; }
STEADFAST_TARBALL="$STEADFAST_ROOT/tests/.out/$(basename "${tarballs[0]}")"
cp "${tarballs[0]}" "$STEADFAST_TARBALL"
export STEADFAST_TARBALL

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
rc=0
node --test --test-reporter=spec --test-concurrency=1 "${files[@]}" 2>&1 | tee "$log" || rc=$?
passed="$(sed -n 's/^ℹ pass \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)"
failed="$(sed -n 's/^ℹ fail \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)"
if [ -z "$failed" ] && [ "$rc" -ne 0 ]; then failed=1; fi
if [ "${passed:-0}" -eq 0 ]; then
  echo "test-browser: node --test ran NO passing test" >&2
  rc=1
fi
echo "browser: ${passed:-0} passed, ${failed:-0} failed"
[ "$rc" -eq 0 ] && [ "${failed:-0}" -eq 0 ]
