import { randomBytes } from 'node:crypto';
import { ForbiddenError, MethodNotAllowedError, NotFoundError, InvalidRequestError, OriginNotAllowedError, UnauthorizedError } from '../errors.js';
import { redactUrl, type Logger } from '../log.js';
import { compose, type Stage } from './compose.js';
import { preflightHeaders, type CorsPolicy } from './cors.js';
import { toErrorReply } from './error-response.js';
import type { Principal, Reply, RequestInput, Route } from './route.js';
import type { MatchResult, Router } from './router.js';
import { DEFAULT_MAX_JSON_DEPTH, assertCleanStrings, assertFiniteNumbers, jsonProblemError, scanJson } from './input-hygiene.js';
import type { Validate, Validation } from './validation.js';

/** What the transport read from the request before handing it to the pipeline. */
export interface IncomingRequest {
  method: string;
  url: string;
  rawQuery: string;
  headers: Record<string, string>;
  /** Read on demand: the transport's peer address costs an allocation few routes need (login). */
  remoteAddress: () => string;
}

/** One request travelling through the pipeline. */
export class Exchange {
  readonly method: string;
  readonly url: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string>;
  #remoteAddress: (() => string) | string;
  readonly startedAt = Date.now();
  rawBody: Buffer = EMPTY_BODY;
  reqId = '';
  /** The router's answer, when the transport already needed it (for the route's body cap). */
  match?: MatchResult;
  route?: Route;
  params: Record<string, string> = {};
  principal?: Principal;
  input?: RequestInput;
  reply?: Reply;
  readonly rootLog: Logger;
  #log?: Logger;

  constructor(req: IncomingRequest, rootLog: Logger) {
    this.method = req.method;
    this.url = req.url;
    this.rawQuery = req.rawQuery;
    this.headers = req.headers;
    this.#remoteAddress = req.remoteAddress;
    this.rootLog = rootLog;
  }

  /** The client's address (behind a trusted proxy: from X-Forwarded-For); '' once the client has gone. */
  get remoteAddress(): string {
    if (typeof this.#remoteAddress === 'function') this.#remoteAddress = this.#remoteAddress();
    return this.#remoteAddress;
  }

  /**
   * The request's child logger, built on first use: pino children cost a few microseconds each
   * and most requests log nothing but their access line, which goes through the root logger.
   */
  get log(): Logger {
    return (this.#log ??= this.rootLog.child(this.principal ? { reqId: this.reqId, orgId: this.principal.org_id, userId: this.principal.user_id } : { reqId: this.reqId }));
  }

  /** Sets the caller; a logger built before now is rebuilt with the caller's ids. */
  identify(principal: Principal): void {
    this.principal = principal;
    this.#log = undefined;
  }
}

const EMPTY_BODY = Buffer.alloc(0);

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

/** One access-log line per request; credentials in the URL are redacted. */
export function accessLogStage(): Stage<Exchange> {
  return async function accessLog(ex, next) {
    await next();
    if (!ex.rootLog.isLevelEnabled('info')) return;
    const status = ex.reply && 'status' in ex.reply ? ex.reply.status : 200;
    const url = redactUrl(ex.rawQuery ? `${ex.url}?${ex.rawQuery}` : ex.url);
    const { principal } = ex;
    ex.rootLog.info({ reqId: ex.reqId, orgId: principal?.org_id, userId: principal?.user_id, method: ex.method, url, status, ms: Date.now() - ex.startedAt }, 'request');
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

interface CompiledValidators {
  params?: Validate;
  query?: Validate;
  body?: Validate;
}

/**
 * Validates params, query and body against the route's schemas, compiled once per route, after
 * the input hygiene every route shares (input-hygiene.ts): clean strings everywhere a handler can
 * read one, finite path and query numbers, JSON nested at most `maxJsonDepth` levels.
 */
export function validateStage(validation: Validation, routes: Route[], maxJsonDepth: number): Stage<Exchange> {
  const compiled = new Map<Route, CompiledValidators>();
  for (const r of routes) {
    compiled.set(r, {
      params: r.schema.params && validation.compile(r.schema.params, 'params'),
      query: r.schema.query && validation.compile(r.schema.query, 'query'),
      body: r.schema.body && validation.compile(r.schema.body, 'body'),
    });
  }
  return function validate(ex, next) {
    const route = ex.route!;
    const v = compiled.get(route)!;
    assertCleanStrings(ex.headers, 'headers');
    const params = { ...ex.params };
    assertCleanStrings(params, 'params');
    v.params?.(params);
    const query = ex.rawQuery ? parseQuery(ex.rawQuery) : {};
    if (ex.rawQuery) assertCleanStrings(query, 'query');
    v.query?.(query);
    if (v.params) assertFiniteNumbers(params, 'params');
    if (v.query) assertFiniteNumbers(query, 'query');
    let body: unknown;
    if ((route.bodyKind ?? 'json') === 'json' && route.schema.body) {
      body = parseJson(ex.rawBody, maxJsonDepth);
      v.body?.(body);
    }
    ex.input = { params, query, body, rawBody: ex.rawBody, headers: ex.headers, rawQuery: ex.rawQuery };
    return next();
  };
}

export function handlerStage(): Stage<Exchange> {
  return async function handle(ex) {
    ex.reply = await ex.route!.handler(ex.input!, {
      reqId: ex.reqId,
      get log() {
        return ex.log;
      },
      principal: ex.principal!,
      get remoteAddress() {
        return ex.remoteAddress;
      },
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
}

/** The fixed pipeline: requestId → log → errors → [preflight] → route → auth → validate → handler. */
export function createPipeline({ router, validation, authenticate, maxJsonDepth = DEFAULT_MAX_JSON_DEPTH, cors }: PipelineDeps) {
  return compose<Exchange>([
    requestIdStage(),
    accessLogStage(),
    errorStage(),
    ...(cors ? [preflightStage(router, cors)] : []),
    routeStage(router, cors ? ['OPTIONS'] : []),
    authStage(authenticate),
    validateStage(validation, router.routes, maxJsonDepth),
    handlerStage(),
  ]);
}
