#!/usr/bin/env bash
# The API reference (`scripts/test.sh docs`, a step of `make test`): TypeDoc (a root dev dependency)
# generates HTML from the package's own declarations — pkg-template/index.d.ts (and the types/*.d.ts it
# re-exports) and sim.d.ts — into target/api/index.html. Options: scripts/docs/typedoc.json (which
# treats every warning as an error: a broken {@link}, a referenced type that is not exported) and
# scripts/docs/tsconfig.json (strict, no dom lib, like the TypeScript consumer test). So the reference
# is generated from what ships, never written by hand, and a commit that breaks it fails CI.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

typedoc="$STEADFAST_ROOT/node_modules/.bin/typedoc"
[ -x "$typedoc" ] || { echo "docs: $typedoc missing; run 'make setup'" >&2; exit 1; }
rm -rf target/api
"$typedoc" --options scripts/docs/typedoc.json --logLevel Warn
[ -f target/api/index.html ] || { echo "docs: TypeDoc wrote no target/api/index.html" >&2; exit 1; }
echo "docs: API reference in target/api/index.html ($(find target/api -name '*.html' | wc -l) pages, $("$typedoc" --version | grep -m1 TypeDoc))"
