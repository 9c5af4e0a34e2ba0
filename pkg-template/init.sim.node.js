// Node loader of the `steadfast/sim` entry: the simulator's own wasm (the core plus the simulator),
// compiled synchronously from the file next to this one, like init.node.js.
import { readFileSync } from 'node:fs';
import { initSync } from './steadfast_sim.js';

initSync({ module: readFileSync(new URL('./steadfast_sim_bg.wasm', import.meta.url)) });
