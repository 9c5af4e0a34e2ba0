// ESLint (flat config) for steadfast's JS: the recommended rules, the package's environments (Node 24
// and browsers; the package's code runs in both), ES2025 modules (import attributes: the Bun loader). Which files are checked is the
// list in scripts/lint-js.sh (see there for why it starts small).
import js from '@eslint/js';
import globals from 'globals';

export default [
  {
    ignores: [
      '**/node_modules/**',
      'pkg/**',
      'examples/*/pkg/**',
      'examples/*/baseline/pkg/**',
      'dist/**',
      'target/**',
      'tests/.out/**',
      'benches/.out/**',
      '.tools/**',
    ],
  },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2025,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.browser },
    },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
];
