import './init.browser.js';
export * from './api.js';
