#!/usr/bin/env bash
# OpenTelemetry consumer: `steadfast/otel` with @opentelemetry/api as the (optional) peer dependency and the
# OpenTelemetry SDK's in-memory exporters (InMemorySpanExporter, InMemoryMetricExporter): a traced checkout
# that retries, gives up, trips a breaker, meets an empty budget and replays a key must leave the expected
# span events and metric points. Also: the main entry installs and works WITHOUT @opentelemetry/api
# (npm does not install an optional peer), and otel.d.ts type-checks against the real API types.
set -euo pipefail
# shellcheck source=tests/consumers/support/consumer.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/consumer.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Without the peer: the main entry must not need it.
bare="$(new_consumer otel-absent module)"
install_into "$bare"
[ ! -d "$bare/node_modules/@opentelemetry/api" ] || { echo "otel: @opentelemetry/api was installed though optional" >&2; exit 1; }
(cd "$bare" && node --input-type=module -e "
  const s = await import('steadfast');
  if (typeof s.events.onRetry !== 'function') throw new Error('no events');
  const otel = await import('steadfast/otel').then(() => 'loaded', (e) => e.code);
  if (otel !== 'ERR_MODULE_NOT_FOUND') throw new Error('steadfast/otel without the peer: ' + otel);
  console.log('otel: the main entry works without @opentelemetry/api; steadfast/otel needs it (' + otel + ')');
")

dir="$(new_consumer otel module)"
install_into "$dir" @opentelemetry/api@1.9.0 @opentelemetry/sdk-trace-base@2.12.1 @opentelemetry/sdk-metrics@2.12.1 \
  @opentelemetry/context-async-hooks@2.12.1
cp "$here"/consumer.mjs "$here"/types.ts "$dir/"
cd "$dir"
node consumer.mjs | tee run.log
expect_line run.log '^otel: [1-9][0-9]* assertions' 'the assertion count'

printf '{ "compilerOptions": { "strict": true, "exactOptionalPropertyTypes": true, "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022", "lib": ["es2022"], "types": [], "noEmit": true, "skipLibCheck": false }, "files": ["types.ts"] }\n' >tsconfig.json
"$STEADFAST_ROOT/node_modules/.bin/tsc" -p tsconfig.json
echo "otel: otel.d.ts type-checks with @opentelemetry/api's types"
