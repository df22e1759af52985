/**
 * The application's error hierarchy. An `AppError` carries the HTTP status it maps to;
 * `src/http/error-response.ts` is the only place that turns errors into response bodies.
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string, options?: ErrorOptions) {
    // A client error is an answer, not a fault: it is never logged with a stack, and capturing one
    // was the largest single cost of a 404 (bench/README.md, HTTP).
    const stackTraceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'AppError';
    this.status = status;
    this.code = code;
  }
}

export class InvalidRequestError extends AppError {
  constructor(message = 'Invalid request', options?: ErrorOptions) {
    super(400, 'invalid_request', message, options);
    this.name = 'InvalidRequestError';
  }
}

export class LimitExceededError extends AppError {
  constructor(message = 'Input exceeds allowed limits', options?: ErrorOptions) {
    super(400, 'limit_exceeded', message, options);
    this.name = 'LimitExceededError';
  }
}

export class UnauthorizedError extends AppError {
  constructor(options?: ErrorOptions) {
    super(401, 'unauthorized', 'Unauthorized', options);
    this.name = 'UnauthorizedError';
  }
}

export class ForbiddenError extends AppError {
  constructor(options?: ErrorOptions) {
    super(403, 'forbidden', 'Forbidden', options);
    this.name = 'ForbiddenError';
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found', options?: ErrorOptions) {
    super(404, 'not_found', message, options);
    this.name = 'NotFoundError';
  }
}

export class MethodNotAllowedError extends AppError {
  /** The methods the path does have, for the `Allow` header (RFC 9110 15.5.6). */
  readonly allow: readonly string[];
  constructor(allow: readonly string[] = []) {
    super(405, 'method_not_allowed', 'Method not allowed');
    this.name = 'MethodNotAllowedError';
    this.allow = allow;
  }
}

/** A CORS preflight from an origin CORS_ALLOWED_ORIGINS does not list. */
export class OriginNotAllowedError extends AppError {
  constructor() {
    super(403, 'forbidden', 'Origin not allowed');
    this.name = 'OriginNotAllowedError';
  }
}

export class ConflictError extends AppError {
  constructor(message = 'Conflict', options?: ErrorOptions) {
    super(409, 'conflict', message, options);
    this.name = 'ConflictError';
  }
}

/** A second turn for a session whose turn is still running (spec section 7: 409). */
export class SessionBusyError extends ConflictError {
  constructor(options?: ErrorOptions) {
    super('Session is busy', options);
    this.name = 'SessionBusyError';
  }
}

/** A request with the same `Idempotency-Key` is still running (answered with `Retry-After`). */
export class IdempotencyKeyInUseError extends ConflictError {
  readonly retryAfterS = 1;
  constructor() {
    super('A request with this Idempotency-Key is still in progress; retry after it finished');
    this.name = 'IdempotencyKeyInUseError';
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message = 'Payload too large') {
    super(413, 'payload_too_large', message);
    this.name = 'PayloadTooLargeError';
  }
}

/**
 * A tenant quota is reached and nothing was changed: 413 when a size total would be exceeded,
 * 409 when a count is (docs/decisions/0037-tenant-quotas.md).
 */
export class QuotaExceededError extends AppError {
  constructor(kind: 'count' | 'bytes', message: string) {
    super(kind === 'bytes' ? 413 : 409, 'quota_exceeded', message);
    this.name = 'QuotaExceededError';
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message = 'Unsupported media type') {
    super(415, 'unsupported_media_type', message);
    this.name = 'UnsupportedMediaTypeError';
  }
}

export class UnprocessableError extends AppError {
  constructor(message = 'Unprocessable entity', options?: ErrorOptions) {
    super(422, 'unprocessable', message, options);
    this.name = 'UnprocessableError';
  }
}

export class TooManyRequestsError extends AppError {
  readonly retryAfterS: number;
  constructor(retryAfterS: number, message = 'Too many requests') {
    super(429, 'too_many_requests', message);
    this.name = 'TooManyRequestsError';
    this.retryAfterS = retryAfterS;
  }
}

/**
 * An operator's per-organisation cap (ORG_MAX_AGENTS, ORG_MAX_SESSIONS) is reached and nothing was
 * created (issue 30 item 6). 429: the tenant's rate of growth met a server-side limit; it frees as
 * the organisation deletes what it no longer needs.
 */
export class OrgLimitError extends AppError {
  constructor(message: string) {
    super(429, 'org_limit_reached', message);
    this.name = 'OrgLimitError';
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message = 'Service unavailable', options?: ErrorOptions) {
    super(503, 'unavailable', message, options);
    this.name = 'ServiceUnavailableError';
  }
}

/** Normalises anything thrown into an Error (rule 12). */
export function ensureError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === 'string' ? value : JSON.stringify(value));
}
