// What the main .wasm spends its bytes on (issue 15, target 3): a twiggy-style breakdown without
// twiggy. Re-runs wasm-bindgen on the raw cargo output (names kept) and wasm-opt with the build's
// flags plus -g (keep the name section), then groups function bodies by their Rust path and prints
// raw bytes, the share, and gzip -9 of each group's bodies on their own (gzip of a group alone
// overstates it slightly: the groups share a dictionary in the real file). Names are those of the
// outer function after wasm-opt's inlining, so a group holds what was inlined into it. Run after `make build`:
//
//   node benches/wasm-breakdown.mjs [--top=N] [--wasm=<raw cargo .wasm>]
//
// --wasm: break down another module the same way, e.g. the Rust app's
// (target/rust-checkout/wasm32-unknown-unknown/release/rust_checkout.wasm after examples/rust-checkout/build.sh).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT, table } from './common.mjs';

const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 25);
const raw = process.argv.find((a) => a.startsWith('--wasm='))?.slice(7) ?? join(ROOT, 'target/wasm32-unknown-unknown/release/steadfast.wasm');
statSync(raw);
// The build's flags (scripts/build.sh: WASM_OPT_FLAGS, default below).
const flags = process.env.WASM_OPT_FLAGS ?? '-Oz --converge --low-memory-unused --strip-producers --strip-target-features';
const dir = mkdtempSync(join(tmpdir(), 'sf-wasm-'));
try {
  execFileSync('wasm-bindgen', ['--target', 'web', '--encode-into', 'always', '--omit-default-module-path', '--out-dir', dir, '--out-name', 'm', raw]);
  const opt = process.env.STEADFAST_WASM_OPT ?? 'wasm-opt';
  execFileSync(opt, [...flags.split(/\s+/).filter(Boolean), '-g', join(dir, 'm_bg.wasm'), '-o', join(dir, 'named.wasm')]);
  const bytes = readFileSync(join(dir, 'named.wasm'));
  report(bytes, flags);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function report(buf, flags) {
  let p = 8;
  const u32 = () => {
    let r = 0;
    let s = 0;
    for (;;) {
      const b = buf[p++];
      r |= (b & 0x7f) << s;
      if (b < 0x80) return r >>> 0;
      s += 7;
    }
  };
  const sections = [];
  let imports = 0;
  let bodies = [];
  const names = new Map();
  while (p < buf.length) {
    const id = buf[p++];
    const size = u32();
    const start = p;
    let label =
      ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'][id] ?? `#${id}`;
    if (id === 0) {
      const n = u32();
      const name = buf.subarray(p, p + n).toString();
      label = `custom "${name}"`;
      p += n;
      if (name === 'name') {
        while (p < start + size) {
          const sub = buf[p++];
          const len = u32();
          const end = p + len;
          if (sub === 1) {
            const count = u32();
            for (let i = 0; i < count; i++) {
              const idx = u32();
              const l = u32();
              names.set(idx, buf.subarray(p, p + l).toString());
              p += l;
            }
          }
          p = end;
        }
      }
    } else if (id === 2) {
      const count = u32();
      for (let i = 0; i < count; i++) {
        // Not `p += u32()`: that reads p before u32() advances it past the length.
        for (let name = 0; name < 2; name++) {
          const len = u32(); // module, then field
          p += len;
        }
        const kind = buf[p++];
        if (kind === 0) {
          u32();
          imports++;
        } else if (kind === 1) {
          p++;
          const f = buf[p++];
          u32();
          if (f & 1) u32();
        } else if (kind === 2) {
          const f = buf[p++];
          u32();
          if (f & 1) u32();
        } else if (kind === 3) {
          p += 2;
        }
      }
    } else if (id === 10) {
      const count = u32();
      for (let i = 0; i < count; i++) {
        const len = u32();
        bodies.push({ index: imports + i, body: buf.subarray(p, p + len) });
        p += len;
      }
    }
    sections.push([label, size]);
    p = start + size;
  }
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
