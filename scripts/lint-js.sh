#!/usr/bin/env bash
# The JS formatter (Prettier, .prettierrc.json) and linter (ESLint, eslint.config.js), as a step of
# `make test` (scripts/test.sh lint-js): the field's usual pair; both are root dev dependencies.
#
# COVERED is what is checked. It starts with the files written to this style; the tree was not
# reformatted in one sweep while other branches were open (a sweep would conflict with every one of
# them). Once they are merged, format everything once and widen COVERED to the whole tree:
#
#   npx prettier --write 'pkg-template/**/*.{js,mjs,ts}' 'tests/**/*.{js,mjs,cjs,ts,cts}' 'benches/**/*.mjs' 'examples/**/*.{js,mjs}' 'scripts/*.mjs' eslint.config.js
#   npx eslint --fix pkg-template tests benches examples scripts
#
# then set COVERED=(pkg-template tests benches examples scripts eslint.config.js) below.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

COVERED=(
  eslint.config.js
  pkg-template/lib/idempotency-key.js
  pkg-template/lib/breaker-options.js
  benches/ab.mjs
  benches/records.mjs
  tests/js/shared-tamper.test.mjs
  tests/js/shared-redis-limits.test.mjs
  tests/js/shared-idempotency-twin.test.mjs
  tests/browser/shared-tamper.test.mjs
)
bin="$STEADFAST_ROOT/node_modules/.bin"
[ -x "$bin/prettier" ] && [ -x "$bin/eslint" ] || { echo "lint-js: prettier/eslint missing; run 'make setup'" >&2; exit 1; }
"$bin/prettier" --check --log-level warn "${COVERED[@]}"
"$bin/eslint" --max-warnings 0 "${COVERED[@]}"
echo "lint-js: prettier and eslint clean on ${#COVERED[@]} files"
