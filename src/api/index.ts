import type { Route } from '../http/route.js';
import type { AppServices } from '../services.js';

/** Every resource's routes. One line per resource module (src/api/<resource>/routes.ts). */
export function createApiRoutes(services: AppServices): Route[] {
  void services;
  return [];
}
