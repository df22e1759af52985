import type { Logger } from '../log.js';
import type { Reply } from './reply.js';
import type { BoundHandler, IdempotencyScope, Route } from './route.js';
import type { Principal } from '../auth/principal.js';
import type { MatchResult } from './router.js';

/** What the transport read from the request before handing it to the pipeline. */
export interface IncomingRequest {
  method: string;
  url: string;
  rawQuery: string;
  headers: Record<string, string>;
  /** Read on demand: the transport's peer address costs an allocation few routes need (login). */
  remoteAddress: () => string;
  /** Read on demand: a signal that fires when the client goes away before the reply (absent: never fires). */
  clientGone?: () => AbortSignal;
}

/** The signal of a request whose transport cannot tell when its client leaves. */
const NEVER_ABORTED = new AbortController().signal;

/** One request travelling through the pipeline. */
export class Exchange {
  readonly method: string;
  readonly url: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string>;
  #remoteAddress: (() => string) | string;
  #clientGone: (() => AbortSignal) | AbortSignal;
  readonly startedAt = Date.now();
  rawBody: Buffer = EMPTY_BODY;
  reqId = '';
  /** The router's answer, when the transport already needed it (for the route's body cap). */
  match?: MatchResult;
  route?: Route;
  params: Record<string, string> = {};
  principal?: Principal;
  /** The handler bound to this request's validated input. */
  call?: BoundHandler;
  reply?: Reply;
  /** Set by the idempotency stage for the handler. */
  idempotency?: IdempotencyScope;
  readonly rootLog: Logger;
  #log?: Logger;

  constructor(req: IncomingRequest, rootLog: Logger) {
    this.method = req.method;
    this.url = req.url;
    this.rawQuery = req.rawQuery;
    this.headers = req.headers;
    this.#remoteAddress = req.remoteAddress;
    this.#clientGone = req.clientGone ?? NEVER_ABORTED;
    this.rootLog = rootLog;
  }

  /** The client's address (behind a trusted proxy: from X-Forwarded-For); '' once the client has gone. */
  get remoteAddress(): string {
    if (typeof this.#remoteAddress === 'function') this.#remoteAddress = this.#remoteAddress();
    return this.#remoteAddress;
  }

  /** Fires when the client closes the connection before the reply is written (a long call stops its work). */
  get clientGone(): AbortSignal {
    if (typeof this.#clientGone === 'function') this.#clientGone = this.#clientGone();
    return this.#clientGone;
  }

  /**
   * The request's child logger, built on first use: pino children cost a few microseconds each
   * and most requests log nothing but their access line, which goes through the root logger.
   */
  get log(): Logger {
    return (this.#log ??= this.rootLog.child(
      this.principal ? { reqId: this.reqId, orgId: this.principal.org_id, userId: this.principal.user_id } : { reqId: this.reqId },
    ));
  }

  /** Sets the caller; a logger built before now is rebuilt with the caller's ids. */
  identify(principal: Principal): void {
    this.principal = principal;
    this.#log = undefined;
  }
}

const EMPTY_BODY = Buffer.alloc(0);
