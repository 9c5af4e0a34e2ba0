// Reading a wasm module's layout (no dependency): its sections, how many functions it imports, the
// name section's function names and where each function body lies. Shared by
// scripts/wasm-trap-panics.mjs (which rewrites bodies by name) and benches/wasm-breakdown.mjs (which
// groups them by name), so both read a module the same way.

/** An unsigned LEB128 at `p`: `[value, the position after it]`. */
export function uleb(buf, p) {
  let r = 0;
  let s = 0;
  for (;;) {
    const b = buf[p++];
    r += (b & 0x7f) * 2 ** s;
    if (b < 0x80) return [r, p];
    s += 7;
  }
}

/** `n` as unsigned LEB128 bytes. */
export function encodeUleb(n) {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/**
 * The layout of the module in `buf`: `sections` (`{ id, custom, headerStart, start, end }`, `custom`
 * the name of a custom section), `importedFunctions`, `names` (function index → name, from the
 * name section when there is one) and `bodies` (`{ index, entryStart, start, end }` per function
 * body, `index` counting imports as the name section does, `entryStart` at the body's size).
 * Throws on what it cannot read.
 */
export function readModule(buf) {
  if (buf.length < 8 || buf.readUInt32LE(0) !== 0x6d736100) throw new Error('not a wasm module');
  const sections = [];
  const names = new Map();
  const bodies = [];
  let importedFunctions = 0;
  let p = 8;
  while (p < buf.length) {
    const id = buf[p];
    const [size, start] = uleb(buf, p + 1);
    const section = { id, custom: undefined, headerStart: p, start, end: start + size };
    sections.push(section);
    if (id === 0) {
      const [len, q] = uleb(buf, start);
      section.custom = buf.toString('utf8', q, q + len);
      if (section.custom === 'name') readNames(buf, q + len, section.end, names);
    } else if (id === 2) {
      importedFunctions = countImportedFunctions(buf, start);
    } else if (id === 10) {
      let [count, q] = uleb(buf, start);
      for (let i = 0; i < count; i++) {
        const [len, body] = uleb(buf, q);
        bodies.push({ index: importedFunctions + i, entryStart: q, start: body, end: body + len });
        q = body + len;
      }
    }
    p = section.end;
  }
  return { sections, importedFunctions, names, bodies };
}

/** The function names of a name section's subsection 1, between `p` and `end`, into `names`. */
function readNames(buf, p, end, names) {
  while (p < end) {
    const sub = buf[p];
    const [subLen, body] = uleb(buf, p + 1);
    if (sub === 1) {
      let [count, t] = uleb(buf, body);
      for (let i = 0; i < count; i++) {
        const [index, u] = uleb(buf, t);
        const [nameLen, v] = uleb(buf, u);
        names.set(index, buf.toString('utf8', v, v + nameLen));
        t = v + nameLen;
      }
    }
    p = body + subLen;
  }
}

/** How many of the import section's entries (from `p`) are functions. */
function countImportedFunctions(buf, p) {
  let functions = 0;
  let [count, q] = uleb(buf, p);
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < 2; k++) {
      const [len, r] = uleb(buf, q); // module, then field
      q = r + len;
    }
    const kind = buf[q++];
    if (kind === 0) {
      functions++;
      q = uleb(buf, q)[1];
    } else if (kind === 1) {
      q++;
      const flags = buf[q++];
      q = uleb(buf, q)[1];
      if (flags & 1) q = uleb(buf, q)[1];
    } else if (kind === 2) {
      const flags = buf[q++];
      q = uleb(buf, q)[1];
      if (flags & 1) q = uleb(buf, q)[1];
    } else if (kind === 3) q += 2;
    else if (kind === 4) q = uleb(buf, q + 1)[1];
    else throw new Error(`import kind ${kind}`);
  }
  return functions;
}
