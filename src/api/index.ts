import type { Route } from '../http/index.js';

/** A resource module as the document needs it: each src/api/<resource>/index.ts builds one. */
interface RoutesOf {
  routes: Route[];
}

/** Every resource module under src/api that serves on the API's routes; the composition root builds them. */
export interface ApiModules {
  auth: RoutesOf;
  users: RoutesOf;
  orgs: RoutesOf;
  agents: RoutesOf;
  harnesses: RoutesOf;
  capabilities: RoutesOf;
  sessions: RoutesOf;
  fs: RoutesOf;
  storage: RoutesOf;
  images: RoutesOf;
  connections: RoutesOf;
  llmProviders: RoutesOf;
  llmModels: RoutesOf;
  events: RoutesOf;
  webhooks: RoutesOf;
  mcp: RoutesOf;
}

/**
 * Every resource's routes, in the order the OpenAPI document lists them (the generated client and
 * test/client/openapi-document.test.ts pin it). Modules that live elsewhere (the turn, src/turns/)
 * hand theirs in.
 */
export function createApiRoutes(modules: ApiModules, elsewhere: { turns: Route[] }): Route[] {
  const m = modules;
  return [
    ...m.auth.routes,
    ...m.users.routes,
    ...m.orgs.routes,
    ...m.agents.routes,
    ...m.harnesses.routes,
    ...m.capabilities.routes,
    ...m.sessions.routes,
    ...m.fs.routes,
    ...m.storage.routes,
    ...m.images.routes,
    ...m.connections.routes,
    ...m.llmProviders.routes,
    ...m.llmModels.routes,
    ...elsewhere.turns,
    ...m.events.routes,
    ...m.webhooks.routes,
    ...m.mcp.routes,
  ];
}
