import { AppError, IdempotencyKeyInUseError, MethodNotAllowedError, TooManyRequestsError, ensureError } from '../errors.js';
import type { Logger } from '../log.js';
import { isBusUnavailable } from '../bus/index.js';
import { isDatabaseUnavailable } from '../db/index.js';

/** What a 503 tells clients to wait before retrying, in seconds: outages of a dependency are short (failover, restart). */
const UNAVAILABLE_RETRY_AFTER_S = 2;

export interface ErrorReply {
  status: number;
  body: { error: string; status: number };
  headers?: Record<string, string>;
}

/**
 * The one place an error becomes `{error, status}` (spec section 7). 4xx messages pass
 * through; a dependency that cannot be reached (503, the database down, NATS down or between
 * leaders) is answered 503 with Retry-After; anything else is logged once with its cause and answered with a generic 500.
 */
export function toErrorReply(thrown: unknown, log: Logger): ErrorReply {
  const err = ensureError(thrown);
  if (err instanceof AppError && err.status < 500) {
    const reply: ErrorReply = { status: err.status, body: { error: err.message, status: err.status } };
    if (err instanceof TooManyRequestsError || err instanceof IdempotencyKeyInUseError)
      reply.headers = { 'Retry-After': String(err.retryAfterS) };
    if (err instanceof MethodNotAllowedError && err.allow.length) reply.headers = { Allow: err.allow.join(', ') };
    return reply;
  }
  if ((err instanceof AppError && err.status === 503) || isDatabaseUnavailable(err) || isBusUnavailable(err)) {
    log.warn({ err }, 'service unavailable');
    return {
      status: 503,
      body: { error: 'Service unavailable', status: 503 },
      headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) },
    };
  }
  log.error({ err }, 'unexpected error');
  return { status: 500, body: { error: 'Internal server error', status: 500 } };
}
