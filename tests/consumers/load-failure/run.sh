#!/usr/bin/env bash
# A wasm that cannot load (here: the installed .wasm truncated, as a bad deploy or a CDN rule would leave
# it) must not take the importing program down: `import 'steadfast'` and `require('steadfast')` succeed,
# `ready` rejects with WasmUnavailableError naming the cause, every call that needs the core throws or
# rejects with one, code that does not need it (error classes, isSteadfastError) works, and init(bytes)
# recovers with a good module.
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(new_consumer load-failure module)"
install_into "$dir"
cp "$here"/consumer.mjs "$here"/consumer.cjs "$dir/"
cd "$dir"
wasm=node_modules/steadfast/steadfast_core_bg.wasm
cp "$wasm" good.wasm
head -c 100 good.wasm >"$wasm"

node consumer.mjs | tee run.log
expect_line run.log '^load-failure: [1-9][0-9]* assertions' 'the ESM assertion count'
node consumer.cjs | tee run-cjs.log
expect_line run-cjs.log '^load-failure \(require\): [1-9][0-9]* assertions' 'the require() assertion count'
