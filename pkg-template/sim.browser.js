import './init.sim.browser.js';
export * from './lib/sim.js';
