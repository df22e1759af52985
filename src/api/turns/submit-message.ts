/** POST messages (spec 3.2, 4.2): accept a user message and queue its turn. */
import type { InputPart, MessageControlsInput } from '../../../schemas/turns.js';
import type { NewEvent, TurnJob } from '../../bus/index.js';
import { EFFECTIVE_SESSION_CONFIG_SQL, SESSION_LAYERS_JOIN_SQL } from '../../db/index.js';
import { InvalidRequestError, NotFoundError, SessionBusyError } from '../../errors.js';
import { newId, newIdAfter } from '../../ids.js';
import { pickModelId } from '../../llm/index.js';
import { stampEvents } from '../../observability/index.js';
import { retry, retryPolicies } from '../../retry/index.js';
import { startJob, turnEvents, type MessagePart, type SessionTurnRow, type StoredMessage, type TurnRef } from '../../turns/index.js';
import { createResponseFormatCheck } from './response-format.js';
import { BUSY_STATUSES, type TurnApiContext, type TurnPrincipal } from './turn-api-context.js';

/**
 * The Idempotency-Key's record (src/http/route.ts IdempotencyScope): `prior` is what an earlier
 * request with the key reserved and never settled.
 */
export interface Acceptance {
  prior?: unknown;
  reserve(value: unknown): Promise<void>;
}

/** The ids a message and its turn get, fixed before anything is queued or appended. */
interface AcceptedMessage {
  message: StoredMessage;
  event_id: string;
  started_id: string;
  turn_id: string;
}

/** A reservation read back from the key's record; anything else (another route's) is ignored. */
function asAccepted(value: unknown): AcceptedMessage | null {
  const v = value as Partial<AcceptedMessage> | null;
  const ok = v && typeof v.event_id === 'string' && typeof v.started_id === 'string' && typeof v.turn_id === 'string';
  return ok && v.message && typeof v.message.id === 'string' ? (v as AcceptedMessage) : null;
}

/** The queue still holds the previous turn's job, which the row says is over: it is about to be acked. */
class PreviousJobQueued extends Error {
  constructor(readonly busy: SessionBusyError) {
    super('the previous turn’s job is still queued');
  }
}

export function createSubmitMessage(ctx: TurnApiContext) {
  const { store, bus, log, models, images, status, turnCap, span, owned } = ctx;
  const checkResponseFormat = createResponseFormatCheck(ctx);

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
    await checkImages(principal, sessionId, content);
    await checkControls(principal.org_id, sessionId, controls);
    await checkResponseFormat(principal, controls.response_format);

    const accepted = pending ? prior! : mintAccepted(content, controls, tags, metadata);
    if (!pending) await acceptance?.reserve(accepted);
    const { message, event_id: eventId, started_id: startedId, turn_id: turnId } = accepted;
    const turn: TurnRef = { turn_id: turnId, input_message_id: message.id };
    if (message.tags) turn.tags = [...message.tags];
    const preamble: NewEvent[] = [turnEvents.inputMessage(eventId, message, turn)];
    if (row.status === 'started') preamble.push(turnEvents.sessionStarted(startedId, turn));
    preamble.push(turnEvents.turnStarted(turnId, turn, principal.user_id), turnEvents.sessionActivated(newIdAfter(turnId), turn));
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

  function mintAccepted(
    content: InputPart[],
    controls: MessageControlsInput,
    tags: readonly string[],
    metadata: Record<string, unknown> | undefined,
  ): AcceptedMessage {
    const inputMessageId = newId();
    const eventId = newIdAfter(inputMessageId);
    const startedId = newIdAfter(eventId);
    // turn.started's event id is the turn id: anyone can find where a turn begins with findById.
    const turnId = newIdAfter(startedId);
    const message: StoredMessage = {
      id: inputMessageId,
      role: 'user',
      content: content.map(normalizePart),
      created_at: new Date().toISOString(),
    };
    if (Object.keys(controls).length) message.controls = { ...controls };
    // The message's tags go on every event of its turn (spec 2.5), so clients can filter by them.
    const uniqueTags = [...new Set(tags)];
    if (uniqueTags.length) message.tags = uniqueTags;
    if (metadata) message.metadata = metadata;
    return { message, event_id: eventId, started_id: startedId, turn_id: turnId };
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

  /** Enqueues; a busy queue whose job is the previous, finished turn's is asked again (retryPolicies.previousTurnJob). */
  async function enqueueStart(job: TurnJob, seen: SessionTurnRow): Promise<void> {
    const enqueue = async () => {
      try {
        await bus.turns.enqueue(job);
      } catch (err) {
        // Busy, but the row says the last turn is over: its job is about to be acked. Anything
        // else (a turn started meanwhile, which moves current_turn_id) is really busy.
        if (!(err instanceof SessionBusyError)) throw err;
        const now = await status.read(job.session_id);
        const settling = now && !BUSY_STATUSES.has(now.status) && now.current_turn_id === seen.current_turn_id;
        throw settling ? new PreviousJobQueued(err) : err;
      }
    };
    await retry(enqueue, retryPolicies.previousTurnJob, { retryable: (err) => err instanceof PreviousJobQueued }).catch((err: unknown) => {
      throw err instanceof PreviousJobQueued ? err.busy : err;
    });
  }

  async function checkImages(principal: TurnPrincipal, sessionId: string, content: InputPart[]): Promise<void> {
    for (const part of content) {
      if (part.type !== 'image_file') continue;
      const imageSession = await images.sessionOf(principal.org_id, part.image_id);
      if (!imageSession) throw new NotFoundError();
      // An image is its session's: a member may attach only images of sessions they may reach.
      if (imageSession !== sessionId) await owned(principal, imageSession);
    }
  }

  async function checkControls(orgId: string, sessionId: string, controls: MessageControlsInput): Promise<void> {
    if (controls.model_id) await models.resolve(orgId, controls.model_id);
    if (controls.max_tokens === undefined) return;
    // The model defaults the turn will use: the session's configuration snapshot (spec 3.4).
    const defaults = await store.sql<{ model_id: string | null; agent_model: string | null; harness_model: string | null }>(
      `select s.model_id, c.config #>> '{agent,default_model_id}' as agent_model, c.config #>> '{harness,default_model_id}' as harness_model
       from ${SESSION_LAYERS_JOIN_SQL}, lateral (select ${EFFECTIVE_SESSION_CONFIG_SQL} as config) c where s.id = ?`,
      [sessionId],
    );
    const d = defaults[0];
    const model = await models
      .resolve(orgId, pickModelId(controls.model_id, d?.model_id, d?.agent_model, d?.harness_model))
      .catch(() => null);
    if (model?.max_output_tokens !== undefined && controls.max_tokens > model.max_output_tokens) {
      throw new InvalidRequestError('Invalid request: controls.max_tokens exceeds the model maximum');
    }
  }

  return submitMessage;
}

function normalizePart(part: InputPart): MessagePart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const out: MessagePart = { type: 'image_file', image_id: part.image_id };
  if (part.filename) out['filename'] = part.filename;
  return out;
}
