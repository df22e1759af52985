import type { Route } from '../../http/index.js';
import type { Storage } from '../../session-storage/index.js';
import { fsRoutes } from './routes.js';
import { createFsService, type FsService } from './service.js';

export interface FsModule {
  service: FsService;
  routes: Route[];
}

export function createFsModule({ storage }: { storage: Storage }): FsModule {
  const service = createFsService({ storage });
  return { service, routes: fsRoutes({ fs: service, fsQuotaBytes: storage.fsQuotaBytes }) };
}
