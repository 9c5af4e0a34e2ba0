// The app lives in the runtime tool cache (next, react and react-dom resolve from its node_modules):
// that directory is the root Turbopack may read files from.
export default { turbopack: { root: process.env.STEADFAST_RUNTIMES } };
