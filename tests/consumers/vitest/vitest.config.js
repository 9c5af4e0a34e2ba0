// The configuration the testing guide recommends: inline steadfast so Vite transforms it like app code
// (what `vi.mock` of a module that imports steadfast, or a monorepo with linked packages, leads to).
export default {
  test: {
    environment: process.env.STEADFAST_VITEST_ENV ?? 'jsdom',
    server: { deps: { inline: ['steadfast'] } },
  },
};
