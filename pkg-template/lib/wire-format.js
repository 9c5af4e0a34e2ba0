// Why: the core's vocabulary text (src/wasm/wire.rs: `group:name,…,name=integer;group:…`) and the
// named objects built from a positional answer, with nothing else: the simulator's entry reads its
// own vocabulary (simLayouts) with these without importing the main module's glue.

/**
 * Parse the vocabulary's text (`group:name,…,name=integer;group:…`): per group, its names by
 * position (`names`) and its named constants (`constants`).
 * @internal
 */
export function parseWire(text) {
  const groups = {};
  for (const part of text.split(';')) {
    const colon = part.indexOf(':');
    const names = [];
    const constants = {};
    for (const entry of part.slice(colon + 1).split(',')) {
      if (entry === '') continue;
      const eq = entry.indexOf('=');
      if (eq < 0) names.push(entry);
      else constants[entry.slice(0, eq)] = Number(entry.slice(eq + 1));
    }
    groups[part.slice(0, colon)] = { names: Object.freeze(names), constants };
  }
  return groups;
}

/** `values` (an array or typed array) as a frozen object keyed by `names`; a dot nests (`budget.ratio`). */
export function namedSlots(names, values) {
  const out = {};
  names.forEach((name, i) => {
    const path = name.split('.');
    let at = out;
    for (const step of path.slice(0, -1)) at = at[step] ??= {};
    at[path[path.length - 1]] = values[i];
  });
  const freeze = (v) => {
    for (const k of Object.keys(v)) if (typeof v[k] === 'object') freeze(v[k]);
    return Object.freeze(v);
  };
  return freeze(out);
}
