import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { ClosedConnectionError, ConnectionError, DrainingConnectionError, NoRespondersError, TimeoutError } from '@nats-io/transport-node';
import { JetStreamErrorCodes } from './nats-errors.js';

/**
 * Errors that mean "the bus cannot be reached right now" rather than "this request is wrong" or
 * "this code is wrong": a NATS node is down, the connection is reconnecting, or a stream,
 * consumer or the meta group is electing a leader. The API answers them with 503 and
 * Retry-After (issue 13), as it does a database outage (src/db/unavailable.ts); everything else
 * from the bus stays a 500. Callers wrap bus errors as a `cause`, so the cause chain is walked.
 */

/**
 * nats.js errors: no answer in time, nobody subscribed (a stream without a leader does not
 * answer its subjects), a connection closed, draining or failing. Classes, not names: an
 * `AbortSignal.timeout()` is a DOMException named TimeoutError too, and not the bus's.
 */
const UNREACHABLE: (new (...args: never[]) => Error)[] = [
  TimeoutError,
  NoRespondersError,
  ClosedConnectionError,
  DrainingConnectionError,
  ConnectionError,
];

/** JetStream API refusals of a cluster between leaders; each one passes once a leader is elected. */
const ELECTION_CODES = new Set<number>([
  JetStreamErrorCodes.ClusterNotAvailable,
  JetStreamErrorCodes.ClusterNotLeader,
  JetStreamErrorCodes.StreamOffline,
  JetStreamErrorCodes.ConsumerOffline,
  JetStreamErrorCodes.LastSequenceUnavailable,
  JetStreamErrorCodes.DuplicateMsgIdInProcess,
]);

/** The HTTP-like status JetStream gives a request nobody can serve now. */
const SERVICE_UNAVAILABLE = 503;
/** The status of a JetStream request that timed out on the server (a pull, a direct get). */
const REQUEST_TIMEOUT = 408;
const MAX_CAUSE_DEPTH = 5;

/** True when `err` itself (not its causes) says the bus is unreachable or electing a leader. */
function isUnavailableError(e: Error): boolean {
  if (UNREACHABLE.some((c) => e instanceof c)) return true;
  if (e instanceof JetStreamApiError) return e.status === SERVICE_UNAVAILABLE || ELECTION_CODES.has(e.code);
  // A status reply (JetStreamStatusError, not exported) carries the status as `code`.
  if (e instanceof JetStreamError) {
    const code = (e as JetStreamError & { code?: unknown }).code;
    return code === SERVICE_UNAVAILABLE || code === REQUEST_TIMEOUT;
  }
  return false;
}

/** True when `err` (or one of its causes) says NATS is unreachable for now or between leaders. */
export function isBusUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && e instanceof Error; depth++) {
    if (isUnavailableError(e)) return true;
    e = e.cause;
  }
  return false;
}
