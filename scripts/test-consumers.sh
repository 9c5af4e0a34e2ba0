#!/usr/bin/env bash
# Packaging tests: each tests/consumers/*.sh and tests/consumers/*/run.sh, in name order; all run, and the
# last line is CI's summary, `consumers: N passed, M failed` (exit 1 unless M = 0 and N > 0). Each runs
# with bash from the repo root and gets in its environment:
#   STEADFAST_TARBALL   absolute path of the packed package (a copy of dist/steadfast-*.tgz): install it
#                       like a user
#   STEADFAST_ROOT      the repo root;  STEADFAST_CHROMIUM  Debian's chromium (for Playwright's executablePath)
#   PATH                Node 24 and npm first, root node_modules/.bin (vite, tsc) after
# A consumer keeps its scratch files under tests/.out/ (git-ignored).
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

shopt -s nullglob
suites=(tests/consumers/*.sh tests/consumers/*/run.sh)
if [ "${#suites[@]}" -eq 0 ]; then
  echo "test-consumers: no tests/consumers/*.sh or tests/consumers/*/run.sh found (a step that tests nothing must not pass)" >&2
  exit 1
fi
tarballs=(dist/steadfast-*.tgz)
[ "${#tarballs[@]}" -eq 1 ] || { echo "test-consumers: expected one dist/steadfast-*.tgz; run 'make build'" >&2; exit 1; }
mkdir -p tests/.out
# Every suite installs the same bytes, even if dist/ is rebuilt while they run.
STEADFAST_TARBALL="$STEADFAST_ROOT/tests/.out/$(basename "${tarballs[0]}")"
cp "${tarballs[0]}" "$STEADFAST_TARBALL"
export STEADFAST_TARBALL

mapfile -t suites < <(printf '%s\n' "${suites[@]}" | sort)
passed=0
failed=()
for suite in "${suites[@]}"; do
  t=$SECONDS
  echo "test-consumers: $suite"
  if bash "$suite"; then
    passed=$((passed + 1))
    echo "test-consumers: $suite ok ($((SECONDS - t))s)"
  else
    failed+=("$suite")
    echo "test-consumers: $suite FAILED ($((SECONDS - t))s)" >&2
  fi
done
[ "${#failed[@]}" -eq 0 ] || echo "test-consumers: failed: ${failed[*]}" >&2
echo "consumers: $passed passed, ${#failed[@]} failed"
[ "${#failed[@]}" -eq 0 ] && [ "$passed" -gt 0 ]
