export { ready } from './init.lazy.js';
export * from './api.js';
