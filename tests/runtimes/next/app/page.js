'use client';
// A client component: the program runs in the browser (the `browser` condition), with a breaker made
// at module level.
import { createElement as h, useEffect, useState } from 'react';
import * as steadfast from 'steadfast';
import { moduleLevel, program } from '../program.js';

const early = moduleLevel(steadfast);

export default function Page() {
  const [result, setResult] = useState(undefined);
  useEffect(() => {
    const base = new URLSearchParams(window.location.search).get('base');
    program(steadfast, base, 'next-client', early).then(
      (checks) => setResult({ label: 'next-client', checks }),
      (e) => setResult({ label: 'next-client', checks: [{ name: 'program', ok: false, detail: String(e) }] }),
    );
  }, []);
  return h(
    'main',
    null,
    h('h1', null, 'steadfast in a client component'),
    h('pre', { id: 'result', 'data-done': result === undefined ? 'no' : 'yes' }, result === undefined ? 'running' : JSON.stringify(result)),
  );
}
