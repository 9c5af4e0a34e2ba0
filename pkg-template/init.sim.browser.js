// Browser loader of the `steadfast/sim` entry (see init.browser.js): no `window`, works in workers.
import init from './steadfast_sim.js';

await init({ module_or_path: new URL('./steadfast_sim_bg.wasm', import.meta.url) });
