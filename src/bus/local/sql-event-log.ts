import { retrier, retryPolicies } from '../../retry/index.js';
import { ConflictError, InvalidRequestError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import type { Logger } from '../../log.js';
import { preparedSql, type Store } from '../../db/index.js';
import { createKeyedChain } from '../keyed-chain.js';
import { iterateFeed } from '../feed-iterator.js';
import { FeedGroup } from '../ordered-feed.js';
import { createGroupInsert, type TailInsert, type TailInsertOutcome } from './group-insert.js';
import { recentAfter, soleClientState, unlimitedEmitter } from './sole-client.js';
import { createTailWatch } from './tail-watch.js';
import { isPgContentRefusal, UnstorableEventError } from '../unstorable-event.js';
import { stampEvent, type EventTail } from '../session-event.js';
import type { AppendOptions, AppendResult, EventLog, EventSink, FeedHandle, NewLoggedEvent, ReadOptions, LoggedEvent } from '../ports.js';

/** PostgreSQL's unique_violation: another writer took the sequence (or stored the id) first. */
const PG_UNIQUE_VIOLATION = '23505';
const PRIMARY_KEY = 'bus_events_pkey';

/**
 * One session's batch (a JSON array of its events) numbered after the stored tail, provided the
 * first id is above the tail's id (unless the batch was looked up: group-insert.ts `anyOrder`)
 * and the tail is the expected one; one text whatever the batch
 * size, so it stays prepared (prepared-sql.ts).
 */
const INSERT_AT_TAIL = preparedSql(
  'bus-events.insert-at-tail',
  `with tail as (select sequence, id from bus_events where session_id = ? order by sequence desc limit 1),
   base as (select coalesce((select sequence from tail), 0) as seq, (select id from tail) as id),
   ins as (
     insert into bus_events (session_id, sequence, id, body)
     select ?::uuid, base.seq + v.n, (v.body ->> 'id')::uuid, jsonb_set(v.body, '{sequence}', to_jsonb(base.seq + v.n))
     from base, jsonb_array_elements(?::jsonb) with ordinality as v(body, n)
     where (?::boolean or base.id is null or base.id < ?::uuid) and (?::int is null or base.seq = ?::int)
     returning 1)
   select base.seq as tail_sequence, base.id as tail_id, (select count(*) from ins)::int as inserted from base`,
);
const DEFAULT_READ_LIMIT = 1000;
const MAX_CACHED_TAILS = 10_000;

export interface SqlEventLogOptions {
  store: Store;
  log: Logger;
  /** How often the instance looks for appends by other processes, in ms; 0 = never (PGlite). */
  pollMs: number;
  /**
   * This process is the store's only client (PGlite): the tail it remembers from its own
   * appends is the stored tail, so reading at or past it and asking for it need no statement.
   */
  soleClient?: boolean;
}

/**
 * The event log on the `bus_events` table. One statement per append reads the session's
 * tail and inserts the batch numbered after it, so there is no read-then-write window across
 * round trips; two statements racing for the same sequence collide on the primary key
 * (session_id, sequence) and the loser simply runs again. That makes appends safe across
 * processes sharing one PostgreSQL and keeps a busy writer from starving the other (an earlier
 * read-then-insert version starved one process under load). Within a process a per-session
 * chain keeps writers from racing each other at all. Ids are minted after the last id this
 * process knows; the statement refuses ids not above the stored tail, and the retry looks the
 * batch up, mints again what had no id, and stores what is missing whatever its ids (a start
 * job's ids were minted when its turn was accepted, and another writer may have appended since).
 * Appends of other sessions that arrive while a statement is in flight share the next one
 * (group-insert.ts): one INSERT and one commit for all of them.
 *
 * Live subscribe is notified in process through an EventEmitter, which costs no query. Appends
 * made by other processes sharing a PostgreSQL are found by one query per `pollMs` for the
 * whole instance (tail-watch.ts), which wakes only the feeds whose session's tail moved past
 * what this process knows. Embedded (PGlite) mode is one process, so nothing polls there.
 */
export function createSqlEventLog({
  store,
  log,
  pollMs,
  soleClient = false,
}: SqlEventLogOptions): EventLog<LoggedEvent> & { closeAll(): void } {
  // A sole client shares chain, notifications and tails with every other bus on the store, which
  // keeps the tails exact; otherwise they are this log's own and the tails only a guess.
  const sole = soleClient ? soleClientState(store) : undefined;
  const { live, chain, tails } = sole ?? { live: unlimitedEmitter(), chain: createKeyedChain(), tails: new Map<string, EventTail>() };
  const tailWatch = createTailWatch({ store, log, pollMs });
  const group = createGroupInsert({ store, insertOne: insertAtTail });

  async function tail(sessionId: string): Promise<EventTail> {
    const rows = await store.sql<{ sequence: number; id: string }>(
      'select sequence, id from bus_events where session_id = ? order by sequence desc limit 1',
      [sessionId],
    );
    return { sequence: rows[0]?.sequence ?? 0, id: rows[0]?.id };
  }

  async function storedById(sessionId: string, ids: string[]): Promise<Map<string, LoggedEvent>> {
    if (ids.length === 0) return new Map();
    const marks = ids.map(() => '?').join(', ');
    const rows = await store.sql<{ body: LoggedEvent }>(`select body from bus_events where session_id = ? and id in (${marks})`, [
      sessionId,
      ...ids,
    ]);
    return new Map(rows.map((r) => [r.body.id, r.body]));
  }

  /** The stored tail when this process knows it for certain (a sole client that appended to the session), else undefined. */
  function knownTail(sessionId: string): EventTail | undefined {
    return soleClient ? tails.get(sessionId) : undefined;
  }

  function rememberTail(sessionId: string, last: EventTail): void {
    tails.delete(sessionId);
    tails.set(sessionId, last);
    if (tails.size > MAX_CACHED_TAILS) tails.delete(tails.keys().next().value!);
  }

  /**
   * One attempt: null when another writer got in between (retry), else the result. The first
   * attempt does not look the batch's ids up: the insert refuses a batch that does not start
   * above the stored tail's id (a retried batch among the reasons), and event ids are unique,
   * so nothing goes in twice. A refused batch is tried again with the look-up, which mints its
   * own ids again and stores the caller's ids that are missing whatever they are. That saves one
   * statement per append on the common path.
   */
  async function appendOnce(
    sessionId: string,
    input: readonly NewLoggedEvent[],
    opts: AppendOptions,
    lookUp: boolean,
  ): Promise<AppendResult<LoggedEvent> | null> {
    const known = lookUp
      ? await storedById(
          sessionId,
          input.flatMap((e) => (e.id ? [e.id] : [])),
        )
      : new Map<string, LoggedEvent>();
    // A retry of a batch that is fully stored is a success whatever the expectation was.
    if (input.every((e) => e.id && known.has(e.id))) return { ok: true, events: input.map((e) => known.get(e.id!)!) };
    const ts = new Date().toISOString();
    let prev = tails.get(sessionId) ?? { sequence: 0, id: undefined }; // a guess: the statement decides
    const fresh: LoggedEvent[] = [];
    const events = input.map((e) => {
      const stored = e.id ? known.get(e.id) : undefined;
      if (stored) return stored;
      const event = stampEvent(sessionId, e, prev, ts);
      prev = { sequence: event.sequence, id: event.id };
      fresh.push(event);
      return event;
    });
    // Ids the log mints are minted again above the tail; only the caller's may stay below it.
    const anyOrder = lookUp && input.every((e) => e.id !== undefined);
    const outcome = await group.insert({ sessionId, fresh, expected: opts.expectedSequence, anyOrder });
    if (outcome === null) return null;
    const { tail, inserted } = outcome;
    if (!inserted) {
      // Without the look-up a refusal may be a batch already stored: the next attempt tells.
      if (!lookUp) {
        rememberTail(sessionId, tail);
        return null;
      }
      if (opts.expectedSequence !== undefined && opts.expectedSequence !== tail.sequence)
        return { ok: false, currentSequence: tail.sequence };
      rememberTail(sessionId, tail); // our ids were not above the stored tail's: mint them after it
      return null;
    }
    for (const [i, e] of fresh.entries()) e.sequence = tail.sequence + i + 1;
    rememberTail(sessionId, { sequence: tail.sequence + fresh.length, id: fresh[fresh.length - 1]!.id });
    for (const e of fresh) sole?.recent.put(sessionId, e);
    tailWatch.seen(sessionId, tail.sequence + fresh.length);
    live.emit(sessionId, fresh);
    return { ok: true, events };
  }

  /**
   * Stores the batch in one statement that numbers it after the stored tail, provided the
   * first id is above the tail's id (ids increase within a session) and the tail matches
   * `expected`. Returns the tail it saw and whether it inserted; null when a concurrent
   * writer took the same sequence (primary key), which is worth an immediate retry.
   */
  async function insertAtTail({ sessionId, fresh, expected, anyOrder }: TailInsert): Promise<TailInsertOutcome> {
    const expect = expected ?? null;
    try {
      const [r] = await store.sql<{ tail_sequence: number; tail_id: string | null; inserted: number }>(INSERT_AT_TAIL, [
        sessionId,
        sessionId,
        JSON.stringify(fresh),
        anyOrder,
        fresh[0]!.id,
        expect,
        expect,
      ]);
      return { tail: { sequence: r!.tail_sequence, id: r!.tail_id ?? undefined }, inserted: r!.inserted > 0 };
    } catch (err) {
      if (isPgContentRefusal(err)) throw new UnstorableEventError({ cause: err });
      const { code, constraint } = err as { code?: string; constraint?: string };
      if (code !== PG_UNIQUE_VIOLATION) throw err;
      if (constraint === PRIMARY_KEY) return null;
      // The id is taken: by this session (a racing retry; the next attempt returns the stored
      // copy) or by another one, which no retry can fix.
      const owners = await store.sql<{ session_id: string }>(
        `select session_id from bus_events where id in (${fresh.map(() => '?').join(', ')})`,
        fresh.map((e) => e.id),
      );
      if (owners.some((o) => o.session_id !== sessionId))
        throw new ConflictError('Event id already used by another session', { cause: err });
      return null;
    }
  }

  async function appendWithRetry(
    sessionId: string,
    input: readonly NewLoggedEvent[],
    opts: AppendOptions,
  ): Promise<AppendResult<LoggedEvent>> {
    const conflicts = retrier(retryPolicies.sqlAppendConflict, {
      onRetry: ({ attempt }) => log.debug({ sessionId, attempt }, 'bus_events sequence conflict, retrying'),
    });
    for (;;) {
      const { attempt } = conflicts;
      const result = await appendOnce(sessionId, input, opts, attempt > 1);
      if (result) return result;
      if (!(await conflicts.failed(undefined)))
        throw new Error(`append to session ${sessionId}: still conflicting after ${attempt} attempts`);
    }
  }

  async function read(sessionId: string, { afterSequence = 0, limit = DEFAULT_READ_LIMIT }: ReadOptions = {}): Promise<LoggedEvent[]> {
    assertUuid(sessionId);
    // Nothing is stored past the exact tail. An append whose statement went in but whose
    // continuation has not run yet is not lost to a feed: it notifies the feed's listener next.
    const known = knownTail(sessionId);
    if (known && known.sequence <= afterSequence) return [];
    const recent = known && recentAfter(sole?.recent.get(sessionId), afterSequence, known.sequence, limit);
    if (recent) return recent;
    const rows = await store.sql<{ body: LoggedEvent }>(
      'select body from bus_events where session_id = ? and sequence > ? order by sequence limit ?',
      [sessionId, afterSequence, limit],
    );
    return rows.map((r) => r.body);
  }

  const feeds = new FeedGroup({
    fetch: (sessionId, after) => read(sessionId, { afterSequence: after, limit: DEFAULT_READ_LIMIT }),
    listen(sessionId, input) {
      const onEvents = (events: LoggedEvent[]) => {
        for (const e of events) input.push(e);
      };
      live.on(sessionId, onEvents);
      const unwatch = tailWatch.watch(sessionId, () => input.stale());
      return {
        stop() {
          live.off(sessionId, onEvents);
          unwatch();
        },
        ready: Promise.resolve(),
      };
    },
    idlePollMs: 0,
  });

  function follow(sessionId: string, sink: EventSink<LoggedEvent>, { afterSequence = 0 } = {}): FeedHandle {
    assertUuid(sessionId);
    return feeds.open(sessionId, sink, afterSequence);
  }

  return {
    async append(sessionId, events, opts = {}) {
      assertUuid(sessionId);
      for (const e of events) if (e.id !== undefined) assertUuid(e.id);
      if (events.length === 0) return { ok: true, events: [] };
      return chain.run(sessionId, () =>
        appendWithRetry(sessionId, events, opts).catch((err: unknown) => {
          // A statement that failed may still have committed (a lost connection): the tail is
          // no longer known, so the next reads ask the table.
          tails.delete(sessionId);
          sole?.recent.forget(sessionId);
          throw err;
        }),
      );
    },
    read,
    async findById(sessionId, eventId) {
      assertUuid(sessionId);
      if (!isAnyUuid(eventId)) return null;
      const found = await storedById(sessionId, [eventId]);
      return found.get(eventId) ?? null;
    },
    async lastSequence(sessionId) {
      assertUuid(sessionId);
      return (knownTail(sessionId) ?? (await tail(sessionId))).sequence;
    },
    follow,
    subscribe: (sessionId, opts) => iterateFeed((sink) => follow(sessionId, sink, opts)),
    async purge(sessionId) {
      assertUuid(sessionId);
      await chain.run(sessionId, async () => {
        await store.sql('delete from bus_events where session_id = ?', [sessionId]);
        tails.delete(sessionId);
        sole?.recent.forget(sessionId);
        tailWatch.reset(sessionId);
      });
    },
    closeAll() {
      feeds.closeAll();
      tailWatch.close();
    },
  };
}

function assertUuid(value: string): void {
  // The columns are uuid-typed; a clear 400 beats a driver error for a malformed id.
  if (!isAnyUuid(value)) throw new InvalidRequestError(`Invalid id: ${value}`);
}
