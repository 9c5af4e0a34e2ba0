#!/usr/bin/env bash
# Vitest consumer: Vitest 4 with the package INLINED (`server.deps.inline: ['steadfast']`, so Vite
# transforms it like app code) under jsdom and under happy-dom, plus plain Node. jsdom replaces the
# global URL, which once broke the Node loader ("The URL must be of scheme file"). The test files are
# also the testing guide's examples (docs/testing.md): Vitest fake timers and @sinonjs/fake-timers
# driving withRetry, a breaker's cooldown and a checkout charge, with no real waiting.
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(new_consumer vitest module)"
install_into "$dir" vitest@4.1.12 jsdom@27.4.0 happy-dom@20.14.6 @sinonjs/fake-timers@15.5.0
cp "$here"/*.test.js "$here"/vitest.config.js "$dir/"
cd "$dir"
grep -q '"version": "4\.' node_modules/vitest/package.json || { echo "vitest: expected Vitest 4" >&2; exit 1; }

for env in jsdom happy-dom node; do
  NO_COLOR=1 STEADFAST_VITEST_ENV=$env npx vitest run --reporter=verbose 2>&1 | tee "vitest-$env.log"
  expect_line "vitest-$env.log" "Tests +[1-9][0-9]* passed" "passing tests ($env)"
  if grep -Eq "Tests .*(failed|skipped)" "vitest-$env.log"; then echo "vitest: failures or skips under $env" >&2; exit 1; fi
  expect_line "vitest-$env.log" "environment: $env" "the $env environment in use"
done
