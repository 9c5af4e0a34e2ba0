#!/usr/bin/env bash
# Client-library consumer: the HTTP clients and payment SDKs users call from their gateway function (axios,
# got, ky, node-fetch, undici, superagent, stripe, the AWS SDK v3, braintree, @adyen/api-library), pinned,
# installed beside the packed steadfast, driven against a faulty server on 127.0.0.1 (server.mjs: refused,
# DNS failure, reset after the request was read, hang-up, client timeout, 500/502/503/504, 429 with
# Retry-After, 402, 409, a 200 cut off mid-body). Every library × fault's raw error goes through
# isTransientError and `store.run(key, () => gateway())`, and tests/js/client-error-shapes.test.mjs's
# verdicts must hold for the live errors as for the recorded ones.
#
# RECORD=1 also rewrites tests/fixtures/client-error-shapes.json (the shapes tests/js reads) from this run.
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fixture="$STEADFAST_ROOT/tests/fixtures/client-error-shapes.json"

dir="$(new_consumer client-errors module)"
install_into "$dir" axios@1.21.1 got@16.1.0 ky@2.1.0 node-fetch@3.3.2 undici@8.14.0 superagent@10.4.2 stripe@23.2.0 \
  @aws-sdk/client-s3@3.1178.0 braintree@3.40.0 @adyen/api-library@32.1.0
cp "$here"/server.mjs "$here"/record.mjs "$dir/"
mkdir -p "$dir/tests/js" "$dir/tests/fixtures"
cp "$STEADFAST_ROOT/tests/js/client-error-shapes.test.mjs" "$dir/tests/js/"
cd "$dir"
node record.mjs --write "$dir/tests/fixtures/client-error-shapes.json" | tee run.log
expect_line run.log '^record: 12 libraries$' 'every library recorded'
# The live shapes, judged by the same test as the committed ones.
node --test tests/js/client-error-shapes.test.mjs
if [ "${RECORD:-}" = 1 ]; then
  cp "$dir/tests/fixtures/client-error-shapes.json" "$fixture"
  echo "client-errors: rewrote $fixture"
fi
