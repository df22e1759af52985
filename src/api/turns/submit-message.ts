/** POST messages (spec 3.2, 4.2): accept a user message and queue its turn. */
import type { InputPart, MessageControlsInput } from '../../../schemas/turns.js';
import type { TurnJob } from '../../bus/index.js';
import { SessionBusyError } from '../../errors.js';
import { stampEvents } from '../../observability/index.js';
import { retry, retryPolicies } from '../../retry/index.js';
import {
  mintAccepted,
  startJob,
  startPreamble,
  turnRefOf,
  type AcceptedMessage,
  type SessionTurnRow,
  type StoredMessage,
} from '../../turns/index.js';
import { createMessageChecks, messageInput } from './message-checks.js';
import { BUSY_STATUSES, type TurnApiContext, type TurnPrincipal } from './turn-api-context.js';

/**
 * The Idempotency-Key's record (src/http/route.ts IdempotencyScope): `prior` is what an earlier
 * request with the key reserved and never settled.
 */
export interface Acceptance {
  prior?: unknown;
  reserve(value: unknown): Promise<void>;
}

/** A reservation read back from the key's record; anything else (another route's) is ignored. */
function asAccepted(value: unknown): AcceptedMessage | null {
  const v = value as Partial<AcceptedMessage> | null;
  const ok = v && typeof v.event_id === 'string' && typeof v.started_id === 'string' && typeof v.turn_id === 'string';
  return ok && v.message && typeof v.message.id === 'string' ? (v as AcceptedMessage) : null;
}

/** How long the previous turn's ack may take before its job is removed for the next message, in ms. */
const ACK_GRACE_MS = 250;
/** Events read back from the log's end to find the previous turn's session.idled (session events may follow it). */
const ENDED_TAIL = 16;

/** The queue still holds the previous turn's job, which the row says is over: it is about to be acked. */
class PreviousJobQueued extends Error {
  constructor(readonly busy: SessionBusyError) {
    super('the previous turn’s job is still queued');
  }
}

export function createSubmitMessage(ctx: TurnApiContext) {
  const { bus, log, status, turnCap, span, owned } = ctx;
  const checks = createMessageChecks(ctx);

  /**
   * Starts a turn with a user message; returns the stored input message. 409 (SessionBusyError)
   * while a turn runs or waits for tool results, with nothing appended. With `acceptance` (an
   * Idempotency-Key), the message's ids are reserved before the job is queued, and a retry whose
   * first attempt left no outcome answers with that message if it was accepted (issue 13 item 8).
   */
  async function submitMessage(
    principal: TurnPrincipal,
    sessionId: string,
    content: InputPart[],
    controls: MessageControlsInput = {},
    tags: readonly string[] = [],
    metadata?: Record<string, unknown>,
    acceptance?: Acceptance,
  ): Promise<StoredMessage> {
    const row = await owned(principal, sessionId);
    let prior = acceptance?.prior === undefined ? null : asAccepted(acceptance.prior);
    // The earlier attempt was answered with an error and its turn voided: this one is a new start.
    if (prior && (await status.isVoid(sessionId, prior.turn_id))) prior = null;
    const pending = prior ? await priorOutcome(sessionId, prior) : null;
    if (pending === 'stored') return prior!.message;
    if (!pending && BUSY_STATUSES.has(row.status)) throw new SessionBusyError();
    if (!pending) await turnCap?.check(row.organization_id);
    await checks.input(principal, sessionId, content, controls);

    const accepted = pending ? prior! : mintAccepted(messageInput(content, controls, tags, metadata));
    if (!pending) await acceptance?.reserve(accepted);
    const { message, turn_id: turnId } = accepted;
    const turn = turnRefOf(accepted);
    const preamble = startPreamble(accepted, row.status === 'started', principal.user_id);
    const actingUser = principal.user_id ? { user_id: principal.user_id } : {};
    const trace = span();
    stampEvents(preamble, trace);

    // The job carries the turn's first events and its worker is their one writer (docs/decisions/); the queue refuses a second turn, so a loser leaves no trace.
    const job = startJob(sessionId, { org_id: row.organization_id, ...turn, ...actingUser, preamble, traceparent: trace.traceparent() });
    await enqueueStart(job, row).catch((err: unknown) => settleUnknownStart(err, sessionId, turnId));
    // The row says active before the answer, so a read or a cancel right after it sees the turn.
    // (The worker's `begin` shows it active too, should this process die first.)
    try {
      await status.markActive(sessionId, turnId);
    } catch (err) {
      log.warn({ err, sessionId, turnId }, 'message accepted; the session row is left to the worker');
    }
    return message;
  }

  /**
   * Where an earlier attempt's message stands: its input.message is stored; or a job is queued
   * that may be its own (its preamble not in yet), so this attempt goes on with its ids and the
   * queue tells (the same turn again is a no-op, another turn is busy); or it was never accepted,
   * and fresh ids keep the session's event ids increasing.
   */
  async function priorOutcome(sessionId: string, prior: AcceptedMessage): Promise<'stored' | 'queued' | null> {
    if (await bus.events.findById(sessionId, prior.event_id)) return 'stored';
    if (await bus.turns.has(sessionId)) return 'queued';
    // Its job may have run and been acked between the two reads: its preamble came first.
    return (await bus.events.findById(sessionId, prior.event_id)) ? 'stored' : null;
  }

  /**
   * The job's enqueue failed, but a publish that timed out may still be stored later (a frozen
   * NATS leader wakes): before the error is answered, the turn is voided so its job, should it
   * arrive, is dropped (issue 32 item 1). If its worker already started it, it was accepted.
   */
  async function settleUnknownStart(err: unknown, sessionId: string, turnId: string): Promise<void> {
    if (err instanceof SessionBusyError) throw err;
    if (await status.voidTurn(sessionId, turnId)) throw err;
    log.warn({ err, sessionId, turnId }, 'enqueue failed, but its turn has started: accepted');
  }

  /**
   * Enqueues; a busy queue whose job is the previous, finished turn's is asked again
   * (retryPolicies.previousTurnJob). Its ack normally lands within milliseconds; one still
   * missing after ACK_GRACE_MS (a frozen worker, a NATS election: issue 32 item 4, 409s after
   * session.idled) is not waited for: once the turn's session.idled is stored, its job is removed.
   */
  async function enqueueStart(job: TurnJob, seen: SessionTurnRow): Promise<void> {
    const since = Date.now();
    let cleared = false;
    const enqueue = async () => {
      try {
        await bus.turns.enqueue(job);
      } catch (err) {
        // Busy, but the row says the last turn is over: its job is about to be acked. Anything
        // else (a turn started meanwhile, which moves current_turn_id) is really busy.
        if (!(err instanceof SessionBusyError)) throw err;
        const now = await status.read(job.session_id);
        const settling = now && !BUSY_STATUSES.has(now.status) && now.current_turn_id === seen.current_turn_id;
        if (!settling) throw err;
        if (!cleared && seen.current_turn_id && Date.now() - since >= ACK_GRACE_MS) {
          cleared = true;
          await removeEndedJob(job.session_id, seen.current_turn_id);
        }
        throw new PreviousJobQueued(err);
      }
    };
    await retry(enqueue, retryPolicies.previousTurnJob, { retryable: (err) => err instanceof PreviousJobQueued }).catch((err: unknown) => {
      throw err instanceof PreviousJobQueued ? err.busy : err;
    });
  }

  /** Removes the finished turn's job when the log's last events show it ended (session.idled stored). */
  async function removeEndedJob(sessionId: string, turnId: string): Promise<void> {
    const last = await bus.events.lastSequence(sessionId);
    const tail = await bus.events.read(sessionId, { afterSequence: Math.max(0, last - ENDED_TAIL), limit: ENDED_TAIL });
    const ended = tail.some((e) => e.type === 'session.idled' && e.context.turn_id === turnId);
    if (!ended) return;
    const removed = await bus.turns.removeFinished(sessionId, turnId);
    log.info({ sessionId, turnId, removed }, 'the finished turn’s job was still queued; removed for the next message');
  }

  return submitMessage;
}

export type SubmitMessage = ReturnType<typeof createSubmitMessage>;
