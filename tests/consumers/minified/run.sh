#!/usr/bin/env bash
# A minified production bundle (esbuild --minify, which renames every class binding) of a Node app that
# imports steadfast by name: every error's `name` must still be its class name (string literals on the
# prototypes, not `new.target.name`), `instanceof` and the brand guard must hold, and a fresh
# CircuitOpenError per rejection must take a tag. (tests/browser/csp.test.mjs checks Vite's minified
# browser bundle the same way.)
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
esbuild="$STEADFAST_ROOT/node_modules/.bin/esbuild"
[ -x "$esbuild" ] || { echo "minified: $esbuild missing; run 'make setup'" >&2; exit 1; }
dir="$(new_consumer minified module)"
install_into "$dir"
cp "$here"/app.mjs "$dir/"
cd "$dir"
mkdir -p dist
"$esbuild" app.mjs --bundle --minify --platform=node --format=esm --target=node22 --outfile=dist/app.min.mjs --log-level=warning
# The Node loader reads the .wasm next to the module that contains it: ship it next to the bundle.
cp node_modules/steadfast/steadfast_core_bg.wasm dist/
if grep -q 'class CircuitOpenError' dist/app.min.mjs; then echo "minified: the bundle kept class names; not a real minified build" >&2; exit 1; fi
rm -rf node_modules # the bundle must stand alone
node dist/app.min.mjs | tee run.log
expect_line run.log '^minified: [1-9][0-9]* assertions' 'the assertion count'
