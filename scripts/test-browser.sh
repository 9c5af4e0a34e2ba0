#!/usr/bin/env bash
# End-to-end browser suites: tests/browser/*.test.mjs, run by node's test runner on Node 24, one file at a
# time (each drives a browser: two at once on two cores only makes them flaky), once per engine:
#
#   scripts/test-browser.sh [chromium|firefox|webkit]...   (default: all three, in that order)
#
# A file whose header has a line `// engines: <names>` runs in those engines; a file without one is
# Chromium-only (Playwright + Debian's chromium). Firefox and WebKit are driven over W3C WebDriver
# (geckodriver + firefox-esr headless; WebKitWebDriver + MiniBrowser under Xvfb, see webdriver.mjs).
# STEADFAST_ENGINE tells the suites which engine this run is. Other .mjs files there are helpers and are
# not run. The suites install the packed package into their own throwaway projects under tests/.out/
# (scripts/install-tarball.sh also puts it in tests/node_modules) and get STEADFAST_TARBALL (a copy of
# dist/steadfast-*.tgz), STEADFAST_ROOT and STEADFAST_CHROMIUM (Debian's chromium: give it to
# playwright-core as executablePath, never `npx playwright install`).
# One summary line per engine, `browser <engine>: N passed, M failed`; an engine run fails unless M = 0
# and N > 0 (an engine that ran zero cases fails), and the script fails if any engine run failed.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

engines=("$@")
[ "${#engines[@]}" -gt 0 ] || engines=(chromium firefox webkit)
for engine in "${engines[@]}"; do
  case "$engine" in
    chromium) [ -n "$STEADFAST_CHROMIUM" ] || { echo "test-browser: chromium not found; run 'make setup'" >&2; exit 1; } ;;
    firefox)
      command -v geckodriver >/dev/null || { echo "test-browser: geckodriver not found; run 'make setup'" >&2; exit 1; }
      [ -x "$STEADFAST_FIREFOX" ] || { echo "test-browser: $STEADFAST_FIREFOX not found; run 'make setup'" >&2; exit 1; } ;;
    webkit)
      [ -x "$STEADFAST_WEBKITDRIVER" ] && [ -x "$STEADFAST_MINIBROWSER" ] \
        || { echo "test-browser: WebKitWebDriver/MiniBrowser not found; run 'make setup'" >&2; exit 1; }
      command -v xvfb-run >/dev/null || { echo "test-browser: xvfb-run not found; run 'make setup'" >&2; exit 1; } ;;
    *) echo "usage: $0 [chromium|firefox|webkit]..." >&2; exit 2 ;;
  esac
done

shopt -s nullglob
all_files=(tests/browser/*.test.mjs)
if [ "${#all_files[@]}" -eq 0 ]; then
  echo "test-browser: no tests/browser/*.test.mjs found (a step that tests nothing must not pass)" >&2
  exit 1
fi
# install-tarball.sh checks there is exactly one dist/steadfast-*.tgz and prints its path.
tarball="$(scripts/install-tarball.sh)"
mkdir -p tests/.out
# The suites install this copy into their own consumer projects: the same bytes even if dist/ is rebuilt.
STEADFAST_TARBALL="$STEADFAST_ROOT/tests/.out/$(basename "$tarball")"
cp "$tarball" "$STEADFAST_TARBALL"
export STEADFAST_TARBALL

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
summaries=()
status=0
for engine in "${engines[@]}"; do
  files=()
  for f in "${all_files[@]}"; do
    if grep -Eq "^// engines:.*\b$engine\b" "$f" || { [ "$engine" = chromium ] && ! grep -q '^// engines:' "$f"; }; then
      files+=("$f")
    fi
  done
  echo "━━ browser: $engine (${#files[@]} files)"
  t=$SECONDS
  rc=0
  if [ "${#files[@]}" -gt 0 ]; then
    STEADFAST_ENGINE="$engine" node --test --test-reporter=spec --test-concurrency=1 "${files[@]}" 2>&1 | tee "$log" || rc=$?
  else
    : >"$log"
  fi
  passed="$(sed -n 's/^ℹ pass \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)"
  failed="$(sed -n 's/^ℹ fail \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)"
  if [ -z "$failed" ] && [ "$rc" -ne 0 ]; then failed=1; fi
  if [ "${passed:-0}" -eq 0 ]; then
    echo "test-browser: $engine ran NO passing test" >&2
    rc=1
  fi
  if [ "$rc" -ne 0 ] || [ "${failed:-0}" -ne 0 ]; then status=1; fi
  summaries+=("browser $engine: ${passed:-0} passed, ${failed:-0} failed in $((SECONDS - t))s")
done
printf '%s\n' "${summaries[@]}"
exit "$status"
