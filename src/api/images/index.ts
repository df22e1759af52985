import type { Route } from '../../http/index.js';
import type { Storage } from '../../session-storage/index.js';
import { imageRoutes } from './routes.js';
import { createImageService, type ImageService } from './service.js';

export interface ImagesModule {
  service: ImageService;
  routes: Route[];
}

export function createImagesModule(deps: { storage: Storage }): ImagesModule {
  const service = createImageService(deps);
  return { service, routes: imageRoutes({ images: service }) };
}
