import type { SessionEvent } from '../../schemas/events.js';
import type { Bus, TurnQueue } from '../../src/bus/index.js';
import { SessionBusyError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { Store } from '../../src/db/index.js';
import type { QueueDispatcher, SessionStatusStore } from '../../src/turns/index.js';
import { resumeJob } from '../../src/turns/index.js';

export interface StuckTurnSweeperOptions {
  /** Time between sweeps, in ms. */
  intervalMs: number;
  /** A session must have been active this long, untouched, before it is looked at, in ms. */
  minAgeMs: number;
  /** Sessions looked at per sweep (oldest first). */
  batch?: number;
}

interface Candidate {
  id: string;
  organization_id: string;
  current_turn_id: string;
}

/**
 * Repairs sessions left `active` with no turn job (issue 13: an accepted turn whose job was
 * never stored). A running or claimed turn keeps its job in the queue until it is acked, which
 * happens only after the session went idle, so "active, no job" means nothing will ever close
 * the turn: a resume job is queued and a worker runs the turn from its log (or closes it when
 * a cancel is pending). Cheap: one query per sweep and one queue lookup per session
 * that has been active and untouched for `minAgeMs`; the queue refuses a second job, so
 * several instances sweeping at once queue at most one.
 */
export function startStuckTurnSweeper(
  deps: {
    store: Store;
    turns: TurnQueue;
    events: Pick<Bus<SessionEvent>['events'], 'findById'>;
    status: SessionStatusStore;
    log: Logger;
    /** Starts the next queued message of an idle session whose dispatcher died (decision 0097). */
    dispatcher?: QueueDispatcher;
  },
  { intervalMs, minAgeMs, batch = 100 }: StuckTurnSweeperOptions,
): { stop(): void } {
  const { store, turns, events, status, log, dispatcher } = deps;
  let running = false;

  async function repair(c: Candidate): Promise<void> {
    if ((await turns.queued(c.id)) !== null) return;
    // Read the row again after the queue: a turn finishing meanwhile went idle before its ack.
    const now = await status.read(c.id);
    if (now?.status !== 'active' || now.current_turn_id !== c.current_turn_id) return;
    // turn.started's event id is the turn id. Without it no worker wrote the turn's first events
    // (they travel only in its job): a turn that never began and has no job is abandoned.
    const started = await events.findById(c.id, c.current_turn_id);
    if (started?.type !== 'turn.started') {
      if (await status.abandonUnbegun(c.id, c.current_turn_id))
        log.warn({ sessionId: c.id, turnId: c.current_turn_id }, 'active session whose turn job was lost before it began: session idle');
      return;
    }
    const turn = {
      turn_id: c.current_turn_id,
      input_message_id: started.data.input_message_id,
      ...(started.tags?.length ? { tags: [...started.tags] } : {}),
    };
    try {
      await turns.enqueue(resumeJob(c.id, { org_id: c.organization_id, ...turn }));
      log.warn({ sessionId: c.id, turnId: c.current_turn_id }, 'active session without a turn job: resume queued');
    } catch (err) {
      if (!(err instanceof SessionBusyError)) throw err; // a job showed up meanwhile: nothing to repair
    }
  }

  /** Idle sessions with queued messages: the process that ended their turn died before it started the next. */
  async function dispatchWaiting(d: QueueDispatcher): Promise<void> {
    const waiting = await store.sql<{ id: string }>(
      `select s.id from sessions s where s.status in ('idle', 'started') and s.updated_at < now() - (? * interval '1 millisecond')
         and exists (select 1 from queued_messages q where q.session_id = s.id and q.state = 'queued')
       order by s.updated_at limit ?`,
      [minAgeMs, batch],
    );
    for (const w of waiting) {
      if ((await d.next(w.id).catch(() => 'busy')) === 'started')
        log.warn({ sessionId: w.id }, 'idle session with queued messages: next one started');
    }
  }

  async function sweep(): Promise<void> {
    if (running) return;
    running = true;
    try {
      const rows = await store.sql<Candidate>(
        `select id, organization_id, current_turn_id from sessions
         where status = 'active' and current_turn_id is not null and updated_at < now() - (? * interval '1 millisecond')
         order by updated_at limit ?`,
        [minAgeMs, batch],
      );
      for (const c of rows) await repair(c).catch((err: unknown) => log.warn({ err, sessionId: c.id }, 'stuck turn repair failed'));
      if (dispatcher) await dispatchWaiting(dispatcher);
    } finally {
      running = false;
    }
  }

  const timer = setInterval(() => void sweep().catch((err: unknown) => log.warn({ err }, 'stuck turn sweep failed')), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
