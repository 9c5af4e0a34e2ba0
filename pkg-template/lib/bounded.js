// Why: every per-name map that callers can grow (breakers by origin, adaptive limiters by origin,
// the memory state store's breakers by name) is bounded the same way, by one rule.

/**
 * @internal Make room in a map whose insertion order is its age: drop the oldest entry that `idle`
 * says carries nothing worth keeping, or the oldest of all when none does.
 * @template K, V
 * @param {Map<K, V>} map
 * @param {(value: V) => boolean} idle
 */
export function evictOldest(map, idle) {
  let victim = map.keys().next().value;
  for (const [k, v] of map) {
    if (idle(v)) {
      victim = k;
      break;
    }
  }
  map.delete(victim);
}
