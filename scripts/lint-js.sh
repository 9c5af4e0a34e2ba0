#!/usr/bin/env bash
# The JS formatter (Prettier, .prettierrc.json) and linter (ESLint, eslint.config.js), as a step of
# `make test` (scripts/test.sh lint-js): the field's usual pair; both are root dev dependencies.
#
# Checked: every JS/TS file of the project (Prettier: the globs below; ESLint: the same folders, with
# eslint.config.js's ignores for build output). To fix what it reports:
#
#   npx prettier --write <the globs below> && npx eslint --fix pkg-template tests benches examples scripts
#
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

PRETTIER=('pkg-template/**/*.{js,mjs,ts}' 'tests/**/*.{js,mjs,cjs,ts,cts}' 'benches/**/*.mjs' 'examples/**/*.{js,mjs}' 'scripts/*.mjs' eslint.config.js)
ESLINT=(pkg-template tests benches examples scripts eslint.config.js)
bin="$STEADFAST_ROOT/node_modules/.bin"
[ -x "$bin/prettier" ] && [ -x "$bin/eslint" ] || { echo "lint-js: prettier/eslint missing; run 'make setup'" >&2; exit 1; }
"$bin/prettier" --check --log-level warn "${PRETTIER[@]}"
"$bin/eslint" --max-warnings 0 "${ESLINT[@]}"
echo "lint-js: prettier and eslint clean on $(git ls-files '*.js' '*.mjs' '*.cjs' '*.ts' '*.cts' | wc -l) tracked files"
