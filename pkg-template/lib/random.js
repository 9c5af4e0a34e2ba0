// Why a wrapper: the wasm export takes a number; anything else must be a TypeError, not a coercion.
import { seedRandom as coreSeedRandom } from '../steadfast_core.js';
import * as o from './options.js';

/** Reseed the generator behind the jitter functions and withRetry (reproducible runs). */
export function seedRandom(seed) {
  if (typeof seed !== 'number' || !Number.isFinite(seed)) {
    throw (typeof seed === 'number' ? o.rangeError : o.typeError)('seedRandom', 'seed', 'a finite number', seed);
  }
  coreSeedRandom(seed);
}
