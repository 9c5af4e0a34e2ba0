export { ready } from './init.browser.js';
export * from './api.js';
