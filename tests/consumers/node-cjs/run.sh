#!/usr/bin/env bash
# Node 24 CommonJS consumer: `require('steadfast')` (require(esm)) in a "type": "commonjs" project that
# installed the packed tarball; withRetry + CircuitBreaker. See consumer.cjs. Fails on any warning
# (an ExperimentalWarning for require(esm) would reach every CommonJS user).
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(new_consumer node-cjs commonjs)"
install_into "$dir"
cp "$here/consumer.cjs" "$dir/"
log="$dir/output.log"
(cd "$dir" && node consumer.cjs) 2>&1 | tee "$log"
expect_line "$log" '^node-cjs: [1-9][0-9]* assertions' 'the assertion count'
if grep -q 'Warning' "$log"; then echo "node-cjs: Node printed a warning (see above)" >&2; exit 1; fi
