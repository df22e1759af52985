import { DEFAULT_BACKOFF, backoffDelay, sleep, type BackoffOptions } from './backoff.js';
import { ApiError, StreamStateError, apiErrorOf, ensureError } from './errors.js';
import type { EventType, SessionEvent } from './events.js';
import { ReadTimeoutError, readSse } from './sse-read.js';

/** Why the iterator opened a new connection. */
export type ReconnectReason = 'disconnecting' | 'ended' | 'network' | 'read_timeout' | 'token_expired' | 'http_error';

export interface ReconnectInfo {
  reason: ReconnectReason;
  /** Consecutive failed attempts so far (0 after a clean `disconnecting`). */
  attempt: number;
  delayMs: number;
  /** The position the next connection resumes after. */
  lastEventId: string | undefined;
  error?: Error;
}

export interface StreamOptions {
  /** Resume after this event id (events after it only); default: from the session's start. */
  since?: string;
  /** Only these types (spec 6.1; at most 25). */
  types?: EventType[];
  /** Not these types (applied after `types`). */
  exclude?: EventType[];
  /** Only events with any of these tags. */
  tags?: string[];
  /** Ends the iteration (the loop then finishes without an error). */
  signal?: AbortSignal;
  /**
   * `header` (default): `Authorization` on every connection. `stream-token`: mint a session
   * stream token (`POST /v1/sessions/{id}/stream-token`) and pass it as `?access_token=`,
   * minting a new one whenever it has expired.
   */
  auth?: 'header' | 'stream-token';
  /** Reconnect when nothing (heartbeats included) arrives for this long, in ms (default 45 000, spec 6.1). */
  readTimeoutMs?: number;
  /** Delays between failed attempts (default 250 ms doubling to 10 s, jittered). */
  backoff?: Partial<BackoffOptions>;
  /** Give up after this many consecutive failed attempts (default: never). */
  maxAttempts?: number;
  /** Called before each reconnect. */
  onReconnect?(info: ReconnectInfo): void;
}

/** What the stream needs from the client: where, how to authenticate, and how to mint tokens. */
export interface StreamTransport {
  baseUrl: string;
  fetch: typeof fetch;
  authorization(): Promise<string | undefined>;
  streamToken(sessionId: string): Promise<string>;
}

export const DEFAULT_READ_TIMEOUT_MS = 45_000;

type Outcome = { reason: ReconnectReason; delayMs?: number; error?: Error };

/**
 * The events of one session as an async iterator that survives connection cycling
 * (`disconnecting`), dropped connections, read timeouts and expired stream tokens: it reconnects
 * with `since_id` = the last event it yielded, and drops anything at or below the last sequence
 * it yielded, so each event comes exactly once and in order. One `for await` per stream;
 * `break`, `close()` or the signal end it and close the connection.
 */
export class SessionEventStream implements AsyncIterable<SessionEvent> {
  #lastId: string | undefined;
  #lastSequence = 0;
  #iterated = false;
  #connections = 0;
  readonly #abort = new AbortController();
  readonly #done: Promise<void | Error>;
  #settle!: (v: void | Error) => void;

  constructor(
    private readonly transport: StreamTransport,
    private readonly sessionId: string,
    private readonly options: StreamOptions = {},
  ) {
    this.#lastId = options.since;
    this.#done = new Promise((resolve) => (this.#settle = resolve));
    if (options.signal?.aborted) this.close();
    else options.signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /** The id of the last event yielded (or `since`): where a new stream would resume. */
  get lastEventId(): string | undefined {
    return this.#lastId;
  }

  /** Connections opened so far. */
  get connections(): number {
    return this.#connections;
  }

  /** Stops the iteration and closes the connection. */
  close(): void {
    this.#abort.abort(new StreamStateError('stream closed'));
  }

  /** Resolves when the iteration has ended: with the error that ended it, if any. */
  closed(): Promise<void | Error> {
    return this.#done;
  }

  [Symbol.asyncIterator](): AsyncIterator<SessionEvent> {
    if (this.#iterated) throw new StreamStateError('a session event stream can be iterated once');
    this.#iterated = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<SessionEvent> {
    const backoff = { ...DEFAULT_BACKOFF, ...this.options.backoff };
    let token: string | undefined;
    let failures = 0;
    try {
      while (!this.#abort.signal.aborted) {
        const conn = new AbortController();
        const stop = () => conn.abort();
        this.#abort.signal.addEventListener('abort', stop, { once: true });
        let outcome: Outcome;
        try {
          if (this.options.auth === 'stream-token') token ??= await this.transport.streamToken(this.sessionId);
          const res = await this.transport.fetch(this.#url(token), { headers: await this.#headers(token), signal: conn.signal });
          if (res.status === 401 && token) {
            token = undefined;
            outcome = { reason: 'token_expired', delayMs: 0 };
          } else if (!res.ok || !res.body) {
            const error = await apiErrorOf(res);
            if (!error.retryable) throw error;
            outcome = { reason: 'http_error', error, delayMs: error.retryAfterS === undefined ? undefined : error.retryAfterS * 1000 };
          } else {
            this.#connections++;
            outcome = yield* this.#pump(res.body, () => (failures = 0));
          }
        } catch (err) {
          if (this.#abort.signal.aborted) return;
          if (err instanceof ApiError && !err.retryable) throw err;
          outcome = { reason: err instanceof ReadTimeoutError ? 'read_timeout' : 'network', error: ensureError(err) };
        } finally {
          this.#abort.signal.removeEventListener('abort', stop);
          conn.abort();
        }
        if (this.#abort.signal.aborted) return;
        const clean = outcome.reason === 'disconnecting' || outcome.reason === 'token_expired';
        if (!clean && ++failures > (this.options.maxAttempts ?? Infinity)) throw outcome.error ?? new Error(`stream ${outcome.reason}`);
        const delayMs = outcome.delayMs ?? backoffDelay(Math.max(0, failures - 1), backoff);
        this.options.onReconnect?.({ reason: outcome.reason, attempt: failures, delayMs, lastEventId: this.#lastId, error: outcome.error });
        await sleep(delayMs, this.#abort.signal).catch(() => {});
      }
    } catch (err) {
      this.#settle(ensureError(err));
      throw err;
    } finally {
      this.#settle();
      this.#abort.abort(new StreamStateError('stream ended'));
    }
  }

  /** Yields the events of one connection; returns why it ended. */
  async *#pump(body: ReadableStream<Uint8Array>, connected: () => void): AsyncGenerator<SessionEvent, Outcome> {
    let retryMs: number | undefined;
    for await (const item of readSse(body, this.options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS)) {
      if (item.kind === 'retry') {
        retryMs = item.ms;
        continue;
      }
      const { event, data } = item.message;
      if (event === 'connected') {
        connected();
        continue;
      }
      if (event === 'disconnecting') return { reason: 'disconnecting', delayMs: retryOf(data) ?? retryMs ?? 100 };
      const parsed = JSON.parse(data) as SessionEvent;
      if (typeof parsed.sequence === 'number') {
        if (parsed.sequence <= this.#lastSequence) continue;
        this.#lastSequence = parsed.sequence;
      }
      this.#lastId = parsed.id;
      yield parsed;
    }
    return { reason: 'ended', delayMs: retryMs };
  }

  #url(token: string | undefined): string {
    const url = new URL(`${this.transport.baseUrl.replace(/\/+$/, '')}/v1/sessions/${encodeURIComponent(this.sessionId)}/sse`);
    if (this.#lastId) url.searchParams.set('since_id', this.#lastId);
    for (const t of this.options.types ?? []) url.searchParams.append('types', t);
    for (const t of this.options.exclude ?? []) url.searchParams.append('exclude', t);
    for (const t of this.options.tags ?? []) url.searchParams.append('tags', t);
    if (token) url.searchParams.set('access_token', token);
    return url.toString();
  }

  async #headers(token: string | undefined): Promise<Record<string, string>> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (!token) {
      const authorization = await this.transport.authorization();
      if (authorization) headers['authorization'] = authorization;
    }
    return headers;
  }
}

function retryOf(data: string): number | undefined {
  try {
    const v = (JSON.parse(data) as { retry_ms?: unknown }).retry_ms;
    return typeof v === 'number' && v >= 0 ? v : undefined;
  } catch {
    return undefined;
  }
}
