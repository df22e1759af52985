import type { Route } from './route.js';

/**
 * What the HTTP layer reports when metrics are on (src/observability implements it). Absent:
 * no stage, no counting, nothing per request beyond a falsy check on SSE writes.
 */
export interface HttpObserver {
  /** One request handled by the pipeline: its route (undefined: no route matched), status and handling time in seconds. */
  request(route: Route | undefined, method: string, status: number, seconds: number): void;
}

/** SSE stream events, per instance. */
export interface SseObserver {
  opened(): void;
  /** One chunk (a frame, or a heartbeat) handed to the socket. */
  written(chunk: string): void;
  /** The stream ended with `disconnecting` for its connection cycle. */
  cycled(): void;
  /** The client fell more than SSE_MAX_BUFFER_BYTES behind and was disconnected. */
  dropped(): void;
}
