import { RequestError, RequestOne } from '@nats-io/nats-core/internal';

/** The part of nats.js's request class this module relies on (exported from `/internal`, not public API). */
interface RequestShape {
  cancel(err?: Error): void;
}

const PATCHED = Symbol.for('agent-session-service.nats.shared-cancel-error');

/**
 * nats.js ends every request, answered or not, with `cancel()`, which rejects the request's
 * deferred with a fresh `RequestError("cancelled")`. For an answered request the deferred is
 * already resolved and the rejection is dropped, but the Error and its stack trace are built
 * anyway: about 5 % of the service's CPU when it publishes thousands of JetStream events per
 * second (each publish is a request). Passing one shared, stackless error instead keeps the
 * behaviour for a request really cancelled without a reason (it is rejected with a
 * RequestError "cancelled") and builds nothing per request.
 *
 * Patches the class once per process; returns false, and changes nothing, when nats.js no
 * longer has the expected shape.
 */
export function shareRequestCancelError(): boolean {
  const proto = RequestOne?.prototype as (RequestShape & { [PATCHED]?: true }) | undefined;
  if (!proto || typeof proto.cancel !== 'function') return false;
  if (proto[PATCHED]) return true;
  const cancel = proto.cancel;
  const cancelled = stackless(() => new RequestError('cancelled'));
  proto.cancel = function cancelWithSharedError(this: RequestShape, err?: Error): void {
    cancel.call(this, err ?? cancelled);
  };
  proto[PATCHED] = true;
  return true;
}

function stackless<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
