export { ready } from './init.edge.js';
export * from './api.js';
