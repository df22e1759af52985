import type { Route } from './route.js';

/**
 * What the HTTP layer reports when metrics are on (src/observability implements it). Absent:
 * no stage, no counting, nothing per request beyond a falsy check on SSE writes.
 */
export interface HttpObserver {
  /** One request handled by the pipeline: its route (undefined: no route matched), status and handling time in seconds. */
  request(route: Route | undefined, method: string, status: number, seconds: number): void;
}

export type { SseObserver } from './sse-observer.js';
