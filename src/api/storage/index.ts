import type { Route } from '../../http/index.js';
import type { Storage } from '../../session-storage/index.js';
import { storageRoutes } from './routes.js';
import { createStorageService, type StorageService } from './service.js';

export interface StorageModule {
  /** Session key/value entries and secret names over HTTP. */
  service: StorageService;
  routes: Route[];
}

export function createStorageModule(deps: { storage: Storage }): StorageModule {
  const service = createStorageService(deps);
  return { service, routes: storageRoutes({ sessionStorage: service }) };
}
