/**
 * The event log's tap: after an append is stored, each event of a subscribable type whose
 * session's organisation has a matching endpoint becomes a row of the delivery outbox — one
 * INSERT, no HTTP, written behind the append (the writer does not wait for it); a row lost with
 * its writer is repaired at the session's next turn (withTurnStart). The same in both modes: it
 * wraps whichever EventLog the bus has.
 * Organisations' endpoints and sessions' facts are cached briefly, so a turn of an organisation
 * without webhooks costs two map lookups per subscribable event; while no organisation has an
 * endpoint, a new session's events cost no read at all (one look per instance per cache period).
 */
import { LRUCache } from 'lru-cache';
import { WEBHOOK_EVENT_TYPES } from '../../schemas/webhooks.js';
import { createKeyedChain } from '../bus/index.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import type { AppendOptions, AppendResult, EventLog } from '../bus/index.js';
import type { Store } from '../db/index.js';
import type { Logger } from '../log.js';
import type { DeliveryStore, NewDelivery } from './delivery-store.js';
import type { EndpointStore } from './endpoint-store.js';
import { matches, type EndpointSubscription, type SessionFacts } from './matching.js';

const SUBSCRIBABLE = new Set<string>(WEBHOOK_EVENT_TYPES);
const MAX_CACHED_ORGS = 10_000;
const MAX_CACHED_SESSIONS = 50_000;
/** Session facts (agent, tags) are re-read this often: tags can change. */
const SESSION_TTL_MS = 10_000;
const MAX_REMEMBERED_TURNS = 100_000;
/** Events read back before a turn's first recorded ones: a turn's preamble and the previous turn's end fit. */
const LOOKBACK = 8;

export interface OutboxDeps {
  store: Pick<Store, 'sql'>;
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
  log: Logger;
  /** Tells this instance's deliverer that rows were written. */
  wake(): void;
}

export interface OutboxOptions {
  endpointCacheMs: number;
  maxPendingPerOrg: number;
}

/** The body a receiver gets (Standard Webhooks' `{type, timestamp, data}`). */
export function payloadOf(event: SessionEvent, facts: SessionFacts) {
  return {
    type: event.type,
    timestamp: event.ts,
    data: { organization_id: facts.organization_id, agent_id: facts.agent_id, session_id: event.session_id, event },
  };
}

export function createOutbox(deps: OutboxDeps, opts: OutboxOptions) {
  const orgs = new LRUCache<string, EndpointSubscription[]>({ max: MAX_CACHED_ORGS, ttl: Math.max(opts.endpointCacheMs, 1) });
  const sessions = new LRUCache<string, SessionFacts>({ max: MAX_CACHED_SESSIONS, ttl: SESSION_TTL_MS });
  const turnsSeen = new LRUCache<string, true>({ max: MAX_REMEMBERED_TURNS });
  // Rows of one session are written in the order its appends returned, so sequence order holds in the outbox.
  const chain = createKeyedChain();
  const inFlight = new Set<Promise<void>>();
  /** `known`: the answer once it is in. */
  let anyEndpoint: { until: number; answer: Promise<boolean>; known?: boolean } | undefined;

  /** Whether any organisation has an active endpoint, as of at most endpointCacheMs ago (used only when that is > 0). */
  function anyActiveEndpoint(): Promise<boolean> {
    const now = Date.now();
    if (anyEndpoint && now < anyEndpoint.until) return anyEndpoint.answer;
    const answer = deps.endpoints.anyActive();
    const entry: typeof anyEndpoint = { until: now + opts.endpointCacheMs, answer };
    anyEndpoint = entry;
    answer.then(
      (known) => (entry.known = known),
      () => (anyEndpoint = undefined),
    );
    return answer;
  }

  /**
   * No organisation has an active endpoint, as of at most endpointCacheMs ago: `record` would
   * return at its first line. Known without a promise, so an append then queues nothing (the
   * chain's promises and closures were 1.3 % of the service's allocations under turn load).
   */
  function knownNoEndpoint(): boolean {
    return opts.endpointCacheMs > 0 && anyEndpoint?.known === false && Date.now() < anyEndpoint.until;
  }

  /**
   * The first events of a turn this process records, preceded by the events just before them in
   * the log (the end of the previous turn, or this turn's preamble when another writer appended
   * it). Their rows exist already unless their writer died between its append and its INSERT, so
   * this repairs that window at the session's next turn; queued events are skipped by the insert.
   */
  async function withTurnStart(
    log: EventLog<SessionEvent>,
    sessionId: string,
    events: readonly SessionEvent[],
  ): Promise<readonly SessionEvent[]> {
    const first = events[0]!;
    const turnId = first.context.turn_id;
    if (!turnId || turnsSeen.has(turnId) || first.sequence <= 1) return events;
    turnsSeen.set(turnId, true);
    const after = Math.max(0, first.sequence - 1 - LOOKBACK);
    const earlier = await log.read(sessionId, { afterSequence: after, limit: first.sequence - 1 - after });
    return [...earlier.filter((e) => e.sequence < first.sequence), ...events];
  }

  async function sessionFacts(sessionId: string): Promise<SessionFacts | undefined> {
    const hit = sessions.get(sessionId);
    if (hit) return hit;
    const [row] = await deps.store.sql<{ organization_id: string; agent_id: string | null; tags: unknown }>(
      'select organization_id, agent_id, tags from sessions where id = ?',
      [sessionId],
    );
    if (!row) return undefined;
    const facts = {
      organization_id: row.organization_id,
      agent_id: row.agent_id,
      tags: (typeof row.tags === 'string' ? JSON.parse(row.tags) : row.tags) as string[],
    };
    sessions.set(sessionId, facts);
    return facts;
  }

  async function subscriptions(orgId: string): Promise<EndpointSubscription[]> {
    const hit = orgs.get(orgId);
    if (hit) return hit;
    const subs = await deps.endpoints.subscriptions(orgId);
    if (opts.endpointCacheMs > 0) orgs.set(orgId, subs);
    return subs;
  }

  async function record(log: EventLog<SessionEvent>, sessionId: string, events: readonly SessionEvent[]): Promise<void> {
    // With the cache off this look would be one more read per append, not one fewer.
    if (opts.endpointCacheMs > 0 && !(await anyActiveEndpoint())) return;
    const facts = await sessionFacts(sessionId);
    if (!facts) return;
    const subs = await subscriptions(facts.organization_id);
    if (!subs.length) return;
    const rows: NewDelivery[] = [];
    for (const event of await withTurnStart(log, sessionId, events)) {
      if (!SUBSCRIBABLE.has(event.type)) continue;
      for (const sub of subs) {
        if (!matches(sub, event, sessionId, facts)) continue;
        rows.push({
          endpoint_id: sub.id,
          event_id: event.id,
          event_type: event.type,
          sequence: event.sequence,
          payload: payloadOf(event, facts),
        });
      }
    }
    if (!rows.length) return;
    const { inserted, refused } = await deps.deliveries.enqueue(facts.organization_id, sessionId, rows, opts.maxPendingPerOrg);
    if (refused)
      deps.log.warn(
        { org_id: facts.organization_id, session_id: sessionId, dropped: rows.length },
        'webhook deliveries not queued: pending quota reached',
      );
    if (inserted) deps.wake();
  }

  return {
    /** Resolves once the rows of every append so far are written (shutdown, before the store closes). */
    async flush(): Promise<void> {
      await Promise.allSettled([...inFlight]);
    },
    /** Forget an organisation's endpoints here at once (they changed through this instance). */
    invalidate(orgId: string): void {
      orgs.delete(orgId);
      anyEndpoint = undefined;
    },
    /** The log with its appends tapped; reads and subscriptions stay the log's own. */
    wrap(log: EventLog<SessionEvent>): EventLog<SessionEvent> {
      const append = async (sessionId: string, events: NewSessionEvent[], opts?: AppendOptions): Promise<AppendResult<SessionEvent>> => {
        const result = await log.append(sessionId, events, opts);
        if (!result.ok || knownNoEndpoint() || !result.events.some((e) => SUBSCRIBABLE.has(e.type))) return result;
        // Not awaited: the writer goes on at once (a turn never waits for webhooks); the chain keeps the session's order.
        const queued = chain
          .run(sessionId, () => record(log, sessionId, result.events))
          .catch((err: unknown) => deps.log.error({ err, session_id: sessionId }, 'webhook deliveries could not be queued'))
          .finally(() => inFlight.delete(queued));
        inFlight.add(queued);
        return result;
      };
      return Object.assign(Object.create(log) as EventLog<SessionEvent>, { append });
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
