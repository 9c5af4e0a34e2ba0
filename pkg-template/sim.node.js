import './init.sim.node.js';
export * from './lib/sim.js';
