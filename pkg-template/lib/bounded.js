// Why: every per-name map that callers can grow (breakers by origin, adaptive limiters by origin,
// the memory state store's breakers by name) is bounded the same way, by one rule.

/**
 * @internal Make room in a map whose insertion order is its age: drop the oldest entry that `idle`
 * says carries nothing worth keeping; when none does, the oldest of all — unless `keepInUse`, then
 * nothing (a breaker registry never trades protection in use for a newcomer). Returns whether an
 * entry was dropped.
 * @template K, V
 * @param {Map<K, V>} map
 * @param {(value: V, key: K) => boolean} idle
 * @param {boolean} [keepInUse]
 */
export function evictOldest(map, idle, keepInUse = false) {
  let victim;
  for (const [k, v] of map) {
    if (idle(v, k)) {
      victim = k;
      break;
    }
  }
  if (victim === undefined) {
    if (keepInUse || map.size === 0) return false;
    victim = map.keys().next().value;
  }
  map.delete(victim);
  return true;
}
