// What the main .wasm spends its bytes on (issue 15, target 3): a twiggy-style breakdown without
// twiggy. Re-runs wasm-bindgen on the raw cargo output (names kept), the build's panic traps
// (scripts/wasm-trap-panics.mjs) and wasm-opt with the build's
// flags plus -g (keep the name section), then groups function bodies by their Rust path and prints
// raw bytes, the share, and gzip -9 of each group's bodies on their own (gzip of a group alone
// overstates it slightly: the groups share a dictionary in the real file). Names are those of the
// outer function after wasm-opt's inlining, so a group holds what was inlined into it. Run after `make build`:
//
//   node benches/wasm-breakdown.mjs [--top=N] [--wasm=<raw cargo .wasm>]
//
// --wasm: break down another module the same way, e.g. the Rust app's
// (target/rust-checkout/wasm32-unknown-unknown/release/rust_checkout.wasm after examples/rust-checkout/build.sh).
//
//   node benches/wasm-breakdown.mjs --without=hedge,limiter,quota
//
// --without: what leaving src/wasm modules out of the npm module would buy (the bytes a page saves if
// they were loaded only when named). Builds a copy of the crate with each named module, and then all
// of them, compiled out (`#[cfg(any())]` on its `mod` and `pub use` lines of src/wasm/mod.rs, and its
// layouts in src/wasm/wire.rs's vocabulary left empty; the
// working tree is not touched) into target/variant, with the build's wasm-bindgen and wasm-opt flags,
// and prints the .wasm gzip -9 and the esbuild-minified glue gzip -9 next to the unmodified crate's.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT, table } from './common.mjs';
import { trapPanics } from '../scripts/wasm-trap-panics.mjs';
import { readModule } from '../scripts/wasm-module.mjs';

const without = process.argv.find((a) => a.startsWith('--without='))?.slice(10);
if (without !== undefined) {
  await compareWithout(without.split(',').filter(Boolean));
  process.exit(0);
}

const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 25);
const raw = process.argv.find((a) => a.startsWith('--wasm='))?.slice(7) ?? join(ROOT, 'target/wasm32-unknown-unknown/release/steadfast.wasm');
statSync(raw);
// The build's flags (scripts/build.sh: WASM_OPT_FLAGS, default below).
const flags = process.env.WASM_OPT_FLAGS ?? '-Oz --converge --low-memory-unused --strip-producers --strip-target-features';
const dir = mkdtempSync(join(tmpdir(), 'sf-wasm-'));
try {
  execFileSync('wasm-bindgen', ['--target', 'web', '--encode-into', 'always', '--omit-default-module-path', '--out-dir', dir, '--out-name', 'm', raw]);
  // The npm module's panic entry points become traps, as scripts/build.sh does (not another --wasm's).
  if (!process.argv.some((a) => a.startsWith('--wasm='))) writeFileSync(join(dir, 'm_bg.wasm'), trapPanics(readFileSync(join(dir, 'm_bg.wasm'))));
  const opt = process.env.STEADFAST_WASM_OPT ?? 'wasm-opt';
  execFileSync(opt, [...flags.split(/\s+/).filter(Boolean), '-g', join(dir, 'm_bg.wasm'), '-o', join(dir, 'named.wasm')]);
  const bytes = readFileSync(join(dir, 'named.wasm'));
  report(bytes, flags);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function report(buf, flags) {
  const LABELS = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'];
  const module = readModule(buf);
  const names = module.names;
  const sections = module.sections.map((s) => [s.id === 0 ? `custom "${s.custom}"` : (LABELS[s.id] ?? `#${s.id}`), s.end - s.start]);
  const bodies = module.bodies.map((b) => ({ index: b.index, body: buf.subarray(b.start, b.end) }));
  const group = (name) => {
    if (name === undefined) return '(unnamed)';
    let n = name
      .replace(/\[[0-9a-f]{16}\]/g, '')
      .replace(/^<(.+?) as .*$/, '$1')
      .replace(/^_?<?/, '');
    if (/^(dlmalloc|talc|__rust_|__rdl|__rg|alloc::alloc)/.test(n) || /malloc|free|realloc/.test(n)) return 'allocator (talc + alloc glue)';
    if (/^wasm_bindgen|__wbg|__wbindgen|externref/.test(n)) return 'wasm-bindgen glue';
    if (/^core::fmt|::fmt$|core::panicking|core::str|core::num::fmt/.test(n)) return 'core::fmt / panics / str';
    const m = n.match(/^steadfast::(core::[a-z_]+|wasm(::[a-z_]+)?|web::[a-z_]+)/);
    if (m) return `steadfast::${m[1]}`;
    const c = n.match(/^([a-z_0-9]+)::([a-z_0-9]+)/);
    return c ? `${c[1]}::${c[2]}` : n.split('::')[0].slice(0, 40);
  };
  const groups = new Map();
  for (const { index, body } of bodies) {
    const g = group(names.get(index));
    const e = groups.get(g) ?? { raw: 0, parts: [], fns: 0 };
    e.raw += body.length;
    e.parts.push(body);
    e.fns++;
    groups.set(g, e);
  }
  const total = buf.length;
  console.log(`main wasm (wasm-opt ${flags} -g; names kept only for this table): ${total} B raw, ${gzipSync(buf, { level: 9 }).length} B gz\n`);
  table([['section', 'bytes', 'share'], ...sections.map(([l, s]) => [l, String(s), `${((100 * s) / total).toFixed(1)} %`])]);
  console.log();
  const rows = [...groups].map(([g, e]) => [
    g,
    String(e.fns),
    String(e.raw),
    `${((100 * e.raw) / total).toFixed(1)} %`,
    String(gzipSync(Buffer.concat(e.parts), { level: 9 }).length),
  ]);
  rows.sort((a, b) => Number(b[2]) - Number(a[2]));
  table([['code, by Rust path', 'functions', 'raw bytes', 'share of file', 'gzip alone'], ...rows.slice(0, top)]);
  const big = bodies
    .map(({ index, body }) => [(names.get(index) ?? `#${index}`).replace(/\[[0-9a-f]{16}\]/g, ''), body.length])
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15);
  console.log();
  table([['largest functions', 'bytes'], ...big.map(([n, s]) => [n.length > 100 ? `${n.slice(0, 97)}...` : n, String(s)])]);
}

/** The --without table: each module compiled out alone, then all of them, against the whole crate. */
async function compareWithout(modules) {
  const { transform } = await import('esbuild');
  const flags = (process.env.WASM_OPT_FLAGS ?? '-Oz --converge --low-memory-unused --strip-producers --strip-target-features').split(/\s+/).filter(Boolean);
  const opt = process.env.STEADFAST_WASM_OPT ?? 'wasm-opt';
  const crate = mkdtempSync(join(tmpdir(), 'sf-crate-'));
  try {
    for (const f of ['Cargo.toml', 'Cargo.lock', 'src']) cpSync(join(ROOT, f), join(crate, f), { recursive: true });
    const modRs = readFileSync(join(ROOT, 'src/wasm/mod.rs'), 'utf8');
    const wireRs = readFileSync(join(ROOT, 'src/wasm/wire.rs'), 'utf8');
    const variants = [[], ...modules.map((m) => [m]), ...(modules.length > 1 ? [modules] : [])];
    const rows = [];
    for (const out of variants) {
      let text = modRs;
      for (const m of out) {
        const before = text;
        text = text.replace(new RegExp(`^(mod ${m};|pub use ${m}::)`, 'gm'), '#[cfg(any())]\n$1');
        if (text === before) throw new Error(`--without: src/wasm/mod.rs has no \`mod ${m};\``);
      }
      writeFileSync(join(crate, 'src/wasm/mod.rs'), text);
      // The vocabulary names the layouts of those modules: their groups stay, empty.
      let wire = wireRs;
      for (const m of out) {
        wire = wire.replace(new RegExp(`&${m}::[A-Z_]+`, 'g'), '&[]').replace(new RegExp(`\\b${m}, |, ${m}(?=\\})`), '');
      }
      writeFileSync(join(crate, 'src/wasm/wire.rs'), wire);
      execFileSync('cargo', ['build', '--quiet', '--release', '--target', 'wasm32-unknown-unknown', '--lib', '--target-dir', join(ROOT, 'target/variant')], {
        cwd: crate,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const dir = join(crate, 'out');
      rmSync(dir, { recursive: true, force: true });
      const raw = join(ROOT, 'target/variant/wasm32-unknown-unknown/release/steadfast.wasm');
      execFileSync('wasm-bindgen', ['--target', 'web', '--encode-into', 'always', '--omit-default-module-path', '--out-dir', dir, '--out-name', 'm', raw]);
      writeFileSync(join(dir, 'm_bg.wasm'), trapPanics(readFileSync(join(dir, 'm_bg.wasm'))));
      execFileSync(opt, [...flags, join(dir, 'm_bg.wasm'), '-o', join(dir, 'o.wasm')]);
      const wasm = gzipSync(readFileSync(join(dir, 'o.wasm')), { level: 9 }).length;
      const glue = gzipSync((await transform(readFileSync(join(dir, 'm.js'), 'utf8'), { minify: true, format: 'esm' })).code, { level: 9 }).length;
      rows.push([out.length === 0 ? '(whole npm module)' : `without ${out.join(', ')}`, wasm, glue]);
    }
    const [, w0, g0] = rows[0];
    const d = (n) => (n === 0 ? '0' : `${n > 0 ? '+' : '−'}${Math.abs(n)}`);
    table([
      ['variant', '.wasm gz', 'Δ', 'glue min gz', 'Δ', 'Δ total'],
      ...rows.map(([label, w, g]) => [label, String(w), d(w - w0), String(g), d(g - g0), d(w - w0 + g - g0)]),
    ]);
  } finally {
    rmSync(crate, { recursive: true, force: true });
  }
}
