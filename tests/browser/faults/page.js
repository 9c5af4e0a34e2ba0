// Runs the shared fault cases inside the page (the installed package through the import map) and
// publishes globalThis.__suite = { done, results } for whichever driver opened the page.
import * as steadfast from 'steadfast';
import { runCases } from './cases.js';

const list = document.querySelector('#results');
globalThis.__suite = { done: false, results: [] };
try {
  const results = await runCases(steadfast, {
    base: location.origin,
    env: 'page',
    onResult: (r) => {
      const li = document.createElement('li');
      li.textContent = `${r.ok ? 'ok' : 'FAILED'} ${r.name} (${r.assertions})${r.error ? `: ${r.error}` : ''}`;
      list.append(li);
    },
  });
  globalThis.__suite = { done: true, env: 'page', userAgent: navigator.userAgent, results };
} catch (e) {
  globalThis.__suite = { done: true, env: 'page', results: [{ name: 'page runner', ok: false, assertions: 0, error: String(e?.stack ?? e) }] };
}
document.body.dataset.done = 'true';
