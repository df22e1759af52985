import { JetStreamApiError, PubHeaders, type JetStreamPublishOptions, type PubAck } from '@nats-io/jetstream';
import { InvalidArgumentError, MsgHdrsImpl } from '@nats-io/nats-core';
import {
  createInbox,
  type MsgHdrs,
  NoRespondersError,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

/** The status code of a reply that says nobody listens on the subject (no stream takes it). */
const NO_RESPONDERS = 503;

/** The JetStream publish this service uses: `js.publish` with msgID, expectations and headers. */
export type PublishOptions = Pick<Partial<JetStreamPublishOptions>, 'msgID' | 'expect' | 'headers'>;

export interface AckedPublisher {
  publish(subject: string, payload: string | Uint8Array, opts?: PublishOptions): Promise<PubAck>;
  /** Fails what is still waiting for its ack and stops listening. */
  close(): void;
}

interface Waiting {
  resolve(ack: PubAck): void;
  reject(err: unknown): void;
  deadline: number;
  subject: string;
  /** Sends the publish again (only publishes with a msg id, which the stream deduplicates). */
  resend?: () => void;
  resendAt: number;
}

/**
 * A publish with a msg id still unacked after this long is sent again (same id, same
 * expectations), in ms. A publish that reached a stream leader just before it died is lost
 * with it, and one sent while the replicas elect a new leader gets no answer: without a resend
 * the caller learns nothing until the whole timeout (5 s) ran out, and its retry comes that
 * much after the new leader is up (issue 13: ~11 s to move turns on after a NATS node loss).
 * The copy the old leader may have stored makes the resend a duplicate, answered with its ack.
 */
const RESEND_AFTER_MS = 1_000;

/**
 * JetStream publishes with acks, as `js.publish` sends them, over one reply subscription that
 * this publisher keeps open. nats.js makes each publish a request: a request object, a timer, a
 * deferred, a mux entry, an options copy, a TextDecoder, and an Error it builds when the request
 * completes (`RequestError("cancelled")`, about 4 % of the service's CPU under turn load). Here
 * a publish is a reply token in a map; one sweep per second fails what is overdue.
 *
 * Same messages, same errors for the callers: a refusal is a `JetStreamApiError` with the
 * server's code, an overdue ack a `TimeoutError`, a publish nobody takes a `NoRespondersError`
 * (nats.js retries neither, with its default of one attempt). The one retry here: a publish
 * with a msg id that has no answer yet is sent again every second until its deadline (below).
 */
export function createAckedPublisher(nc: NatsConnection, { timeoutMs }: { timeoutMs: number }): AckedPublisher {
  const prefix = `${createInbox()}.`;
  const waiting = new Map<string, Waiting>();
  let next = 0;
  let sweeper: NodeJS.Timeout | undefined;
  let closed = false;

  const sub: Subscription = nc.subscribe(`${prefix}*`, {
    callback(err, msg) {
      if (err) return failAll(err);
      const token = msg.subject.slice(prefix.length);
      const w = waiting.get(token);
      if (!w) return; // overdue and failed already
      waiting.delete(token);
      try {
        w.resolve(readAck(msg, w.subject));
      } catch (refused) {
        w.reject(refused);
      }
    },
  });
  void sub.closed.then(() => failAll(new Error('the ack subscription closed')));

  function failAll(err: unknown): void {
    closed = true;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
    stopSweeping();
  }

  function sweep(): void {
    const now = Date.now();
    for (const [token, w] of waiting) {
      if (w.deadline > now) {
        if (w.resend && w.resendAt <= now) {
          w.resendAt = now + RESEND_AFTER_MS;
          w.resend();
        }
        continue;
      }
      waiting.delete(token);
      w.reject(new TimeoutError());
    }
    if (waiting.size === 0) stopSweeping();
  }

  function stopSweeping(): void {
    if (sweeper) clearInterval(sweeper);
    sweeper = undefined;
  }

  return {
    publish(subject, payload, opts = {}) {
      if (closed) return Promise.reject(new Error('the publisher is closed'));
      const token = (next++).toString(36);
      let h: MsgHdrs;
      try {
        h = publishHeaders(opts);
      } catch (err) {
        return Promise.reject(err);
      }
      const send = () => nc.publish(subject, payload, { reply: prefix + token, headers: h });
      const resend = opts.msgID
        ? () => {
            try {
              send();
            } catch {
              // A closed connection: the sweep fails the publish at its deadline.
            }
          }
        : undefined;
      const now = Date.now();
      const acked = new Promise<PubAck>((resolve, reject) =>
        waiting.set(token, { resolve, reject, deadline: now + timeoutMs, subject, resend, resendAt: now + RESEND_AFTER_MS }),
      );
      try {
        send();
      } catch (err) {
        waiting.delete(token);
        return Promise.reject(err);
      }
      sweeper ??= setInterval(sweep, Math.min(RESEND_AFTER_MS / 2, timeoutMs)).unref();
      return acked;
    },
    close() {
      failAll(new Error('the publisher is closed'));
      if (!sub.isClosed()) sub.unsubscribe();
    },
  };
}

/**
 * The caller's headers plus those of `js.publish` for the msg id and expectations, built in one
 * go: `MsgHdrs.set` canonicalises and validates its key and scans the others twice (the acked
 * publisher was 6 % of the service's allocations under turn load, mostly that). The keys here
 * are nats.js's constants and the caller's were set through `MsgHdrs` already; the values are
 * ids and numbers, checked like `set` checks them (no line breaks). The caller's `MsgHdrsImpl`
 * gets them added, as `js.publish` adds them to the caller's headers (no copy of its map).
 */
export function publishHeaders({ headers, msgID, expect }: PublishOptions): MsgHdrs {
  if (LINE_BREAK.test(msgID ?? '') || LINE_BREAK.test(expect?.lastMsgID ?? ''))
    throw new InvalidArgumentError('header values cannot contain \\r or \\n');
  let h: MsgHdrsImpl;
  if (headers instanceof MsgHdrsImpl) h = headers;
  else {
    h = new MsgHdrsImpl();
    if (headers) for (const [k, v] of headers) h.headers.set(k, v);
  }
  const r = h.headers;
  if (msgID) r.set(PubHeaders.MsgIdHdr, [msgID]);
  if (expect?.lastSubjectSequence !== undefined) r.set(PubHeaders.ExpectedLastSubjectSequenceHdr, [String(expect.lastSubjectSequence)]);
  if (expect?.lastMsgID) r.set(PubHeaders.ExpectedLastMsgIdHdr, [expect.lastMsgID]);
  if (expect?.lastSequence !== undefined) r.set(PubHeaders.ExpectedLastSeqHdr, [String(expect.lastSequence)]);
  if (expect?.streamName) r.set(PubHeaders.ExpectedStreamHdr, [expect.streamName]);
  return h;
}
const LINE_BREAK = /[\r\n]/;

/**
 * The PubAck in a reply, or the refusal it carries (thrown). No responders is nats.js's own
 * error, as `js.publish` gives it: no stream takes the subject, or its leader is being elected.
 */
function readAck(msg: Msg, subject: string): PubAck {
  if (msg.headers?.code === NO_RESPONDERS) throw new NoRespondersError(subject);
  const body = msg.json<{
    error?: ConstructorParameters<typeof JetStreamApiError>[0];
    stream?: string;
    seq?: number;
    duplicate?: boolean;
    domain?: string;
  }>();
  if (body.error) throw new JetStreamApiError(body.error);
  if (!body.stream || body.seq === undefined) throw new Error('invalid ack response');
  return { stream: body.stream, seq: body.seq, duplicate: body.duplicate ?? false, domain: body.domain ?? '' } as PubAck;
}
