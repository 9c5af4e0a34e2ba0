// Deno WITHOUT --allow-read: the core cannot be read from node_modules. The import must still succeed,
// a module-level client must still be made, `ready` rejects with a WasmUnavailableError that names the
// permission, and a charge resolves `unavailable` (reason 'wasm') instead of rejecting.
import * as steadfast from 'steadfast';

const client = steadfast.createCheckoutClient({ endpoint: `${globalThis.Deno.args[0]}/charge` });
const error = await steadfast.ready.then(
  () => undefined,
  (e) => e,
);
const outcome = await client.charge({ amountCents: 500, currency: 'eur' }, { idempotencyKey: 'deno-no-read' });
console.log(
  JSON.stringify({
    label: 'deno-no-read',
    checks: [
      {
        name: 'typed error names --allow-read',
        ok: error instanceof steadfast.WasmUnavailableError && error.reason === 'permission' && /--allow-read/.test(error.message),
        detail: `${error?.name} (${error?.reason}): ${error?.message}`,
      },
      { name: 'charge resolves unavailable/wasm', ok: outcome.status === 'unavailable' && outcome.reason === 'wasm', detail: JSON.stringify(outcome) },
    ],
  }),
);
