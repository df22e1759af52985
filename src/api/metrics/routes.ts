import { createHash, timingSafeEqual } from 'node:crypto';
import { ErrorResponse, ref } from '../../../schemas/common.js';
import { Timeseries, TimeseriesQuery } from '../../../schemas/metrics.js';
import { InvalidRequestError, UnauthorizedError } from '../../errors.js';
import { route, type Route } from '../../http/index.js';
import {
  buildTimeseries,
  DEFAULT_TIMESERIES_INTERVAL_S,
  DEFAULT_TIMESERIES_WINDOW_S,
  type TaskCountSource,
} from '../../observability/index.js';

/**
 * Spec 4.5: `GET /v1/durable/metrics/timeseries`, per-instance task counts of every live
 * instance. Operator only: the counts cover every organisation of the deployment.
 */
export function timeseriesRoutes({ source, now = Date.now }: { source: TaskCountSource; now?: () => number }): Route[] {
  return [
    route(
      {
        method: 'GET',
        path: '/v1/durable/metrics/timeseries',
        auth: 'operator',
        tags: ['operations'],
        summary: 'Turns claimed and completed per instance and interval (operator only)',
        schema: { query: TimeseriesQuery, response: { 200: ref(Timeseries), 400: ref(ErrorResponse) } },
      },
      async ({ query }) => {
        const interval = query.interval_seconds ?? DEFAULT_TIMESERIES_INTERVAL_S;
        const window = query.window_seconds ?? DEFAULT_TIMESERIES_WINDOW_S;
        if (window < interval || window % interval !== 0) {
          throw new InvalidRequestError('Invalid request: query.window_seconds must be a multiple of interval_seconds');
        }
        return { status: 200, body: await buildTimeseries(source, now(), interval, window) };
      },
    ),
  ];
}

/** The content type of the Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * `GET /metrics` (no /v1, no API prefix): the Prometheus exposition. With `token` set the caller
 * must send `Authorization: Bearer <token>` (else 401); without it the route is only mounted on
 * the separate METRICS_PORT listener (docs/operations.md, "Monitoring").
 */
export function prometheusRoutes({ scrape, token }: { scrape: () => Promise<string>; token?: string }): Route[] {
  const expected = token ? digest(`Bearer ${token}`) : null;
  return [
    route(
      {
        method: 'GET',
        path: '/metrics',
        auth: 'none',
        tags: ['operations'],
        summary: token ? 'Prometheus metrics (Authorization: Bearer METRICS_TOKEN)' : 'Prometheus metrics',
        schema: { response: { 200: PROMETHEUS_CONTENT_TYPE, 401: ref(ErrorResponse) } },
      },
      async ({ headers }) => {
        if (expected && !timingSafeEqual(digest(headers['authorization'] ?? ''), expected)) throw new UnauthorizedError();
        return { status: 200, raw: await scrape(), contentType: PROMETHEUS_CONTENT_TYPE };
      },
    ),
  ];
}

/** Fixed-length digests, so the comparison takes the same time whatever was sent. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
