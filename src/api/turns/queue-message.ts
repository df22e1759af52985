/**
 * Messages sent while a turn runs (issue 26 item 3; docs/decisions/0097-messages-while-busy.md):
 * `on_busy: enqueue` waits in the session's queue and runs after the current turn, in arrival
 * order; `interrupt` goes first in the queue and cancels the running turn (spec 3.2). The queue
 * is rows in the database, started by a dispatcher when the session goes idle (src/turns/queue-dispatch.ts).
 */
import type { NewSessionEvent } from '../../../schemas/events.js';
import type { InputPart, MessageControlsInput } from '../../../schemas/turns.js';
import { ConflictError, NotFoundError, SessionBusyError, TooManyRequestsError, UnprocessableError } from '../../errors.js';
import { newId } from '../../ids.js';
import { turnEvents, type OnBusy, type QueuedRow, type StoredMessage } from '../../turns/index.js';
import { createMessageChecks, messageInput } from './message-checks.js';
import type { Acceptance, SubmitMessage } from './submit-message.js';
import { BUSY_STATUSES, type TurnApiContext, type TurnPrincipal } from './turn-api-context.js';
import { startedEvent } from './turn-so-far.js';

/** What a refused message tells the client to wait: a queued message leaves the queue when a turn ends. */
const RETRY_AFTER_S = 5;

export interface QueuedMessageView {
  id: string;
  object: 'queued_message';
  session_id: string;
  status: 'queued' | 'started' | 'cancelled';
  /** 1 runs next; 0 once it left the queue. */
  position: number;
  on_busy: 'enqueue' | 'interrupt';
  message: {
    role: 'user';
    content: StoredMessage['content'];
    controls?: Record<string, unknown>;
    tags?: string[];
    metadata?: Record<string, unknown>;
  };
  turn_id: string | null;
  created_at: string;
}

export type SendOutcome = { kind: 'started'; message: StoredMessage } | { kind: 'queued'; queued: QueuedMessageView };

/** A user message as POST …/messages received it, with what to do while a turn runs. */
export interface SentMessage<P extends OnBusy = OnBusy> {
  sessionId: string;
  content: InputPart[];
  controls: MessageControlsInput;
  tags: readonly string[];
  metadata?: Record<string, unknown> | undefined;
  onBusy: P;
  /** The request's Idempotency-Key record, when it carried one. */
  acceptance?: Acceptance | undefined;
}

export interface QueueLimits {
  perSession: number;
  perOrg: number;
}

export function viewOf(row: QueuedRow, position: number): QueuedMessageView {
  const { created_at: _created, ...message } = row.message;
  return {
    id: row.id,
    object: 'queued_message',
    session_id: row.session_id,
    status: row.state,
    position: row.state === 'queued' ? position : 0,
    on_busy: row.priority === 0 ? 'interrupt' : 'enqueue',
    message: { role: 'user', ...message } as QueuedMessageView['message'],
    turn_id: row.state === 'started' ? row.turn_id : null,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** The Idempotency-Key's record of a queued message (the other kind is submit-message.ts's). */
function priorQueuedId(acceptance: Acceptance | undefined): string | null {
  const v = acceptance?.prior as { queued_id?: unknown } | undefined;
  return typeof v?.queued_id === 'string' ? v.queued_id : null;
}

export function createQueueMessage(
  ctx: TurnApiContext,
  submitMessage: SubmitMessage,
  cancel: (principal: TurnPrincipal, sessionId: string) => Promise<unknown>,
) {
  const { bus, queue, dispatcher, log, owned } = ctx;
  const limits: QueueLimits = ctx.queueLimits ?? { perSession: 20, perOrg: 1000 };
  const checks = createMessageChecks(ctx);

  /**
   * Appends a queue event after the running turn's first events. Their ids were minted when that
   * turn was accepted and only its worker appends them; the SQL log keeps ids increasing, so an
   * event stored before them would have them refused. A turn whose worker has not begun within
   * retryPolicies.turnStartedStored (5 s) is not waited for longer.
   */
  async function appendAfterRunningStart(sessionId: string, event: NewSessionEvent): Promise<void> {
    const now = await ctx.status.read(sessionId);
    if (now?.current_turn_id && BUSY_STATUSES.has(now.status)) await startedEvent(bus, sessionId, now.current_turn_id, true);
    await bus.events.append(sessionId, [event]);
  }

  /**
   * POST messages with a busy policy: an idle session starts the turn as before; a busy one
   * answers 409 (`reject`), or queues the message (`enqueue`), or queues it first and cancels
   * the running turn (`interrupt`).
   */
  async function send(principal: TurnPrincipal, sent: SentMessage): Promise<SendOutcome> {
    const { sessionId, content, controls, tags, metadata, onBusy, acceptance } = sent;
    const start = async () => ({
      kind: 'started' as const,
      message: await submitMessage(principal, sessionId, content, controls, tags, metadata, acceptance),
    });
    const queuedId = priorQueuedId(acceptance);
    if (onBusy === 'reject' || !queue || !dispatcher) return start();
    if (!queuedId) {
      const row = await owned(principal, sessionId);
      // An idle session with nothing waiting starts at once; one with messages waiting keeps their order.
      if (!BUSY_STATUSES.has(row.status) && (await queue.countInSession(sessionId)) === 0) {
        try {
          return await start();
        } catch (err) {
          if (!(err instanceof SessionBusyError)) throw err; // a turn began meanwhile: this one waits
        }
      }
    }
    return { kind: 'queued', queued: await enqueue(principal, { ...sent, onBusy }, queuedId) };
  }

  /** Queues the message; `priorId`: the queued id an earlier request with the same Idempotency-Key reserved. */
  async function enqueue(
    principal: TurnPrincipal,
    sent: SentMessage<'enqueue' | 'interrupt'>,
    priorId: string | null,
  ): Promise<QueuedMessageView> {
    const { sessionId, content, controls, tags, metadata, onBusy, acceptance } = sent;
    const row = await owned(principal, sessionId);
    await checks.input(principal, sessionId, content, controls);
    if (!priorId && (await queue!.countInOrg(row.organization_id)) >= limits.perOrg) {
      throw new TooManyRequestsError(RETRY_AFTER_S, `Organisation limit reached: at most ${limits.perOrg} messages may wait in queues`);
    }
    const id = priorId ?? newId();
    if (!priorId) await acceptance?.reserve({ queued_id: id });
    const input = messageInput(content, controls, tags, metadata);
    const interrupt = onBusy === 'interrupt';
    const traceparent = ctx.span().traceparent();
    const added = await queue!.add(
      {
        id,
        sessionId,
        orgId: row.organization_id,
        ...(principal.user_id ? { userId: principal.user_id } : {}),
        interrupt,
        message: input,
        traceparent,
      },
      limits.perSession,
    );
    if (added.outcome === 'full') {
      throw new TooManyRequestsError(
        RETRY_AFTER_S,
        `Session queue is full: at most ${limits.perSession} messages may wait; retry when one has run`,
      );
    }
    const stored = (await queue!.get(sessionId, id))!;
    // A retry after a lost answer does not write it again (the first attempt may have).
    if (added.outcome === 'added') await appendAfterRunningStart(sessionId, turnEvents.inputQueued(id, added.position, onBusy));
    if (interrupt && added.outcome === 'added') await cancelRunning(principal, sessionId);
    // The turn may have ended between the status read and the insert: its worker found no message then.
    await dispatcher!.nextQuietly(sessionId);
    const now = (await queue!.get(sessionId, id)) ?? stored;
    return viewOf(now, now.state === 'queued' ? await queue!.position(now) : 0);
  }

  /** Spec 3.2's cancel for the running turn; a turn that ended meanwhile needs none. */
  async function cancelRunning(principal: TurnPrincipal, sessionId: string): Promise<void> {
    try {
      await cancel(principal, sessionId);
    } catch (err) {
      if (!(err instanceof UnprocessableError)) throw err;
    }
  }

  return {
    send,
    /** GET …/queue: the messages waiting, in the order they will run. */
    async list(principal: TurnPrincipal, sessionId: string): Promise<QueuedMessageView[]> {
      await owned(principal, sessionId);
      const rows = queue ? await queue.list(sessionId) : [];
      return rows.map((r, i) => viewOf(r, i + 1));
    },
    async count(sessionId: string): Promise<number> {
      return queue ? queue.countInSession(sessionId) : 0;
    },
    /** DELETE …/queue/{id}: 404 unknown, 409 once its turn is starting or it left the queue. */
    async cancelQueued(principal: TurnPrincipal, sessionId: string, id: string): Promise<QueuedMessageView> {
      await owned(principal, sessionId);
      const row = queue ? await queue.get(sessionId, id) : null;
      if (!row) throw new NotFoundError();
      if (!(await queue!.cancel(sessionId, id))) {
        if (row.state === 'cancelled') return viewOf(row, 0);
        throw new ConflictError('The queued message has left the queue: its turn is starting or has started');
      }
      await appendAfterRunningStart(sessionId, turnEvents.inputDequeued(undefined, id));
      log.info({ sessionId, queuedId: id }, 'queued message cancelled');
      return viewOf({ ...row, state: 'cancelled' }, 0);
    },
  };
}

export type QueueMessageService = ReturnType<typeof createQueueMessage>;
