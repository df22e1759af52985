import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal } from '../auth/principal.js';
import type { Logger } from '../log.js';
import type { Reply, ReplyOf, ResponseSchemas } from './reply.js';
import type { Validation } from './validation.js';

/**
 * `none`: public; `user`: any authenticated principal; `admin`: role admin; `operator`: the
 * instance operator; `stream`: like `user`, and also accepts `?access_token=` (SSE only).
 */
export type AuthMode = 'none' | 'user' | 'admin' | 'operator' | 'stream';

export type BodyKind = 'json' | 'raw' | 'multipart' | 'none';

export interface RouteSchema {
  params?: TSchema;
  query?: TSchema;
  /** Validated for `json` routes; documentation only for `multipart` ones. */
  body?: TSchema;
  /** Status → schema, media type (e.g. 'text/event-stream'), JSON-or-raw, or `null` for no body. */
  response: ResponseSchemas;
}

export interface RequestInput<P, Q, B> {
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
  /** Fires when the client goes away before the reply (built on first read; most routes never read it). */
  clientGone: AbortSignal;
  /** Set on an `idempotent` route when the request carries an `Idempotency-Key`. */
  idempotency?: IdempotencyScope;
}

/**
 * The key's record, for a handler whose side effect can land although the request fails: it
 * `reserve`s what it is about to create before creating it, and a later request with the key
 * gets that as `prior` (the earlier one failed or its instance died) to look for it first.
 */
export interface IdempotencyScope {
  prior?: unknown;
  reserve(value: unknown): Promise<void>;
}

/** A request's input as the validate stage read it: text values, clean, not yet checked against the schemas. */
export type RawInput = RequestInput<Record<string, string>, Record<string, string | string[]>, undefined>;

/** A request's validated input bound to its route's handler. */
export type BoundHandler = (ctx: RequestContext) => Promise<Reply>;

/** Everything about a route but its types: what the router, the pipeline and the OpenAPI document read. */
export interface RouteInfo {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `/v1/agents/:id`; a trailing `*name` captures the rest of the path (file paths). */
  path: string;
  auth: AuthMode;
  summary: string;
  tags: readonly string[];
  bodyKind?: BodyKind;
  /** Upper bound for this route's body in bytes (default: the config's MAX_BODY_BYTES); above it, 413. */
  maxBodyBytes?: number;
  /** A body larger than this (and within maxBodyBytes) is 400 'Input exceeds allowed limits', refused before parsing. */
  limitBodyBytes?: number;
  /** Accepts `Idempotency-Key`: a retry gets the first outcome (src/http/idempotency.ts). */
  idempotent?: boolean;
}

export interface Route extends RouteInfo {
  schema: RouteSchema;
  /**
   * Compiles the input validators once, at startup; the result checks one request's input
   * (throwing InvalidRequestError) and returns the handler bound to it. `readJson` parses a body.
   */
  compile(validation: Validation, readJson: (raw: Buffer) => unknown): (raw: RawInput) => BoundHandler;
}

/** A path or query value typed by its schema; without one, nothing can be read from it. */
export type InputOf<S> = S extends TSchema ? Static<S> : Record<never, never>;

/** Only `json` routes parse their body; the others read `rawBody`. */
export type BodyOf<S, K extends BodyKind> = K extends 'json' ? (S extends TSchema ? Static<S> : undefined) : undefined;

/** A route's declaration as written in a route module: everything but its handler. */
export interface RouteSpec<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
  R extends ResponseSchemas,
  K extends BodyKind,
> extends Omit<RouteInfo, 'bodyKind'> {
  bodyKind?: K;
  schema: { params?: P; query?: Q; body?: B; response: R };
}

/** A handler typed by its route's schemas: validated input in, a reply of a declared status out. */
export type RouteHandler<P, Q, B, R extends ResponseSchemas, K extends BodyKind> = (
  input: RequestInput<InputOf<P>, InputOf<Q>, BodyOf<B, K>>,
  ctx: RequestContext,
) => Promise<ReplyOf<R>>;

/**
 * Declares a route once: `params`, `query` and `body` are typed by their schemas, and the
 * handler may only return, for a declared status, a reply of that status's schema. The handler
 * is a second argument so that TypeScript settles the schemas before it reads the handler (in
 * one object literal the reply's `status: 201` would widen to `number`).
 */
export function route<
  const P extends TSchema | undefined = undefined,
  const Q extends TSchema | undefined = undefined,
  const B extends TSchema | undefined = undefined,
  const R extends ResponseSchemas = ResponseSchemas,
  const K extends BodyKind = 'json',
>(spec: RouteSpec<P, Q, B, R, K>, handler: NoInfer<RouteHandler<P, Q, B, R, K>>): Route {
  const { schema } = spec;
  return {
    ...spec,
    compile(validation, readJson) {
      const jsonBody = (spec.bodyKind ?? 'json') === 'json' && schema.body !== undefined;
      const checkParams = validation.compileInput<InputOf<P>>(schema.params, 'params');
      const checkQuery = validation.compileInput<InputOf<Q>>(schema.query, 'query');
      const checkBody = validation.compileInput<BodyOf<B, K>>(jsonBody ? schema.body : undefined, 'body');
      return (raw) => {
        const input = {
          params: checkParams(raw.params),
          query: checkQuery(raw.query),
          body: checkBody(jsonBody ? readJson(raw.rawBody) : undefined),
          rawBody: raw.rawBody,
          headers: raw.headers,
          rawQuery: raw.rawQuery,
        };
        return (ctx) => handler(input, ctx);
      };
    },
  };
}
