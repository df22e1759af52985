import type { TSchema } from '@sinclair/typebox';
import type { Principal } from '../auth/principal.js';
import type { Logger } from '../log.js';
import type { SseStream } from './sse-stream.js';

/**
 * `none`: public; `user`: any authenticated principal; `admin`: role admin; `operator`: the
 * instance operator; `stream`: like `user`, and also accepts `?access_token=` (SSE only).
 */
export type AuthMode = 'none' | 'user' | 'admin' | 'operator' | 'stream';

export type BodyKind = 'json' | 'raw' | 'multipart' | 'none';

export interface RouteSchema {
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /** Status → schema, or a media type string for non-JSON bodies (e.g. 'text/event-stream'). */
  response: Record<number, TSchema | string | null>;
}

// biome-ignore lint/suspicious/noExplicitAny: handlers are not yet typed by their route's schemas (issue 18 item 2)
export interface RequestInput<P = any, Q = any, B = any> {
  params: P;
  query: Q;
  body: B;
  /** The raw body for `raw` and `multipart` routes. */
  rawBody: Buffer;
  /** Lower-cased request headers. */
  headers: Record<string, string>;
  /** Query string as sent (for repeated keys). */
  rawQuery: string;
}

export interface RequestContext {
  reqId: string;
  log: Logger;
  /** Set for every route whose auth is not `none`. */
  principal: Principal;
  remoteAddress: string;
}

export type Reply =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { status: number; raw: Buffer | string; contentType: string; headers?: Record<string, string> }
  /** `abandon` runs instead of `sse` when the client left before the stream opened. */
  | { sse: (stream: SseStream) => void; abandon?: () => void };

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `/v1/agents/:id`; a trailing `*name` captures the rest of the path (file paths). */
  path: string;
  auth: AuthMode;
  summary: string;
  tags: string[];
  schema: RouteSchema;
  bodyKind?: BodyKind;
  /** Upper bound for this route's body in bytes (default: the config's MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /** Accepts `Idempotency-Key`: a retry gets the first outcome (src/http/idempotency.ts). */
  idempotent?: boolean;
  handler(input: RequestInput, ctx: RequestContext): Promise<Reply>;
}

/** Identity helper that keeps route literals typed. */
export function defineRoutes(routes: Route[]): Route[] {
  return routes;
}
