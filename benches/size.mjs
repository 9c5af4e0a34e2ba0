// Case 7: bytes a user ships. The .wasm and the JS as a bundler emits them (esbuild --bundle --minify
// of the browser entry, so the wasm-bindgen glue and every lib/ file are counted once, minified), next
// to cockatiel, opossum and p-retry bundled the same way. gzip -9 and brotli (quality 11), via node:zlib.
// The checkout-page rows are a production Vite build (vite from the root devDependencies, default
// target) of a page that imports createCheckoutClient and newIdempotencyKey: every JS chunk and
// every .wasm asset Vite emits, as the page downloads them.
import { readFileSync, readdirSync, mkdirSync, copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import { build } from 'esbuild';
import { build as viteBuild } from 'vite';
import { BENCH_DIR, INSTALLED, ROOT } from './common.mjs';
import { cutToPage } from './page-module.mjs';

const OUT = join(BENCH_DIR, '.out');

export const measure = (buf) => ({
  raw: buf.length,
  gz: gzipSync(buf, { level: 9 }).length,
  br: brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length } }).length,
});

async function bundle(name, contents, platform = 'browser', external = []) {
  mkdirSync(OUT, { recursive: true });
  const outfile = join(OUT, `${name}.min.js`);
  await build({
    stdin: { contents, resolveDir: BENCH_DIR, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform,
    external,
    outfile,
    logLevel: 'error',
  });
  return readFileSync(outfile);
}

const sum = (ms) => ms.reduce((t, m) => ({ raw: t.raw + m.raw, gz: t.gz + m.gz, br: t.br + m.br }), { raw: 0, gz: 0, br: 0 });

// The page: one key per order, made at load; Pay charges it through the checkout client.
const CHECKOUT_PAGE = `import { createCheckoutClient, newIdempotencyKey } from 'steadfast';
const client = createCheckoutClient({ endpoint: '/v1/charges' });
const key = newIdempotencyKey();
document.querySelector('#pay').addEventListener('click', async () => {
  const outcome = await client.charge({ amountCents: 4999, currency: 'usd' }, { idempotencyKey: key });
  document.querySelector('#outcome').textContent = outcome.status;
});
`;

/** `vite build` of CHECKOUT_PAGE; returns the emitted JS chunks and .wasm assets, measured. */
export async function checkoutPage() {
  const app = join(OUT, 'checkout-page');
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'index.html'), '<!doctype html><button id="pay">Pay</button><p id="outcome"></p><script type="module" src="./main.js"></script>\n');
  writeFileSync(join(app, 'main.js'), CHECKOUT_PAGE);
  // benches/.out/checkout-page resolves 'steadfast' from benches/node_modules: the installed tarball.
  await viteBuild({ root: app, configFile: false, logLevel: 'error', build: { outDir: 'dist', emptyOutDir: true } });
  const assets = join(app, 'dist', 'assets');
  const files = readdirSync(assets);
  const measured = (ext) => files.filter((f) => f.endsWith(ext)).map((f) => measure(readFileSync(join(assets, f))));
  const js = measured('.js');
  const wasm = measured('.wasm');
  if (js.length === 0 || wasm.length === 0) throw new Error(`size: the Vite build emitted no JS or no .wasm: ${files.join(', ')}`);
  const chunks = files.filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(assets, f), 'utf8'));
  return { js: sum(js), wasm: sum(wasm), files, chunks };
}

/**
 * Where the checkout page's JS comes from: esbuild --bundle --minify of the same two imports with a
 * metafile, minified bytes per input file (the gzip of the whole is shared, so only raw bytes split).
 * Rows: [file inside the package, minified bytes], largest first.
 */
export async function checkoutJsByFile() {
  const r = await build({
    stdin: {
      contents: `export { createCheckoutClient, newIdempotencyKey } from ${JSON.stringify(join(INSTALLED, 'index.browser.js'))}`,
      resolveDir: BENCH_DIR,
      loader: 'js',
    },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    metafile: true,
    outfile: join(OUT, 'checkout-by-file.min.js'),
    logLevel: 'error',
  });
  const [output] = Object.values(r.metafile.outputs);
  return Object.entries(output.inputs)
    .map(([file, v]) => [file.slice(file.lastIndexOf('steadfast/') + 'steadfast/'.length), v.bytesInOutput])
    .filter(([, bytes]) => bytes > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Rows: [label, {raw, gz, br}]. */
export async function sizes() {
  const rows = [];
  const wasm = readFileSync(join(INSTALLED, 'steadfast_core_bg.wasm'));
  const w = measure(wasm);
  rows.push(['steadfast .wasm', w]);
  const glue = await bundle('steadfast-glue', `export * from 'steadfast/../steadfast_core.js'`.replace('steadfast/..', INSTALLED));
  rows.push(['steadfast wasm-bindgen glue (min)', measure(glue)]);
  const all = await bundle('steadfast', `export * from ${JSON.stringify(join(INSTALLED, 'index.browser.js'))}`);
  const a = measure(all);
  // Next to the bundle, as a bundler would emit it (the browser start-up bench serves both).
  copyFileSync(join(INSTALLED, 'steadfast_core_bg.wasm'), join(OUT, 'steadfast_core_bg.wasm'));
  rows.push(['steadfast JS, whole API bundled (min)', a]);
  rows.push(['steadfast .wasm + whole JS bundle', { raw: w.raw + a.raw, gz: w.gz + a.gz, br: w.br + a.br }]);
  const pipe = await bundle(
    'steadfast-pipeline',
    `export { withRetry, CircuitBreaker, IdempotencyStore, chargeCustomer } from ${JSON.stringify(join(INSTALLED, 'index.browser.js'))}`,
  );
  const p = measure(pipe);
  rows.push(['steadfast JS, pipeline imports only (min)', p]);
  rows.push(['steadfast .wasm + pipeline bundle', { raw: w.raw + p.raw, gz: w.gz + p.gz, br: w.br + p.br }]);
  const page = await checkoutPage();
  rows.push(['checkout page (Vite build): JS', page.js]);
  rows.push(['checkout page (Vite build): .wasm', page.wasm]);
  rows.push(['checkout page (Vite build): JS + .wasm', sum([page.js, page.wasm])]);
  // The floor of a module made for that page: the shipped .wasm cut to the exports its JS reads.
  if (page.chunks.length !== 1) throw new Error(`size: expected the checkout page in one JS chunk, got ${page.chunks.length}`);
  const cut = cutToPage(wasm, page.chunks[0]);
  const c = measure(cut.bytes);
  rows.push([`checkout page: .wasm cut to the ${cut.kept} of ${cut.of} exports its JS reads`, c]);
  rows.push(['checkout page: JS + that .wasm', sum([page.js, c])]);
  rows.push(['cockatiel 4, whole API bundled (min)', measure(await bundle('cockatiel', `export * from 'cockatiel'`))]);
  rows.push([
    'cockatiel 4, retry+breaker+wrap (min)',
    measure(
      await bundle(
        'cockatiel-rb',
        `export { retry, circuitBreaker, wrap, handleAll, ExponentialBackoff, SamplingBreaker, ConsecutiveBreaker } from 'cockatiel'`,
      ),
    ),
  ]);
  rows.push(['opossum, published dist/opossum.min.js', measure(readFileSync(join(ROOT, 'node_modules/opossum/dist/opossum.min.js')))]);
  rows.push(['opossum, bundled for Node (min, events external)', measure(await bundle('opossum', `export { default } from 'opossum'`, 'node', ['events']))]);
  rows.push(['p-retry, bundled (min)', measure(await bundle('p-retry', `export { default } from 'p-retry'`))]);
  return rows;
}
