#!/usr/bin/env bash
# Installs the packed package (dist/steadfast-*.tgz from `make build`) into <prefix>/node_modules/steadfast
# (prefix: first argument, default tests; examples/ uses it too),
# as `npm install` does in a user's project, so that everything under tests/ imports 'steadfast' BY NAME
# through its package.json exports and gets only the files that `files` ships. Prints the tarball path.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

shopt -s nullglob
tarballs=(dist/steadfast-*.tgz)
[ "${#tarballs[@]}" -eq 1 ] || { echo "install-tarball: expected one dist/steadfast-*.tgz; run 'make build'" >&2; exit 1; }
# A same-version tarball with new contents must replace the old install, so start clean.
prefix="${1:-tests}"
rm -rf "$prefix/node_modules/steadfast" "$prefix/node_modules/.package-lock.json"
npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "$STEADFAST_ROOT/${tarballs[0]}" >/dev/null
echo "$STEADFAST_ROOT/${tarballs[0]}"
