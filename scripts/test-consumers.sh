#!/usr/bin/env bash
# Packaging tests: each tests/consumers/*.sh and tests/consumers/*/run.sh, in name order, stopping at the
# first failure. Each runs with bash from the repo root and gets in its environment:
#   STEADFAST_TARBALL   absolute path of the packed package (dist/steadfast-*.tgz): install it like a user
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
  echo "test-consumers: no tests/consumers/*.sh or tests/consumers/*/run.sh yet; skipped"
  exit 0
fi
tarballs=(dist/steadfast-*.tgz)
[ "${#tarballs[@]}" -eq 1 ] || { echo "test-consumers: expected one dist/steadfast-*.tgz; run 'make build'" >&2; exit 1; }
STEADFAST_TARBALL="$STEADFAST_ROOT/${tarballs[0]}"
export STEADFAST_TARBALL
mkdir -p tests/.out

mapfile -t suites < <(printf '%s\n' "${suites[@]}" | sort)
for suite in "${suites[@]}"; do
  t=$SECONDS
  echo "test-consumers: $suite"
  if ! bash "$suite"; then
    echo "test-consumers: $suite FAILED" >&2
    exit 1
  fi
  echo "test-consumers: $suite ok ($((SECONDS - t))s)"
done
echo "test-consumers: ${#suites[@]} passed, 0 failed"
