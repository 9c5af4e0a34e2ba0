// A localStorage-like Storage over a Map, for persistentCheckoutKey's tests (Node has no
// localStorage by default): `map` is the Map itself, for tests that forge or inspect entries.

/** @param {Map<string, string>} [map] */
export function memoryStorage(map = new Map()) {
  return {
    map,
    getItem: (k) => (map.has(k) ? map.get(k) : null),
    setItem: (k, v) => map.set(k, String(v)),
    removeItem: (k) => map.delete(k),
    key: (i) => [...map.keys()][i] ?? null,
    get length() {
      return map.size;
    },
  };
}
