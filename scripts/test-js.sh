#!/usr/bin/env bash
# node:test suites in tests/js/ (files named *.test.mjs / *.test.js / *.test.cjs), on Node 24, against the
# BUILT package imported BY NAME: `import { ... } from 'steadfast'` goes through its package.json exports
# exactly as in a user's project.
#
# How: scripts/install-tarball.sh `npm install`s the tarball that `make build` packed (dist/steadfast-*.tgz,
# i.e. only what `files` ships) into tests/node_modules/ (git-ignored). Node resolves the bare name 'steadfast' from
# tests/js/*.mjs upward, finds tests/node_modules/steadfast, and picks index.node.js by the `node`
# condition. Root dev dependencies (fast-check, ...) resolve from ./node_modules one level further up.
# Not a symlink to pkg/: that would let a file missing from `files` pass here and break for users.
#
# Before the suites, a package smoke check: `import` and `require()` of 'steadfast' both load on Node 24.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

tarball="$(scripts/install-tarball.sh)"
echo "test-js: installed ${tarball#"$STEADFAST_ROOT"/} into tests/node_modules/steadfast"

# Package smoke check, from tests/js so that resolution is the one the suites get.
mkdir -p tests/js
# shellcheck disable=SC2016 # the single-quoted JS holds JS template literals, not shell expansions
(
  cd tests/js
  node --input-type=module -e '
    const m = await import("steadfast");
    if (Object.keys(m).length === 0) throw new Error("import(\"steadfast\") has no exports");
    console.log(`test-js: import("steadfast") ok on Node ${process.versions.node}: ${Object.keys(m).length} exports`);'
  node -e '
    const m = require("steadfast");
    if (Object.keys(m).length === 0) throw new Error("require(\"steadfast\") has no exports");
    console.log(`test-js: require("steadfast") ok (require(esm)): ${Object.keys(m).length} exports`);'
)

mapfile -t files < <(find tests/js -type f \( -name '*.test.mjs' -o -name '*.test.js' -o -name '*.test.cjs' \) \
  -not -path '*/node_modules/*' | sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "test-js: no tests/js/*.test.mjs found (a step that tests nothing must not pass)" >&2
  exit 1
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# A wall-clock guard: a suite that leaks a handle (server, timer) never exits, and CI would wait it out.
limit="${STEADFAST_JS_TIMEOUT:-900}"
rc=0
timeout --kill-after=10 "$limit" node --test --test-reporter=spec "${files[@]}" 2>&1 | tee "$log" || rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "test-js: node --test did not finish within ${limit}s (a test file that never exits?)" >&2
fi
[ "$rc" -eq 0 ] || exit "$rc"
# node --test exits non-zero on a failure; also refuse a run that executed nothing.
passed="$(sed -n 's/^ℹ pass \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)"
if [ "${passed:-0}" -eq 0 ]; then
  echo "test-js: node --test ran NO passing test" >&2
  exit 1
fi
