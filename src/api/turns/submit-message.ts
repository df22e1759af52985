/** POST messages (spec 3.2, 4.2): accept a user message and queue its turn. */
import type { InputPart, MessageControlsInput } from '../../../schemas/turns.js';
import { SessionBusyError } from '../../errors.js';
import { stampEvents } from '../../observability/index.js';
import { mintAccepted, startJob, startPreamble, turnRefOf, type AcceptedMessage, type StoredMessage } from '../../turns/index.js';
import { createMessageChecks, messageInput } from './message-checks.js';
import { BUSY_STATUSES, type TurnApiContext, type TurnPrincipal } from './turn-api-context.js';
import { createEnqueueTurn } from './enqueue-turn.js';

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

export function createSubmitMessage(ctx: TurnApiContext) {
  const { bus, status, turnCap, span, ownedToStart } = ctx;
  const checks = createMessageChecks(ctx);
  const enqueueTurn = createEnqueueTurn(ctx);

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
    const row = await ownedToStart(principal, sessionId);
    let prior = acceptance?.prior === undefined ? null : asAccepted(acceptance.prior);
    // The earlier attempt was answered with an error and its turn voided: this one is a new start.
    if (prior && (await status.isVoid(sessionId, prior.turn_id))) prior = null;
    const pending = prior ? await priorOutcome(sessionId, prior) : null;
    if (pending === 'stored') return prior!.message;
    if (!pending && BUSY_STATUSES.has(row.status)) throw new SessionBusyError();
    if (!pending) turnCap?.check(row.busyInOrg);
    await checks.input(principal, sessionId, content, controls);

    const accepted = pending ? prior! : mintAccepted(messageInput(content, controls, tags, metadata));
    if (!pending) await acceptance?.reserve(accepted);
    const { message } = accepted;
    const turn = turnRefOf(accepted);
    const preamble = startPreamble(accepted, row.status === 'started', principal.user_id);
    const actingUser = principal.user_id ? { user_id: principal.user_id } : {};
    const trace = span();
    stampEvents(preamble, trace);

    // The job carries the turn's first events and its worker is their one writer (docs/decisions/); the queue refuses a second turn, so a loser leaves no trace.
    const job = startJob(sessionId, { org_id: row.organization_id, ...turn, ...actingUser, preamble, traceparent: trace.traceparent() });
    await enqueueTurn(job, row);
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
    if ((await bus.turns.queued(sessionId)) !== null) return 'queued';
    // Its job may have run and been acked between the two reads: its preamble came first.
    return (await bus.events.findById(sessionId, prior.event_id)) ? 'stored' : null;
  }

  return submitMessage;
}

export type SubmitMessage = ReturnType<typeof createSubmitMessage>;
