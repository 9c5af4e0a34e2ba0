/**
 * The WebAssembly core, for a host whose bundler hands a `.wasm` import over as a compiled module
 * (Cloudflare Workers' CompiledWasm rule, Next.js `?module`): `import wasm from
 * 'steadfast/steadfast_core_bg.wasm'; await init(wasm)`. The `workerd` and `edge-light` entries of
 * steadfast already do this themselves; you need it only for a host steadfast does not recognise.
 */
declare const steadfastCore: typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : unknown;
export default steadfastCore;
