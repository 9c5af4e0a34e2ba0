// `steadfast/lazy` has the same declarations as `steadfast` (see index.d.ts). This file is for
// TypeScript's `moduleResolution: node` (node10), which ignores `exports` and looks for
// `<package>/lazy.d.ts`; node16, nodenext and bundler resolve through `exports` to index.d.ts.
export * from './index.js';
