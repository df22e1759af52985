/**
 * Errors that mean "the database cannot be reached right now" rather than "this request is
 * wrong": the API answers them with 503 and Retry-After (issue 13 item 4), so a client retries
 * instead of reporting a bug. The driver's errors come through MikroORM and kysely unwrapped or
 * as a `cause`, so the whole cause chain is looked at.
 */

/** Socket-level failures while connecting to or talking with the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** PostgreSQL states of a server going away or refusing work: shutdown, crash recovery, no slots. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** SQLSTATE class 08: connection exceptions. */
const CONNECTION_EXCEPTION_CLASS = '08';
/** pg and pg-pool report a dropped connection or a connect timeout only in words. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i;
const MAX_CAUSE_DEPTH = 5;

/** True when `err` (or one of its causes) says PostgreSQL is unreachable or not taking work. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && e instanceof Error; depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
      if (code.length === 5 && code.startsWith(CONNECTION_EXCEPTION_CLASS)) return true;
    }
    if (UNAVAILABLE_MESSAGE.test(e.message)) return true;
    e = e.cause;
  }
  return false;
}
