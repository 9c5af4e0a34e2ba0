#!/usr/bin/env bash
# Rewrite the dialect table of docs/checkout-contract.md from the core's data (src/core/dialect.rs).
# `cargo test --test core_dialect` (part of the native tests) fails when the file is out of date.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
STEADFAST_WRITE_DIALECT_TABLE=1 cargo test --quiet --test core_dialect
node_modules/.bin/prettier --write --log-level warn docs/checkout-contract.md
cargo test --quiet --test core_dialect
echo "dialect-table: docs/checkout-contract.md rewritten"
