#!/usr/bin/env bash
# Node 24 ESM consumer: `import { ... } from 'steadfast'` in a "type": "module" project that installed the
# packed tarball; a full chargeCustomer run with a replay. See consumer.mjs.
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(new_consumer node-esm module)"
install_into "$dir"
cp "$here/consumer.mjs" "$dir/"
log="$dir/output.log"
(cd "$dir" && node consumer.mjs) 2>&1 | tee "$log"
expect_line "$log" '^node-esm: [1-9][0-9]* assertions' 'the assertion count'
if grep -q 'Warning' "$log"; then echo "node-esm: Node printed a warning (see above)" >&2; exit 1; fi
