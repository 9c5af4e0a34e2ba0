export { ready } from './init.node.js';
export * from './api.js';
