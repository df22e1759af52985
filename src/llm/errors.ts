/**
 * `LlmError`: the only error a provider stream throws (besides the abort reason). Its
 * message is generic on purpose: vendor bodies can echo prompts or masked keys, so they
 * are never copied into the message or attached as `cause`; only the status, the vendor's
 * short error code and the retry hint survive.
 */

export type LlmErrorKind = 'auth' | 'rate_limit' | 'network' | 'server' | 'bad_request';

const MESSAGES: Record<LlmErrorKind, string> = {
  auth: 'LLM provider rejected the credentials',
  rate_limit: 'LLM provider rate limit exceeded',
  network: 'LLM provider could not be reached',
  server: 'LLM provider failed to respond',
  bad_request: 'LLM provider rejected the request',
};

export interface LlmErrorDetails {
  /** HTTP status of the vendor response, when there was one. */
  status?: number;
  /** The vendor's delay hint (Retry-After header or body), in milliseconds. */
  retryAfterMs?: number;
  /** The vendor's short error code/type (e.g. `rate_limit_error`), never its message. */
  vendorCode?: string;
  /** Overrides the kind's default (rate_limit/network/server are retryable). */
  retryable?: boolean;
  /** The request did not fit the model's context window (the turn compacts and tries once more). */
  contextExceeded?: boolean;
}

export class LlmError extends Error {
  readonly kind: LlmErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly vendorCode: string | undefined;
  readonly retryable: boolean;
  readonly contextExceeded: boolean;
  constructor(kind: LlmErrorKind, details: LlmErrorDetails = {}, options?: ErrorOptions) {
    super(MESSAGES[kind], options);
    this.name = 'LlmError';
    this.kind = kind;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
    this.vendorCode = details.vendorCode;
    this.retryable = details.retryable ?? (kind === 'rate_limit' || kind === 'network' || kind === 'server');
    this.contextExceeded = details.contextExceeded ?? false;
  }
}

/** Codes that say "quota exhausted" rather than "slow down": retrying cannot help. */
const NON_RETRYABLE_CODES = new Set(['insufficient_quota', 'billing_hard_limit_reached']);

const CODE_KINDS: Record<string, LlmErrorKind> = {
  rate_limit_error: 'rate_limit',
  rate_limit_exceeded: 'rate_limit',
  insufficient_quota: 'rate_limit',
  RESOURCE_EXHAUSTED: 'rate_limit',
  authentication_error: 'auth',
  permission_error: 'auth',
  invalid_api_key: 'auth',
  UNAUTHENTICATED: 'auth',
  PERMISSION_DENIED: 'auth',
  invalid_request_error: 'bad_request',
  not_found_error: 'bad_request',
  INVALID_ARGUMENT: 'bad_request',
  invalid_prompt: 'bad_request',
  context_length_exceeded: 'bad_request',
  overloaded_error: 'server',
  api_error: 'server',
  server_error: 'server',
  UNAVAILABLE: 'server',
  INTERNAL: 'server',
};

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Maps an HTTP status of a vendor response to an error kind. */
export function kindForStatus(status: number): LlmErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (status === 408) return 'network';
  if (status >= 500) return 'server';
  return 'bad_request';
}

/** Parses Retry-After (seconds or HTTP date) or retry-after-ms into milliseconds. */
export function parseRetryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const get = (name: string): string | null | undefined => {
    if (!headers || typeof headers !== 'object') return undefined;
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
    const v = (headers as Record<string, unknown>)[name];
    return typeof v === 'string' ? v : undefined;
  };
  const ms = Number(get('retry-after-ms'));
  if (get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms;
  const raw = get('retry-after');
  if (!raw) return undefined;
  const s = Number(raw);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How each vendor says a request is over the context window: OpenAI's code
 * `context_length_exceeded` (both APIs), Anthropic's 400 `invalid_request_error` "prompt is too
 * long: N tokens > M maximum", Gemini's 400 `INVALID_ARGUMENT` "The input token count (N) exceeds
 * the maximum number of tokens allowed (M)". Only this yes/no is kept, never the message.
 */
const CONTEXT_EXCEEDED_CODES = new Set(['context_length_exceeded', 'model_context_window_exceeded']);
const CONTEXT_EXCEEDED_TEXT = /prompt is too long|input token count|context (?:length|window)|maximum context|too many (?:input )?tokens/i;

function saysContextExceeded(err: unknown, codes: readonly unknown[]): boolean {
  if (codes.some((c) => typeof c === 'string' && CONTEXT_EXCEEDED_CODES.has(c))) return true;
  const e = (err ?? {}) as { status?: unknown; message?: unknown; error?: unknown };
  if (e.status !== 400 && e.status !== 413) return false;
  const nested = (e.error && typeof e.error === 'object' ? e.error : {}) as { message?: unknown; error?: { message?: unknown } };
  const texts = [e.message, nested.message, nested.error?.message];
  // Bounded: a vendor's message is matched on its first 2 KB only.
  return texts.some((t) => typeof t === 'string' && CONTEXT_EXCEEDED_TEXT.test(t.slice(0, 2048)));
}

function isNetworkFailure(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { name, code, message } = e as { name?: string; code?: string; message?: string };
    if (name === 'APIConnectionError' || name === 'APIConnectionTimeoutError') return true;
    if (code && NETWORK_CODES.has(code)) return true;
    if (name === 'TypeError' && (message === 'terminated' || message === 'fetch failed')) return true;
  }
  return false;
}

/**
 * Normalises anything an SDK throws into an `LlmError`. Uses the numeric `status` when
 * present, then the vendor code, then transport-failure markers; unknown failures count
 * as `server` (retryable) so a transient oddity does not end a turn at once.
 */
export function toLlmError(err: unknown, hint: { retryAfterMs?: number } = {}): LlmError {
  if (err instanceof LlmError) return err;
  const e = (err ?? {}) as { status?: unknown; headers?: unknown; code?: unknown; type?: unknown; error?: unknown };
  const nested = (e.error && typeof e.error === 'object' ? e.error : {}) as { type?: unknown; code?: unknown };
  const vendorCode = [e.code, e.type, nested.code, nested.type].find(
    (c): c is string => typeof c === 'string' && c.length > 0 && c.length < 64,
  );
  const status = typeof e.status === 'number' ? e.status : undefined;
  const retryAfterMs = hint.retryAfterMs ?? parseRetryAfterMs(e.headers);
  const retryable = vendorCode && NON_RETRYABLE_CODES.has(vendorCode) ? false : undefined;
  const contextExceeded = saysContextExceeded(err, [e.code, e.type, nested.code, nested.type]) || undefined;
  const details = { status, retryAfterMs, vendorCode, retryable, contextExceeded };
  if (status !== undefined && status >= 400) return new LlmError(kindForStatus(status), details);
  if (vendorCode && CODE_KINDS[vendorCode]) return new LlmError(CODE_KINDS[vendorCode], details);
  if (isNetworkFailure(err)) return new LlmError('network', details, { cause: err });
  return new LlmError('server', details);
}
