/** A non-2xx answer of the service: `status` and the `{error}` message of its body. */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  /** Seconds from a `Retry-After` header, when the answer had one. */
  readonly retryAfterS: number | undefined;

  constructor(status: number, body: unknown, options?: ErrorOptions & { retryAfterS?: number }) {
    const text = body && typeof body === 'object' && 'error' in body ? String((body as { error: unknown }).error) : `HTTP ${status}`;
    super(`${text} (${status})`, options);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.retryAfterS = options?.retryAfterS;
  }

  /** 408, 425, 429 and 5xx: worth another try after a pause (spec 7). */
  get retryable(): boolean {
    return this.status === 408 || this.status === 425 || this.status === 429 || this.status >= 500;
  }
}

/**
 * The service could not be reached (fetch's own `TypeError: fetch failed`): names the URL and
 * the network cause, e.g. `cannot reach http://127.0.0.1:8080/v1/agents: connect ECONNREFUSED
 * 127.0.0.1:8080`. Still a `TypeError`, as fetch's network errors are.
 */
export class ConnectionError extends TypeError {
  readonly url: string;

  constructor(url: string, cause: unknown) {
    super(`cannot reach ${url}: ${causeText(cause)}`, { cause });
    this.name = 'ConnectionError';
    this.url = url;
  }
}

/** The innermost useful message of a network failure (undici nests the socket error in `cause`). */
function causeText(err: unknown): string {
  let e = err as { message?: string; code?: string; cause?: unknown; errors?: unknown[] } | undefined;
  while (e?.cause && typeof e.cause === 'object') e = e.cause as typeof e;
  // Several addresses tried (localhost: ::1 and 127.0.0.1): an AggregateError with an empty message.
  if (e && !e.message && Array.isArray(e.errors) && e.errors.length)
    return e.errors.map((x) => (x as { message?: string }).message ?? String(x)).join('; ');
  return e?.message || e?.code || String(err);
}

/** A second `for await` over the same stream, or a read after `close()`. */
export class StreamStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamStateError';
  }
}

/** Ended by `TurnOptions.timeoutMs` before the turn did. */
export class TurnTimeoutError extends Error {
  constructor(ms: number, options?: ErrorOptions) {
    super(`the turn did not end within ${ms} ms`, options);
    this.name = 'TurnTimeoutError';
  }
}

/** Normalises anything thrown into an `Error`. */
export function ensureError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** Reads `Retry-After` (seconds) from a response, when present and numeric. */
export function retryAfterOf(res: Response): number | undefined {
  const v = Number(res.headers.get('retry-after'));
  return Number.isFinite(v) && v >= 0 && res.headers.has('retry-after') ? v : undefined;
}

/** The error of a failed response: its JSON body when it has one. */
export async function apiErrorOf(res: Response): Promise<ApiError> {
  let body: unknown;
  try {
    const text = await res.text();
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return new ApiError(res.status, body, { retryAfterS: retryAfterOf(res) });
}
