import { randomUUID } from 'node:crypto';
import { ForbiddenError, MethodNotAllowedError, NotFoundError, InvalidRequestError, UnauthorizedError } from '../errors.js';
import { redactUrl, type Logger } from '../log.js';
import { compose, type Stage } from './compose.js';
import { toErrorReply } from './error-response.js';
import type { Principal, Reply, RequestInput, Route } from './route.js';
import type { Router } from './router.js';
import type { Validate, Validation } from './validation.js';

/** One request travelling through the pipeline. */
export interface Exchange {
  method: string;
  url: string;
  rawQuery: string;
  headers: Record<string, string>;
  rawBody: Buffer;
  remoteAddress: string;
  startedAt: number;
  reqId: string;
  log: Logger;
  route?: Route;
  params: Record<string, string>;
  principal?: Principal;
  input?: RequestInput;
  reply?: Reply;
}

/** Resolves the caller; throws UnauthorizedError. `allowQueryToken` is true only on SSE routes. */
export type Authenticate = (ex: Exchange, opts: { allowQueryToken: boolean }) => Promise<Principal>;

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Distrusts the client's X-Request-Id: odd or long values are replaced. */
export function requestIdStage(): Stage<Exchange> {
  return async function requestId(ex, next) {
    const given = ex.headers['x-request-id'];
    ex.reqId = given && REQUEST_ID_RE.test(given) ? given : randomUUID();
    ex.log = ex.log.child({ reqId: ex.reqId });
    await next();
  };
}

/** One access-log line per request; credentials in the URL are redacted. */
export function accessLogStage(): Stage<Exchange> {
  return async function accessLog(ex, next) {
    await next();
    const status = ex.reply && 'status' in ex.reply ? ex.reply.status : 200;
    ex.log.info({ method: ex.method, url: redactUrl(ex.url + (ex.rawQuery ? '?' + ex.rawQuery : '')), status, ms: Date.now() - ex.startedAt }, 'request');
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

export function routeStage(router: Router): Stage<Exchange> {
  return async function route(ex, next) {
    const m = router.match(ex.method, ex.url);
    if (m.kind === 'not_found') throw new NotFoundError();
    if (m.kind === 'method_not_allowed') throw new MethodNotAllowedError();
    ex.route = m.match.route;
    ex.params = m.match.params;
    await next();
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
      ex.principal = principal;
      ex.log = ex.log.child({ orgId: principal.org_id, userId: principal.user_id });
    }
    await next();
  };
}

interface CompiledValidators {
  params?: Validate;
  query?: Validate;
  body?: Validate;
}

/** Validates params, query and body against the route's schemas, compiled once per route. */
export function validateStage(validation: Validation, routes: Route[]): Stage<Exchange> {
  const compiled = new Map<Route, CompiledValidators>();
  for (const r of routes) {
    compiled.set(r, {
      params: r.schema.params && validation.compile(r.schema.params, 'params'),
      query: r.schema.query && validation.compile(r.schema.query, 'query'),
      body: r.schema.body && validation.compile(r.schema.body, 'body'),
    });
  }
  return async function validate(ex, next) {
    const route = ex.route!;
    const v = compiled.get(route)!;
    const params = { ...ex.params };
    v.params?.(params);
    const query = parseQuery(ex.rawQuery);
    v.query?.(query);
    let body: unknown = undefined;
    if ((route.bodyKind ?? 'json') === 'json' && route.schema.body) {
      body = parseJson(ex.rawBody);
      v.body?.(body);
    }
    ex.input = { params, query, body, rawBody: ex.rawBody, headers: ex.headers, rawQuery: ex.rawQuery };
    await next();
  };
}

export function handlerStage(): Stage<Exchange> {
  return async function handle(ex) {
    ex.reply = await ex.route!.handler(ex.input!, {
      reqId: ex.reqId,
      log: ex.log,
      principal: ex.principal!,
      remoteAddress: ex.remoteAddress,
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

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) throw new InvalidRequestError('Invalid request: body must be JSON');
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
}

/** The fixed pipeline: requestId → log → errors → route → auth → validate → handler. */
export function createPipeline({ router, validation, authenticate }: PipelineDeps) {
  return compose<Exchange>([
    requestIdStage(),
    accessLogStage(),
    errorStage(),
    routeStage(router),
    authStage(authenticate),
    validateStage(validation, router.routes),
    handlerStage(),
  ]);
}
