export { ready } from './init.bun.js';
export * from './api.js';
