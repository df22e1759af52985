import * as uws from 'uWebSockets.js';
import { App, us_listen_socket_close, us_socket_local_port, type HttpResponse, type us_listen_socket } from 'uWebSockets.js';
import { PayloadTooLargeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { CorsPolicy } from './cors.js';
import { toErrorReply } from './error-response.js';
import { Exchange } from './pipeline.js';
import type { SseObserver } from './sse-observer.js';
import type { Reply, SseReply } from './reply.js';
import type { Router } from './router.js';
import { DEFAULT_CYCLE_QUIET_MS, SseStream, type SseSink, type SseStreamOptions } from './sse-stream.js';
import { TimerWheel } from '../timers/index.js';

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (no SO_REUSEPORT); the package exports it untyped, the enum in its typings is not exported at run time. */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

export interface HttpServerOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  sse: Omit<SseStreamOptions, 'random'>;
  /** Client address from the peer and X-Forwarded-For (client-address.ts); default: the peer. */
  clientAddress?: (peer: string, forwardedFor: string | undefined) => string;
  /** CORS_ALLOWED_ORIGINS parsed (cors.ts); null or absent: no CORS headers and no per-request work. */
  cors?: CorsPolicy | null;
}

export interface HttpServerDeps {
  log: Logger;
  router: Router;
  pipeline: (ex: Exchange) => Promise<void>;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const STATUS_LINE: Record<number, string> = Object.fromEntries(
  Object.entries(STATUS_TEXT).map(([code, text]) => [code, `${code} ${text}`]),
);

/** Per-response state the uWS callbacks share. */
interface Conn {
  res: HttpResponse;
  aborted: boolean;
  sse?: SseStream;
  /** Built when a handler asks whether its client left (Exchange.clientGone); aborted by onAborted. */
  gone?: AbortController;
  /** The request's CORS response headers; set only when CORS is on. */
  cors?: readonly (readonly [string, string])[];
}

/**
 * The only module that talks to uWebSockets.js (style rule 8): reads the request synchronously,
 * always attaches onAborted/onWritable, corks every write made after an await, caps bodies.
 */
export function createHttpServer(opts: HttpServerOptions, { log, router, pipeline }: HttpServerDeps) {
  silenceServerBanner();
  const app = App();
  const cors = opts.cors ?? null;
  let listenSocket: us_listen_socket | null = null;
  let inFlight = 0;
  let draining = false;
  const streams = new Set<SseStream>();
  const forgetStream = (stream: SseStream) => streams.delete(stream);
  // Heartbeats beat up to 1/20 of their interval late, cycles never before 80 % of theirs, and
  // a quiet moment is seen at most 1/20 of the quiet period after it began.
  const quietMs = opts.sse.quietMs ?? DEFAULT_CYCLE_QUIET_MS;
  const sseTimers = new TimerWheel({
    shortestMs: Math.min(opts.sse.heartbeatMs, opts.sse.cycleMs * 0.8, quietMs > 0 ? quietMs : Infinity),
  });

  app.any('/*', (res, req) => {
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const conn = watchAbort(res);
    if (cors) conn.cors = cors.responseHeaders(headers['origin']);
    const incoming = {
      method: req.getCaseSensitiveMethod().toUpperCase(),
      url: req.getUrl(),
      rawQuery: req.getQuery() ?? '',
      headers,
      remoteAddress: () => clientAddressOf(conn, headers['x-forwarded-for']),
      clientGone: () => goneSignal(conn),
    };
    if (draining)
      return writeReply(conn, { status: 503, body: { error: 'Service unavailable', status: 503 }, headers: { Connection: 'close' } });
    dispatch(conn, new Exchange(incoming, log));
  });

  /** '' once the response is finished or aborted: uWS forbids touching it then. */
  function clientAddressOf(conn: Conn, forwardedFor: string | undefined): string {
    if (conn.aborted) return '';
    const peer = Buffer.from(conn.res.getRemoteAddressAsText()).toString();
    return opts.clientAddress ? opts.clientAddress(peer, forwardedFor) : peer;
  }

  /** Asked for while the handler runs, before the reply: `aborted` then means the client left. */
  function goneSignal(conn: Conn): AbortSignal {
    conn.gone ??= new AbortController();
    if (conn.aborted) conn.gone.abort();
    return conn.gone.signal;
  }

  /**
   * The abort handler lives as long as the response (for SSE: the whole stream). It is built
   * here, apart from the request's closures, so its V8 context holds `conn` only and the
   * request's Exchange (headers, loggers, reply) can be collected once the stream is open.
   */
  function watchAbort(res: HttpResponse): Conn {
    const conn: Conn = { res, aborted: false };
    res.onAborted(() => {
      conn.aborted = true;
      conn.gone?.abort();
      conn.sse?.closed();
    });
    return conn;
  }

  function dispatch(conn: Conn, ex: Exchange): void {
    const m = (ex.match = router.match(ex.method, ex.url));
    const cap = (m.kind === 'found' && m.match.route.maxBodyBytes) || opts.maxBodyBytes;
    const length = ex.headers['content-length'];
    if (Number(length ?? 0) > cap) return rejectTooLarge(conn);
    inFlight++;
    // RFC 9112 6.3: with neither Content-Length nor Transfer-Encoding there is no body to wait for.
    const bodiless = (length === undefined || length === '0') && ex.headers['transfer-encoding'] === undefined;
    (bodiless ? Promise.resolve(ex.rawBody) : readBody(conn, cap))
      .then((body) => {
        if (body === null) return; // too large, already answered
        ex.rawBody = body;
        return pipeline(ex).then(() => writeReply(conn, ex.reply ?? { status: 204 }));
      })
      .catch((err: unknown) => {
        const { status, body } = toErrorReply(err, ex.log);
        writeReply(conn, { status, body });
      })
      .finally(() => inFlight--);
  }

  function rejectTooLarge(conn: Conn): void {
    const { status, body } = toErrorReply(new PayloadTooLargeError(), log);
    writeReply(conn, { status, body, headers: { Connection: 'close' } });
  }

  function readBody(conn: Conn, cap: number): Promise<Buffer | null> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      conn.res.onData((chunk, isLast) => {
        if (done) return;
        size += chunk.byteLength;
        if (size > cap) {
          done = true;
          rejectTooLarge(conn);
          return resolve(null);
        }
        // uWS reuses the ArrayBuffer after this callback returns, so copy it.
        chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
        if (isLast) {
          done = true;
          resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
        }
      });
    });
  }

  function writeReply(conn: Conn, reply: Reply): void {
    if (conn.aborted) {
      if ('sse' in reply) reply.abandon?.();
      return;
    }
    if ('sse' in reply) return openStream(conn, reply);
    conn.res.cork(() => {
      conn.res.writeStatus(STATUS_LINE[reply.status] ?? String(reply.status));
      if (reply.headers) for (const k in reply.headers) conn.res.writeHeader(k, reply.headers[k]!);
      // Bodies echo tenant strings: a browser must never sniff one into a page.
      if (!reply.headers?.['X-Content-Type-Options']) conn.res.writeHeader('X-Content-Type-Options', 'nosniff');
      if (conn.cors) writeCorsHeaders(conn.res, conn.cors);
      if ('raw' in reply) {
        conn.res.writeHeader('Content-Type', reply.contentType);
        conn.res.end(reply.raw);
      } else if (reply.status === 304) {
        conn.res.endWithoutBody(); // no Content-Length: a 304's would have to be the cached body's
      } else if (reply.status === 204 || reply.body === undefined) {
        conn.res.endWithoutBody(0);
      } else {
        conn.res.writeHeader('Content-Type', 'application/json');
        conn.res.end(JSON.stringify(reply.body));
      }
    });
    conn.aborted = true; // the response is finished; uWS invalidates it
  }

  function openStream(conn: Conn, reply: SseReply): void {
    const { res } = conn;
    const observer = opts.sse.observer ?? null;
    const streamOpts = reply.cycle === false ? { ...opts.sse, cycleMs: Infinity } : opts.sse;
    const stream = new SseStream(new UwsSseSink(conn, observer), streamOpts, sseTimers);
    observer?.opened();
    conn.sse = stream;
    streams.add(stream);
    stream.onClose(forgetStream);
    watchWritable(conn);
    res.cork(() => {
      res
        .writeStatus('200 OK')
        .writeHeader('Content-Type', 'text/event-stream')
        .writeHeader('Cache-Control', 'no-cache')
        .writeHeader('X-Accel-Buffering', 'no');
      if (conn.cors) writeCorsHeaders(res, conn.cors);
      res.write(`retry: 100\nevent: connected\ndata: {"status":"connected"}\n\n`);
    });
    reply.sse(stream);
  }

  /** Like watchAbort: a callback for the life of the stream whose context holds `conn` only. */
  function watchWritable(conn: Conn): void {
    conn.res.onWritable(() => {
      conn.sse?.drain();
      return true;
    });
  }

  return {
    listen(): Promise<number> {
      return new Promise((resolve, reject) => {
        // Exclusive: without it uSockets sets SO_REUSEPORT, and a second instance on the same port
        // would silently share the connections (docs/decisions/0053-single-writer-data-dir-lock.md).
        // The typings lack the (host, port, options, cb) form the native listen has.
        const listenExclusive = app.listen as unknown as (
          host: string,
          port: number,
          options: number,
          cb: (socket: us_listen_socket | false) => void,
        ) => void;
        listenExclusive.call(app, opts.host, opts.port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${opts.host}:${opts.port}: address in use or not available`));
          listenSocket = socket;
          resolve(us_socket_local_port(socket as never));
        });
      });
    },
    /** Stops accepting, ends SSE streams with `disconnecting`, waits for in-flight requests. */
    async close(timeoutMs: number): Promise<void> {
      draining = true;
      if (listenSocket) us_listen_socket_close(listenSocket);
      listenSocket = null;
      for (const s of [...streams]) s.disconnect('server_shutdown');
      const deadline = Date.now() + timeoutMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (inFlight > 0) log.warn({ inFlight }, 'shutdown timeout with requests still in flight');
      app.close();
    },
    /** Open SSE streams on this instance. */
    streamCount: () => streams.size,
  };
}

/** The SSE sink over a uWS response: shared methods instead of three closures per stream. */
class UwsSseSink implements SseSink {
  readonly #conn: Conn;
  readonly #observer: SseObserver | null;
  #chunk = '';
  #written = false;
  /** One corked-write callback per stream instead of a closure per frame written. */
  readonly #corkedWrite = (): void => {
    this.#written = this.#conn.res.write(this.#chunk);
  };

  constructor(conn: Conn, observer: SseObserver | null) {
    this.#conn = conn;
    this.#observer = observer;
  }

  write(chunk: string): boolean {
    if (this.#conn.aborted) return false;
    if (this.#observer) this.#observer.written(chunk);
    this.#chunk = chunk;
    this.#written = false;
    this.#conn.res.cork(this.#corkedWrite);
    this.#chunk = '';
    return this.#written;
  }

  end(): void {
    const conn = this.#conn;
    if (!conn.aborted) corked(conn.res, () => conn.res.end());
    conn.aborted = true;
  }

  abort(): void {
    const conn = this.#conn;
    if (!conn.aborted) corked(conn.res, () => conn.res.close());
    conn.aborted = true;
  }
}

/**
 * uWS writes a `uWebSockets: 20` header on every response unless its loop is "silent"; the only
 * switch is the undocumented, untyped `_cfg('silent')` of uWebSockets.js. Its canned 400/431/505
 * pages still name the library (docs/decisions/0039-input-hygiene.md).
 */
function silenceServerBanner(): void {
  (uws as unknown as { _cfg?: (key: string) => void })._cfg?.('silent');
}

function writeCorsHeaders(res: HttpResponse, headers: readonly (readonly [string, string])[]): void {
  for (const [k, v] of headers) res.writeHeader(k, v);
}

function corked<T>(res: HttpResponse, fn: () => T): T {
  let out!: T;
  res.cork(() => {
    out = fn();
  });
  return out;
}

export type HttpServer = ReturnType<typeof createHttpServer>;
