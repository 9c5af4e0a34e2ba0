// The shared fault cases in a module Web Worker. Import maps do not reach workers: the installed
// package is imported by its served path.
import * as steadfast from '/node_modules/steadfast/index.browser.js';
import { runCases } from './cases.js';

let results;
try {
  results = await runCases(steadfast, { base: self.location.origin, env: 'worker' });
  results.unshift({ name: 'runs in a worker (no window, no document)', ok: typeof window === 'undefined' && typeof document === 'undefined', assertions: 1 });
} catch (e) {
  results = [{ name: 'worker runner', ok: false, assertions: 0, error: String(e?.stack ?? e) }];
}
self.postMessage({ results });
