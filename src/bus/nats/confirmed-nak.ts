/**
 * A nak the server confirms. `JsMsg.nak()` is fire-and-forget: when the consumer's leader is
 * lost (its node dies, a leader election runs), the nak vanishes and the turn waits out its
 * whole lease (TURN_CLAIM_TIMEOUT_MS) before anyone retries it. JetStream answers an ack of any
 * kind that carries a reply subject, so this sends the nak as a request and sends it again
 * until the (new) consumer leader confirms it or the lease would have redelivered anyway.
 */
import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { nanos } from '@nats-io/nats-core';
import { retry, retryPolicies } from '../../retry/index.js';

export interface ConfirmedNakOptions {
  /** How long one attempt waits for the confirmation, in ms (default 2000). */
  attemptTimeoutMs?: number;
  /** Pause between attempts, in ms (default 250). */
  retryPauseMs?: number;
  /** Give up after this long, in ms: the lease redelivers the message by then (default 60000). */
  giveUpAfterMs?: number;
}

const DEFAULT_ATTEMPT_TIMEOUT_MS = 2_000;
const DEFAULT_RETRY_PAUSE_MS = retryPolicies.leaderless.backoff.firstMs;
const DEFAULT_GIVE_UP_AFTER_MS = 60_000;

/** The ack subject of a delivery; nats.js keeps it on the message implementation, not the JsMsg type. */
function ackSubjectOf(m: JsMsg): string | null {
  const reply = (m as unknown as { reply?: unknown }).reply;
  return typeof reply === 'string' && reply.length > 0 ? reply : null;
}

function nakPayload(delayMs: number): string {
  return delayMs > 0 ? `-NAK ${JSON.stringify({ delay: nanos(delayMs) })}` : '-NAK';
}

/**
 * Naks `m` (redelivery after `delayMs`) and resolves once the server confirmed it; true when
 * confirmed, false when it gave up (the lease then redelivers). Never throws.
 */
export async function confirmedNak(nc: NatsConnection, m: JsMsg, delayMs: number, opts: ConfirmedNakOptions = {}): Promise<boolean> {
  const {
    attemptTimeoutMs = DEFAULT_ATTEMPT_TIMEOUT_MS,
    retryPauseMs = DEFAULT_RETRY_PAUSE_MS,
    giveUpAfterMs = DEFAULT_GIVE_UP_AFTER_MS,
  } = opts;
  const subject = ackSubjectOf(m);
  if (!subject) {
    m.nak(delayMs); // a changed nats.js shape: the plain nak is still better than none
    return false;
  }
  const payload = nakPayload(Math.max(0, delayMs));
  const deadline = Date.now() + giveUpAfterMs;
  const policy = {
    ...retryPolicies.leaderless,
    deadlineMs: giveUpAfterMs,
    backoff: { ...retryPolicies.leaderless.backoff, firstMs: retryPauseMs, maxMs: retryPauseMs },
  };
  // No responders (no consumer leader right now), a timeout or a disconnect: try again.
  const send = () => nc.request(subject, payload, { timeout: Math.min(attemptTimeoutMs, Math.max(1, deadline - Date.now())) });
  return retry(send, policy, { retryable: () => !nc.isClosed() }).then(
    () => true,
    () => false,
  );
}
