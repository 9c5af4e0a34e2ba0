#!/usr/bin/env bash
# The package beyond Node and the three browser engines, from the PACKED tarball (dist/steadfast-*.tgz):
#
#   scripts/test-runtimes.sh lint   publint --strict and @arethetypeswrong/cli on the tarball (types of
#                                   every entry under node10, node16 ESM and bundler resolution)
#   scripts/test-runtimes.sh run    tests/runtimes/run.mjs: the same program in Deno, Bun, a Bun
#                                   single-file executable, a Cloudflare Worker (wrangler dev → workerd)
#                                   and a Next.js app (Turbopack and webpack; client component in
#                                   headless Chromium, Node route, edge route), all local (127.0.0.1);
#                                   and the fault matrix (tests/runtimes/faults.js: real network faults,
#                                   the key's verdict for each) in Node, Deno, Bun, workerd and the
#                                   Next.js Node and edge routes
#   scripts/test-runtimes.sh        both
#
# The runtimes and linters (tests/runtimes/tools.json: Deno, Bun, wrangler, Next.js + React, publint,
# attw; ~800 MB) come from npm into STEADFAST_RUNTIMES (default .tools/runtimes), installed here when
# tools.json changed or a binary is missing — a fresh machine (CI) needs nothing else. They are not root
# dev dependencies: only this step uses them.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

what="${1:-all}"
case "$what" in all | lint | run) ;; *) echo "test-runtimes: unknown part '$what' (all | lint | run)" >&2; exit 2 ;; esac

STEADFAST_RUNTIMES="${STEADFAST_RUNTIMES:-$STEADFAST_TOOLS/runtimes}"
export STEADFAST_RUNTIMES

shopt -s nullglob
tarballs=("$STEADFAST_ROOT"/dist/steadfast-*.tgz)
[ "${#tarballs[@]}" -eq 1 ] || { echo "test-runtimes: expected one dist/steadfast-*.tgz; run 'make build'" >&2; exit 1; }
STEADFAST_TARBALL="${tarballs[0]}"
export STEADFAST_TARBALL

# --- the tools, from npm, into the cache this script owns ---------------------------------------------
manifest=tests/runtimes/tools.json
stamp="$STEADFAST_RUNTIMES/.tools.sha256"
want="$(sha256sum "$manifest" | cut -d' ' -f1)"
bins=(node_modules/@deno/linux-x64-glibc/deno node_modules/@oven/bun-linux-x64/bin/bun node_modules/.bin/wrangler
  node_modules/.bin/next node_modules/.bin/publint node_modules/.bin/attw)
present=1
for b in "${bins[@]}"; do [ -x "$STEADFAST_RUNTIMES/$b" ] || present=0; done
if [ "$present" -eq 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "test-runtimes: tools in ${STEADFAST_RUNTIMES#"$STEADFAST_ROOT"/} ok"
else
  t=$SECONDS
  mkdir -p "$STEADFAST_RUNTIMES"
  cp "$manifest" "$STEADFAST_RUNTIMES/package.json"
  npm install --prefix "$STEADFAST_RUNTIMES" --no-audit --no-fund --loglevel=error >/dev/null
  for b in "${bins[@]}"; do [ -x "$STEADFAST_RUNTIMES/$b" ] || { echo "test-runtimes: $b missing after npm install" >&2; exit 1; }; done
  echo "$want" >"$stamp"
  echo "test-runtimes: installed $manifest into ${STEADFAST_RUNTIMES#"$STEADFAST_ROOT"/} in $((SECONDS - t))s"
fi
tool() { echo "$STEADFAST_RUNTIMES/node_modules/.bin/$1"; }

# --- lint: publint and attw on what npm ships ------------------------------------------------------------
if [ "$what" != run ]; then
  echo "test-runtimes: publint --strict ${STEADFAST_TARBALL#"$STEADFAST_ROOT"/}"
  # publint packs a directory itself: give it the tarball's contents, unpacked.
  unpacked="$(mktemp -d)"
  trap 'rm -rf "$unpacked"' EXIT
  tar -xzf "$STEADFAST_TARBALL" -C "$unpacked"
  "$(tool publint)" --strict --pack false "$unpacked/package"
  # The one rule ignored, cjs-resolves-to-esm: TypeScript's node16 CommonJS mode models a Node that
  # cannot require() ES modules. Node >= 22.12 (the package's `engines`) can (require(esm)), and the
  # Node entry has no top-level await, so `require('steadfast')` works (scripts/test-js.sh checks it).
  # Every other problem, under every moduleResolution, fails the step.
  echo "test-runtimes: attw ${STEADFAST_TARBALL#"$STEADFAST_ROOT"/} --ignore-rules cjs-resolves-to-esm"
  "$(tool attw)" "$STEADFAST_TARBALL" --ignore-rules cjs-resolves-to-esm --format table-flipped --no-emoji --no-color
fi

# --- run: the program in every runtime ---------------------------------------------------------------------
if [ "$what" != lint ]; then
  [ -n "$STEADFAST_CHROMIUM" ] || { echo "test-runtimes: chromium not found; run 'make setup'" >&2; exit 1; }
  log="$(mktemp)"
  rc=0
  timeout --kill-after=10 "${STEADFAST_RUNTIMES_TIMEOUT:-1500}" node --test --test-reporter=spec tests/runtimes/run.mjs 2>&1 | tee "$log" || rc=$?
  [ "$rc" -eq 0 ] || exit "$rc"
  # Every runtime's test must have run and passed (node --test exits 0 for a file with no tests).
  passed="$(sed -n 's/^ℹ pass \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)"
  rm -f "$log"
  planned=8 # Deno, Deno (connect.mjs), Node and Deno (faults.js), Bun, Workers, Next.js (Turbopack), Next.js (webpack), the summary
  if [ "${passed:-0}" -ne "$planned" ]; then
    echo "test-runtimes: ${passed:-0} tests passed, $planned planned" >&2
    exit 1
  fi
fi
