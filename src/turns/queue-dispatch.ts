/**
 * Starts a session's next queued message (decision 0097). Called whenever the session may have
 * become idle with messages waiting: by the worker after every attempt (its turn's end), by the
 * API right after it queued a message (the turn may have ended meanwhile), and by the stuck-turn
 * sweeper (a process died in between). Any number of callers may race: the message's ids are
 * fixed on the row before its job is queued (`assignTurn`), the turn queue holds one job per
 * session, and the session row's `begin` lets one turn begin once; the row becomes `started`
 * when its worker begins it, so a message leaves the queue only by running or by a user's cancel.
 */
import type { SessionEvent } from '../../schemas/events.js';
import type { Bus, TurnQueue } from '../bus/index.js';
import { SessionBusyError } from '../errors.js';
import type { Logger } from '../log.js';
import type { MessageQueue, QueuedRow } from './message-queue.js';
import type { SessionStatusStore, SessionTurnRow } from './session-status.js';
import { turnEvents } from './turn-events.js';
import { startJob } from './turn-job.js';
import { mintAccepted, startPreamble, turnRefOf, type AcceptedMessage } from './turn-start.js';

export interface QueueDispatchDeps {
  queue: MessageQueue;
  status: SessionStatusStore;
  turns: TurnQueue;
  events: Pick<Bus<SessionEvent>['events'], 'findById'>;
  log: Logger;
}

/** Heads skipped in one call because they had begun already (their worker died before saying so). */
const MAX_SKIPPED = 20;

export type DispatchOutcome = 'started' | 'busy' | 'empty';

export function createQueueDispatcher(deps: QueueDispatchDeps) {
  const { queue, status, turns, events, log } = deps;

  /**
   * Fresh ids for the head's turn (above anything in the log). Ids fixed by an earlier dispatch
   * are given up only once that turn can never begin: voided, or a newer turn began. If it began
   * (its turn.started, whose event id is the turn id, is stored), the message has run: 'began'.
   */
  async function idsFor(head: QueuedRow): Promise<AcceptedMessage | 'began' | null> {
    if (head.turn_id) {
      if (await events.findById(head.session_id, head.turn_id)) return 'began';
      // Refused once it (or a newer turn) began; the session is idle, so it is not mid-begin: look again.
      if (!(await status.voidTurn(head.session_id, head.turn_id)) && (await events.findById(head.session_id, head.turn_id))) return 'began';
    }
    const fresh = mintAccepted(head.message);
    return (await queue.assignTurn(head.id, head.turn_id, fresh)) ? fresh : null;
  }

  async function start(row: SessionTurnRow, head: QueuedRow, accepted: AcceptedMessage): Promise<DispatchOutcome> {
    const turn = turnRefOf(accepted);
    // input.dequeued's event id is the message's id: fixed with the turn's, and before input.message's (minted after it).
    const dequeued = turnEvents.inputDequeued(accepted.message.id, head.id, turn);
    const preamble = startPreamble(accepted, row.status === 'started', head.user_id ?? undefined, [dequeued]);
    const user = head.user_id ? { user_id: head.user_id } : {};
    const trace = head.traceparent ? { traceparent: head.traceparent } : {};
    const job = startJob(head.session_id, { org_id: head.organization_id, ...turn, ...user, ...trace, preamble, queued_id: head.id });
    try {
      await turns.enqueue(job);
    } catch (err) {
      // Another job holds the session (a dispatcher racing us, or a turn just ending): its end dispatches.
      if (err instanceof SessionBusyError) return 'busy';
      throw err;
    }
    await status.markActive(head.session_id, accepted.turn_id);
    log.info({ sessionId: head.session_id, queuedId: head.id, turnId: accepted.turn_id }, 'queued message dispatched');
    return 'started';
  }

  /**
   * Starts the next queued message when the session is idle; a no-op otherwise. The queue is read
   * before the row: most sessions have nothing waiting, so a turn's end costs one statement. Each
   * side still reads after its own write (the worker marked the row idle, the API inserted the
   * message), so one of them sees both.
   */
  async function next(sessionId: string): Promise<DispatchOutcome> {
    for (let i = 0; i < MAX_SKIPPED; i++) {
      const head = await queue.head(sessionId);
      if (!head) return 'empty';
      const row = await status.read(sessionId);
      if (!row || row.status === 'active' || row.status === 'waiting_for_tool_results') return 'busy';
      const accepted = await idsFor(head);
      if (accepted === 'began') {
        await queue.markStarted(head.id, head.turn_id!);
        continue;
      }
      if (!accepted) continue; // another dispatcher changed its ids first: look again
      return start(row, head, accepted);
    }
    return 'busy';
  }

  return {
    next,
    /** `next` for callers that must not fail because of it (a turn's end): errors are logged, the sweeper retries. */
    async nextQuietly(sessionId: string): Promise<void> {
      await next(sessionId).catch((err: unknown) => log.warn({ err, sessionId }, 'dispatching the next queued message failed'));
    },
  };
}

export type QueueDispatcher = ReturnType<typeof createQueueDispatcher>;
