export { createStore } from './store.js';
export type { Store, StoreOptions } from './store.js';
export { Organization, User, ApiKey, entities } from './entities/index.js';
