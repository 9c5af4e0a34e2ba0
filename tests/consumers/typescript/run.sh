#!/usr/bin/env bash
# TypeScript consumer (typescript 5.9 from the root devDependencies, @types/node@24 from npm), `tsc --noEmit
# --strict` with module nodenext against the packed tarball's index.d.ts, in three environments:
#   es2022  lib es2022, no @types: the declarations need neither `dom` nor Node's types
#   node    lib es2022 + @types/node (a Node-only project), plus a .cts file that require()s the package
#   dom     lib es2022 + dom (a browser project)
# Each compiles every-export.ts (uses EVERY export; check-exports.mjs proves it) and must FAIL on
# type-errors.ts with exactly the marked errors (check-errors.mjs). Then every-export.ts runs on Node 24.
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tsc="$STEADFAST_ROOT/node_modules/.bin/tsc"
[ -x "$tsc" ] || { echo "typescript: $tsc missing; run 'make setup'" >&2; exit 1; }
"$tsc" --version | grep -q '^Version 5\.' || { echo "typescript: expected TypeScript 5, got $("$tsc" --version)" >&2; exit 1; }

dir="$(new_consumer typescript module)"
install_into "$dir" "@types/node@24"
cp "$here"/*.ts "$here"/*.cts "$here"/tsconfig.*.json "$here"/*.mjs "$dir/"
cd "$dir"

node check-exports.mjs

for env in es2022 node dom; do
  # The consumer must compile cleanly.
  if ! "$tsc" -p "tsconfig.$env.json" >"tsc-$env.log" 2>&1; then
    cat "tsc-$env.log"
    echo "typescript: every-export.ts does not compile ($env)" >&2
    exit 1
  fi
  echo "typescript: every-export.ts compiles ($env)"

  # The deliberate mistakes must not.
  printf '{ "extends": "./tsconfig.%s.json", "files": ["type-errors.ts"] }\n' "$env" >"tsconfig.errors-$env.json"
  if "$tsc" -p "tsconfig.errors-$env.json" --pretty false >"tsc-errors-$env.log" 2>&1; then
    echo "typescript: type-errors.ts COMPILED ($env): the declarations accept what they must reject" >&2
    exit 1
  fi
  node check-errors.mjs "tsc-errors-$env.log" "$env"
done

# Plain `strict` (no exactOptionalPropertyTypes): the README's fetch-with-signal examples as written.
for env in dom node; do
  if ! "$tsc" -p "tsconfig.fetch-$env.json" >"tsc-fetch-$env.log" 2>&1; then
    cat "tsc-fetch-$env.log"
    echo "typescript: fetch-signal.ts does not compile ($env): ctx.signal is not assignable to fetch" >&2
    exit 1
  fi
  echo "typescript: fetch-signal.ts compiles ($env)"
done

node --no-warnings run.mjs | tee run.log
expect_line run.log '^typescript: every-export.ts ran, [1-9][0-9]* assertions' 'the assertion count'
