import './init.node.js';
export * from './api.js';
