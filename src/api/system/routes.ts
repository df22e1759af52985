import { Type } from '@sinclair/typebox';
import { route, type Route } from '../../http/index.js';
import { Health, ref } from '../../../schemas/common.js';
import { withDeadline } from '../../retry/index.js';

export interface HealthCheck {
  name: string;
  /** Throws when the dependency is unreachable (an error's `healthState` replaces 'unreachable' in the answer). */
  check(): Promise<void>;
}

/** How long one health probe may take before it counts as failed, in ms. */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;

/** `GET /health` (no auth, no /v1): 200 when every dependency answers, 503 naming the failing one. */
export function systemRoutes({ checks, openApi }: { checks: HealthCheck[]; openApi: () => Record<string, unknown> }): Route[] {
  return [
    route(
      {
        method: 'GET',
        path: '/health',
        auth: 'none',
        summary: 'Health for load balancers',
        tags: ['operations'],
        schema: { response: { 200: ref(Health), 503: ref(Health) } },
      },
      async () => {
        const results = await Promise.all(checks.map(async (c) => [c.name, await probe(c)] as const));
        const healthy = results.every(([, r]) => r === 'ok');
        const checked = Object.fromEntries(results);
        return healthy
          ? { status: 200, body: { status: 'ok', checks: checked } }
          : { status: 503, body: { status: 'unhealthy', checks: checked } };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/api-doc/openapi.json',
        auth: 'none',
        summary: 'The OpenAPI 3.1 description of this API',
        tags: ['operations'],
        schema: { response: { 200: Type.Object({}, { additionalProperties: true }) } },
      },
      async () => {
        return { status: 200, body: openApi() };
      },
    ),
  ];
}

async function probe(c: HealthCheck): Promise<string> {
  try {
    await withDeadline(c.check(), HEALTH_CHECK_TIMEOUT_MS);
    return 'ok';
  } catch (err) {
    const state = (err as { healthState?: unknown } | null)?.healthState;
    return typeof state === 'string' ? state : 'unreachable';
  }
}
