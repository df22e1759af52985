import type { Route } from '../../http/index.js';
import type { WebhookService } from '../../webhooks/index.js';
import { webhookRoutes } from './routes.js';

export function createWebhooksModule(deps: { webhooks: WebhookService }): { routes: Route[] } {
  return { routes: webhookRoutes(deps) };
}
