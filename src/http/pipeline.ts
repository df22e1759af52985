import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { TSchema } from '@sinclair/typebox';
import {
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  InvalidRequestError,
  LimitExceededError,
  OriginNotAllowedError,
  UnauthorizedError,
} from '../errors.js';
import { redactUrl } from '../log.js';
import { compose, type Stage } from './compose.js';
import type { Exchange } from './exchange.js';
import { preflightHeaders, type CorsPolicy } from './cors.js';
import { toErrorReply } from './error-response.js';
import { staticStage, type StaticSite } from './static-files.js';
import { jsonSchemaOf } from './reply.js';
import type { Route } from './route.js';
import type { Principal } from '../auth/principal.js';
import type { Router } from './router.js';
import type { HttpObserver } from './observer.js';
import { DEFAULT_MAX_JSON_DEPTH, assertCleanStrings, jsonProblemError, scanJson } from './input-hygiene.js';
import type { Validation } from './validation.js';
import type { TraceSpan, Tracing } from '../observability/tracing.js';
import { idempotencyStage, type IdempotencyPort } from './idempotency.js';

export { Exchange, type IncomingRequest } from './exchange.js';

/** Resolves the caller; throws UnauthorizedError. `allowQueryToken` is true only on SSE routes. */
export type Authenticate = (ex: Exchange, opts: { allowQueryToken: boolean }) => Promise<Principal>;

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
/** Generated ids: a random per-process prefix and a counter, unique across instances and cheap. */
const REQUEST_ID_PREFIX = `${randomBytes(6).toString('hex')}-`;
let requestCounter = 0;

/** Distrusts the client's X-Request-Id: odd or long values are replaced. */
export function requestIdStage(): Stage<Exchange> {
  return function requestId(ex, next) {
    const given = ex.headers['x-request-id'];
    ex.reqId = given && REQUEST_ID_RE.test(given) ? given : REQUEST_ID_PREFIX + (++requestCounter).toString(36);
    return next();
  };
}

/**
 * A server span per request, child of an incoming W3C `traceparent`, active while the rest of
 * the pipeline runs (services stamp the events they append with it). Named by method and route
 * template once the route is known; never the query string (it may carry `access_token`).
 * With export off only a request that brings a `traceparent` gets a span (an id holder, so the
 * events it appends join the caller's trace); every other request costs one header lookup, and
 * a service that appends events without an active span starts a trace of its own.
 */
export function traceStage(tracing: Tracing): Stage<Exchange> {
  if (!tracing.exporting) {
    return function traceIds(ex, next) {
      const traceparent = ex.headers['traceparent'];
      return traceparent === undefined ? next() : tracing.run(tracing.startSpan('HTTP', { parent: traceparent }), next);
    };
  }
  return function traceRequest(ex, next) {
    const span = tracing.startSpan('HTTP', { parent: ex.headers['traceparent'], kind: 'server' });
    return tracing.run(span, next).then(
      () => endRequestSpan(ex, span, tracing.exporting),
      (err: unknown) => {
        span.fail(err);
        endRequestSpan(ex, span, tracing.exporting);
        throw err;
      },
    );
  };
}

function endRequestSpan(ex: Exchange, span: TraceSpan, exporting: boolean): void {
  if (!exporting) return;
  const route = ex.route?.path;
  const status = ex.reply && 'status' in ex.reply ? ex.reply.status : 200;
  span.updateName(route ? `${ex.method} ${route}` : ex.method);
  span.setAttributes({
    'http.request.method': ex.method,
    'http.route': route,
    'url.path': ex.url,
    'http.response.status_code': status,
    'http.request_id': ex.reqId,
  });
  if (status >= 500) span.fail(new Error(`HTTP ${status}`));
  span.end();
}

/** One access-log line per request; credentials in the URL are redacted. */
export function accessLogStage(): Stage<Exchange> {
  return async function accessLog(ex, next) {
    await next();
    if (!ex.rootLog.isLevelEnabled('info')) return;
    const status = ex.reply && 'status' in ex.reply ? ex.reply.status : 200;
    const url = redactUrl(ex.rawQuery ? `${ex.url}?${ex.rawQuery}` : ex.url);
    const { principal } = ex;
    ex.rootLog.info(
      {
        reqId: ex.reqId,
        orgId: principal?.org_id,
        userId: principal?.user_id,
        method: ex.method,
        url,
        status,
        ms: Date.now() - ex.startedAt,
      },
      'request',
    );
  };
}

/** Reports each request's route template, status and handling time (present only when metrics are on). */
export function metricsStage(observer: HttpObserver): Stage<Exchange> {
  return async function metrics(ex, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const status = ex.reply && 'status' in ex.reply ? ex.reply.status : 200;
      observer.request(ex.route, ex.method, status, (performance.now() - started) / 1000);
    }
  };
}

/** Turns anything thrown further in into an `{error, status}` reply. */
export function errorStage(): Stage<Exchange> {
  return async function errors(ex, next) {
    try {
      await next();
    } catch (err) {
      const { status, body, headers } = toErrorReply(err, ex.log);
      ex.reply = headers ? { status, body, headers } : { status, body };
    }
  };
}

/**
 * RESPONSE_VALIDATION: every JSON reply is checked against its route's schema for that status
 * (an error status without one: `ErrorResponse`); a mismatch, or a status the route does not
 * declare, becomes a 500 naming it, so the API document cannot drift from what is sent.
 */
export function responseCheckStage(validation: Validation, routes: Route[], errorSchema: TSchema): Stage<Exchange> {
  const checks = new Map<Route, Map<number, ((value: unknown) => string | null) | null>>();
  for (const route of routes) {
    const byStatus = new Map<number, ((value: unknown) => string | null) | null>();
    for (const [status, schema] of Object.entries(route.schema.response)) {
      const json = jsonSchemaOf(schema);
      byStatus.set(Number(status), json && validation.compileReply(json));
    }
    checks.set(route, byStatus);
  }
  const errorCheck = validation.compileReply(errorSchema);
  return async function responseCheck(ex, next) {
    await next();
    const reply = ex.reply;
    if (!reply || 'sse' in reply || !ex.route || ex.method === 'OPTIONS') return;
    const byStatus = checks.get(ex.route)!;
    const check = byStatus.has(reply.status) ? byStatus.get(reply.status) : reply.status >= 400 ? errorCheck : undefined;
    let problem: string | null;
    if (check === undefined) problem = `status ${reply.status} is not declared`;
    else if (check === null) problem = null;
    else if ('raw' in reply) problem = reply.contentType.includes('json') ? check(JSON.parse(String(reply.raw))) : null;
    else problem = check(reply.body);
    if (!problem) return;
    const error = `Response does not match the schema of ${ex.route.method} ${ex.route.path} ${reply.status}: ${problem}`;
    ex.log.error({ status: reply.status }, error);
    ex.reply = { status: 500, body: { error, status: 500 } };
  };
}

/**
 * Answers `OPTIONS` (only present when CORS is on): 204 with `Allow` for any known path, plus
 * the preflight headers when it is a preflight from an allowed origin; a preflight from any
 * other origin gets 403 and no CORS headers. The transport adds `Access-Control-Allow-Origin`.
 */
export function preflightStage(router: Router, cors: CorsPolicy): Stage<Exchange> {
  return async function preflight(ex, next) {
    if (ex.method !== 'OPTIONS') return next();
    const m = ex.match ?? router.match(ex.method, ex.url);
    if (m.kind !== 'method_not_allowed') throw new NotFoundError(); // no route has OPTIONS, so `found` cannot happen
    const origin = ex.headers['origin'];
    const isPreflight = origin !== undefined && ex.headers['access-control-request-method'] !== undefined;
    if (isPreflight && !cors.allows(origin)) throw new OriginNotAllowedError();
    const allow = { Allow: [...m.allow, 'OPTIONS'].join(', ') };
    ex.reply = { status: 204, headers: isPreflight ? { ...allow, ...preflightHeaders(m.allow) } : allow };
  };
}

/** `alsoAllowed`: methods answered before routing (OPTIONS when CORS is on), listed in 405's `Allow`. */
export function routeStage(router: Router, alsoAllowed: readonly string[] = []): Stage<Exchange> {
  return function route(ex, next) {
    const m = ex.match ?? router.match(ex.method, ex.url);
    if (m.kind === 'not_found') throw new NotFoundError();
    if (m.kind === 'method_not_allowed') throw new MethodNotAllowedError(alsoAllowed.length ? [...m.allow, ...alsoAllowed] : m.allow);
    ex.route = m.match.route;
    ex.params = m.match.params;
    return next();
  };
}

export function authStage(authenticate: Authenticate): Stage<Exchange> {
  return async function auth(ex, next) {
    const mode = ex.route!.auth;
    if (mode !== 'none') {
      const principal = await authenticate(ex, { allowQueryToken: mode === 'stream' });
      if (principal.via === 'stream_token' && mode !== 'stream') throw new UnauthorizedError();
      if (mode === 'admin' && principal.role !== 'admin') throw new ForbiddenError();
      if (mode === 'operator' && !principal.operator) throw new ForbiddenError();
      ex.identify(principal);
    }
    await next();
  };
}

/**
 * Validates params, query and body against the route's schemas, compiled once per route, after
 * the input hygiene every route shares (input-hygiene.ts): clean strings everywhere a handler can
 * read one, finite path and query numbers, JSON nested at most `maxJsonDepth` levels.
 */
export function validateStage(validation: Validation, routes: Route[], maxJsonDepth: number): Stage<Exchange> {
  const readJson = (raw: Buffer) => parseJson(raw, maxJsonDepth);
  const compiled = new Map(routes.map((r) => [r, r.compile(validation, readJson)]));
  return function validate(ex, next) {
    const bind = compiled.get(ex.route!)!;
    const { limitBodyBytes } = ex.route!;
    if (limitBodyBytes !== undefined && ex.rawBody.length > limitBodyBytes) throw new LimitExceededError();
    assertCleanStrings(ex.headers, 'headers');
    const params = { ...ex.params };
    assertCleanStrings(params, 'params');
    const query = ex.rawQuery ? parseQuery(ex.rawQuery) : {};
    if (ex.rawQuery) assertCleanStrings(query, 'query');
    ex.call = bind({ params, query, body: undefined, rawBody: ex.rawBody, headers: ex.headers, rawQuery: ex.rawQuery });
    return next();
  };
}

export function handlerStage(): Stage<Exchange> {
  return async function handle(ex) {
    ex.reply = await ex.call!({
      reqId: ex.reqId,
      get log() {
        return ex.log;
      },
      principal: ex.principal!,
      get remoteAddress() {
        return ex.remoteAddress;
      },
      get clientGone() {
        return ex.clientGone;
      },
      ...(ex.idempotency ? { idempotency: ex.idempotency } : {}),
    });
  };
}

/** Repeated keys become arrays (`types=a&types=b`), single keys stay strings. */
export function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

function parseJson(raw: Buffer, maxDepth: number): unknown {
  if (raw.length === 0) throw new InvalidRequestError('Invalid request: body must be JSON');
  const problem = scanJson(raw, maxDepth);
  if (problem) throw jsonProblemError(problem, maxDepth);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new InvalidRequestError('Invalid request: malformed JSON');
  }
}

export interface PipelineDeps {
  router: Router;
  validation: Validation;
  authenticate: Authenticate;
  /** Deepest nesting of arrays and objects a JSON body may have (MAX_JSON_DEPTH). */
  maxJsonDepth?: number;
  /** CORS_ALLOWED_ORIGINS parsed; null or absent: CORS off, and no preflight stage at all. */
  cors?: CorsPolicy | null;
  /** RESPONSE_VALIDATION: the schema of error replies; absent, replies are not checked. */
  checkRepliesWith?: TSchema;
  /** Request metrics (src/observability); absent: no metrics stage at all. */
  observer?: HttpObserver | null;
  /** Request spans and the active span for services (observability/tracing.ts); absent: no trace stage. */
  tracing?: Tracing;
  /** Public static files (the web console) answered before routing; absent: none. */
  site?: StaticSite;
  /** The `Idempotency-Key` store; absent: the header is ignored. */
  idempotency?: IdempotencyPort;
}

/** The fixed pipeline: [trace] → requestId → [metrics] → log → [response check] → errors → [static] → [preflight] → route → auth → validate → [idempotency] → handler. */
export function createPipeline({
  router,
  validation,
  authenticate,
  maxJsonDepth = DEFAULT_MAX_JSON_DEPTH,
  cors,
  checkRepliesWith,
  observer,
  tracing,
  site,
  idempotency,
}: PipelineDeps) {
  return compose<Exchange>([
    ...(tracing ? [traceStage(tracing)] : []),
    requestIdStage(),
    ...(observer ? [metricsStage(observer)] : []),
    accessLogStage(),
    ...(checkRepliesWith ? [responseCheckStage(validation, router.routes, checkRepliesWith)] : []),
    errorStage(),
    ...(site ? [staticStage(site)] : []),
    ...(cors ? [preflightStage(router, cors)] : []),
    routeStage(router, cors ? ['OPTIONS'] : []),
    authStage(authenticate),
    validateStage(validation, router.routes, maxJsonDepth),
    ...(idempotency ? [idempotencyStage(idempotency)] : []),
    handlerStage(),
  ]);
}
