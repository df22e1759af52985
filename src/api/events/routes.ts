import type { SessionEvent } from '../../../schemas/events.js';
import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { EventList, ListEventsQuery, MessageList, SseQuery } from '../../../schemas/sessions.js';
import type { BusReader } from '../../bus/index.js';
import { assertSessionAccess, assertStreamScope, type SessionOwner, type SessionOwners } from '../../auth/index.js';
import type { ConnectionLimits } from '../../events/index.js';
import { eventFilter } from '../../events/index.js';
import { deriveMessages } from '../../events/index.js';
import type { SessionHub } from '../../events/index.js';
import { aliasedListReply } from '../../http/index.js';
import type { Principal } from '../../auth/index.js';
import { route, type Route } from '../../http/index.js';
import type { Store } from '../../db/index.js';
import { assertAroundAlone, eventWindow } from './event-query.js';
import { readAll, readWindow, resolveEventSequence } from './event-reader.js';

const tags = ['events'];

export interface EventRouteDeps {
  store: Store;
  /** The log as served: deltas with `accumulated` (src/events/accumulating-log.ts). */
  bus: Pick<BusReader<SessionEvent>, 'events'>;
  hub: SessionHub;
  limits: ConnectionLimits;
  /** Owners this instance knows (session create fills it): a stream opened right after create reads no row. */
  owners: SessionOwners;
  /** Operator's EVENTS_LIST_MAX_BYTES: a listing page ends once its events take this many bytes (at least one event). */
  listMaxBytes: number;
}

/** Spec 4.3 and 6.1: the polling listing, derived messages, and the SSE stream. */
export function eventRoutes({ store, bus, hub, limits, owners, listMaxBytes }: EventRouteDeps): Route[] {
  /**
   * 404 / 403 as `assertSessionAccess`, without an ORM unit of work and entity load: stream opens
   * come in bursts (every client of an instance reconnecting at once), and that was most of
   * their memory. None of these routes needs the session row itself.
   */
  async function assertSessionOwned(principal: Principal, id: string): Promise<void> {
    const owner = await owners.lookup(id, async () => {
      const [row] = await store.sql<SessionOwner>('select organization_id, user_id from sessions where id = ?', [id]);
      return row;
    });
    assertSessionAccess(principal, owner);
    assertStreamScope(principal, id);
  }

  return [
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/events',
        auth: 'user',
        summary: 'List events (polling)',
        tags,
        schema: { params: IdParams, query: ListEventsQuery, response: { 200: ref(EventList), 404: ref(ErrorResponse) } },
      },
      async ({ params, query }, { principal }) => {
        await assertSessionOwned(principal, params.id);
        assertAroundAlone(query);
        const sinceSequence = await resolveEventSequence(bus.events, params.id, query.since_id, 'since_id');
        const aroundSequence =
          query.around === undefined ? undefined : await resolveEventSequence(bus.events, params.id, query.around, 'around');
        const page = await readWindow(bus.events, params.id, eventWindow(query, { sinceSequence, aroundSequence }), listMaxBytes);
        return { status: 200, body: page.truncated ? { data: page.events, has_more: true } : { data: page.events } };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/messages',
        auth: 'user',
        summary: 'Messages derived from the event log',
        tags,
        schema: { params: IdParams, response: { 200: ref(MessageList), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        await assertSessionOwned(principal, params.id);
        const data = deriveMessages(await readAll(bus.events, params.id));
        return aliasedListReply(200, { data, total: data.length }, 'messages');
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/sse',
        auth: 'stream',
        summary: 'Stream session events (SSE)',
        tags,
        schema: {
          params: IdParams,
          query: SseQuery,
          response: { 200: 'text/event-stream', 404: ref(ErrorResponse), 429: ref(ErrorResponse) },
        },
      },
      async ({ params, query, headers }, { principal }) => {
        await assertSessionOwned(principal, params.id);
        const filter = eventFilter(query);
        // An EventSource opened with ?since_id=X keeps X in its URL and sends Last-Event-ID on
        // every automatic reconnect: the header is the newer position, so it wins.
        const sinceId = ((headers['last-event-id'] || undefined) ?? query.since_id)?.toLowerCase();
        // A client resuming after cycling names a recent event, usually still in the hub's memory.
        const recent = sinceId ? await hub.recentSequence(params.id, sinceId) : undefined;
        const afterSequence = recent ?? (await resolveEventSequence(bus.events, params.id, sinceId, 'since_id'));
        const release = limits.acquire(principal.org_id, params.id);
        return {
          sse: (stream) => {
            stream.onClose(release);
            hub.attach(params.id, stream, { afterSequence, filter }).catch(() => stream.disconnect('stream_reset'));
          },
          abandon: release,
        };
      },
    ),
  ];
}
