import type { SessionEvent } from '../../schemas/events.js';
import { eventJson, type BusReader } from '../bus/index.js';
import { formatSseFrame } from '../http/index.js';
import { flowingFrame, type SseStream } from '../http/index.js';
import type { Logger } from '../log.js';
import { pauseMs, retry, retryPolicies } from '../retry/index.js';
import { passesFilter, type EventFilter } from './event-filter.js';
import type { Frame } from './frame-ring.js';
import { Watch, type Client, type WatchOwner } from './watch.js';

/** How long a session stays watched after its last client left (absorbs reconnects), in ms. */
const UNWATCH_GRACE_MS = 5_000;
const REPLAY_PAGE = 500;
/** A replay read serialises at most about this much frame text (UTF-16 units); the client's next read goes on from there. */
const REPLAY_MAX_CHARS = 4 * 1024 * 1024;

export interface AttachOptions {
  afterSequence: number;
  filter: EventFilter | null;
}

/**
 * Per-instance SSE fan-out: one bus subscription per watched session, however many clients watch
 * it; each event is serialised to a frame once and written to every interested client.
 */
export function createSessionHub({ bus, log }: { bus: BusReader<SessionEvent>; log: Logger }) {
  // The watch itself once open (a promise only while its tail is read): no settled promise kept per session.
  const watches = new Map<string, Watch | Promise<Watch>>();
  // One subscription for every session's deletion, not one per watched session (NATS interest and memory per stream).
  const stopDeletions = bus.signals.subscribeType('deleted', (s) => closeSession(s.session_id));

  function watch(sessionId: string): Watch | Promise<Watch> {
    const known = watches.get(sessionId);
    if (known) return known;
    const opening = openWatch(sessionId).then(
      (w) => {
        // Still ours unless the session was deleted or the hub closed meanwhile (the watch is dropped then).
        if (watches.get(sessionId) === opening && !w.dropped) watches.set(sessionId, w);
        return w;
      },
      (err: unknown) => {
        if (watches.get(sessionId) === opening) watches.delete(sessionId);
        throw err;
      },
    );
    watches.set(sessionId, opening);
    return opening;
  }

  /**
   * Log reads behind attach (the tail, replay pages) are retried a few times: a transient failure
   * (a read timing out under load) would otherwise reset every stream waiting on it.
   */
  function withRetries<T>(sessionId: string, what: string, fn: () => Promise<T>): Promise<T> {
    return retry(fn, retryPolicies.sessionFeed, {
      onRetry: ({ err, attempt }) => log.warn({ err, sessionId, attempt }, `${what} failed; retrying`),
    });
  }

  async function openWatch(sessionId: string): Promise<Watch> {
    const lastSequence = await withRetries(sessionId, 'reading the session tail', () => bus.events.lastSequence(sessionId));
    const w = new Watch(sessionId, lastSequence, owner);
    follow(w);
    return w;
  }

  /**
   * Follows the session from the last event published to its clients: pushed, so an idle
   * watched session costs no pending promise or timer of its own (bus/ordered-feed.ts).
   */
  function follow(w: Watch): void {
    w.feed = bus.events.follow(w.sessionId, w, { afterSequence: w.lastSequence });
  }

  /** A failed feed is reopened a few times; a closed one (the watch dropped, the session deleted, the bus closed) is not. */
  function feedEnded(w: Watch, err: Error | null): void {
    if (err && !w.dropped && ++w.failures < retryPolicies.sessionFeed.maxAttempts) {
      log.warn({ err, sessionId: w.sessionId, attempt: w.failures }, 'session event subscription failed; reopening it');
      setTimeout(() => reopen(w), pauseMs(retryPolicies.sessionFeed.backoff, w.failures));
      return;
    }
    if (err) log.warn({ err, sessionId: w.sessionId }, 'session event subscription failed; clients will reconnect');
    resetClients(w);
  }

  function reopen(w: Watch): void {
    if (w.dropped) return resetClients(w);
    try {
      follow(w);
    } catch (err) {
      log.warn({ err, sessionId: w.sessionId }, 'session event subscription failed; clients will reconnect');
      resetClients(w);
    }
  }

  /** The feed ended for good: clients reconnect and resume with since_id. */
  function resetClients(w: Watch): void {
    for (const c of w.clients) c.stream.disconnect('stream_reset');
    drop(w);
  }

  function publish(w: Watch, event: SessionEvent): void {
    if (event.sequence <= w.lastSequence) return;
    w.lastSequence = event.sequence;
    const frame = toFrame(event);
    w.ringFor().push(frame);
    for (const c of w.clients) if (c.live) deliver(c, frame);
  }

  const owner: WatchOwner = { publish, feedEnded };

  async function attach(sessionId: string, stream: SseStream, { afterSequence, filter }: AttachOptions): Promise<void> {
    const w = await watch(sessionId);
    clearTimeout(w.unwatchTimer);
    const client: Client = { stream, filter, cursor: afterSequence, live: false };
    w.addClient(client);
    stream.onClose(() => detach(w, client));
    // Replay until caught up with the live feed; no await between the last check and going live.
    while (stream.open && client.cursor < w.lastSequence) {
      for (const f of await replayFrames(w, client.cursor)) deliver(client, f);
    }
    client.live = true;
  }

  function replayFrames(w: Watch, after: number): Frame[] | Promise<Frame[]> {
    const cached = w.ring?.after(after);
    if (cached) return cached;
    let read = w.replays?.get(after);
    if (!read) {
      // Up to the tail the watch knows, no further: later events come live (and the bus answers a
      // read within a tail it knows from memory when it appended those events).
      const limit = Math.max(1, Math.min(REPLAY_PAGE, w.lastSequence - after));
      read = withRetries(w.sessionId, 'replay read', () => bus.events.read(w.sessionId, { afterSequence: after, limit }))
        .then((events) => {
          // Deltas carry the text so far: 500 of a long reply would be hundreds of MB of frames at once.
          const frames: Frame[] = [];
          let chars = 0;
          for (const e of events) {
            if (chars >= REPLAY_MAX_CHARS) break;
            const f = toFrame(e);
            frames.push(f);
            chars += f.text.length;
          }
          // Kept when it joins what the ring holds, so the session's next clients skip the read.
          if (frames.length) w.ringFor().prepend(frames, w.lastSequence);
          return frames;
        })
        .finally(() => w.replayDone(after));
      (w.replays ??= new Map()).set(after, read);
    }
    return read;
  }

  /** The sequence of a recent event of a session watched here, from memory; undefined when not kept. */
  async function recentSequence(sessionId: string, eventId: string): Promise<number | undefined> {
    const w = watches.get(sessionId);
    return w ? (await Promise.resolve(w).catch(() => undefined))?.ring?.sequenceOf(eventId) : undefined;
  }

  function deliver(c: Client, f: Frame): void {
    if (f.sequence <= c.cursor) return;
    c.cursor = f.sequence;
    if (passesFilter(c.filter, f)) c.stream.sendFlowing(f.text);
  }

  function detach(w: Watch, c: Client): void {
    w.removeClient(c);
    if (w.clientCount === 0 && !w.dropped) {
      clearTimeout(w.unwatchTimer);
      w.unwatchTimer = setTimeout(() => w.clientCount === 0 && drop(w), UNWATCH_GRACE_MS).unref();
    }
  }

  function drop(w: Watch): void {
    // Once only: a later call must not remove a newer watch of the same session from the map.
    if (w.dropped) return;
    w.dropped = true;
    clearTimeout(w.unwatchTimer);
    w.feed.close();
    watches.delete(w.sessionId);
  }

  /** Ends every local stream of a deleted session. */
  function closeSession(sessionId: string): void {
    const w = watches.get(sessionId);
    if (!w) return;
    void Promise.resolve(w).then(
      (open) => {
        for (const c of [...open.clients]) c.stream.end();
        drop(open);
      },
      () => undefined,
    );
  }

  return {
    attach,
    recentSequence,
    closeSession,
    /** Sessions watched on this instance (one bus subscription each). */
    watchedCount: () => watches.size,
    close(): void {
      stopDeletions();
      for (const w of watches.values()) void Promise.resolve(w).then(drop, () => undefined);
    },
  };
}

function toFrame(event: SessionEvent): Frame {
  const text = flowingFrame(formatSseFrame({ id: event.id, event: event.type, data: eventJson(event) }));
  const frame: Frame = { id: event.id, sequence: event.sequence, type: event.type, text };
  if (event.tags?.length) frame.tags = event.tags;
  return frame;
}

export type SessionHub = ReturnType<typeof createSessionHub>;
