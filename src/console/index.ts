export { createConsoleSite } from './site.js';
