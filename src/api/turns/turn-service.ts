import type { ImageSource } from '../../turns/image-source.js';
import { pickModelId, type ModelResolver } from '../../llm/model-resolver.js';
import type { OrgTurnCap } from './org-turn-cap.js';
import type { SessionStatusStore, SessionTurnRow } from '../../turns/session-status.js';
import { foldTurn } from '../../turns/turn-decider.js';
import {
  addUsage,
  cancelEvents,
  CLIENT_TOOL_SOURCE,
  textPart,
  turnEvents,
  ZERO_USAGE,
  type MessagePart,
  type StoredMessage,
  type TurnRef,
  type Usage,
} from '../../turns/turn-events.js';
import { resumeJob, startJob } from '../../turns/turn-job.js';
import type { ClientToolResultInput, InputPart, MessageControlsInput } from '../../../schemas/turns.js';
import { assertSessionAccess, type Actor } from '../../auth/index.js';
import type { Bus, NewEvent, SessionEvent, TurnJob } from '../../bus/ports.js';
import { catalogued } from '../../bus/session-event.js';
import { ConflictError, InvalidRequestError, NotFoundError, SessionBusyError, UnprocessableError } from '../../errors.js';
import { idSequence, newId, newIdAfter } from '../../ids.js';
import type { Logger } from '../../log.js';
import { createIdTracing, stampEvents, type Tracing } from '../../observability/tracing.js';
import { EFFECTIVE_SESSION_CONFIG_SQL, SESSION_LAYERS_JOIN_SQL, type Store } from '../../db/index.js';

export interface TurnServiceDeps {
  store: Store;
  bus: Bus;
  log: Logger;
  models: ModelResolver;
  images: ImageSource;
  status: SessionStatusStore;
  /** The request's span stamps the events appended here and travels in the turn job (default: ids only). */
  tracing?: Tracing;
  /** The organisation's cap on turns in flight (default: none). */
  turnCap?: OrgTurnCap;
}

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

/** Who submits: a user (HTTP) or a component acting for an organisation (the scheduler). */
export type TurnPrincipal = Actor;

/**
 * How long a message waits when the queue still holds the previous turn's job although the
 * session row already says that turn is over (the worker acks right after going idle), in ms.
 */
const SETTLE_WAIT_MS = 2_000;
const SETTLE_POLL_MS = 5;
/** How long tool results wait for the suspended turn's job to leave the queue, in ms. */
const RESUME_WAIT_MS = 5_000;
/** How long a cancel waits for the first events of a turn its worker began, in ms. */
const BEGUN_WAIT_MS = 5_000;
const BEGUN_POLL_MS = 20;
const READ_PAGE = 1000;

const BUSY_STATUSES = new Set(['active', 'waiting_for_tool_results']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Turns from the API side (spec 3.2, 4.2): submit a message (start a turn), cancel, and
 * client tool results. The queue's one-turn-per-session rule is the race-free busy guard;
 * the session row is the fast check in front of it.
 */
export function createTurnService({ store, bus, log, models, images, status, tracing = createIdTracing(), turnCap }: TurnServiceDeps) {
  /**
   * The span of the request (HTTP, or the scheduler's). Without one (export off and no incoming
   * traceparent, or a caller outside both) a root span of its own: its ids are all it is used for.
   */
  const span = () => tracing.active() ?? tracing.startSpan('turn.submit');

  async function owned(principal: TurnPrincipal, sessionId: string): Promise<SessionTurnRow> {
    const row = await status.read(sessionId);
    assertSessionAccess(principal, row);
    return row!;
  }

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

    // The job carries the turn's first events and its worker is their one writer (docs/decisions.md
    // "One writer for a turn"); the queue refuses a second turn, so a loser leaves no trace.
    const job = startJob(sessionId, { org_id: row.organization_id, ...turn, ...actingUser, preamble, traceparent: trace.traceparent() });
    await enqueueStart(job, row).catch((err: unknown) => settleUnknownStart(err, sessionId, turnId));
    // The row says active before the answer, so a read or a cancel right after it sees the turn.
    // The worker marks it too (the void fence of settleUnknownStart): whichever lands first wins.
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

  async function enqueueStart(job: TurnJob, seen: SessionTurnRow): Promise<void> {
    const deadline = Date.now() + SETTLE_WAIT_MS;
    for (;;) {
      try {
        return await bus.turns.enqueue(job);
      } catch (err) {
        if (!(err instanceof SessionBusyError)) throw err;
        // Busy, but the row says the last turn is over: its job is about to be acked. Anything
        // else (a turn started meanwhile, which moves current_turn_id) is really busy.
        const now = await status.read(job.session_id);
        if (!now || BUSY_STATUSES.has(now.status) || now.current_turn_id !== seen.current_turn_id || Date.now() > deadline) throw err;
        await sleep(SETTLE_POLL_MS);
      }
    }
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

  /** Spec 3.2 steps 1-2; the worker does the rest. 422 when no turn runs. */
  async function cancel(principal: TurnPrincipal, sessionId: string): Promise<{ status: 'cancelled' | 'no_op'; message: string }> {
    const row = await owned(principal, sessionId);
    const turnId = row.current_turn_id;
    if (!BUSY_STATUSES.has(row.status) || !turnId) throw new UnprocessableError('Cannot cancel session: session is not active');
    if (row.cancel_requested_turn_id === turnId) return { status: 'no_op', message: 'The turn is already being cancelled' };
    const requested = await status.requestCancel(sessionId, turnId);
    if (!requested) {
      const now = await status.read(sessionId);
      if (now?.cancel_requested_turn_id === turnId) return { status: 'no_op', message: 'The turn is already being cancelled' };
      throw new UnprocessableError('Cannot cancel session: session is not active');
    }
    // A turn whose worker has not begun it gets its cancel's events from that worker (session-status.ts).
    if (requested.begun) await appendCancel(sessionId, turnId, row);
    await bus.signals.send({ type: 'cancel', session_id: sessionId, turn_id: turnId });
    log.info({ sessionId, turnId }, 'turn cancel requested');
    return { status: 'cancelled', message: 'Turn cancelled' };
  }

  async function appendCancel(sessionId: string, turnId: string, row: SessionTurnRow): Promise<void> {
    const soFar = await turnSoFar(sessionId, turnId, BEGUN_WAIT_MS);
    if (!soFar) {
      // Begun, but its first events are not stored yet: the worker died in between, and the next
      // attempt finds the cancel pending on the row (turn-attempt.ts).
      return log.warn({ sessionId, turnId }, 'cancel recorded; the turn has no events yet, its worker appends them');
    }
    const { turn, usage } = soFar;
    const trace = span();
    const events = cancelEvents(idSequence(), turn, usage);
    stampEvents(events, trace);
    await bus.events.append(sessionId, events);
    // No job is queued while a turn waits for the client, nor for an active turn whose job was
    // lost (issue 13): queue one so a worker closes the turn. A running turn's job stays queued
    // until it is acked, after the session went idle.
    if (row.status === 'waiting_for_tool_results' || !(await bus.turns.has(sessionId))) {
      await bus.turns
        .enqueue(resumeJob(sessionId, { org_id: row.organization_id, ...turn, traceparent: trace.traceparent() }))
        .catch((err: unknown) => {
          if (!(err instanceof SessionBusyError)) throw err;
        });
    }
  }

  /** The turn's identity and usage so far, from its events (turn.started's id is the turn id). */
  async function turnSoFar(
    sessionId: string,
    turnId: string,
    waitMs = 0,
  ): Promise<{ turn: TurnRef; usage: Usage; events: SessionEvent[]; lastSequence: number; startedBy: string | undefined } | null> {
    const started = await startedEvent(sessionId, turnId, waitMs);
    if (!started) return null;
    const events: SessionEvent[] = [started];
    for (let after = started.sequence; ; ) {
      const page = await bus.events.read(sessionId, { afterSequence: after, limit: READ_PAGE });
      events.push(...page);
      if (page.length < READ_PAGE) break;
      after = page.at(-1)!.sequence;
    }
    let usage = ZERO_USAGE;
    for (const e of catalogued(events))
      if (e.type === 'llm.generation' && e.context.turn_id === turnId) usage = addUsage(usage, e.data.usage);
    const start = catalogued(started);
    if (start.type !== 'turn.started') throw new ConflictError('The turn has not started yet');
    const turn: TurnRef = { turn_id: turnId, input_message_id: start.data.input_message_id };
    if (started.tags?.length) turn.tags = [...started.tags];
    const startedBy = start.data.user_id;
    return { turn, usage, events, lastSequence: events.at(-1)!.sequence, startedBy };
  }

  /**
   * `turn.started` (its id is the turn id), waited for up to `waitMs`: a turn that began is
   * about to store it (its worker asked the row first, then appends).
   */
  async function startedEvent(sessionId: string, turnId: string, waitMs: number): Promise<SessionEvent | null> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const started = await bus.events.findById(sessionId, turnId);
      if (started || Date.now() >= deadline) return started;
      await sleep(BEGUN_POLL_MS);
    }
  }

  /**
   * Client tool results for the suspended turn. Unknown call ids → 400; a session that is not
   * waiting → 409. Results for calls answered already are ignored. When the last one is in,
   * the turn is queued again.
   */
  async function submitToolResults(
    principal: TurnPrincipal,
    sessionId: string,
    results: ClientToolResultInput[],
  ): Promise<{ accepted: number; status: string }> {
    const row = await owned(principal, sessionId);
    const turnId = row.current_turn_id;
    if (row.status !== 'waiting_for_tool_results' || !turnId) throw new ConflictError('Session is not waiting for tool results');
    let accepted = 0;
    let complete = false;
    const trace = span();
    for (let attempt = 0; ; attempt++) {
      const soFar = await turnSoFar(sessionId, turnId);
      if (!soFar) throw new ConflictError('Session is not waiting for tool results');
      const { turn, events, lastSequence, startedBy } = soFar;
      const step = foldTurn(turn, catalogued(events)).steps.at(-1);
      const requested = step?.requested ?? new Set<string>();
      const unknown = results.find((r) => !requested.has(r.tool_call_id));
      if (unknown) throw new InvalidRequestError('Invalid request: unknown tool_call_id');
      const open = new Set([...requested].filter((id) => !step!.completed.has(id)));
      const fresh = dedupe(results.filter((r) => open.has(r.tool_call_id)));
      const calls = new Map(step!.toolCalls.map((c) => [c.id, c]));
      const resultEvents = fresh.map((r) => clientResultEvent(turn, calls.get(r.tool_call_id)!.name, r));
      stampEvents(resultEvents, trace);
      const appended = await bus.events.append(sessionId, resultEvents, { expectedSequence: lastSequence });
      if (!appended.ok) {
        if (attempt < 20) continue; // another writer got in first: fold again and retry
        throw new ConflictError('Session is busy');
      }
      accepted = fresh.length;
      complete = fresh.length === open.size;
      // The resumed turn acts for a user only when that user both sent its message and its results.
      const actingUser = principal.user_id && principal.user_id === startedBy ? { user_id: principal.user_id } : {};
      const resume = { org_id: row.organization_id, ...turn, ...actingUser, traceparent: trace.traceparent() };
      if (complete && (await status.markResumed(sessionId, turnId))) await enqueueResume(resumeJob(sessionId, resume));
      break;
    }
    const now = await status.read(sessionId);
    return { accepted, status: now?.status ?? 'idle' };
  }

  async function enqueueResume(job: TurnJob): Promise<void> {
    const deadline = Date.now() + RESUME_WAIT_MS;
    for (;;) {
      try {
        return await bus.turns.enqueue(job);
      } catch (err) {
        // The suspended turn's own job may not be acked yet; if it never is, its redelivery resumes the turn.
        if (!(err instanceof SessionBusyError) || Date.now() > deadline) {
          if (err instanceof SessionBusyError)
            return log.warn({ sessionId: job.session_id }, 'resume not queued: a turn job is still queued');
          throw err;
        }
        await sleep(20);
      }
    }
  }

  return { submitMessage, cancel, submitToolResults };
}

export type TurnService = ReturnType<typeof createTurnService>;

function normalizePart(part: InputPart): MessagePart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const out: MessagePart = { type: 'image_file', image_id: part.image_id };
  if (part.filename) out['filename'] = part.filename;
  return out;
}

function dedupe(results: ClientToolResultInput[]): ClientToolResultInput[] {
  const seen = new Map<string, ClientToolResultInput>();
  for (const r of results) if (!seen.has(r.tool_call_id)) seen.set(r.tool_call_id, r);
  return [...seen.values()];
}

function clientResultEvent(turn: TurnRef, toolName: string, r: ClientToolResultInput): NewEvent {
  const call = { id: r.tool_call_id, name: toolName };
  const source = CLIENT_TOOL_SOURCE;
  if (r.error !== undefined && r.error !== null)
    return turnEvents.toolFailed(newId(), turn, newId(), { call, display_name: toolName, error: r.error, source });
  const text = typeof r.result === 'string' ? r.result : r.result === undefined ? '' : JSON.stringify(r.result);
  return turnEvents.toolSucceeded(newId(), turn, newId(), {
    call: { ...call, arguments: {} },
    display_name: toolName,
    result: [textPart(text)],
    duration_ms: 0,
    source,
  });
}
